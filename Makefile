# marple — one GNU make entry point: build, check, install, bench, fuzz, clean.
#
# Programs are found, not listed: every collectors/marple-*.c, filters/marple-*.c
# and renderers/marple-*.c becomes build/marple-*; every scripts/marple* shell
# script is copied there too.  A collector collectors/marple-X.c that has a
# bpf/X.bpf.c gets build/bpf/X.skel.h generated before it is compiled.
#
# lib/ is three libraries, one a layer, and linking enforces the direction:
#   lib/format   the stream format and text I/O (jansson, zlib)   every program
#   lib/render   what renderers share: XML/SVG, stack trees, CPEL  renderers
#   lib/collect  the collector runtime (libbpf, libelf, libunwind) collectors
# Filters link format only, renderers render+format, collectors collect+format;
# so a renderer cannot call the collector runtime, and only collectors and
# lib/collect wait for the BPF skeletons (make build/marple-flamegraph runs no
# clang -target bpf, bpftool or vmlinux step).  marple-collect, the supervisor,
# lives with the collectors it runs but is none: it links format alone and
# waits for no BPF step either (tests/cli/build-layers.t).

SHELL      := /bin/sh
# In parallel unless told otherwise (-jN on the command line wins): CI runs a
# plain `make check`, twice (plain and SANITIZE=1), and a serial build of the
# programs, the 23 BPF skeletons, the unit tests and the workloads took 5 min.
MAKEFLAGS  += -j$(shell nproc 2>/dev/null || echo 1)
BUILD      ?= build
O          ?= $(BUILD)
PREFIX     ?= /usr/local
DESTDIR    ?=
BINDIR     := $(PREFIX)/bin
MANDIR     := $(PREFIX)/share/man

CC         ?= cc
CLANG      ?= clang
BPFTOOL    ?= bpftool
CFLAGS     ?= -O2 -g
# Before any name made from $(O): the include paths below are expanded at
# once, and a sanitizer build must find its own generated headers, not build/'s
# (make check SANITIZE=1 in a fresh clone failed: callstack.skel.h not found).
ifeq ($(SANITIZE),1)
CFLAGS     += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS    += -fsanitize=address,undefined
O          := $(BUILD)/sanitize
endif

WARNINGS   := -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers
CPPFLAGS   += -D_GNU_SOURCE
FORMAT_INC  := -Ilib/format
RENDER_INC  := $(FORMAT_INC) -Ilib/render -I$(O)/gen
COLLECT_INC := $(FORMAT_INC) -Ilib/collect -I$(O) -I$(O)/bpf -Ibpf
FORMAT_LIBS  := -ljansson -lz -lm
# libdeflate: marple-pprof's gzip, a whole buffer at a time, faster than zlib
RENDER_LIBS  := -ldeflate $(FORMAT_LIBS)
COLLECT_LIBS := -lbpf -ldw -lelf -lunwind-generic -lunwind -liberty -lpthread $(FORMAT_LIBS)

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' $(1) $(2);
endif

ARCH       := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/;s/ppc64le/powerpc/;s/s390x/s390/')

