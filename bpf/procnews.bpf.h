/* procnews.bpf.h — the one ring buffer on which a stack collector's programs
 * tell user space what is new about a process (bpf/procnews.h: a typed
 * record each), and the helpers that put a record on it.  Include after
 * vmlinux.h and bpf_helpers.h.
 *
 * Defines
 *   proc_news                      BPF_MAP_TYPE_RINGBUF, read by lib/collect/procnewsring.h
 * and
 *   procnews_reserve(type, size)   a record of size bytes (a PROCNEWS_RECORD)
 *                                  with its head filled, or NULL (ring full)
 *
 *   PROCNEWS_RECORD(struct pid_note) *r = procnews_reserve(PROCNEWS_IMAGE, sizeof(*r));
 *   if (r) { r->body.pid = tgid; ...; bpf_ringbuf_submit(r, 0); }
 */
#ifndef MARPLE_PROCNEWS_BPF_H
#define MARPLE_PROCNEWS_BPF_H

#include "procnews.h"

/* the four rings it replaces held 148 KiB (pid notes 64, unwind requests 4,
 * VMA notes 64, Python requests 16): a burst of one kind (the VMA notes of a
 * build's first seconds) has the room the others are not using */
#define PROCNEWS_RING_BYTES (256 * 1024)

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, PROCNEWS_RING_BYTES);
} proc_news SEC(".maps");

static __always_inline void *procnews_reserve(__u32 type, __u64 size)
{
	struct procnews_head *h = bpf_ringbuf_reserve(&proc_news, size, 0);

	if (h) {
		h->type = type;
		h->pad = 0;
	}
	return h;
}

#endif
