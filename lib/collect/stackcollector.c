/* stackcollector.c — options, usage, symbols and trailer of the stack
 * collectors that aggregate in their own maps (see stackcollector.h). */
#include "stackcollector.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfmap.h"
#include "collector.h"
#include "corebtf.h"
#include "debugcopies.h"
#include "hashtab.h"
#include "options.h"
#include "procnewsring.h"
#include "pyframes.h"
#include "selffilter.h"
#include "stackframes.h"
#include "stackdrain.h"
#include "stacksbpf.h"
#include "stream.h"
#include "mappedfiles.h"
#include "syms.h"
#include "taskcast.h"
#include "timedsamples.h"
#include "unwindcut.h"
#include "unwindtablescache.h"
#include "unwindtablesshared.h"
#include "unwindtables.h"
#include "uprobes.h"
#include "util.h"

/* The options as the generic table (options.h) wants them; sc->entries. */
static struct options_entry *entries_of(struct stackcollector *sc)
{
	size_t n = 0;

	if (sc->entries)
		return sc->entries;
	while (sc->options[n].name)
		n++;
	struct options_entry *e = marple_calloc(n + 1, sizeof(*e));
	for (size_t i = 0; i < n; i++) {
		const struct sc_option *o = &sc->options[i];
		int key = o->key;
		/* a letter an earlier option of another meaning took (the
		 * program's own): this shared one is long-only here */
		for (size_t j = 0; o->id && j < i; j++)
			if (e[j].key == key && sc->options[j].id != o->id)
				key = SC_LONG_ONLY(o->id);
		e[i] = (struct options_entry){ key, o->name, o->arg, o->help };
	}
	return sc->entries = e;
}

static int has_option(const struct stackcollector *sc, int id)
{
	for (const struct sc_option *o = sc->options; o->name; o++)
		if (o->id == id)
			return 1;
	return 0;
}

void stackcollector_usage(struct stackcollector *sc, FILE *f)
{
	fprintf(f, "Usage: %s %s\n%s\n", marple_progname, sc->synopsis, sc->about);
	options_usage(f, entries_of(sc));
	fprintf(f, "\nDURATION: seconds or 500ms, 10s, 2m; none: until SIGINT/SIGTERM%s.\n%s",
		has_option(sc, SC_OPT_COMMAND) ? " (or CMD exits)" : "", sc->footer);
}

/* --unwind-memory SIZE: MB, or a number ending in K, M or G */
static uint64_t unwind_memory(const char *arg)
{
	char *end;
	unsigned long long v = strtoull(arg, &end, 10);
	uint64_t unit = 1ull << 20;

	if (end != arg && (*end == 'K' || *end == 'k'))
		unit = 1ull << 10, end++;
	else if (end != arg && (*end == 'M' || *end == 'm'))
		end++;
	else if (end != arg && (*end == 'G' || *end == 'g'))
		unit = 1ull << 30, end++;
	if (end == arg || *end || arg[0] == '-' || v == 0 || v > (64ull << 30) / unit)
		marple_usage_error("--unwind-memory: '%s' is not a size from 1 (MB), or 1K, to 64G", arg);
	return (uint64_t)v * unit;
}

/* One of the shared options; 1 for -h (its usage printed). */
static int shared_option(struct stackcollector *sc, int id, const char *arg)
{
	switch (id) {
	case SC_OPT_PID: sc->pid = (pid_t)marple_opt_u64("-p", arg, 1, 0x7fffffff); break;
	case SC_OPT_TID: sc->tid = (pid_t)marple_opt_u64("-t", arg, 1, 0x7fffffff); break;
	case SC_OPT_NO_DEMANGLE: sc->no_demangle = 1; break;
	case SC_OPT_COMMAND: sc->cmd = arg; break;
	case SC_OPT_SAMPLE_EVERY: sc->sample_every = marple_opt_u64("--sample-every", arg, 1, 1u << 30); break;
	case SC_OPT_LIB: sc->lib = arg; break;
	case SC_OPT_USER_ONLY: sc->user_only = 1; break;
	case SC_OPT_KERNEL_ONLY: sc->kernel_only = 1; break;
	case SC_OPT_ANNOTATE: sc->annotate = 1; break;
	case SC_OPT_DELIMIT: sc->delimit = 1; break;
	case SC_OPT_STACK_STORAGE: sc->stack_storage = marple_opt_u64("--stack-storage", arg, 64, 1u << 22); break;
	case SC_OPT_DRAIN_EVERY: sc->drain_ms = marple_opt_u64("--drain-every", arg, 0, 3600000); break;
	case SC_OPT_EVERY:
		if (marple_parse_duration_ns(arg, &sc->interval) < 0 || sc->interval < 100000000ull)
			marple_usage_error("--every: '%s' is not a duration of 100ms or more (e.g. 10s, 1m)", arg);
		break;
	case SC_OPT_ADDRESSES: sc->addresses = 1; break;
	case SC_OPT_INCLUDE_SELF: sc->include_self = 1; break;
	case SC_OPT_VERBOSE: sc->verbose++; break;
	case SC_OPT_UNWIND:
		if ((sc->unwind = unwindtables_mode(arg)) < 0)
			marple_usage_error("--unwind: '%s' is not tables, fp or dwarf", arg);
		break;
	case SC_OPT_DWARF: sc->unwind = UNWIND_MODE_DWARF; break;
	case SC_OPT_UNWIND_MEMORY: sc->unwind_memory = unwind_memory(arg); break;
	case SC_OPT_NO_CACHE: sc->no_cache = 1; debugcopies_disable(); break;
	case SC_OPT_NO_PYTHON: sc->no_python = 1; break;
	case SC_OPT_NO_INLINE: sc->no_inline = 1; break;
	case SC_OPT_CHILDREN: sc->children = 1; break;
	case SC_OPT_HELP: stackcollector_usage(sc, stdout); return 1;
	}
	return 0;
}

