# Each program waits only for its own layer: building the supervisor alone
# (make build/marple-collect from clean) runs no BPF step (clang -target bpf,
# bpftool, vmlinux.h) and links none of the collector runtime's libraries, as
# a renderer does; a collector, for contrast, does wait for its skeleton.
# `make -n` in a clean O= folder prints what a build would run.
. "$MARPLE_TOP/tests/lib.sh"
plan 5
# plan_of PROGRAM: the commands a clean build of build/PROGRAM would run
plan_of() { make -n -C "$MARPLE_TOP" O="$T/o-$1" DEPS_STAMP=/dev/null V=1 "$T/o-$1/$1" 2>&1; }
bpf_step() { grep -E 'clang .*-target bpf|bpftool|vmlinux' "$1"; }

plan_of marple-collect > "$T/collect.plan"
check "build: make marple-collect plans its own compile" grep -q 'collectors/marple-collect.c' "$T/collect.plan"
check "build: make marple-collect alone runs no BPF step ($(bpf_step "$T/collect.plan" | head -n 1 | cut -c1-80))" \
	sh -c "! grep -Eq 'clang .*-target bpf|bpftool|vmlinux' '$T/collect.plan'"
check "build: marple-collect links no libbpf, libdw or libunwind" \
	sh -c "grep -q -- '-o $T/o-marple-collect/marple-collect ' '$T/collect.plan' && ! grep -Eq -- '-lbpf|-ldw|-lunwind' '$T/collect.plan'"
plan_of marple-flamegraph > "$T/fg.plan"
check "build: make marple-flamegraph alone runs no BPF step" \
	sh -c "grep -q 'renderers/marple-flamegraph.c' '$T/fg.plan' && ! grep -Eq 'clang .*-target bpf|bpftool|vmlinux' '$T/fg.plan'"
plan_of marple-callstack > "$T/cs.plan"
check "build: a collector does wait for its BPF skeleton (the test can tell)" \
	sh -c "grep -Eq 'bpftool gen skeleton' '$T/cs.plan'"
