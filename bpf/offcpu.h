/* offcpu.h — what bpf/offcpu.bpf.c and collectors/marple-offcpu.c share:
 * the start map's value and the --dwarf ring buffer records. */
#ifndef MARPLE_OFFCPU_H
#define MARPLE_OFFCPU_H

#include "stacks.h"

/* start[tid]: a thread off the CPU since ts, with the stacks it left with
 * (key), or, dwarf set, with a copy sent as REC_OFF at ts; runnable since
 * runnable_ts (runq_mode: preempted, so ts, or woken; 0 while blocked) */
struct start {
	__u64 ts;
	__u64 runnable_ts;
	__u32 dwarf;
	__u32 pad;
	struct stack_key key;
};

enum {
	REC_OFF = 1,		/* struct dwarf_sample: a thread left the CPU at ->time */
	REC_WAKE = 2,		/* struct wake_record: it came back */
	REC_ONCPU = 3,		/* struct dwarf_sample: an on-CPU sample (--both) */
};

struct wake_record {
	__u32 type;		/* REC_WAKE */
	__u32 tid;
	__u64 off_ts;		/* its REC_OFF's time */
	__u64 delta_ns;		/* how long it was away (every block: short ones too) */
};

#endif
