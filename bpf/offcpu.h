/* offcpu.h — what bpf/offcpu.bpf.c and collectors/marple-offcpu.c share:
 * the start map's value and the --dwarf ring buffer records. */
#ifndef MARPLE_OFFCPU_H
#define MARPLE_OFFCPU_H

#include "stacks.h"

/* start[tid]: a thread off the CPU since ts, with the stacks it left with
 * (key), or, dwarf set, with a copy sent as REC_OFF at ts; runnable since
 * runnable_ts (runq_mode: preempted, so ts, or woken; 0 while blocked);
 * waker_flags: WAKER_PREEMPTED, or (wakers_mode) WAKER_SEEN when it was woken by
 * waker's stacks */
struct start {
	__u64 ts;
	__u64 runnable_ts;
	__u32 dwarf;
	__u32 waker_flags;
	struct stack_key key;
	struct stack_key waker;
	struct stack_key waker2;
};

enum {
	WAKER_SEEN = 1,		/* waker holds the stacks sched_waking ran in */
	WAKER_PREEMPTED = 2,	/* not blocked: preempted, nobody wakes it */
	WAKER2_SEEN = 4,	/* (second_hop) waker2: the stacks that last woke the waker */
	WAKER_EARLY = 8,	/* the waker was seen before the switch-out (struct early_waker):
				 * a sched_waking seen after it replaces it */
};

/* early[tid]: a waker seen at sched_waking while the thread it wakes was
 * between its dequeue and its switch-out (on a CPU, off its run queue: no
 * start entry yet), for that switch-out to take; nvcsw, the wakee's
 * voluntary switches then, tells a switch-out of that block (nvcsw or one
 * more) from a later one.  Without it, 1.3% of pingpace's 44,000 blocks
 * a 5 s capture went without their waker: the switch-out's program
 * spends microseconds on the stacks before the entry exists. */
struct early_waker {
	__u64 nvcsw;
	__u32 waker_flags;	/* WAKER_SEEN, WAKER2_SEEN */
	__u32 pad;
	struct stack_key waker;
	struct stack_key waker2;
};

enum {
	REC_OFF = 1,		/* struct dwarf_sample: a thread left the CPU at ->time */
	REC_WAKE = 2,		/* struct wake_record: it came back */
	REC_ONCPU = 3,		/* struct dwarf_sample: an on-CPU sample (--both) */
	REC_WAKER = 4,		/* struct waker_record: a block and who ended it (--wakers) */
};

/* --wakers: a block of at least min_block_ns, its stacks and its waker's */
struct waker_record {
	__u32 type;		/* REC_WAKER */
	__u32 waker_flags;
	__u64 off_us;		/* blocked (with runq_mode: until woken) */
	struct stack_key blocked;
	struct stack_key waker;
	struct stack_key waker2;	/* WAKER2_SEEN */
};

/* --wakers' counts (wakers map, per CPU) */
enum {
	WAKERS_SENT,		/* blocks sent with their waker */
	WAKERS_UNSEEN,		/* blocks whose wake-up was not seen: counted without a waker */
	WAKERS_LOST,		/* ring buffer full: the block is counted without its waker */
	WAKERS_EARLY,		/* blocks sent with a waker seen before their switch-out */
	WAKERS_N,
};

/* The kernel stack memo: a user thread's kernel stack at a switch-out is
 * known by its fingerprint (struct kstack_print: the kernel text addresses
 * on its kernel stack with their places, from the tracepoint's arguments up
 * to the return into do_syscall_64, whose place the kernel randomizes at
 * every system call), and taken from kstack_memo instead of walked (2.6 us)
 * when a switch-out had it before in the same stack set; every
 * KSTACK_CHECK_EVERY-th is walked anyway and a different stack counted. */
struct kstack_print {
	__u64 hash;
	__u64 nr;		/* the system call (orig_ax) */
};

struct kstack_memo {
	struct kstack_print print;	/* its key again: an LRU map hands a freed
					 * element to another key at once, even to
					 * a reader that found it a moment before */
	__s32 kern_stack_id;
	__u32 set, gen;		/* the stack set the id is of, its generation */
	__u32 until_check;	/* hits before the next check */
};
#define KSTACK_CHECK_EVERY 16
#define KSTACK_PRINT_WORDS 512	/* 4 KB of kernel stack scanned at most */

/* the memo's counts (kstack_counts map, per CPU) */
enum {
	KSTACK_HITS,		/* switch-outs whose kernel stack was the memo's */
	KSTACK_MISSES,		/* walked and remembered: not in the memo */
	KSTACK_CHECKED,		/* in the memo, walked anyway to check it */
	KSTACK_WRONG,		/* of those, a different stack: the memo's replaced */
	KSTACK_NO_PRINT,	/* walked: no return into do_syscall_64 in 4 KB (not in a
				 * system call, or deeper) */
	KSTACK_N,
};

struct wake_record {
	__u32 type;		/* REC_WAKE */
	__u32 tid;
	__u64 off_ts;		/* its REC_OFF's time */
	__u64 delta_ns;		/* how long it was away (every block: short ones too) */
};

#endif
