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
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfmap.h"
#include "collector.h"
#include "corebtf.h"
#include "memevents.skel.h"
#include "selffilter.h"
#include "stackcollector.h"
#include "stackdrain.h"
#include "stackframes.h"
#include "stacksbpf.h"
#include "stream.h"
#include "tpstack.h"
#include "unwindtables.h"
#include "util.h"

static struct stackcollector sc = {
	.synopsis = "[-p PID] [--faults | -e loads|stores] [options] [DURATION]",
	.about = "Sample memory accesses by call stack with the CPU's precise memory events\n"
		 "where it has them, otherwise count page faults by call stack; write one\n"
		 "marple stack section.\n",
	.footer = "Needs root.  See marple-memevents(1).\n",
};

static struct {
	int faults;
	const char *event;
	uint64_t period;
} opt = { .event = "loads", .period = 10007 };

static void own_option(int key, const char *arg)
{
	switch (key) {
	case 'f': opt.faults = 1; break;
	case 'e':
		if (strcmp(arg, "loads") && strcmp(arg, "stores"))
			marple_usage_error("-e '%s': use loads or stores", arg);
		opt.event = arg;
		break;
	case 'P': opt.period = marple_opt_u64("--period", arg, 100, 1ull << 40); break;
	}
}

static const struct sc_option options[] = {
	SC_PID("only this process"),
	{ 0, 'f', "faults", NULL, "page faults even where precise sampling exists" },
	{ 0, 'e', "event", "EV", "loads (default) or stores, for precise sampling" },
	{ 0, 'P', "period", "N", "one precise sample every N events (default 10007)" },
	SC_DESCRIBE("kind=collector\tsections=memevents:stack:treemap\tevery=yes"
		"\tmeasures=page faults (memory accesses where a PMU has them), by stack"),
	SC_STACK_OPTIONS,
	{ 0 }
};

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
		if (read_line(path, type, sizeof(type)) < 0 || marple_parse_u64(type, 0, UINT32_MAX, &t) < 0)
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

/* Open the precise event a on every CPU and attach the program; 0, or -1
 * with nothing left open (the caller falls back to page faults). */
