/* marple-lock — contended locks: who waited on which lock, how long, and
 * who let them go.
 *
 * User space: every futex wait (syscalls:sys_enter_futex to sys_exit_futex:
 * mutexes, condition variables, joins, semaphores), with the stacks of the
 * waiter and of the FUTEX_WAKE caller that woke it — the holder that
 * released the lock — taken at sched_waking in its context.  The kernel:
 * lock:contention_begin to contention_end (mutexes, rwsems, spinlocks),
 * where the kernel has them (probed by attaching), with the waiter's stacks;
 * the kernel traces no release, so no holder.  Aggregated in the kernel by
 * lock, waiter stacks and holder stacks.
 * Writes one stack section weighted in microseconds of waiting; each record
 * is one lock's waiters with who released them, as an off-wake stack: the
 * lock first ([futex 0xADDR], [mutex 0xADDR]), the waiter root first, "--",
 * then the holder leaf first ending in its name (or how the wait ended when
 * no FUTEX_WAKE ended it: [timed out], [signal], [waker not seen]).  The
 * trailer lists each lock's contended waits, total and longest wait.
 *
 *   $ marple-lock -p 4242 10
 *   {"marple":1,"interface":"lock","datatype":"stack",...,"units":{"weight":"us","measure":"lock_wait",...}}
 *   1500000#[futex 0x55d0c0a04040];app;_start;...;want_lock;pthread_mutex_lock;...;futex_wait;--;...;pthread_mutex_unlock;hold_lock;...;app
 *   {"trailer":1,...,"locks":[{"lock":"futex 0x55d0c0a04040","pid":4242,"waits":812,"wait_us":1500000,"max_us":2210}],...}
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfmap.h"
#include "collector.h"
#include "hashtab.h"
#include "lock.h"
#include "lock.skel.h"
#include "selffilter.h"
#include "stackcollector.h"
#include "stackframes.h"
#include "stacksbpf.h"
#include "stream.h"
#include "syms.h"
#include "util.h"
#include "weight.h"

static struct stackcollector sc = {
	.synopsis = "[-p PID | -c CMD] [--futex-only] [options] [DURATION]",
	.about = "Contended locks: futex waits with the stacks of the waiter and of the\n"
		 "FUTEX_WAKE caller that ended them, and kernel lock waits\n"
		 "(lock:contention_begin/end), written as a marple stack section in us.\n",
	.footer = "Needs root.  See marple-lock(1).\n",
};

enum { OPT_FUTEX_ONLY = 256 };

static struct {
	int futex_only;
} opt;

static const struct sc_option options[] = {
	SC_PID("only this process's waits (its holders may be anywhere)"),
	SC_CHILDREN,
	SC_COMMAND("start CMD, trace it and the processes it starts\nuntil it exits (its output goes to stderr)"),
	{ 0, OPT_FUTEX_ONLY, "futex-only", NULL, "futex waits only: no kernel lock (lock:contention_begin)" },
	SC_DESCRIBE("kind=collector\tsections=lock:stack:flamegraph\tevery=no"
		    "\tmeasures=lock waits: who waited on which lock, and who released it (us)"),
	SC_UNWIND(""),
	SC_NO_PYTHON,
	SC_USER_ONLY,
	SC_KERNEL_ONLY,
	SC_ANNOTATE,
	SC_DELIMIT,
	SC_STACK_STORAGE,
	SC_ADDRESSES,
	SC_INCLUDE_SELF,
	SC_VERBOSE,
	SC_HELP,
	{ 0 }
};

static void own_option(int key, const char *arg)
{
	(void)arg;
	if (key == OPT_FUTEX_ONLY)
		opt.futex_only = 1;
}

/* A kernel lock's kind, from contention_begin's flags (LCB_F_* in
 * include/trace/events/lock.h: SPIN 1, READ 2, WRITE 4, RT 8, PERCPU 16,
 * MUTEX 32). */
static const char *kernel_kind(uint32_t flags)
{
	if (flags & 32)
		return flags & 8 ? "rt_mutex" : "mutex";
	if (flags & 1)
		return flags & 6 ? "rwlock" : "spinlock";
	if (flags & 6)
		return flags & 16 ? "percpu_rwsem" : "rwsem";
	return "lock";
}

/* "futex 0xADDR", "mutex 0xADDR", or a kernel lock that is a symbol of its
 * own, by its name ("mutex rtnl_mutex"). */
