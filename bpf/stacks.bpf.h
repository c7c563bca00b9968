/* stacks.bpf.h — kernel side of the stack collectors (include after vmlinux.h
 * and the bpf_helpers.h family).
 *
 * Defines, in the including program, with bpf/stackstore.bpf.h:
 *   stacks          id -> u64[MARPLE_STACK_DEPTH], read like a stack-trace map
 *                   (lib/collect/stackframes.h); the user side sizes it before load
 *                   (stacksbpf_set_storage; stack_slots follows)
 *   stack_counters  per-CPU u64 counters indexed by enum stack_counter
 * with bpf/procnews.bpf.h the proc_news ring buffer, and here:
 *   pids_seen       the first sample of each image of a process (pid, exec
 *                   id) is announced on the proc_news ring buffer
 *                   (bpf/procnews.bpf.h: a struct pid_note of type
 *                   PROCNEWS_IMAGE) so user space can snapshot its maps while
 *                   it lives (lib/collect/stacksbpf.h: stacksbpf_news_open)
 *   stacks_exec     with STACKS_EXEC_NOTES defined before the include: a
 *                   sched_process_exec program that announces the new image
 *                   of a process seen before at once (attached by
 *                   stacksbpf_news_open), so it is snapshotted before the
 *                   first sample of it is even taken; with STACKS_EXEC_HOOK
 *                   also defined (a function or macro f(tgid, exec_id),
 *                   declared before the include), it calls that at every
 *                   exec, of processes seen before or not
 * and the helpers
 *   stacks_count(i)                     counter i += 1 on this CPU
 *   stacks_get(ctx, user)               id of the current stack, errors counted
 *   stacks_fill_key(k, ctx, u, kk)      fill a struct stack_key for current (-1: in an
 *                                       interrupt inside another walk, stacks not read)
 *   stacks_walk_under_way()             a walk is under way on this CPU (this: an interrupt's)
 *   stacks_fill_kernel(k, ctx)          its kernel stack, read apart afterwards
 *   stacks_note_pid(tgid)               announce current's image once (tgid: current's)
 *   stacks_exec_id()                    current's image: task->self_exec_id (low 32 bits)
 *   stacks_dwarf_sample(rb, type, ctx, u, kk)   a struct dwarf_sample of current
 *                                       reserved on ring buffer rb, filled (--dwarf)
 *   STACKS_SEND_CUT(k, key, value)      k's user walk (k within key, the count
 *                                       key), stopped where a table was missing,
 *                                       sent to user space to finish (1), value
 *                                       counted there; 0: count it here
 * and, from bpf/self.bpf.h, self_current_is_marple(): every stack collector
 * leaves marple's own processes out with it
 * and, with STACKS_COUNTS defined before the include, the count table
 *   counts                              struct stack_key -> u64, a half a set
 *                                       (sized like the stacks of one)
 *   stacks_add(k, w)                    counts[k] += w in the active set; a full
 *                                       table is counted
 * or, for a collector's own value, STACKS_COUNT_MAPS(key type, value type, n)
 * declares counts, n entries a set, and stacks_count_value:
 *   v = stacks_count_value(&key);       NULL when full (counted: STACKS_MAP_FULL)
 *
 * Draining (lib/collect/stackdrain.h): the stack store and the count table
 * are two sets; stacks_ctl (struct stacks_ctl, stacks.h) says which one
 * programs write into.  The stacks map holds both halves (its size is twice
 * the stacks of one set); a stack's id names its half.  When a quarter of a
 * set's stacks have been stored since it was cleared, or half of its count
 * table's half is taken, a program asks user space for a drain (a PROCNEWS_DRAIN
 * record on proc_news, or on drain_requests when a thread of its own drains:
 * stacks_ctl.drain_thread; either wakes it).  User space flips the set, waits for programs in flight,
 * reads the idle set and clears it: a capture never fills them in a steady
 * state.  Collectors that never drain use set 0 only.
 *
 *   struct stack_key key;
 *   stacks_fill_key(&key, ctx, !kernel_only, !user_only);
 *   u64 *v = bpf_map_lookup_elem(&counts, &key);
 *   if (v) __sync_fetch_and_add(v, 1);
 *   else if (bpf_map_update_elem(&counts, &key, &one, BPF_NOEXIST) == -E2BIG) stacks_count(STACKS_MAP_FULL);
 */
#ifndef MARPLE_STACKS_BPF_H
#define MARPLE_STACKS_BPF_H

