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
 * Each wait is added to waits[lock, waiter's stacks, holder's stacks]. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define STACKS_EXEC_NOTES 1
#include "stacks.bpf.h"
#include "follow.bpf.h"
#include "lock.h"

const volatile __u32 targ_pid = 0;
const volatile bool want_user = true;
const volatile bool want_kernel = true;

#define ETIMEDOUT_ 110
#define EINTR_ 4
#define EAGAIN_ 11

/* a futex wait in progress (waiting[tid]), or a kernel lock's (kwaiting) */
struct wait {
	__u64 ts;
	struct lock_key k;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct wait);
} waiting SEC(".maps");

/* kernel lock waits nest (a mutex's slow path takes its wait_lock) */
struct kwait_key {
	__u64 lock;
	__u32 tid;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct kwait_key);
	__type(value, struct wait);
} kwaiting SEC(".maps");

/* waking[tid]: the thread is in a futex wake call on these two addresses */
struct waking_addrs {
	__u64 uaddr, uaddr2;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct waking_addrs);
} waking SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct lock_key);
	__type(value, struct lock_val);
} waits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LOCKC_N);
	__type(key, __u32);
	__type(value, __u64);
} lock_counters SEC(".maps");

/* per-CPU scratch: a struct wait beside the unwinder's frames is too much
 * for the BPF stack */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct wait);
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
static __always_inline struct wait *new_wait(void *ctx, __u64 lock, __u32 pid, __u32 kind, bool kernel)
{
	__u32 zero = 0;
	struct wait *w = bpf_map_lookup_elem(&scratch, &zero);

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

/* A wait that ended now: added to waits (a full map counted). */
static __always_inline void add_wait(struct wait *w)
{
	__u64 ns = bpf_ktime_get_ns() - w->ts;
	struct lock_val zero = {}, *v;

	lock_count((w->k.kind & 0xff) == LOCK_FUTEX ? LOCKC_FUTEX_WAITS : LOCKC_KERNEL_WAITS);
	v = stacks_lookup_or_init(&waits, &w->k, &zero);
	if (!v) {
		lock_count(LOCKC_MAP_FULL);
		return;
	}
	__sync_fetch_and_add(&v->waits, 1);
	__sync_fetch_and_add(&v->wait_ns, ns);
	if (ns > v->max_ns)
		v->max_ns = ns;	/* (two CPUs at once: one of the two) */
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

SEC("tracepoint/syscalls/sys_enter_futex")
int futex_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, tgid = id >> 32;
	int cmd = (int)ctx->args[1] & 0x7f;	/* less FUTEX_PRIVATE_FLAG, FUTEX_CLOCK_REALTIME */

	if (futex_wakes(cmd)) {
		/* any process: a shared futex's holder may be in another */
		struct waking_addrs a = { ctx->args[0], ctx->args[4] };
		bpf_map_update_elem(&waking, &tid, &a, BPF_ANY);
		return 0;
	}
	if (!futex_waits(cmd) || !wanted(tgid))
		return 0;
	/* (its kernel stack would be the syscall's entry and this tracepoint's) */
	struct wait *w = new_wait(ctx, ctx->args[0], tgid, LOCK_FUTEX, false);
	if (w && bpf_map_update_elem(&waiting, &tid, w, BPF_ANY) != 0)
		lock_count(LOCKC_MAP_FULL);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_futex")
int futex_exit(struct trace_event_raw_sys_exit *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct wait *w;

	if (bpf_map_delete_elem(&waking, &tid) == 0)
		return 0;
	w = bpf_map_lookup_elem(&waiting, &tid);
	if (!w)
		return 0;
	if (ctx->ret == -EAGAIN_) {
		lock_count(LOCKC_AT_ONCE);
	} else {
		if (!w->k.holder_how)
			w->k.holder_how = ctx->ret == -ETIMEDOUT_ ? HOLDER_TIMEOUT
					  : ctx->ret == -EINTR_ ? HOLDER_SIGNAL : HOLDER_UNSEEN;
		add_wait(w);
	}
	bpf_map_delete_elem(&waiting, &tid);
	return 0;
}

/* In the waker's context: a thread in a futex wake call wakes a waiter on
 * one of its addresses (in the waiter's process: any address, for a
 * shared futex is known by other addresses in other processes): the waker's
 * stacks are the holder's. */
SEC("tp_btf/sched_waking")
int BPF_PROG(futex_woken, struct task_struct *p)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, ptid = BPF_CORE_READ(p, pid);
	struct waking_addrs *a = bpf_map_lookup_elem(&waking, &tid);
	struct wait *w;

	if (!a || !(w = bpf_map_lookup_elem(&waiting, &ptid)) || w->k.holder_how)
		return 0;
	if (w->k.pid == id >> 32 && w->k.lock != a->uaddr && w->k.lock != a->uaddr2)
		return 0;
	stacks_fill_key(&w->k.holder, ctx, want_user, want_kernel);
	w->k.holder_how = HOLDER_SEEN;
	return 0;
}

SEC("tp_btf/contention_begin")
int BPF_PROG(kernel_begin, void *lock, unsigned int flags)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct kwait_key key = { (__u64)lock, (__u32)id };

	if (!wanted(id >> 32))
		return 0;
	struct wait *w = new_wait(ctx, (__u64)lock, 0, LOCK_KERNEL | (flags & 0xff) << 8, true);
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
	struct kwait_key key = { (__u64)lock, (__u32)bpf_get_current_pid_tgid() };
	struct wait *w = bpf_map_lookup_elem(&kwaiting, &key);

	if (!w)
		return 0;
	add_wait(w);
	bpf_map_delete_elem(&kwaiting, &key);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
