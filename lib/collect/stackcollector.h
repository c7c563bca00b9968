/* stackcollector.h — what the collectors built on bpf/stacks.bpf.h that
 * aggregate in their own maps (diskblockrq, memevents, mallocstacks, memleak)
 * share: the options they have in common (-p, -c, -s, -l, -U, -K, -a, -d,
 * --stack-storage, --addresses, -v, -h) with their usage lines,
 * the duration operand, sizing the stack store, symbolizing, and the trailer.
 * marple-callstack and marple-offcpu take their options from here too
 * (stackcollector_parse, with -t and --no-demangle), but set up their
 * symbols themselves.  A letter a program's own option takes (diskblockrq's
 * -d, --disk) stays its own: the shared option listed after it keeps only its
 * long name.
 *
 * A program gives its usage text and lists its options in usage order, the
 * shared ones by macro:
 *
 *   static struct stackcollector sc = {
 *           .synopsis = "[-p PID] [--bytes] [options] [DURATION]",
 *           .about = "Count ...\n",
 *           .footer = "Needs root.  See marple-x(1).\n",
 *   };
 *   static void own_option(int key, const char *arg);     // -b ...
 *   static const struct sc_option options[] = {
 *           SC_PID("only this process"),
 *           { 0, 'b', "bytes", NULL, "weight by bytes (default: by requests)" },
 *           SC_STACK_OPTIONS,
 *           { 0 }
 *   };
 *
 *   if (stackcollector_parse(&sc, options, own_option, argc, argv))   // and the duration
 *           return EXIT_OK;                   // -h
 *   if (stackcollector_start(&sc) < 0)        // root, BTF, signals; -p's process exists
 *           return EXIT_DATA;                 // (library calls say why; main exits)
 *   skel = x_bpf__open(); ... stacksbpf_set_storage(skel->obj, sc.stack_storage); load
 *   selffilter_setup(skel->obj, sc.include_self);   // marple's own left out (selffilter.h)
 *   attach
 *   skel->rodata->targ_tgid = stackcollector_target(&sc);   // -c: starts the command
 *   stackcollector_symbols(&sc, skel->obj, kernel_stacks);   // sc.syms, .ksyms, .sf, .notes
 *   stackcollector_drain(&sc, skel->obj, sizeof(key), sizeof(value), 0, add, arg);
 *   stackcollector_ready(&sc);
 *   while (stackcollector_poll(&sc))    // drains as the maps fill
 *           ;
 *   ... detach, ring_buffer__consume(sc.notes), stackdrain_finish(sc.drain),
 *   write the header, stackdrain_emit(sc.drain): add() for each key ...
 *   json_t *tr = stackcollector_trailer(&sc, skel->obj, records, 0, stackcollector_ended(&sc));
 *   ... the program's own trailer members ...
 *   stackcollector_write_trailer(&sc, tr);
 *   stackcollector_free(&sc);
 */
#ifndef MARPLE_STACKCOLLECTOR_H
#define MARPLE_STACKCOLLECTOR_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <linux/types.h>

#include "collector.h"
#include "options.h"
#include "stacks.h"

/* One option of a program, shared or its own, for getopt_long and the usage. */
struct sc_option {
	int id;			/* SC_OPT_* for a shared option, 0 for the program's own */
	int key;		/* its letter, or a value >= 256 for a long-only option */
	const char *name;	/* the long option */
	const char *arg;	/* the argument's name in the usage ("PID"); NULL: none */
	const char *help;	/* usage text; a '\n' continues it on an indented line */
};

enum {
	SC_OPT_PID = 1, SC_OPT_COMMAND, SC_OPT_SAMPLE_EVERY, SC_OPT_LIB, SC_OPT_USER_ONLY,
	SC_OPT_KERNEL_ONLY, SC_OPT_ANNOTATE, SC_OPT_DELIMIT, SC_OPT_STACK_STORAGE, SC_OPT_ADDRESSES,
	SC_OPT_VERBOSE, SC_OPT_HELP, SC_OPT_TID, SC_OPT_NO_DEMANGLE, SC_OPT_INCLUDE_SELF, SC_OPT_UNWIND,
	SC_OPT_DWARF, SC_OPT_UNWIND_MEMORY, SC_OPT_DRAIN_EVERY, SC_OPT_NO_CACHE, SC_OPT_EVERY, SC_OPT_NO_PYTHON,
	SC_OPT_CHILDREN, SC_OPT_NO_INLINE
};
#define SC_LONG_ONLY(id) (0x4000 + (id))	/* the key of a shared long-only option */

