/* marple-memleak — memory still allocated at the end of a capture, by process
 * and call stack: libc's malloc family and mmap (uprobes + uretprobes), or the
 * kernel's kmalloc and kmem_cache allocations (-K, kmem tracepoints).
 *
 * Writes two sections: a stack section of outstanding bytes (allocations
 * older than --min-age), then a point section "memusage": each second, the
 * outstanding bytes of the top processes (x seconds since start, y bytes).
 * What an image replaced by an exec had allocated went with it: counted in
 * the trailer (bytes_of_replaced_images), not reported.
 *
 *   $ marple-memleak -c ./leaky
 *   {"marple":1,"interface":"memleak","datatype":"stack",...,"units":{"weight":"bytes"}}
 *   1000000#leaky;__libc_start_call_main;main;leak_here;malloc
 *   {"trailer":1,"records":1,...,"allocations":200,"ended":"eof"}
 *   {"marple":1,"interface":"memusage","datatype":"point",...,"units":{"x":"s","y":"bytes"}}
 *   0.5,1000000,leaky,comm=leaky,pid=4242,allocs=200
 *   {"trailer":1,"records":1,...}
 *
 * Usage: marple-memleak [-p PID | -c CMD | -K] [--min-age MS] [--sample-every N] [duration]
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <signal.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bpfmap.h"
#include "collector.h"
#include "corebtf.h"
#include "memleak.h"
#include "memleak.skel.h"
#include "selffilter.h"
#include "stackcollector.h"
#include "stackdrain.h"
#include "stackframes.h"
#include "stacksbpf.h"
#include "stream.h"
#include "tpstack.h"
#include "uprobes.h"
#include "util.h"
#include "weight.h"

static struct stackcollector sc = {
	.synopsis = "[-p PID | -c CMD | -K] [--min-age MS] [--sample-every N] [options] [DURATION]",
	.about = "Report memory still allocated at the end, by call stack (a stack section in\n"
		 "bytes), and each process's outstanding bytes over time (a point section).\n",
	.footer = "Needs root.  Every malloc and free traps into the kernel: expect a traced\n"
		  "malloc-heavy program to run several times slower.  No --every: what is\n"
		  "outstanding is the state at the end, one section.  See marple-memleak(1).\n",
};

static struct {
	int kernel;
	uint64_t min_age_ns;
	uint64_t max_allocs;
	uint64_t top;
	uint64_t interval_ns;
} opt = { .top = 10, .interval_ns = 1000000000ull };

enum { OPT_MAX_ALLOCS = 256 };

static void own_option(int key, const char *arg)
{
	switch (key) {
	case 'K': opt.kernel = 1; break;
	case 'm': opt.min_age_ns = marple_opt_u64("--min-age", arg, 0, UINT64_MAX / 1000000) * 1000000; break;
	case 'T':
	case 't': opt.top = marple_opt_u64("--top", arg, 1, 1u << 20); break;
	case 'i':
		if (marple_parse_duration_ns(arg, &opt.interval_ns) < 0 || opt.interval_ns < 10000000)
			marple_usage_error("--interval '%s' is not a time of at least 10ms", arg);
		break;
	case OPT_MAX_ALLOCS: opt.max_allocs = marple_opt_u64("--max-allocs", arg, 1024, 1u << 26); break;
	}
}

static const struct sc_option options[] = {
	SC_PID("only this process (default: every process)"),
	SC_COMMAND("start CMD, trace it, end when it exits"),
	{ 0, 'K', "kernel", NULL, "kernel allocations (kmalloc, kmem_cache) instead of libc's" },
	{ 0, 'm', "min-age", "MS", "only allocations at least MS milliseconds old (default 0)" },
	SC_SAMPLE_EVERY("track one allocation in N, weighted by N (less overhead)"),
	SC_LIB("the C library to probe (default: the libc in use)"),
	{ 0, 'T', "top", "N", "processes per second in the memusage section (default 10)" },
	{ 0, 't', "", "N", NULL },	/* the old spelling: -t is a thread's elsewhere */
	{ 0, 'i', "interval", "TIME", "memusage sampling interval (default 1s)" },
	{ 0, OPT_MAX_ALLOCS, "max-allocs", "N", "allocations tracked at once (default 1048576; with -K\n"
						 "262144, allocated up front)" },
	SC_UNWIND(""),
	SC_NO_PYTHON,
	SC_NO_INLINE,
	SC_STACK_STORAGE,
	SC_DRAIN_EVERY,
	SC_ANNOTATE,
	SC_ADDRESSES,
	SC_INCLUDE_SELF,
	SC_VERBOSE,
	SC_DESCRIBE("kind=collector\tsections=memleak:stack:treemap,memusage:point:stackplot\tevery=no"
		"\tmeasures=memory not freed by the end, by stack (bytes); usage a second"),
	SC_HELP,
	{ 0 }
};

