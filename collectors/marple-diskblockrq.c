/* marple-diskblockrq — who issues disk I/O, and from where: block requests
 * counted by process, user stack and kernel stack at the block_rq_issue
 * tracepoint (or block_rq_insert), weighted by requests or by bytes.
 *
 * Writes one stack section:
 *
 *   $ marple-diskblockrq --bytes 10
 *   {"marple":1,"interface":"diskblockrq","datatype":"stack",...,"units":{"weight":"bytes"}}
 *   4194304#dd;__libc_write;entry_SYSCALL_64;...;blk_mq_flush_plug_list;blk_mq_issue_directly
 *   {"trailer":1,"records":1,...,"requests":1024,"bytes":4194304,"ended":"duration"}
 *
 * Usage: marple-diskblockrq [-p PID] [--bytes] [--insert] [-d DEV] [duration]
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "collector.h"
#include "diskblockrq.h"
#include "diskblockrq.skel.h"
#include "stackframes.h"
#include "stream.h"
#include "syms.h"
#include "tpstack.h"
#include "uprobes.h"
#include "util.h"

static struct {
	pid_t pid;
	int bytes;
	int insert;
	const char *dev;
	int user_only, kernel_only;
	int annotate, delimit, addresses;
	uint64_t stack_storage;
	int verbose;
} opt = { .stack_storage = 16384 };

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [-p PID] [--bytes] [--insert] [-d DEV] [options] [DURATION]\n"
		"Count block I/O requests by the process, user stack and kernel stack that\n"
		"issued them, and write one marple stack section.\n"
		"\n"
		"  -p, --pid PID           only requests issued by this process\n"
		"  -b, --bytes             weight by bytes requested (default: by requests)\n"
		"  -I, --insert            count at block_rq_insert (when the request is queued,\n"
		"                          always in the submitter's context) instead of issue\n"
		"  -d, --device DEV        only this disk: a name (vda), /dev/NAME or MAJOR:MINOR\n"
		"  -U, --user-only         user stacks only\n"
		"  -K, --kernel-only       kernel stacks only\n"
		"  -a, --annotate          kernel frames get _[k]\n"
		"      --delimit           a \"-\" frame between user and kernel frames\n"
		"      --stack-storage N   stack map entries (default 16384)\n"
		"      --addresses         unresolved frames as [module+0xoffset]\n"
		"  -v, --verbose           libbpf's messages too\n"
		"  -h, --help              this help\n"
		"\n"
		"DURATION: seconds or 500ms, 10s, 2m; none: until SIGINT/SIGTERM.\n"
		"Needs root.  See marple-diskblockrq(1).\n",
		progname);
}

static void parse_options(int argc, char **argv)
{
	enum { OPT_STACK_STORAGE = 256, OPT_ADDRESSES, OPT_DELIMIT };
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "bytes", no_argument, NULL, 'b' },
		{ "insert", no_argument, NULL, 'I' },
		{ "device", required_argument, NULL, 'd' },
		{ "user-only", no_argument, NULL, 'U' },
		{ "kernel-only", no_argument, NULL, 'K' },
		{ "annotate", no_argument, NULL, 'a' },
		{ "delimit", no_argument, NULL, OPT_DELIMIT },
		{ "stack-storage", required_argument, NULL, OPT_STACK_STORAGE },
		{ "addresses", no_argument, NULL, OPT_ADDRESSES },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "p:bId:UKavh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': opt.pid = (pid_t)opt_u64("-p", optarg, 1, 0x7fffffff); break;
		case 'b': opt.bytes = 1; break;
		case 'I': opt.insert = 1; break;
		case 'd': opt.dev = optarg; break;
		case 'U': opt.user_only = 1; break;
		case 'K': opt.kernel_only = 1; break;
		case 'a': opt.annotate = 1; break;
		case OPT_DELIMIT: opt.delimit = 1; break;
		case OPT_STACK_STORAGE: opt.stack_storage = opt_u64("--stack-storage", optarg, 64, 1u << 22); break;
		case OPT_ADDRESSES: opt.addresses = 1; break;
		case 'v': opt.verbose = 1; break;
		case 'h': usage(stdout); exit(EXIT_OK);
		default: usage_try();
		}
	}
	if (opt.user_only && opt.kernel_only)
		usage_error("-U and -K cannot be used together");
}

/* MAJOR:MINOR of a disk given as "vda", "/dev/vda" or "254:0"; exits 1/2. */
static void parse_device(const char *dev, unsigned *major, unsigned *minor)
{
	char path[512], buf[64];
	const char *name = dev;
	FILE *f;

	if (sscanf(dev, "%u:%u%1s", major, minor, buf) == 2)
		return;
	if (!strncmp(name, "/dev/", 5))
		name += 5;
	if (!*name || strchr(name, '/'))
		usage_error("-d '%s' is not a disk name or MAJOR:MINOR", dev);
	snprintf(path, sizeof(path), "/sys/class/block/%s/dev", name);
	f = fopen(path, "re");
	if (!f)
		fatal(EXIT_DATA, "device %s not found (no %s)", dev, path);
	if (!fgets(buf, sizeof(buf), f) || sscanf(buf, "%u:%u", major, minor) != 2)
		fatal(EXIT_DATA, "device %s: cannot read %s", dev, path);
	fclose(f);
	/* a partition's requests are the whole disk's: count the disk */
	snprintf(path, sizeof(path), "/sys/class/block/%s/partition", name);
	if (access(path, F_OK) == 0)
		warnmsg("%s is a partition: counting every request to its disk", dev);
}

