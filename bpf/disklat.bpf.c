// SPDX-License-Identifier: GPL-2.0
/* disklat.bpf.c — block I/O latency: block_rq_issue remembers the request
 * (time, process, device, size, operation), block_rq_complete sends one record
 * per request.  tp_btf and raw_tp versions; user space loads what attaches. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "disklat.h"
#include "events.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* -p: only I/O submitted by this process; -d: only this disk's */
const volatile __u32 targ_tgid = 0;
const volatile bool targ_dev = false;
const volatile __u32 targ_major = 0, targ_minor = 0;
/* block_rq_requeue attached (there is no block_io_start): a start's
 * requeued flag tells a request issued again from a new one at its address */
const volatile bool requeue_tracked = false;

/* Requests issued whose completion never came: their address started a new
 * request while their start was still here.  On virtio-blk, about one run
 * in twenty of 150 requests put back and issued again has one whose
 * completion ran no program (neither ours nor bpftrace's, while perf's
 * tracepoint count saw it): counted, not lost silently. */
__u64 unseen_requests = 0, unseen_bytes = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct disklat_start);
} starts SEC(".maps");

/* Two programs for tracepoint tp, calling fn(rq): name_btf (tp_btf) and
 * name_raw (raw_tp, where the BTF one does not attach); user space loads
 * one of them, or neither. */