/* ---- memusage: per-process outstanding bytes, sampled while tracing ---- */

struct usage_point {
	double x;
	int64_t bytes, allocs;
	uint32_t tgid;
	char comm[MARPLE_COMM_LEN];
};

static struct usage_point *points;
static size_t npoints, points_cap;

static int cmp_proc(const void *a, const void *b)
{
	const struct usage_point *p = a, *q = b;
	return p->bytes < q->bytes ? 1 : p->bytes > q->bytes ? -1 : (p->tgid > q->tgid) - (p->tgid < q->tgid);
}

/* Has process tgid exited?  (Its memory went back with it.)  One answer per
 * process, kept for the run of same-tgid entries collect_groups sees. */
static int exited(uint32_t tgid)
{
	static uint32_t last;
	static int last_gone;

	if (tgid != last) {
		last = tgid;
		last_gone = kill((pid_t)tgid, 0) != 0 && errno == ESRCH;
	}
	return last_gone;
}

/* Every process traced: those that exited took their memory with them. */
static int every_process(void)
{
	return !sc.pid && !sc.cmd && !opt.kernel;
}

struct usage_sample {
	double x;
	struct usage_point *now;
	size_t n, cap;
};

static void add_proc(const void *key, const void *value, void *arg)
{
	uint32_t tgid = *(const uint32_t *)key;
	const struct memleak_proc *p = value;
	struct usage_sample *s = arg;

	if (p->bytes <= 0 || (every_process() && exited(tgid)))
		return;
	s->now = marple_grow(s->now, &s->cap, s->n + 1, sizeof(*s->now));
	s->now[s->n] = (struct usage_point){ .x = s->x, .bytes = p->bytes, .allocs = p->allocs, .tgid = tgid };
	memcpy(s->now[s->n].comm, p->comm, sizeof(p->comm));
	s->n++;
}

/* Read the procs map and keep the top processes by outstanding bytes. */
static void sample_usage(int procs_fd, double x)
{
	struct usage_sample s = { .x = x };

	bpfmap_each(procs_fd, sizeof(uint32_t), sizeof(struct memleak_proc), add_proc, &s);
	if (s.n == 0)
		return;
	qsort(s.now, s.n, sizeof(*s.now), cmp_proc);
	if (s.n > opt.top)
		s.n = opt.top;
	points = marple_grow(points, &points_cap, npoints + s.n, sizeof(*points));
	memcpy(points + npoints, s.now, s.n * sizeof(*s.now));
	npoints += s.n;
	free(s.now);
}

static json_t *usage_header(void)
{
	json_t *hdr = stream_section_header_new("memusage", DATATYPE_POINT);

	json_object_set_new(hdr, "units", json_pack("{s:s,s:s}", "x", "s", "y", "bytes"));
	json_object_set_new(hdr, "labels", json_pack("{s:s,s:s,s:s}", "x", "time", "y", "outstanding bytes",
						     "info", "process"));
	json_object_set_new(hdr, "options", json_pack("{s:I,s:s}", "top", (json_int_t)opt.top, "source",
						      opt.kernel ? "kernel" : "libc"));
	return hdr;
}