static void lock_name(const struct lock_key *k, char *buf, size_t size)
{
	uint64_t off = 1;
	const char *sym = NULL;

	if ((k->kind & 0xff) == LOCK_FUTEX) {
		snprintf(buf, size, "futex 0x%" PRIx64, (uint64_t)k->lock);
		return;
	}
	if (sc.ksyms)
		sym = syms_kernel_lookup(sc.ksyms, k->lock, &off);
	if (sym && off == 0)
		snprintf(buf, size, "%s %s", kernel_kind(k->kind >> 8), sym);
	else
		snprintf(buf, size, "%s 0x%" PRIx64, kernel_kind(k->kind >> 8), (uint64_t)k->lock);
}

/* The names a record is made of beyond sf's own frames, freed after it is
 * collected. */
static struct {
	char **v;
	size_t n, cap;
} names;

static const char *keep_name(const char *s)
{
	names.v = marple_grow(names.v, &names.cap, names.n + 1, sizeof(*names.v));
	return names.v[names.n++] = marple_strdup(s);
}

static void free_names(void)
{
	for (size_t i = 0; i < names.n; i++)
		free(names.v[i]);
	names.n = 0;
}

/* The top of a record: "--", then the holder's frames leaf first and its
 * name, or how the wait ended without one; nothing for a kernel lock. */
static void holder_tail(const struct lock_key *k, const char **tail, size_t *m)
{
	static const char *const ends[] = { [HOLDER_TIMEOUT] = "[timed out]", [HOLDER_SIGNAL] = "[signal]",
					    [HOLDER_UNSEEN] = "[waker not seen]" };
	const char *const *fr;
	size_t n;

	if (k->holder_how == HOLDER_NONE)
		return;
	tail[(*m)++] = "--";
	if (k->holder_how != HOLDER_SEEN) {
		tail[(*m)++] = k->holder_how < sizeof(ends) / sizeof(*ends) && ends[k->holder_how]
				       ? ends[k->holder_how] : "[waker not seen]";
		return;
	}
	stackframes_key(sc.sf, &k->holder);
	fr = stackframes_frames(sc.sf, &n);
	for (size_t i = n; i-- > 0;)	/* fr[0], its name, last */
		tail[(*m)++] = keep_name(fr[i]);
}

/* One aggregate as one record of t: [lock];waiter frames;--;holder frames. */
static void collect_key(const struct lock_key *k, uint64_t us, struct hashtab *t)
{
	static const char **tail;
	static size_t cap;
	const char *head[2];
	char lock[96], lockframe[104];
	size_t m = 0, n;

	tail = marple_grow(tail, &cap, 2 * MARPLE_STACK_DEPTH + 8, sizeof(*tail));
	holder_tail(k, tail, &m);	/* (it uses sf: before the waiter's stack) */
	lock_name(k, lock, sizeof(lock));
	snprintf(lockframe, sizeof(lockframe), "[%s]", lock);
	head[0] = keep_name(lockframe);
	head[1] = keep_name(k->waiter.comm);
	stackframes_begin(sc.sf, k->waiter.comm);
	stackframes_user_splice(sc.sf, 0, head, 2);
	stackframes_user_id_exec(sc.sf, (pid_t)k->waiter.pid, k->waiter.exec_id, k->waiter.user_stack_id);
	stackframes_kernel_id(sc.sf, k->waiter.kern_stack_id);
	stackframes_frames(sc.sf, &n);
	stackframes_user_splice(sc.sf, n, tail, m);
	stackframes_collect(sc.sf, t, us);
	free_names();
}

/* The aggregates read at the end, sorted by lock for the per-lock summary. */
struct agg {
	struct lock_key k;
	struct lock_val v;
};

static struct {
	struct agg *v;
	size_t n, cap;
} aggs;

static void read_one(const void *key, const void *value, void *arg)
{
	(void)arg;
	aggs.v = marple_grow(aggs.v, &aggs.cap, aggs.n + 1, sizeof(*aggs.v));
	memcpy(&aggs.v[aggs.n].k, key, sizeof(struct lock_key));
	memcpy(&aggs.v[aggs.n].v, value, sizeof(struct lock_val));
	aggs.n++;
}

static int same_lock(const struct lock_key *a, const struct lock_key *b)
{
	return a->lock == b->lock && a->pid == b->pid && (a->kind & 0xff) == (b->kind & 0xff);
}

static int by_lock(const void *pa, const void *pb)
{
	const struct lock_key *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->lock != b->lock)
		return a->lock < b->lock ? -1 : 1;
	return (int)(a->kind & 0xff) - (int)(b->kind & 0xff);
}

struct lock_sum {
	size_t first;		/* its first aggregate */
	uint64_t waits, wait_ns, max_ns;
};

static int by_wait(const void *pa, const void *pb)
{
	const struct lock_sum *a = pa, *b = pb;

	return a->wait_ns != b->wait_ns ? (a->wait_ns < b->wait_ns ? 1 : -1) : (a->first > b->first) - (a->first < b->first);
}