int main(int argc, char **argv)
{
	struct diskblockrq_bpf *skel = NULL;
	struct bpf_link *link = NULL;
	struct syms_cache *syms = NULL;
	struct ksyms *ksyms = NULL;
	struct stackframes *sf = NULL;
	struct ring_buffer *notes = NULL;
	uint64_t duration, records = 0, requests = 0, bytes = 0, counters[STACKS_NCOUNTERS];
	const char *tp;
	unsigned major = 0, minor = 0;
	int rc = EXIT_DATA, err;
	json_t *hdr = NULL;

	marple_init(argc, argv);
	parse_options(argc, argv);
	duration = collector_duration(argc, argv, optind);
	collector_start(opt.verbose);
	if (opt.pid)
		require_process(opt.pid);
	if (opt.dev)
		parse_device(opt.dev, &major, &minor);
	tp = opt.insert ? "block_rq_insert" : "block_rq_issue";
	if (!collector_tracepoint_exists("block", tp))
		fatal(EXIT_DATA, "tracepoint block:%s missing on this kernel", tp);

	skel = diskblockrq_bpf__open();
	if (!skel) {
		warnmsg("cannot open the BPF program: %s", collector_strerror(-errno));
		goto cleanup;
	}
	skel->rodata->targ_tgid = (uint32_t)opt.pid;
	if (opt.dev) {
		/* the kernel's disk->major/first_minor */
		skel->rodata->targ_dev_set = 1;
		skel->rodata->targ_major = major;
		skel->rodata->targ_minor = minor;
	}
	skel->rodata->want_user = !opt.kernel_only;
	skel->rodata->want_kernel = !opt.user_only;
	bpf_map__set_max_entries(skel->maps.stacks, (uint32_t)opt.stack_storage);
	bpf_program__set_autoload(opt.insert ? skel->progs.rq_issue : skel->progs.rq_insert, false);
	err = diskblockrq_bpf__load(skel);
	if (err) {
		warnmsg("cannot load the BPF program: %s", collector_strerror(err));
		goto cleanup;
	}
	link = bpf_program__attach(opt.insert ? skel->progs.rq_insert : skel->progs.rq_issue);
	if (!link) {
		warnmsg("cannot attach to block:%s: %s", tp, collector_strerror(-errno));
		goto cleanup;
	}
	syms = syms_cache_new(SYMS_DEMANGLE);
	if (!opt.user_only && !(ksyms = ksyms_load()))
		goto cleanup;
	sf = stackframes_new(syms, ksyms, bpf_map__fd(skel->maps.stacks),
			     (opt.annotate ? SF_ANNOTATE_KERNEL : 0) | (opt.delimit ? SF_DELIMIT : 0) |
				     (opt.addresses ? SF_ADDRESSES : 0));
	notes = stacks_pidnotes_new(bpf_map__fd(skel->maps.pid_notes), syms);
	if (!notes)
		goto cleanup;
	hdr = section_header_new("diskblockrq", DATATYPE_STACK);
	json_t *o = json_object();
	json_object_set_new(hdr, "units", json_pack("{s:s}", "weight", opt.bytes ? "bytes" : "requests"));
	json_object_set_new(hdr, "labels", json_pack("{s:s}", "weight", opt.bytes ? "bytes requested" : "block requests"));
	if (opt.pid)
		json_object_set_new(o, "pid", json_integer(opt.pid));
	if (opt.dev)
		json_object_set_new(o, "device", json_sprintf("%u:%u", major, minor));
	json_object_set_new(o, "tracepoint", json_sprintf("block:%s", tp));
	json_object_set_new(o, "weight", json_string(opt.bytes ? "bytes" : "requests"));
	json_object_set_new(hdr, "options", o);
	collector_ready(duration);
	while (!collector_should_stop())
		ring_buffer__poll(notes, collector_poll_timeout_ms(100));
	bpf_link__destroy(link);
	link = NULL;
	ring_buffer__consume(notes);

	if (stream_write_json(stdout, hdr) < 0)
		goto cleanup;

	int fd = bpf_map__fd(skel->maps.counts);
	struct stack_key key, next, *prev = NULL;
	struct diskblockrq_val val;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &val) != 0)
			continue;
		stackframes_key(sf, &key);
		tpstack_write(sf, stdout, opt.bytes ? val.bytes : val.requests);
		records++;
		requests += val.requests;
		bytes += val.bytes;
	}
	stacks_read_counters(bpf_map__fd(skel->maps.stack_counters), counters);
	json_t *tr = section_trailer_new(records, 0, 0, collector_end_reason());
	uint64_t dropped = stacks_trailer_add(tr, counters, sf);
	json_object_set_new(tr, "dropped", json_integer((json_int_t)dropped));
	json_object_set_new(tr, "requests", json_integer((json_int_t)requests));
	json_object_set_new(tr, "bytes", json_integer((json_int_t)bytes));
	stream_write_json(stdout, tr);
	json_decref(tr);
	rc = EXIT_OK;

cleanup:
	bpf_link__destroy(link);
	ring_buffer__free(notes);
	stackframes_free(sf);
	syms_cache_free(syms);
	ksyms_free(ksyms);
	json_decref(hdr);
	diskblockrq_bpf__destroy(skel);
	if (rc == EXIT_OK)
		close_stdout();
	return rc;
}
