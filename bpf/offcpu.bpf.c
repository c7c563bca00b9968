// SPDX-License-Identifier: GPL-2.0
/* offcpu.bpf.c — off-CPU time by stack for marple-offcpu.
 *
 * sched_switch (tp_btf, or raw_tp where tp_btf cannot load): when a thread
 * leaves the CPU, remember when and with which stacks (start map); when it
 * comes back, add the microseconds it was away to counts[its stack key].
 * runq_mode (--runq): the part of that time it was runnable but not running
 * (from its preemption, or from its sched_wakeup, to its switch-in) goes to
 * the same stack marked STACK_EXEC_ID_RUNQ instead.
 * wakers_mode (--wakers): sched_waking, in the waker's context, keeps its
 * stacks in the wakee's start entry (or, the wakee still on its way out, in
 * early for its switch-out); a block that had one goes to user space with
 * both (REC_WAKER) instead of into counts: user space sums them by their
 * stacks and names each pair once a drain.  second_hop (--second-hop):
 * a traced thread's waker is kept when it runs again (woken_by), and given,
 * as the second hop, to the blocks it ends itself: who woke the waker.
 * With both_mode, a perf_event cpu-clock program also adds on-CPU samples,
 * each worth sample_us microseconds, to the same map.
 *
 * dwarf_mode (--dwarf): a user thread leaving the CPU sends a copy of its user
 * registers and stack (REC_OFF, ~16.5 KB: its user registers do not change
 * while it is away, and only now can they be read) and, when it comes back,
 * REC_WAKE with the time it was away; user space unwinds the copy and adds the
 * time.  On-CPU samples of user threads are copies too (REC_ONCPU).  Kernel
 * threads have no user stack: they are counted in counts as without --dwarf.
 * timed_mode (bpf/timed.bpf.h): each block counted, with when it began and
 * how long it was, goes to user space too (on-CPU samples as blocks of
 * sample_us).
 * A user thread's kernel stack at its switch-out is taken from kstack_memo
 * when its fingerprint was seen before (struct kstack_print, offcpu.h). */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define STACKS_COUNTS 1
#define STACKS_EXEC_NOTES 1
#include "stacks.bpf.h"
#include "follow.bpf.h"
#include "timed.bpf.h"
#include "offcpu.h"

const volatile __u32 targ_pid = 0;
const volatile __u32 targ_tid = 0;
const volatile bool want_user = true;
const volatile bool want_kernel = true;
const volatile __u32 state_mask = 0;	/* 0: any; bit 0 R (preempted), then TASK_* << 1 */
const volatile __u64 min_block_ns = 1000;
const volatile __u64 sample_us = 0;	/* both_mode: weight of an on-CPU sample */
const volatile bool dwarf_mode = false;
const volatile bool user_threads_only = false;	/* -u: no kernel thread (bcc offcputime -u) */
const volatile bool runq_mode = false;
const volatile bool wakers_mode = false;
const volatile bool second_hop = false;
const volatile __u64 wakeup_bytes = 0;	/* dwarf_mode: wake user space past this much unread data */
/* the kernel's text, and do_syscall_64's, found by find_ktext (ktext_lo
 * 0: no kernel stack memo); syscall_span: "do_syscall_64+0x0/0x280", its size */
__u64 ktext_lo, ktext_hi, syscall_lo, syscall_hi;
char syscall_span[64];

#define TASK_DEAD_STATE 0x80	/* TASK_DEAD in include/linux/sched.h (a #define, not in BTF) */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, struct start);
} start SEC(".maps");

/* dwarf_mode's records (sized by user space) */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} events SEC(".maps");

/* Switch-outs of a thread that had an entry already: no switch-in was seen
 * since its last switch-out, so when that block ended is unknown and it is
 * not timed.  Rare on 6.18 (0 in 190,000 switches of a pinned ping-pong;
 * 1 in ~1300 of the sleeper workload, one run in six), the cause not known:
 * the update found the entry there (EEXIST) and no delete had failed.
 * Counted (per CPU, key 0) rather than hidden. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} unpaired SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WAKERS_N);
	__type(key, __u32);
	__type(value, __u64);
} wakers SEC(".maps");

static __always_inline void wakers_count(__u32 what)
{
	stacks_percpu_inc(&wakers, what);
}

/* second_hop: woken_by[tid], the stacks that last woke a traced thread
 * (the least recently updated go first when it is full) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, struct stack_key);
} woken_by SEC(".maps");

/* wakers_mode: early[tid] (struct early_waker); what no switch-out took is
 * let go, the least recently updated first */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct early_waker);
} early SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct early_waker);
} early_scratch SEC(".maps");