int stackcollector_parse(struct stackcollector *sc, const struct sc_option *options,
			 void (*option)(int key, const char *arg), int argc, char **argv)
{
	size_t n = 0;
	int c;

	sc->options = options;
	sc->option = option;
	while (sc->options[n].name)
		n++;
	const struct options_entry *entries = entries_of(sc);
	sc->sample_every = 1;
	sc->stack_storage = 0;	/* the collector's default: stacksbpf.h */
	sc->drain_ms = STACKDRAIN_PERIOD_MS;
	sc->unwind = UNWIND_MODE_TABLES;
	sc->unwind_memory = UNWINDTABLES_MEMORY_DEFAULT;
	while ((c = options_getopt(entries, argc, argv)) != -1) {
		size_t i = 0;
		while (i < n && entries[i].key != c)
			i++;
		if (i == n)
			marple_usage_try();
		if (sc->options[i].id && shared_option(sc, sc->options[i].id, optarg))
			return 1;
		if (!sc->options[i].id)
			sc->option(c, optarg);
	}
	if (sc->user_only && sc->kernel_only)
		marple_usage_error("-U and -K cannot be used together");
	if (sc->pid && sc->cmd)
		marple_usage_error("-p and -c cannot be used together");
	if (sc->children && !sc->pid)
		marple_usage_error("--children goes with -p PID (-c follows a command's children always)");
	if (sc->cmd && uprobes_command_check(sc->cmd) != 0)
		marple_usage_error("cannot split the command '%s' into words (one command and its arguments, "
				   "quoted as for sh: no ; | & < > or $(...))", sc->cmd);
	if (sc->cmd && has_option(sc, SC_OPT_CHILDREN))
		sc->children = 1;
	if (sc->unwind == UNWIND_MODE_DWARF && !has_option(sc, SC_OPT_DWARF))
		marple_usage_error("--unwind dwarf: only tables or fp here");
	sc->duration = collector_duration(argc, argv, optind);
	return 0;
}

int stackcollector_start(const struct stackcollector *sc)
{
	if (collector_start(sc->verbose > 1) < 0)
		return -1;
	if (sc->pid && uprobes_require_process(sc->pid) != 0)
		return -1;
	return 0;
}

char *stackcollector_libc(const struct stackcollector *sc)
{
	char *lib = sc->lib ? marple_strdup(sc->lib) : uprobes_find_lib(sc->pid ? sc->pid : -1, "libc");

	if (lib && access(lib, R_OK) != 0) {
		marple_warn("library %s not found", lib);
		free(lib);
		return NULL;
	}
	return lib;
}

int stackcollector_sf_flags(const struct stackcollector *sc)
{
	const char *sources = getenv("MARPLE_SOURCES");	/* "off": for comparison (bench inline) */
	int no_sources = sources && strcmp(sources, "off") == 0;

	return (sc->annotate ? SF_ANNOTATE_KERNEL : 0) | (sc->delimit ? SF_DELIMIT : 0) |
	       (sc->addresses ? SF_ADDRESSES : 0) | (has_option(sc, SC_OPT_DWARF) ? SF_DWARF_ACCEPTED : 0) |
	       (sc->no_inline ? SF_NO_INLINE : 0) | (no_sources ? SF_NO_SOURCES : 0);
}