#include "self.bpf.h"
#include "task.bpf.h"
#include "stacks.h"
#include "unwindtables.bpf.h"
#include "stackstore.bpf.h"
#include "python.bpf.h"

#ifndef PF_KTHREAD
#define PF_KTHREAD 0x00200000
#endif

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);		/* STACKS_SEEN_KEY(pid, exec_id) */
	__type(value, __u8);
} pids_seen SEC(".maps");

/* bumped by user space when it clears an answer in pids_seen (an image
 * answered native looked at again): a CPU's remembered answer (struct
 * stacks_sample's memo) of another generation is looked up again */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} pids_seen_gen SEC(".maps");

/* this CPU's sample: its stage clock, and what stacks_image_look found */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stacks_sample);
} stacks_samples SEC(".maps");

static __always_inline struct stacks_sample *stacks_sample_get(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&stacks_samples, &zero);
}

static __always_inline struct stacks_stage_clock *stacks_clock(void)
{
	struct stacks_sample *s = stacks_sample_get();
	return s ? &s->clock : NULL;
}

/* A sample begins: timed if it is this CPU's STACKS_STAGE_EVERY-th. */
static __always_inline void stacks_clock_start(void)
{
	struct stacks_stage_clock *c = stacks_clock();
	if (!c)
		return;
	c->on = ++c->seen % STACKS_STAGE_EVERY == 0;
	if (c->on) {
		c->timed++;
		c->counts_on = 1;
		c->last = bpf_ktime_get_ns();
	}
}

/* The stage that began at the last lap (or the start) ends now. */
static __always_inline void stacks_clock_lap(__u32 stage)
{
	struct stacks_stage_clock *c = stacks_clock();
	if (!c || !c->on)
		return;
	__u64 now = bpf_ktime_get_ns();
	if (stage < STACKS_NSTAGES)
		c->ns[stage] += now - c->last;
	c->last = now;
}

static __always_inline void stacks_clock_stop(void)
{
	struct stacks_stage_clock *c = stacks_clock();
	if (c)
		c->on = 0;
}

/* The clock on again for a stack read after stacks_fill_key, when that
 * sample was timed (offcpu's kernel stack, read unless its memo has it). */
static __always_inline void stacks_clock_resume(void)
{
	struct stacks_stage_clock *c = stacks_clock();
	if (c && c->seen % STACKS_STAGE_EVERY == 0) {
		c->on = 1;
		c->last = bpf_ktime_get_ns();
	}
}

/* Python frames after each user stack (bpf/python.bpf.h): set by user
 * space when it walks them (pyframes.h). */
const volatile bool stacks_python = false;

/* User space's answer about the current image of tgid: PY_NATIVE or
 * PY_WALK, PY_PENDING until it answered. */
static __always_inline __u32 stacks_py_state(__u32 tgid)
{
	struct py_proc *p = bpf_map_lookup_elem(&py_procs, &tgid);
	return p && p->exec_id == stacks_exec_id() ? p->state : PY_PENDING;
}

/* The current image of tgid: was it announced, and is it to be checked
 * for Python frames?  Not once user space answered it is not Python: the
 * answer is kept in its pids_seen value, and its samples pay nothing more
 * for Python (stacks_store_user calls none of python.bpf.h).  An answered
 * image is remembered by the CPU (struct stacks_sample's memo, a slot a
 * pid): the CPU's next samples of it skip the lookup but every
 * STACKS_SEEN_RECHECK-th. */
static __always_inline void stacks_image_look(__u32 tgid, __u32 exec_id)
{
	struct stacks_sample *s = stacks_sample_get();
	__u64 key = STACKS_SEEN_KEY(tgid, exec_id);
	__u32 zero = 0, *genp = bpf_map_lookup_elem(&pids_seen_gen, &zero);
	__u32 gen = genp ? *genp : 0;

	if (!s)
		return;
	struct stacks_seen_memo *m = &s->memo[tgid & (STACKS_SEEN_MEMOS - 1)];
	s->seen = 1;
	if (m->key == key && m->left && m->gen == gen) {
		m->left--;
		s->py_check = !(m->value & STACKS_SEEN_NOT_PYTHON);
		return;
	}
	m->left = 0;
	__u8 *seen = bpf_map_lookup_elem(&pids_seen, &key);
	s->seen = seen != NULL;
	s->py_check = 1;
	if (!seen)
		return;
	if (stacks_python && !(*seen & STACKS_SEEN_PY_ANSWERED)) {
		__u32 state = stacks_py_state(tgid);
		if (state == PY_NATIVE)
			*seen |= STACKS_SEEN_PY_ANSWERED | STACKS_SEEN_NOT_PYTHON;
		else if (state == PY_WALK)
			*seen |= STACKS_SEEN_PY_ANSWERED;
	}
	__u8 value = *seen;
	if (stacks_python)
		s->py_check = !(value & STACKS_SEEN_NOT_PYTHON);
	if (!stacks_python || (value & STACKS_SEEN_PY_ANSWERED)) {
		m->key = key;
		m->value = value;
		m->left = STACKS_SEEN_RECHECK - 1;
		m->gen = gen;
	}
}

