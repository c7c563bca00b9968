/* stackscratch.bpf.h — what the stack store (stacks.bpf.h) and the user-stack
 * unwinder (unwindtables.bpf.h) share, so that each header reads alone and neither
 * includes the other's internals:
 *   stack_scratch          per-CPU buffer a stack is built in before it is stored
 *   stacks_percpu_inc(m, i)   counter i += 1 on this CPU, in per-CPU array m
 */
#ifndef MARPLE_STACKSCRATCH_BPF_H
#define MARPLE_STACKSCRATCH_BPF_H

#include "stacks.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[MARPLE_STACK_DEPTH]);
} stack_scratch SEC(".maps");

static __always_inline void stacks_percpu_inc(void *counters, __u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(counters, &idx);
	if (v)
		(*v)++;
}

#endif
