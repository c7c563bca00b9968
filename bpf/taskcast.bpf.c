// SPDX-License-Identifier: GPL-2.0
/* taskcast.bpf.c — does this kernel let a program read kernel memory through
 * bpf_rdonly_cast to void (Linux 6.17)?  The stack collectors then read the
 * current task's pointer fields that way (bpf/task.bpf.h), which spares the
 * verifier a search of the kernel's BTF at each such load.  Loading the
 * program is the answer: the verifier checks the load it makes. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

SEC("perf_event")
int taskcast_probe(void *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();

	return *(const __u64 *)(bpf_rdonly_cast(t, 0) + bpf_core_field_offset(t->mm)) != 0;
}

char LICENSE[] SEC("license") = "GPL";
