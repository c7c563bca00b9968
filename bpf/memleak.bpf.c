// SPDX-License-Identifier: GPL-2.0
/* memleak.bpf.c — outstanding allocations: libc malloc family and mmap via
 * uprobes/uretprobes, or kernel kmalloc/kmem_cache via the kmem tracepoints
 * (tp_btf).  A table maps each live address to its size, age and stack. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "memleak.h"

/* stacks_exec, the sched_process_exec program, also drops the usage of the
 * image an exec replaces (memleak_exec, below). */
#define STACKS_EXEC_NOTES 1
#define STACKS_EXEC_HOOK memleak_exec
static __always_inline void memleak_exec(__u32 tgid, __u32 exec_id);
#include "stacks.bpf.h"

const volatile __u32 targ_tgid = 0;	/* 0: every process */
const volatile __u64 sample_every = 1;	/* track one allocation in N, weighted by N */
const volatile int kernel_allocs = 0;	/* -K: an exec frees none of them */
int stopped;	/* set by user space at the end: detaching 20 uprobes takes seconds */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct memleak_key);
	__type(value, struct memleak_alloc);
	__uint(max_entries, 1 << 20);	/* set from --max-allocs */
	__uint(map_flags, BPF_F_NO_PREALLOC);	/* memory as used, not 1M entries up front */
} allocs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct memleak_proc);
	__uint(max_entries, 8192);
} procs SEC(".maps");

/* A call in progress on a thread.  Allocators call each other inside libc
 * (realloc(NULL) -> malloc, memalign -> malloc, malloc -> mmap): only the
 * outermost call counts.  Nesting is told by the stack pointer, not by a
 * depth count, and the return probes are attached before the entry probes
 * (attach_probes): a call begun before its return probe was there never
 * returned to us, and a depth count then took every later call of the
 * thread for a nested one (memleak -p saw no allocation in 1 run of 3). */
struct pending {
	__u64 size;
	__u64 memptr;		/* posix_memalign: where the pointer is stored */
	__u64 sp;		/* the stack pointer at the outermost call's entry */
	__u16 sampled;
	__u16 reservation;	/* an mmap of address space, no memory: not tracked */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct pending);
	__uint(max_entries, 16384);
} calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, ML_NCOUNTERS + 1);	/* counters, then the sampling counter */
} ml_counters SEC(".maps");

static __always_inline void bump(__u32 i)
{
	__u64 *v = bpf_map_lookup_elem(&ml_counters, &i);
	if (v)
		(*v)++;
}

static __always_inline int sample(void)
{
	__u32 i = ML_NCOUNTERS;
	__u64 *n;

	if (sample_every <= 1)
		return 1;
	n = bpf_map_lookup_elem(&ml_counters, &i);
	return n && (*n)++ % sample_every == 0;
}

/* Process p now runs image exec_id: the allocations of the one before went
 * with its address space.  They stay in allocs under their own exec id (user
 * space counts them at the end); the usage starts again from nothing. */
static __always_inline void new_image(struct memleak_proc *p, __u32 exec_id)
{
	p->exec_id = exec_id;
	p->bytes = 0;
	p->allocs = 0;
	bpf_get_current_comm(p->comm, sizeof(p->comm));
}

static __always_inline void memleak_exec(__u32 tgid, __u32 exec_id)
{
	struct memleak_proc *p;

	if (kernel_allocs || stopped)
		return;
	p = bpf_map_lookup_elem(&procs, &tgid);
	if (p && p->exec_id != exec_id)
		new_image(p, exec_id);
}

static __always_inline struct memleak_proc *proc_of(__u32 tgid, __u32 exec_id)
{
	struct memleak_proc *p, init = { .exec_id = exec_id };

	p = bpf_map_lookup_elem(&procs, &tgid);
	if (p)
		return p;
	bpf_map_update_elem(&procs, &tgid, &init, BPF_NOEXIST);
	return bpf_map_lookup_elem(&procs, &tgid);
}

/* The key of an allocation at addr by the current process (user) or the kernel. */
static __always_inline struct memleak_key key_of(__u64 addr, int user)
{
	struct memleak_key key = { .tgid = MEMLEAK_KERNEL_TGID, .addr = addr };

	if (user) {
		key.tgid = bpf_get_current_pid_tgid() >> 32;
		key.exec_id = stacks_exec_id();
	}
	return key;
}

