/* marple-callstack — sample stacks on all CPUs (or one process) with a
 * perf_event cpu-clock BPF program and write one stack section.
 *
 * Default (--unwind tables): user stacks unwound in the kernel from tables
 * built out of the binaries' .eh_frame (lib/collect/unwindtables.c; code built
 * without frame pointers, as most of Debian is, comes out whole), kernel
 * stacks by bpf_get_stackid, counted in a kernel hash map and symbolized at
 * the end.  --unwind fp: frame pointers only.  --dwarf: user registers and the
 * top of the user stack go through a ring buffer and are unwound here with
 * libunwind.  --raw: one event per sample (time, cpu, pid, comm) instead.
 * --timed: the stack section, then a samples section with every sample's time,
 * CPU, pid, tid and stack (marple-format(5), "Timed stack sections").
 *
 *   $ marple-callstack -F 99 10
 *   {"marple":1,"interface":"callstack","datatype":"stack",...,"units":{"weight":"samples","measure":"on_cpu",...}}
 *   97#python3;_start;__libc_start_main;main;PyRun_SimpleFile
 *   {"trailer":1,...,"records":1832,"lost":0,"dropped":0,"ended":"duration","stack_errors":{...}}
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "callstack.h"
#include "callstack.skel.h"
#include "collector.h"
#include "corebtf.h"
#include "cpuclock.h"
#include "unwinddwarf.h"
#include "bpfmap.h"
#include "hashtab.h"
#include "selffilter.h"
#include "stackcollector.h"
#include "stackdrain.h"
#include "stackframes.h"
#include "stacksbpf.h"
#include "stream.h"
#include "syms.h"
#include "timedsamples.h"
#include "unwindtables.h"
#include "util.h"
#include "weight.h"

static struct {
	uint64_t freq;
	int64_t cpu;
	bool idle, raw, dwarf, timed;
} opt = { .freq = 99, .cpu = -1 };

enum { OPT_RAW = 256, OPT_TIMED };

static struct stackcollector sc = {
	.synopsis = "[options] [DURATION]",
	.about = "Sample stacks on every CPU with cpu-clock and write a marple stack section.\n",
	.footer = "See marple-callstack(1).\n",
};

static const struct sc_option options[] = {
	{ 0, 'F', "frequency", "HZ", "samples per second per CPU (default 99)" },
	SC_PID("only this process"),
	SC_CHILDREN,
	SC_COMMAND("start CMD, profile it and the processes it starts\nuntil it exits (its output goes to stderr)"),
	SC_TID("only this thread"),
	{ 0, 'C', "cpu", "CPU", "only this CPU" },
	SC_USER_ONLY,
	SC_KERNEL_ONLY,
	{ 0, 'I', "include-idle", NULL, "include the idle task (swapper)" },
	SC_DELIMIT,
	SC_ANNOTATE,
	SC_UNWIND(SC_UNWIND_DWARF_HELP),
	SC_DWARF,
	SC_NO_PYTHON,
	SC_NO_INLINE,
	{ 0, OPT_RAW, "raw", NULL, "one event per sample (time, cpu, pid, comm), no stacks" },
	{ 0, OPT_TIMED, "timed", NULL, "keep every sample's time too (a timed stack section:\nmarple-fold --from/--to, marple-flamescope)" },
	SC_STACK_STORAGE,
	SC_DRAIN_EVERY,
	SC_EVERY,
	SC_NO_DEMANGLE,
	SC_ADDRESSES,
	SC_INCLUDE_SELF,
	SC_VERBOSE,
	SC_DESCRIBE("kind=collector\tsections=callstack:stack:flamegraph\tevery=yes\tconfig=frequency:-F,timed:--timed"
		"\tmeasures=on-CPU time: stacks sampled on every CPU (samples)"),
	SC_HELP,
	{ 0 },
};

static void own_option(int key, const char *arg)
{
	switch (key) {
	case 'F': opt.freq = marple_opt_u64("-F", arg, 1, 100000); break;
	case 'C': opt.cpu = (int64_t)marple_opt_u64("-C", arg, 0, 65535); break;
	case 'I': opt.idle = true; break;
	case OPT_RAW: opt.raw = true; break;
	case OPT_TIMED: opt.timed = true; break;
	}
}

static struct {
	struct unwinddwarf *dwarf;
	struct timedsamples *timed;
	uint64_t records;
	uint64_t samples;		/* in every section so far */
	int draining;			/* sampling has stopped: read all that is left */
} run;

