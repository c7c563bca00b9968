/* marple-offcpu — off-CPU time by stack: how long threads spent blocked (or
 * waiting for a CPU), and where they were when they left it.
 *
 * At each sched_switch the thread leaving the CPU is stamped with the time
 * and its user and kernel stacks; when it is switched back in, the time it
 * was away is added (in microseconds) to that stack, in a kernel hash map.
 * --both adds on-CPU samples (cpu-clock) worth 1e6/HZ us each to the same
 * map, so one profile answers "where does the time go, waiting included".
 * Writes one stack section, weights in microseconds.
 *
 *   $ marple-offcpu -p 4242 10
 *   {"marple":1,"interface":"offcpu","datatype":"stack",...,"units":{"weight":"us"}}
 *   9998121#sleeper;_start;main;wait_here;clock_nanosleep;...;schedule
 *   {"trailer":1,...}
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector.h"
#include "cpuclock.h"
#include "offcpu.skel.h"
#include "stackframes.h"
#include "stream.h"
#include "syms.h"
#include "util.h"

static struct {
	int64_t pid, tid;
	bool user_only, kernel_only, delimit, annotate, both, no_demangle;
	int verbose;
	uint64_t min_block_us, storage, freq;
	uint32_t state_mask;
	const char *state;
} opt = { .pid = -1, .tid = -1, .min_block_us = 1, .storage = 16384, .freq = 99 };

enum { OPT_STORAGE = 256, OPT_MIN_BLOCK, OPT_STATE, OPT_BOTH, OPT_NO_DEMANGLE };

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [options] [duration]\n"
		"Off-CPU time by stack (sched_switch), written as a marple stack section in us.\n"
		"\n"
		"  -p, --pid PID          only this process\n"
		"  -t, --tid TID          only this thread\n"
		"  -U, --user-only        user stacks only\n"
		"  -K, --kernel-only      kernel stacks only\n"
		"  -d, --delimited        a \"-\" frame between user and kernel frames\n"
		"  -a, --annotations      kernel frames end in _[k]\n"
		"  -m, --min-block US     ignore blocks shorter than US microseconds (default 1)\n"
		"      --state STATES     only threads leaving the CPU in these states: letters\n"
		"                         R (preempted), S (sleeping), D (disk/uninterruptible),\n"
		"                         T (stopped), t (traced), P (parked); e.g. SD\n"
		"      --both             add on-CPU samples (cpu-clock, -F HZ) in the same unit\n"
		"  -F, --frequency HZ     on-CPU sampling rate for --both (default 99)\n"
		"      --stack-storage N  distinct stacks and keys kept (default 16384)\n"
		"      --no-demangle      keep C++/Rust names mangled\n"
		"  -v, --verbose          libbpf's messages (-vv)\n"
		"  -h, --help             this help\n"
		"\n"
		"duration: seconds or 500ms, 10s, 2m; without it, until SIGINT/SIGTERM.\n"
		"See marple-offcpu(1).\n",
		progname);
}

static uint32_t parse_state(const char *s)
{
	static const char letters[] = "RSDTtXZP";
	uint32_t m = 0;

	if (!*s)
		usage_error("--state needs at least one of the letters %s", letters);
	for (; *s; s++) {
		const char *p = strchr(letters, *s);
		if (!p)
			usage_error("--state: unknown state '%c' (use the letters %s)", *s, letters);
		m |= 1u << (p - letters);
	}
	return m;
}

static void parse_options(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },	{ "tid", required_argument, NULL, 't' },
		{ "user-only", no_argument, NULL, 'U' },	{ "kernel-only", no_argument, NULL, 'K' },
		{ "delimited", no_argument, NULL, 'd' },	{ "annotations", no_argument, NULL, 'a' },
		{ "min-block", required_argument, NULL, 'm' },	{ "state", required_argument, NULL, OPT_STATE },
		{ "both", no_argument, NULL, OPT_BOTH },	{ "frequency", required_argument, NULL, 'F' },
		{ "stack-storage", required_argument, NULL, OPT_STORAGE },
		{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
		{ "verbose", no_argument, NULL, 'v' },		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "p:t:UKdam:F:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': opt.pid = (int64_t)opt_u64("-p", optarg, 1, 0x3fffffff); break;
		case 't': opt.tid = (int64_t)opt_u64("-t", optarg, 1, 0x3fffffff); break;
		case 'U': opt.user_only = true; break;
		case 'K': opt.kernel_only = true; break;
		case 'd': opt.delimit = true; break;
		case 'a': opt.annotate = true; break;
		case 'm': opt.min_block_us = opt_u64("--min-block", optarg, 0, UINT64_MAX / 1000); break;
		case OPT_STATE: opt.state = optarg; opt.state_mask = parse_state(optarg); break;
		case OPT_BOTH: opt.both = true; break;
		case 'F': opt.freq = opt_u64("-F", optarg, 1, 100000); break;
		case OPT_STORAGE: opt.storage = opt_u64("--stack-storage", optarg, 64, 1 << 24); break;
		case OPT_NO_DEMANGLE: opt.no_demangle = true; break;
		case 'v': opt.verbose++; break;
		case 'h': usage(stdout); close_stdout(); exit(EXIT_OK);
		default: usage_try();
		}
	}
	if (opt.user_only && opt.kernel_only)
		usage_error("-U and -K exclude each other");
}

/* Open, configure and load; tp_btf first, raw_tp where it cannot load. */
static struct offcpu_bpf *load(const char **how)
{
	for (int raw = 0; raw < 2; raw++) {
		struct offcpu_bpf *skel = offcpu_bpf__open();
		int err;
		if (!skel)
			fatal(EXIT_DATA, "cannot open the BPF program: %s", strerror(errno));
		skel->rodata->targ_pid = opt.pid > 0 ? (uint32_t)opt.pid : 0;
		skel->rodata->targ_tid = opt.tid > 0 ? (uint32_t)opt.tid : 0;
		skel->rodata->want_user = !opt.kernel_only;
		skel->rodata->want_kernel = !opt.user_only;
		skel->rodata->state_mask = opt.state_mask;
		skel->rodata->min_block_ns = opt.min_block_us * 1000;
		skel->rodata->sample_us = 1000000 / opt.freq;
		bpf_map__set_max_entries(skel->maps.counts, (uint32_t)opt.storage);
		stacks_set_storage(skel->obj, (uint32_t)opt.storage);
		bpf_program__set_autoload(raw ? skel->progs.switch_btf : skel->progs.switch_raw, false);
		bpf_program__set_autoload(skel->progs.on_cpu_sample, opt.both);
		if ((err = offcpu_bpf__load(skel)) == 0) {
			*how = raw ? "raw_tp" : "tp_btf";
			return skel;
		}
		offcpu_bpf__destroy(skel);
		if (raw)
			fatal(EXIT_DATA, "cannot load the BPF program on sched_switch: %s", collector_strerror(err));
	}
	return NULL;
}