static __always_inline void track(void *ctx, __u64 addr, __u64 size, int user)
{
	struct memleak_key key = key_of(addr, user);
	struct memleak_alloc a = {};
	struct memleak_proc *p;
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	stacks_count(STACKS_SAMPLES);
	a.size = size * sample_every;
	a.ts = bpf_ktime_get_ns();
	a.tgid = tgid;
	a.stack = stacks_get_kept(ctx, user, &a.gen);
	if (a.stack == STACK_ID_LOST)
		stacks_count(STACKS_LOST_SAMPLES);
	if (user)
		stacks_note_pid(tgid);
	/* An address handed out again without a free we saw: the old entry is stale. */
	struct memleak_alloc *old = bpf_map_lookup_elem(&allocs, &key);
	if (old) {
		p = bpf_map_lookup_elem(&procs, &old->tgid);
		if (p) {
			__sync_fetch_and_add(&p->bytes, -(__s64)old->size);
			__sync_fetch_and_add(&p->allocs, -(__s64)sample_every);
		}
	}
	if (bpf_map_update_elem(&allocs, &key, &a, BPF_ANY)) {
		bump(ML_ALLOCS_FULL);
		return;
	}
	p = proc_of(tgid, key.exec_id);
	if (p) {
		/* an exec stacks_exec did not see (it could not be attached) */
		if (user && p->exec_id != key.exec_id)
			new_image(p, key.exec_id);
		bpf_get_current_comm(p->comm, sizeof(p->comm));
		__sync_fetch_and_add(&p->bytes, (__s64)a.size);
		__sync_fetch_and_add(&p->allocs, (__s64)sample_every);
	}
}

static __always_inline void untrack(__u64 addr, int user)
{
	struct memleak_key key = key_of(addr, user);
	struct memleak_alloc *a;
	struct memleak_proc *p;

	if (!addr)
		return;
	a = bpf_map_lookup_elem(&allocs, &key);
	if (!a)
		return;
	p = bpf_map_lookup_elem(&procs, &a->tgid);
	if (p) {
		__sync_fetch_and_add(&p->bytes, -(__s64)a->size);
		__sync_fetch_and_add(&p->allocs, -(__s64)sample_every);
	}
	bpf_map_delete_elem(&allocs, &key);
}

static __always_inline int ours(void)
{
	if (stopped)
		return 0;
	return !targ_tgid || (bpf_get_current_pid_tgid() >> 32) == targ_tgid;
}

static __always_inline int enter_call(struct pt_regs *ctx, __u64 size, __u64 memptr, int reservation)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 sp = PT_REGS_SP(ctx);
	struct pending *c, n = {};

	/* marple's own allocations are not followed: their frees find nothing */
	if (!ours() || self_current_is_marple())
		return 0;
	c = bpf_map_lookup_elem(&calls, &tid);
	if (c) {
		if (sp <= c->sp)
			return 0;	/* nested in it (or tail-called): the stack grows down */
		bump(ML_CALLS_UNRETURNED);	/* above its frame: it returned unseen */
	}
	n.size = size;
	n.memptr = memptr;
	n.sp = sp;
	n.reservation = (__u16)reservation;
	n.sampled = !reservation && sample();
	if (bpf_map_update_elem(&calls, &tid, &n, BPF_ANY))
		bump(ML_PENDING_FULL);
	return 0;
}

static __always_inline int enter(struct pt_regs *ctx, __u64 size, __u64 memptr)
{
	return enter_call(ctx, size, memptr, 0);
}

static __always_inline void add(__u32 i, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&ml_counters, &i);
	if (v)
		*v += n;
}

static __always_inline int leave(struct pt_regs *ctx, __u64 addr, int failed)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct pending *c;

	if (!ours())
		return 0;
	c = bpf_map_lookup_elem(&calls, &tid);
	/* a nested call's return leaves sp at or below the outermost entry's;
	 * the outermost's pops its return address, one word above */
	if (!c || PT_REGS_SP(ctx) <= c->sp)
		return 0;
	if (c->reservation) {
		if (!failed) {
			bump(ML_RESERVATIONS);
			add(ML_RESERVED_BYTES, c->size);
		}
		bpf_map_delete_elem(&calls, &tid);
		return 0;
	}
	if (!failed && c->memptr)
		if (bpf_probe_read_user(&addr, sizeof(addr), (void *)c->memptr))
			addr = 0;
	if (!failed && addr && c->sampled)
		track(ctx, addr, c->size, 1);
	bpf_map_delete_elem(&calls, &tid);
	return 0;
}