static void write_usage(json_t *hdr, const char *ended)
{
	char pid[16], allocs[24];

	stream_write_json(stdout, hdr);
	for (size_t i = 0; i < npoints; i++) {
		struct usage_point *p = &points[i];
		size_t clen = strnlen(p->comm, sizeof(p->comm));
		snprintf(pid, sizeof(pid), "%u", p->tgid);
		snprintf(allocs, sizeof(allocs), "%" PRId64, p->allocs);
		struct field f[3] = {
			{ { "comm", 4 }, { p->comm, clen } },
			{ { "pid", 3 }, { pid, strlen(pid) } },
			{ { "allocs", 6 }, { allocs, strlen(allocs) } },
		};
		stream_write_point(stdout, p->x, (double)p->bytes, (struct mstr){ p->comm, clen }, f, 3);
	}
	json_t *tr = stream_section_trailer_new(npoints, 0, 0, ended);
	collector_memory_trailer(tr);
	corebtf_trailer(tr);
	stream_write_json(stdout, tr);
	json_decref(tr);
}

/* ---- the image each process ran at the end ---- */

struct image {
	uint32_t tgid, exec_id;
};

static struct image *images;
static size_t nimages, images_cap;

static int cmp_image(const void *a, const void *b)
{
	const struct image *p = a, *q = b;
	return (p->tgid > q->tgid) - (p->tgid < q->tgid);
}

static void add_image(const void *key, const void *value, void *arg)
{
	(void)arg;
	images = marple_grow(images, &images_cap, nimages + 1, sizeof(*images));
	images[nimages++] = (struct image){ *(const uint32_t *)key, ((const struct memleak_proc *)value)->exec_id };
}

/* Read the current image of each process from the procs map. */
static void read_images(int procs_fd)
{
	bpfmap_each(procs_fd, sizeof(uint32_t), sizeof(struct memleak_proc), add_image, NULL);
	if (nimages)
		qsort(images, nimages, sizeof(*images), cmp_image);
}

/* Was the allocation made by an image its process replaced since (exec)?
 * Its memory went with the old address space. */
static int replaced(const struct memleak_key *k)
{
	struct image want = { .tgid = k->tgid }, *cur;

	if (opt.kernel)
		return 0;
	cur = bsearch(&want, images, nimages, sizeof(*images), cmp_image);
	return cur && cur->exec_id != k->exec_id;
}

/* ---- the outstanding allocations, grouped by process, image and stack ---- */

struct group {
	uint32_t tgid, exec_id;
	int32_t stack;
	uint64_t bytes, count;
};

static int cmp_group_key(const void *a, const void *b)
{
	const struct group *p = a, *q = b;
	if (p->tgid != q->tgid)
		return p->tgid < q->tgid ? -1 : 1;
	if (p->exec_id != q->exec_id)
		return p->exec_id < q->exec_id ? -1 : 1;
	return (p->stack > q->stack) - (p->stack < q->stack);
}

static int cmp_group_bytes(const void *a, const void *b)
{
	const struct group *p = a, *q = b;
	return p->bytes < q->bytes ? 1 : p->bytes > q->bytes ? -1 : cmp_group_key(a, b);
}

struct groups {
	uint64_t now;			/* the end of the capture */
	struct group *g;
	size_t n, cap;
	uint64_t young, gone;		/* younger than --min-age; bytes of exited processes */
	uint64_t replaced;		/* bytes of images replaced by an exec */
};

static void add_alloc(const void *key, const void *value, void *arg)
{
	const struct memleak_key *k = key;
	const struct memleak_alloc *a = value;
	struct groups *gs = arg;

	if (replaced(k)) {
		gs->replaced += a->size;
		return;
	}
	if (gs->now - a->ts < opt.min_age_ns) {
		gs->young++;
		return;
	}
	/* every process: those that exited while traced freed all at exit */
	if (every_process() && exited(a->tgid)) {
		gs->gone += a->size;
		return;
	}
	gs->g = marple_grow(gs->g, &gs->cap, gs->n + 1, sizeof(*gs->g));
	/* by the stack's contents: the same stack stored in both sets, or in
	 * two generations of one, is one group */
	gs->g[gs->n++] = (struct group){ .tgid = a->tgid, .exec_id = k->exec_id,
					 .stack = stackdrain_number_kept(sc.drain, a->stack, a->gen),
					 .bytes = a->size, .count = sc.sample_every };
}

