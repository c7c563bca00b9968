/* marple-disklat — block I/O latency, one marple point per request.
 *
 * Traces block:block_rq_issue and block:block_rq_complete (BTF tracepoints,
 * raw tracepoints if those do not attach) and writes one point section
 * (marple-format(5)): x = completion time in seconds since the start, y = the
 * latency from issue to completion in milliseconds, info = the process that
 * issued the request:
 *
 *   $ sudo marple-disklat 10 | marple-heatmap > disk.svg
 *   {"marple":1,"interface":"disklat","datatype":"point","units":{"x":"s","y":"ms"},...}
 *   1.25034,0.212,dd,comm=dd,pid=4121,dev=vda,bytes=4096,rw=R
 *
 * The process is the one that submitted the request (block_io_start, kernel
 * 6.5+; else the one that inserted it in the queue, block_rq_insert, or the
 * task current at its first issue, a request put back, block_rq_requeue,
 * keeping it): for buffered writes that is often a kernel writeback thread,
 * not the program that wrote.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "blockdev.h"
#include "bpfmap.h"
#include "collector.h"
#include "corebtf.h"
#include "disklat.h"
#include "disklat.skel.h"
#include "eventcollector.h"
#include "options.h"
#include "selffilter.h"
#include "stream.h"
#include "uprobes.h"
#include "util.h"

static struct {
	int verbose;
	int force_raw;
	int include_self;
	uint32_t pid;
	const char *dev;
	unsigned int major, minor;
} opt;

static uint64_t start_ns, records;
static FILE *out;

enum { O_RAW_TP = 256 };
static const struct options_entry options[] = {
	{ 'p', "pid", "PID", "only I/O submitted by process PID" },
	{ 'd', "disk", "DISK", "only this disk's I/O: a name (vda, sda; a partition\nmeans its disk) or MAJOR:MINOR" },
	{ O_RAW_TP, "raw-tp", NULL, "use raw tracepoints even if the BTF ones work" },
	{ SELF_OPTION_KEY, "include-self", NULL, "I/O of marple's own processes too (left out by default)" },
	{ 'v', "verbose", NULL, COLLECTOR_VERBOSE_HELP },
	OPTIONS_DESCRIBE("kind=collector\tsections=disklat:point:heatmap\tevery=no"
		"\tmeasures=disk I/O latency: each block request, issue to completion (ms)"),
	OPTIONS_HELP,
	{ 0 }
};

static const struct options_help help = {
	.synopsis = "[-p PID] [-d DISK] [-v] [--raw-tp] [--include-self] [DURATION]",
	.about = "Trace block I/O and write one point per request: completion time (s),\n"
	         "latency (ms), process, device, bytes, read/write.\n",
	.after = "DURATION: seconds or 500ms/10s/2m; default: until SIGINT/SIGTERM.\n"
	         "No --every (continuous mode): one section per run.\n"
	         "Needs root.  Exit: 0 ok, 1 error, 2 usage.  See marple-disklat(1).\n",
};

/* "vda" for 254:0, from sysfs; "MAJ:MIN" when unknown.  Small cache. */
static const char *dev_name(unsigned int major, unsigned int minor)
{
	static struct { unsigned int major, minor; char name[64]; } cache[64];
	static size_t n;
	for (size_t i = 0; i < n; i++)
		if (cache[i].major == major && cache[i].minor == minor)
			return cache[i].name;
	size_t slot = n < 64 ? n++ : 63;
	cache[slot].major = major;
	cache[slot].minor = minor;
	snprintf(cache[slot].name, sizeof(cache[slot].name), "%u:%u", major, minor);
	char path[128], line[256];
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/uevent", major, minor);
	FILE *f = fopen(path, "r");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (strncmp(line, "DEVNAME=", 8) == 0) {
				line[strcspn(line, "\n")] = 0;
				snprintf(cache[slot].name, sizeof(cache[slot].name), "%.63s", line + 8);
			}
		fclose(f);
	}
	return cache[slot].name;
}

static const char *op_name(unsigned int op)
{
	switch (op) {
	case 0: return "R";
	case 1: return "W";
	case 2: return "F";	/* flush */
	case 3: return "D";	/* discard */
	case 5: return "S";	/* secure erase */
	case 9: return "Z";	/* write zeroes */
	default: return "O";
	}
}