/* The trailer's "locks": the TOP_LOCKS locks waited on longest, each with
 * its contended waits, total and longest wait ("nlocks": how many in all). */
#define TOP_LOCKS 20
static void locks_summary(json_t *tr)
{
	struct lock_sum *s = marple_malloc((aggs.n + 1) * sizeof(*s));
	size_t ns = 0;
	json_t *a = json_array();
	char name[96];

	for (size_t i = 0; i < aggs.n; i++) {
		if (i == 0 || !same_lock(&aggs.v[i].k, &aggs.v[i - 1].k))
			s[ns++] = (struct lock_sum){ .first = i };
		struct lock_sum *l = &s[ns - 1];
		l->waits += aggs.v[i].v.waits;
		l->wait_ns += aggs.v[i].v.wait_ns;
		if (aggs.v[i].v.max_ns > l->max_ns)
			l->max_ns = aggs.v[i].v.max_ns;
	}
	qsort(s, ns, sizeof(*s), by_wait);
	for (size_t i = 0; i < ns && i < TOP_LOCKS; i++) {
		const struct lock_key *k = &aggs.v[s[i].first].k;
		lock_name(k, name, sizeof(name));
		json_array_append_new(a, json_pack("{s:s,s:I,s:I,s:I,s:I}", "lock", name, "pid", (json_int_t)k->pid,
						   "waits", (json_int_t)s[i].waits, "wait_us",
						   (json_int_t)(s[i].wait_ns / 1000), "max_us",
						   (json_int_t)(s[i].max_ns / 1000)));
	}
	json_object_set_new(tr, "nlocks", json_integer((json_int_t)ns));
	json_object_set_new(tr, "locks", a);
	free(s);
}

/* The capture's state, past main's setup. */
static struct {
	struct lock_bpf *skel;
	struct bpf_link *links[5];
	const char *kernel_locks;	/* "traced", or why not */
	json_t *hdr;
} cap;

static void stop_tracing(void *arg)
{
	(void)arg;
	for (size_t i = 0; i < sizeof(cap.links) / sizeof(*cap.links); i++) {
		bpf_link__destroy(cap.links[i]);
		cap.links[i] = NULL;
	}
	ring_buffer__consume(sc.notes);
}

/* The counters of the trailer, and a line on stderr for what was lost. */
static void counters_add(json_t *tr)
{
	static const char *const names[LOCKC_N] = { "futex_waits", "futex_at_once", "kernel_waits", "map_full" };
	int fd = bpf_map__fd(cap.skel->maps.lock_counters);
	json_t *o = json_object();

	for (uint32_t i = 0; i < LOCKC_N; i++)
		json_object_set_new(o, names[i], json_integer((json_int_t)bpfmap_percpu_sum(fd, i)));
	json_object_set_new(o, "kernel_locks", json_string(cap.kernel_locks));
	json_object_set_new(tr, "lock", o);
	if (bpfmap_percpu_sum(fd, LOCKC_MAP_FULL))
		marple_warn("%" PRIu64 " waits not counted: a map was full", bpfmap_percpu_sum(fd, LOCKC_MAP_FULL));
}

/* The one section, at the end. */
static int write_section(void *arg, int last)
{
	struct hashtab *t = hashtab_new();
	uint64_t holders[HOLDER_NONE + 1] = { 0 };

	(void)arg;
	(void)last;
	bpfmap_each(bpf_map__fd(cap.skel->maps.waits), sizeof(struct lock_key), sizeof(struct lock_val), read_one, NULL);
	qsort(aggs.v, aggs.n, sizeof(*aggs.v), by_lock);
	for (size_t i = 0; i < aggs.n; i++) {
		collect_key(&aggs.v[i].k, aggs.v[i].v.wait_ns / 1000, t);
		if (aggs.v[i].k.holder_how <= HOLDER_NONE)
			holders[aggs.v[i].k.holder_how] += aggs.v[i].v.waits;
	}
	stackcollector_stamp_header(&sc, cap.hdr);
	if (stream_write_json(stdout, cap.hdr) < 0)
		return -1;
	uint64_t records = stackframes_write_table(sc.sf, t, stdout);
	hashtab_free(t);
	json_t *tr = stackcollector_trailer(&sc, cap.skel->obj, records, 0, stackcollector_ended(&sc));
	counters_add(tr);
	json_object_set_new(tr, "holders", json_pack("{s:I,s:I,s:I,s:I}", "seen", (json_int_t)holders[HOLDER_SEEN],
						     "timed_out", (json_int_t)holders[HOLDER_TIMEOUT], "signal",
						     (json_int_t)holders[HOLDER_SIGNAL], "not_seen",
						     (json_int_t)holders[HOLDER_UNSEEN]));
	locks_summary(tr);
	if (stackcollector_write_trailer(&sc, tr) < 0 || fflush(stdout) != 0)
		return -1;
	return 0;
}