/* kstack_memo[fingerprint]: a kernel stack seen at a switch-out */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct kstack_print);
	__type(value, struct kstack_memo);
} kstack_memo SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KSTACK_N);
	__type(key, __u32);
	__type(value, __u64);
} kstack_counts SEC(".maps");

/* per-CPU: the kernel stack words a fingerprint is made of, and what the
 * memo says of it (kstack_decide) */
struct kstack_words {
	__u64 w[KSTACK_PRINT_WORDS];
	struct kstack_print print;
	__s32 kern_stack_id;	/* the memo's */
	__u32 set, gen;
	__u32 state;		/* KSTACK_NONE, _MISS, _HIT, _CHECK */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kstack_words);
} kstack_scratch SEC(".maps");

/* per-CPU scratch: struct start is too big for the BPF stack with a key beside it */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct start);
} scratch SEC(".maps");

static __always_inline int wanted(__u32 tgid, __u32 tid)
{
	if (tid == 0)
		return 0;
	if (targ_pid && !follow_wanted(tgid, targ_pid))
		return 0;
	if (targ_tid && tid != targ_tid)
		return 0;
	/* tgid and tid are current's (prev at a switch) */
	if (user_threads_only && stacks_current_is_kthread())
		return 0;
	return !self_current_is_marple();
}

/* Submit a record without waking user space (it polls every 20 ms) unless
 * the ring buffer is filling up. */
static __always_inline void submit(void *e)
{
	bpf_ringbuf_submit(e, bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) > wakeup_bytes ? BPF_RB_FORCE_WAKEUP
											  : BPF_RB_NO_WAKEUP);
}

/* Thread tid leaves the CPU: start[tid] = *s.  0, or -1 if the map is full
 * (counted).  An entry already there is a block whose end was never seen:
 * replaced and counted in unpaired (trying BPF_NOEXIST first costs nothing
 * in the usual case). */
static __always_inline int mark_left(__u32 tid, struct start *s)
{
	__u32 zero = 0;

	if (bpf_map_update_elem(&start, &tid, s, BPF_NOEXIST) == 0)
		return 0;
	if (bpf_map_update_elem(&start, &tid, s, BPF_ANY) != 0) {
		stacks_count(STACKS_MAP_FULL);
		return -1;
	}
	__u64 *n = bpf_map_lookup_elem(&unpaired, &zero);
	if (n)
		(*n)++;
	return 0;
}

/* dwarf_mode, prev leaving: start[tid] marked, and the copy sent (or neither:
 * counted). */
static __always_inline void send_copy(void *ctx, __u32 tid, struct start *s)
{
	s->dwarf = 1;
	if (mark_left(tid, s) != 0)
		return;
	struct dwarf_sample *e = stacks_dwarf_sample(&events, REC_OFF, ctx, want_user, want_kernel);
	if (!e) {
		bpf_map_delete_elem(&start, &tid);
		return;
	}
	e->time = s->ts;
	submit(e);
}

/* dwarf_mode, a thread with a copy back: REC_WAKE (or counted). */
static __always_inline void send_wake(__u32 tid, __u64 off_ts, __u64 delta)
{
	struct wake_record *w = bpf_ringbuf_reserve(&events, sizeof(*w), 0);
	if (!w) {
		stacks_count(STACKS_RINGBUF_FULL);
		return;
	}
	w->type = REC_WAKE;
	w->tid = tid;
	w->off_ts = off_ts;
	w->delta_ns = delta;
	submit(w);
}

/* wakers_mode: off_us of s's block, sent with its waker's stacks (0), or
 * -1 (ring buffer full, counted): the caller counts it without. */
static __always_inline int send_waker(struct start *s, __u64 off_us)
{
	struct waker_record *w = bpf_ringbuf_reserve(&events, sizeof(*w), 0);
	if (!w) {
		wakers_count(WAKERS_LOST);
		return -1;
	}
	w->type = REC_WAKER;
	w->waker_flags = s->waker_flags;
	w->off_us = off_us;
	w->blocked = s->key;
	w->waker = s->waker;
	w->waker2 = s->waker2;
	wakers_count(WAKERS_SENT);
	if (s->waker_flags & WAKER_EARLY)
		wakers_count(WAKERS_EARLY);
	submit(w);
	return 0;
}

