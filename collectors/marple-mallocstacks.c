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
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector.h"
#include "mallocstacks.h"
#include "mallocstacks.skel.h"
#include "stackframes.h"
#include "stream.h"
#include "syms.h"
#include "uprobes.h"
#include "util.h"

static struct {
	pid_t pid;
	const char *cmd;
	const char *lib;
	uint64_t sample_every;
	uint64_t stack_storage;
	int addresses;
	int verbose;
} opt = { .sample_every = 1, .stack_storage = 16384 };

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [-p PID | -c CMD] [--sample-every N] [options] [DURATION]\n"
		"Count bytes requested from malloc, calloc and realloc by user call stack\n"
		"(uprobes on libc) and write one marple stack section weighted in bytes.\n"
		"\n"
		"  -p, --pid PID           only this process (default: every process)\n"
		"  -c, --command CMD       start CMD (with /bin/sh), trace it, end when it exits\n"
		"  -s, --sample-every N    count one call in N, weighted by N (less overhead)\n"
		"  -l, --lib PATH          the C library to probe (default: the libc mapped by\n"
		"                          the process, or this program's)\n"
		"      --stack-storage N   stack map entries (default 16384)\n"
		"      --addresses         unresolved frames as [module+0xoffset]\n"
		"  -v, --verbose           libbpf's messages too\n"
		"  -h, --help              this help\n"
		"\n"
		"DURATION: seconds or 500ms, 10s, 2m; none: until SIGINT/SIGTERM (or CMD exits).\n"
		"Needs root.  User stacks are walked with frame pointers.  See marple-mallocstacks(1).\n",
		progname);
}

static void parse_options(int argc, char **argv)
{
	enum { OPT_STACK_STORAGE = 256, OPT_ADDRESSES };
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "command", required_argument, NULL, 'c' },
		{ "sample-every", required_argument, NULL, 's' },
		{ "lib", required_argument, NULL, 'l' },
		{ "stack-storage", required_argument, NULL, OPT_STACK_STORAGE },
		{ "addresses", no_argument, NULL, OPT_ADDRESSES },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "p:c:s:l:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': opt.pid = (pid_t)opt_u64("-p", optarg, 1, 0x7fffffff); break;
		case 'c': opt.cmd = optarg; break;
		case 's': opt.sample_every = opt_u64("--sample-every", optarg, 1, 1u << 30); break;
		case 'l': opt.lib = optarg; break;
		case OPT_STACK_STORAGE: opt.stack_storage = opt_u64("--stack-storage", optarg, 64, 1u << 22); break;
		case OPT_ADDRESSES: opt.addresses = 1; break;
		case 'v': opt.verbose = 1; break;
		case 'h': usage(stdout); exit(EXIT_OK);
		default: usage_try();
		}
	}
	if (opt.pid && opt.cmd)
		usage_error("-p and -c cannot be used together");
}

/* The frames of one aggregate: comm, the user stack with the immediate caller
 * put back in, root first. */
static void key_frames(struct stackframes *sf, const struct mallocstacks_key *k)
{
	uint64_t ips[MARPLE_STACK_DEPTH + 1];
	int n;

	stackframes_begin(sf, k->k.comm);
	n = k->k.user_stack_id >= 0 ? stackframes_read_id(sf, k->k.user_stack_id, ips) : -1;
	if (n <= 0) {
		stackframes_user_id(sf, (pid_t)k->k.pid, k->k.user_stack_id >= 0 ? -1 : k->k.user_stack_id);
		return;
	}
	if (k->caller && (n < 2 || ips[1] != k->caller)) {
		memmove(ips + 2, ips + 1, (size_t)(n - 1) * sizeof(ips[0]));
		ips[1] = k->caller;
		n++;
	}
	stackframes_user_ips(sf, (pid_t)k->k.pid, ips, (size_t)n);
}

static json_t *make_header(const char *lib, pid_t target)
{
	json_t *hdr = section_header_new("mallocstacks", DATATYPE_STACK);
	json_t *o = json_object();

	json_object_set_new(hdr, "units", json_pack("{s:s}", "weight", "bytes"));
	json_object_set_new(hdr, "labels", json_pack("{s:s}", "weight", "bytes requested"));
	if (target > 0)
		json_object_set_new(o, "pid", json_integer(target));
	if (opt.cmd)
		json_object_set_new(o, "command", json_string_bytes(opt.cmd, strlen(opt.cmd)));
	json_object_set_new(o, "sample_every", json_integer((json_int_t)opt.sample_every));
	json_object_set_new(o, "library", json_string_bytes(lib, strlen(lib)));
	json_object_set_new(o, "functions", json_pack("[sss]", "malloc", "calloc", "realloc"));
	json_object_set_new(hdr, "options", o);
	return hdr;
}

