/* kfuncs.h — the kernel functions (kfuncs) our BPF programs call, shared
 * with lib/collect/kernelids.c.
 *
 * A program calls each through a helper number of ours (KFUNC_CALL_BASE +
 * its enum kfunc), not an extern: libbpf resolves an extern kfunc by
 * reading and indexing the kernel's whole BTF (5.5 MB: 3-4 ms of every
 * collector's start).  kernelids.c turns each such call into the kfunc's
 * call before load, with its BTF id from a file kept once a boot.  On a
 * kernel without the kfunc the number stays: a helper that does not exist,
 * which the verifier refuses only where the call can run (the program's
 * read-only configuration makes it dead code there). */
#ifndef MARPLE_KFUNCS_H
#define MARPLE_KFUNCS_H

#define KFUNC_CALL_BASE 0x4d4b0000	/* "MK": far above any helper's number */

enum kfunc {
	KFUNC_RDONLY_CAST,		/* bpf_rdonly_cast */
	KFUNC_ITER_TASK_VMA_NEW,	/* bpf_iter_task_vma_new */
	KFUNC_ITER_TASK_VMA_NEXT,	/* bpf_iter_task_vma_next */
	KFUNC_ITER_TASK_VMA_DESTROY,	/* bpf_iter_task_vma_destroy */
	KFUNC_COUNT
};

#endif
