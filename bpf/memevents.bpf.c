// SPDX-License-Identifier: GPL-2.0
/* memevents.bpf.c — memory events by process and stack: precise memory
 * samples from a PMU event (perf_event program) where the CPU has one, or page
 * faults (exceptions:page_fault_user/page_fault_kernel, raw_tp) everywhere. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "stacks.bpf.h"

const volatile __u32 targ_tgid = 0;
const volatile int want_user = 1;
const volatile int want_kernel = 1;

/* one per set, drained while capturing (lib/collect/stackdrain.h) */
STACKS_COUNT_MAPS(struct stack_key, __u64, 65536)

/* Per CPU: a stack walk is in progress.  Walking a user stack can fault (in
 * kernel mode, fixed up); those faults are ours and are not counted. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1);
} walking SEC(".maps");

static __always_inline int count(void *ctx, int kernel)
{
	struct stack_key key;
	__u64 *v;
	__u32 zero = 0, *busy;

	if ((targ_tgid && (bpf_get_current_pid_tgid() >> 32) != targ_tgid) || self_current_is_marple())
		return 0;
	busy = bpf_map_lookup_elem(&walking, &zero);
	if (!busy || *busy)
		return 0;
	*busy = 1;
	stacks_count(STACKS_SAMPLES);
	stacks_fill_key(&key, ctx, want_user, want_kernel && kernel);
	*busy = 0;
	__u64 one = 1;
	if (STACKS_SEND_CUT(&key, &key, &one))
		return 0;
	v = stacks_count_value(&key);
	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

/* exceptions:page_fault_user and page_fault_kernel (one event class: the
 * address, the faulting context's registers, the error code), one program
 * attached to both by name: each program loaded is the stack code verified
 * again.  Which one fired is the faulting context's privilege level, the low
 * bits of its cs (3: user mode; x86-64). */
SEC("raw_tp")
int fault(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx->args[1];

	return count(ctx, (BPF_CORE_READ(regs, cs) & 3) != 3);
}

SEC("perf_event")
int mem_sample(struct bpf_perf_event_data *ctx)
{
	return count(ctx, 1);
}

char LICENSE[] SEC("license") = "GPL";
