/* diskblockrq.h — the value shared by bpf/diskblockrq.bpf.c and
 * collectors/marple-diskblockrq.c (the key is struct stack_key). */
#ifndef MARPLE_DISKBLOCKRQ_H
#define MARPLE_DISKBLOCKRQ_H

#include "stacks.h"

struct diskblockrq_val {
	__u64 requests;
	__u64 bytes;
};

#endif
