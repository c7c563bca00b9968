// SPDX-License-Identifier: GPL-2.0
/* mallocstacks.bpf.c — bytes requested from libc malloc/calloc/realloc by
 * process and user call stack, aggregated in the kernel. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "stacks.bpf.h"
#include "mallocstacks.h"

const volatile __u32 targ_tgid = 0;	/* 0: every process */
const volatile __u64 sample_every = 1;	/* count one call in N, weighted by N */
int stopped;	/* set by user space at the end (detaching uprobes is slow) */

/* one per set, drained while capturing (lib/collect/stackdrain.h) */
STACKS_COUNT_MAPS(struct mallocstacks_key, struct mallocstacks_val, 65536)

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1);
} sampler SEC(".maps");

static __always_inline int record(struct pt_regs *ctx, __u64 size)
{
	struct mallocstacks_key key;
	struct mallocstacks_val *v;
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (stopped || (targ_tgid && tgid != targ_tgid) || self_current_is_marple())
		return 0;
	if (sample_every > 1) {
		__u32 i = 0;
		__u64 *n = bpf_map_lookup_elem(&sampler, &i);
		if (!n || (*n)++ % sample_every)
			return 0;
	}
	stacks_count(STACKS_SAMPLES);
	__builtin_memset(&key, 0, sizeof(key));
	stacks_fill_key(&key.k, ctx, 1, 0);
	bpf_probe_read_user(&key.caller, sizeof(key.caller), (void *)PT_REGS_SP(ctx));
	struct mallocstacks_val add = { size * sample_every, sample_every };
	if (STACKS_SEND_CUT(&key.k, &key, &add))
		return 0;
	v = stacks_count_value(&key);
	if (!v)
		return 0;
	__sync_fetch_and_add(&v->bytes, add.bytes);
	__sync_fetch_and_add(&v->calls, add.calls);
	return 0;
}

/* malloc(size), calloc(n, size) and realloc(ptr, size): one program, the
 * function its uprobe's cookie (MALLOCSTACKS_*), so that the verifier walks
 * the stack code once, not three times (three programs were most of a
 * start's CPU).  realloc(NULL, n) calls malloc inside libc, which counts it. */
SEC("uprobe")
int BPF_KPROBE(alloc_enter, __u64 a, __u64 b)
{
	__u64 func = bpf_get_attach_cookie(ctx), size = a;

	if (func == MALLOCSTACKS_CALLOC)
		size = a * b;
	else if (func == MALLOCSTACKS_REALLOC) {
		if (!a)
			return 0;
		size = b;
	}
	return record(ctx, size);
}

char LICENSE[] SEC("license") = "GPL";