/* A block ending at now, of at least min_block_ns: blocked until
 * runnable_ts (runq_mode: 0 when not woken), then waiting for a CPU; each
 * part to its own key (a part under 1 us adds nothing), the blocked part
 * with its waker (wakers_mode) when there was one. */
static __always_inline void add_block(struct start *s, __u32 tid, __u64 now)
{
	__u64 runnable = !s->runnable_ts ? now : s->runnable_ts < s->ts ? s->ts : s->runnable_ts;
	__u64 off_us = (runnable - s->ts) / 1000, runq_us = now > runnable ? (now - runnable) / 1000 : 0;
	struct stack_key k = s->key;
	bool with_waker = wakers_mode && (s->waker_flags & WAKER_SEEN);

	if (wakers_mode && !s->waker_flags)
		wakers_count(WAKERS_UNSEEN);
	if (!s->runnable_ts && !with_waker) {
		stacks_add(&s->key, (now - s->ts) / 1000);	/* as always: the whole block */
		timed_emit(&s->key, tid, s->ts, now - s->ts);
		return;
	}
	if (off_us && !(with_waker && send_waker(s, off_us) == 0))
		stacks_add(&s->key, off_us);
	k.exec_id |= STACK_EXEC_ID_RUNQ;
	if (runq_us)
		stacks_add(&k, runq_us);
}

/* wakers_mode, a blocking thread tid leaving: the waker seen before this
 * switch-out, if one was (struct early_waker). */
static __always_inline void take_early_waker(__u32 tid, struct task_struct *prev, struct start *s)
{
	struct early_waker *e = bpf_map_lookup_elem(&early, &tid);
	__u64 nvcsw = BPF_CORE_READ(prev, nvcsw);

	if (!e)
		return;
	if (e->nvcsw == nvcsw || e->nvcsw + 1 == nvcsw) {
		s->waker = e->waker;
		s->waker2 = e->waker2;
		s->waker_flags = e->waker_flags | WAKER_EARLY;
	}
	bpf_map_delete_elem(&early, &tid);
}

/* Run once by user space after load (BPF_PROG_RUN): where the kernel's
 * text is, and do_syscall_64 (user space reads its size from syscall_span
 * and sets syscall_hi). */
SEC("syscall")
int find_ktext(void *ctx)
{
	static const char fmt[] = "%pB";
	__u64 arg;

	if (bpf_kallsyms_lookup_name("_stext", sizeof("_stext"), 0, &ktext_lo) ||
	    bpf_kallsyms_lookup_name("_etext", sizeof("_etext"), 0, &ktext_hi) ||
	    bpf_kallsyms_lookup_name("do_syscall_64", sizeof("do_syscall_64"), 0, &syscall_lo)) {
		ktext_lo = 0;
		return 0;
	}
	arg = syscall_lo + 1;	/* (%pB names address - 1, for return addresses) */
	bpf_snprintf(syscall_span, sizeof(syscall_span), fmt, &arg, sizeof(arg));
	return 0;
}

/* A fingerprint being made (kstack_fingerprint's bpf_loop) */
struct kstack_printing {
	struct kstack_words *b;
	__u64 n;		/* words read */
	__u64 hash;
	int found;		/* the return into do_syscall_64 met */
};

/* Word i of the stack into the fingerprint; 1 (stop) at the return into
 * do_syscall_64, or at the end of what was read. */
static long kstack_print_word(__u64 i, void *arg)
{
	struct kstack_printing *p = arg;

	if (i >= p->n || i >= KSTACK_PRINT_WORDS)
		return 1;
	__u64 w = p->b->w[i];
	if (w - ktext_lo >= ktext_hi - ktext_lo)
		return 0;
	p->hash = (p->hash ^ w ^ i << 52) * 0x100000001b3ULL;	/* FNV-1a's prime */
	p->found = w - syscall_lo < syscall_hi - syscall_lo;
	return p->found;
}

/* The fingerprint of current's kernel stack (t) from ctx, the tracepoint's
 * arguments, up: each kernel text address on it with its place, up to and
 * with the return into do_syscall_64 (the frames between are at the same
 * places each time the same calls lead here; a return address is a text
 * address, so the same fingerprint walks to the same frames).  0: none
 * (no such return in KSTACK_PRINT_WORDS words).  A bpf_loop: an open loop
 * of 512 turns made the program take 0.8 s more to load. */