/* The outstanding allocations grouped by process, image and stack, most bytes first. */
static void collect_groups(int allocs_fd, struct groups *gs, uint64_t *nallocs)
{
	size_t m = 0;

	bpfmap_each(allocs_fd, sizeof(struct memleak_key), sizeof(struct memleak_alloc), add_alloc, gs);
	if (gs->n)
		qsort(gs->g, gs->n, sizeof(*gs->g), cmp_group_key);
	for (size_t i = 0; i < gs->n; i++) {
		*nallocs += gs->g[i].count;
		if (m && !cmp_group_key(&gs->g[m - 1], &gs->g[i])) {
			gs->g[m - 1].bytes += gs->g[i].bytes;
			gs->g[m - 1].count += gs->g[i].count;
		} else {
			gs->g[m++] = gs->g[i];
		}
	}
	if (m)
		qsort(gs->g, m, sizeof(*gs->g), cmp_group_bytes);
	gs->n = m;
}

static json_t *make_header(const char *lib, pid_t target)
{
	json_t *o, *hdr = stackcollector_header(&sc, "memleak", "bytes", "outstanding bytes", target, &o);
	/* bytes in use: a level, so intervals average (Pyroscope), never add */
	weight_meaning_set(hdr, "bytes", "inuse_space", 1);

	json_object_set_new(o, "source", json_string(opt.kernel ? "kernel" : "libc"));
	if (lib)
		json_object_set_new(o, "library", stream_json_string_bytes(lib, strlen(lib)));
	json_object_set_new(o, "min_age_ms", json_integer((json_int_t)(opt.min_age_ns / 1000000)));
	json_object_set_new(o, "sample_every", json_integer((json_int_t)sc.sample_every));
	return hdr;
}

/* uprobes on libc: entry (and return) probes for each allocator, entry probes
 * for free and munmap. */
struct probe {
	const char *func;
	struct bpf_program *prog;
	int retprobe;
	uint64_t cookie;	/* a return's: MEMLEAK_RET_* */
};

enum { NKPROGS = 4, NUPROBES = 20 };

static void list_kprogs(struct memleak_bpf *skel, struct bpf_program *k[NKPROGS])
{
	k[0] = skel->progs.kmalloc, k[1] = skel->progs.kmem_cache_alloc, k[2] = skel->progs.kfree;
	k[3] = skel->progs.kmem_cache_free;
}

static void list_uprobes(struct memleak_bpf *skel, struct probe u[NUPROBES])
{
	struct probe all[NUPROBES] = {
		{ "malloc", skel->progs.malloc_enter, 0 },	{ "malloc", skel->progs.alloc_exit, 1 },
		{ "calloc", skel->progs.calloc_enter, 0 },	{ "calloc", skel->progs.alloc_exit, 1 },
		{ "realloc", skel->progs.realloc_enter, 0 },	{ "realloc", skel->progs.alloc_exit, 1 },
		{ "memalign", skel->progs.memalign_enter, 0 },	{ "memalign", skel->progs.alloc_exit, 1 },
		{ "aligned_alloc", skel->progs.memalign_enter, 0 }, { "aligned_alloc", skel->progs.alloc_exit, 1 },
		{ "valloc", skel->progs.valloc_enter, 0 },	{ "valloc", skel->progs.alloc_exit, 1 },
		{ "pvalloc", skel->progs.valloc_enter, 0 },	{ "pvalloc", skel->progs.alloc_exit, 1 },
		{ "posix_memalign", skel->progs.posix_memalign_enter, 0 },
		{ "posix_memalign", skel->progs.alloc_exit, 1, MEMLEAK_RET_STATUS },
		{ "mmap", skel->progs.mmap_enter, 0 },		{ "mmap", skel->progs.alloc_exit, 1, MEMLEAK_RET_MMAP },
		{ "free", skel->progs.free_enter, 0 },		{ "munmap", skel->progs.munmap_enter, 0 },
	};
	memcpy(u, all, sizeof(all));
}

/* The sweep (stackdrain's thread, every 16 drains): the stacks the
 * outstanding allocations name, and, system-wide, the allocations of
 * processes that have exited purged from the table (a process that exits
 * frees everything at once, and the table would fill with the dead: a
 * 30-minute capture beside a build and a test suite left 99 M allocations
 * untracked).  Their bytes count as exited processes'. */