/* Store user stack ips[0..n), with its Python frames when stacks_python.
 * One stacks_store for both: the verifier walks each inlined copy of it
 * (its hashing loop unrolled), and a second copy inside python.bpf.h made
 * the program take half as long again to load.  seen: the image's
 * pids_seen value, or NULL; once it says STACKS_SEEN_NOT_PYTHON the image's
 * samples pay nothing for Python (the check cost a sample of cc1 or a
 * shell 0.5-1.4 us, a third of the frame-pointer walk: bench callstack-bpf). */
static __always_inline int stacks_store_user(__u64 *ips, int n)
{
	/* an image known not to be Python calls nothing of python.bpf.h: its
	 * walk (or bpf_get_stack) already zeroed the words after the stack,
	 * all py_append would do (the calls and their clock laps cost a
	 * native process 200-370 ns a timed sample: bench callstack-bpf) */
	struct stacks_sample *s = stacks_python ? stacks_sample_get() : NULL;
	int python = stacks_python && (!s || s->py_check);
	int total = n;
	if (python) {
		total = py_append(n);	/* ips: stack_scratch */
		stacks_clock_lap(STACKS_STAGE_RUNTIME);
	}
	int stored = stacks_store(total, 1);	/* ips: stack_scratch */
	int id = stacks_stored_id(stored), fresh = stored >= 0 && (stored & STACKS_STORED_NEW);
	stacks_clock_lap(STACKS_STAGE_STORE);
	if (python) {
		py_stored(id, ips, n, total, fresh);
		stacks_clock_lap(STACKS_STAGE_RUNTIME);
	}
	return id;
}

/* The id of the current user or kernel stack in the stacks map (stored if
 * new); STACK_ID_NONE when there is none (kernel stack of a sample taken in
 * user mode); a negative errno, counted, when it could not be read or stored.
 * User stacks: walked with the unwind tables (--unwind tables: unwindtables.bpf.h)
 * or by frame pointers (bpf_get_stack, --unwind fp); checked for Python
 * frames as the CPU's struct stacks_sample says. */
static __always_inline int stacks_read(void *ctx, int user)
{
	__u32 zero = 0;
	__u64 *ips = bpf_map_lookup_elem(&stack_scratch, &zero);
	if (!ips)
		return -ENOMEM;
	if (user && stacks_unwind == UNWIND_MODE_TABLES) {
		/* never frame pointers where a table is missing: a marker */
		int n = unwind_user_stack();
		stacks_clock_lap(STACKS_STAGE_USER);
		return n > 0 ? stacks_store_user(ips, n) : STACK_ID_NONE;
	}
	/* bpf_get_stack zeroes what it does not fill (the hash counts on it) */
	long len = bpf_get_stack(ctx, ips, MARPLE_STACK_DEPTH * sizeof(__u64), user ? BPF_F_USER_STACK : 0);
	stacks_clock_lap(user ? STACKS_STAGE_USER : STACKS_STAGE_KERNEL);
	if (len <= 0) {
		if (len == 0 || (!user && len == -EFAULT))
			return STACK_ID_NONE;
		stacks_count(user ? STACKS_USER_FAULT : STACKS_KERN_FAULT);
		return (int)len;
	}
	if (user)
		return stacks_store_user(ips, len / sizeof(__u64));
	int id = stacks_stored_id(stacks_store(len / sizeof(__u64), 0));
	stacks_clock_lap(STACKS_STAGE_STORE);
	return id;
}

/* stacks_read, a user stack checked for Python frames. */
static __always_inline int stacks_get(void *ctx, int user)
{
	struct stacks_sample *s = stacks_sample_get();
	if (user && s)
		s->py_check = 1;
	return stacks_read(ctx, user);
}

