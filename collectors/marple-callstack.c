/* marple-callstack — sample stacks on all CPUs (or one process) with a
 * perf_event cpu-clock BPF program and write one stack section.
 *
 * Default: frame-pointer stacks (bpf_get_stackid) counted in a kernel hash
 * map, symbolized at the end.  --dwarf: user registers and the top of the user
 * stack go through a ring buffer and are unwound here with libunwind from the
 * binaries' .eh_frame (right for code built without frame pointers, as most of
 * Debian is).  --raw: one event per sample (time, cpu, pid, comm) instead.
 *
 *   $ marple-callstack -F 99 10
 *   {"marple":1,"interface":"callstack","datatype":"stack",...,"units":{"weight":"samples"}}
 *   97#python3;_start;__libc_start_main;main;PyRun_SimpleFile
 *   {"trailer":1,...,"records":1832,"lost":0,"dropped":0,"ended":"duration","stack_errors":{...}}
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "callstack.h"
#include "callstack.skel.h"
#include "collector.h"
#include "cpuclock.h"
#include "stackframes.h"
#include "stream.h"
#include "syms.h"
#include "unwind.h"
#include "util.h"

static struct {
	uint64_t freq;
	int64_t pid, tid, cpu;
	bool user_only, kernel_only, idle, delimit, annotate, raw, dwarf, no_demangle;
	int verbose;
	uint64_t storage;
} opt = { .freq = 99, .pid = -1, .tid = -1, .cpu = -1, .storage = 16384 };

enum { OPT_STORAGE = 256, OPT_RAW, OPT_DWARF, OPT_NO_DEMANGLE };

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [options] [duration]\n"
		"Sample stacks on every CPU with cpu-clock and write a marple stack section.\n"
		"\n"
		"  -F, --frequency HZ     samples per second per CPU (default 99)\n"
		"  -p, --pid PID          only this process\n"
		"  -t, --tid TID          only this thread\n"
		"  -C, --cpu CPU          only this CPU\n"
		"  -U, --user-only        user stacks only\n"
		"  -K, --kernel-only      kernel stacks only\n"
		"  -I, --include-idle     include the idle task (swapper)\n"
		"  -d, --delimited        a \"-\" frame between user and kernel frames\n"
		"  -a, --annotations      kernel frames end in _[k]\n"
		"      --dwarf            unwind user stacks from .eh_frame (libunwind); needed\n"
		"                         for code built without frame pointers\n"
		"      --raw              one event per sample (time, cpu, pid, comm), no stacks\n"
		"      --stack-storage N  distinct stacks and keys kept (default 16384)\n"
		"      --no-demangle      keep C++/Rust names mangled\n"
		"  -v, --verbose          statistics on stderr; -vv: libbpf's messages too\n"
		"  -h, --help             this help\n"
		"\n"
		"duration: seconds or 500ms, 10s, 2m; without it, until SIGINT/SIGTERM.\n"
		"See marple-callstack(1).\n",
		progname);
}

static void parse_options(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "frequency", required_argument, NULL, 'F' },	{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, 't' },	{ "cpu", required_argument, NULL, 'C' },
		{ "user-only", no_argument, NULL, 'U' },	{ "kernel-only", no_argument, NULL, 'K' },
		{ "include-idle", no_argument, NULL, 'I' },	{ "delimited", no_argument, NULL, 'd' },
		{ "annotations", no_argument, NULL, 'a' },	{ "dwarf", no_argument, NULL, OPT_DWARF },
		{ "raw", no_argument, NULL, OPT_RAW },		{ "stack-storage", required_argument, NULL, OPT_STORAGE },
		{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
		{ "verbose", no_argument, NULL, 'v' },		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "F:p:t:C:UKIdavh", longopts, NULL)) != -1) {
		switch (c) {
		case 'F': opt.freq = opt_u64("-F", optarg, 1, 100000); break;
		case 'p': opt.pid = (int64_t)opt_u64("-p", optarg, 1, 0x3fffffff); break;
		case 't': opt.tid = (int64_t)opt_u64("-t", optarg, 1, 0x3fffffff); break;
		case 'C': opt.cpu = (int64_t)opt_u64("-C", optarg, 0, 65535); break;
		case 'U': opt.user_only = true; break;
		case 'K': opt.kernel_only = true; break;
		case 'I': opt.idle = true; break;
		case 'd': opt.delimit = true; break;
		case 'a': opt.annotate = true; break;
		case OPT_DWARF: opt.dwarf = true; break;
		case OPT_RAW: opt.raw = true; break;
		case OPT_STORAGE: opt.storage = opt_u64("--stack-storage", optarg, 64, 1 << 24); break;
		case OPT_NO_DEMANGLE: opt.no_demangle = true; break;
		case 'v': opt.verbose++; break;
		case 'h': usage(stdout); close_stdout(); exit(EXIT_OK);
		default: usage_try();
		}
	}
	if (opt.user_only && opt.kernel_only)
		usage_error("-U and -K exclude each other");
	if (opt.raw && opt.dwarf)
		usage_error("--raw and --dwarf exclude each other");
}

static struct {
	struct unwinder *unw;
	struct syms_cache *syms;
	struct stacktab *tab;
	uint64_t records;
} run;

struct dwarf_key {
	uint32_t pid;
	int32_t kid;
	uint32_t exec_id;
	char comm[MARPLE_COMM_LEN];
	uint64_t ips[MARPLE_STACK_DEPTH];
};

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
		struct field f[3] = { { MSTR("comm"), mstr_c(comm) }, { MSTR("pid"), mstr_c(pid) },
				      { MSTR("tid"), mstr_c(tid) } };
		stream_write_event(stdout, r->time, MSTR("sample"), mstr_c(track), f, 3);
		run.records++;
	} else if (len >= sizeof(struct dwarf_sample) && r->type == REC_DWARF) {
		const struct dwarf_sample *d = data;
		struct dwarf_key k;
		memset(&k, 0, sizeof(k));
		k.pid = d->pid;
		k.kid = d->kern_stack_id;
		k.exec_id = d->exec_id;
		memcpy(k.comm, d->comm, MARPLE_COMM_LEN);
		int n = opt.kernel_only ? 0 : unwinder_unwind(run.unw, (pid_t)d->pid, d->exec_id, &d->user, k.ips,
							      MARPLE_STACK_DEPTH);
		stacktab_add(run.tab, &k, offsetof(struct dwarf_key, ips) + (size_t)n * sizeof(uint64_t), 1);
	}
	return 0;
}

static uint64_t write_dwarf_stacks(struct stackframes *sf)
{
	size_t pos = 0, len;
	const void *key;
	uint64_t w, records;
	struct stacktab *out = stacktab_new();

	while (stacktab_next(run.tab, &pos, &key, &len, &w)) {
		struct dwarf_key k;
		memset(&k, 0, sizeof(k));
		memcpy(&k, key, len);
		size_t n = (len - offsetof(struct dwarf_key, ips)) / sizeof(uint64_t);
		stackframes_begin(sf, k.comm);
		stackframes_user_ips_exec(sf, (pid_t)k.pid, k.exec_id, k.ips, n);
		stackframes_kernel_id(sf, k.kid);
		stackframes_collect(sf, out, w);
	}
	records = stacktab_write_frames(out, stdout);
	stacktab_free(out);
	return records;
}

int main(int argc, char **argv)
{
	struct callstack_bpf *skel;
	struct cpuclock *cc;
	struct ring_buffer *rb = NULL;
	struct bpf_link *exec_link;
	struct ksyms *ksyms = NULL;
	struct stackframes *sf = NULL;
	uint64_t duration, counters[STACKS_NCOUNTERS] = { 0 };
	int err;

	marple_init(argc, argv);
	parse_options(argc, argv);
	duration = collector_duration(argc, argv, optind);
	collector_start(opt.verbose > 1);
	stacks_check_target(opt.pid, opt.tid);

	skel = callstack_bpf__open();
	if (!skel)
		fatal(EXIT_DATA, "cannot open the BPF program: %s", strerror(errno));
	skel->rodata->targ_pid = opt.pid > 0 ? (uint32_t)opt.pid : 0;
	skel->rodata->targ_tid = opt.tid > 0 ? (uint32_t)opt.tid : 0;
	skel->rodata->want_user = !opt.kernel_only;
	skel->rodata->want_kernel = !opt.user_only;
	skel->rodata->include_idle = opt.idle;
	skel->rodata->raw_mode = opt.raw;
	skel->rodata->dwarf_mode = opt.dwarf;
	bpf_map__set_max_entries(skel->maps.counts, (uint32_t)opt.storage);
	stacks_set_storage(skel->obj, (uint32_t)opt.storage);
	/* dwarf: ~16.5 KB a sample; room for a quarter second of samples on every CPU */
	uint64_t rbsize = opt.dwarf ? 16u << 20 : opt.raw ? 4u << 20 : 4096;
	if (opt.dwarf && opt.freq * (uint64_t)libbpf_num_possible_cpus() > 1000)
		rbsize = 64u << 20;
	bpf_map__set_max_entries(skel->maps.events, (uint32_t)rbsize);
	if ((err = callstack_bpf__load(skel)))
		fatal(EXIT_DATA, "cannot load the BPF program: %s", collector_strerror(err));

	run.syms = syms_cache_new(opt.no_demangle ? 0 : SYMS_DEMANGLE);
	if (!opt.user_only && !opt.raw)
		ksyms = ksyms_load();
	sf = stackframes_new(run.syms, ksyms, bpf_map__fd(skel->maps.stacks),
			     (opt.delimit ? SF_DELIMIT : 0) | (opt.annotate ? SF_ANNOTATE_KERNEL : 0));
	if (opt.dwarf) {
		run.unw = unwinder_new(run.syms);
		run.tab = stacktab_new();
	}
	rb = stacks_pidnotes_open(skel->obj, run.syms, &exec_link);
	if (!rb || ring_buffer__add(rb, bpf_map__fd(skel->maps.events), on_event, NULL) < 0)
		fatal(EXIT_DATA, "cannot set up the ring buffers");

	json_t *hdr = section_header_new("callstack", opt.raw ? DATATYPE_EVENT : DATATYPE_STACK);
	json_t *o = json_object();
	json_object_set_new(o, "frequency", json_integer((json_int_t)opt.freq));
	json_object_set_new(o, "unwind", json_string(opt.dwarf ? "dwarf" : "frame-pointer"));
	json_object_set_new(o, "stacks", json_string(opt.user_only ? "user" : opt.kernel_only ? "kernel" : "both"));
	if (opt.pid > 0)
		json_object_set_new(o, "pid", json_integer(opt.pid));
	if (opt.tid > 0)
		json_object_set_new(o, "tid", json_integer(opt.tid));
	if (opt.cpu >= 0)
		json_object_set_new(o, "cpu", json_integer(opt.cpu));
	json_object_set_new(o, "include_idle", json_boolean(opt.idle));
	json_object_set_new(hdr, "options", o);
	if (opt.raw) {
		json_object_set_new(hdr, "units", json_pack("{s:s}", "time", "ns"));
		json_object_set_new(hdr, "track", json_string("cpu"));
	} else {
		json_object_set_new(hdr, "units", json_pack("{s:s}", "weight", "samples"));
	}

	cc = cpuclock_attach(skel->progs.do_sample, opt.freq, (int)opt.cpu);
	collector_ready(duration);
	if (stream_write_json(stdout, hdr) < 0)
		fatal(EXIT_DATA, "cannot write the header");
	json_decref(hdr);
	while (!collector_should_stop()) {
		/* pid notes wake us at once; samples (no wakeup) are drained every 20 ms */
		err = ring_buffer__poll(rb, collector_poll_timeout_ms(opt.dwarf || opt.raw ? 20 : 200));
		if (err >= 0)
			err = ring_buffer__consume(rb);
		if (err < 0 && err != -EINTR)
			fatal(EXIT_DATA, "reading the ring buffers: %s", collector_strerror(err));
		syms_cache_refresh(run.syms);	/* libraries loaded since a snapshot */
	}
	cpuclock_detach(cc);
	bpf_link__destroy(exec_link);
	ring_buffer__consume(rb);

	if (opt.dwarf)
		run.records = write_dwarf_stacks(sf);
	else if (!opt.raw)
		run.records = stacks_write_counts(sf, bpf_map__fd(skel->maps.counts), stdout);
	stacks_read_counters(bpf_map__fd(skel->maps.stack_counters), counters);
	json_t *tr = section_trailer_new(run.records, 0, 0, collector_end_reason());
	uint64_t dropped = stacks_trailer_add(tr, counters, opt.raw ? NULL : sf);
	json_object_set_new(tr, "dropped", json_integer((json_int_t)dropped));
	json_object_set_new(tr, "samples", json_integer((json_int_t)counters[STACKS_SAMPLES]));
	if (opt.dwarf) {
		struct unwinder_stats us;
		unwinder_stats(run.unw, &us);
		json_object_set_new(tr, "unwind", json_pack("{s:I,s:I,s:I,s:I}", "stacks", (json_int_t)us.stacks,
							    "frames", (json_int_t)us.frames, "stopped_no_info",
							    (json_int_t)us.stopped_no_info, "us",
							    (json_int_t)(us.ns / 1000)));
		if (opt.verbose)
			warnmsg("unwound %llu stacks, %llu frames, in %.1f ms (%.1f us a stack)",
				(unsigned long long)us.stacks, (unsigned long long)us.frames, us.ns / 1e6,
				us.stacks ? us.ns / 1e3 / us.stacks : 0.0);
	}
	stream_write_json(stdout, tr);
	json_decref(tr);

	ring_buffer__free(rb);
	stackframes_free(sf);
	stacktab_free(run.tab);
	unwinder_free(run.unw);
	ksyms_free(ksyms);
	syms_cache_free(run.syms);
	callstack_bpf__destroy(skel);
	close_stdout();
	return EXIT_OK;
}
