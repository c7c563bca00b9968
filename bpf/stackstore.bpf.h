/* stackstore.bpf.h — the stack store of the stack collectors (stacks.bpf.h
 * and python.bpf.h store stacks through it; include after vmlinux.h and the
 * bpf_helpers.h family).
 *
 * Defines
 *   stacks_ctl      the control block of the two sets (struct stacks_ctl, stacks.h)
 *   stacks          id -> u64[MARPLE_STACK_DEPTH], read like a stack-trace map
 *   stack_slots     which hash owns a slot of stacks (sized like it)
 *   stack_counters  per-CPU u64 counters indexed by enum stack_counter
 *   drain_requests  drain requests for a drainer thread of its own
 * and
 *   stacks_count(i)             counter i += 1 on this CPU
 *   stacks_ctl_get(), stacks_active_set()
 *   stacks_note_fill(c, used, limit)   a set's fill counted; a drain asked for past limit
 *   stacks_store(n, user)       the id in the store of the stack in
 *                               stack_scratch[0..n)
 *   stacks_exec_id()            current's image: task->self_exec_id (low 32 bits)
 * (stacks.bpf.h says how they are used.)
 */
#ifndef MARPLE_STACKSTORE_BPF_H
#define MARPLE_STACKSTORE_BPF_H

#include "procnews.bpf.h"
#include "stacks.h"
#include "stackscratch.bpf.h"

#ifndef EEXIST
#define EEXIST 17
#endif
#ifndef EFAULT
#define EFAULT 14
#endif
#ifndef ENOMEM
#define ENOMEM 12
#endif
#ifndef E2BIG
#define E2BIG 7
#endif

/* Stacks are stored by content: a stack's id is a slot of the stacks array
 * chosen by a 64-bit hash of its addresses, with double hashing, so identical
 * stacks share an id and different ones do not collide (a
 * BPF_MAP_TYPE_STACK_TRACE map is direct-mapped and drops a stack whose
 * bucket is taken: ~5% of the stacks of a busy machine with 16384 buckets).
 * stack_slots records which hash owns a slot; claiming one is atomic
 * (a compare and exchange).  stacks[id] holds the addresses leaf first, zero-terminated,
 * as a stack-trace map would. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);	/* user space flips the set in place */
	__type(key, __u32);
	__type(value, struct stacks_ctl);
} stacks_ctl SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_MMAPABLE);	/* user space reads it in place */
	__type(key, __u32);
	__type(value, __u64[MARPLE_STACK_DEPTH]);
} stacks SEC(".maps");

/* which hash owns a slot of stacks (0: free), claimed with a compare and
 * exchange: an array entry is an address computed in place, where a hash
 * map's lookup made storing a sample's two stacks take 1.6-2.1 us, not
 * 0.8-1.2, on a loaded machine (bench callstack-bpf's store stage), and
 * it takes no lock (a program in NMI
 * context, cpu-clock, finding the bucket of a hash map locked by the
 * syscall it interrupted failed with EBUSY: stacks were lost).  User space
 * reads and frees the idle set's half in place. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
} stack_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STACKS_NCOUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} stack_counters SEC(".maps");

/* drain requests for a drainer thread (stacks_ctl.drain_thread): read by it
 * alone, so a request wakes it at once */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} drain_requests SEC(".maps");


/* Global: verified once, not at each of its sites (unwind_count_add) */
__noinline int stacks_count(__u32 idx)
{
	stacks_percpu_inc(&stack_counters, idx);
	return 0;
}

static __always_inline struct stacks_ctl *stacks_ctl_get(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&stacks_ctl, &zero);
}

/* The set programs write into now (0 or 1). */
static __always_inline __u32 stacks_active_set(void)
{
	struct stacks_ctl *c = stacks_ctl_get();
	return c ? c->set & 1 : 0;
}

/* *used (one set's fill) += 1; past limit, ask user space to drain (once per
 * flip: user space clears drain_asked; two programs racing may both ask) */
static __always_inline void stacks_note_fill(struct stacks_ctl *c, __u64 *used, __u64 limit)
{
	__sync_fetch_and_add(used, 1);
	if (*used < limit || c->drain_asked)
		return;
	c->drain_asked = 1;
	c->asked_ns = bpf_ktime_get_ns();
	struct procnews_head *e = c->drain_thread ? bpf_ringbuf_reserve(&drain_requests, sizeof(*e), 0)
						  : procnews_reserve(PROCNEWS_DRAIN, sizeof(*e));
	if (!e) {
		c->drain_asked = 0;
		return;
	}
	e->type = PROCNEWS_DRAIN;
	e->pad = 0;
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);	/* even if the reader is behind */
}

/* The hash of words[first, end) (end <= MARPLE_STACK_DEPTH), from seed,
 * 8 words a bpf_loop step: the verifier checks one step (unrolled in place,
 * each of the 32 groups was a branch it walked: 21,000 instructions more in
 * the sampling program with Python's copy of it, 2,500 in the store's) */