static int on_event(void *ctx, void *data, size_t size)
{
	const struct disklat_event *e = data;
	char pid[16], bytes[16], comm[17];

	if (size < sizeof(*e))
		return 0;
	memcpy(comm, e->comm, 16);
	comm[16] = 0;
	snprintf(pid, sizeof(pid), "%u", e->pid);
	snprintf(bytes, sizeof(bytes), "%u", e->bytes);
	struct field f[6] = {
		{ MSTR("comm"), escape_mstr_c(comm) },
		{ MSTR("pid"), escape_mstr_c(pid) },
		{ MSTR("dev"), escape_mstr_c(dev_name(e->dev_major, e->dev_minor)) },
		{ MSTR("bytes"), escape_mstr_c(bytes) },
		{ MSTR("rw"), escape_mstr_c(op_name(e->op)) },
		{ MSTR("error"), MSTR("1") },
	};
	double x = e->complete_ns >= start_ns ? (double)(e->complete_ns - start_ns) / 1e9 : 0.0;
	double y = (double)(e->complete_ns - e->issue_ns) / 1e6;
	stream_write_point(out, x, y, escape_mstr_c(comm), f, e->error ? 6 : 5);
	records++;
	return 0;
}

static int have_io_start;

struct unfinished { uint64_t requests, bytes; };

static void count_in_flight(const void *key, const void *value, void *arg)
{
	const struct disklat_start *s = value;
	struct unfinished *u = arg;
	(void)key;
	u->requests++;
	u->bytes += s->bytes;
}

/* The trailer's account of requests issued and never seen completing:
 * "in_flight_at_end" (left in the starts table: still at the device when the
 * capture ended), "unseen_completions" (their address began a new request:
 * the kernel ran no program for their completion).  A warning for the
 * second: those requests are missing from the points. */
static json_t *unfinished_trailer(struct disklat_bpf *skel)
{
	struct unfinished end = { 0 };
	uint64_t unseen = skel->bss->unseen_requests, unseen_bytes = skel->bss->unseen_bytes;

	bpfmap_each(bpf_map__fd(skel->maps.starts), sizeof(uint64_t), sizeof(struct disklat_start), count_in_flight, &end);
	if (unseen)
		marple_warn("%" PRIu64 " I/O requests (%" PRIu64 " bytes) issued but their completion never traced: "
			    "no points for them", unseen, unseen_bytes);
	return json_pack("{s:{s:I,s:I},s:{s:I,s:I}}",
			 "unseen_completions", "requests", (json_int_t)unseen, "bytes", (json_int_t)unseen_bytes,
			 "in_flight_at_end", "requests", (json_int_t)end.requests, "bytes", (json_int_t)end.bytes);
}

static struct disklat_bpf *setup(int raw, const char **why)
{
	struct disklat_bpf *skel = disklat_bpf__open_opts(corebtf_opts(disklat_bpf__elf_bytes));
	int err;

