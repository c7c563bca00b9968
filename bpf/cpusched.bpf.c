// SPDX-License-Identifier: GPL-2.0
/* cpusched.bpf.c — every context switch (and optionally every wakeup) into a
 * ring buffer of the CPU it happened on.  The ring buffers are created by user
 * space, one per possible CPU, and put into the array-of-maps "rings"; user
 * space merges them in time order.  Both a tp_btf and a raw_tp version of each
 * program exist: user space loads the first one that really attaches. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "cpusched.h"

char LICENSE[] SEC("license") = "GPL";

/* Ring buffer fill level above which the consumer is woken; below it records
 * are committed without a wakeup and the consumer finds them on its timer. */
const volatile __u64 wakeup_bytes = 1 << 20;
/* Write into the perf buffer "pb" instead (for comparison, and for kernels
 * without BPF ring buffers). */
const volatile bool perfbuf = false;
/* -p: only switches into or out of this process's threads, and its wake-ups */
const volatile __u32 targ_tgid = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} pb SEC(".maps");

struct ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);		/* set to the number of CPUs */
	__type(key, __u32);
	__array(values, struct ring);
} rings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

static __always_inline void count_lost(void)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&lost, &zero);
	if (n)
		(*n)++;
}

static __always_inline struct cpusched_event *reserve(void **rbp, struct cpusched_event *tmp)
{
	__u32 cpu = bpf_get_smp_processor_id();
	void *rb;
	struct cpusched_event *e;

	if (perfbuf) {
		tmp->time = bpf_ktime_get_ns();
		tmp->cpu = cpu;
		*rbp = NULL;
		return tmp;
	}
	rb = bpf_map_lookup_elem(&rings, &cpu);
	if (!rb) {
		count_lost();
		return NULL;
	}
	e = bpf_ringbuf_reserve(rb, sizeof(*e), 0);
	if (!e) {
		count_lost();
		return NULL;
	}
	e->time = bpf_ktime_get_ns();
	e->cpu = cpu;
	*rbp = rb;
	return e;
}

static __always_inline void submit(void *ctx, void *rb, struct cpusched_event *e)
{
	if (perfbuf) {
		if (bpf_perf_event_output(ctx, &pb, BPF_F_CURRENT_CPU, e, sizeof(*e)))
			count_lost();
		return;
	}
	__u64 flags = bpf_ringbuf_query(rb, BPF_RB_AVAIL_DATA) >= wakeup_bytes ?
		BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	bpf_ringbuf_submit(e, flags);
}

static __always_inline int on_switch(void *ctx, bool preempt, struct task_struct *prev,
				     struct task_struct *next, unsigned int prev_state)
{
	void *rb = NULL;
	struct cpusched_event tmp, *e;

	if (targ_tgid && BPF_CORE_READ(prev, tgid) != targ_tgid && BPF_CORE_READ(next, tgid) != targ_tgid)
		return 0;
	e = reserve(&rb, &tmp);
	if (!e)
		return 0;
	e->type = CPUSCHED_SWITCH;
	e->preempt = preempt;
	e->prev_state = prev_state;
	e->prev_pid = BPF_CORE_READ(prev, pid);
	e->next_pid = BPF_CORE_READ(next, pid);
	e->next_tgid = BPF_CORE_READ(next, tgid);
	e->next_prio = BPF_CORE_READ(next, prio);
	e->target_cpu = 0;
	BPF_CORE_READ_INTO(&e->prev_comm, prev, comm);
	BPF_CORE_READ_INTO(&e->next_comm, next, comm);
	submit(ctx, rb, e);
	return 0;
}

static __always_inline int on_wakeup(void *ctx, struct task_struct *p)
{
	void *rb = NULL;
	struct cpusched_event tmp, *e;

	if (targ_tgid && BPF_CORE_READ(p, tgid) != targ_tgid && (__u32)(bpf_get_current_pid_tgid() >> 32) != targ_tgid)
		return 0;
	e = reserve(&rb, &tmp);

	if (!e)
		return 0;
	e->type = CPUSCHED_WAKEUP;
	e->preempt = 0;
	e->prev_state = 0;
	e->prev_pid = (__u32)bpf_get_current_pid_tgid();
	bpf_get_current_comm(&e->prev_comm, sizeof(e->prev_comm));
	e->next_pid = BPF_CORE_READ(p, pid);
	e->next_tgid = BPF_CORE_READ(p, tgid);
	e->next_prio = BPF_CORE_READ(p, prio);
	e->target_cpu = BPF_CORE_READ(p, wake_cpu);
	BPF_CORE_READ_INTO(&e->next_comm, p, comm);
	submit(ctx, rb, e);
	return 0;
}

/* tp_btf: the task pointers are typed, so plain loads replace the helper
 * calls of BPF_CORE_READ (about a third of the cost per switch). */
SEC("tp_btf/sched_switch")
int BPF_PROG(switch_btf, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	void *rb = NULL;
	struct cpusched_event tmp, *e;

	if (targ_tgid && prev->tgid != targ_tgid && next->tgid != targ_tgid)
		return 0;
	e = reserve(&rb, &tmp);
	if (!e)
		return 0;
	e->type = CPUSCHED_SWITCH;
	e->preempt = preempt;
	e->prev_state = prev_state;
	e->prev_pid = prev->pid;
	e->next_pid = next->pid;
	e->next_tgid = next->tgid;
	e->next_prio = next->prio;
	e->target_cpu = 0;
	__builtin_memcpy(e->prev_comm, prev->comm, sizeof(e->prev_comm));
	__builtin_memcpy(e->next_comm, next->comm, sizeof(e->next_comm));
	submit(ctx, rb, e);
	return 0;
}

SEC("raw_tp/sched_switch")
int BPF_PROG(switch_raw, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	return on_switch(ctx, preempt, prev, next, prev_state);
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(wakeup_btf, struct task_struct *p)
{
	return on_wakeup(ctx, p);
}

SEC("raw_tp/sched_wakeup")
int BPF_PROG(wakeup_raw, struct task_struct *p)
{
	return on_wakeup(ctx, p);
}
