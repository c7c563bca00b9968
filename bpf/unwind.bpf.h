/* unwind.bpf.h — the user-stack unwinder of --unwind tables, included by
 * stacks.bpf.h (which see): walks the current task's user stack from its
 * saved user registers with the rows lib/collect/unwindtab.c built from the
 * binaries' .eh_frame (struct unwind_row, stacks.h).  It never guesses: code
 * with CFI whose table is not loaded (or a rule it cannot follow) ends the
 * stack with a marker frame (UNWIND_MARK_*); frame pointers are followed
 * only in code without CFI (JIT, hand-written assembly) and only while they
 * look like a frame (above sp, aligned, near it).
 *
 * Maps (sized by the user side before load; 1 entry when not in this mode):
 *   unwind_rows      every file's rows, one after the other (mmapped)
 *   unwind_mappings  UNWIND_MAX_MAPPINGS executable mappings a slot (mmapped)
 *   unwind_procs     tgid -> its slot, count, and the start_stack it was read with
 *   unwind_requests  tgids whose mappings user space should (re)read: unknown
 *                    process, or a PC outside its mappings (dlopen, exec)
 *   unwind_asked     when each tgid last asked (at most every 20 ms)
 *   unwind_counters  per-CPU enum unwind_counter
 */
#ifndef MARPLE_UNWIND_BPF_H
#define MARPLE_UNWIND_BPF_H

const volatile __u32 stacks_unwind = UNWIND_MODE_FP;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct unwind_row);
} unwind_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, UNWIND_MAX_MAPPINGS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct unwind_mapping);
} unwind_mappings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_proc);
} unwind_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} unwind_requests SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} unwind_asked SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UNWIND_NCOUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} unwind_counters SEC(".maps");

static __always_inline void unwind_count(__u32 idx)
{
	stacks_percpu_inc(&unwind_counters, idx);
}

/* Ask user space to (re)read tgid's mappings, at most every 20 ms. */
static __noinline void unwind_request(__u32 tgid)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 *last = bpf_map_lookup_elem(&unwind_asked, &tgid);

	if (last && now - *last < 20000000ull)
		return;
	bpf_map_update_elem(&unwind_asked, &tgid, &now, BPF_ANY);
	__u32 *e = bpf_ringbuf_reserve(&unwind_requests, sizeof(*e), 0);
	if (!e)
		return;
	*e = tgid;
	bpf_ringbuf_submit(e, 0);
	unwind_count(UNWIND_REQUESTS);
}

/* How a walk ended */
enum {
	UNWIND_GO_ON = 0, UNWIND_DONE_COMPLETE, UNWIND_DONE_NO_TABLE, UNWIND_DONE_FAULT,
	UNWIND_DONE_NOT_LOADED, UNWIND_DONE_UNSUPPORTED
};

struct unwind_walk {
	__u64 ip, sp, bp;
	__u32 n;			/* frames in ips */
	__u32 slot, nmaps, tgid;
	__u32 exact;			/* ip is the interrupted PC (leaf, or past a signal frame) */
	__u32 done;
	__u32 requested;
};

/* The mapping that holds pc, or NULL: a binary search of the process's
 * sorted mappings (UNWIND_MAX_MAPPINGS = 2^8: 9 steps). */
