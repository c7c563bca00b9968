/* memleak.h — records shared by bpf/memleak.bpf.c and collectors/marple-memleak.c. */
#ifndef MARPLE_MEMLEAK_H
#define MARPLE_MEMLEAK_H

#define MEMLEAK_KERNEL_TGID 0xffffffffu	/* key tgid of kernel allocations */

/* How the function alloc_exit returns from gives its result: the uretprobe's
 * cookie */
enum { MEMLEAK_RET_POINTER, MEMLEAK_RET_STATUS, MEMLEAK_RET_MMAP };

/* An outstanding allocation: user addresses repeat across processes, and
 * across the images of one process (exec replaces its address space), so
 * the process and its image are part of the key. */
struct memleak_key {
	__u32 tgid;
	__u32 exec_id;		/* image: task->self_exec_id (low 32 bits); 0 for kernel */
	__u64 addr;
};

struct memleak_alloc {
	__u64 size;		/* bytes, already multiplied by the sampling rate */
	__u64 ts;		/* bpf_ktime_get_ns() at allocation */
	__s32 stack;		/* stack id (user or kernel), <0 if the walk failed */
	__u32 tgid;		/* process it is attributed to */
	__u32 gen;		/* the generation of stack's set (stacks_get_kept) */
	__u32 pad;
};

/* Per process: outstanding bytes and allocations of its current image as
 * seen since the start (an exec drops those of the image it replaces). */
struct memleak_proc {
	__s64 bytes;
	__s64 allocs;
	char comm[16];
	__u32 exec_id;		/* the current image (user allocations) */
	__u32 pad;
};

/* Per-CPU counters (map ml_counters); stack errors are in stack_counters. */
enum memleak_counter {
	ML_ALLOCS_FULL,		/* allocation table full: not tracked */
	ML_PENDING_FULL,	/* per-thread call table full: call not tracked */
	ML_RESERVATIONS,	/* mmaps of address space only (PROT_NONE, MAP_NORESERVE): left out */
	ML_RESERVED_BYTES,	/* their bytes */
	ML_CALLS_UNRETURNED,	/* calls whose return was not seen (begun before the
				 * return probe was attached): not tracked */
	ML_NCOUNTERS,
};

#endif