/* Before load: the interpreters' walks to check and run (the rodata
 * py_walks): for a capture of one process, its interpreter's alone (the
 * others' checking cost the load 5-12 ms), else all; none wanted, their
 * per-process maps of one entry (LRU maps are allocated and linked whole
 * when created: py_procs and py_codes 4.3 ms of a start). */
static void python_walks(struct stackcollector *sc, struct bpf_object *obj)
{
	static const char *const py_maps[] = { "py_procs", "py_codes" };
	if (!stackcollector_python_wanted(sc))
		for (size_t i = 0; i < sizeof(py_maps) / sizeof(py_maps[0]); i++) {
			struct bpf_map *m = bpf_object__find_map_by_name(obj, py_maps[i]);
			if (m)
				bpf_map__set_max_entries(m, 1);
		}
	if (!stackcollector_python_wanted(sc) || !sc->pid || sc->children || sc->cmd)
		return;
	if (sc->py || (sc->py = pyframes_open()))	/* (an object sized again: offcpu's second try) */
		bpfmap_rodata_set(obj, "py_walks", pyframes_walks_for(sc->py, sc->pid));
}

int stackcollector_unwind_size(struct stackcollector *sc, struct bpf_object *obj)
{
	python_walks(sc, obj);
	/* opened now, in any unwind mode: what probing the kernel finds out
	 * (taskcast, vmaiter) is kept there too */
	if (!sc->kernel_only && !sc->no_cache && !sc->cache_opened) {
		sc->cache = unwindtablescache_open();	/* NULL: said why, once */
		sc->cache_opened = 1;
	}
	if (unwindtables_size(obj, sc->unwind, sc->pid ? sc->pid : sc->tid, sc->unwind_memory, sc->cache) < 0) {
		marple_warn("the BPF program has no unwind maps");
		return -1;
	}
	taskcast_configure(obj, sc->cache);
	/* a cut sample holds 16 KiB of stack: room for 63, read as they come (its
	 * pages are mapped here twice, whole: 2 MiB of the resident memory) */
	struct bpf_map *cuts = bpf_object__find_map_by_name(obj, "cut_samples");
	if (sc->finish_cuts && (!cuts || bpf_map__set_max_entries(cuts, 1u << 20) < 0)) {
		marple_warn("the BPF program has no cut_samples ring buffer");
		return -1;
	}
	unwindtablesshared_close(sc->shared);	/* an object sized before, not loaded */
	sc->shared = sc->unwind == UNWIND_MODE_TABLES && !sc->kernel_only ? unwindtablesshared_open(obj) : NULL;
	return 0;
}

/* -c: libc's, ld.so's and the command's own tables built before it starts,
 * so that its first samples are walked (its other libraries are built when
 * first sampled) */
static void warm_command(struct unwindtables *t, const char *cmd)
{
	size_t len = strcspn(cmd, " \t");
	char *name = marple_strndup(cmd, len), path[4096];
	const char *dirs = getenv("PATH");

	unwindtables_warm_up(t);
	if (strchr(name, '/')) {
		unwindtables_warm_file(t, name);
	} else {
		for (const char *d = dirs ? dirs : "/usr/bin:/bin"; *d;) {
			size_t dl = strcspn(d, ":");
			snprintf(path, sizeof(path), "%.*s/%s", (int)dl, d, name);
			if (access(path, X_OK) == 0) {
				unwindtables_warm_file(t, path);
				break;
			}
			d += dl + (d[dl] == ':');
		}
	}
	free(name);
}

int stackcollector_unwind_loaded(struct stackcollector *sc, struct bpf_object *obj)
{
	if (sc->unwind != UNWIND_MODE_TABLES || sc->kernel_only)
		return 0;
	if (!(sc->unwindtab = unwindtables_new(obj)))
		goto fail;
	if (!sc->no_cache)
		unwindtables_use_cache(sc->unwindtab, sc->cache_opened ? sc->cache : unwindtablescache_open());
	sc->cache = NULL;	/* the tables' now */
	unwindtables_use_shared(sc->unwindtab, sc->shared);
	sc->shared = NULL;
	unwindtables_share_maps(sc->unwindtab, sc->syms);
	if (unwindtables_poll_with(sc->unwindtab, sc->news) < 0)
		goto fail;
	if (sc->cmd)	/* first: its pid, if set, is a process still to exec it */
		warm_command(sc->unwindtab, sc->cmd);
	else if (sc->pid)
		unwindtables_load_pid(sc->unwindtab, sc->pid);
	return 0;
fail:
	marple_warn("cannot set up the unwind tables");
	return -1;
}

int stackcollector_python_wanted(const struct stackcollector *sc)
{
	return !sc->no_python && !sc->kernel_only && sc->unwind != UNWIND_MODE_DWARF;
}