static int attach_precise(struct memevents_bpf *skel, struct perf_event_attr *a, struct bpf_link ***links,
			  int *nlinks)
{
	int ncpu = libbpf_num_possible_cpus();

	if (ncpu <= 0)
		return -1;
	*links = marple_calloc((size_t)ncpu, sizeof(**links));
	for (int cpu = 0; cpu < ncpu; cpu++) {
		int fd = (int)syscall(SYS_perf_event_open, a, sc.pid ? sc.pid : -1, sc.pid ? -1 : cpu, -1,
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
		if (sc.pid)
			break;
	}
	return 0;
fail:
	for (int i = 0; i < *nlinks; i++)
		bpf_link__destroy((*links)[i]);
	*nlinks = 0;
	return -1;
}

static void write_record(const struct stackdrain_entry *e, void *arg)
{
	uint64_t v = *(const uint64_t *)e->value;

	stackframes_key_stacks(sc.sf, e->key, e->user, e->kern);
	tpstack_write(sc.sf, stdout, v);
	*(uint64_t *)arg += v;
}

/* main's capture, as the lifecycle's callbacks see it */
static struct {
	struct memevents_bpf *skel;
	struct bpf_link ***links, **fault_links;
	int *nlinks, precise;
	const char *source;
	json_t *hdr;
	uint64_t *total;
} cap;

static void stop_events(void *arg)
{
	(void)arg;
	for (int i = 0; i < *cap.nlinks; i++)
		bpf_link__destroy((*cap.links)[i]);
	*cap.nlinks = 0;
	for (int i = 0; i < 2; i++) {
		bpf_link__destroy(cap.fault_links[i]);
		cap.fault_links[i] = NULL;
	}
	ring_buffer__consume(sc.notes);
}

/* One section: at every --every interval and at the end. */
/* the section's own trailer members; its total from 0 again */
static void own_trailer(json_t *tr, void *arg)
{
	(void)arg;
	json_object_set_new(tr, "source", json_string(cap.source));
	json_object_set_new(tr, cap.precise ? "samples" : "faults", json_integer((json_int_t)*cap.total));
	*cap.total = 0;
}

static int write_section(void *arg, int last)
{
	(void)arg;
	(void)last;
	return stackcollector_write_section(&sc, cap.skel->obj, cap.hdr, own_trailer, NULL);
}

int main(int argc, char **argv)
{
	struct memevents_bpf *skel = NULL;
	struct bpf_link **links = NULL, *fault_links[2] = { 0 };
	int nlinks = 0, precise = 0, rc = EXIT_DATA, err;
	const char *source;
	json_t *hdr = NULL;
	uint64_t total = 0;

	marple_init(argc, argv);
	if (stackcollector_parse(&sc, options, own_option, argc, argv))
		return EXIT_OK;	/* -h */
	if (stackcollector_start(&sc) < 0)
		goto cleanup;

	skel = memevents_bpf__open_opts(corebtf_opts(memevents_bpf__elf_bytes));
	if (!skel) {
		marple_warn("cannot open the BPF program: %s", collector_strerror(-errno));
		goto cleanup;
	}
	skel->rodata->targ_tgid = (uint32_t)sc.pid;
	skel->rodata->want_user = !sc.kernel_only;
	skel->rodata->want_kernel = !sc.user_only;
	stacksbpf_set_storage(skel->obj, sc.stack_storage ? (uint32_t)sc.stack_storage : STACKSBPF_STORAGE_BUSY);
	skel->rodata->stacks_unwind = (uint32_t)sc.unwind;
	sc.finish_cuts = stackcollector_cuts_wanted(&sc);
	skel->rodata->stacks_send_cuts = sc.finish_cuts;
	skel->rodata->stacks_python = stackcollector_python_wanted(&sc);
	if (stackcollector_unwind_size(&sc, skel->obj) < 0)
		goto cleanup;
	/* the precise events' program only where this CPU names such an event:
	 * each program loaded is the stack code verified again (a third of the
	 * start's CPU) */
	struct perf_event_attr pa;
	int can_precise = !opt.faults && precise_attr(opt.event, &pa) == 0;
	if (!can_precise)
		bpf_program__set_autoload(skel->progs.mem_sample, false);
	err = memevents_bpf__load(skel);
	if (err) {
		marple_warn("cannot load the BPF program: %s", collector_strerror(err));
		goto cleanup;
	}
	if (selffilter_setup(skel->obj, sc.include_self) < 0)
		goto cleanup;
	if (!opt.faults) {
		precise = can_precise && attach_precise(skel, &pa, &links, &nlinks) == 0;
		if (!precise)
			marple_warn("no precise memory sampling here (no hardware PMU with mem-%s): "
				"counting page faults by stack", opt.event);
	}
	if (!precise) {
		static const char *const tps[] = { "page_fault_user", "page_fault_kernel" };
		for (int i = 0; i < 2; i++) {
			if (!collector_tracepoint_exists("exceptions", tps[i]))
				marple_fatal(EXIT_DATA, "tracepoint exceptions:%s missing on this kernel", tps[i]);
			fault_links[i] = bpf_program__attach_raw_tracepoint(skel->progs.fault, tps[i]);
			if (!fault_links[i]) {
				marple_warn("cannot attach to exceptions:%s: %s", tps[i], collector_strerror(-errno));
				goto cleanup;
			}
		}
	}
	if (stackcollector_symbols(&sc, skel->obj, !sc.user_only) < 0)
		goto cleanup;
	/* the counts are drained while capturing, written at the end */
	if (stackcollector_drain(&sc, skel->obj, sizeof(struct stack_key), sizeof(uint64_t), 0, write_record,
				 &total) < 0)
		goto cleanup;
	source = precise ? (!strcmp(opt.event, "loads") ? "mem-loads" : "mem-stores") : "page-faults";
	hdr = stream_section_header_new("memevents", DATATYPE_STACK);
	json_object_set_new(hdr, "units", json_pack("{s:s}", "weight", precise ? "samples" : "faults"));
	json_object_set_new(hdr, "labels", json_pack("{s:s}", "weight", precise ? "memory access samples" : "page faults"));
	json_t *o = json_pack("{s:s}", "source", source);
	if (sc.pid)
		json_object_set_new(o, "pid", json_integer(sc.pid));
	if (precise)
		json_object_set_new(o, "period", json_integer((json_int_t)opt.period));
	json_object_set_new(o, "unwind", json_string(unwindtables_mode_name(sc.unwind)));
	json_object_set_new(hdr, "options", o);
	cap.skel = skel;
	cap.links = &links;
	cap.fault_links = fault_links;
	cap.nlinks = &nlinks;
	cap.precise = precise;
	cap.source = source;
	cap.hdr = hdr;
	cap.total = &total;
	struct stackcollector_run lifecycle = { .stop = stop_events, .section = write_section };
	if (stackcollector_run(&sc, &lifecycle) < 0)
		goto cleanup;
	rc = EXIT_OK;

cleanup:
	for (int i = 0; i < nlinks; i++)
		bpf_link__destroy(links[i]);
	free(links);
	for (int i = 0; i < 2; i++)
		bpf_link__destroy(fault_links[i]);
	stackcollector_free(&sc);
	json_decref(hdr);
	memevents_bpf__destroy(skel);
	if (rc == EXIT_OK)
		marple_close_stdout();
	return rc;
}