static __always_inline __u64 kstack_fingerprint(void *ctx, struct task_struct *t, struct kstack_words *x)
{
	struct kstack_printing p = { .b = x, .hash = 0xcbf29ce484222325ULL };
	__u64 ksp, top = (__u64)t->stack + 16384;

	/* (the arguments' address, on this thread's kernel stack, as a number) */
	asm volatile("%0 = %1" : "=r"(ksp) : "r"(ctx));
	if (!p.b || top <= ksp)
		return 0;
	__u64 len = top - ksp;
	if (len > sizeof(p.b->w))
		len = sizeof(p.b->w);
	if (bpf_probe_read_kernel(p.b->w, len, (void *)ksp) != 0)
		return 0;
	p.n = len / 8;
	bpf_loop(KSTACK_PRINT_WORDS, kstack_print_word, &p, 0);
	return p.found ? p.hash | 1 : 0;
}

/* What the memo says of a switch-out (in struct kstack_words, kept off the
 * BPF stack: the user walk is verified once, not once per answer) */
enum { KSTACK_NONE, KSTACK_MISS, KSTACK_HIT, KSTACK_CHECK };

/* x->state for current (t) leaving the CPU, and what goes with it: its
 * fingerprint, stack set, and the memo's stack. */
static __always_inline void kstack_decide(void *ctx, struct task_struct *t, struct kstack_words *x)
{
	struct stacks_ctl *c = stacks_ctl_get();
	struct kstack_memo *e, v;

	x->state = KSTACK_NONE;
	if (!want_kernel || !syscall_hi)
		return;
	if (!c || (t->flags & PF_KTHREAD) || !(x->print.hash = kstack_fingerprint(ctx, t, x))) {
		stacks_percpu_inc(&kstack_counts, KSTACK_NO_PRINT);
		return;
	}
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	x->print.nr = BPF_CORE_READ(regs, orig_ax);
	x->set = c->set & 1;
	x->gen = c->gen[x->set & 1];
	x->state = KSTACK_MISS;
	if (!(e = bpf_map_lookup_elem(&kstack_memo, &x->print)))
		return;
	__builtin_memcpy(&v, e, sizeof(v));
	if (v.print.hash != x->print.hash || v.print.nr != x->print.nr || v.set != x->set || v.gen != x->gen)
		return;	/* (another key's now, or an id of another set or one cleared since) */
	x->kern_stack_id = v.kern_stack_id;
	x->state = v.until_check ? KSTACK_HIT : KSTACK_CHECK;
	e->until_check = v.until_check ? v.until_check - 1 : KSTACK_CHECK_EVERY - 1;
}

/* A walk's first frames are below the tracepoint's arguments: the program
 * and the kernel's runner of it (bpf_trace_runN), which calls it from
 * another place while the kernel's BPF statistics are on
 * (kernel.bpf_stats_enabled, switched by bpftool or another profiler).
 * User space drops those frames; the rest is the fingerprint's. */
#define KSTACK_RUNNER_FRAMES 2
#define KSTACK_SAME_WORDS 64

/* Are stacks a and b the same above the runner's frames (in their first
 * KSTACK_SAME_WORDS words: a switch-out's kernel stack is ~10-20)?  Global:
 * the verifier walks its loop once, not in each state of the switch
 * program that reaches it (5,600 of the 43,259 instructions it walked at
 * load; a sample calls it only where a checked memo's stack differs). */
__noinline int kstack_same_above(__s32 a, __s32 b)
{
	__u32 ia = (__u32)a, ib = (__u32)b;
	__u64 *sa = a >= 0 ? bpf_map_lookup_elem(&stacks, &ia) : NULL;
	__u64 *sb = b >= 0 ? bpf_map_lookup_elem(&stacks, &ib) : NULL;

	if (!sa || !sb)
		return 0;
	for (int i = KSTACK_RUNNER_FRAMES; i < KSTACK_SAME_WORDS; i++) {
		if (sa[i] != sb[i])
			return 0;
		if (!sa[i])
			break;
	}
	return 1;
}

/* After the walk: the memo's stack for a hit; a walked stack remembered
 * (and, checked, compared with the memo's). */
