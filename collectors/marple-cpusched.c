/* marple-cpusched — every context switch on every CPU, as marple events.
 *
 * Traces sched:sched_switch (BTF tracepoint, raw tracepoint if that does not
 * attach) and, with --wakeups, sched:sched_wakeup.  Each CPU writes into its
 * own BPF ring buffer; user space merges the buffers in time order and writes
 * one event section (marple-format(5)) to stdout:
 *
 *   $ sudo marple-cpusched 10 | marple-cpel > out.cpel
 *   {"marple":1,"interface":"cpusched","datatype":"event","track":"cpu",...}
 *   81723361230,sched_switch,cpu1,comm=swapper/1,pid=0,prev_comm=bash,prev_pid=311,prev_state=S,next_comm=swapper/1,next_pid=0,next_prio=120
 *   {"trailer":1,"records":1,"lost":0,"lost_per_cpu":[0,0],...}
 *
 * Events lost because a ring buffer was full are counted per CPU, printed on
 * stderr and written to the trailer.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector.h"
#include "corebtf.h"
#include "cpusched.h"
#include "cpusched.skel.h"
#include "options.h"
#include "stream.h"
#include "uprobes.h"
#include "util.h"

/* Events younger than this (ns) are held back when merging, in case another
 * CPU's ring still holds an older one that was not committed yet. */
#define MERGE_SLACK_NS 5000000ull

static struct {
	int verbose;
	int wakeups;
	int force_raw;
	int perfbuf;
	uint64_t buffer_kib;
	uint32_t pid;
	uint64_t interval;	/* --every, ns; 0: one section */
} opt = { .buffer_kib = 8192 };

enum { O_RAW_TP = 256, O_PERF_BUFFER, O_EVERY };
static const struct options_entry options[] = {
	{ 'p', "pid", "PID", "only switches into or out of process PID's threads\n(and their wake-ups)" },
	{ 'w', "wakeups", NULL, "also trace sched_wakeup (run-queue latency)" },
	{ 'b', "buffer", "KIB", "ring buffer size per CPU in KiB (default 8192;\nrounded up to a power of two)" },
	{ O_RAW_TP, "raw-tp", NULL, "use the raw tracepoint even if the BTF one works" },
	{ O_PERF_BUFFER, "perf-buffer", NULL, "per-CPU perf buffers instead of BPF ring buffers" },
	{ O_EVERY, "every", "DURATION", "continuous: one whole section (header, events, trailer)\n"
					      "every DURATION (10s, 1m...), cut at that instant" },
	{ 'v', "verbose", NULL, COLLECTOR_VERBOSE_HELP },
	OPTIONS_DESCRIBE("kind=collector\tsections=cpusched:event:g2\tevery=yes"
		"\tmeasures=context switches on every CPU: which task ran when (events)"),
	OPTIONS_HELP,
	{ 0 }
};

static const struct options_help help = {
	.synopsis = "[-p PID] [-w] [-b KIB] [--every DURATION] [-v] [--raw-tp] [--perf-buffer]\n"
		    "       [DURATION]",
	.about = "Trace every context switch on every CPU and write marple events.\n",
	.after = "DURATION: seconds or 500ms/10s/2m; default: until SIGINT/SIGTERM.\n"
	         "Needs root.  Exit: 0 ok, 1 error, 2 usage.  See marple-cpusched(1).\n",
};

/* ---- per-CPU queues and their time-ordered merge ---- */

struct queue {
	struct cpusched_event *ev;
	size_t head, len, cap;
};

static struct queue *queues;
static int ncpus;
static uint64_t last_emitted, out_of_order, records;

