/* marple-mallocstacks — bytes requested from libc malloc, calloc and realloc,
 * by process and user call stack (uprobes on libc; aggregated in the kernel).
 *
 * Writes one stack section weighted in bytes:
 *
 *   $ marple-mallocstacks -c ./server 10
 *   {"marple":1,"interface":"mallocstacks","datatype":"stack",...,"units":{"weight":"bytes"}}
 *   1048576#server;_start;__libc_start_main;main;load_table;malloc
 *   {"trailer":1,"records":1,...,"calls":4096,"ended":"duration"}
 *
 * Usage: marple-mallocstacks [-p PID | -c CMD] [--sample-every N] [duration]
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "bpfmap.h"
#include "collector.h"
#include "corebtf.h"
#include "mallocstacks.h"
#include "mallocstacks.skel.h"
#include "selffilter.h"
#include "stackcollector.h"
#include "hashtab.h"
#include "stackdrain.h"
#include "stackframes.h"
#include "stacksbpf.h"
#include "stream.h"
#include "uprobes.h"
#include "util.h"
#include "weight.h"

static struct stackcollector sc = {
	.synopsis = "[-p PID | -c CMD] [--sample-every N] [options] [DURATION]",
	.about = "Count bytes requested from malloc, calloc and realloc by user call stack\n"
		 "(uprobes on libc) and write one marple stack section weighted in bytes.\n",
	.footer = "Needs root.  User stacks are unwound in the kernel (--unwind).  See marple-mallocstacks(1).\n",
};

static const struct sc_option options[] = {
	SC_PID("only this process (default: every process)"),
	SC_COMMAND("start CMD (split as sh would; no ; | & or $(...)), trace it, end when it exits"),
	SC_SAMPLE_EVERY("count one call in N, weighted by N (less overhead)"),
	SC_LIB("the C library to probe (default: the libc mapped by\n"
	       "the process, or this program's)"),
	SC_UNWIND(""),
	SC_NO_PYTHON,
	SC_NO_INLINE,
	SC_STACK_STORAGE,
	SC_DRAIN_EVERY,
	SC_EVERY,
	SC_ADDRESSES,
	SC_INCLUDE_SELF,
	SC_VERBOSE,
	SC_DESCRIBE("kind=collector\tsections=mallocstacks:stack:flamegraph\tevery=yes"
		"\tmeasures=bytes asked of malloc, calloc, realloc by process and stack"),
	SC_HELP,
	{ 0 }
};

/* The frames of one aggregate: comm, the user stack with the immediate caller
 * put back in, root first. */
static void key_frames(struct stackframes *sf, const struct mallocstacks_key *k, struct stack_ips user)
{
	uint64_t ips[MARPLE_STACK_DEPTH + 1];
	int n = user.n;

	stackframes_begin(sf, k->k.comm);
	if (n <= 0) {
		stackframes_user_stack(sf, (pid_t)k->k.pid, k->k.exec_id, (struct stack_ips){ NULL, n < 0 ? n : -1 });
		return;
	}
	memcpy(ips, user.ips, (size_t)n * sizeof(ips[0]));
	if (k->caller && (n < 2 || ips[1] != k->caller)) {
		memmove(ips + 2, ips + 1, (size_t)(n - 1) * sizeof(ips[0]));
		ips[1] = k->caller;
		n++;
	}
	/* named from the image the process ran when it allocated (exec id) */
	stackframes_user_ips_exec(sf, (pid_t)k->k.pid, k->k.exec_id, ips, (size_t)n);
}

static json_t *make_header(const char *lib, pid_t target)
{
	json_t *o, *hdr = stackcollector_header(&sc, "mallocstacks", "bytes", "bytes requested", target, &o);
	weight_meaning_set(hdr, "bytes", "alloc_space", 0);

	json_object_set_new(o, "sample_every", json_integer((json_int_t)sc.sample_every));
	json_object_set_new(o, "library", stream_json_string_bytes(lib, strlen(lib)));
	json_object_set_new(o, "functions", json_pack("[sss]", "malloc", "calloc", "realloc"));
	return hdr;
}

static struct {
	struct hashtab *records;	/* frames -> bytes, added up as the counts are drained */
	uint64_t calls;
} sum;

static void add_record(const struct stackdrain_entry *e, void *arg)
{
	const struct mallocstacks_val *v = e->value;

	(void)arg;
	key_frames(sc.sf, e->key, e->user);
	stackframes_collect(sc.sf, sum.records, v->bytes);
	sum.calls += v->calls;
}

static struct {
	struct mallocstacks_bpf *skel;
	json_t *hdr;
} cap;