static int on_event(void *ctx, void *data, size_t len)
{
	const struct raw_sample *r = data;
	char track[32], pid[16], tid[16];

	if (len >= sizeof(*r) && r->type == REC_RAW) {
		char comm[MARPLE_COMM_LEN + 1];
		memcpy(comm, r->comm, MARPLE_COMM_LEN);
		comm[MARPLE_COMM_LEN] = 0;
		snprintf(track, sizeof(track), "cpu%u", r->cpu);
		snprintf(pid, sizeof(pid), "%u", r->pid);
		snprintf(tid, sizeof(tid), "%u", r->tid);
		struct field f[3] = { { MSTR("comm"), escape_mstr_c(comm) }, { MSTR("pid"), escape_mstr_c(pid) },
				      { MSTR("tid"), escape_mstr_c(tid) } };
		stream_write_event(stdout, r->time, MSTR("sample"), escape_mstr_c(track), f, 3);
		run.records++;
	} else if (len >= sizeof(struct dwarf_sample) && r->type == REC_DWARF) {
		if (unwinddwarf_add(run.dwarf, data, 1) < 0)
			exit(EXIT_DATA);
	}
	/* a ring buffer filled faster than it is read would keep us reading past
	 * the end of the capture (a 10 s --dwarf capture ran 15 s on a busy
	 * machine): stop at the deadline, and read the rest once sampling stopped */
	return !run.draining && collector_should_stop() ? -EINTR : 0;
}

/* What the sections are made of (the capture's state, past main's setup). */
static struct {
	struct callstack_bpf *skel;
	struct cpuclock *cc;
	struct stacksbpf_table table;
	struct timedsamples_walk *timed_walk;
	json_t *hdr;
	struct cpuclock_account acct;
} cap;

/* The end of the capture: sampling stops, what the rings hold is read. */
static void stop_sampling(void *arg)
{
	(void)arg;
	cpuclock_detach_account(cap.cc, &cap.acct);
	cap.cc = NULL;
	run.draining = 1;
	bpf_link__destroy(sc.exec_link);
	sc.exec_link = NULL;
	ring_buffer__consume(sc.notes);
}

/* Where the BPF time of this section's samples went (stacks.h's stages). */
static void stages_trailer_add(json_t *sampling)
{
	static struct stacks_stage_clock before;

	if (!opt.raw && !opt.dwarf)
		stacksbpf_stages_trailer_add(sampling, cap.skel->obj, &before);
}

/* One section: at every --every interval (sampling goes on) and at the end. */
static int write_section(void *arg, int last)
{
	uint64_t counters[STACKS_NCOUNTERS] = { 0 };

	(void)arg;
	if (!last)
		cpuclock_account_section(cap.cc, &cap.acct);
	if (sc.interval) {
		stackcollector_stamp_header(&sc, cap.hdr);
		if (stream_write_json(stdout, cap.hdr) < 0)
			return -1;
	}
	if (opt.dwarf)
		run.records = unwinddwarf_write(run.dwarf, sc.sf, bpf_map__fd(cap.skel->maps.counts), stdout);
	else if (sc.drain) {
		stackdrain_finish(sc.drain);
		stackdrain_emit(sc.drain);
		run.records = opt.timed ? timedsamples_walk_write(cap.timed_walk, stdout)
					: stackframes_write_table(sc.sf, cap.table.t, stdout);
		if (!last) {
			hashtab_free(cap.table.t);
			cap.table.t = hashtab_new();
		}
	}
	stackcollector_counters(&sc, cap.skel->obj, counters);
	json_t *tr = stackcollector_section_trailer(&sc, run.records, stackcollector_ended(&sc), last);
	uint64_t dropped = stacksbpf_trailer_add(tr, counters, opt.raw ? NULL : sc.sf);
	json_object_set_new(tr, "dropped", json_integer((json_int_t)dropped));
	json_object_set_new(tr, "samples", json_integer((json_int_t)counters[STACKS_SAMPLES]));
	cap.acct.self_excluded = stackcollector_self_excluded(&sc, cap.skel->obj, tr);
	cpuclock_trailer_add(tr, &cap.acct, counters[STACKS_SAMPLES] + cap.acct.self_excluded,
			     stacksbpf_not_counted(counters));
	stages_trailer_add(json_object_get(tr, "sampling"));
	if (opt.dwarf)
		unwinddwarf_trailer_add(run.dwarf, tr, sc.verbose);
	if (sc.unwindtab)
		stackcollector_unwind_trailer(&sc, tr);
	stackdrain_trailer_add(sc.drain, tr);
	int rc = stackcollector_write_trailer(&sc, tr);
	run.records = 0;
	run.samples += counters[STACKS_SAMPLES];
	if (last && !run.samples && (sc.pid || sc.tid || sc.cmd))
		marple_warn("0 samples: %s %d never ran on a CPU while sampled (asleep, or waiting on another process)%s",
			    sc.tid ? "thread" : "process", (int)(sc.tid ? sc.tid : sc.pid),
			    sc.children ? "" : "; a shim or wrapper's child is another pid: add --children");
	/* --timed: the samples section of the section just written; in
	 * continuous mode each interval has its own, and the samples, keys
	 * and records start from none again */
	if (opt.timed && rc == 0) {
		timedsamples_write_section(run.timed, cap.hdr, "sample", collector_end_reason(),
					   last ? 0 : sc.section_end_ns, stdout);
		if (!last)
			timedsamples_restart(run.timed);
	}
	/* a section is whole on its way out: the supervisor cuts files by them */
	if (rc == 0 && fflush(stdout) != 0)
		rc = -1;
	return rc;
}

