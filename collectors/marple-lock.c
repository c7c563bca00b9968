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
 * --timed adds a samples section: each wait, when it began, how long, which
 * thread, naming its record (marple-perfetto draws a slice for each).
 *
 *   $ marple-lock -p 4242 10
 *   {"marple":1,"interface":"lock","datatype":"stack",...,"units":{"weight":"us","measure":"lock_wait",...}}
 *   1500000#[futex 0x55d0c0a04040];app;_start;...;want_lock;pthread_mutex_lock;...;futex_wait;--;...;pthread_mutex_unlock;hold_lock;...;app
 *   {"trailer":1,...,"locks":[{"lock":"futex 0x55d0c0a04040","pid":4242,"waits":812,"wait_us":1500000,"max_us":2210}],...}
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfmap.h"
#include "collector.h"
#include "corebtf.h"
#include "hashtab.h"
#include "lock.h"
#include "lock.skel.h"
#include "selffilter.h"
#include "stackcollector.h"
#include "stackdrain.h"
#include "stackframes.h"
#include "stacksbpf.h"
#include "stream.h"
#include "syms.h"
#include "timedsamples.h"
#include "util.h"
#include "weight.h"

static struct stackcollector sc = {
	.synopsis = "[-p PID | -c CMD] [--futex-only] [options] [DURATION]",
	.about = "Contended locks: futex waits with the stacks of the waiter and of the\n"
		 "FUTEX_WAKE caller that ended them, and kernel lock waits\n"
		 "(lock:contention_begin/end), written as a marple stack section in us.\n",
	.footer = "Needs root.  See marple-lock(1).\n",
};

enum { OPT_FUTEX_ONLY = 256, OPT_TIMED };

static struct {
	int futex_only, timed;
} opt;

