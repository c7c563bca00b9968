/* marple-memevents — memory accesses by process and call stack: precise
 * memory-load or -store samples where the CPU's PMU has them (perf's
 * cpu/mem-loads/ and cpu/mem-stores/ events), else — and on this kind of
 * virtual machine, always — page faults (exceptions:page_fault_user and
 * page_fault_kernel), which work everywhere.
 *
 * Writes one stack section:
 *
 *   $ marple-memevents 5
 *   marple-memevents: no precise memory sampling here (no hardware PMU with mem-loads): counting page faults by stack
 *   {"marple":1,"interface":"memevents","datatype":"stack",...,"units":{"weight":"faults"},...}
 *   812#python3;_start;main;PyList_New;__memset_avx2_unaligned_erms
 *   {"trailer":1,"records":1,...,"source":"page-faults","ended":"duration"}
 *
 * Usage: marple-memevents [-p PID] [--faults | -e loads|stores] [duration]
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector.h"
#include "memevents.skel.h"
#include "stackframes.h"
#include "stream.h"
#include "syms.h"
#include "tpstack.h"
#include "uprobes.h"
#include "util.h"

static struct {
	pid_t pid;
	int faults;
	const char *event;
	uint64_t period;
	int user_only, kernel_only;
	int annotate, delimit, addresses;
	uint64_t stack_storage;
	int verbose;
} opt = { .event = "loads", .period = 10007, .stack_storage = 16384 };

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [-p PID] [--faults | -e loads|stores] [options] [DURATION]\n"
		"Sample memory accesses by call stack with the CPU's precise memory events\n"
		"where it has them, otherwise count page faults by call stack; write one\n"
		"marple stack section.\n"
		"\n"
		"  -p, --pid PID           only this process\n"
		"  -f, --faults            page faults even where precise sampling exists\n"
		"  -e, --event EV          loads (default) or stores, for precise sampling\n"
		"  -P, --period N          one precise sample every N events (default 10007)\n"
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
		"Needs root.  See marple-memevents(1).\n",
		progname);
}

static void parse_options(int argc, char **argv)
{
	enum { OPT_STACK_STORAGE = 256, OPT_ADDRESSES, OPT_DELIMIT };
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "faults", no_argument, NULL, 'f' },
		{ "event", required_argument, NULL, 'e' },
		{ "period", required_argument, NULL, 'P' },
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

	while ((c = getopt_long(argc, argv, "p:fe:P:UKavh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': opt.pid = (pid_t)opt_u64("-p", optarg, 1, 0x7fffffff); break;
		case 'f': opt.faults = 1; break;
		case 'e':
			if (strcmp(optarg, "loads") && strcmp(optarg, "stores"))
				usage_error("-e '%s': use loads or stores", optarg);
			opt.event = optarg;
			break;
		case 'P': opt.period = opt_u64("--period", optarg, 100, 1ull << 40); break;
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

/* ---- precise memory sampling: perf's sysfs event description ---- */

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int ok = f && fgets(buf, (int)len, f);

	if (f)
		fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* Put value into the attr field named by a sysfs format ("config:0-7",
 * "config1:0-15"); 0, or -1 if the format is unknown. */
static int set_term(const char *pmu, struct perf_event_attr *a, const char *term, uint64_t value)
{
	char path[256], fmt[64];
	unsigned lo, hi;
	uint64_t *field;

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/format/%s", pmu, term);
	if (read_line(path, fmt, sizeof(fmt)) < 0)
		return -1;
	char *colon = strchr(fmt, ':');
	if (!colon)
		return -1;
	*colon = '\0';
	if (sscanf(colon + 1, "%u-%u", &lo, &hi) == 1)
		hi = lo;
	else if (sscanf(colon + 1, "%u-%u", &lo, &hi) != 2)
		return -1;
	if (!strcmp(fmt, "config"))
		field = (uint64_t *)&a->config;
	else if (!strcmp(fmt, "config1"))
		field = (uint64_t *)&a->config1;
	else if (!strcmp(fmt, "config2"))
		field = (uint64_t *)&a->config2;
	else
		return -1;
	if (hi < lo || hi > 63)
		return -1;
	uint64_t mask = hi - lo == 63 ? ~0ull : ((1ull << (hi - lo + 1)) - 1);
	*field |= (value & mask) << lo;
	return 0;
}