/* stacks_get for an id kept in state across drains (memleak's allocations):
 * *gen is the generation of the id's set as it was stored.  Both are read
 * before the store: a set is cleared, and its generation moved on, only once
 * the programs that could still store into it have finished. */
static __always_inline int stacks_get_kept(void *ctx, int user, __u32 *gen)
{
	struct stacks_ctl *c = stacks_ctl_get();
	__u32 g0 = 0, g1 = 0;

	if (c) {
		g0 = *(volatile __u32 *)&c->gen[0];
		g1 = *(volatile __u32 *)&c->gen[1];
	}
	int id = stacks_get(ctx, user);
	__u32 nslots = ((struct bpf_map *)&stacks)->max_entries / 2;
	*gen = id >= 0 && (__u32)id >= nslots ? g1 : g0;
	return id;
}

/* Announce image exec_id of process tgid (current's) once: a struct pid_note
 * on proc_news.  force: even if announced before (at exec, where a sample may
 * have announced it with the layout half built). */
static __always_inline void stacks_note_image(__u32 tgid, __u32 exec_id, struct task_struct *t, int force)
{
	__u64 key = STACKS_SEEN_KEY(tgid, exec_id);
	__u8 one = 1;
	if (tgid == 0)
		return;
	/* a lookup first: an LRU update takes a free node (and locks) even when
	 * the key exists, ~1.5 us per event in a uprobe-heavy collector */
	if (!force && bpf_map_lookup_elem(&pids_seen, &key))
		return;
	/* probe reads, not pointer loads: the verifier checks every load of a
	 * BTF pointer field (t->mm) with a linear search of the kernel's BTF,
	 * ~3 ms per program load here */
	struct mm_struct *mm = BPF_CORE_READ(t, mm);
	__u64 start_code = 0, start_brk = 0;
	if (mm) {
		start_code = BPF_CORE_READ(mm, start_code);
		start_brk = BPF_CORE_READ(mm, start_brk);
		/* a sample inside the exec, after the new memory replaced the
		 * old but before the ELF loader set its layout (the break
		 * last): not announced, a later sample does.  Announced half
		 * built, the image's maps never matched its layout, and the
		 * maps the unwind tables posted for it were dropped (a
		 * dlopen'ed library of a short-lived process went [unknown]:
		 * 1 run in ~12 of unwind.t's short-lived case) */
		if (!start_code || !start_brk)
			return;
	}
	if (bpf_map_update_elem(&pids_seen, &key, &one, force ? BPF_ANY : BPF_NOEXIST) != 0)
		return;
	PROCNEWS_RECORD(struct pid_note) *r = procnews_reserve(PROCNEWS_IMAGE, sizeof(*r));
	if (!r) {
		bpf_map_delete_elem(&pids_seen, &key);	/* try again next time */
		return;
	}
	struct pid_note *e = &r->body;
	e->pid = tgid;
	e->exec_id = exec_id;
	if (mm) {
		e->layout[0] = start_code;
		e->layout[1] = BPF_CORE_READ(mm, end_code);
		e->layout[2] = BPF_CORE_READ(mm, start_stack);
		e->layout[3] = BPF_CORE_READ(mm, start_data);
		e->layout[4] = BPF_CORE_READ(mm, end_data);
		e->layout[5] = start_brk;
		e->layout[6] = BPF_CORE_READ(mm, env_start);
		e->layout[7] = BPF_CORE_READ(mm, env_end);
	} else {
		__builtin_memset(e->layout, 0, sizeof(e->layout));
	}
	bpf_ringbuf_submit(r, 0);
}


static __always_inline void stacks_note_pid(__u32 tgid)
{
	stacks_note_image(tgid, stacks_exec_id(), bpf_get_current_task_btf(), 0);
}

/* Has the current task no user stack to read (kernel thread, or exiting
 * after its memory is gone)? */
static __always_inline int stacks_current_is_kthread(void)
{
	struct task_struct *t = bpf_get_current_task_btf();
	return (t->flags & PF_KTHREAD) != 0 || BPF_CORE_READ(t, mm) == NULL;
}

/* Copy the user stack from sp up into u->data (u->len bytes: all of
 * USER_STACK_MAX, or up to the end of its mapping near the top of the
 * stack); -1 if nothing could be read. */