static __always_inline void kstack_after(struct kstack_words *x, struct stack_key *k)
{
	if (x->state == KSTACK_HIT) {
		k->kern_stack_id = x->kern_stack_id;
		stacks_percpu_inc(&kstack_counts, KSTACK_HITS);
		return;
	}
	if (x->state == KSTACK_NONE)
		return;
	stacks_percpu_inc(&kstack_counts, x->state == KSTACK_CHECK ? KSTACK_CHECKED : KSTACK_MISSES);
	if (x->state == KSTACK_CHECK && x->kern_stack_id != k->kern_stack_id) {
		if (kstack_same_above(x->kern_stack_id, k->kern_stack_id))
			return;
		stacks_percpu_inc(&kstack_counts, KSTACK_WRONG);
	}
	if (k->kern_stack_id < 0 || (x->state == KSTACK_CHECK && x->kern_stack_id == k->kern_stack_id))
		return;
	struct kstack_memo v = { x->print, k->kern_stack_id, x->set, x->gen, KSTACK_CHECK_EVERY - 1 };
	bpf_map_update_elem(&kstack_memo, &x->print, &v, BPF_ANY);
}

/* current leaves the CPU: k its stack key, its kernel stack from the memo
 * when its fingerprint is there (a user thread in a system call).  One
 * walk of the kernel stack in the program: an id names the stack with the
 * program's own frames, which differ between two places of the walk. */
static __always_inline void switch_key(void *ctx, struct stack_key *k)
{
	__u32 zero = 0;
	struct kstack_words *x = bpf_map_lookup_elem(&kstack_scratch, &zero);

	if (!x) {
		stacks_fill_key(k, ctx, want_user, want_kernel);
		return;
	}
	kstack_decide(ctx, bpf_get_current_task_btf(), x);
	stacks_fill_key(k, ctx, want_user, false);
	if (want_kernel && x->state != KSTACK_HIT)
		stacks_fill_kernel(k, ctx);
	kstack_after(x, k);
}

static __always_inline int on_switch(void *ctx, bool preempt, struct task_struct *prev,
				     struct task_struct *next, unsigned int prev_state)
{
	__u32 zero = 0;
	__u64 now = bpf_ktime_get_ns();
	__u32 ptid = BPF_CORE_READ(prev, pid), ptgid = BPF_CORE_READ(prev, tgid);
	__u32 ntid = BPF_CORE_READ(next, pid);