	if (!skel) {
		*why = "cannot open the BPF object";
		return NULL;
	}
	skel->rodata->targ_tgid = opt.pid;
	skel->rodata->targ_dev = opt.dev != NULL;
	skel->rodata->targ_major = opt.major;
	skel->rodata->targ_minor = opt.minor;
	skel->rodata->requeue_tracked = !have_io_start;
	bpf_program__set_autoload(skel->progs.issue_btf, !raw);
	bpf_program__set_autoload(skel->progs.complete_btf, !raw);
	bpf_program__set_autoload(skel->progs.issue_raw, raw);
	bpf_program__set_autoload(skel->progs.complete_raw, raw);
	bpf_program__set_autoload(skel->progs.start_btf, !raw && have_io_start);
	bpf_program__set_autoload(skel->progs.start_raw, raw && have_io_start);
	bpf_program__set_autoload(skel->progs.requeue_btf, !raw && !have_io_start);
	bpf_program__set_autoload(skel->progs.requeue_raw, raw && !have_io_start);
	bpf_program__set_autoload(skel->progs.insert_btf, !raw && !have_io_start);
	bpf_program__set_autoload(skel->progs.insert_raw, raw && !have_io_start);
	bpf_program__set_autoload(skel->progs.merge_btf, !raw);
	bpf_program__set_autoload(skel->progs.merge_raw, raw);
	if (!(err = disklat_bpf__load(skel))) {
		if (selffilter_setup(skel->obj, opt.include_self) < 0)
			exit(EXIT_DATA);
		err = disklat_bpf__attach(skel);
	}
	if (err) {
		*why = collector_strerror(err);
		disklat_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

int main(int argc, char **argv)
{
	struct disklat_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	const char *attach = "tp_btf", *why = NULL;
	json_t *hdr = NULL;
	uint64_t duration;
	int c, status = EXIT_DATA;

	marple_init(argc, argv);
	out = stdout;
	while ((c = options_getopt(options, argc, argv)) != -1) {
		switch (c) {
		case 'p': opt.pid = (uint32_t)marple_opt_u64("-p", optarg, 1, 4194304); break;
		case 'd': opt.dev = optarg; break;
		case O_RAW_TP: opt.force_raw = 1; break;
		case SELF_OPTION_KEY: opt.include_self = 1; break;
		case 'v': opt.verbose++; break;
		case 'h': options_help(stdout, options, &help); return EXIT_OK;
		default: marple_usage_try();
		}
	}
	duration = collector_duration(argc, argv, optind);
	if (opt.dev && blockdev_disk(opt.dev, &opt.major, &opt.minor, NULL) < 0)
		return EXIT_DATA;
	if (opt.pid && uprobes_require_process((pid_t)opt.pid) != 0)
		return EXIT_DATA;
	if (collector_start(opt.verbose > 1) < 0)
		return EXIT_DATA;

	/* MARPLE_DISKLAT_IO_START=off: as on a kernel without it (tests) */
	const char *io_start = getenv("MARPLE_DISKLAT_IO_START");
	have_io_start = !(io_start && strcmp(io_start, "off") == 0) &&
			collector_tracepoint_exists("block", "block_io_start");
	hdr = stream_section_header_new("disklat", DATATYPE_POINT);
	start_ns = (uint64_t)stream_header_int(hdr, "start_ns", 0);
	if (!opt.force_raw)
		skel = setup(0, &why);
	if (!skel) {
		if (why && opt.verbose)
			marple_warn("tp_btf block tracepoints did not attach (%s); trying raw_tp", why);
		attach = "raw_tp";
		skel = setup(1, &why);
	}
	if (!skel) {
		marple_warn("cannot trace block_rq_issue/block_rq_complete: %s", why);
		goto cleanup;
	}
	if (opt.verbose)
		marple_warn("block_rq_issue and block_rq_complete%s attached via %s",
			have_io_start ? " (and block_io_start for the submitting process)" :
					" (and block_rq_insert and block_rq_requeue for the submitting process)", attach);
	rb = eventcollector_ring(bpf_map__fd(skel->maps.event_records), on_event);
	if (!rb)
		goto cleanup;
	json_object_set_new(hdr, "units", json_pack("{s:s,s:s}", "x", "s", "y", "ms"));
	json_object_set_new(hdr, "labels", json_pack("{s:s,s:s,s:s}", "x", "time", "y", "I/O latency",
						     "info", "process"));
	json_t *o = json_pack("{s:s,s:b}", "attach", attach, "io_start", have_io_start);
	if (opt.pid)
		json_object_set_new(o, "pid", json_integer(opt.pid));
	if (opt.dev)
		json_object_set_new(o, "disk", json_string(dev_name(opt.major, opt.minor)));
	json_object_set_new(hdr, "options", o);
	if (stream_write_json(out, hdr) < 0)
		goto cleanup;
	if (opt.pid)
		collector_watch_target((pid_t)opt.pid, 0);
	collector_ready(duration);
	if (eventcollector_poll(rb, 0) < 0)
		goto cleanup;
	disklat_bpf__detach(skel);
	ring_buffer__consume(rb);
	if (eventcollector_trailer(out, bpf_map__fd(skel->maps.event_counters), skel->obj, records, "I/O records",
				   "I/O requests not timed (too many in flight)", unfinished_trailer(skel), opt.verbose) < 0)
		goto cleanup;
	status = EXIT_OK;
cleanup:
	ring_buffer__free(rb);
	disklat_bpf__destroy(skel);
	json_decref(hdr);
	marple_close_stdout();
	return status;
}