#define SC_PID(help) { SC_OPT_PID, 'p', "pid", "PID", help }
#define SC_COMMAND(help) { SC_OPT_COMMAND, 'c', "command", "CMD", help }
/* the target's process tree (bpf/follow.bpf.h), for the collectors that
 * filter on a target in BPF and call stackcollector_follow */
#define SC_CHILDREN \
	{ SC_OPT_CHILDREN, SC_LONG_ONLY(SC_OPT_CHILDREN), "children", NULL, \
	  "with -p: the processes it starts from now on too,\nthrough fork and exec (-c follows them always)" }
#define SC_SAMPLE_EVERY(help) { SC_OPT_SAMPLE_EVERY, 's', "sample-every", "N", help }
#define SC_LIB(help) { SC_OPT_LIB, 'l', "lib", "PATH", help }
#define SC_USER_ONLY { SC_OPT_USER_ONLY, 'U', "user-only", NULL, "user stacks only" }
#define SC_KERNEL_ONLY { SC_OPT_KERNEL_ONLY, 'K', "kernel-only", NULL, "kernel stacks only" }
/* -a and -d as bcc's profile and offcputime spell them; --annotate and
 * --delimit, the spellings of the collectors written before, are kept as old
 * spellings (lib/format/options.md). */
#define SC_ANNOTATE \
	{ SC_OPT_ANNOTATE, 'a', "annotations", NULL, "kernel frames end in _[k]" }, \
	{ SC_OPT_ANNOTATE, 'a', "annotate", NULL, NULL }
#define SC_DELIMIT \
	{ SC_OPT_DELIMIT, 'd', "delimited", NULL, "a \"-\" frame between user and kernel frames" }, \
	{ SC_OPT_DELIMIT, 'd', "delimit", NULL, NULL }
#define SC_STACK_STORAGE \
	{ SC_OPT_STACK_STORAGE, SC_LONG_ONLY(SC_OPT_STACK_STORAGE), "stack-storage", "N", \
	  "stack map entries (offcpu, lock, diskblockrq:\ndefault 4096; memevents, mallocstacks, memleak:\n8192; a sampling collector's sized to its rate)" }
/* for the collectors that drain their maps while capturing (stackdrain.h) */
#define SC_DRAIN_EVERY \
	{ SC_OPT_DRAIN_EVERY, SC_LONG_ONLY(SC_OPT_DRAIN_EVERY), "drain-every", "MS", \
	  "read and clear the kernel maps every MS ms while capturing,\n" \
	  "and whenever they pass half full (default 1000; 0: only\n" \
	  "at the end, so a full map loses samples)" }
/* continuous mode, for the collectors whose section callback can be called
 * more than once (stackcollector_run) */
#define SC_EVERY \
	{ SC_OPT_EVERY, SC_LONG_ONLY(SC_OPT_EVERY), "every", "DURATION", \
	  "continuous: one whole section (header, records, trailer)\n" \
	  "every DURATION (10s, 1m...), symbols kept warm, until\n" \
	  "the end (the last one ends with it)" }
#define SC_ADDRESSES \
	{ SC_OPT_ADDRESSES, SC_LONG_ONLY(SC_OPT_ADDRESSES), "addresses", NULL, \
	  "unresolved frames as [module+0xoffset]" }
#define SC_VERBOSE { SC_OPT_VERBOSE, 'v', "verbose", NULL, COLLECTOR_VERBOSE_HELP }
/* a thread, as bcc's offcputime and perf spell it */
#define SC_TID(help) { SC_OPT_TID, 't', "tid", "TID", help }
#define SC_NO_DEMANGLE \
	{ SC_OPT_NO_DEMANGLE, SC_LONG_ONLY(SC_OPT_NO_DEMANGLE), "no-demangle", NULL, \
	  "keep C++/Rust names mangled" }
#define SC_INCLUDE_SELF \
	{ SC_OPT_INCLUDE_SELF, SC_LONG_ONLY(SC_OPT_INCLUDE_SELF), "include-self", NULL, \
	  "marple's own processes too (left out by default)" }
/* --unwind MODE for every stack collector; --dwarf (its alias) for those
 * that have a dwarf mode (callstack, offcpu) */