static void stop_probes(void *arg)
{
	(void)arg;
	cap.skel->bss->stopped = 1;
	ring_buffer__consume(sc.notes);
}

/* One section: at every --every interval and at the end. */
static int write_section(void *arg, int last)
{
	(void)arg;
	stackdrain_finish(sc.drain);
	stackdrain_emit(sc.drain);
	stackcollector_stamp_header(&sc, cap.hdr);
	if (stream_write_json(stdout, cap.hdr) < 0)
		return -1;
	uint64_t records = stackframes_write_table(sc.sf, sum.records, stdout);
	json_t *tr = stackcollector_trailer(&sc, cap.skel->obj, records, 0, stackcollector_ended(&sc));
	json_object_set_new(tr, "calls", json_integer((json_int_t)sum.calls));
	stackdrain_trailer_add(sc.drain, tr);
	hashtab_free(sum.records);
	sum.records = hashtab_new();
	sum.calls = 0;
	if (stackcollector_write_trailer(&sc, tr) < 0 || fflush(stdout) != 0)
		return -1;
	(void)last;
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const funcs[MALLOCSTACKS_NFUNCS] = { [MALLOCSTACKS_MALLOC] = "malloc",
								  [MALLOCSTACKS_CALLOC] = "calloc",
								  [MALLOCSTACKS_REALLOC] = "realloc" };
	struct mallocstacks_bpf *skel = NULL;
	struct bpf_link *links[MALLOCSTACKS_NFUNCS] = { 0 };
	char *lib = NULL;
	json_t *hdr = NULL;
	pid_t target;
	int rc = EXIT_DATA;

	marple_init(argc, argv);
	if (stackcollector_parse(&sc, options, NULL, argc, argv))
		return EXIT_OK;	/* -h */
	if (stackcollector_start(&sc) < 0)
		goto cleanup;
	if (!(lib = stackcollector_libc(&sc)))
		goto cleanup;

	skel = mallocstacks_bpf__open_opts(corebtf_opts(mallocstacks_bpf__elf_bytes));
	if (!skel) {
		marple_warn("cannot open the BPF program: %s", collector_strerror(-errno));
		goto cleanup;
	}
	skel->rodata->sample_every = sc.sample_every;
	stacksbpf_set_storage(skel->obj, sc.stack_storage ? (uint32_t)sc.stack_storage : STACKSBPF_STORAGE_BUSY);
	skel->rodata->stacks_unwind = (uint32_t)sc.unwind;
	sc.finish_cuts = stackcollector_cuts_wanted(&sc);
	skel->rodata->stacks_send_cuts = sc.finish_cuts;
	skel->rodata->stacks_python = stackcollector_python_wanted(&sc);
	if (stackcollector_unwind_size(&sc, skel->obj) < 0)
		goto cleanup;
	if ((target = stackcollector_target(&sc)) < 0)
		goto cleanup;
	skel->rodata->targ_tgid = (uint32_t)target;
	int err = mallocstacks_bpf__load(skel);
	if (err) {
		marple_warn("cannot load the BPF program: %s", collector_strerror(err));
		goto cleanup;
	}
	if (selffilter_setup(skel->obj, sc.include_self) < 0)
		goto cleanup;
	for (int i = 0; i < MALLOCSTACKS_NFUNCS; i++) {
		links[i] = uprobes_attach(skel->progs.alloc_enter, target ? target : -1, lib, funcs[i], (uint64_t)i);
		if (!links[i])
			goto cleanup;
	}
	if (stackcollector_symbols(&sc, skel->obj, 0) < 0)
		goto cleanup;
	sum.records = hashtab_new();
	if (stackcollector_drain(&sc, skel->obj, sizeof(struct mallocstacks_key), sizeof(struct mallocstacks_val),
				 offsetof(struct mallocstacks_key, k), add_record, NULL) < 0)
		goto cleanup;
	cap.hdr = hdr = make_header(lib, target);	/* its start time is now */
	cap.skel = skel;
	struct stackcollector_run lifecycle = { .stop = stop_probes, .section = write_section };
	if (stackcollector_run(&sc, &lifecycle) < 0)
		goto cleanup;
	rc = EXIT_OK;

cleanup:
	if (rc == EXIT_OK)
		marple_close_stdout();		/* before the slow detaching */
	for (int i = 0; i < MALLOCSTACKS_NFUNCS; i++)
		bpf_link__destroy(links[i]);
	stackcollector_free(&sc);
	hashtab_free(sum.records);
	json_decref(hdr);
	mallocstacks_bpf__destroy(skel);
	free(lib);
	return rc;
}