/* Open the skeleton, set what the options say, load it. */
static struct callstack_bpf *load(bool python)
{
	struct callstack_bpf *skel = callstack_bpf__open_opts(corebtf_opts(callstack_bpf__elf_bytes));
	int err;

	if (!skel)
		marple_fatal(EXIT_DATA, "cannot open the BPF program: %s", strerror(errno));
	skel->rodata->targ_pid = (uint32_t)sc.pid;
	skel->rodata->targ_tid = (uint32_t)sc.tid;
	skel->rodata->want_user = !sc.kernel_only;
	skel->rodata->want_kernel = !sc.user_only;
	skel->rodata->include_idle = opt.idle;
	skel->rodata->raw_mode = opt.raw;
	skel->rodata->dwarf_mode = opt.dwarf;
	sc.finish_cuts = stackcollector_cuts_wanted(&sc) && !opt.raw;
	skel->rodata->stacks_send_cuts = sc.finish_cuts;
	skel->rodata->timed_mode = opt.timed;
	skel->rodata->stacks_python = python;
	if (opt.timed)
		timedsamples_size(skel->obj, opt.freq * (uint64_t)libbpf_num_possible_cpus());
	skel->rodata->stacks_unwind = (uint32_t)sc.unwind;
	if (stackcollector_unwind_size(&sc, skel->obj) < 0)
		exit(EXIT_DATA);
	uint32_t storage = sc.stack_storage ? (uint32_t)sc.stack_storage :
		stacksbpf_storage_for(opt.freq * (uint64_t)libbpf_num_possible_cpus(), sc.drain_ms);
	stacksbpf_set_counts_size(skel->obj, storage);
	stacksbpf_set_storage(skel->obj, storage);
	/* dwarf: ~16.5 KB a sample; room for a quarter second of samples on every CPU */
	uint64_t rbsize = opt.dwarf ? 16u << 20 : opt.raw ? 4u << 20 : 4096;
	if (opt.dwarf && opt.freq * (uint64_t)libbpf_num_possible_cpus() > 1000)
		rbsize = 64u << 20;
	bpf_map__set_max_entries(skel->maps.events, (uint32_t)rbsize);
	if ((err = callstack_bpf__load(skel)))
		marple_fatal(EXIT_DATA, "cannot load the BPF program: %s", collector_strerror(err));
	return skel;
}

/* The section's header: what was sampled and how, its unit. */
static json_t *section_header(void)
{
	json_t *hdr = stream_section_header_new("callstack", opt.raw ? DATATYPE_EVENT : DATATYPE_STACK);
	json_t *o = json_object();
	json_object_set_new(o, "frequency", json_integer((json_int_t)opt.freq));
	stackcollector_target_options(&sc, o);
	if (opt.cpu >= 0)
		json_object_set_new(o, "cpu", json_integer(opt.cpu));
	json_object_set_new(o, "include_idle", json_boolean(opt.idle));
	if (sc.interval)
		json_object_set_new(o, "interval_ns", json_integer((json_int_t)sc.interval));
	json_object_set_new(hdr, "options", o);
	if (opt.raw) {
		json_object_set_new(hdr, "units", json_pack("{s:s}", "time", "ns"));
		json_object_set_new(hdr, "track", json_string("cpu"));
	} else {
		weight_meaning_set(hdr, "samples", "on_cpu", 0);
	}
	if (opt.timed)
		timedsamples_mark(hdr);
	return hdr;
}

