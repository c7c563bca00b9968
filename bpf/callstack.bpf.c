// SPDX-License-Identifier: GPL-2.0
/* callstack.bpf.c — timed stack sampling for marple-callstack.
 *
 * A perf_event program on cpu-clock, one per CPU.  Default: count
 * struct stack_key (pid, exec id, comm, user and kernel stack ids) in the
 * counts hash map (aggregation in the kernel).  raw_mode: one raw_sample per sample on the
 * events ring buffer.  dwarf_mode: user registers + the top of the user stack
 * on the ring buffer, unwound in user space with libunwind.  stacks_send_cuts:
 * a sample whose table walk stopped where a table was missing goes to user
 * space to be finished there (stacks.bpf.h), not counted.  timed_mode
 * (bpf/timed.bpf.h): each counted sample's time goes to user space too. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define STACKS_COUNTS 1
#define STACKS_EXEC_NOTES 1
#include "stacks.bpf.h"
#include "follow.bpf.h"
#include "timed.bpf.h"
#include "callstack.h"

const volatile __u32 targ_pid = 0;
const volatile __u32 targ_tid = 0;
const volatile bool want_user = true;
const volatile bool want_kernel = true;
const volatile bool include_idle = false;
const volatile bool raw_mode = false;
const volatile bool dwarf_mode = false;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} events SEC(".maps");

/* A sample taken in user mode has no kernel stack: bpf_get_stack would
 * find none (the kernel walks one only for a kernel-mode sample), after
 * a helper call, a callchain buffer taken and 2 KB zeroed (the kernel_stack
 * stage of a CPU-bound program's samples: 230-680 ns a timed sample). */
static __always_inline bool sample_in_user_mode(struct bpf_perf_event_data *ctx)
{
#if defined(__TARGET_ARCH_x86)
	/* user_mode(regs); the context is read a whole word at a time */
	__u64 cs = *(volatile __u64 *)((char *)ctx + __builtin_offsetof(struct bpf_perf_event_data, regs.cs));
	return (cs & 3) != 0;
#else
	return false;	/* always asked: the kernel says */
#endif
}

SEC("perf_event")
int do_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;

	if (tid == 0 && !include_idle)
		return 0;
	if (targ_pid && !follow_wanted(tgid, targ_pid))
		return 0;
	if (targ_tid && tid != targ_tid)
		return 0;
	if (self_current_is_marple())
		return 0;
	stacks_count(STACKS_SAMPLES);

	if (raw_mode) {
		struct raw_sample *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
		if (!e) {
			stacks_count(STACKS_RINGBUF_FULL);
			return 0;
		}
		e->type = REC_RAW;
		e->cpu = bpf_get_smp_processor_id();
		e->time = bpf_ktime_get_ns();
		e->pid = tgid;
		e->tid = tid;
		bpf_get_current_comm(&e->comm, sizeof(e->comm));
		bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
		return 0;
	}

	if (dwarf_mode && tgid != 0 && !stacks_current_is_kthread()) {
		struct dwarf_sample *e = stacks_dwarf_sample(&events, REC_DWARF, ctx, want_user, want_kernel);
		if (e)
			bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
		return 0;
	}

	struct stack_key key;
	stacks_fill_key(&key, ctx, want_user, false);
	if (want_kernel && !sample_in_user_mode(ctx))
		stacks_fill_kernel(&key, ctx);
	__u64 one = 1;
	if (STACKS_SEND_CUT(&key, &key, &one))
		return 0;
	stacks_add(&key, 1);
	timed_emit_now(&key, tid, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