/* Attach the futex programs (or exit 1), then try the kernel's lock
 * tracepoints: cap.kernel_locks says whether they are traced, or why not. */
static void attach(struct lock_bpf *skel)
{
	struct bpf_program *futex[] = { skel->progs.futex_enter, skel->progs.futex_exit, skel->progs.futex_woken };

	for (int i = 0; i < 3; i++)
		if (!(cap.links[i] = bpf_program__attach(futex[i])))
			marple_fatal(EXIT_DATA, "cannot attach %s: %s", bpf_program__name(futex[i]), strerror(errno));
	cap.kernel_locks = "not asked (--futex-only)";
	if (opt.futex_only)
		return;
	cap.links[3] = bpf_program__attach(skel->progs.kernel_begin);
	if (cap.links[3])
		cap.links[4] = bpf_program__attach(skel->progs.kernel_end);
	if (cap.links[3] && cap.links[4]) {
		cap.kernel_locks = "traced";
		return;
	}
	cap.kernel_locks = "absent: lock:contention_begin/end cannot be attached on this kernel";
	marple_warn("kernel locks not traced: lock:contention_begin/end cannot be attached on this kernel (%s): "
		    "futex waits only", strerror(errno));
	bpf_link__destroy(cap.links[3]);
	cap.links[3] = NULL;
}

/* Open, configure and load (the kernel lock programs only if asked). */
static struct lock_bpf *load(void)
{
	struct lock_bpf *skel = lock_bpf__open();
	int err;

	if (!skel)
		marple_fatal(EXIT_DATA, "cannot open the BPF program: %s", strerror(errno));
	skel->rodata->targ_pid = (uint32_t)sc.pid;
	skel->rodata->want_user = !sc.kernel_only;
	skel->rodata->want_kernel = !sc.user_only;
	stacksbpf_set_storage(skel->obj, (uint32_t)sc.stack_storage);
	skel->rodata->stacks_unwind = (uint32_t)sc.unwind;
	skel->rodata->stacks_python = stackcollector_python_wanted(&sc);
	if (stackcollector_unwind_size(&sc, skel->obj) < 0)
		exit(EXIT_DATA);
	/* (a kernel without the lock tracepoints cannot load them either) */
	if (opt.futex_only || !collector_tracepoint_exists("lock", "contention_begin")) {
		bpf_program__set_autoload(skel->progs.kernel_begin, false);
		bpf_program__set_autoload(skel->progs.kernel_end, false);
	}
	if ((err = lock_bpf__load(skel)) != 0)
		marple_fatal(EXIT_DATA, "cannot load the BPF program: %s", collector_strerror(err));
	return skel;
}

int main(int argc, char **argv)
{
	marple_init(argc, argv);
	if (stackcollector_parse(&sc, options, own_option, argc, argv))
		return EXIT_OK;	/* -h */
	if (stackcollector_start(&sc) < 0)
		return EXIT_DATA;
	/* started now, held until the tracing is attached */
	if (sc.cmd && (sc.pid = stackcollector_target(&sc)) < 0)
		exit(EXIT_DATA);	/* uprobes said why; exit: what main holds stays reachable */
	struct lock_bpf *skel = cap.skel = load();
	if (selffilter_setup(skel->obj, sc.include_self) < 0 || stackcollector_follow(&sc, skel->obj, sc.pid) < 0)
		exit(EXIT_DATA);
	attach(skel);
	if (stackcollector_symbols(&sc, skel->obj, 1) < 0)	/* (kernel: to name kernel locks) */
		exit(EXIT_DATA);
	json_t *o;
	cap.hdr = stackcollector_header(&sc, "lock", "us", "lock wait", sc.pid, &o);
	weight_meaning_set(cap.hdr, "us", "lock_wait", 0);
	json_object_set_new(o, "futex_only", json_boolean(opt.futex_only));
	json_object_set_new(o, "kernel_locks", json_string(cap.kernel_locks));
	struct stackcollector_run lifecycle = { .stop = stop_tracing, .section = write_section };
	if (stackcollector_run(&sc, &lifecycle) < 0)
		marple_fatal(EXIT_DATA, "cannot write the section: %s", strerror(errno));
	json_decref(cap.hdr);
	free(aggs.v);
	free(names.v);
	stackcollector_free(&sc);
	lock_bpf__destroy(skel);
	marple_close_stdout();
	return EXIT_OK;
}
