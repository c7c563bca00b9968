// SPDX-License-Identifier: GPL-2.0
/* lock.bpf.c — contended locks for marple-lock: who waited, how long, and
 * who let them go.
 *
 * Futexes (syscalls:sys_enter_futex/sys_exit_futex): a FUTEX_WAIT (or
 * WAIT_BITSET, LOCK_PI...) is a wait from its entry to its exit, with the
 * waiter's stacks taken at the entry.  A FUTEX_WAKE caller (WAKE, WAKE_OP,
 * UNLOCK_PI, REQUEUE...) is marked for the length of its call; sched_waking,
 * which runs in its context, gives the waiter it wakes the caller's stacks:
 * the holder that released the lock.  A wait that returns at once (-EAGAIN:
 * the futex word had changed) did not wait, and is only counted.
 * Kernel locks (lock:contention_begin/end, where the kernel has them): a
 * wait from begin to end on the same lock, with the waiter's stacks; the
 * kernel traces no release, so there is no holder.
 * futex2's calls (futex_wait, futex_waitv, futex_wake, futex_requeue) the
 * same, where the kernel has their tracepoints.
 * Each wait is added to counts[lock, waiter's stacks, holder's stacks] (two
 * sets, drained while capturing: stackdrain.h), its length to lock_max;
 * with timed_mode it is also sent, with its time and thread, on the
 * timed_samples ring buffer (struct lock_timed). */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define STACKS_EXEC_NOTES 1
#include "stacks.bpf.h"
#include "follow.bpf.h"
#include "timed.bpf.h"
#include "lock.h"

const volatile __u32 targ_pid = 0;
const volatile bool want_user = true;
const volatile bool want_kernel = true;

#define ETIMEDOUT_ 110
#define EINTR_ 4
#define EAGAIN_ 11

/* the futex waits in progress (struct lock_wait) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct lock_wait);
} waiting SEC(".maps");

/* the kernel lock waits in progress */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, struct lock_kwait_key);
	__type(value, struct lock_wait);
} kwaiting SEC(".maps");

/* waking[tid]: the thread is in a futex wake call on these two addresses */
struct waking_addrs {
	__u64 uaddr, uaddr2;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct waking_addrs);
} waking SEC(".maps");

/* counts, counts1: lock_key -> lock_val, drained while capturing */
STACKS_COUNT_MAPS(struct lock_key, struct lock_val, 65536)

/* each lock's longest wait, since user space last read it */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, struct lock_id);
	__type(value, __u64);
} lock_max SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LOCKC_N);
	__type(key, __u32);
	__type(value, __u64);
} lock_counters SEC(".maps");

/* per-CPU scratch: a struct lock_wait beside the unwinder's frames is too much
 * for the BPF stack */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lock_wait);
} scratch SEC(".maps");

static __always_inline void lock_count(__u32 what)
{
	stacks_percpu_inc(&lock_counters, what);
}

static __always_inline bool wanted(__u32 tgid)
{
	if (targ_pid && !follow_wanted(tgid, targ_pid))
		return false;
	return !self_current_is_marple();
}

/* A new wait of the current thread on lock, its stacks taken now. */
static __always_inline struct lock_wait *new_wait(void *ctx, __u64 lock, __u32 pid, __u32 kind, bool kernel)
{
	__u32 zero = 0;
	struct lock_wait *w = bpf_map_lookup_elem(&scratch, &zero);

	if (!w)
		return NULL;
	__builtin_memset(w, 0, sizeof(*w));
	stacks_count(STACKS_SAMPLES);
	stacks_fill_key(&w->k.waiter, ctx, want_user, want_kernel && kernel);
	w->k.lock = lock;
	w->k.pid = pid;
	w->k.kind = kind;
	w->ts = bpf_ktime_get_ns();
	return w;
}

/* lock_max[w's lock] = ns if longer (a full map counted). */
static __always_inline void note_max(struct lock_wait *w, __u64 ns)
{
	struct lock_id id = { w->k.lock, w->k.pid, w->k.kind & 0xff };
	__u64 *m = bpf_map_lookup_elem(&lock_max, &id);

	if (!m && bpf_map_update_elem(&lock_max, &id, &ns, BPF_NOEXIST) == 0)
		return;
	if (!m && !(m = bpf_map_lookup_elem(&lock_max, &id))) {	/* (another CPU's) */
		lock_count(LOCKC_MAX_FULL);
		return;
	}
	if (ns > *m)
		*m = ns;	/* (two CPUs at once: one of the two) */
}