void stackcollector_python(struct stackcollector *sc, struct bpf_object *obj)
{
	if (!stackcollector_python_wanted(sc) || sc->py_bound)
		return;
	if (!sc->py && !(sc->py = pyframes_open()))
		return;
	if (pyframes_bind(sc->py, obj, sc->syms) < 0) {
		pyframes_free(sc->py);
		sc->py = NULL;
		return;
	}
	sc->py_bound = 1;
	pyframes_listen(sc->py, sc->news);
	pyframes_merge_into(sc->py, sc->sf);
}

int stackcollector_news_open(struct stackcollector *sc, struct bpf_object *obj)
{
	if (!(sc->news = stacksbpf_news_open(obj, sc->syms, &sc->exec_link)))
		return -1;
	sc->notes = procnewsring_ring(sc->news);
	return 0;
}

int stackcollector_symbols(struct stackcollector *sc, struct bpf_object *obj, int kernel)
{
	sc->syms = syms_cache_new(sc->no_demangle ? 0 : SYMS_DEMANGLE);
	if (kernel && !(sc->ksyms = syms_kernel_load()))
		return -1;
	sc->sf = stackframes_new(sc->syms, sc->ksyms, bpfmap_fd(obj, "stacks"), stackcollector_sf_flags(sc));
	stackframes_set_unwind_mode(sc->sf, unwindtables_mode_name(sc->unwind));
	if (stackcollector_news_open(sc, obj) < 0 || stackcollector_unwind_loaded(sc, obj) < 0)
		return -1;
	stackcollector_python(sc, obj);
	if (sc->pid)
		syms_cache_snapshot(sc->syms, sc->pid);
	return 0;
}

json_t *stackcollector_header(const struct stackcollector *sc, const char *interface, const char *unit,
			      const char *label, pid_t target, json_t **options)
{
	json_t *hdr = stream_section_header_new(interface, DATATYPE_STACK);
	json_t *o = json_object();

	json_object_set_new(hdr, "units", json_pack("{s:s}", "weight", unit));
	json_object_set_new(hdr, "labels", json_pack("{s:s}", "weight", label));
	if (target > 0)
		json_object_set_new(o, "pid", json_integer(target));
	if (sc->cmd)
		json_object_set_new(o, "command", stream_json_string_bytes(sc->cmd, strlen(sc->cmd)));
	json_object_set_new(o, "unwind", json_string(unwindtables_mode_name(sc->unwind)));
	json_object_set_new(hdr, "options", o);
	*options = o;
	return hdr;
}

void stackcollector_target_options(const struct stackcollector *sc, json_t *o)
{
	json_object_set_new(o, "stacks", json_string(sc->user_only ? "user" : sc->kernel_only ? "kernel" : "both"));
	if (sc->pid)
		json_object_set_new(o, "pid", json_integer(sc->pid));
	if (sc->children)
		json_object_set_new(o, "children", json_true());
	if (sc->cmd)
		json_object_set_new(o, "command", stream_json_string_bytes(sc->cmd, strlen(sc->cmd)));
	if (sc->tid)
		json_object_set_new(o, "tid", json_integer(sc->tid));
	json_object_set_new(o, "unwind", json_string(unwindtables_mode_name(sc->unwind)));
}

void stackcollector_unwind_trailer(struct stackcollector *sc, json_t *tr)
{
	struct syms_stats now;
	json_t *unwind;

	if (!sc->unwindtab)
		return;
	unwindtables_trailer_add(sc->unwindtab, tr);
	if (!(unwind = json_object_get(tr, "unwind")))
		return;
	/* what the symbolizer made of the file VMAs the walker told it of
	 * (syms_cache_add_walked_vma), in this section */
	syms_cache_stats(sc->syms, &now);
	if (sc->cuts)
		unwindcut_trailer_add(sc->cuts, unwind);
	json_object_set_new(unwind, "frames_named_from_walk",
			    json_integer((json_int_t)(now.walked_named - sc->walked_named_before)));
	json_object_set_new(unwind, "vma_notes_file_not_found",
			    json_integer((json_int_t)(now.walked_vmas_unopened - sc->walked_unfound_before)));
	json_object_set_new(unwind, "maps_posted_unmatched",
			    json_integer((json_int_t)(now.posted_unmatched - sc->posted_unmatched_before)));
	sc->walked_named_before = now.walked_named;
	sc->walked_unfound_before = now.walked_vmas_unopened;
	sc->posted_unmatched_before = now.posted_unmatched;
}

