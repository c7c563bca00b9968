/* callstack.h — records marple-callstack's BPF program sends to user space
 * (--raw and --dwarf); shared by bpf/callstack.bpf.c and collectors/marple-callstack.c. */
#ifndef MARPLE_CALLSTACK_H
#define MARPLE_CALLSTACK_H

#include "stacks.h"

enum { REC_RAW = 1, REC_DWARF = 2 };

struct raw_sample {
	__u32 type;			/* REC_RAW */
	__u32 cpu;
	__u64 time;			/* bpf_ktime_get_ns */
	__u32 pid, tid;
	char comm[MARPLE_COMM_LEN];
};

/* REC_DWARF: a struct dwarf_sample (stacks.h) */

#endif