/* timed_mode: the wait w of thread tid, ns long, on the ring buffer (a full
 * one counted in timed_lost). */
static __always_inline void send_wait(struct lock_wait *w, __u32 tid, __u64 ns)
{
	struct lock_timed *r;
	__u32 zero = 0;
	__u64 *lost;

	if (!timed_mode)
		return;
	if (!(r = bpf_ringbuf_reserve(&timed_samples, sizeof(*r), 0))) {
		if ((lost = bpf_map_lookup_elem(&timed_lost, &zero)))
			(*lost)++;
		return;
	}
	r->time = w->ts;
	r->dur = ns;
	r->cpu = bpf_get_smp_processor_id();
	r->tid = tid;
	__builtin_memcpy(&r->k, &w->k, sizeof(r->k));
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

/* A wait of thread tid that ended now: added to the active counts (a full
 * map counted). */
static __always_inline void add_wait(struct lock_wait *w, __u32 tid)
{
	__u64 ns = bpf_ktime_get_ns() - w->ts;
	struct lock_val *v;

	lock_count((w->k.kind & 0xff) == LOCK_FUTEX ? LOCKC_FUTEX_WAITS : LOCKC_KERNEL_WAITS);
	v = stacks_count_value(&w->k);
	if (!v) {
		lock_count(LOCKC_MAP_FULL);
		return;
	}
	__sync_fetch_and_add(&v->waits, 1);
	__sync_fetch_and_add(&v->wait_ns, ns);
	note_max(w, ns);
	send_wait(w, tid, ns);
}

/* FUTEX_* commands (include/uapi/linux/futex.h), op & FUTEX_CMD_MASK */
static __always_inline bool futex_waits(int cmd)
{
	return cmd == 0 || cmd == 9 || cmd == 6 || cmd == 13 || cmd == 11;	/* WAIT, WAIT_BITSET, LOCK_PI(2), WAIT_REQUEUE_PI */
}

static __always_inline bool futex_wakes(int cmd)
{
	return cmd == 1 || cmd == 10 || cmd == 5 || cmd == 7 || cmd == 3 || cmd == 4 || cmd == 12;
}

/* The current thread enters a futex wake call on these addresses. */
static __always_inline void begin_wake(__u64 uaddr, __u64 uaddr2)
{
	/* any process: a shared futex's holder may be in another */
	struct waking_addrs a = { uaddr, uaddr2 };
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	bpf_map_update_elem(&waking, &tid, &a, BPF_ANY);
}

/* The current thread enters a futex wait on uaddr (any_addr: and others). */
static __always_inline void begin_wait(void *ctx, __u64 uaddr, __u32 any_addr)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;

	if (!wanted(id >> 32))
		return;
	/* (its kernel stack would be the syscall's entry and this tracepoint's) */
	struct lock_wait *w = new_wait(ctx, uaddr, id >> 32, LOCK_FUTEX, false);
	if (!w)
		return;
	w->any_addr = any_addr;
	if (bpf_map_update_elem(&waiting, &tid, w, BPF_ANY) != 0)
		lock_count(LOCKC_MAP_FULL);
}

/* A futex call returns ret: a wake call ends, or a wait is counted. */
static __always_inline void end_call(long ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct lock_wait *w;

	if (bpf_map_delete_elem(&waking, &tid) == 0)
		return;
	w = bpf_map_lookup_elem(&waiting, &tid);
	if (!w)
		return;
	if (ret == -EAGAIN_) {
		lock_count(LOCKC_AT_ONCE);
	} else {
		if (!w->k.holder_how)
			w->k.holder_how = ret == -ETIMEDOUT_ ? HOLDER_TIMEOUT
					  : ret == -EINTR_ ? HOLDER_SIGNAL : HOLDER_UNSEEN;
		add_wait(w, tid);
	}
	bpf_map_delete_elem(&waiting, &tid);
}

/* futex2 (Linux 6.7): on arrays of struct futex_waitv (val, uaddr, flags):
 * the uaddr of element i */
static __always_inline __u64 waitv_uaddr(__u64 waiters, __u32 i)
{
	__u64 uaddr = 0;

	bpf_probe_read_user(&uaddr, sizeof(uaddr), (void *)(waiters + i * 24 + 8));
	return uaddr;
}