static __always_inline struct unwind_mapping *unwind_find_mapping(struct unwind_walk *s, __u64 pc)
{
	__u32 lo = 0, hi = s->nmaps, base = s->slot * UNWIND_MAX_MAPPINGS;
	struct unwind_mapping *m;

	for (int step = 0; step < 9 && lo < hi; step++) {
		__u32 mid = lo + (hi - lo) / 2, idx = base + mid;
		m = bpf_map_lookup_elem(&unwind_mappings, &idx);
		if (!m)
			return NULL;
		if (m->start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	__u32 idx = base + lo - 1;
	m = bpf_map_lookup_elem(&unwind_mappings, &idx);
	return m && pc < m->end ? m : NULL;
}

/* The row that holds file address pc among m's rows (binary search: 2^24
 * rows at most), or NULL. */
static __always_inline struct unwind_row *unwind_find_row(struct unwind_mapping *m, __u64 pc)
{
	__u32 lo = m->row_off, hi = m->row_off + m->row_count, first = lo;
	struct unwind_row *r;

	for (int step = 0; step < 25 && lo < hi; step++) {
		__u32 mid = lo + (hi - lo) / 2;
		r = bpf_map_lookup_elem(&unwind_rows, &mid);
		if (!r)
			return NULL;
		if (r->pc <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == first)
		return NULL;
	__u32 idx = lo - 1;
	return bpf_map_lookup_elem(&unwind_rows, &idx);
}

/* A frame pointer's frame is farther from sp than this: not a frame (a
 * thread's default stack is 8 MB) */
#define UNWIND_FP_MAX_FRAME (8u << 20)

/* One frame by frame pointer, in code without CFI: the caller's rbp at
 * [rbp], its return address above it, if rbp looks like a frame of this
 * stack (at or above sp, 8-aligned, within UNWIND_FP_MAX_FRAME of it). */
static __always_inline void unwind_fp_step(struct unwind_walk *s)
{
	__u64 frame[2];

	if (s->bp == 0) {
		s->done = UNWIND_DONE_COMPLETE;	/* rbp 0: the outermost frame (_start) */
		return;
	}
	if (s->bp < s->sp || (s->bp & 7) != 0 || s->bp - s->sp > UNWIND_FP_MAX_FRAME ||
	    bpf_probe_read_user(frame, sizeof(frame), (void *)s->bp) != 0 || frame[1] == 0) {
		s->done = UNWIND_DONE_NO_TABLE;
		return;
	}
	unwind_count(UNWIND_FRAMES_FP);
	s->sp = s->bp + 16;
	s->bp = frame[0];
	s->ip = frame[1];
	s->exact = 0;
}

/* One frame by its row; 0, or -1 when the row says there is no CFI here
 * (frame pointers, checked). */
static __always_inline int unwind_row_step(struct unwind_walk *s, struct unwind_row *r)
{
	__u64 cfa, ra;

	switch (r->cfa) {
	case UNWIND_RSP: cfa = s->sp + (__s64)r->cfa_off; break;
	case UNWIND_RBP: cfa = s->bp + (__s64)r->cfa_off; break;
	case UNWIND_PLT: cfa = s->sp + 8 + ((s->ip & 15) >= 11 ? 8 : 0); break;
	case UNWIND_END:
		s->done = UNWIND_DONE_COMPLETE;
		return 0;
	case UNWIND_SIGNAL: {
		/* rt_sigreturn's frame: the ucontext's rbp, rsp, rip */
		__u64 g[7];
		if (bpf_probe_read_user(g, sizeof(g), (void *)(s->sp + 120)) != 0) {
			s->done = UNWIND_DONE_FAULT;
			return 0;
		}
		unwind_count(UNWIND_FRAMES_TABLE);
		s->bp = g[0];
		s->sp = g[5];
		s->ip = g[6];
		s->exact = 1;
		return 0;
	}
	case UNWIND_NONE:
		return -1;
	default:	/* UNWIND_UNSUPPORTED */
		s->done = UNWIND_DONE_UNSUPPORTED;
		return 0;
	}
	if (bpf_probe_read_user(&ra, sizeof(ra), (void *)(cfa - 8)) != 0) {
		s->done = UNWIND_DONE_FAULT;
		return 0;
	}
	if (r->rbp == UNWIND_RBP_SAVED &&
	    bpf_probe_read_user(&s->bp, sizeof(s->bp), (void *)(cfa + (__s64)r->rbp_off)) != 0) {
		s->done = UNWIND_DONE_FAULT;
		return 0;
	}
	unwind_count(UNWIND_FRAMES_TABLE);
	s->sp = cfa;
	s->ip = ra;
	s->exact = 0;
	if (ra == 0)
		s->done = UNWIND_DONE_COMPLETE;
	return 0;
}

/* bpf_loop callback: record the current frame, then find its caller. */
static long unwind_frame(__u64 i, void *ctx)
{
	struct unwind_walk *s = ctx;
	__u32 zero = 0, n = s->n;
	__u64 *ips = bpf_map_lookup_elem(&stack_scratch, &zero);

	if (!ips || n >= MARPLE_STACK_DEPTH)
		return 1;
	ips[n] = s->ip;
	s->n = n + 1;
	/* a return address is after its call: look up the call itself */
	__u64 pc = s->exact ? s->ip : s->ip - 1;
	struct unwind_mapping *m = unwind_find_mapping(s, pc);
	if (!m) {
		/* mapped since we read its maps (dlopen, a JIT), or a bad
		 * return address: nothing tells how to go on */
		if (!s->requested) {
			unwind_request(s->tgid);
			s->requested = 1;
		}
		s->done = UNWIND_DONE_NOT_LOADED;
		return 1;
	}
	if (m->row_count == 0) {
		if (m->row_off != UNWIND_NO_CFI) {
			s->done = UNWIND_DONE_NOT_LOADED;	/* CFI, but no table: no guess */
			return 1;
		}
		unwind_fp_step(s);
		return s->done != UNWIND_GO_ON;
	}
	struct unwind_row *r = unwind_find_row(m, pc - m->bias);
	if (!r || unwind_row_step(s, r) != 0)
		unwind_fp_step(s);	/* before the first FDE or between FDEs: no CFI there */
	return s->done != UNWIND_GO_ON;
}

/* End ips[0..n) with marker frame mark, in place of its last frame if full. */
static __always_inline __u32 unwind_mark(__u64 *ips, __u32 n, __u64 mark)
{
	if (n >= MARPLE_STACK_DEPTH)
		n = MARPLE_STACK_DEPTH - 1;
	ips[n & (MARPLE_STACK_DEPTH - 1)] = mark;
	return n + 1;
}

/* Walk the current task's user stack into ips[] (leaf first, zeroes after):
 * the number of frames, a marker frame last where the walk stopped short of
 * the outermost frame for want of a table or of depth; 0 for a task with
 * no user stack.  A process whose tables are not loaded yet (asked for)
 * gets its leaf and the marker. */
static __noinline int unwind_user_stack(__u64 *ips)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct unwind_walk s = {};
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct mm_struct *mm = BPF_CORE_READ(t, mm);

	if (!mm || !ips)
		return 0;
	unwind_count(UNWIND_STACKS);
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	s.ip = BPF_CORE_READ(regs, ip);
	struct unwind_proc *p = bpf_map_lookup_elem(&unwind_procs, &tgid);
	int no_proc = !p || p->tag != BPF_CORE_READ(mm, start_stack) || p->n > UNWIND_MAX_MAPPINGS;
	if (no_proc || !p) {
		unwind_count(UNWIND_NO_PROC);
		unwind_request(tgid);
		s.n = 1;
		ips[0] = s.ip;
		s.done = UNWIND_DONE_NOT_LOADED;
	} else {
		s.sp = BPF_CORE_READ(regs, sp);
		s.bp = BPF_CORE_READ(regs, bp);
		s.exact = 1;
		s.slot = p->slot;
		s.nmaps = p->n;
		s.tgid = tgid;
		bpf_loop(MARPLE_STACK_DEPTH, unwind_frame, &s, 0);
	}
	__u32 n = s.n;
	switch (s.done) {
	case UNWIND_GO_ON:
		unwind_count(UNWIND_CUT_DEPTH);
		n = unwind_mark(ips, n, UNWIND_MARK_TRUNCATED);
		break;
	case UNWIND_DONE_COMPLETE: unwind_count(UNWIND_COMPLETE); break;
	case UNWIND_DONE_NO_TABLE: unwind_count(UNWIND_CUT_NO_TABLE); break;
	case UNWIND_DONE_NOT_LOADED:
		if (!no_proc)	/* no_table_yet counted it */
			unwind_count(UNWIND_CUT_NOT_LOADED);
		n = unwind_mark(ips, n, UNWIND_MARK_NO_TABLE);
		break;
	case UNWIND_DONE_UNSUPPORTED:
		unwind_count(UNWIND_CUT_UNSUPPORTED);
		n = unwind_mark(ips, n, UNWIND_MARK_UNSUPPORTED);
		break;
	default: unwind_count(UNWIND_CUT_FAULT); break;
	}
	/* zeroes up to the end of the last group of 8 (the hash reads them)
	 * and after the stack (the reader stops there) */
	for (int j = 0; j < 8; j++) {
		__u32 k = n + j;
		if (k < MARPLE_STACK_DEPTH)
			ips[k] = 0;
	}
	return (int)n;
}

#endif