static __always_inline int release(__u64 addr)
{
	if (ours())
		untrack(addr, 1);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(malloc_enter, size_t size) { return enter(ctx, size, 0); }
SEC("uprobe")
int BPF_KPROBE(calloc_enter, size_t n, size_t size) { return enter(ctx, (__u64)n * size, 0); }
SEC("uprobe")
int BPF_KPROBE(realloc_enter, void *ptr, size_t size)
{
	release((__u64)ptr);
	return enter(ctx, size, 0);
}
SEC("uprobe")
int BPF_KPROBE(memalign_enter, size_t align, size_t size) { return enter(ctx, size, 0); }
SEC("uprobe")
int BPF_KPROBE(valloc_enter, size_t size) { return enter(ctx, size, 0); }
SEC("uprobe")
int BPF_KPROBE(posix_memalign_enter, void **memptr, size_t align, size_t size)
{
	return enter(ctx, size, (__u64)memptr);
}
/* An mapping that only reserves address space (PROT_NONE, or MAP_NORESERVE:
 * nothing promised behind it), as runtimes and allocators make to carve up
 * later, is no memory in use: called outermost, it is counted apart.  Inside
 * malloc (a new arena) the malloc is what counts, as for any nested call. */
#define MEMLEAK_PROT_ACCESS 0x7		/* PROT_READ | PROT_WRITE | PROT_EXEC */
#define MEMLEAK_MAP_NORESERVE 0x4000
SEC("uprobe")
int BPF_KPROBE(mmap_enter, void *addr, size_t len, int prot, int flags)
{
	return enter_call(ctx, len, 0, !(prot & MEMLEAK_PROT_ACCESS) || (flags & MEMLEAK_MAP_NORESERVE));
}

/* Every allocator's return, how it gives its result the uretprobe's cookie:
 * a pointer (malloc, calloc, realloc, memalign, aligned_alloc, valloc,
 * pvalloc; NULL: failed), a status (posix_memalign: 0, the block through
 * memptr), mmap's (-1 or 0: failed).  One program: the verifier walks the
 * stack code once, not three times. */
SEC("uretprobe")
int BPF_KRETPROBE(alloc_exit, long ret)
{
	__u64 how = bpf_get_attach_cookie(ctx), addr = (__u64)ret;
	int failed = ret == 0;

	if (how == MEMLEAK_RET_STATUS) {
		addr = 0;
		failed = (int)ret != 0;
	} else if (how == MEMLEAK_RET_MMAP) {
		failed = ret == -1 || ret == 0;
	}
	return leave(ctx, addr, failed);
}

SEC("uprobe")
int BPF_KPROBE(free_enter, void *ptr) { return release((__u64)ptr); }
SEC("uprobe")
int BPF_KPROBE(munmap_enter, void *addr, size_t len) { return release((__u64)addr); }

/* Kernel allocations (-K): every process but marple's own (its programs'
 * and maps' memory, its reads of /proc), kernel stacks. */
static __always_inline int kalloc(void *ctx, const void *ptr, __u64 size)
{
	if (!ptr || !ours() || self_current_is_marple() || !sample())
		return 0;
	track(ctx, (__u64)ptr, size, 0);
	return 0;
}

SEC("tp_btf/kmalloc")
int BPF_PROG(kmalloc, unsigned long call_site, const void *ptr, size_t req, size_t alloc)
{
	return kalloc(ctx, ptr, alloc);
}

SEC("tp_btf/kmem_cache_alloc")
int BPF_PROG(kmem_cache_alloc, unsigned long call_site, const void *ptr, struct kmem_cache *s)
{
	return kalloc(ctx, ptr, BPF_CORE_READ(s, size));
}

SEC("tp_btf/kfree")
int BPF_PROG(kfree, unsigned long call_site, const void *ptr)
{
	if (!stopped)
		untrack((__u64)ptr, 0);
	return 0;
}

SEC("tp_btf/kmem_cache_free")
int BPF_PROG(kmem_cache_free, unsigned long call_site, const void *ptr)
{
	if (!stopped)
		untrack((__u64)ptr, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