static __always_inline int stacks_copy_stack(struct user_stack *u, __u64 sp)
{
	u->len = 0;
	u->pad = 0;
	if (bpf_probe_read_user(u->data, USER_STACK_MAX, (void *)sp) == 0) {
		u->len = USER_STACK_MAX;
		return 0;
	}
	/* near the top of the stack: read up to the end of its mapping, page by page */
	__u32 first = 4096 - (sp & 4095);
	for (int k = USER_STACK_MAX / 4096 - 1; k >= 0; k--) {
		__u32 l = first + k * 4096;
		if (l > USER_STACK_MAX)
			continue;
		if (bpf_probe_read_user(u->data, l, (void *)sp) == 0) {
			u->len = l;
			return 0;
		}
	}
	return -1;
}

/* Copy the current task's user registers and the top of its user stack
 * (--dwarf).  0, or -1 (counted as a user stack error) if nothing could be read. */
static __always_inline int stacks_copy_user(struct user_stack *u)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct pt_regs *r = (struct pt_regs *)bpf_task_pt_regs(t);
	__u64 sp;

	u->regs[UREG_IP] = BPF_CORE_READ(r, ip);
	sp = BPF_CORE_READ(r, sp);
	u->regs[UREG_SP] = sp;
	u->regs[UREG_BP] = BPF_CORE_READ(r, bp);
	u->regs[UREG_BX] = BPF_CORE_READ(r, bx);
	u->regs[UREG_R12] = BPF_CORE_READ(r, r12);
	u->regs[UREG_R13] = BPF_CORE_READ(r, r13);
	u->regs[UREG_R14] = BPF_CORE_READ(r, r14);
	u->regs[UREG_R15] = BPF_CORE_READ(r, r15);
	if (stacks_copy_stack(u, sp) == 0)
		return 0;
	stacks_count(STACKS_USER_FAULT);
	return -1;
}

/* --unwind tables: samples whose user walk stopped where a table was
 * missing, for user space to walk on (struct cut_sample): sized by user
 * space when stacks_send_cuts (lib/collect/stackcollector.h). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} cut_samples SEC(".maps");

const volatile bool stacks_send_cuts = false;

/* If this CPU's last user walk, k's (within key, the count map's key of
 * key_size bytes), stopped where a table was missing, send the sample to
 * user space to be walked on there and counted with value (value_size
 * bytes of u64 sums): 1 if sent, and the caller counts nothing; 0 to count
 * it as it is (not cut; not stacks_send_cuts; the ring buffer full:
 * counted).  Use STACKS_SEND_CUT, whose sizes are constants. */
static __always_inline int stacks_send_cut(const struct stack_key *k, const void *key, __u32 key_size,
					   const void *value, __u32 value_size)
{
	__u32 zero = 0;
	struct unwind_walk *w;

	if (!stacks_send_cuts || !(w = bpf_map_lookup_elem(&unwind_state, &zero)) || !w->cut_frames)
		return 0;
	__u32 frames = w->cut_frames;
	w->cut_frames = 0;
	if (w->tgid != k->pid || k->user_stack_id < 0)
		return 0;
	struct cut_sample *c = bpf_ringbuf_reserve(&cut_samples, sizeof(*c), 0);
	if (!c) {
		unwind_count(UNWIND_CUTS_NOT_SENT);
		return 0;
	}
	c->frames = frames;
	c->exact = w->exact;
	c->time = bpf_ktime_get_ns();
	c->tid = (__u32)bpf_get_current_pid_tgid();
	c->cpu = bpf_get_smp_processor_id();
	c->stack = *k;
	__builtin_memset(c->key, 0, sizeof(c->key));
	__builtin_memcpy(c->key, key, key_size);
	__builtin_memset(c->value, 0, sizeof(c->value));
	__builtin_memcpy(c->value, value, value_size);
	__builtin_memset(c->user.regs, 0, sizeof(c->user.regs));
	c->user.regs[UREG_IP] = w->ip;
	c->user.regs[UREG_SP] = w->sp;
	c->user.regs[UREG_BP] = w->bp;
	stacks_copy_stack(&c->user, w->sp);
	unwind_count(UNWIND_CUTS_SENT);
	bpf_ringbuf_submit(c, 0);	/* woken at once: its stacks are let go at the next drain */
	return 1;
}
#define STACKS_SEND_CUT(k, key, value)                                                              \
	({                                                                                          \
		_Static_assert(sizeof(*(key)) <= CUT_KEY_MAX && sizeof(*(value)) <= CUT_VALUES_MAX * 8, \
			       "a cut sample's key or value too big");                              \
		stacks_send_cut(k, key, sizeof(*(key)), value, sizeof(*(value)));                   \
	})

