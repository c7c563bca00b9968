/* procnews.h — the records of the proc_news ring buffer (bpf/procnews.bpf.h),
 * shared by the BPF programs and their user side (lib/collect/procnewsring.h).
 *
 * Everything a stack collector's programs tell user space about a process
 * travels on one ring, in the order it happened: a record is a struct
 * procnews_head, whose type says what follows it, then that body.  One ring
 * instead of one a kind: read from four rings, an image's snapshot (its
 * pid_note) and the unwinder's notes of the same image came in the order
 * the rings were polled, not the order they were made in.
 */
#ifndef MARPLE_PROCNEWS_H
#define MARPLE_PROCNEWS_H

enum procnews_type {
	PROCNEWS_IMAGE = 1,		/* struct pid_note (stacks.h): a new image of a process */
	PROCNEWS_DRAIN,			/* no body: a set is filling, drain (stackdrain.h) */
	PROCNEWS_UNWIND_REQUEST,	/* __u32 tgid: (re)read its mappings (unwindtables.bpf.h) */
	PROCNEWS_UNWIND_VMA,		/* struct unwind_vma_note (stacks.h): a file VMA the walk found */
	PROCNEWS_PYTHON,		/* struct py_request (python.h): is it Python, name a stack */
	PROCNEWS_NTYPES
};

/* 8 bytes, so that a body of 64-bit members starts aligned */
struct procnews_head {
	__u32 type;			/* enum procnews_type */
	__u32 pad;
};

/* One record of body type T on the ring (the BPF side reserves it whole:
 * only the pointer bpf_ringbuf_reserve gave can be submitted). */
#define PROCNEWS_RECORD(T)			\
	struct {				\
		struct procnews_head head;	\
		T body;				\
	}

#endif