#define SC_UNWIND(dwarf_help) \
	{ SC_OPT_UNWIND, SC_LONG_ONLY(SC_OPT_UNWIND), "unwind", "MODE", \
	  "user stacks: tables (default; in the kernel with tables\nbuilt from .eh_frame), fp (frame pointers only)" dwarf_help }, \
	{ SC_OPT_UNWIND_MEMORY, SC_LONG_ONLY(SC_OPT_UNWIND_MEMORY), "unwind-memory", "SIZE", \
	  "--unwind tables: kernel memory for the tables, MB\n(or 512K, 2G); default 32 (~7.3 M rows)" }, \
	{ SC_OPT_NO_CACHE, SC_LONG_ONLY(SC_OPT_NO_CACHE), "no-cache", NULL, \
	  "--unwind tables: build every file's table, and keep none\non disk (default: cached in MARPLE_CACHE_DIR, else\n/var/cache/marple for root, ~/.cache/marple)" }
#define SC_UNWIND_DWARF_HELP ",\ndwarf (16 KB of stack copied a sample, unwound here)"
#define SC_DWARF { SC_OPT_DWARF, SC_LONG_ONLY(SC_OPT_DWARF), "dwarf", NULL, "--unwind dwarf" }
/* Python frames (lib/collect/pyframes.h) in every collector of user stacks */
#define SC_NO_PYTHON \
	{ SC_OPT_NO_PYTHON, SC_LONG_ONLY(SC_OPT_NO_PYTHON), "no-python", NULL, \
	  "Python, PHP and Perl processes' stacks native only\n(default: their functions in place of the interpreter's)" }
/* functions inlined into native ones, from DWARF (lib/collect/dwarfinline.h) */
#define SC_NO_INLINE \
	{ SC_OPT_NO_INLINE, SC_LONG_ONLY(SC_OPT_NO_INLINE), "no-inline", NULL, \
	  "native frames as their symbols name them: no functions\ninlined into them (default: those DWARF names, each\ndescribed with its file:line)" }
#define SC_HELP { SC_OPT_HELP, 'h', "help", NULL, "this help" }
/* what the program is, for the registry (options.h OPTIONS_DESCRIBE) */
#define SC_DESCRIBE(fields) { 0, OPTIONS_KEY_DESCRIBE, "describe", fields, NULL }
/* The tail of a collector of user and kernel stacks. */
#define SC_STACK_OPTIONS \
	SC_UNWIND(""), SC_NO_PYTHON, SC_NO_INLINE, SC_USER_ONLY, SC_KERNEL_ONLY, SC_ANNOTATE, SC_DELIMIT, SC_STACK_STORAGE, SC_DRAIN_EVERY, \
	SC_EVERY, SC_ADDRESSES, \
	SC_INCLUDE_SELF, SC_VERBOSE, SC_HELP

struct options_entry;
struct syms_cache;
struct ksyms;
struct stackframes;
struct ring_buffer;
struct bpf_object;
struct unwindtables;
struct unwindcut;
struct pyframes;

struct stackcollector {
	/* the program's usage text */
	const char *synopsis;		/* the usage line after "Usage: PROG " */
	const char *about;		/* what it does, lines ending in '\n' */
	const char *footer;		/* usage lines after the DURATION line */

	/* set by stackcollector_parse */
	const struct sc_option *options;
	struct options_entry *entries;	/* the same for options.h (getopt and usage) */
	void (*option)(int key, const char *arg);
	pid_t pid;			/* -p, 0: not given */
	pid_t tid;			/* -t, 0: not given */
	const char *cmd;		/* -c */
	int children;			/* --children, or -c: the target's descendants too */
	const char *lib;		/* -l */
	uint64_t sample_every;		/* -s, default 1 */
	uint64_t stack_storage;		/* --stack-storage; 0: not given (stacksbpf.h) */
	uint64_t drain_ms;		/* --drain-every, default STACKDRAIN_PERIOD_MS; 0: never */
	uint64_t duration;		/* the operand, ns; 0: until SIGINT/SIGTERM */
	uint64_t interval;		/* --every, ns; 0: one section for the whole capture */
	int user_only, kernel_only, annotate, delimit, addresses, no_demangle;
	int include_self;		/* --include-self */
	int verbose;			/* how many -v */
	int unwind;			/* --unwind: UNWIND_MODE_*, default tables */
	uint64_t unwind_memory;		/* --unwind-memory, bytes */
	int no_cache;			/* --no-cache: no unwind rows read from or written to disk */
	int no_python;			/* --no-python */
	int no_inline;			/* --no-inline */

