// SPDX-License-Identifier: GPL-2.0
/* offcpu.bpf.c — off-CPU time by stack for marple-offcpu.
 *
 * sched_switch (tp_btf, or raw_tp where tp_btf cannot load): when a thread
 * leaves the CPU, remember when and with which stacks (start map); when it
 * comes back, add the microseconds it was away to counts[its stack key].
 * With both_mode, a perf_event cpu-clock program also adds on-CPU samples,
 * each worth sample_us microseconds, to the same map. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define STACKS_COUNTS 1
#define STACKS_EXEC_NOTES 1
#include "stacks.bpf.h"

const volatile __u32 targ_pid = 0;
const volatile __u32 targ_tid = 0;
const volatile bool want_user = true;
const volatile bool want_kernel = true;
const volatile __u32 state_mask = 0;	/* 0: any; bit 0 R (preempted), then TASK_* << 1 */
const volatile __u64 min_block_ns = 1000;
const volatile __u64 sample_us = 0;	/* both_mode: weight of an on-CPU sample */

#define TASK_DEAD_STATE 0x80	/* TASK_DEAD in include/linux/sched.h (a #define, not in BTF) */

struct start {
	__u64 ts;
	struct stack_key key;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, struct start);
} start SEC(".maps");

/* per-CPU scratch: struct start is too big for the BPF stack with a key beside it */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct start);
} scratch SEC(".maps");

static __always_inline int wanted(__u32 tgid, __u32 tid)
{
	if (tid == 0)
		return 0;
	if (targ_pid && tgid != targ_pid)
		return 0;
	if (targ_tid && tid != targ_tid)
		return 0;
	return 1;
}

static __always_inline int on_switch(void *ctx, bool preempt, struct task_struct *prev,
				     struct task_struct *next, unsigned int prev_state)
{
	__u32 zero = 0;
	__u64 now = bpf_ktime_get_ns();
	__u32 ptid = BPF_CORE_READ(prev, pid), ptgid = BPF_CORE_READ(prev, tgid);
	__u32 ntid = BPF_CORE_READ(next, pid);

	/* prev leaves the CPU: we run in its context, so its stacks are current's.
	 * A thread leaving for the last time (TASK_DEAD: it has exited) is not
	 * blocked and never comes back: no entry, or it would count as off-CPU
	 * until the end of the capture and fill the map on a busy machine. */
	if (wanted(ptgid, ptid) && !(prev_state & TASK_DEAD_STATE)) {
		__u32 bit = preempt ? 1 : (prev_state & 0xff) << 1;
		if (!state_mask || (state_mask & bit) || (!bit && (state_mask & 1))) {
			struct start *s = bpf_map_lookup_elem(&scratch, &zero);
			if (s) {
				stacks_count(STACKS_SAMPLES);
				stacks_fill_key(&s->key, ctx, want_user, want_kernel);
				s->ts = now;
				if (bpf_map_update_elem(&start, &ptid, s, BPF_ANY) != 0)
					stacks_count(STACKS_MAP_FULL);
			}
		}
	}
	/* next comes back: add the time it was away */
	struct start *s = bpf_map_lookup_elem(&start, &ntid);
	if (s) {
		__u64 delta = now - s->ts;
		if (delta >= min_block_ns)
			stacks_add(&s->key, delta / 1000);
		bpf_map_delete_elem(&start, &ntid);
	}
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(switch_btf, bool preempt, struct task_struct *prev, struct task_struct *next, unsigned int prev_state)
{
	return on_switch(ctx, preempt, prev, next, prev_state);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(switch_raw, bool preempt, struct task_struct *prev, struct task_struct *next, unsigned int prev_state)
{
	return on_switch(ctx, preempt, prev, next, prev_state);
}

SEC("perf_event")
int on_cpu_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct stack_key key;

	if (!wanted(id >> 32, (__u32)id))
		return 0;
	stacks_count(STACKS_SAMPLES);
	stacks_fill_key(&key, ctx, want_user, want_kernel);
	stacks_add(&key, sample_us);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