static void snapshot_at_exit(pid_t pid, void *syms)
{
	syms_cache_snapshot(syms, pid);
}

int main(int argc, char **argv)
{
	static const char *const funcs[] = { "malloc", "calloc", "realloc" };
	struct mallocstacks_bpf *skel = NULL;
	struct bpf_link *links[3] = { 0 };
	struct syms_cache *syms = NULL;
	struct stackframes *sf = NULL;
	struct ring_buffer *notes = NULL;
	uint64_t duration, records = 0, calls = 0, counters[STACKS_NCOUNTERS];
	const char *ended = NULL;
	char *lib = NULL;
	json_t *hdr = NULL;
	pid_t target = 0;
	int status = 0, cmd_running = 0, rc = EXIT_DATA;

	marple_init(argc, argv);
	parse_options(argc, argv);
	duration = collector_duration(argc, argv, optind);
	collector_start(opt.verbose);

	if (opt.pid) {
		require_process(opt.pid);
		target = opt.pid;
	}
	lib = opt.lib ? xstrdup(opt.lib) : uprobes_find_lib(opt.pid ? opt.pid : -1, "libc");
	if (!lib)
		return EXIT_DATA;
	if (access(lib, R_OK) != 0)
		fatal(EXIT_DATA, "library %s not found", lib);

	skel = mallocstacks_bpf__open();
	if (!skel) {
		warnmsg("cannot open the BPF program: %s", collector_strerror(-errno));
		goto cleanup;
	}
	skel->rodata->sample_every = opt.sample_every;
	bpf_map__set_max_entries(skel->maps.stacks, (uint32_t)opt.stack_storage);
	if (opt.cmd) {
		target = command_start(opt.cmd);
		cmd_running = 1;
	}
	skel->rodata->targ_tgid = (uint32_t)target;
	int err = mallocstacks_bpf__load(skel);
	if (err) {
		warnmsg("cannot load the BPF program: %s", collector_strerror(err));
		goto cleanup;
	}
	struct bpf_program *progs[3] = { skel->progs.malloc_enter, skel->progs.calloc_enter,
					 skel->progs.realloc_enter };
	for (int i = 0; i < 3; i++) {
		links[i] = uprobes_attach(progs[i], target ? target : -1, lib, funcs[i], 0);
		if (!links[i])
			goto cleanup;
	}
	syms = syms_cache_new(SYMS_DEMANGLE);
	sf = stackframes_new(syms, NULL, bpf_map__fd(skel->maps.stacks), opt.addresses ? SF_ADDRESSES : 0);
	notes = stacks_pidnotes_new(bpf_map__fd(skel->maps.pid_notes), syms);
	if (!notes)
		goto cleanup;
	if (opt.pid)
		syms_cache_snapshot(syms, opt.pid);
	hdr = make_header(lib, target);	/* its start time is now */
	if (opt.cmd)
		command_go(target);
	collector_ready(duration);

	while (!collector_should_stop()) {
		ring_buffer__poll(notes, collector_poll_timeout_ms(100));
		if (cmd_running && command_exited(target, snapshot_at_exit, syms, &status)) {
			cmd_running = 0;
			ended = "eof";
			break;
		}
	}
	skel->bss->stopped = 1;
	ring_buffer__consume(notes);
	if (!ended)
		ended = collector_end_reason();

	if (stream_write_json(stdout, hdr) < 0)
		goto cleanup;

	int fd = bpf_map__fd(skel->maps.counts);
	struct mallocstacks_key key, next;
	struct mallocstacks_val val;
	void *prev = NULL;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &val) != 0)
			continue;
		key_frames(sf, &key);
		stackframes_write(sf, stdout, val.bytes);
		records++;
		calls += val.calls;
	}

	stacks_read_counters(bpf_map__fd(skel->maps.stack_counters), counters);
	json_t *tr = section_trailer_new(records, 0, 0, ended);
	uint64_t dropped = stacks_trailer_add(tr, counters, sf);
	json_object_set_new(tr, "dropped", json_integer((json_int_t)dropped));
	json_object_set_new(tr, "calls", json_integer((json_int_t)calls));
	if (opt.cmd && !cmd_running)
		json_object_set_new(tr, "command_status", json_integer(status));
	stream_write_json(stdout, tr);
	json_decref(tr);
	rc = EXIT_OK;

cleanup:
	if (rc == EXIT_OK)
		close_stdout();		/* before the slow detaching */
	for (int i = 0; i < 3; i++)
		bpf_link__destroy(links[i]);
	if (cmd_running)
		command_stop(target);
	ring_buffer__free(notes);
	stackframes_free(sf);
	syms_cache_free(syms);
	json_decref(hdr);
	mallocstacks_bpf__destroy(skel);
	free(lib);
	return rc;
}
