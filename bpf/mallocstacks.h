/* mallocstacks.h — records shared by bpf/mallocstacks.bpf.c and
 * collectors/marple-mallocstacks.c. */
#ifndef MARPLE_MALLOCSTACKS_H
#define MARPLE_MALLOCSTACKS_H

#include "stacks.h"

/* One aggregate per process, user stack and immediate caller.  The caller
 * (the return address at the top of the stack when the probe fires) is kept
 * apart because a frame-pointer walk that starts at a function's first
 * instruction skips it. */
struct mallocstacks_key {
	struct stack_key k;
	__u64 caller;
};

/* Which function alloc_enter is attached to: its uprobe's cookie */
enum { MALLOCSTACKS_MALLOC, MALLOCSTACKS_CALLOC, MALLOCSTACKS_REALLOC, MALLOCSTACKS_NFUNCS };

struct mallocstacks_val {
	__u64 bytes;
	__u64 calls;
};

#endif