	/* set by the collector before stackcollector_unwind_size, with its
	 * rodata stacks_send_cuts, where its program sends the samples whose
	 * table walk stopped where a table was missing (STACKS_SEND_CUT):
	 * stackcollector_cuts_wanted.  stackcollector_drain then walks them on
	 * (unwindcut.h) into the drain */
	int finish_cuts;
	struct unwindcut *cuts;

	/* set by stackcollector_python: Python frames merged into sf's stacks */
	struct pyframes *py;
	int py_bound;			/* sc->py has the loaded object */

	/* set by stackcollector_unwind_loaded (tables mode) */
	struct unwindtables *unwindtab;
	struct unwindtablescache *cache;	/* opened at sizing, the tables' once they are made */
	struct unwindtablesshared *shared;	/* joined at sizing (NULL: private), the tables' once made */
	int cache_opened;		/* opening it was tried (a refusal is said once) */

	/* set by the collector (stackdrain_new) when its counts are drained
	 * while it runs: stackcollector_poll and _read_until_stop drain them,
	 * stackcollector_free frees it */
	struct stackdrain *drain;
	/* set by stackcollector_drain_counts: the drained keys are named and
	 * added to the collector's table every STACKCOLLECTOR_FOLD_PERIODS
	 * drain periods, and the processes that had exited forgotten
	 * (stackdrain_fold_start) */
	int fold;
	int folding;			/* a fold is being named */
	uint64_t next_fold;		/* when the next begins, monotonic ns */
	/* set by a collector that never names an exited process's stacks
	 * (memleak system-wide: its memory went back with it) and does not
	 * fold: the processes that have exited are forgotten as often */
	int forget_exited;

	/* set by stackcollector_symbols */
	struct syms_cache *syms;
	struct ksyms *ksyms;
	struct stackframes *sf;
	struct procnewsring *news;	/* the process news (procnewsring.h) */
	struct ring_buffer *notes;	/* news's ring buffer: poll it while capturing */
	struct bpf_link *exec_link;	/* the object's stacks_exec program, if any */

	/* the section being captured (stackcollector_run): when it began,
	 * on the monotonic and the wall clock, and when it was cut */
	uint64_t section_start_ns, section_wall_ns, section_end_ns;
	uint64_t next_cut_ns;		/* where the section ends (collector_aligned_cut) */
	uint64_t sections;		/* written so far */
	uint64_t counters_before[STACKS_NCOUNTERS];	/* stack_counters at the last cut */
	uint64_t self_excluded_before;	/* selffilter_excluded at the last cut */
	uint64_t walked_named_before, walked_unfound_before;	/* syms_stats' walked_named and
								 * walked_vmas_unopened at the last cut */
	uint64_t posted_unmatched_before;	/* ... and posted_unmatched */

	struct bpf_link *follow_link;	/* stackcollector_follow's fork program */

	/* -c's command, started by stackcollector_target */
	pid_t child;
	int child_running, child_exited, child_status;
};

/* Parse the options (in usage order, { 0 } ends; the program's own, id 0,
 * through option()), check them (-U with -K, -p with -c: exit 2) and read the
 * duration operand; 0.  -h prints the usage and returns 1 (the collector
 * exits 0); an unknown option exits 2. */
int stackcollector_parse(struct stackcollector *sc, const struct sc_option *options,
			 void (*option)(int key, const char *arg), int argc, char **argv);
void stackcollector_usage(struct stackcollector *sc, FILE *f);

/* --unwind: size the unwind maps of obj (before load), and choose its
 * interpreters' walks (-p: its interpreter's alone, pyframes_walks_for);
 * set the skeleton's rodata stacks_unwind to sc->unwind yourself.  0, or -1 with a message
 * said (the collector exits 1), as the functions below. */
int stackcollector_unwind_size(struct stackcollector *sc, struct bpf_object *obj);
/* Should the program send the samples its table walk cut (tables mode, user
 * stacks, not MARPLE_FINISH_CUTS=off)?  A collector whose program does
 * (STACKS_SEND_CUT) sets sc->finish_cuts and its rodata stacks_send_cuts so. */
