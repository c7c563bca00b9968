/* lock.h — what bpf/lock.bpf.c and collectors/marple-lock.c share: the
 * aggregation key and value of a contended lock's waits, and the counters. */
#ifndef MARPLE_LOCK_H
#define MARPLE_LOCK_H

#include "stacks.h"

/* What kind of lock a wait was on: a futex (user space), or a kernel lock
 * (lock:contention_begin's flags say which: LOCK_KERNEL | flags << 8). */
enum {
	LOCK_FUTEX = 1,
	LOCK_KERNEL = 2,
};

/* Which call's entry futex_enter is attached to: its tracepoint's cookie
 * (futex, then futex2's, in collectors/marple-lock.c's order) */
enum {
	LOCK_ENTRY_FUTEX,
	LOCK_ENTRY_FUTEX_WAIT,
	LOCK_ENTRY_FUTEX_WAITV,
	LOCK_ENTRY_FUTEX_WAKE,
	LOCK_ENTRY_FUTEX_REQUEUE,
};

/* How a futex wait ended, when no FUTEX_WAKE was seen to end it. */
enum {
	HOLDER_SEEN = 1,	/* holder: the stacks of the FUTEX_WAKE caller that woke it */
	HOLDER_TIMEOUT,		/* the wait timed out (-ETIMEDOUT) */
	HOLDER_SIGNAL,		/* a signal ended it (-EINTR) */
	HOLDER_UNSEEN,		/* woken, but not by a futex wake this traced
				 * (requeue_pi, a thread's exit clearing its tid,
				 * a shared futex's waker in a process not traced...) */
	HOLDER_NONE,		/* a kernel lock: its holder is not traced */
};

/* One aggregate: a lock (its address in pid's address space: a futex's
 * uaddr, or a kernel address), a waiter's stacks and its holder's. */
struct lock_key {
	__u64 lock;
	__u32 pid;		/* a futex's process (the waiter's); 0 for a kernel lock */
	__u32 kind;		/* LOCK_FUTEX, or LOCK_KERNEL | contention_begin's flags << 8 */
	__u32 holder_how;	/* HOLDER_* */
	__u32 pad;
	struct stack_key waiter;
	struct stack_key holder;	/* HOLDER_SEEN only, else zeroes */
};

/* Sums only: the count table is drained and added up (stackdrain.h). */
struct lock_val {
	__u64 waits;		/* how many waits */
	__u64 wait_ns;		/* their total */
};

/* A lock, for its longest wait (map lock_max: read and let go at each
 * section) */
struct lock_id {
	__u64 lock;
	__u32 pid;
	__u32 kind;		/* LOCK_FUTEX or LOCK_KERNEL, no flags */
};

/* A futex wait in progress (waiting[tid]), or a kernel lock's
 * (kwaiting[struct lock_kwait_key]): its stack ids are pinned at drains.
 * any_addr: on several futexes (futex_waitv), known by the first: any wake
 * call in its process may be its holder's. */
struct lock_wait {
	__u64 ts;
	struct lock_key k;
	__u32 any_addr;
	__u32 pad;
};

/* --timed: each wait counted, also sent on the timed_samples ring buffer
 * (bpf/timed.bpf.h's, its records these) */
struct lock_timed {
	__u64 time;		/* when the wait began */
	__u64 dur;		/* ns */
	__u32 cpu;		/* where it ended */
	__u32 tid;
	struct lock_key k;
};

/* kernel lock waits nest (a mutex's slow path takes its wait_lock) */
struct lock_kwait_key {
	__u64 lock;
	__u32 tid;
	__u32 pad;
};

/* Per-CPU counters (map lock_counters), summed at the end. */
enum {
	LOCKC_FUTEX_WAITS,	/* futex waits counted */
	LOCKC_AT_ONCE,		/* FUTEX_WAIT that returned at once (-EAGAIN: the
				 * value had changed): no wait, not counted */
	LOCKC_KERNEL_WAITS,	/* kernel lock waits counted */
	LOCKC_MAP_FULL,		/* waits lost: a map was full */
	LOCKC_MAX_FULL,		/* waits counted, but lock_max was full: not in a longest wait */
	LOCKC_N,
};

#endif