int main(int argc, char **argv)
{
	struct callstack_bpf *skel;

	marple_init(argc, argv);
	if (stackcollector_parse(&sc, options, own_option, argc, argv))
		return EXIT_OK;	/* -h */
	opt.dwarf = sc.unwind == UNWIND_MODE_DWARF;
	if (opt.raw && opt.dwarf)
		marple_usage_error("--raw and --dwarf exclude each other");
	if (opt.timed && (opt.raw || opt.dwarf))
		marple_usage_error("--timed works with frame-pointer stacks: not with --%s", opt.raw ? "raw" : "dwarf");
	/* --raw writes each sample as it comes, after one header: cutting it
	 * would need every event sorted into its interval by time; --dwarf
	 * keeps kernel stack ids until the end (not drained) */
	if (sc.interval && (opt.raw || opt.dwarf))
		marple_usage_error("--every: not with --%s (one section for the whole capture)",
				   opt.raw ? "raw" : "dwarf");
	if (collector_start(sc.verbose > 1) < 0 || stacksbpf_check_target(sc.pid, sc.tid) < 0)
		return EXIT_DATA;
	/* started now, held until the sampling is attached */
	if (sc.cmd && (sc.pid = stackcollector_target(&sc)) < 0)
		exit(EXIT_DATA);	/* uprobes said why; exit: what main holds stays reachable */

	/* Python frames with the user stacks (not --raw: no stacks) */
	bool python = stackcollector_python_wanted(&sc) && !opt.raw;
	cap.skel = skel = load(python);
	if (selffilter_setup(skel->obj, sc.include_self) < 0 || stackcollector_follow(&sc, skel->obj, sc.pid) < 0)
		exit(EXIT_DATA);

	sc.syms = syms_cache_new(sc.no_demangle ? 0 : SYMS_DEMANGLE);
	if (!sc.user_only && !opt.raw)
		sc.ksyms = syms_kernel_load();
	sc.sf = stackframes_new(sc.syms, sc.ksyms, bpf_map__fd(skel->maps.stacks), stackcollector_sf_flags(&sc));
	stackframes_set_unwind_mode(sc.sf, unwindtables_mode_name(sc.unwind));
	if (opt.dwarf)
		run.dwarf = unwinddwarf_new(sc.syms);
	if (stackcollector_news_open(&sc, skel->obj) < 0 ||
	    ring_buffer__add(sc.notes, bpf_map__fd(skel->maps.events), on_event, NULL) < 0)
		marple_fatal(EXIT_DATA, "cannot set up the ring buffers");
	if (opt.timed && !(run.timed = timedsamples_new(skel->obj, sc.notes)))
		marple_fatal(EXIT_DATA, "cannot set up --timed");
	/* the counts are drained while sampling (--dwarf's records keep stack
	 * ids until the end: its maps are read then) */
	cap.table = (struct stacksbpf_table){ sc.sf, NULL };
	if (!opt.dwarf && !opt.raw &&
	    stackcollector_drain_counts(&sc, skel->obj, sc.sf, sc.notes, run.timed, &cap.table, &cap.timed_walk) < 0)
		exit(EXIT_DATA);
	if (!opt.raw && stackcollector_unwind_loaded(&sc, skel->obj) < 0)
		exit(EXIT_DATA);
	if (python)
		stackcollector_python(&sc, skel->obj);

	json_t *hdr = cap.hdr = section_header();

	if (!(cap.cc = cpuclock_attach(skel->progs.do_sample, opt.freq, (int)opt.cpu)))
		exit(EXIT_DATA);
	if (sc.children)
		cpuclock_target_tree(cap.cc);
	else if (sc.pid || sc.tid)
		cpuclock_target(cap.cc, sc.pid, sc.tid);
	else if (opt.idle)
		cpuclock_include_idle(cap.cc);
	/* one section, begun now (--raw's events follow its header as they
	 * come); in continuous mode each section's header is written with it */
	if (!sc.interval && stream_write_json(stdout, hdr) < 0)
		marple_fatal(EXIT_DATA, "cannot write the header");
	/* pid notes wake us at once; samples (no wakeup) are drained every 20 ms */
	struct stackcollector_run lifecycle = {
		.rb = sc.notes,
		.poll_ms = opt.dwarf || opt.raw || opt.timed ? 20 : 200,
		.stop = stop_sampling,
		.section = write_section,
	};
	int ran = stackcollector_run(&sc, &lifecycle);
	if (ran == STACKCOLLECTOR_READ_FAILED)
		exit(EXIT_DATA);
	if (ran < 0)
		marple_fatal(EXIT_DATA, "cannot write the section: %s", strerror(errno));
	json_decref(hdr);

	hashtab_free(cap.table.t);
	unwinddwarf_free(run.dwarf);
	timedsamples_walk_free(cap.timed_walk);
	timedsamples_free(run.timed);
	stackcollector_free(&sc);
	callstack_bpf__destroy(skel);
	marple_close_stdout();
	return EXIT_OK;
}