/* --dwarf: a struct dwarf_sample of type for the current task, a user task
 * (!stacks_current_is_kthread()), reserved on ringbuf and filled (pid, comm,
 * image, kernel stack id, the copy of the user registers and stack; user.len
 * 0 without want_user), for the caller to submit; NULL (counted) when the
 * ring buffer is full. */
static __always_inline struct dwarf_sample *stacks_dwarf_sample(void *ringbuf, __u32 type, void *ctx, int want_user,
								int want_kernel)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct task_struct *t = bpf_get_current_task_btf();
	stacks_clock_stop();	/* not a sample stacks_fill_key times */
	struct dwarf_sample *e = bpf_ringbuf_reserve(ringbuf, sizeof(*e), 0);

	if (!e) {
		stacks_count(STACKS_RINGBUF_FULL);
		return NULL;
	}
	e->type = type;
	e->cpu = bpf_get_smp_processor_id();
	e->time = bpf_ktime_get_ns();
	e->pid = id >> 32;
	e->tid = (__u32)id;
	bpf_get_current_comm(&e->comm, sizeof(e->comm));
	e->kern_stack_id = want_kernel ? stacks_get(ctx, 0) : STACK_ID_NONE;
	if (e->kern_stack_id == STACK_ID_LOST)
		stacks_count(STACKS_LOST_SAMPLES);
	e->exec_id = (__u32)t->self_exec_id;
	if (want_user) {
		stacks_note_image(e->pid, e->exec_id, t, 0);
		stacks_copy_user(&e->user);
	} else {
		e->user.len = 0;
		e->user.regs[UREG_IP] = 0;
	}
	return e;
}

/* Where the first NUL of an 8-byte word of a comm is: 0x80 in its byte
 * (and perhaps in bytes above it, which the callers' lowest bit leaves
 * out); 0: none. */
static __always_inline __u64 stacks_comm_nul(__u64 w)
{
	return (w - 0x0101010101010101ull) & ~w & 0x8080808080808080ull;
}

/* t's comm into comm[MARPLE_COMM_LEN] (4-byte aligned), as
 * bpf_get_current_comm would copy it (the bytes from the first NUL on
 * zeroed: a kernel that did not pad leaves a longer old name's tail),
 * with two loads from the task, not the helper's call and byte copy
 * (165-208 ns a timed sample: bench callstack-bpf).  No branches: each
 * is a state more for the verifier to walk the sample's program from.
 * A rename racing with the read tears it as it tears the helper's copy. */
static __always_inline void stacks_read_comm(struct task_struct *t, char *comm)
{
	__u64 lo = *(__u64 *)&t->comm[0], hi = *(__u64 *)&t->comm[8];
	__u64 nul_lo = stacks_comm_nul(lo), nul_hi = stacks_comm_nul(hi);
	__u32 *c = (__u32 *)comm;

	/* the bytes below the lowest 0x80 (all of them when there is none) */
	lo &= ((nul_lo & -nul_lo) >> 7) - 1;
	hi &= ((nul_hi & -nul_hi) >> 7) - 1;
	hi &= ((nul_lo | -nul_lo) >> 63) - 1;	/* 0 after a NUL in lo */
	c[0] = (__u32)lo;
	c[1] = (__u32)(lo >> 32);
	c[2] = (__u32)hi;
	c[3] = (__u32)(hi >> 32) & 0x00ffffff;	/* the last byte: NUL */
}

/* A stacks_fill_key (or stacks_fill_kernel) is under way on this CPU: this
 * event is an interrupt's inside it.  (Between one and what its program
 * does after, sending a cut stack, an interrupt's walk could still take
 * the CPU's state: a far shorter window than the walk.) */
static __always_inline bool stacks_walk_under_way(void)
{
	struct stacks_sample *walk = stacks_sample_get();

	return !walk || walk->walking;
}

/* This CPU's walk state taken for a walk: false, or true if a walk has it
 * already.  One exchange, not a test then a set: a uprobe's program runs
 * with migration disabled but preemptible on a preemptible kernel, and a
 * task preempted between the two would walk on the state another task's
 * program took meanwhile. */
static __always_inline bool stacks_walk_take(struct stacks_sample *walk)
{
	return __sync_lock_test_and_set(&walk->walking, 1) != 0;
}