layer_objs  = $(patsubst lib/%.c,$(O)/lib/%.o,$(wildcard lib/$(1)/*.c))
FORMAT_A   := $(O)/libmarple-format.a
RENDER_A   := $(O)/libmarple-render.a
COLLECT_A  := $(O)/libmarple-collect.a
programs_in = $(patsubst $(1)/%.c,$(O)/%,$(wildcard $(1)/marple-*.c))
SUPERVISOR := $(O)/marple-collect
COLLECTORS := $(filter-out $(SUPERVISOR),$(call programs_in,collectors))
FILTERS    := $(call programs_in,filters)
RENDERERS  := $(call programs_in,renderers)
PROGS      := $(COLLECTORS) $(SUPERVISOR) $(FILTERS) $(RENDERERS)
SCRIPTS    := $(filter-out %.1 %.5 %.md,$(wildcard scripts/marple scripts/marple-*))
SCRIPT_OUT := $(patsubst scripts/%,$(O)/%,$(SCRIPTS))
REGISTRY   := $(O)/marple-registry
DATADIR    := $(PREFIX)/share/marple
BPF_SRC    := $(wildcard bpf/*.bpf.c)
BPF_OBJ    := $(patsubst bpf/%.bpf.c,$(O)/bpf/%.bpf.o,$(BPF_SRC))
SKELS      := $(patsubst bpf/%.bpf.c,$(O)/bpf/%.skel.h,$(BPF_SRC))
UNIT_SRC   := $(wildcard tests/unit/*.c)
UNIT_BINS  := $(patsubst tests/unit/%.c,$(O)/tests/%,$(UNIT_SRC))
BENCH_SRC  := $(wildcard tests/bench/*.c)
BENCH_BINS := $(patsubst tests/bench/%.c,$(O)/bench/%,$(BENCH_SRC))
HELPER_SRC := $(wildcard tests/workloads/*.c)
HELPERS    := $(patsubst tests/workloads/%.c,$(O)/workloads/%,$(HELPER_SRC))
MANPAGES   := $(wildcard */*.1 */*.5 lib/*/*.5)
# The pages' JavaScript: renderers/X.js and lib/render/X.js, each turned into
# $(O)/gen/X.js.h defining `static const char X_js[]` (see js_header).
JS_SRC     := $(wildcard renderers/*.js lib/render/*.js)
JS_HDRS    := $(patsubst %.js,$(O)/gen/%.js.h,$(notdir $(JS_SRC)))

DEPS_STAMP := $(O)/.deps-ok

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all check install uninstall bench fuzz clean deps programs unit workloads

all: programs

# A fresh machine gets its packages on first use; the stamp keeps later runs quick.
$(DEPS_STAMP): scripts/install-deps
	$(Q)mkdir -p $(@D)
	$(Q)sh scripts/install-deps
	$(Q)touch $@

deps:
	$(Q)sh scripts/install-deps

programs: $(PROGS) $(SCRIPT_OUT) $(REGISTRY)

# The registry: what each program is, in its own words (--describe: its kind,
# the sections it writes, the display it is, the datatypes it reads, its
# option table), one line a program.  The driver reads it instead of lists of
# its own; adding a program is its files and nothing else.
$(REGISTRY): $(PROGS) $(filter-out $(O)/marple,$(SCRIPT_OUT))
	$(call msg,REGISTRY,$@)
	$(Q)for p in $^; do $$p --describe || exit 1; done > $@.tmp && mv $@.tmp $@

$(O)/vmlinux.h: | $(DEPS_STAMP)
	$(Q)mkdir -p $(@D)
	$(Q)if [ ! -r /sys/kernel/btf/vmlinux ]; then \
	  echo "marple: this kernel has no BTF (/sys/kernel/btf/vmlinux is missing); collectors need CONFIG_DEBUG_INFO_BTF=y" >&2; exit 1; fi
	$(call msg,VMLINUX,$@)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(O)/bpf/%.bpf.o: bpf/%.bpf.c $(O)/vmlinux.h | $(DEPS_STAMP)
	$(Q)mkdir -p $(@D)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -target bpf -g -O2 -D__TARGET_ARCH_$(ARCH) -I$(O) -Ibpf -MMD -MP -c $< -o $@

$(O)/bpf/%.skel.h: $(O)/bpf/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

# A .js file as a C string literal, one JS line per C line: backslashes and
# quotes escaped, every '?' too (no trigraph can form).  sed only, no new tool.
define js_header
	$(Q)mkdir -p $(@D)
	$(call msg,GEN,$@)
	$(Q){ printf '/* generated from %s by the Makefile: edit that file, not this one */\nstatic const char %s[] =\n' \
	  $< $(subst .,_,$(notdir $<)); \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/?/\\?/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; \
	  echo ';'; } > $@.tmp && mv $@.tmp $@
endef
$(O)/gen/%.js.h: renderers/%.js
	$(js_header)
$(O)/gen/%.js.h: lib/render/%.js
	$(js_header)

compile = $(CC) $(CPPFLAGS) $(1) $(CFLAGS) $(WARNINGS) -MMD -MP -c $< -o $@

$(O)/lib/format/%.o: lib/format/%.c | $(DEPS_STAMP)
	$(Q)mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(call compile,$(FORMAT_INC))
$(O)/lib/render/%.o: lib/render/%.c | $(DEPS_STAMP) $(JS_HDRS)
	$(Q)mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(call compile,$(RENDER_INC))
# Only the collector runtime and the collectors may include a skeleton.
$(O)/lib/collect/%.o: lib/collect/%.c | $(DEPS_STAMP) $(SKELS)
	$(Q)mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(call compile,$(COLLECT_INC))

$(FORMAT_A): $(call layer_objs,format)
$(RENDER_A): $(call layer_objs,render)
$(COLLECT_A): $(call layer_objs,collect)
$(O)/libmarple-%.a:
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(O)/obj/%.o: collectors/%.c | $(DEPS_STAMP) $(SKELS)
	$(Q)mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(call compile,$(COLLECT_INC))
$(O)/obj/marple-collect.o: collectors/marple-collect.c | $(DEPS_STAMP)
	$(Q)mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(call compile,$(FORMAT_INC))
$(O)/obj/%.o: filters/%.c | $(DEPS_STAMP)
	$(Q)mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(call compile,$(FORMAT_INC))
$(O)/obj/%.o: renderers/%.c | $(DEPS_STAMP) $(JS_HDRS)
	$(Q)mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(call compile,$(RENDER_INC))

link = $(CC) $(LDFLAGS) -o $@ $(filter %.o %.a,$^) $(1)
$(COLLECTORS): $(O)/%: $(O)/obj/%.o $(COLLECT_A) $(FORMAT_A)
	$(call msg,LD,$@)
	$(Q)$(call link,$(COLLECT_LIBS))
$(FILTERS) $(SUPERVISOR): $(O)/%: $(O)/obj/%.o $(FORMAT_A)
	$(call msg,LD,$@)
	$(Q)$(call link,$(FORMAT_LIBS))
$(RENDERERS): $(O)/%: $(O)/obj/%.o $(RENDER_A) $(FORMAT_A)
	$(call msg,LD,$@)
	$(Q)$(call link,$(RENDER_LIBS))
# libcurl: marple-push's HTTP (timeouts, TLS, proxies), for it alone
$(O)/marple-push: RENDER_LIBS := -lcurl $(RENDER_LIBS)

$(O)/marple: scripts/marple
	$(Q)mkdir -p $(@D)
	$(Q)cp $< $@ && chmod +x $@
$(O)/marple-%: scripts/marple-%
	$(Q)mkdir -p $(@D)
	$(Q)cp $< $@ && chmod +x $@

$(O)/tests/%: tests/unit/%.c $(COLLECT_A) $(RENDER_A) $(FORMAT_A)
	$(Q)mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(COLLECT_INC) -Ilib/render -Itests/unit $(CFLAGS) $(WARNINGS) -MMD -MP -o $@ $(filter %.c %.a,$^) $(COLLECT_LIBS)

# The benches' drivers of lib/ (tests/bench/*.c), built as the unit tests are.
$(O)/bench/%: tests/bench/%.c $(COLLECT_A) $(RENDER_A) $(FORMAT_A)
	$(Q)mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(COLLECT_INC) $(CFLAGS) $(WARNINGS) -MMD -MP -o $@ $(filter %.c %.a,$^) $(COLLECT_LIBS)

# Test workloads: built the way each one's header comment asks (see WORKLOAD_CFLAGS there).
$(O)/workloads/%: tests/workloads/%.c $(wildcard tests/workloads/*.h)
	$(Q)mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $$(sed -n 's/.*WORKLOAD_CFLAGS: *//p' $< | head -n 1) -o $@ $< -lpthread -lm

unit: $(UNIT_BINS)
workloads: $(HELPERS)

check: programs unit workloads
	$(Q)MARPLE_BIN=$(abspath $(O)) MARPLE_TOP=$(CURDIR) SANITIZE=$(SANITIZE) sh tests/run-all

bench: programs unit workloads $(BENCH_BINS)
	$(Q)MARPLE_BIN=$(abspath $(O)) MARPLE_TOP=$(CURDIR) sh tests/bench/run-all

fuzz: programs
	$(Q)MARPLE_TOP=$(CURDIR) FUZZ_SECONDS=$${FUZZ_SECONDS:-60} sh tests/fuzz/run-all

install: programs
	$(Q)mkdir -p $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5
	$(Q)for p in $(PROGS) $(SCRIPT_OUT); do install -m 0755 $$p $(DESTDIR)$(BINDIR)/; done
	$(Q)for m in $(MANPAGES); do s=$${m##*.}; install -m 0644 $$m $(DESTDIR)$(MANDIR)/man$$s/; done
	$(Q)mkdir -p $(DESTDIR)$(DATADIR) && install -m 0644 $(REGISTRY) $(DESTDIR)$(DATADIR)/registry

uninstall:
	$(Q)for p in $(PROGS) $(SCRIPT_OUT); do rm -f $(DESTDIR)$(BINDIR)/$${p##*/}; done
	$(Q)for m in $(MANPAGES); do s=$${m##*.}; rm -f $(DESTDIR)$(MANDIR)/man$$s/$${m##*/}; done
	$(Q)rm -f $(DESTDIR)$(DATADIR)/registry

clean:
	$(Q)rm -rf $(BUILD)

-include $(wildcard $(O)/lib/*/*.d $(O)/obj/*.d $(O)/bpf/*.d $(O)/tests/*.d)
