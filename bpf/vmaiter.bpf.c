// SPDX-License-Identifier: GPL-2.0
/* vmaiter.bpf.c — does this kernel let a perf-event program walk a task's
 * VMAs with the open-coded iterator (kfuncs bpf_iter_task_vma_new/next/
 * destroy, Linux 6.7)?  Loading is not enough: a kernel may accept the
 * program and refuse the walk where a sample runs (irqs disabled, NMI).  So
 * lib/collect/unwindtables.c attaches it to a task-clock event of its own
 * thread for a few samples and reads walked/refused: if a walk succeeded,
 * --unwind tables finds the files of all a sample's frames with one walk
 * of the VMAs (bpf/unwindtables.bpf.h); if not, with bpf_find_vma. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

extern int bpf_iter_task_vma_new(struct bpf_iter_task_vma *it, struct task_struct *task, __u64 addr) __ksym;
extern struct vm_area_struct *bpf_iter_task_vma_next(struct bpf_iter_task_vma *it) __ksym;
extern void bpf_iter_task_vma_destroy(struct bpf_iter_task_vma *it) __ksym;

__u64 walked, refused;

SEC("perf_event")
int vmaiter_probe(void *ctx)
{
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;

	if (bpf_iter_task_vma_new(&it, bpf_get_current_task_btf(), 0) == 0 && (vma = bpf_iter_task_vma_next(&it)))
		walked++;
	else
		refused++;
	bpf_iter_task_vma_destroy(&it);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