static int on_event(void *ctx, void *data, size_t size)
{
	struct queue *q = ctx;
	const struct cpusched_event *e = data;

	if (size < sizeof(*e))
		return 0;
	if (q->head > 0 && q->head == q->len)
		q->head = q->len = 0;
	if (q->len == q->cap) {
		if (q->head > 0) {
			memmove(q->ev, q->ev + q->head, (q->len - q->head) * sizeof(*q->ev));
			q->len -= q->head;
			q->head = 0;
		}
		if (q->len == q->cap)
			q->ev = marple_grow(q->ev, &q->cap, q->len + 1, sizeof(*q->ev));
	}
	/* Records of one CPU are nearly in order (an interrupt's wakeup can
	 * overtake a switch being written); insertion keeps them sorted. */
	size_t i = q->len++;
	while (i > q->head && q->ev[i - 1].time > e->time) {
		q->ev[i] = q->ev[i - 1];
		i--;
	}
	q->ev[i] = *e;
	return 0;
}

static void on_pb_sample(void *ctx, int cpu, void *data, __u32 size)
{
	/* perf buffer records are only 4-byte aligned: copy before reading
	 * (UBSan: misaligned load of struct cpusched_event). */
	struct cpusched_event ev;

	if (cpu >= 0 && cpu < ncpus && size >= sizeof(ev)) {
		memcpy(&ev, data, sizeof(ev));
		on_event(&queues[cpu], &ev, sizeof(ev));
	}
}

/* ---- fast text output: one buffer, no printf per field ---- */

static char obuf[1 << 16];
static size_t olen;

static void oflush(void)
{
	if (olen && fwrite(obuf, 1, olen, stdout) != olen) {
		marple_close_stdout();	/* reports the write error and exits */
		exit(EXIT_DATA);
	}
	olen = 0;
}

static inline void put(const char *s, size_t n)
{
	memcpy(obuf + olen, s, n);
	olen += n;
}
#define PUTLIT(s) put(s, sizeof(s) - 1)