/* Fill *k for the current task: pid (tgid), exec id, comm and the stacks
 * asked for; 0, or -1 for an event in an interrupt that came while this
 * CPU's task was in one of our stack walks (a lock waiter's holder seen
 * from a timer's wake-up inside one, a kernel allocation in an interrupt):
 * the walk's state on this CPU (the scratch stack, the walk, the clock) is
 * the other's, so the stacks are not read (STACK_ID_NESTED, counted). */
static __always_inline int stacks_fill_key(struct stack_key *k, void *ctx, int want_user, int want_kernel)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct task_struct *t = bpf_get_current_task_btf();
	struct stacks_sample *walk = stacks_sample_get();

	__builtin_memset(k, 0, sizeof(*k));
	k->pid = id >> 32;
	k->exec_id = (__u32)t->self_exec_id;
	k->user_stack_id = STACK_ID_NONE;
	k->kern_stack_id = STACK_ID_NONE;
	if (!walk || stacks_walk_take(walk)) {
		if (want_user)
			k->user_stack_id = STACK_ID_NESTED;
		if (want_kernel)
			k->kern_stack_id = STACK_ID_NESTED;
		stacks_count(STACKS_NESTED);
		stacks_read_comm(t, k->comm);
		return -1;
	}
	stacks_clock_start();
	/* t->mm loaded, not probe-read by a helper call each sample; through
	 * the cast where the kernel takes it (task.bpf.h) */
	if (want_user && k->pid != 0 && !(t->flags & PF_KTHREAD) && current_task_mm()) {
		stacks_image_look(k->pid, k->exec_id);
		stacks_clock_lap(STACKS_STAGE_NEWS);
		k->user_stack_id = stacks_read(ctx, 1);
		struct stacks_sample *s = stacks_sample_get();
		if (!s || !s->seen) {
			stacks_note_image(k->pid, k->exec_id, t, 0);
			stacks_clock_lap(STACKS_STAGE_NEWS);
		}
	}
	if (want_kernel)
		k->kern_stack_id = stacks_read(ctx, 0);
	if (k->user_stack_id == STACK_ID_LOST || k->kern_stack_id == STACK_ID_LOST)
		stacks_count(STACKS_LOST_SAMPLES);
	/* the comm last: written at the start, its words carried through the
	 * stack walks had the verifier walk 1,050 (fp) to 7,300 (tables and
	 * Python) instructions more, here 660 */
	stacks_read_comm(t, k->comm);
	stacks_clock_lap(STACKS_STAGE_NEWS);
	stacks_clock_stop();
	walk->walking = 0;
	return 0;
}

/* The kernel stack of *k, read after stacks_fill_key(k, ctx, u, false),
 * for a collector that decides only then whether to read it: a flag known
 * before the user walk, passed to stacks_fill_key, has the verifier walk the
 * user walk once for each value (offcpu's switch: 0.4 s more to load;
 * callstack's sample: 34,299 instructions, not 23,115). */
static __always_inline void stacks_fill_kernel(struct stack_key *k, void *ctx)
{
	struct stacks_sample *walk = stacks_sample_get();

	if (!walk || stacks_walk_take(walk)) {
		k->kern_stack_id = STACK_ID_NESTED;
		if (k->user_stack_id != STACK_ID_NESTED)
			stacks_count(STACKS_NESTED);
		return;
	}
	stacks_clock_resume();
	k->kern_stack_id = stacks_read(ctx, 0);
	if (k->kern_stack_id == STACK_ID_LOST && k->user_stack_id != STACK_ID_LOST)
		stacks_count(STACKS_LOST_SAMPLES);
	stacks_clock_stop();
	walk->walking = 0;
}

#ifdef STACKS_EXEC_NOTES
/* A process seen before (any thread of its previous image, or this image
 * already) has just exec'ed: announce the new image now, with its layout
 * complete, so that it is snapshotted while it surely lives. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(stacks_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u32 exec_id = (__u32)t->self_exec_id;
	__u64 prev = STACKS_SEEN_KEY(tgid, exec_id - 1), cur = STACKS_SEEN_KEY(tgid, exec_id);

	int seen = bpf_map_lookup_elem(&pids_seen, &prev) || bpf_map_lookup_elem(&pids_seen, &cur);
	if (seen)
		stacks_note_image(tgid, exec_id, t, 1);
	bpf_map_delete_elem(&unwind_procs, &tgid);	/* its mappings are gone */
	unwind_procs_changed();
	if (stacks_unwind == UNWIND_MODE_TABLES)
		unwind_exec(tgid, seen);	/* its new mappings read at once */