/* Threads still off the CPU at the end count up to the end (now). */
static void add_still_blocked(struct offcpu_bpf *skel, uint64_t now)
{
	int sfd = bpf_map__fd(skel->maps.start), cfd = bpf_map__fd(skel->maps.counts);
	uint32_t tid, next, *prev = NULL;
	struct { uint64_t ts; struct stack_key key; } s;
	uint64_t v;

	while (bpf_map_get_next_key(sfd, prev, &next) == 0) {
		tid = next;
		prev = &tid;
		if (bpf_map_lookup_elem(sfd, &tid, &s) != 0 || now < s.ts || now - s.ts < opt.min_block_us * 1000)
			continue;
		if (bpf_map_lookup_elem(cfd, &s.key, &v) != 0)
			v = 0;
		v += (now - s.ts) / 1000;
		bpf_map_update_elem(cfd, &s.key, &v, BPF_ANY);
	}
}

int main(int argc, char **argv)
{
	struct offcpu_bpf *skel;
	struct bpf_link *link, *exec_link;
	struct cpuclock *cc = NULL;
	struct ring_buffer *rb;
	struct ksyms *ksyms = NULL;
	struct syms_cache *syms;
	struct stackframes *sf;
	uint64_t duration, records, counters[STACKS_NCOUNTERS] = { 0 };
	const char *how;
	int err;

	marple_init(argc, argv);
	parse_options(argc, argv);
	duration = collector_duration(argc, argv, optind);
	collector_start(opt.verbose > 1);
	stacks_check_target(opt.pid, opt.tid);
	skel = load(&how);

	syms = syms_cache_new(opt.no_demangle ? 0 : SYMS_DEMANGLE);
	if (!opt.user_only)
		ksyms = ksyms_load();
	sf = stackframes_new(syms, ksyms, bpf_map__fd(skel->maps.stacks),
			     (opt.delimit ? SF_DELIMIT : 0) | (opt.annotate ? SF_ANNOTATE_KERNEL : 0));
	rb = stacks_pidnotes_open(skel->obj, syms, &exec_link);
	if (!rb)
		fatal(EXIT_DATA, "cannot set up the ring buffer");

	json_t *hdr = section_header_new("offcpu", DATATYPE_STACK);
	json_t *o = json_object();
	json_object_set_new(o, "min_block_us", json_integer((json_int_t)opt.min_block_us));
	json_object_set_new(o, "stacks", json_string(opt.user_only ? "user" : opt.kernel_only ? "kernel" : "both"));
	if (opt.state)
		json_object_set_new(o, "state", json_string(opt.state));
	if (opt.pid > 0)
		json_object_set_new(o, "pid", json_integer(opt.pid));
	if (opt.tid > 0)
		json_object_set_new(o, "tid", json_integer(opt.tid));
	json_object_set_new(o, "on_cpu", json_boolean(opt.both));
	if (opt.both)
		json_object_set_new(o, "frequency", json_integer((json_int_t)opt.freq));
	json_object_set_new(o, "tracepoint", json_string(how));
	json_object_set_new(hdr, "options", o);
	json_object_set_new(hdr, "units", json_pack("{s:s}", "weight", "us"));

	link = bpf_program__attach(strcmp(how, "raw_tp") ? skel->progs.switch_btf : skel->progs.switch_raw);
	if (!link)
		fatal(EXIT_DATA, "cannot attach to sched_switch: %s", strerror(errno));
	if (opt.both)
		cc = cpuclock_attach(skel->progs.on_cpu_sample, opt.freq, -1);
	collector_ready(duration);
	if (stream_write_json(stdout, hdr) < 0)
		fatal(EXIT_DATA, "cannot write the header");
	json_decref(hdr);
	while (!collector_should_stop()) {
		err = ring_buffer__poll(rb, collector_poll_timeout_ms(200));
		if (err < 0 && err != -EINTR)
			fatal(EXIT_DATA, "reading the ring buffer: %s", collector_strerror(err));
		syms_cache_refresh(syms);	/* libraries loaded since a snapshot */
	}
	uint64_t end = now_monotonic_ns();
	cpuclock_detach(cc);
	bpf_link__destroy(link);
	bpf_link__destroy(exec_link);
	ring_buffer__consume(rb);
	add_still_blocked(skel, end);

	records = stacks_write_counts(sf, bpf_map__fd(skel->maps.counts), stdout);
	stacks_read_counters(bpf_map__fd(skel->maps.stack_counters), counters);
	json_t *tr = section_trailer_new(records, 0, 0, collector_end_reason());
	uint64_t dropped = stacks_trailer_add(tr, counters, sf);
	json_object_set_new(tr, "dropped", json_integer((json_int_t)dropped));
	stream_write_json(stdout, tr);
	json_decref(tr);

	ring_buffer__free(rb);
	stackframes_free(sf);
	ksyms_free(ksyms);
	syms_cache_free(syms);
	offcpu_bpf__destroy(skel);
	close_stdout();
	return EXIT_OK;
}