static inline void put_u64(uint64_t v)
{
	char tmp[24];
	int n = 0;
	do {
		tmp[sizeof(tmp) - 1 - n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(tmp + sizeof(tmp) - n, (size_t)n);
}

static inline void put_i64(int64_t v)
{
	if (v < 0) {
		obuf[olen++] = '-';
		put_u64((uint64_t)-v);
	} else {
		put_u64((uint64_t)v);
	}
}

/* A comm, escaped as marple-format(5) asks; plain ASCII is copied as is. */
static void put_comm(const char *c)
{
	size_t n = strnlen(c, CPUSCHED_COMM_LEN);
	for (size_t i = 0; i < n; i++) {
		unsigned char b = (unsigned char)c[i];
		if (b < 0x20 || b >= 0x7f || b == '%' || b == ',' || b == ';' || b == '#') {
			char *s = escape_dup(c, n);
			put(s, strlen(s));
			free(s);
			return;
		}
	}
	put(c, n);
}

static void put_state(const struct cpusched_event *e)
{
	static const char letters[] = "SDTtXZP";
	unsigned int s = e->prev_state & 0x7f;

	if (e->preempt || s == 0) {
		PUTLIT("R");
		if (e->preempt)
			PUTLIT("+");
		return;
	}
	if (s == 0x2 && (e->prev_state & 0x400)) {	/* TASK_IDLE */
		PUTLIT("I");
		return;
	}
	for (int b = 0; b < 7; b++)
		if (s & (1u << b)) {
			obuf[olen++] = letters[b];
			return;
		}
}

static void format_event(const struct cpusched_event *e)
{
	if (olen > sizeof(obuf) - 512)
		oflush();
	put_u64(e->time);
	if (e->type == CPUSCHED_SWITCH)
		PUTLIT(",sched_switch,cpu");
	else
		PUTLIT(",sched_wakeup,cpu");
	put_u64(e->cpu);
	PUTLIT(",comm=");
	put_comm(e->next_comm);
	PUTLIT(",pid=");
	put_u64(e->next_pid);
	if (e->type == CPUSCHED_SWITCH) {
		PUTLIT(",prev_comm=");
		put_comm(e->prev_comm);
		PUTLIT(",prev_pid=");
		put_u64(e->prev_pid);
		PUTLIT(",prev_state=");
		put_state(e);
		PUTLIT(",next_comm=");
		put_comm(e->next_comm);
		PUTLIT(",next_pid=");
		put_u64(e->next_pid);
		PUTLIT(",next_prio=");
		put_i64(e->next_prio);
		PUTLIT(",next_tgid=");
		put_u64(e->next_tgid);
	} else {
		PUTLIT(",prio=");
		put_i64(e->next_prio);
		PUTLIT(",target_cpu=");
		put_u64(e->target_cpu);
		PUTLIT(",waker_comm=");
		put_comm(e->prev_comm);
		PUTLIT(",waker_pid=");
		put_u64(e->prev_pid);
		PUTLIT(",tgid=");
		put_u64(e->next_tgid);
	}
	obuf[olen++] = '\n';
	if (e->time < last_emitted)
		out_of_order++;
	else
		last_emitted = e->time;
	records++;
}

/* Write every queued event older than cutoff, oldest first across CPUs. */
static void merge_until(uint64_t cutoff)
{
	for (;;) {
		struct queue *best = NULL;
		for (int c = 0; c < ncpus; c++) {
			struct queue *q = &queues[c];
			if (q->head < q->len && q->ev[q->head].time < cutoff &&
			    (!best || q->ev[q->head].time < best->ev[best->head].time))
				best = q;
		}
		if (!best)
			break;
		/* Take a run from the best queue while it stays the oldest. */
		uint64_t limit = cutoff;
		for (int c = 0; c < ncpus; c++) {
			struct queue *q = &queues[c];
			if (q != best && q->head < q->len && q->ev[q->head].time < limit)
				limit = q->ev[q->head].time + 1;
		}
		while (best->head < best->len && best->ev[best->head].time < limit)
			format_event(&best->ev[best->head++]);
	}
}

/* ---- BPF setup ---- */

static int *ring_fds;

/* Open, load and attach with tp_btf (raw == 0) or raw_tp programs. */
static struct cpusched_bpf *setup(int raw, uint32_t ring_bytes, const char **why)
{
	struct cpusched_bpf *skel = cpusched_bpf__open_opts(corebtf_opts(cpusched_bpf__elf_bytes));
	int err;

	*why = NULL;
	if (!skel) {
		*why = "cannot open the BPF object";
		return NULL;
	}
	bpf_program__set_autoload(skel->progs.switch_btf, !raw);
	bpf_program__set_autoload(skel->progs.switch_raw, raw);
	bpf_program__set_autoload(skel->progs.wakeup_btf, !raw && opt.wakeups);
	bpf_program__set_autoload(skel->progs.wakeup_raw, raw && opt.wakeups);
	skel->rodata->wakeup_bytes = ring_bytes / 8;
	skel->rodata->perfbuf = opt.perfbuf;
	skel->rodata->targ_tgid = opt.pid;
	if (opt.perfbuf)
		ring_bytes = (uint32_t)getpagesize();	/* the rings stay unused */
	bpf_map__set_max_entries(skel->maps.rings, (uint32_t)ncpus);
	for (int c = 0; c < ncpus; c++)
		if (ring_fds[c] < 0)
			ring_fds[c] = bpf_map_create(BPF_MAP_TYPE_RINGBUF, NULL, 0, 0, ring_bytes, NULL);
	if (ring_fds[ncpus - 1] < 0) {
		*why = "cannot create the ring buffers (try a smaller -b)";
		cpusched_bpf__destroy(skel);
		return NULL;
	}
	/* The inner map template: libbpf 1.1 gives no handle on the one it
	 * would make from the BPF object's definition. */
	bpf_map__set_inner_map_fd(skel->maps.rings, ring_fds[0]);
	err = cpusched_bpf__load(skel);
	if (err) {
		*why = collector_strerror(err);
		cpusched_bpf__destroy(skel);
		return NULL;
	}
	for (int c = 0; c < ncpus; c++) {
		__u32 key = (__u32)c;
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.rings), &key, &ring_fds[c], BPF_ANY)) {
			*why = "cannot install a ring buffer";
			cpusched_bpf__destroy(skel);
			return NULL;
		}
	}
	err = cpusched_bpf__attach(skel);
	if (err) {
		*why = collector_strerror(err);
		cpusched_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

static uint32_t ring_size(uint64_t kib)
{
	uint64_t bytes = kib * 1024, r = (uint64_t)getpagesize();
	while (r < bytes)
		r <<= 1;
	return (uint32_t)r;
}

static uint64_t parse_options(int argc, char **argv)
{
	int c;

	while ((c = options_getopt(options, argc, argv)) != -1) {
		switch (c) {
		case 'p': opt.pid = (uint32_t)marple_opt_u64("-p", optarg, 1, 4194304); break;
		case 'w': opt.wakeups = 1; break;
		case 'b': opt.buffer_kib = marple_opt_u64("-b", optarg, 4, 1u << 20); break;
		case O_RAW_TP: opt.force_raw = 1; break;
		case O_PERF_BUFFER: opt.perfbuf = 1; break;
		case O_EVERY:
			if (marple_parse_duration_ns(optarg, &opt.interval) < 0 || opt.interval < 100000000ull)
				marple_usage_error("--every: '%s' is not a duration of 100ms or more (e.g. 10s, 1m)",
						   optarg);
			break;
		case 'v': opt.verbose++; break;
		case 'h': options_help(stdout, options, &help); exit(EXIT_OK);
		default: marple_usage_try();
		}
	}
	uint64_t duration = collector_duration(argc, argv, optind);
	if (opt.pid && uprobes_require_process((pid_t)opt.pid) != 0)
		exit(EXIT_DATA);
	return duration;
}

/* sched_switch by tp_btf, else by raw_tp; *attach says which.  NULL + message. */
static struct cpusched_bpf *attach_tracing(uint32_t ring_bytes, const char **attach)
{
	struct cpusched_bpf *skel = NULL;
	const char *why = NULL;

	*attach = "tp_btf";
	if (!opt.force_raw)
		skel = setup(0, ring_bytes, &why);
	if (!skel) {
		if (why && opt.verbose)
			marple_warn("tp_btf sched_switch did not attach (%s); trying raw_tp", why);
		*attach = "raw_tp";
		skel = setup(1, ring_bytes, &why);
	}
	if (!skel) {
		marple_warn("cannot trace sched_switch: %s", why ? why : "unknown error");
		return NULL;
	}
	if (opt.verbose)
		marple_warn("sched_switch%s attached via %s; %d %s of %u KiB",
			opt.wakeups ? " and sched_wakeup" : "", *attach, ncpus,
			opt.perfbuf ? "perf buffers" : "ring buffers", ring_bytes / 1024);
	return skel;
}

/* The per-CPU perf buffers (*pb) or ring buffers (*rb) to read; 0 or -1 + message. */
static int open_buffers(struct cpusched_bpf *skel, struct ring_buffer **rb, struct perf_buffer **pb)
{
	if (opt.perfbuf) {
		size_t pages = 1;
		while (pages * (size_t)getpagesize() < opt.buffer_kib * 1024)
			pages <<= 1;
		*pb = perf_buffer__new(bpf_map__fd(skel->maps.pb), pages, on_pb_sample, NULL, NULL, NULL);
		if (!*pb) {
			marple_warn("cannot open the perf buffers: %s", strerror(errno));
			return -1;
		}
		return 0;
	}
	*rb = ring_buffer__new(ring_fds[0], on_event, &queues[0], NULL);
	if (!*rb) {
		marple_warn("cannot open the ring buffers: %s", strerror(errno));
		return -1;
	}
	for (int i = 1; i < ncpus; i++)
		if (ring_buffer__add(*rb, ring_fds[i], on_event, &queues[i]) < 0) {
			marple_warn("cannot open the ring buffer of cpu%d: %s", i, strerror(errno));
			return -1;
		}
	return 0;
}

static void describe_header(json_t *hdr, uint64_t duration, uint32_t ring_bytes, const char *attach)
{
	json_object_set_new(hdr, "units", json_pack("{s:s}", "time", "ns"));
	json_object_set_new(hdr, "track", json_string("cpu"));
	json_object_set_new(hdr, "labels", json_pack("{s:s,s:s}", "track", "CPU", "datum", "task switched in"));
	json_t *o = json_pack("{s:b,s:I,s:s,s:s}", "wakeups", opt.wakeups, "buffer_kib",
			      (json_int_t)(ring_bytes / 1024), "attach", attach, "buffers", opt.perfbuf ? "perf" : "ringbuf");
	if (duration)
		json_object_set_new(o, "duration_ns", json_integer((json_int_t)duration));
	if (opt.pid)
		json_object_set_new(o, "pid", json_integer(opt.pid));
	if (opt.interval)
		json_object_set_new(o, "interval_ns", json_integer((json_int_t)opt.interval));
	json_object_set_new(hdr, "options", o);
	json_object_set_new(hdr, "ncpus", json_integer(ncpus));
}

static int write_trailer(struct cpusched_bpf *skel, uint64_t cut);

/* Continuous mode: the section's header (its start_ns the previous one's
 * end) and where the current section is to be cut. */
static json_t *section_hdr;
static uint64_t section_start, next_cut;

static int write_header(uint64_t start, uint64_t wall)
{
	section_start = start;
	json_object_set_new(section_hdr, "start_ns", json_integer((json_int_t)start));
	json_object_set_new(section_hdr, "wall_ns", json_integer((json_int_t)wall));
	return stream_write_json(stdout, section_hdr);
}

/* --every: a section ends at its cut once every CPU's events before it
 * are in (MERGE_SLACK_NS later): those are written, then its trailer, then
 * the next header; later events wait in the queues for the next section. */
static int cut_due_sections(struct cpusched_bpf *skel, uint64_t now)
{
	while (opt.interval && now >= next_cut + MERGE_SLACK_NS) {
		uint64_t cut = next_cut;
		merge_until(cut);
		oflush();
		if (write_trailer(skel, cut) < 0 || write_header(cut, collector_cut_wall_ns(cut, opt.interval)) < 0 || fflush(stdout) != 0)
			return -1;
		next_cut = collector_aligned_cut(cut + opt.interval, opt.interval);
	}
	return 0;
}

/* Read and merge the buffers until the end, then detach and drain them. */
static int capture(struct cpusched_bpf *skel, struct ring_buffer *rb, struct perf_buffer *pb)
{
	for (;;) {
		int stop = collector_should_stop();
		int tmo = stop ? 0 : collector_poll_timeout_ms(50);
		int err = rb ? ring_buffer__poll(rb, tmo) : perf_buffer__poll(pb, tmo);
		if (err < 0 && err != -EINTR) {
			marple_warn("reading the ring buffers: %s", collector_strerror(err));
			return -1;
		}
		uint64_t t0 = marple_now_monotonic_ns();
		if (rb)
			ring_buffer__consume(rb);
		else
			perf_buffer__consume(pb);
		if (!stop && cut_due_sections(skel, t0) < 0)
			return -1;
		merge_until(stop ? UINT64_MAX : t0 - MERGE_SLACK_NS);
		oflush();
		if (stop)
			break;
	}
	/* Detach first so that the final drain sees everything. */
	cpusched_bpf__detach(skel);
	if (rb)
		ring_buffer__consume(rb);
	else
		perf_buffer__consume(pb);
	merge_until(UINT64_MAX);
	oflush();
	return 0;
}

/* The trailer (cut: a section of --every ending there, 0: the last), with
 * the events lost per CPU in the section; then what was lost on stderr. */
static int write_trailer(struct cpusched_bpf *skel, uint64_t cut)
{
	static uint64_t *lost_before;
	uint64_t *lost_cpu = marple_calloc((size_t)ncpus, sizeof(*lost_cpu)), lost_total = 0;
	__u32 zero = 0;

	if (!lost_before)
		lost_before = marple_calloc((size_t)ncpus, sizeof(*lost_before));
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.lost), &zero, lost_cpu) == 0)
		for (int i = 0; i < ncpus; i++) {
			uint64_t all = lost_cpu[i];
			lost_cpu[i] = all >= lost_before[i] ? all - lost_before[i] : 0;
			lost_before[i] = all;
			lost_total += lost_cpu[i];
		}
	json_t *trl = stream_section_trailer_new(records, lost_total, 0, cut ? "interval" : collector_end_reason());
	json_t *arr = json_array();
	if (cut)
		json_object_set_new(trl, "end_ns", json_integer((json_int_t)cut));
	for (int i = 0; i < ncpus; i++)
		json_array_append_new(arr, json_integer((json_int_t)lost_cpu[i]));
	json_object_set_new(trl, "lost_per_cpu", arr);
	json_object_set_new(trl, "out_of_order", json_integer((json_int_t)out_of_order));
	collector_memory_trailer(trl);
	corebtf_trailer(trl);
	int rc = stream_write_json(stdout, trl);
	if (rc == 0 && opt.verbose)
		collector_verbose_trailer(trl);
	json_decref(trl);
	if (rc < 0) {
		free(lost_cpu);
		return -1;
	}
	if (lost_total) {
		char msg[4096];
		size_t n = 0;
		for (int i = 0; i < ncpus && n < sizeof(msg) - 64; i++)
			if (lost_cpu[i])
				n += (size_t)snprintf(msg + n, sizeof(msg) - n, "%scpu%d: %llu", n ? ", " : "", i,
						      (unsigned long long)lost_cpu[i]);
		marple_warn("lost %llu events (ring buffer full; %s); try a larger -b",
			(unsigned long long)lost_total, msg);
	}
	free(lost_cpu);
	if (out_of_order)
		marple_warn("%llu events were written out of time order (committed more than %llu ms late)",
			(unsigned long long)out_of_order, MERGE_SLACK_NS / 1000000);
	records = 0;
	out_of_order = 0;
	return 0;
}

