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
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "bpfmap.h"
#include "collector.h"
#include "corebtf.h"
#include "blockdev.h"
#include "diskblockrq.h"
#include "diskblockrq.skel.h"
#include "selffilter.h"
#include "stackcollector.h"
#include "stackdrain.h"
#include "stackframes.h"
#include "stacksbpf.h"
#include "stream.h"
#include "tpstack.h"
#include "util.h"

static struct stackcollector sc = {
	.synopsis = "[-p PID] [--bytes] [--insert] [-d DEV] [options] [DURATION]",
	.about = "Count block I/O requests by the process, user stack and kernel stack that\n"
		 "issued them, and write one marple stack section.\n",
	.footer = "Needs root.  See marple-diskblockrq(1).\n",
};

static struct {
	int bytes;
	int insert;
	const char *dev;
} opt;

static void own_option(int key, const char *arg)
{
	switch (key) {
	case 'b': opt.bytes = 1; break;
	case 'I': opt.insert = 1; break;
	case 'd': opt.dev = arg; break;
	}
}

static const struct sc_option options[] = {
	SC_PID("only requests issued by this process"),
	{ 0, 'b', "bytes", NULL, "weight by bytes requested (default: by requests)" },
	{ 0, 'I', "insert", NULL, "count at block_rq_insert (when the request is queued,\n"
				   "always in the submitter's context) instead of issue" },
	{ 0, 'd', "disk", "DISK", "only this disk: a name (vda), /dev/NAME or MAJOR:MINOR" },
	{ 0, 'd', "device", "DISK", NULL },	/* the old spelling (marple-disklat's is --disk) */
	SC_DESCRIBE("kind=collector\tsections=diskblockrq:stack:flamegraph\tevery=yes"
		"\tmeasures=block I/O requests by process and stack (requests or bytes)"),
	SC_STACK_OPTIONS,
	{ 0 }
};

struct totals {
	uint64_t requests, bytes;
};

static void write_record(const struct stackdrain_entry *e, void *arg)
{
	const struct diskblockrq_val *v = e->value;
	struct totals *t = arg;

	stackframes_key_stacks(sc.sf, e->key, e->user, e->kern);
	tpstack_write(sc.sf, stdout, opt.bytes ? v->bytes : v->requests);
	t->requests += v->requests;
	t->bytes += v->bytes;
}

/* main's capture, as the lifecycle's callbacks see it */
static struct {
	struct diskblockrq_bpf *skel;
	struct bpf_link **link;
	json_t *hdr;
	struct totals *t;
} cap;

static void stop_tracing(void *arg)
{
	(void)arg;
	bpf_link__destroy(*cap.link);
	*cap.link = NULL;
	ring_buffer__consume(sc.notes);
}

/* One section: at every --every interval and at the end. */
/* the section's own trailer members; its totals from 0 again */
static void own_trailer(json_t *tr, void *arg)
{
	(void)arg;
	json_object_set_new(tr, "requests", json_integer((json_int_t)cap.t->requests));
	json_object_set_new(tr, "bytes", json_integer((json_int_t)cap.t->bytes));
	*cap.t = (struct totals){ 0 };
}

static int write_section(void *arg, int last)
{
	(void)arg;
	(void)last;
	return stackcollector_write_section(&sc, cap.skel->obj, cap.hdr, own_trailer, NULL);
}

int main(int argc, char **argv)
{
	struct diskblockrq_bpf *skel = NULL;
	struct bpf_link *link = NULL;
	struct totals t = { 0 };
	const char *tp;
	unsigned major = 0, minor = 0;
	int rc = EXIT_DATA, err;
	json_t *hdr = NULL;

	marple_init(argc, argv);
	if (stackcollector_parse(&sc, options, own_option, argc, argv))
		return EXIT_OK;	/* -h */
	if (stackcollector_start(&sc) < 0)
		goto cleanup;
	if (opt.dev) {
		int partition;
		if (blockdev_disk(opt.dev, &major, &minor, &partition) < 0)
			goto cleanup;
		if (partition)
			marple_warn("%s is a partition: counting every request to its disk", opt.dev);
	}
	tp = opt.insert ? "block_rq_insert" : "block_rq_issue";
	if (!collector_tracepoint_exists("block", tp))
		marple_fatal(EXIT_DATA, "tracepoint block:%s missing on this kernel", tp);

	skel = diskblockrq_bpf__open_opts(corebtf_opts(diskblockrq_bpf__elf_bytes));
	if (!skel) {
		marple_warn("cannot open the BPF program: %s", collector_strerror(-errno));
		goto cleanup;
	}
	skel->rodata->targ_tgid = (uint32_t)sc.pid;
	if (opt.dev) {
		/* the kernel's disk->major/first_minor */
		skel->rodata->targ_dev_set = 1;
		skel->rodata->targ_major = major;
		skel->rodata->targ_minor = minor;
	}
	skel->rodata->want_user = !sc.kernel_only;
	skel->rodata->want_kernel = !sc.user_only;
	stacksbpf_set_storage(skel->obj, sc.stack_storage ? (uint32_t)sc.stack_storage : STACKSBPF_STORAGE_EVENTS);
	skel->rodata->stacks_unwind = (uint32_t)sc.unwind;
	sc.finish_cuts = stackcollector_cuts_wanted(&sc);
	skel->rodata->stacks_send_cuts = sc.finish_cuts;
	skel->rodata->stacks_python = stackcollector_python_wanted(&sc);
	if (stackcollector_unwind_size(&sc, skel->obj) < 0)
		goto cleanup;
	bpf_program__set_autoload(opt.insert ? skel->progs.rq_issue : skel->progs.rq_insert, false);
	err = diskblockrq_bpf__load(skel);
	if (err) {
		marple_warn("cannot load the BPF program: %s", collector_strerror(err));
		goto cleanup;
	}
	if (selffilter_setup(skel->obj, sc.include_self) < 0)
		goto cleanup;
	link = bpf_program__attach(opt.insert ? skel->progs.rq_insert : skel->progs.rq_issue);
	if (!link) {
		marple_warn("cannot attach to block:%s: %s", tp, collector_strerror(-errno));
		goto cleanup;
	}
	if (stackcollector_symbols(&sc, skel->obj, !sc.user_only) < 0)
		goto cleanup;
	/* the counts are drained while capturing, written at the end */
	if (stackcollector_drain(&sc, skel->obj, sizeof(struct stack_key), sizeof(struct diskblockrq_val), 0,
				 write_record, &t) < 0)
		goto cleanup;
	json_t *o;
	hdr = stackcollector_header(&sc, "diskblockrq", opt.bytes ? "bytes" : "requests",
				    opt.bytes ? "bytes requested" : "block requests", sc.pid, &o);
	if (opt.dev)
		json_object_set_new(o, "device", json_sprintf("%u:%u", major, minor));
	json_object_set_new(o, "tracepoint", json_sprintf("block:%s", tp));
	json_object_set_new(o, "weight", json_string(opt.bytes ? "bytes" : "requests"));
	cap.skel = skel;
	cap.link = &link;
	cap.hdr = hdr;
	cap.t = &t;
	struct stackcollector_run lifecycle = { .stop = stop_tracing, .section = write_section };
	if (stackcollector_run(&sc, &lifecycle) < 0)
		goto cleanup;
	rc = EXIT_OK;

cleanup:
	bpf_link__destroy(link);
	stackcollector_free(&sc);
	json_decref(hdr);
	diskblockrq_bpf__destroy(skel);
	if (rc == EXIT_OK)
		marple_close_stdout();
	return rc;
}
