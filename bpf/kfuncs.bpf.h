/* kfuncs.bpf.h — the kfuncs of kfuncs.h, as BPF code calls them: each a
 * helper number that lib/collect/kernelids.c makes the kfunc's call before
 * load. */
#ifndef MARPLE_KFUNCS_BPF_H
#define MARPLE_KFUNCS_BPF_H

#include "kfuncs.h"

static void *(*const kfunc_rdonly_cast)(const void *obj, __u32 btf_id) = (void *)(KFUNC_CALL_BASE + KFUNC_RDONLY_CAST);
static int (*const kfunc_iter_task_vma_new)(struct bpf_iter_task_vma *it, struct task_struct *task,
					    __u64 addr) = (void *)(KFUNC_CALL_BASE + KFUNC_ITER_TASK_VMA_NEW);
static struct vm_area_struct *(*const kfunc_iter_task_vma_next)(struct bpf_iter_task_vma *it) =
	(void *)(KFUNC_CALL_BASE + KFUNC_ITER_TASK_VMA_NEXT);
static void (*const kfunc_iter_task_vma_destroy)(struct bpf_iter_task_vma *it) =
	(void *)(KFUNC_CALL_BASE + KFUNC_ITER_TASK_VMA_DESTROY);

#endif