int main(int argc, char **argv)
{
	struct cpusched_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	struct perf_buffer *pb = NULL;
	const char *attach;
	int status = EXIT_DATA;

	marple_init(argc, argv);
	uint64_t duration = parse_options(argc, argv);
	if (collector_start(opt.verbose > 1) < 0)
		return EXIT_DATA;

	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0)
		marple_fatal(EXIT_DATA, "cannot count the CPUs: %s", collector_strerror(ncpus));
	queues = marple_calloc((size_t)ncpus, sizeof(*queues));
	ring_fds = marple_malloc((size_t)ncpus * sizeof(int));
	for (int i = 0; i < ncpus; i++)
		ring_fds[i] = -1;
	uint32_t ring_bytes = ring_size(opt.buffer_kib);

	/* The header's start time comes before the first event can. */
	json_t *hdr = stream_section_header_new("cpusched", DATATYPE_EVENT);
	if (!(skel = attach_tracing(ring_bytes, &attach)) || open_buffers(skel, &rb, &pb) < 0)
		goto cleanup;
	describe_header(hdr, duration, ring_bytes, attach);
	section_hdr = hdr;
	json_int_t start = json_integer_value(json_object_get(hdr, "start_ns"));
	if (write_header((uint64_t)start, (uint64_t)json_integer_value(json_object_get(hdr, "wall_ns"))) < 0)
		goto cleanup;
	if (opt.interval)	/* on the wall clock's multiples, as every collector's */
		next_cut = collector_aligned_cut((uint64_t)start + opt.interval / 2, opt.interval);
	if (opt.pid)
		collector_watch_target((pid_t)opt.pid, 0);
	collector_ready(duration);
	if (capture(skel, rb, pb) < 0 || write_trailer(skel, 0) < 0)
		goto cleanup;
	status = EXIT_OK;
cleanup:
	ring_buffer__free(rb);
	perf_buffer__free(pb);
	cpusched_bpf__destroy(skel);
	for (int i = 0; ring_fds && i < ncpus; i++)
		if (ring_fds[i] >= 0)
			close(ring_fds[i]);
	json_decref(hdr);
	for (int i = 0; queues && i < ncpus; i++)
		free(queues[i].ev);
	free(queues);
	free(ring_fds);
	marple_close_stdout();
	return status;
}