/* Every futex call's entry, which call its tracepoint's cookie
 * (LOCK_ENTRY_*): futex(uaddr, op, val, timeout, uaddr2, val3), and futex2's
 * futex_wait(uaddr, val, mask, flags, timeout, clockid), futex_wake(uaddr,
 * mask, nr, flags), futex_waitv(waiters, nr, flags, timeout, clockid) and
 * futex_requeue(waiters, flags, nr_wake, nr_requeue).  One program: the
 * verifier walks the wait's stack code once, not three times. */
SEC("tracepoint/syscalls/sys_enter_futex")
int futex_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u64 call = bpf_get_attach_cookie(ctx), a0 = ctx->args[0], uaddr = a0, uaddr2 = 0;
	__u32 any_addr = 0;
	int wakes = 0, waits = 0;
	int cmd = (int)ctx->args[1] & 0x7f;	/* less FUTEX_PRIVATE_FLAG, FUTEX_CLOCK_REALTIME */

	switch (call) {
	case LOCK_ENTRY_FUTEX:
		wakes = futex_wakes(cmd);
		waits = !wakes && futex_waits(cmd);
		/* read, not loaded: the kernel lets a program attach only to
		 * tracepoints whose records hold every field it loads, and
		 * futex2's have four arguments */
		bpf_probe_read_kernel(&uaddr2, sizeof(uaddr2), &ctx->args[4]);
		break;
	case LOCK_ENTRY_FUTEX_WAIT:
		waits = 1;
		break;
	case LOCK_ENTRY_FUTEX_WAITV:
		waits = 1;
		uaddr = waitv_uaddr(a0, 0);
		any_addr = ctx->args[1] > 1;
		break;
	case LOCK_ENTRY_FUTEX_WAKE:
		wakes = 1;
		break;
	case LOCK_ENTRY_FUTEX_REQUEUE:
		wakes = 1;
		uaddr = waitv_uaddr(a0, 0);
		uaddr2 = waitv_uaddr(a0, 1);
		break;
	}
	if (wakes)
		begin_wake(uaddr, uaddr2);
	else if (waits)
		begin_wait(ctx, uaddr, any_addr);
	return 0;
}

/* (user space attaches it to futex2's sys_exit tracepoints too: one layout) */
SEC("tracepoint/syscalls/sys_exit_futex")
int futex_exit(struct trace_event_raw_sys_exit *ctx)
{
	end_call(ctx->ret);
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(futex_woken, struct task_struct *p)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, ptid = BPF_CORE_READ(p, pid);
	struct waking_addrs *a = bpf_map_lookup_elem(&waking, &tid);
	struct lock_wait *w;

	if (!a || !(w = bpf_map_lookup_elem(&waiting, &ptid)) || w->k.holder_how)
		return 0;
	if (w->k.pid == id >> 32 && !w->any_addr && w->k.lock != a->uaddr && w->k.lock != a->uaddr2)
		return 0;
	/* a wake-up in an interrupt that came while this thread was in one of
	 * our walks (its futex call's kernel lock wait, say): a timer's, not
	 * its futex wake's, and the CPU's walk state is that walk's */
	if (stacks_walk_under_way()) {
		stacks_count(STACKS_NESTED);
		return 0;
	}
	stacks_fill_key(&w->k.holder, ctx, want_user, want_kernel);
	w->k.holder_how = HOLDER_SEEN;
	return 0;
}

SEC("tp_btf/contention_begin")
int BPF_PROG(kernel_begin, void *lock, unsigned int flags)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct lock_kwait_key key = { (__u64)lock, (__u32)id };

	if (!wanted(id >> 32))
		return 0;
	struct lock_wait *w = new_wait(ctx, (__u64)lock, 0, LOCK_KERNEL | (flags & 0xff) << 8, true);
	if (!w)
		return 0;
	w->k.holder_how = HOLDER_NONE;
	if (bpf_map_update_elem(&kwaiting, &key, w, BPF_ANY) != 0)
		lock_count(LOCKC_MAP_FULL);
	return 0;
}

SEC("tp_btf/contention_end")
int BPF_PROG(kernel_end, void *lock, int ret)
{
	struct lock_kwait_key key = { (__u64)lock, (__u32)bpf_get_current_pid_tgid() };
	struct lock_wait *w = bpf_map_lookup_elem(&kwaiting, &key);

	if (!w)
		return 0;
	add_wait(w, key.tid);
	bpf_map_delete_elem(&kwaiting, &key);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
