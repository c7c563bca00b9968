/* timedrec.h — the per-sample record of --timed (bpf/timed.bpf.h sends it,
 * lib/collect/timedsamples.h reads it): when a sample was taken (or a block
 * began), on which CPU, by which thread, and the aggregation key it was
 * counted under, so user space can name its stack record. */
#ifndef MARPLE_TIMED_BPF_REC_H
#define MARPLE_TIMED_BPF_REC_H

#include "stacks.h"

struct timed_rec {
	__u64 time;			/* bpf_ktime_get_ns: the sample, or the start of a block */
	__u64 dur;			/* ns: a block's length (offcpu); 0 for an instant */
	__u32 cpu;
	__u32 tid;
	struct stack_key key;		/* key.pid is the process */
};

#endif