struct stacks_hash_walk {
	const __u64 *words;
	__u32 first, end;
	__u64 hash;
};

static long stacks_hash_step(__u64 i, void *ctx)
{
	struct stacks_hash_walk *w = ctx;
	__u32 at = w->first + (__u32)i * 8;
	__u64 h = w->hash;

	if (at >= w->end)
		return 1;
#pragma unroll
	for (int j = 0; j < 8; j++) {
		__u32 k = at + j;
		if (k < w->end)
			h = stacks_hash_word(h, w->words[k & (MARPLE_STACK_DEPTH - 1)]);
	}
	w->hash = h;
	return 0;
}

static __always_inline __u64 stacks_hash_words(const __u64 *words, __u32 first, __u32 end, __u64 seed)
{
	struct stacks_hash_walk w = { .words = words, .first = first, .end = end, .hash = seed };

	bpf_loop(MARPLE_STACK_DEPTH / 8, stacks_hash_step, &w, 0);
	return w.hash;
}

/* One probe of a claim for hash h at owner word *owner (a stack slot's, a
 * count table entry's): 1 where h owns it already, 2 where this call took
 * it (it was free), 0 where another hash owns it.  Losing the race for a
 * free word to another CPU claiming the same h makes it ours too. */
static __always_inline int stacks_claim_owner(__u64 *owner, __u64 h)
{
	__u64 o = *owner;

	if (o == 0)
		o = __sync_val_compare_and_swap(owner, 0, h);
	return o == h ? 1 : o == 0 ? 2 : 0;
}

/* stacks_store's id of a stack it put in a slot of its own (claimed it),
 * not found there: ORed with this (ids are < 2^30) */
#define STACKS_STORED_NEW (1 << 30)

/* The id in what stacks_store returned (a negative errno as it is) */
static __always_inline int stacks_stored_id(int stored)
{
	return stored >= 0 ? stored & ~STACKS_STORED_NEW : stored;
}

/* Store the stack built in this CPU's stack_scratch, ips[0..n) (leaf
 * first), in the stacks map: its id (with
 * STACKS_STORED_NEW when this call claimed its slot), or a negative errno
 * (counted).  A global function: the verifier checks it once
 * a program, not at every call inlined (a user and a kernel stack, each in
 * several paths): the verifier walked 10,434 instructions of callstack's
 * frame-pointer program at load, now 4,788; offcpu's switch 25,971, now 6,559. */
__noinline int stacks_store(int n, int user)
{
	__u32 zero = 0;
	__u64 *ips = bpf_map_lookup_elem(&stack_scratch, &zero);
	if (!ips)
		return -ENOMEM;
	/* hashed 8 addresses a bpf_loop step: the verifier walks one step, not
	 * each of 32 (2,500 instructions of the sampling program's load) */
	__u64 h = stacks_hash_words(ips, 0, (__u32)n, STACKS_HASH_SEED);
	h ^= user;	/* a user and a kernel stack never share an id */
	h |= !h;	/* 0 is a free slot's owner */
	/* the active set's half of the store, as sized at load */
	__u32 nslots = ((struct bpf_map *)&stacks)->max_entries / 2;
	struct stacks_ctl *ctl = stacks_ctl_get();
	if (nslots == 0 || !ctl)
		return -ENOMEM;
	__u32 set = ctl->set & 1, base = set * nslots;
	/* double hashing: each stack probes its own sequence of slots, so that
	 * no long runs of taken slots form (with linear probing, 16 slots in a
	 * row were taken at half full, and stacks were lost there: 6% of 495,075
	 * malloc stacks with 1024 slots drained as they filled).  A free slot
	 * is claimed where it is found (stacks_claim_owner) */
	__u32 claimed = base + nslots;	/* none */
	for (__u32 p = 0; p < STACKS_PROBES; p++) {
		__u32 slot = stacks_probe_at(h, p, base, nslots);
		__u64 *owner = bpf_map_lookup_elem(&stack_slots, &slot);
		if (!owner)
			break;
		int got = stacks_claim_owner(owner, h);
		if (got == 1)
			return (int)slot;
		if (got == 2) {
			claimed = slot;
			break;
		}
	}
	if (claimed != base + nslots) {
		bpf_map_update_elem(&stacks, &claimed, ips, BPF_ANY);
		stacks_note_fill(ctl, &ctl->stacks_used[set], nslots / 4);
		return (int)claimed | STACKS_STORED_NEW;
	}
	/* STACKS_PROBES slots in a row taken: the map is nearly full */
	stacks_count(STACKS_NOSPACE);
	return -ENOMEM;
}

/* Which image the current process runs: each execve bumps self_exec_id. */
static __always_inline __u32 stacks_exec_id(void)
{
	return (__u32)bpf_get_current_task_btf()->self_exec_id;
}

#endif