static const struct sc_option options[] = {
	SC_PID("only this process's waits (its holders may be anywhere)"),
	SC_CHILDREN,
	SC_COMMAND("start CMD, trace it and the processes it starts\nuntil it exits (its output goes to stderr)"),
	{ 0, OPT_FUTEX_ONLY, "futex-only", NULL, "futex waits only: no kernel lock (lock:contention_begin)" },
	{ 0, OPT_TIMED, "timed", NULL, "keep when each wait began, how long it was and which thread\n"
					"waited (a timed section: marple-perfetto draws each wait)" },
	SC_DESCRIBE("kind=collector\tsections=lock:stack:flamegraph\tevery=yes"
		    "\tmeasures=lock waits: who waited on which lock, and who released it (us)"),
	SC_UNWIND(""),
	SC_NO_PYTHON,
	SC_USER_ONLY,
	SC_KERNEL_ONLY,
	SC_ANNOTATE,
	SC_DELIMIT,
	SC_STACK_STORAGE,
	SC_DRAIN_EVERY,
	SC_EVERY,
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
	else if (key == OPT_TIMED)
		opt.timed = 1;
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
static void holder_tail(const struct stackdrain_entry *e, const char **tail, size_t *m)
{
	const struct lock_key *k = e->key;
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
	stackframes_key_stacks(sc.sf, &k->holder, e->user2, e->kern2);
	fr = stackframes_frames(sc.sf, &n);
	for (size_t i = n; i-- > 0;)	/* fr[0], its name, last */
		tail[(*m)++] = keep_name(fr[i]);
}

/* One aggregate as one record of t: [lock];waiter frames;--;holder frames.
 * Returns the record's position in t. */
static size_t collect_key(const struct stackdrain_entry *e, uint64_t us, struct hashtab *t)
{
	const struct lock_key *k = e->key;
	static const char **tail;
	static size_t cap;
	const char *head[2];
	char lock[96], lockframe[104];
	size_t m = 0, n;

	tail = marple_grow(tail, &cap, 2 * MARPLE_STACK_DEPTH + 8, sizeof(*tail));
	holder_tail(e, tail, &m);	/* (it uses sf: before the waiter's stack) */
	lock_name(k, lock, sizeof(lock));
	snprintf(lockframe, sizeof(lockframe), "[%s]", lock);
	head[0] = keep_name(lockframe);
	head[1] = keep_name(k->waiter.comm);
	stackframes_begin(sc.sf, k->waiter.comm);
	stackframes_user_splice(sc.sf, 0, head, 2);
	stackframes_user_stack(sc.sf, (pid_t)k->waiter.pid, k->waiter.exec_id, e->user);
	stackframes_kernel_stack(sc.sf, e->kern);
	stackframes_frames(sc.sf, &n);
	stackframes_user_splice(sc.sf, n, tail, m);
	size_t rec = stackframes_collect(sc.sf, t, us);
	free_names();
	return rec;
}

/* --timed: every wait's time, thread and key (timedsamples.h) */
static struct timedsamples *timed;

/* A key as --timed knows it: a holder not seen left out (its zeroes would
 * be numbered as a stack id 0 the drain may read differently). */
static struct lock_key timed_key(const struct lock_key *k)
{
	struct lock_key t = *k;

	if (t.holder_how != HOLDER_SEEN)
		memset(&t.holder, 0, sizeof(t.holder));
	return t;
}

/* A wait from the ring buffer: its stacks numbered as the drain numbers
 * its keys' (read now, before their set is cleared). */
static int on_wait(void *ctx, void *data, size_t len)
{
	struct lock_timed r;

	(void)ctx;
	if (len < sizeof(r))
		return 0;
	memcpy(&r, data, sizeof(r));
	struct lock_key k = timed_key(&r.k);
	stackdrain_number_key(sc.drain, &k.waiter);
	if (k.holder_how == HOLDER_SEEN)
		stackdrain_number_key(sc.drain, &k.holder);
	timedsamples_add_keyed(timed, &k, sizeof(k), k.waiter.pid, r.tid, r.cpu, r.time, r.dur);
	return 0;
}

/* A lock's sums in a section. */
struct lock_sum {
	uint64_t waits, wait_ns, max_ns;
	uint32_t kind;		/* its first aggregate's (flags and all), for its name */
};

/* A section's sums, as its aggregates are drained: the records, each
 * lock's (locks: struct lock_id -> its index in locks_v), how the waits
 * ended. */
static struct {
	struct hashtab *records, *locks;
	struct lock_sum *locks_v;
	size_t locks_cap;
	uint64_t holders[HOLDER_NONE + 1];
} sum;

/* The sums of lock id, new ones zeroed with kind. */
static struct lock_sum *lock_sum_of(const struct lock_id *id, uint32_t kind)
{
	size_t n = hashtab_size(sum.locks);
	size_t i = hashtab_index(sum.locks, hashtab_add(sum.locks, id, sizeof(*id), 0, 0));

	if (i == n) {
		sum.locks_v = marple_grow(sum.locks_v, &sum.locks_cap, i + 1, sizeof(*sum.locks_v));
		sum.locks_v[i] = (struct lock_sum){ .kind = kind };
	}
	return &sum.locks_v[i];
}

/* stackdrain's add(): one aggregate, its stacks' addresses drained. */
static void add_entry(const struct stackdrain_entry *e, void *arg)
{
	const struct lock_key *k = e->key;
	const struct lock_val *v = e->value;
	struct lock_id id = { k->lock, k->pid, k->kind & 0xff };
	struct lock_sum *l = lock_sum_of(&id, k->kind);

	(void)arg;
	size_t rec = collect_key(e, v->wait_ns / 1000, sum.records);
	if (timed) {
		struct lock_key tk = timed_key(k);
		timedsamples_name_key(timed, &tk, sizeof(tk), (uint32_t)rec);
	}
	l->waits += v->waits;
	l->wait_ns += v->wait_ns;
	if (k->holder_how <= HOLDER_NONE)
		sum.holders[k->holder_how] += v->waits;
}

/* lock_max's element: the longest wait on a lock whose waits this section
 * counted, taken out of the map (one counted after the drain stays for
 * the next section). */
static void take_max(const void *key, const void *value, void *arg)
{
	const struct hashtab_entry *e = hashtab_find(sum.locks, key, sizeof(struct lock_id));
	uint64_t max;

	if (!e)
		return;
	if (bpf_map_lookup_and_delete_elem(*(const int *)arg, key, &max) != 0)
		memcpy(&max, value, sizeof(max));
	struct lock_sum *l = &sum.locks_v[hashtab_index(sum.locks, e)];
	if (max > l->max_ns)
		l->max_ns = max;
}

static int by_wait(const void *pa, const void *pb)
{
	const struct lock_sum *a = *(const struct lock_sum *const *)pa, *b = *(const struct lock_sum *const *)pb;

	return a->wait_ns != b->wait_ns ? (a->wait_ns < b->wait_ns ? 1 : -1) : (a > b) - (a < b);
}

/* The trailer's "locks": the TOP_LOCKS locks waited on longest, each with
 * its contended waits, total and longest wait ("nlocks": how many in all). */
#define TOP_LOCKS 20
static void locks_summary(json_t *tr)
{
	size_t ns = hashtab_size(sum.locks);
	const struct lock_sum **by = marple_malloc((ns + 1) * sizeof(*by));
	json_t *a = json_array();
	char name[96];

	for (size_t i = 0; i < ns; i++)
		by[i] = &sum.locks_v[i];
	qsort(by, ns, sizeof(*by), by_wait);
	for (size_t i = 0; i < ns && i < TOP_LOCKS; i++) {
		struct lock_id id;
		memcpy(&id, hashtab_at(sum.locks, (size_t)(by[i] - sum.locks_v))->key, sizeof(id));
		struct lock_key k = { .lock = id.lock, .pid = id.pid, .kind = by[i]->kind };
		lock_name(&k, name, sizeof(name));
		json_array_append_new(a, json_pack("{s:s,s:I,s:I,s:I,s:I}", "lock", name, "pid", (json_int_t)id.pid,
						   "waits", (json_int_t)by[i]->waits, "wait_us",
						   (json_int_t)(by[i]->wait_ns / 1000), "max_us",
						   (json_int_t)(by[i]->max_ns / 1000)));
	}
	json_object_set_new(tr, "nlocks", json_integer((json_int_t)ns));
	json_object_set_new(tr, "locks", a);
	free(by);
}

/* Let go of a section's sums: the next counts from none. */
static void sums_restart(void)
{
	hashtab_free(sum.records);
	hashtab_free(sum.locks);
	sum.records = hashtab_new();
	sum.locks = hashtab_new();
	memset(sum.holders, 0, sizeof(sum.holders));
}

/* futex2's calls, whose entries futex_enter takes too (the cookie
 * LOCK_ENTRY_FUTEX_WAIT + i), and futex_exit their exits */
static const char *const futex2_calls[] = { "futex_wait", "futex_waitv", "futex_wake", "futex_requeue" };
#define NFUTEX2_PROGS 4

/* The capture's state, past main's setup. */
static struct {
	struct lock_bpf *skel;
	struct bpf_link *links[5 + 2 * NFUTEX2_PROGS];
	const char *kernel_locks;	/* "traced", or why not */
	const char *futex2;		/* "traced", or why not */
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

/* The counters of the trailer (the section's own with --every), and at
 * the end a line on stderr for what was lost. */
static void counters_add(json_t *tr, int last)
{
	static const char *const names[LOCKC_N] = { "futex_waits", "futex_at_once", "kernel_waits", "map_full",
						    "max_map_full" };
	static uint64_t before[LOCKC_N];
	int fd = bpf_map__fd(cap.skel->maps.lock_counters);
	json_t *o = json_object();

	for (uint32_t i = 0; i < LOCKC_N; i++) {
		uint64_t v = bpfmap_percpu_sum(fd, i);
		json_object_set_new(o, names[i], json_integer((json_int_t)(v - before[i])));
		before[i] = v;
	}
	json_object_set_new(o, "kernel_locks", json_string(cap.kernel_locks));
	json_object_set_new(o, "futex2", json_string(cap.futex2));
	json_object_set_new(tr, "lock", o);
	if (last && before[LOCKC_MAP_FULL])
		marple_warn("%" PRIu64 " waits not counted: a map was full", before[LOCKC_MAP_FULL]);
	if (last && before[LOCKC_MAX_FULL])
		marple_warn("%" PRIu64 " waits not in their lock's longest wait: lock_max was full",
			    before[LOCKC_MAX_FULL]);
}

/* One section: at every --every interval and at the end. */
static int write_section(void *arg, int last)
{
	int max_fd = bpf_map__fd(cap.skel->maps.lock_max);

	(void)arg;
	stackdrain_finish(sc.drain);
	stackdrain_emit(sc.drain);	/* add_entry for each aggregate */
	bpfmap_each(max_fd, sizeof(struct lock_id), sizeof(uint64_t), take_max, &max_fd);
	stackcollector_stamp_header(&sc, cap.hdr);
	if (stream_write_json(stdout, cap.hdr) < 0)
		return -1;
	uint64_t records = stackframes_write_table(sc.sf, sum.records, stdout);
	json_t *tr = stackcollector_trailer(&sc, cap.skel->obj, records, 0, stackcollector_ended(&sc));
	counters_add(tr, last);
	json_object_set_new(tr, "holders", json_pack("{s:I,s:I,s:I,s:I}", "seen", (json_int_t)sum.holders[HOLDER_SEEN],
						     "timed_out", (json_int_t)sum.holders[HOLDER_TIMEOUT], "signal",
						     (json_int_t)sum.holders[HOLDER_SIGNAL], "not_seen",
						     (json_int_t)sum.holders[HOLDER_UNSEEN]));
	locks_summary(tr);
	stackdrain_trailer_add(sc.drain, tr);
	sums_restart();
	if (stackcollector_write_trailer(&sc, tr) < 0)
		return -1;
	if (timed)
		timedsamples_write_section(timed, cap.hdr, "wait", stackcollector_ended(&sc), 0, stdout);
	return fflush(stdout) != 0 ? -1 : 0;
}

/* The stacks of the waits in progress are still named by them: kept when
 * their set is cleared. */
static void pin_one_wait(const void *key, const void *value, void *arg)
{
	struct lock_wait w;

	(void)key;
	memcpy(&w, value, sizeof(w));
	stackdrain_pin(arg, w.k.waiter.user_stack_id);
	stackdrain_pin(arg, w.k.waiter.kern_stack_id);
	if (w.k.holder_how == HOLDER_SEEN) {
		stackdrain_pin(arg, w.k.holder.user_stack_id);
		stackdrain_pin(arg, w.k.holder.kern_stack_id);
	}
}

static void pin_waits(struct stackdrain *d, void *arg)
{
	struct lock_bpf *skel = arg;

	bpfmap_each(bpf_map__fd(skel->maps.waiting), sizeof(uint32_t), sizeof(struct lock_wait), pin_one_wait, d);
	bpfmap_each(bpf_map__fd(skel->maps.kwaiting), sizeof(struct lock_kwait_key), sizeof(struct lock_wait),
		    pin_one_wait, d);
}

/* Attach the futex programs to futex2's calls where the kernel has their
 * tracepoints, or say that it has not: cap.futex2. */
static void attach_futex2(struct lock_bpf *skel)
{
	if (!collector_tracepoint_exists("syscalls", "sys_enter_futex_wait")) {
		cap.futex2 = "absent: no syscalls:sys_enter_futex_wait on this kernel (before Linux 6.7)";
		marple_warn("futex2 calls not traced: this kernel has no syscalls:sys_enter_futex_wait");
		return;
	}
	for (int i = 0; i < NFUTEX2_PROGS; i++) {
		char enter_tp[64], exit_tp[64];
		LIBBPF_OPTS(bpf_tracepoint_opts, entry, .bpf_cookie = LOCK_ENTRY_FUTEX_WAIT + (uint64_t)i);
		snprintf(enter_tp, sizeof(enter_tp), "sys_enter_%s", futex2_calls[i]);
		snprintf(exit_tp, sizeof(exit_tp), "sys_exit_%s", futex2_calls[i]);
		if (!(cap.links[5 + 2 * i] = bpf_program__attach_tracepoint_opts(skel->progs.futex_enter, "syscalls",
										   enter_tp, &entry)) ||
		    !(cap.links[6 + 2 * i] = bpf_program__attach_tracepoint(skel->progs.futex_exit, "syscalls", exit_tp)))
			marple_fatal(EXIT_DATA, "cannot attach to %s: %s", futex2_calls[i], strerror(errno));
	}
	cap.futex2 = "traced";
}

/* Attach the futex programs (or exit 1), then try the kernel's lock
 * tracepoints: cap.kernel_locks says whether they are traced, or why not. */
static void attach(struct lock_bpf *skel)
{
	struct bpf_program *futex[] = { skel->progs.futex_enter, skel->progs.futex_exit, skel->progs.futex_woken };

	for (int i = 0; i < 3; i++)
		if (!(cap.links[i] = bpf_program__attach(futex[i])))
			marple_fatal(EXIT_DATA, "cannot attach %s: %s", bpf_program__name(futex[i]), strerror(errno));
	attach_futex2(skel);
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
	struct lock_bpf *skel = lock_bpf__open_opts(corebtf_opts(lock_bpf__elf_bytes));
	int err;

	if (!skel)
		marple_fatal(EXIT_DATA, "cannot open the BPF program: %s", strerror(errno));
	skel->rodata->targ_pid = (uint32_t)sc.pid;
	skel->rodata->want_user = !sc.kernel_only;
	skel->rodata->want_kernel = !sc.user_only;
	stacksbpf_set_storage(skel->obj, sc.stack_storage ? (uint32_t)sc.stack_storage : STACKSBPF_STORAGE_EVENTS);
	skel->rodata->stacks_unwind = (uint32_t)sc.unwind;
	skel->rodata->stacks_python = stackcollector_python_wanted(&sc);
	skel->rodata->timed_mode = opt.timed;
	if (opt.timed)	/* (records twice offcpu's: sized for twice as many) */
		timedsamples_size(skel->obj, 2 * 100000);
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
	if (opt.timed && sc.interval)
		marple_usage_error("--timed: not with --every (one section)");
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
	sums_restart();
	if (stackcollector_drain(&sc, skel->obj, sizeof(struct lock_key), sizeof(struct lock_val),
				 offsetof(struct lock_key, waiter), add_entry, NULL) < 0)
		exit(EXIT_DATA);
	stackdrain_set_second_key(sc.drain, offsetof(struct lock_key, holder));
	stackdrain_set_pin(sc.drain, pin_waits, skel);
	if (opt.timed && (!(timed = timedsamples_new(skel->obj, NULL)) ||
			  ring_buffer__add(sc.notes, bpf_map__fd(skel->maps.timed_samples), on_wait, NULL) < 0))
		marple_fatal(EXIT_DATA, "cannot set up --timed");
	stacksbpf_drain_rings(sc.drain, sc.notes, NULL);	/* the waits read before their stacks are let go */
	json_t *o;
	cap.hdr = stackcollector_header(&sc, "lock", "us", "lock wait", sc.pid, &o);
	weight_meaning_set(cap.hdr, "us", "lock_wait", 0);
	if (opt.timed)
		timedsamples_mark(cap.hdr);
	json_object_set_new(o, "futex_only", json_boolean(opt.futex_only));
	json_object_set_new(o, "kernel_locks", json_string(cap.kernel_locks));
	json_object_set_new(o, "futex2", json_string(cap.futex2));
	struct stackcollector_run lifecycle = { .stop = stop_tracing, .section = write_section };
	if (stackcollector_run(&sc, &lifecycle) < 0)
		marple_fatal(EXIT_DATA, "cannot write the section: %s", strerror(errno));
	json_decref(cap.hdr);
	hashtab_free(sum.records);
	hashtab_free(sum.locks);
	free(sum.locks_v);
	free(names.v);
	timedsamples_free(timed);
	stackcollector_free(&sc);
	lock_bpf__destroy(skel);
	marple_close_stdout();
	return EXIT_OK;
}