#define REQUEST_PROGRAMS(tp, name, fn)				\
	SEC("tp_btf/" #tp)					\
	int BPF_PROG(name##_btf, struct request *rq)		\
	{							\
		return fn(rq);					\
	}							\
	SEC("raw_tp/" #tp)					\
	int BPF_PROG(name##_raw, struct request *rq)		\
	{							\
		return fn(rq);					\
	}

/* the submitting process, from block_io_start (kernel 6.5+; before it from
 * block_rq_insert, for a request queued before its issue): block_rq_issue
 * may run in a kworker when the request is dispatched asynchronously */
struct owner {
	__u32 pid;
	char comm[16];
};
#define OWNER_MARPLE 0xffffffffu	/* owner.pid of I/O submitted by marple itself */

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);	/* should an owner be left (block_rq_merge lets go of merged ones) */
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct owner);
} owners SEC(".maps");

/* A start left at key by a request whose completion never came, now that a
 * new request begins at its address: counted, and let go. */
static __always_inline void drop_unseen(__u64 *key, struct disklat_start *stale)
{
	__sync_fetch_and_add(&unseen_requests, 1);
	__sync_fetch_and_add(&unseen_bytes, stale->bytes);
	bpf_map_delete_elem(&starts, key);
}

/* The request at key is the current task's (or marple's own, left out) */
static __always_inline void set_owner(__u64 *key)
{
	struct owner o = {};

	if (self_current_is_marple())
		o.pid = OWNER_MARPLE;
	else
		events_owner(&o.pid, o.comm);
	bpf_map_update_elem(&owners, key, &o, BPF_ANY);
}

static __always_inline int on_issue(struct request *rq)
{
	__u64 key = (__u64)rq;
	struct disklat_start s = {};
	struct gendisk *disk = BPF_CORE_READ(rq, q, disk);

	struct owner *o = bpf_map_lookup_elem(&owners, &key);
	struct disklat_start *again;

	s.ts = bpf_ktime_get_ns();
	if (o) {
		s.pid = o->pid;
		__builtin_memcpy(s.comm, o->comm, sizeof(s.comm));
		if (s.pid == OWNER_MARPLE)
			return 0;
	} else {
		/* without block_io_start (before 6.5), or a request it
		 * started before we did */
		again = bpf_map_lookup_elem(&starts, &key);
		if (again && (again->requeued || !requeue_tracked)) {
			/* issued again: the driver had no room and the
			 * request was put back, to be issued from kblockd's
			 * kworker (or whatever task runs the queue next).
			 * Its first issue named the owner: timed from this
			 * issue, the one the device took, but still the
			 * submitter's. */
			again->ts = s.ts;
			again->bytes = BPF_CORE_READ(rq, __data_len);	/* merged into since */
			again->requeued = 0;
			return 0;
		}
		if (again)
			drop_unseen(&key, again);
		if (self_current_is_marple())
			return 0;
		events_owner(&s.pid, s.comm);
	}
	s.bytes = BPF_CORE_READ(rq, __data_len);
	s.op = BPF_CORE_READ(rq, cmd_flags) & 0xff;	/* REQ_OP_MASK */
	if (disk) {
		s.major = BPF_CORE_READ(disk, major);
		s.minor = BPF_CORE_READ(disk, first_minor);
	}
	if ((targ_tgid && s.pid != targ_tgid) || (targ_dev && (s.major != targ_major || s.minor != targ_minor)))
		return 0;
	if (bpf_map_update_elem(&starts, &key, &s, BPF_ANY))
		events_count(EVENTS_UNTRACKED);	/* issue not remembered */
	return 0;
}

static __always_inline int on_complete(struct request *rq, int error)
{
	__u64 key = (__u64)rq;
	struct disklat_start *s = bpf_map_lookup_elem(&starts, &key);
	struct disklat_event *e;

	/* the owner stays until now: a request the driver puts back is
	 * issued again, often from a kworker, and must keep its submitter */
	bpf_map_delete_elem(&owners, &key);
	if (!s)
		return 0;	/* issued before we started */
	e = events_reserve(sizeof(*e));
	if (!e) {
		bpf_map_delete_elem(&starts, &key);
		return 0;
	}
	e->complete_ns = bpf_ktime_get_ns();
	e->issue_ns = s->ts;
	e->pid = s->pid;
	e->bytes = s->bytes;
	e->op = s->op;
	e->dev_major = s->major;
	e->dev_minor = s->minor;
	e->error = error;
	__builtin_memcpy(e->comm, s->comm, sizeof(e->comm));
	bpf_map_delete_elem(&starts, &key);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

static __always_inline int on_start(struct request *rq)
{
	__u64 key = (__u64)rq;
	struct disklat_start *stale = bpf_map_lookup_elem(&starts, &key);

	/* a new request: a start left at this address is of one whose
	 * completion we never saw */
	if (stale)
		drop_unseen(&key, stale);
	set_owner(&key);
	return 0;
}

REQUEST_PROGRAMS(block_io_start, start, on_start)

REQUEST_PROGRAMS(block_rq_issue, issue, on_issue)

/* merged into another request and freed, never issued again nor
 * completed: its owner and any start (a request put back and then merged)
 * go, the other's issue counts its bytes */
static __always_inline int on_merge(struct request *rq)
{
	__u64 key = (__u64)rq;

	bpf_map_delete_elem(&owners, &key);
	bpf_map_delete_elem(&starts, &key);
	return 0;
}

REQUEST_PROGRAMS(block_rq_merge, merge, on_merge)

/* Without block_io_start: inserted into the queue by its submitter (a
 * request queued while the device is busy is first issued by kblockd's
 * kworker), or inserted again after it was put back (a start says so:
 * it keeps its owner). */
static __always_inline int on_insert(struct request *rq)
{
	__u64 key = (__u64)rq;

	if (!bpf_map_lookup_elem(&starts, &key))
		set_owner(&key);
	return 0;
}

REQUEST_PROGRAMS(block_rq_insert, insert, on_insert)

/* put back by the driver, to be issued again (kept only without
 * block_io_start, whose owner tells a request issued again from a new one) */
static __always_inline int on_requeue(struct request *rq)
{
	__u64 key = (__u64)rq;
	struct disklat_start *s = bpf_map_lookup_elem(&starts, &key);

	if (s)
		s->requeued = 1;
	return 0;
}

REQUEST_PROGRAMS(block_rq_requeue, requeue, on_requeue)

SEC("tp_btf/block_rq_complete")
int BPF_PROG(complete_btf, struct request *rq, blk_status_t error, unsigned int nr_bytes)
{
	return on_complete(rq, error);
}

SEC("raw_tp/block_rq_complete")
int BPF_PROG(complete_raw, struct request *rq, blk_status_t error, unsigned int nr_bytes)
{
	return on_complete(rq, error);
}
