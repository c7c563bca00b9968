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
	WAKERS_N,
};

struct wake_record {
	__u32 type;		/* REC_WAKE */
	__u32 tid;
	__u64 off_ts;		/* its REC_OFF's time */
	__u64 delta_ns;		/* how long it was away (every block: short ones too) */
};

#endif