json_t *stackcollector_trailer(struct stackcollector *sc, struct bpf_object *obj, uint64_t records,
			       uint64_t extra_dropped, const char *ended)
{
	uint64_t counters[STACKS_NCOUNTERS];
	json_t *tr = stackcollector_section_trailer(sc, records, ended, sc->section_end_ns == 0);

	stackcollector_counters(sc, obj, counters);
	uint64_t dropped = stacksbpf_trailer_add(tr, counters, sc->sf) + extra_dropped;
	json_object_set_new(tr, "dropped", json_integer((json_int_t)dropped));
	stackcollector_self_excluded(sc, obj, tr);
	stackcollector_unwind_trailer(sc, tr);
	return tr;
}

static void snapshot_at_exit(pid_t pid, void *syms)
{
	syms_cache_snapshot(syms, pid);
}

pid_t stackcollector_target(struct stackcollector *sc)
{
	if (!sc->cmd)
		return sc->pid;
	/* the command is traced: each signal it gets stops it until our poll
	 * lets it go on, which must not wait for the poll's timeout (a Go
	 * program's preemption signals, a shell's SIGCHLDs) */
	collector_wake_on_child();
	sc->child = uprobes_command_start(sc->cmd);
	if (sc->child < 0)
		return -1;
	sc->child_running = 1;
	return sc->child;
}

int stackcollector_follow(struct stackcollector *sc, struct bpf_object *obj, pid_t target)
{
	struct bpf_map *tgids = bpf_object__find_map_by_name(obj, "follow_tgids");
	struct bpf_program *fork_prog = bpf_object__find_program_by_name(obj, "follow_fork");
	uint32_t key = (uint32_t)target;
	uint8_t one = 1;

	if (!sc->children || target <= 0)
		return 0;
	if (!tgids || !fork_prog || bpf_map__update_elem(tgids, &key, sizeof(key), &one, sizeof(one), BPF_ANY) < 0) {
		marple_warn("cannot follow process %d's children: %s", (int)target, strerror(errno));
		return -1;
	}
	sc->follow_link = bpf_program__attach(fork_prog);
	if (!sc->follow_link) {
		marple_warn("cannot follow process %d's children (sched_process_fork): %s", (int)target,
			    strerror(errno));
		return -1;
	}
	return 0;
}

int stackcollector_cuts_wanted(const struct stackcollector *sc)
{
	const char *env = getenv("MARPLE_FINISH_CUTS");

	return sc->unwind == UNWIND_MODE_TABLES && !sc->kernel_only && !(env && strcmp(env, "off") == 0);
}

int stackcollector_drain(struct stackcollector *sc, struct bpf_object *obj, size_t key_size, size_t value_size,
			 size_t stack_key_offset, void (*add)(const struct stackdrain_entry *e, void *arg), void *arg)
{
	if (!(sc->drain = stackdrain_new(obj, key_size, value_size, stack_key_offset, add, arg)))
		return -1;
	stackdrain_set_period(sc->drain, sc->drain_ms);
	if (sc->finish_cuts && (key_size > CUT_KEY_MAX || value_size > CUT_VALUES_MAX * sizeof(uint64_t))) {
		marple_warn("a cut sample holds no key of %zu bytes and value of %zu", key_size, value_size);
		return -1;
	}
	if (sc->finish_cuts) {
		sc->cuts = unwindcut_new(sc->syms, sc->drain);
		if (!sc->notes || ring_buffer__add(sc->notes, bpfmap_fd(obj, "cut_samples"), unwindcut_on_sample, sc->cuts) < 0) {
			marple_warn("cannot read the cut samples' ring buffer");
			return -1;
		}
		/* read before a set is cleared: they name its stacks */
		stacksbpf_drain_rings(sc->drain, sc->notes, NULL);
	}
	return 0;
}

static uint64_t fold_period_ns(const struct stackcollector *sc)
{
	return STACKCOLLECTOR_FOLD_PERIODS * sc->drain_ms * 1000000;
}

int stackcollector_drain_counts(struct stackcollector *sc, struct bpf_object *obj, struct stackframes *sf,
				struct ring_buffer *rb, struct timedsamples *timed, struct stacksbpf_table *table,
				struct timedsamples_walk **walk)
{
	if (timed)
		*walk = timedsamples_walk_new(timed, sf);
	else
		table->t = hashtab_new();
	if (stackcollector_drain(sc, obj, sizeof(struct stack_key), sizeof(uint64_t), 0,
				 timed ? timedsamples_key : stacksbpf_table_add, timed ? (void *)*walk : (void *)table) < 0)
		return -1;
	if (sc->cuts && timed)
		unwindcut_set_timed(sc->cuts, timed);
	stacksbpf_drain_rings(sc->drain, rb, timed);
	/* add() only adds to a table (or, --timed, names each key's record):
	 * what was drained can be named before the end */
	sc->fold = sc->drain_ms > 0;
	sc->next_fold = marple_now_monotonic_ns() + fold_period_ns(sc);
	return 0;
}