struct sweep {
	struct stackdrain *d;
	struct memleak_bpf *skel;
	unsigned char *keys;		/* of the dead processes' allocations */
	size_t nkeys, cap;
	uint32_t seen_tgid[1024];	/* whether a tgid is gone, by tgid % 1024 */
	int seen_gone[1024];
};
static uint64_t purged_bytes, purged_allocs;	/* read once the sweep is joined */

static int sweep_gone(struct sweep *w, uint32_t tgid)
{
	uint32_t k = tgid % 1024;

	if (w->seen_tgid[k] != tgid) {
		w->seen_tgid[k] = tgid;
		w->seen_gone[k] = kill((pid_t)tgid, 0) != 0 && errno == ESRCH;
	}
	return w->seen_gone[k];
}

static void sweep_one(const void *key, const void *value, void *arg)
{
	struct sweep *w = arg;
	struct memleak_alloc a;

	memcpy(&a, value, sizeof(a));
	if (every_process() && a.tgid && sweep_gone(w, a.tgid)) {
		w->keys = marple_grow(w->keys, &w->cap, (w->nkeys + 1) * sizeof(struct memleak_key), 1);
		memcpy(w->keys + w->nkeys++ * sizeof(struct memleak_key), key, sizeof(struct memleak_key));
		purged_bytes += a.size;
		purged_allocs++;
		return;
	}
	stackdrain_keep(w->d, a.stack, a.gen);
}

static void still_named(struct stackdrain *d, void *skel)
{
	struct sweep w = { .d = d, .skel = skel };
	int fd = bpf_map__fd(w.skel->maps.allocs);

	bpfmap_each(fd, sizeof(struct memleak_key), sizeof(struct memleak_alloc), sweep_one, &w);
	for (size_t i = 0; i < w.nkeys; i++)
		bpf_map_delete_elem(fd, w.keys + i * sizeof(struct memleak_key));
	free(w.keys);
}

/* Before load: sizes, and only the programs of the mode (-K: the kmem
 * tracepoints, else the libc uprobes) loaded; 0 or -1 + message. */
static int configure(struct memleak_bpf *skel)
{
	struct bpf_program *kprogs[NKPROGS];
	struct probe uprobes[NUPROBES];

	skel->rodata->sample_every = sc.sample_every;
	skel->rodata->kernel_allocs = opt.kernel;
	stacksbpf_set_storage(skel->obj, sc.stack_storage ? (uint32_t)sc.stack_storage : STACKSBPF_STORAGE_BUSY);
	skel->rodata->stacks_unwind = (uint32_t)sc.unwind;
	skel->rodata->stacks_python = stackcollector_python_wanted(&sc);
	if (stackcollector_unwind_size(&sc, skel->obj) < 0)
		return -1;
	/* Kernel allocations: a table that allocated as it grew would trace
	 * itself (the kernel refills a growing map's elements with kmalloc) */
	if (opt.kernel) {
		struct bpf_map *m;
		bpf_object__for_each_map(m, skel->obj)
			if (bpf_map__type(m) == BPF_MAP_TYPE_HASH)
				bpf_map__set_map_flags(m, bpf_map__map_flags(m) & ~BPF_F_NO_PREALLOC);
		if (!opt.max_allocs)
			opt.max_allocs = 1 << 18;
	}
	if (!opt.max_allocs)
		opt.max_allocs = 1 << 20;
	bpf_map__set_max_entries(skel->maps.allocs, (uint32_t)opt.max_allocs);
	list_kprogs(skel, kprogs);
	list_uprobes(skel, uprobes);
	if (opt.kernel) {
		static const char *const tps[NKPROGS] = { "kmalloc", "kmem_cache_alloc", "kfree", "kmem_cache_free" };
		for (size_t i = 0; i < NKPROGS; i++)
			if (!collector_tracepoint_exists("kmem", tps[i]))
				marple_fatal(EXIT_DATA, "tracepoint kmem:%s missing on this kernel", tps[i]);
		for (size_t i = 0; i < NUPROBES; i++)
			bpf_program__set_autoload(uprobes[i].prog, false);
	} else {
		for (size_t i = 0; i < NKPROGS; i++)
			bpf_program__set_autoload(kprogs[i], false);
	}
	return 0;
}