/* The attr of cpu/mem-loads/ or cpu/mem-stores/, or -1 if this CPU has none. */
static int precise_attr(const char *ev, struct perf_event_attr *a)
{
	static const char *const pmus[] = { "cpu", "cpu_core" };
	char path[256], desc[256], *save = NULL;

	for (size_t i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/events/mem-%s", pmus[i], ev);
		if (read_line(path, desc, sizeof(desc)) < 0)
			continue;
		snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", pmus[i]);
		char type[32];
		uint64_t t;
		if (read_line(path, type, sizeof(type)) < 0 || parse_u64(type, 0, UINT32_MAX, &t) < 0)
			continue;
		memset(a, 0, sizeof(*a));
		a->size = sizeof(*a);
		a->type = (uint32_t)t;
		int ok = 1;
		for (char *tok = strtok_r(desc, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			char *eq = strchr(tok, '=');
			uint64_t v = 1;
			if (eq) {
				*eq = '\0';
				v = strtoull(eq + 1, NULL, 0);
			}
			if (set_term(pmus[i], a, tok, v) < 0)
				ok = 0;
		}
		if (!ok)
			continue;
		a->sample_period = opt.period;
		a->precise_ip = 2;
		return 0;
	}
	return -1;
}

/* Open the precise event on every CPU and attach the program; 0, or -1 with
 * nothing left open (the caller falls back to page faults). */
static int attach_precise(struct memevents_bpf *skel, struct bpf_link ***links, int *nlinks)
{
	struct perf_event_attr a;
	int ncpu = libbpf_num_possible_cpus();

	if (precise_attr(opt.event, &a) < 0 || ncpu <= 0)
		return -1;
	*links = xcalloc((size_t)ncpu, sizeof(**links));
	for (int cpu = 0; cpu < ncpu; cpu++) {
		int fd = (int)syscall(SYS_perf_event_open, &a, opt.pid ? opt.pid : -1, opt.pid ? -1 : cpu, -1,
				      PERF_FLAG_FD_CLOEXEC);
		if (fd < 0 && errno == ENODEV)
			continue;	/* CPU offline */
		if (fd < 0)
			goto fail;
		(*links)[*nlinks] = bpf_program__attach_perf_event(skel->progs.mem_sample, fd);
		if (!(*links)[*nlinks]) {
			close(fd);
			goto fail;
		}
		(*nlinks)++;
		if (opt.pid)
			break;
	}
	return 0;
fail:
	for (int i = 0; i < *nlinks; i++)
		bpf_link__destroy((*links)[i]);
	*nlinks = 0;
	return -1;
}

int main(int argc, char **argv)
{
	struct memevents_bpf *skel = NULL;
	struct bpf_link **links = NULL, *fault_links[2] = { 0 };
	int nlinks = 0, precise = 0, rc = EXIT_DATA, err;
	const char *source;
	json_t *hdr = NULL;
	struct syms_cache *syms = NULL;
	struct ksyms *ksyms = NULL;
	struct stackframes *sf = NULL;
	struct ring_buffer *notes = NULL;
	uint64_t duration, records = 0, total = 0, counters[STACKS_NCOUNTERS];

	marple_init(argc, argv);
	parse_options(argc, argv);
	duration = collector_duration(argc, argv, optind);
	collector_start(opt.verbose);
	if (opt.pid)
		require_process(opt.pid);

	skel = memevents_bpf__open();
	if (!skel) {
		warnmsg("cannot open the BPF program: %s", collector_strerror(-errno));
		goto cleanup;
	}
	skel->rodata->targ_tgid = (uint32_t)opt.pid;
	skel->rodata->want_user = !opt.kernel_only;
	skel->rodata->want_kernel = !opt.user_only;
	bpf_map__set_max_entries(skel->maps.stacks, (uint32_t)opt.stack_storage);
	err = memevents_bpf__load(skel);
	if (err) {
		warnmsg("cannot load the BPF program: %s", collector_strerror(err));
		goto cleanup;
	}
	if (!opt.faults) {
		precise = attach_precise(skel, &links, &nlinks) == 0;
		if (!precise)
			warnmsg("no precise memory sampling here (no hardware PMU with mem-%s): "
				"counting page faults by stack", opt.event);
	}
	if (!precise) {
		static const char *const tps[] = { "page_fault_user", "page_fault_kernel" };
		struct bpf_program *progs[] = { skel->progs.fault_user, skel->progs.fault_kernel };
		for (int i = 0; i < 2; i++) {
			if (!collector_tracepoint_exists("exceptions", tps[i]))
				fatal(EXIT_DATA, "tracepoint exceptions:%s missing on this kernel", tps[i]);
			fault_links[i] = bpf_program__attach(progs[i]);
			if (!fault_links[i]) {
				warnmsg("cannot attach to exceptions:%s: %s", tps[i], collector_strerror(-errno));
				goto cleanup;
			}
		}
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
	if (opt.pid)
		syms_cache_snapshot(syms, opt.pid);
	source = precise ? (!strcmp(opt.event, "loads") ? "mem-loads" : "mem-stores") : "page-faults";
	hdr = section_header_new("memevents", DATATYPE_STACK);
	json_object_set_new(hdr, "units", json_pack("{s:s}", "weight", precise ? "samples" : "faults"));
	json_object_set_new(hdr, "labels", json_pack("{s:s}", "weight", precise ? "memory access samples" : "page faults"));
	json_t *o = json_pack("{s:s}", "source", source);
	if (opt.pid)
		json_object_set_new(o, "pid", json_integer(opt.pid));
	if (precise)
		json_object_set_new(o, "period", json_integer((json_int_t)opt.period));
	json_object_set_new(hdr, "options", o);
	collector_ready(duration);
	while (!collector_should_stop())
		ring_buffer__poll(notes, collector_poll_timeout_ms(100));
	for (int i = 0; i < nlinks; i++)
		bpf_link__destroy(links[i]);
	nlinks = 0;
	for (int i = 0; i < 2; i++) {
		bpf_link__destroy(fault_links[i]);
		fault_links[i] = NULL;
	}
	ring_buffer__consume(notes);

	if (stream_write_json(stdout, hdr) < 0)
		goto cleanup;

	int fd = bpf_map__fd(skel->maps.counts);
	struct stack_key key, next, *prev = NULL;
	uint64_t val;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &val) != 0)
			continue;
		stackframes_key(sf, &key);
		tpstack_write(sf, stdout, val);
		records++;
		total += val;
	}
	stacks_read_counters(bpf_map__fd(skel->maps.stack_counters), counters);
	json_t *tr = section_trailer_new(records, 0, 0, collector_end_reason());
	uint64_t dropped = stacks_trailer_add(tr, counters, sf);
	json_object_set_new(tr, "dropped", json_integer((json_int_t)dropped));
	json_object_set_new(tr, "source", json_string(source));
	json_object_set_new(tr, precise ? "samples" : "faults", json_integer((json_int_t)total));
	stream_write_json(stdout, tr);
	json_decref(tr);
	rc = EXIT_OK;

cleanup:
	for (int i = 0; i < nlinks; i++)
		bpf_link__destroy(links[i]);
	free(links);
	for (int i = 0; i < 2; i++)
		bpf_link__destroy(fault_links[i]);
	ring_buffer__free(notes);
	stackframes_free(sf);
	syms_cache_free(syms);
	ksyms_free(ksyms);
	json_decref(hdr);
	memevents_bpf__destroy(skel);
	if (rc == EXIT_OK)
		close_stdout();
	return rc;
}