	/* prev leaves the CPU: we run in its context, so its stacks are current's.
	 * A thread leaving for the last time (TASK_DEAD: it has exited) is not
	 * blocked and never comes back: no entry, or it would count as off-CPU
	 * until the end of the capture and fill the map on a busy machine. */
	if (wanted(ptgid, ptid) && !(prev_state & TASK_DEAD_STATE)) {
		__u32 bit = preempt ? 1 : (prev_state & 0xff) << 1;
		if (!state_mask || (state_mask & bit) || (!bit && (state_mask & 1))) {
			struct start *s = bpf_map_lookup_elem(&scratch, &zero);
			if (s && dwarf_mode && !stacks_current_is_kthread()) {
				stacks_count(STACKS_SAMPLES);
				s->ts = now;
				send_copy(ctx, ptid, s);
			} else if (s) {
				stacks_count(STACKS_SAMPLES);
				switch_key(ctx, &s->key);
				s->ts = now;
				s->dwarf = 0;
				/* preempted or left running: runnable from now on */
				s->runnable_ts = runq_mode && bit <= 1 ? now : 0;
				s->waker_flags = bit <= 1 ? WAKER_PREEMPTED : 0;
				if (wakers_mode && bit > 1)
					take_early_waker(ptid, prev, s);
				mark_left(ptid, s);
			}
		}
	}
	/* next comes back: add the time it was away */
	struct start *s = bpf_map_lookup_elem(&start, &ntid);
	if (s) {
		__u64 delta = now - s->ts;
		if (second_hop && (s->waker_flags & WAKER_SEEN))
			bpf_map_update_elem(&woken_by, &ntid, &s->waker, BPF_ANY);
		if (s->dwarf)
			send_wake(ntid, s->ts, delta);	/* user space drops short ones */
		else if (delta >= min_block_ns)
			add_block(s, ntid, now);
		bpf_map_delete_elem(&start, &ntid);
	}
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(switch_btf, bool preempt, struct task_struct *prev, struct task_struct *next, unsigned int prev_state)
{
	return on_switch(ctx, preempt, prev, next, prev_state);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(switch_raw, bool preempt, struct task_struct *prev, struct task_struct *next, unsigned int prev_state)
{
	return on_switch(ctx, preempt, prev, next, prev_state);
}

/* runq_mode: a blocked thread is runnable again (sched_wakeup runs with
 * the wakee's run queue locked: it cannot be switched in before this). */
static __always_inline int on_wakeup(struct task_struct *p)
{
	__u32 tid = BPF_CORE_READ(p, pid);
	struct start *s = bpf_map_lookup_elem(&start, &tid);

	if (s && !s->runnable_ts)
		s->runnable_ts = bpf_ktime_get_ns();
	return 0;
}

/* wakers_mode: the stacks of who wakes a thread, as its waker: current's
 * (we run in the waker's context), or, in an interrupt, the interrupt's
 * above those of the task it interrupted: user space tells them by their
 * entry frames (the preempt count that says so is a per-CPU variable this
 * kernel's kallsyms does not list: BPF cannot read it); second_hop: with
 * who last woke the waker. */
static __always_inline __u32 fill_waker(void *ctx, struct stack_key *waker, struct stack_key *waker2)
{
	__u32 me = (__u32)bpf_get_current_pid_tgid();
	struct stack_key *k2;

	stacks_fill_key(waker, ctx, want_user, true);	/* (kernel: to tell interrupts) */
	if (!second_hop || !(k2 = bpf_map_lookup_elem(&woken_by, &me)))
		return WAKER_SEEN;
	*waker2 = *k2;
	return WAKER_SEEN | WAKER2_SEEN;
}

/* wakers_mode: a thread is being woken.  Off the CPU (a start entry): its
 * waker kept there, unless it has one (or was preempted: nobody wakes it)
 * but an early one.  Still on a CPU but off its run queue: it is
 * blocking, its switch-out not traced yet: kept for it in early. */
static __always_inline int on_waking(void *ctx, struct task_struct *p)
{
	__u32 tid = BPF_CORE_READ(p, pid), zero = 0;
	struct start *s = bpf_map_lookup_elem(&start, &tid);
	struct early_waker *e;

	if (s) {
		if (s->dwarf || (s->waker_flags && !(s->waker_flags & WAKER_EARLY)))
			return 0;
		s->waker_flags = fill_waker(ctx, &s->waker, &s->waker2);
		return 0;
	}
	if (!BPF_CORE_READ(p, on_cpu) || BPF_CORE_READ(p, on_rq))
		return 0;
	/* (struct early_waker is too big for the BPF stack beside the unwinder's) */
	if (!(e = bpf_map_lookup_elem(&early_scratch, &zero)))
		return 0;
	e->nvcsw = BPF_CORE_READ(p, nvcsw);
	e->waker_flags = fill_waker(ctx, &e->waker, &e->waker2);
	bpf_map_update_elem(&early, &tid, e, BPF_ANY);
	/* the switch-out may have looked for it before it was there */
	s = bpf_map_lookup_elem(&start, &tid);
	if (s && !s->waker_flags && !s->dwarf) {
		s->waker = e->waker;
		s->waker2 = e->waker2;
		s->waker_flags = e->waker_flags;
		bpf_map_delete_elem(&early, &tid);
	}
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(waking_btf, struct task_struct *p)
{
	return on_waking(ctx, p);
}

SEC("raw_tp/sched_waking")
int BPF_PROG(waking_raw, struct task_struct *p)
{
	return on_waking(ctx, p);
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(wakeup_btf, struct task_struct *p)
{
	return on_wakeup(p);
}

SEC("raw_tp/sched_wakeup")
int BPF_PROG(wakeup_raw, struct task_struct *p)
{
	return on_wakeup(p);
}

SEC("perf_event")
int on_cpu_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct stack_key key;

	if (!wanted(id >> 32, (__u32)id))
		return 0;
	stacks_count(STACKS_SAMPLES);
	if (dwarf_mode && !stacks_current_is_kthread()) {
		struct dwarf_sample *e = stacks_dwarf_sample(&events, REC_ONCPU, ctx, want_user, want_kernel);
		if (e)
			submit(e);
		return 0;
	}
	stacks_fill_key(&key, ctx, want_user, want_kernel);
	/* on-CPU, for the section it goes in (its pid note is sent already) */
	key.exec_id |= STACK_EXEC_ID_ON_CPU;
	stacks_add(&key, sample_us);
	timed_emit_now(&key, (__u32)id, sample_us * 1000);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