/* What a fold or a section let go of is free in malloc's heaps, not given
 * back: the freed symbols and stacks lie between blocks still in use, and a
 * heap shrinks only from its top.  Its whole free pages go back to the
 * system, a few ms a minute. */
static void give_back_memory(void)
{
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}

/* sc->forget_exited: every fold period, the symbols of the processes that
 * have exited are let go, and the files no process maps any more (memleak
 * over a tar|gzip loop and other helpers' compilers kept every one's). */
static void forget_turn(struct stackcollector *sc)
{
	uint64_t now = marple_now_monotonic_ns();
	uint64_t period = STACKCOLLECTOR_FOLD_PERIODS * (sc->drain_ms ? sc->drain_ms : STACKDRAIN_PERIOD_MS) * 1000000;

	if (!sc->forget_exited || !sc->syms)
		return;
	if (!sc->next_fold)
		sc->next_fold = now + period;
	if (now < sc->next_fold)
		return;
	if (syms_cache_forget_exited(sc->syms) && sc->sf)
		stackframes_syms_forgotten(sc->sf);
	give_back_memory();
	sc->next_fold = now + period;
}

/* Name what was drained so far, then let go of it and of the processes
 * that had exited before the drain (their samples are all named then): a
 * capture of hours on a box that starts processes all the time holds a
 * minute's stacks, not every process's (offcpu over a tar|gzip loop and
 * short processes grew 1 MB a second without).  The naming goes a slice a
 * turn, so that the drains go on meanwhile. */
static void fold_turn(struct stackcollector *sc, int drained)
{
	if (!sc->fold) {
		forget_turn(sc);
		return;
	}
	if (sc->folding) {
		if (!stackdrain_fold_step(sc->drain, STACKCOLLECTOR_FOLD_SLICE_US))
			return;
		if (syms_cache_forget_marked(sc->syms, 1))
			stackframes_syms_forgotten(sc->sf);
		give_back_memory();
		sc->folding = 0;
		sc->next_fold = marple_now_monotonic_ns() + fold_period_ns(sc);
	}
	if (!drained || marple_now_monotonic_ns() < sc->next_fold)
		return;
	syms_cache_mark_exited(sc->syms);
	stackdrain_now(sc->drain);
	stackdrain_fold_start(sc->drain);
	sc->folding = 1;
}

int stackcollector_ready(struct stackcollector *sc)
{
	if (sc->child) {
		if (uprobes_command_go(sc->child) != 0)
			return -1;
	} else if (sc->pid || sc->tid) {
		collector_watch_target(sc->pid ? sc->pid : sc->tid, !sc->pid);
	}
	collector_ready(sc->duration);
	sc->section_start_ns = marple_now_monotonic_ns();
	sc->section_wall_ns = marple_now_realtime_ns();
	if (sc->interval)
		sc->next_cut_ns = collector_aligned_cut(sc->section_start_ns + sc->interval / 2, sc->interval);
	return 0;
}

/* Has -c's command ended?  Its stops (after exec, before exit) are let go. */
static int command_ended(struct stackcollector *sc)
{
	if (!sc->child_running || !uprobes_command_exited(sc->child, snapshot_at_exit, sc->syms, &sc->child_status))
		return 0;
	sc->child_running = 0;
	sc->child_exited = 1;
	return 1;
}

int stackcollector_poll(struct stackcollector *sc)
{
	if (collector_should_stop())
		return 0;
	ring_buffer__poll(sc->notes, collector_poll_timeout_ms(stackdrain_wait_ms(sc->drain, 100)));
	fold_turn(sc, stackdrain_poll(sc->drain));
	return !command_ended(sc);
}

/* One turn of read_until_stop's capture; 0 once it is over, -1 (said) if
 * the ring buffers cannot be read. */
static int read_turn(struct stackcollector *sc, struct ring_buffer *rb, struct syms_cache *syms, int timeout_ms)
{
	if (collector_should_stop())
		return 0;
	int err = ring_buffer__poll(rb, collector_poll_timeout_ms(stackdrain_wait_ms(sc->drain, timeout_ms)));
	if (err >= 0)
		err = ring_buffer__consume(rb);
	if (err < 0 && err != -EINTR) {
		marple_warn("reading the ring buffers: %s", collector_strerror(err));
		return -1;
	}
	syms_cache_refresh(syms);	/* libraries loaded since a snapshot */
	fold_turn(sc, stackdrain_poll(sc->drain));
	return !command_ended(sc);
}