#ifdef STACKS_EXEC_HOOK
	STACKS_EXEC_HOOK(tgid, exec_id);
#endif
	return 0;
}
#endif

/* The count table of a collector: an array with a half a set
 * (lib/collect/stackdrain.h), entries of { owner, key, value }, where a
 * key's entry is chosen by its 64-bit hash with double hashing, claimed with
 * a compare and exchange, as the stack store's slots are.  A hash map cost
 * a sample 600 ns of a CPU-bound capture's 4.5 us (a cold bucket line, then
 * the element's); an entry here is one line, its address computed
 * (bench callstack-bpf's counts stage: 220 ns).  Two keys with one hash (a
 * 2^-64 chance a pair) would share an entry.  User space reads and clears
 * the idle half in place.
 *
 * STACKS_COUNT_MAPS(key_type, value_type, n) declares the table, counts,
 * with n entries a set, and
 *   v = stacks_count_value(&key);   the value of key in the active set (zero
 *                                   when new), NULL when it is full (counted)
 * (key_type's size a multiple of 8, its padding zeroed). */
#define STACKS_COUNT_MAPS(key_type, value_type, n)					\
	struct stacks_count_entry {							\
		__u64 owner;								\
		key_type key;								\
		value_type value;							\
	};										\
	_Static_assert(sizeof(key_type) % 8 == 0, "a count key is hashed 8 bytes a word"); \
	struct {									\
		__uint(type, BPF_MAP_TYPE_ARRAY);					\
		__uint(max_entries, 2 * (n));						\
		__uint(map_flags, BPF_F_MMAPABLE);	/* user space drains it in place */ \
		__type(key, __u32);							\
		__type(value, struct stacks_count_entry);				\
	} counts SEC(".maps");								\
	/* The entry of *key in the active set, claimed (its key written, the	\
	 * set's fill counted) if new: its index, or -1 when STACKS_PROBES	\
	 * entries in a row are others'.  Global: the verifier walks it once,	\
	 * not at every path to every caller. */					\
	__noinline int stacks_count_claim(const key_type *key)				\
	{										\
		__u32 half = ((struct bpf_map *)&counts)->max_entries / 2;		\
		struct stacks_ctl *c = stacks_ctl_get();				\
		if (!key || !c || half == 0)						\
			return -1;							\
		__u64 h = stacks_hash_key((const __u32 *)key, sizeof(*key) / 4);	\
		__u32 set = c->set & 1, at = 0;						\
		int found = 0;	/* 1: its entry, 2: claimed here */			\
		for (__u32 p = 0; p < STACKS_PROBES && !found; p++) {			\
			at = stacks_probe_at(h, p, set * half, half);			\
			__u64 *owner = bpf_map_lookup_elem(&counts, &at);		\
			if (!owner)							\
				return -1;						\
			found = stacks_claim_owner(owner, h);				\
		}									\
		if (found == 2) {							\
			struct stacks_count_entry *e = bpf_map_lookup_elem(&counts, &at); \
			if (!e)								\
				return -1;						\
			e->key = *key;	/* read once its set is idle */			\
			stacks_note_fill(c, &c->counts_used[set], half / 2);		\
		}									\
		return found ? (int)at : -1;						\
	}										\
	static __always_inline value_type *stacks_count_value(const key_type *key)	\
	{										\
		int got = stacks_count_claim(key);					\
		__u32 at = (__u32)got;							\
		struct stacks_count_entry *e = got >= 0 ? bpf_map_lookup_elem(&counts, &at) : NULL; \
		if (!e) {								\
			stacks_count(STACKS_MAP_FULL);					\
			return NULL;							\
		}									\
		return &e->value;							\
	}

#ifdef STACKS_COUNTS
STACKS_COUNT_MAPS(struct stack_key, __u64, 16384)

/* counts[key] += w in the active set, the update timed
 * (STACKS_STAGE_COUNTS) once a timed sample */
static __always_inline void stacks_add(struct stack_key *key, __u64 w)
{
	struct stacks_stage_clock *c = stacks_clock();
	__u64 start = c && c->counts_on ? bpf_ktime_get_ns() : 0;
	__u64 *v = stacks_count_value(key);
	if (v)
		__sync_fetch_and_add(v, w);
	if (c && start) {
		c->ns[STACKS_STAGE_COUNTS] += bpf_ktime_get_ns() - start;
		c->timed_counts++;
		c->counts_on = 0;
	}
}
#endif

#endif