int stackcollector_cuts_wanted(const struct stackcollector *sc);
/* After load, in tables mode: the tables, -p's process's loaded now, and
 * requests served when sc->notes (the process news) is polled. */
int stackcollector_unwind_loaded(struct stackcollector *sc, struct bpf_object *obj);

/* Are Python frames to be walked (not --no-python, -K or --unwind dwarf)?
 * The collector sets its skeleton's rodata stacks_python to this before load. */
int stackcollector_python_wanted(const struct stackcollector *sc);
/* After load, once sc->sf and sc->notes are made (stackcollector_symbols
 * calls it), when wanted: sc->py, whose requests are served as sc->notes is
 * polled and whose frames sc->sf merges; the trailers get "python". */
void stackcollector_python(struct stackcollector *sc, struct bpf_object *obj);

/* collector_start() (-1 if it failed), then exit 1 if -p's process does
 * not exist. */
int stackcollector_start(const struct stackcollector *sc);

/* The C library to probe: -l, or the libc the process (or this program) maps.
 * NULL with a message said when there is none (the collector exits 1). */
char *stackcollector_libc(const struct stackcollector *sc);

/* SF_* flags of -a, --delimit and --addresses. */
int stackcollector_sf_flags(const struct stackcollector *sc);

/* After load, once sc->syms is made: sc->news and sc->notes, its ring
 * buffer (stacksbpf_news_open).  0, or -1 after a message. */
int stackcollector_news_open(struct stackcollector *sc, struct bpf_object *obj);
/* After load: the symbol caches (ksyms only with kernel), the stackframes of
 * the object's stacks map and the reader of its process news; -p's process is
 * snapshot now.  0, or -1 after a message. */
int stackcollector_symbols(struct stackcollector *sc, struct bpf_object *obj, int kernel);

/* A stack section header weighted in unit ("bytes") and labelled label, with
 * "options" holding target's pid (-p's process or -c's child; none if 0) and
 * -c's command; the caller adds its own to *options (owned by the header). */
json_t *stackcollector_header(const struct stackcollector *sc, const char *interface, const char *unit,
			      const char *label, pid_t target, json_t **options);

/* A trailer of records records with the object's stack counters (those of
 * the section: stackcollector_counters) and sf's
 * stats (see stacksbpf_trailer_add: a line on stderr when stacks were lost) and
 * "self_excluded" (selffilter.h);
 * "dropped" is the samples not counted plus extra_dropped. */
json_t *stackcollector_trailer(struct stackcollector *sc, struct bpf_object *obj, uint64_t records,
			       uint64_t extra_dropped, const char *ended);
/* In tables mode, the trailer's "unwind" (unwindtables_trailer_add) with
 * the frames the symbolizer named from the VMAs the walker found
 * (frames_named_from_walk; vma_notes_file_not_found: those whose file it
 * could not find), in this section; nothing in other modes. */
void stackcollector_unwind_trailer(struct stackcollector *sc, json_t *tr);

/* The process to trace: with -c, the command, started now (it runs from
 * stackcollector_ready on; -1 after uprobes' message if it cannot be
 * started: the collector exits 1); else -p's (0: every process). */
pid_t stackcollector_target(struct stackcollector *sc);

/* With --children or -c, after load: target (stackcollector_target's) and
 * every process it forks from now on are recorded (bpf/follow.bpf.h's
 * follow_tgids and follow_fork, which obj must have).  -1 with a message
 * said if the fork program cannot be attached (the collector exits 1). */
int stackcollector_follow(struct stackcollector *sc, struct bpf_object *obj, pid_t target);
/* Drain obj's maps while capturing (stackdrain.h, every --drain-every ms):
 * sc->drain, polled by stackcollector_poll and _read_until_stop, freed by
 * stackcollector_free.  0, or -1 with a message. */
struct stackframes;
struct stackdrain_entry;
int stackcollector_drain(struct stackcollector *sc, struct bpf_object *obj, size_t key_size, size_t value_size,
			 size_t stack_key_offset, void (*add)(const struct stackdrain_entry *e, void *arg), void *arg);
/* The same for the collectors that count samples by struct stack_key in
 * their count table (callstack, offcpu): drained into table (stacksbpf_table_add),
 * or with timed (--timed) into a new *walk (timedsamples_key), whose samples'
 * stacks are read from rb at every drain.  0, or -1 with a message. */