static void stackcollector_section_done(struct stackcollector *sc);

/* The wait of a turn: poll_ms, but no later than the section's cut. */
static int turn_ms(const struct stackcollector *sc, int poll_ms)
{
	if (!sc->interval)
		return poll_ms;
	uint64_t cut = sc->next_cut_ns, now = marple_now_monotonic_ns();
	uint64_t left = cut > now ? (cut - now + 999999) / 1000000 : 0;
	return left < (uint64_t)poll_ms ? (int)left : poll_ms;
}

int stackcollector_run(struct stackcollector *sc, const struct stackcollector_run *run)
{
	if (stackcollector_ready(sc) < 0)
		return STACKCOLLECTOR_READ_FAILED;
	for (;;) {
		int go = run->rb ? read_turn(sc, run->rb, sc->syms, turn_ms(sc, run->poll_ms)) : stackcollector_poll(sc);
		if (go < 0)
			return STACKCOLLECTOR_READ_FAILED;
		if (!go)
			break;
		uint64_t now = marple_now_monotonic_ns();
		if (!sc->interval || now < sc->next_cut_ns)
			continue;
		/* the cut: this section ends, the next begins, at one instant —
		 * the planned one (what was counted in the moments since it, until
		 * the drain, goes with this section) */
		uint64_t cut = sc->next_cut_ns;
		sc->section_end_ns = cut;
		/* the processes gone before the section's last drain: forgotten
		 * once it is written (one that exits during the drain may still
		 * have samples in the set being filled) */
		if (sc->syms)
			syms_cache_mark_exited(sc->syms);
		if (run->section(run->arg, 0) < 0)
			return -1;
		sc->sections++;
		sc->section_start_ns = cut;
		sc->section_wall_ns = collector_cut_wall_ns(cut, sc->interval);
		stackcollector_section_done(sc);
		/* one step, even when the section took longer than an interval
		 * to write (the first names every library it meets): the next
		 * cuts come at once, so that every interval has its section */
		sc->next_cut_ns = collector_aligned_cut(sc->next_cut_ns + sc->interval, sc->interval);
	}
	sc->section_end_ns = 0;	/* the last ends when its trailer is made */
	if (run->stop)
		run->stop(run->arg);
	int rc = run->section(run->arg, 1);
	sc->sections++;
	return rc;
}

int stackcollector_write_section(struct stackcollector *sc, struct bpf_object *obj, json_t *hdr,
				 void (*own)(json_t *tr, void *arg), void *arg)
{
	stackdrain_finish(sc->drain);
	stackcollector_stamp_header(sc, hdr);
	if (stream_write_json(stdout, hdr) < 0)
		return -1;
	uint64_t records = stackdrain_emit(sc->drain);
	json_t *tr = stackcollector_trailer(sc, obj, records, 0, collector_end_reason());
	if (own)
		own(tr, arg);
	stackdrain_trailer_add(sc->drain, tr);
	if (stackcollector_write_trailer(sc, tr) < 0 || fflush(stdout) != 0)
		return -1;
	return 0;
}

void stackcollector_stamp_header(const struct stackcollector *sc, json_t *hdr)
{
	if (!sc->interval)
		return;
	json_object_set_new(hdr, "start_ns", json_integer((json_int_t)sc->section_start_ns));
	json_object_set_new(hdr, "wall_ns", json_integer((json_int_t)sc->section_wall_ns));
}

/* What traced processes gave us that was refused, cut or survived (issue
 * 40), counted since the start; the first file refused named. */
static void stackcollector_untrusted_input(json_t *sym, const struct syms_stats *st)
{
	struct mappedfiles_stats ms;
	const char *first = NULL;
	uint64_t refused = procmaps_refused(&first);
	struct mappedfiles *mf = mappedfiles_shared();

	mappedfiles_stats(mf, &ms);
	mappedfiles_release(mf);
	json_object_set_new(sym, "files_not_regular", json_integer((json_int_t)refused));
	if (first)
		json_object_set_new(sym, "first_not_regular", json_string(first));
	json_object_set_new(sym, "files_truncated", json_integer((json_int_t)ms.truncated));
	json_object_set_new(sym, "symbol_names_cut", json_integer((json_int_t)st->symbol_names_cut));
	json_object_set_new(sym, "perfmap_lines_skipped", json_integer((json_int_t)st->perfmap_lines_skipped));
	json_object_set_new(sym, "perfmap_names_cut", json_integer((json_int_t)st->perfmap_names_cut));
	json_object_set_new(sym, "perfmap_bytes_unread", json_integer((json_int_t)st->perfmap_bytes_unread));
}

