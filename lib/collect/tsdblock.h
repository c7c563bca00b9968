/* tsdblock.h — where glibc keeps a thread's first 32 pthread keys in its
 * struct pthread, which the thread pointer (fsbase) points at: found here,
 * with a key of our own and a value no one else has, instead of trusting
 * one glibc's layout.  An interpreter's process maps the same glibc as ours
 * when both come from the system; the BPF side checks each thread state it
 * finds by its thread id (bpf/python.bpf.h).
 *
 *   uint32_t off;
 *   if (tsdblock_find(&off) == 0) ...   // key k's value at fsbase + off + 8 + 16 * k
 */
#ifndef MARPLE_TSDBLOCK_H
#define MARPLE_TSDBLOCK_H

#include <stdint.h>

/* The offset of the keys' block in struct pthread into *out: 0, or -1 when
 * it is not found (a glibc that keeps them elsewhere). */
int tsdblock_find(uint32_t *out);

#endif
