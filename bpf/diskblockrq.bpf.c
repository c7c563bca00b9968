// SPDX-License-Identifier: GPL-2.0
/* diskblockrq.bpf.c — block requests counted (and their bytes summed) by the
 * issuing process, its user stack and its kernel stack, at block_rq_issue or
 * block_rq_insert (tp_btf: no tracefs needed). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "stacks.bpf.h"
#include "diskblockrq.h"

const volatile __u32 targ_tgid = 0;
const volatile __u32 targ_major = 0;	/* with targ_dev_set: only this device */
const volatile __u32 targ_minor = 0;
const volatile int targ_dev_set = 0;
const volatile int want_user = 1;
const volatile int want_kernel = 1;

/* one per set, drained while capturing (lib/collect/stackdrain.h) */
STACKS_COUNT_MAPS(struct stack_key, struct diskblockrq_val, 65536)

static __always_inline int count_rq(void *ctx, struct request *rq)
{
	struct stack_key key;
	struct diskblockrq_val *v;
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if ((targ_tgid && tgid != targ_tgid) || self_current_is_marple())
		return 0;
	if (targ_dev_set) {
		struct gendisk *disk = BPF_CORE_READ(rq, q, disk);
		if (!disk || BPF_CORE_READ(disk, major) != targ_major)
			return 0;
		/* a partition's requests carry the whole disk */
		if (targ_minor != (__u32)BPF_CORE_READ(disk, first_minor))
			return 0;
	}
	stacks_count(STACKS_SAMPLES);
	stacks_fill_key(&key, ctx, want_user, want_kernel);
	struct diskblockrq_val add = { 1, BPF_CORE_READ(rq, __data_len) };
	if (STACKS_SEND_CUT(&key, &key, &add))
		return 0;
	v = stacks_count_value(&key);
	if (!v)
		return 0;
	__sync_fetch_and_add(&v->requests, add.requests);
	__sync_fetch_and_add(&v->bytes, add.bytes);
	return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(rq_issue, struct request *rq)
{
	return count_rq(ctx, rq);
}

SEC("tp_btf/block_rq_insert")
int BPF_PROG(rq_insert, struct request *rq)
{
	return count_rq(ctx, rq);
}

char LICENSE[] SEC("license") = "GPL";