struct ring_buffer;
struct timedsamples;
struct timedsamples_walk;
struct stacksbpf_table;
int stackcollector_drain_counts(struct stackcollector *sc, struct bpf_object *obj, struct stackframes *sf,
				struct ring_buffer *rb, struct timedsamples *timed, struct stacksbpf_table *table,
				struct timedsamples_walk **walk);
/* A long capture names what it drained, and forgets the processes that
 * have exited, every so many drain periods (a minute at the default
 * --drain-every): memory then holds a minute's distinct stacks and the live
 * processes' symbols. */
#define STACKCOLLECTOR_FOLD_PERIODS 60
/* the naming of a fold, a slice a turn (the turns are 20-100 ms apart) */
#define STACKCOLLECTOR_FOLD_SLICE_US 10000
/* Let -c's command run, and collector_ready(): 0, or -1 after uprobes'
 * message when the command cannot be run (the collector exits 1). */
int stackcollector_ready(struct stackcollector *sc);
/* One turn of the capture: read the pid notes (100 ms at most), drain
 * sc->drain if due (stackdrain.h), and notice
 * -c's command exiting (its maps are snapshot first).  0 once the capture is
 * over: duration, signal, or the command exited. */
int stackcollector_poll(struct stackcollector *sc);
/* The one lifecycle of a stack collector once it is set up: ready
 * (stackcollector_ready), then turns of the capture (stackcollector_poll, or
 * with rb: rb read every poll_ms, woken at once by what wakes it, sc->drain
 * drained when due) and, at
 * every --every and once at the end, section(arg, last): the collector
 * drains and writes one whole section — header stamped by
 * stackcollector_stamp_header, records, trailer by stackcollector_trailer or
 * with stackcollector_section_end.  Before the last, stop(arg) (may be NULL)
 * detaches what samples.  Returns what the last section() returned (0, or -1
 * when the output failed: a middle one's failure ends the capture), or
 * STACKCOLLECTOR_READ_FAILED when rb could not be read or -c's command
 * could not be run (said; exit 1). */
#define STACKCOLLECTOR_READ_FAILED (-2)
struct stackcollector_run {
	struct ring_buffer *rb;		/* NULL: stackcollector_poll's turns */
	int poll_ms;			/* with rb */
	void (*stop)(void *arg);
	int (*section)(void *arg, int last);
	void *arg;
};
int stackcollector_run(struct stackcollector *sc, const struct stackcollector_run *run);
/* The section() of a collector whose add() writes each record as it is
 * emitted (diskblockrq, memevents): drain what is left, write hdr (stamped),
 * the records, and the trailer (stackcollector_trailer, then own(tr, arg)
 * adds the program's members and sets its totals to 0, then "drains"); 0 or
 * -1. */
int stackcollector_write_section(struct stackcollector *sc, struct bpf_object *obj, json_t *hdr,
				 void (*own)(json_t *tr, void *arg), void *arg);
/* In continuous mode, hdr's start_ns and wall_ns made the section's start
 * (the previous section's end): consecutive sections tile the time. */
void stackcollector_stamp_header(const struct stackcollector *sc, json_t *hdr);
/* The section's trailer: in continuous mode end_ns is the cut and a section
 * that is not the last ends "interval". */
json_t *stackcollector_section_trailer(const struct stackcollector *sc, uint64_t records, const char *ended, int last);
/* obj's stack_counters, as counted since the last section (all of them
 * without --every); the cut remembered for the next. */
int stackcollector_counters(struct stackcollector *sc, struct bpf_object *obj, uint64_t *counters);
/* The trailer's "self_excluded" (selffilter.h), the section's own; the
 * count returned. */
uint64_t stackcollector_self_excluded(struct stackcollector *sc, struct bpf_object *obj, json_t *tr);
/* Into a header's options o, what the capture watched and how it unwound:
 * "stacks", "pid", "children", "command", "tid", "unwind" (callstack's and
 * offcpu's own headers). */
void stackcollector_target_options(const struct stackcollector *sc, json_t *o);
/* The trailer's "ended": "eof" when -c's command exited, else
 * collector_end_reason(). */
const char *stackcollector_ended(const struct stackcollector *sc);
/* Write tr (with "command_status" when -c's command exited) and free it;
 * 0 or -1. */
int stackcollector_write_trailer(struct stackcollector *sc, json_t *tr);

/* Free what stackcollector_symbols made; stop -c's command if still running. */
void stackcollector_free(struct stackcollector *sc);

#endif