/* Attach the loaded programs into links[] (*nlinks of them); 0 or -1 + message. */
static int attach_probes(struct memleak_bpf *skel, const char *lib, pid_t target, struct bpf_link **links,
			 size_t *nlinks)
{
	struct bpf_program *kprogs[NKPROGS];
	struct probe uprobes[NUPROBES];

	list_kprogs(skel, kprogs);
	list_uprobes(skel, uprobes);
	if (opt.kernel) {
		for (size_t i = 0; i < NKPROGS; i++) {
			links[*nlinks] = bpf_program__attach(kprogs[i]);
			if (!links[*nlinks]) {
				marple_warn("cannot attach to kmem:%s: %s", bpf_program__name(kprogs[i]),
					collector_strerror(-errno));
				return -1;
			}
			(*nlinks)++;
		}
		return 0;
	}
	/* free(NULL) does nothing: probe free past its NULL check */
	size_t free_off = uprobes_past_null_check(lib, "free");
	/* the return probes first (pass 0), then the entries: every call whose
	 * entry is seen returns to us (one begun before its return probe never would) */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < NUPROBES; i++) {
			if ((uprobes[i].retprobe ? 0 : 1) != pass)
				continue;
			size_t off = uprobes[i].prog == skel->progs.free_enter ? free_off : 0;
			links[*nlinks] = uprobes_attach_at(uprobes[i].prog, target ? target : -1, lib,
							   uprobes[i].func, off, uprobes[i].retprobe, uprobes[i].cookie);
			if (!links[*nlinks])
				return -1;
			(*nlinks)++;
		}
	return 0;
}

/* One stack record per group of outstanding allocations, named by the comm
 * of its process from the per-process table. */
static void write_stacks(struct memleak_bpf *skel, struct groups *gs, uint64_t *nallocs)
{
	read_images(bpf_map__fd(skel->maps.procs));
	collect_groups(bpf_map__fd(skel->maps.allocs), gs, nallocs);
	for (size_t i = 0; i < gs->n; i++) {
		struct memleak_proc p = { 0 };
		uint64_t ips[MARPLE_STACK_DEPTH];
		struct stack_ips stack = stackdrain_stack(sc.drain, gs->g[i].stack, ips);
		bpf_map_lookup_elem(bpf_map__fd(skel->maps.procs), &gs->g[i].tgid, &p);
		stackframes_begin(sc.sf, p.comm[0] ? p.comm : "[unknown]");
		if (opt.kernel)
			stackframes_kernel_stack(sc.sf, stack);
		else
			stackframes_user_stack(sc.sf, (pid_t)gs->g[i].tgid, gs->g[i].exec_id, stack);
		tpstack_write(sc.sf, stdout, gs->g[i].bytes);
	}
}

static void write_trailer(struct memleak_bpf *skel, const struct groups *gs, uint64_t nallocs, const char *ended)
{
	uint64_t ml[ML_NCOUNTERS];

	for (uint32_t i = 0; i < ML_NCOUNTERS; i++)
		ml[i] = bpfmap_percpu_sum(bpf_map__fd(skel->maps.ml_counters), i);
	json_t *tr = stackcollector_trailer(&sc, skel->obj, gs->n, ml[ML_ALLOCS_FULL] + ml[ML_PENDING_FULL] + ml[ML_CALLS_UNRETURNED],
					     ended);
	json_object_set_new(tr, "allocations", json_integer((json_int_t)nallocs));
	json_object_set_new(tr, "younger_than_min_age", json_integer((json_int_t)gs->young));
	json_object_set_new(tr, "bytes_of_exited_processes", json_integer((json_int_t)(gs->gone + purged_bytes)));
	json_object_set_new(tr, "allocations_of_exited_processes_purged", json_integer((json_int_t)purged_allocs));
	json_object_set_new(tr, "bytes_of_replaced_images", json_integer((json_int_t)gs->replaced));
	json_object_set_new(tr, "allocs_table_full", json_integer((json_int_t)ml[ML_ALLOCS_FULL]));
	json_object_set_new(tr, "calls_table_full", json_integer((json_int_t)ml[ML_PENDING_FULL]));
	json_object_set_new(tr, "calls_unreturned", json_integer((json_int_t)ml[ML_CALLS_UNRETURNED]));
	json_object_set_new(tr, "reservations", json_integer((json_int_t)ml[ML_RESERVATIONS]));
	json_object_set_new(tr, "reserved_bytes", json_integer((json_int_t)ml[ML_RESERVED_BYTES]));
	if (ml[ML_ALLOCS_FULL])
		marple_warn("%" PRIu64 " allocations not tracked: the table is full (raise --max-allocs)",
			ml[ML_ALLOCS_FULL]);
	stackdrain_trailer_add(sc.drain, tr);
	stackcollector_write_trailer(&sc, tr);
}