json_t *stackcollector_section_trailer(const struct stackcollector *sc, uint64_t records, const char *ended, int last)
{
	json_t *tr = stream_section_trailer_new(records, 0, 0, last ? ended : "interval");

	if (sc->interval && sc->section_end_ns)
		json_object_set_new(tr, "end_ns", json_integer((json_int_t)sc->section_end_ns));
	if (sc->syms) {	/* what a long capture holds: the processes still running, not all it saw */
		struct syms_stats st;
		syms_cache_stats(sc->syms, &st);
		json_t *sym = json_pack("{s:I,s:I,s:I,s:I}", "processes", (json_int_t)st.procs_held, "files",
					(json_int_t)st.dsos_held, "forgotten", (json_int_t)st.procs_forgotten,
					"file_releases", (json_int_t)st.file_releases);
		stackcollector_untrusted_input(sym, &st);
		json_object_set_new(tr, "symbols", sym);
	}
	collector_memory_trailer(tr);
	corebtf_trailer(tr);
	taskcast_trailer(tr);
	if (sc->py_bound) {
		pyframes_trailer_add(sc->py, tr);
		if (!last)
			pyframes_next_section(sc->py);
	}
	return tr;
}

int stackcollector_counters(struct stackcollector *sc, struct bpf_object *obj, uint64_t *counters)
{
	uint64_t now[STACKS_NCOUNTERS] = { 0 };
	int rc = stacksbpf_read_counters(bpfmap_fd(obj, "stack_counters"), now);

	for (int i = 0; i < STACKS_NCOUNTERS; i++) {
		counters[i] = now[i] >= sc->counters_before[i] ? now[i] - sc->counters_before[i] : 0;
		if (sc->interval)
			sc->counters_before[i] = now[i];
	}
	return rc;
}

uint64_t stackcollector_self_excluded(struct stackcollector *sc, struct bpf_object *obj, json_t *tr)
{
	uint64_t all = selffilter_excluded(obj);
	uint64_t n = all >= sc->self_excluded_before ? all - sc->self_excluded_before : 0;

	if (sc->interval)
		sc->self_excluded_before = all;
	json_object_set_new(tr, "self_excluded", json_integer((json_int_t)n));
	return n;
}

/* After a section in continuous mode: the stack statistics from 0 again. */
static void stackcollector_section_done(struct stackcollector *sc)
{
	unwindtables_resume(sc->unwindtab);
	if (sc->syms && syms_cache_forget_marked(sc->syms, 0) && sc->sf)
		stackframes_syms_forgotten(sc->sf);
	if (sc->drain)
		stackdrain_restart(sc->drain);
	/* every table of records was written and let go with the section
	 * (the drain's fold finished in it): their frame ids with them */
	if (sc->sf) {
		stackframes_stats_reset(sc->sf);
		stackframes_next_section(sc->sf);
	}
	give_back_memory();
}

const char *stackcollector_ended(const struct stackcollector *sc)
{
	return sc->child_exited ? "eof" : collector_end_reason();
}

int stackcollector_write_trailer(struct stackcollector *sc, json_t *tr)
{
	if (sc->child_exited)
		json_object_set_new(tr, "command_status", json_integer(sc->child_status));
	if (sc->verbose)
		collector_verbose_trailer(tr);
	int rc = stream_write_json(stdout, tr);
	json_decref(tr);
	return rc;
}

void stackcollector_free(struct stackcollector *sc)
{
	if (sc->child_running)
		uprobes_command_stop(sc->child);
	sc->child_running = 0;
	stackdrain_free(sc->drain);
	sc->drain = NULL;
	unwindcut_free(sc->cuts);
	sc->cuts = NULL;
	bpf_link__destroy(sc->exec_link);
	sc->exec_link = NULL;
	bpf_link__destroy(sc->follow_link);
	sc->follow_link = NULL;
	procnewsring_free(sc->news);
	sc->news = NULL;
	unwindtables_free(sc->unwindtab);
	sc->unwindtab = NULL;
	unwindtablescache_close(sc->cache);
	sc->cache = NULL;
	unwindtablesshared_close(sc->shared);
	sc->shared = NULL;
	stackframes_free(sc->sf);
	pyframes_free(sc->py);
	sc->py = NULL;
	sc->py_bound = 0;
	free(sc->entries);
	sc->entries = NULL;
	syms_cache_free(sc->syms);
	syms_kernel_free(sc->ksyms);
	sc->notes = NULL;
	sc->sf = NULL;
	sc->syms = NULL;
	sc->ksyms = NULL;
}