int main(int argc, char **argv)
{
	struct memleak_bpf *skel = NULL;
	struct bpf_link *links[24] = { 0 };
	size_t nlinks = 0;
	struct groups gs = { 0 };
	uint64_t start, next_sample, nallocs = 0;
	const char *ended;
	char *lib = NULL;
	json_t *hdr = NULL, *usage_hdr = NULL;
	pid_t target;
	int rc = EXIT_DATA, err;

	marple_init(argc, argv);
	if (stackcollector_parse(&sc, options, own_option, argc, argv))
		return EXIT_OK;	/* -h */
	if (stackcollector_start(&sc) < 0)
		goto cleanup;
	if (!opt.kernel && !(lib = stackcollector_libc(&sc)))
		goto cleanup;

	skel = memleak_bpf__open_opts(corebtf_opts(memleak_bpf__elf_bytes));
	if (!skel) {
		marple_warn("cannot open the BPF program: %s", collector_strerror(-errno));
		goto cleanup;
	}
	if (configure(skel) < 0)
		goto cleanup;
	if ((target = stackcollector_target(&sc)) < 0)
		goto cleanup;
	skel->rodata->targ_tgid = (uint32_t)target;
	err = memleak_bpf__load(skel);
	if (err) {
		marple_warn("cannot load the BPF program: %s", collector_strerror(err));
		goto cleanup;
	}
	if (selffilter_setup(skel->obj, sc.include_self) < 0)
		goto cleanup;
	if (attach_probes(skel, lib, target, links, &nlinks) < 0)
		goto cleanup;
	if (stackcollector_symbols(&sc, skel->obj, opt.kernel) < 0)
		goto cleanup;
	/* the allocations of exited processes are not named: nor kept their symbols */
	sc.forget_exited = every_process();
	/* the stacks of freed allocations are let go while capturing */
	if (stackcollector_drain(&sc, skel->obj, 0, 0, 0, NULL, NULL) < 0)
		goto cleanup;
	stackdrain_set_kept(sc.drain, still_named, skel);
	hdr = make_header(lib, target);	/* their start time is now */
	usage_hdr = usage_header();
	if (stackcollector_ready(&sc) < 0)
		goto cleanup;
	start = marple_now_monotonic_ns();
	next_sample = start + opt.interval_ns;

	while (stackcollector_poll(&sc)) {
		uint64_t now = marple_now_monotonic_ns();
		if (now >= next_sample) {
			sample_usage(bpf_map__fd(skel->maps.procs), (double)(now - start) / 1e9);
			next_sample += opt.interval_ns;
		}
	}
	skel->bss->stopped = 1;
	ring_buffer__consume(sc.notes);
	ended = stackcollector_ended(&sc);
	uint64_t end = marple_now_monotonic_ns();
	sample_usage(bpf_map__fd(skel->maps.procs), (double)(end - start) / 1e9);

	if (stream_write_json(stdout, hdr) < 0)
		goto cleanup;
	gs.now = end;
	write_stacks(skel, &gs, &nallocs);
	write_trailer(skel, &gs, nallocs, ended);
	write_usage(usage_hdr, ended);
	rc = EXIT_OK;

cleanup:
	if (rc == EXIT_OK)
		marple_close_stdout();		/* before the slow detaching */
	for (size_t i = 0; i < nlinks; i++)
		bpf_link__destroy(links[i]);
	free(gs.g);
	free(images);
	free(points);
	stackcollector_free(&sc);
	json_decref(hdr);
	json_decref(usage_hdr);
	memleak_bpf__destroy(skel);
	free(lib);
	return rc;
}
