/* python.bpf.h — CPython frames from BPF, for every stack collector (and
 * PHP's, py_proc's PY_F_PHP: a process's zend_execute_data chain from
 * executor_globals, walked by php_frame_step into the same words; and
 * Perl's, PY_F_PERL: its context stacks, perl_walk_frames):
 * stacks.bpf.h includes it, and stacks_get hands it each user stack when the
 * rodata stacks_python is set (it includes only the stack store,
 * stackstore.bpf.h, so the includes do not circle).
 *
 * Defines
 *   py_procs      tgid -> struct py_proc (bpf/python.h), filled by user space
 *                 (lib/collect/pyframes.c) when asked on, or at once from
 *   py_files      (dev, inode) -> struct py_file: the Python files user space
 *                 has read, so a new process of one is walked from its first
 *                 sample with its own load bias
 *   (on proc_news, bpf/procnews.bpf.h, PROCNEWS_PYTHON records: struct
 *                 py_request) the first sample of a process (or of a new
 *                 image of it) asks whether it runs Python
 *   py_counters   per-CPU counters, enum py_counter
 *   py_head       per-CPU scratch: the head of the frame being read
 *   py_codes      the code objects user space has named, as they were
 * and
 *   py_proc_of(tgid, exec_id)   the process's layout when its frames are to be
 *                               walked, else NULL (asking user space the first time)
 *   py_find_vma   rodata: bpf_find_vma may be called (a launcher's libpython
 *                 is found with it)
 *   py_append(n)                put PY_STACK_MARK and the thread's Python frames
 *                               (leaf first, PY_FRAME_* words) after the user
 *                               stack stack_scratch[0..n): the length to store (not called
 *                               for a process known not to be Python)
 *   py_stored(id, ips, n, total)  count a stack stored with Python frames, and
 *                               ask user space to name it if new
 *
 * The thread state is found as the interpreter finds it: the pthread key
 * _PyRuntime's autoTSSkey, read in glibc's thread-specific data (struct
 * pthread.specific_1stblock, from the task's fsbase).  The state found is
 * used only if its native_thread_id is the sampled thread (its id in the
 * process's pid namespace; before 3.11 its thread_id, the thread pointer);
 * else the GIL holder (gilstate.tstate_current, to 3.11) is tried with the
 * same check, then the main interpreter's list of thread states (3.7+: what
 * a version known only by its _Py_DebugOffsets has).
 */
#ifndef MARPLE_PYTHON_BPF_H
#define MARPLE_PYTHON_BPF_H

#include "python.h"
#include "stackstore.bpf.h"	/* the store's maps: a Python stack is stored as native ones are */
#include "unwindtables.bpf.h"	/* unwind_vma_describe: a launcher's library found by its VMA */

/* LRU: user space never deletes a process's entry (it is asked once per
 * image), and a system-wide capture sees hundreds of new processes a second:
 * a plain hash filled up and no later Python process was walked.  An entry
 * pushed out is asked about again at its process's next sample. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct py_proc);
} py_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 64);
	__type(key, struct unwind_file_key);
	__type(value, struct py_file);
} py_files SEC(".maps");

/* the code objects user space has named (struct py_code_key -> py_code_id):
 * filled by it, one entry a code object.  Least recently looked up goes
 * first when it is full (a long capture's processes come and go, ~1.3 MB
 * preallocated, as LRU maps must be): a stack whose code object was evicted
 * wakes user space, which names it again */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct py_code_key);
	__type(value, struct py_code_id);
} py_codes SEC(".maps");

/* Bytes of a frame read at once: its members must lie within the first
 * PY_FRAME_HEAD - 8 (3.11's lie within 69); PY_FRAME_HEAD - 9 is a mask */
#define PY_FRAME_HEAD 136

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8[PY_FRAME_HEAD]);
} py_head SEC(".maps");

/* py_proc_arrived's new entry, built here, not on the BPF stack: every
 * program's deepest chain of calls must fit in 512 bytes of stack, where the
 * kernel gives it no private stack (Linux 6.18.44 gives uprobes none:
 * tests/collectors/bpfstack.t).  Per CPU: a walk in an interrupt inside
 * another on the same CPU is refused (stacks_walk_under_way). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_proc);
} py_fresh SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PY_NCOUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} py_counters SEC(".maps");

/* Global, as unwind_count (which see) */
__noinline int py_count(__u32 idx)
{
	stacks_percpu_inc(&py_counters, idx);
	return 0;
}

/* Who a per-CPU memo's entry is of: a process or thread (id) in one image
 * of it (a new image at the same id is another) */
static __always_inline __u64 py_who(__u32 id, __u32 exec_id)
{
	return id | (__u64)exec_id << 32;
}

/* A per-CPU memo of what a process's memory held (an interpreter, a
 * statement's line, a Ruby frame's word) reads it again at its entry's
 * every PY_MEMO_RECHECK-th use: memory freed and used again for the same
 * kind of thing at the same address is read anew within that many uses */
#define PY_MEMO_RECHECK 16

/* stacks.bpf.h's stages' clock (a timed sample's laps) */
static __always_inline void stacks_clock_lap(__u32 stage);
static __always_inline struct stacks_stage_clock *stacks_clock(void);

/* May the program call bpf_find_vma (Linux 5.17)?  Set by user space after
 * probing (unwindtables_size), so that on a kernel without it the verifier
 * never meets the call: a launcher's processes then wait for user space. */
const volatile __u32 py_find_vma = 0;

/* The interpreters whose walks are loaded (enum py_walks): the verifier
 * does not check the others' (1-3 ms of the load each); user space never
 * asks for one of them (pyframes_walks_for) */
const volatile __u32 py_walks = PY_WALKS_ALL;

/* How py_proc_from_file found a new process (enum py_found). */
enum py_found {
	PY_FOUND_NONE,			/* its program is no Python file known */
	PY_FOUND_PROGRAM,		/* its program is a CPython: walked */
	PY_FOUND_LIBRARY,		/* a launcher, its libpython found: walked */
	PY_FOUND_UNBOUND,		/* a launcher that has not called into it yet */
	PY_FOUND_NOT_YET,		/* a launcher whose libpython was not found */
	PY_FOUND_IN_EXEC,		/* sampled in its exec: its program not mapped yet */
};

/* bpf_find_vma's callback: the VMA as the unwinder describes one. */
static long py_vma_found(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	unwind_vma_describe(data, task, vma);
	return 0;
}

static __always_inline __u64 py_read_ptr(__u64 addr)
{
	__u64 v = 0;
	if (bpf_probe_read_user(&v, sizeof(v), (void *)addr) != 0)
		return 0;
	return v;
}

/* The libpython a launcher calls through its GOT slot at slot: its layout
 * into out, with its load bias (the VMA that holds the function the slot
 * points at).  PY_FOUND_LIBRARY, or why not. */
static __always_inline int py_proc_from_library(struct py_proc *out, __u64 slot, const struct unwind_file_key *exe)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct unwind_vma v = {};
	__u64 fn = py_read_ptr(slot);

	if (!fn)
		return PY_FOUND_UNBOUND;
	if (!py_find_vma) {
		py_count(PY_LIBRARY_UNKNOWN);
		return PY_FOUND_NOT_YET;
	}
	/* the unwinder's lookups in the process's samples found it (a new
	 * process's walk looks up its libraries' VMAs, libpython's among
	 * them, until user space has read its mappings); else looked up,
	 * refused when the unwinder looked one up in this sample (one a
	 * sample in a perf event): tried again at the next */
	long err = unwind_learned_vma(bpf_get_current_pid_tgid() >> 32, BPF_CORE_READ(t, mm, start_stack), fn, &v) == 0
			   ? 0
			   : bpf_find_vma(t, fn, py_vma_found, &v, 0);
	if (err == -2)
		return PY_FOUND_UNBOUND;	/* ENOENT: the slot not relocated yet */
	if (err != 0) {
		py_count(PY_LIBRARY_BUSY);
		return PY_FOUND_NOT_YET;
	}
	if (v.kind == UNWIND_VMA_KIND_FILE && v.key.dev == exe->dev && v.key.ino == exe->ino)
		return PY_FOUND_UNBOUND;	/* still the PLT's stub in the program */
	struct py_file *lib = v.kind == UNWIND_VMA_KIND_FILE ? bpf_map_lookup_elem(&py_files, &v.key) : NULL;
	if (!lib || lib->launch_slot) {
		py_count(PY_LIBRARY_UNKNOWN);
		return PY_FOUND_NOT_YET;
	}
	if (lib->stamp != v.stamp)
		return PY_FOUND_NOT_YET;	/* changed: user space reads it again */
	*out = lib->proc;
	out->runtime += v.start - v.pgoff - (lib->text_vaddr - lib->text_offset);
	return PY_FOUND_LIBRARY;
}

/* A process whose program is a Python file user space has read (in
 * another process), or a launcher of one: its layout, with its own load
 * bias, into out (its exec_id kept, walked).  enum py_found.  Global
 * functions, this and py_proc_arrived: each verified once, not once a path
 * through it (inlined, the sampling program verified in 1.28x the
 * instructions of --no-python's, against 1.14x without launchers). */
__noinline int py_proc_from_file(struct py_proc *out)
{
	if (!out)
		return PY_FOUND_NONE;	/* (a global function's pointer may be NULL) */
	struct task_struct *t = bpf_get_current_task_btf();
	struct mm_struct *mm = BPF_CORE_READ(t, mm);
	struct file *exe = BPF_CORE_READ(mm, exe_file);

	if (!exe)
		return PY_FOUND_NONE;
	struct unwind_file_key k = { .dev = BPF_CORE_READ(exe, f_inode, i_sb, s_dev),
				      .ino = BPF_CORE_READ(exe, f_inode, i_ino) };
	struct py_file *f = bpf_map_lookup_elem(&py_files, &k);
	if (!f)
		return PY_FOUND_NONE;
	if (f->stamp != unwind_stamp((__u64)BPF_CORE_READ(exe, f_inode))) {
		py_count(PY_FILE_STALE);	/* user space reads it again */
		return PY_FOUND_NONE;
	}
	__u32 exec_id = out->exec_id;
	__u64 start_code = BPF_CORE_READ(mm, start_code);
	/* (the new mm's start_code is 0 until its program is mapped: a bias
	 * from it would hold for the image's life, every sample without its
	 * thread state) */
	if (!start_code)
		return PY_FOUND_IN_EXEC;
	__u64 bias = start_code - f->text_vaddr;
	int found = PY_FOUND_PROGRAM;
	if (f->launch_slot)	/* (a launcher of a libpython: not met without CPython's walk) */
		found = py_walks & PY_WALKS_CPYTHON ? py_proc_from_library(out, bias + f->launch_slot, &k)
						    : PY_FOUND_NONE;
	else
		*out = f->proc, out->runtime += bias;
	if (found != PY_FOUND_PROGRAM && found != PY_FOUND_LIBRARY)
		return found;
	out->exec_id = exec_id;
	out->state = PY_WALK;
	out->unknown_samples = 0;
	out->pidns_dev = out->pidns_ino = 0;	/* user space's answer says, if any */
	return found;
}

/* A sample of a launcher's process not walked yet (p: PY_PENDING with
 * PY_F_LAUNCHER), whose file was looked at again (found, fresh): walked
 * from now on if its libpython was found now.  1 if walked. */
static __always_inline int py_proc_launched(__u32 tgid, struct py_proc *p, struct py_proc *fresh, int found)
{
	if (found == PY_FOUND_LIBRARY) {
		fresh->unknown_samples = p->unknown_samples;
		if (bpf_map_update_elem(&py_procs, &tgid, fresh, BPF_EXIST) == 0) {
			py_count(PY_FROM_LIBRARY);
			return 1;
		}
	}
	if (found == PY_FOUND_UNBOUND) {
		py_count(PY_LAUNCHER_UNBOUND);
		return 0;
	}
	__sync_fetch_and_add(&p->unknown_samples, 1);
	py_count(PY_UNKNOWN_SAMPLES);
	return 0;
}

/* A process seen for the first time (or this image of it: a shell's child
 * that exec'ed python3 before user space answered about the shell), or a
 * launcher's not walked yet: walked at once if its program is a Python file
 * known (or a launcher of one, whose call into it is bound), and asked about
 * either way the first time.  1 if walked. */
__noinline int py_proc_arrived(__u32 tgid, __u32 exec_id)
{
	__u32 zero = 0;
	struct py_proc *fresh = bpf_map_lookup_elem(&py_fresh, &zero);
	struct py_proc *p = bpf_map_lookup_elem(&py_procs, &tgid);
	int again = p && p->exec_id == exec_id;

	if (!fresh)
		return 0;
	__builtin_memset(fresh, 0, sizeof(*fresh));
	fresh->exec_id = exec_id;
	fresh->state = PY_PENDING;
	fresh->unknown_samples = 1;
	int found = py_proc_from_file(fresh);

	if (again)
		return p ? py_proc_launched(tgid, p, fresh, found) : 0;
	if (found == PY_FOUND_IN_EXEC) {
		py_count(PY_UNKNOWN_SAMPLES);	/* its next sample looks again */
		return 0;
	}
	if (found == PY_FOUND_UNBOUND || found == PY_FOUND_NOT_YET) {
		fresh->flags = PY_F_LAUNCHER;
		fresh->unknown_samples = found == PY_FOUND_NOT_YET;
	}
	if (bpf_map_update_elem(&py_procs, &tgid, fresh, p ? BPF_EXIST : BPF_NOEXIST) != 0)
		return 0;
	PROCNEWS_RECORD(struct py_request) *r = procnews_reserve(PROCNEWS_PYTHON, sizeof(*r));
	if (!r) {
		/* the ring full (user space stopped or starved): one walked from
		 * its file stays walked, looked at when user space merges its
		 * stacks; any other is asked about again at its next sample */
		if (found == PY_FOUND_PROGRAM || found == PY_FOUND_LIBRARY) {
			py_count(PY_REQUEST_LOST);
			return 1;
		}
		bpf_map_delete_elem(&py_procs, &tgid);
		return 0;
	}
	r->body.pid = tgid;
	r->body.exec_id = exec_id;
	r->body.stack_id = -1;
	r->body.flags = 0;
	/* forced: requests told without a wake-up may be waiting (py_tell) */
	bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
	py_count(PY_REQUESTS);
	if (found == PY_FOUND_UNBOUND) {
		py_count(PY_LAUNCHER_UNBOUND);
		return 0;
	}
	if (found != PY_FOUND_PROGRAM && found != PY_FOUND_LIBRARY) {
		py_count(PY_UNKNOWN_SAMPLES);
		return 0;
	}
	py_count(found == PY_FOUND_PROGRAM ? PY_FROM_FILE : PY_FROM_LIBRARY);
	return 1;
}

static __always_inline struct py_proc *py_proc_of(__u32 tgid, __u32 exec_id)
{
	struct py_proc *p = bpf_map_lookup_elem(&py_procs, &tgid);

	if (p && p->exec_id == exec_id) {
		if (p->state == PY_WALK)
			return p;
		if (p->state != PY_PENDING)
			return NULL;
		if (!(p->flags & PY_F_LAUNCHER)) {
			__sync_fetch_and_add(&p->unknown_samples, 1);
			py_count(PY_UNKNOWN_SAMPLES);
			return NULL;
		}
	}
	return py_proc_arrived(tgid, exec_id) ? bpf_map_lookup_elem(&py_procs, &tgid) : NULL;
}

/* Is tstate the thread state of the thread whose id (as the process's
 * namespace numbers it) or thread pointer (pthread_self) is given? */
static __always_inline int py_tstate_is(const struct py_proc *p, __u64 tstate, __u32 tid, __u64 fsbase)
{
	__u64 want = p->flags & PY_F_PTHREAD_ID ? fsbase : tid;
	return tstate && py_read_ptr(tstate + p->tstate_tid) == want;
}

static __always_inline __u32 py_thread_id(const struct py_proc *p, __u32 tid)
{
	struct bpf_pidns_info ns = { 0 };
	if (p->pidns_ino && bpf_get_ns_current_pid_tgid(p->pidns_dev, p->pidns_ino, &ns, sizeof(ns)) == 0)
		return ns.pid;
	return tid;
}

struct py_list_walk {
	const struct py_proc *p;
	__u64 tstate, fsbase, found;
	__u32 tid;
};

/* One thread state of the interpreter's list: the one sought stops the walk */
static long py_list_step(__u64 i, void *ctx)
{
	struct py_list_walk *w = ctx;

	if (!w->tstate)
		return 1;
	if (py_tstate_is(w->p, w->tstate, w->tid, w->fsbase)) {
		w->found = w->tstate;
		return 1;
	}
	w->tstate = py_read_ptr(w->tstate + w->p->tstate_next);
	return 0;
}

/* Threads of an interpreter looked through for the sampled one's state */
#define PY_MAX_THREADS 64

/* CPython: the thread state a CPU last found for a thread (its tid and
 * image, its thread pointer), checked again at each use (its
 * native_thread_id, one read): the key's read and the thread's
 * specific-data read skipped, two of the five dependent reads before a
 * sample's first frame (a thread's state lives as long as the thread; a
 * new thread at the same tid and thread pointer has its own, and fails the
 * check where the old one's memory was freed or reused). */
#define PY_TSTATE_MEMO 16
struct py_tstate_memo {
	__u64 who[PY_TSTATE_MEMO], fsbase[PY_TSTATE_MEMO], tstate[PY_TSTATE_MEMO];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_tstate_memo);
} py_tstate_memos SEC(".maps");

static __always_inline __u64 py_thread_state_found(const struct py_proc *p, __u32 tid, __u64 fsbase);

/* The sampled thread's state (tid: its id in the process's namespace),
 * from the CPU's memo or found (py_thread_state_found), or 0 */
static __always_inline __u64 py_thread_state(const struct py_proc *p, __u32 tid)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 fsbase = t->thread.fsbase;	/* a load: the task is a BTF pointer */
	__u32 zero = 0, slot = tid & (PY_TSTATE_MEMO - 1);
	struct py_tstate_memo *m = bpf_map_lookup_elem(&py_tstate_memos, &zero);
	__u64 who = py_who(tid, p->exec_id);

	if (!m)
		return 0;
	if (m->who[slot] == who && m->fsbase[slot] == fsbase && py_tstate_is(p, m->tstate[slot], tid, fsbase))
		return m->tstate[slot];
	__u64 tstate = py_thread_state_found(p, tid, fsbase);
	m->who[slot] = tstate ? who : 0;
	m->fsbase[slot] = fsbase;
	m->tstate[slot] = tstate;
	return tstate;
}

/* The sampled thread's state found: by its thread-specific key, as the
 * GIL's holder, or in the interpreter's list (each checked), or 0 */
static __always_inline __u64 py_thread_state_found(const struct py_proc *p, __u32 tid, __u64 fsbase)
{
	struct {
		__s32 initialized;
		__u32 key;
	} tss = { 0 };
	__u64 tstate = 0;

	/* keys under 32 live in the thread's struct pthread itself; Python
	 * creates its key at start-up, among the first */
	if ((p->flags & PY_F_TSS) && fsbase &&
	    bpf_probe_read_user(&tss, sizeof(tss), (void *)(p->runtime + p->tss_key)) == 0 && tss.initialized &&
	    tss.key < 32)
		tstate = py_read_ptr(fsbase + p->tsd_block + tss.key * 16 + 8);
	if (py_tstate_is(p, tstate, tid, fsbase))
		return tstate;
	if (p->flags & PY_F_GIL) {
		tstate = py_read_ptr(p->runtime + p->tstate_current);
		if (py_tstate_is(p, tstate, tid, fsbase)) {
			py_count(PY_BY_GIL_HOLDER);
			return tstate;
		}
	}
	if (p->flags & PY_F_THREAD_LIST) {
		__u64 interp = py_read_ptr(p->runtime + p->interp_head);
		struct py_list_walk w = { .p = p, .fsbase = fsbase, .tid = tid,
					  .tstate = interp ? py_read_ptr(interp + p->interp_threads) : 0 };
		bpf_loop(PY_MAX_THREADS, py_list_step, &w, 0);
		if (w.found) {
			py_count(PY_BY_THREAD_LIST);
			return w.found;
		}
	}
	py_count(PY_NO_THREAD_STATE);
	return 0;
}

struct py_walk {
	__u64 frame;			/* the next frame to read */
	__u16 code, previous, instr, entry, adaptive, flags;
	__u16 base;			/* where in words[] the first frame goes */
	__u16 max;			/* frames words[] has room for after base */
	__u16 n;			/* frames stored */
	__u16 span;			/* bytes of a frame that hold the four members */
	__u64 *words;
	__u8 *head;			/* the frame's first span bytes */
	__u64 who;			/* tgid | exec_id << 32 (PHP's interp_line) */
};

/* Ruby: the last iseqs' code (iseq_encoded) and length (iseq_size) the
 * CPU read, by the iseq's address and its process's tgid and image: two
 * dependent reads a frame fewer (of five: recursion nine deep walked in
 * 6.9-7.7 us a sample without).  A position is taken only within the
 * code's length, so an iseq freed and another made at its address (eval's
 * code), its code elsewhere, gets no line rather than a wrong one.  With
 * it the method entry last found at a method frame of the iseq (ment): a
 * frame whose ep[-2] is that entry needs no read to say so.  Two ways a
 * set, side by side (an iseq read goes in the first, the first's moves to
 * the second): with one way, two of a recursion's 13 iseqs shared a slot
 * in 2 runs of 6, and both missed at every sample (500 ns of a 2 us walk;
 * the odds of a shared slot for 13 iseqs in 64 are 70%). */
#define RUBY_ISEQ_SETS 64
struct ruby_iseq_seen {
	__u64 iseq, owner, encoded, ment;
	__u32 size;
};
struct ruby_iseq_memo {
	struct ruby_iseq_seen way[RUBY_ISEQ_SETS][2];
};

/* What ruby_iseq_code says of a frame's iseq */
struct ruby_code {
	__u64 encoded;			/* its code (iseq_encoded), 0: unknown */
	__u64 word;			/* in: a method frame's ep[-2], else 0; out: the frame's word */
	__u32 size;			/* its code's length (iseq_size) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ruby_iseq_memo);
} ruby_iseq_memos SEC(".maps");

/* The frame's instruction (PY_FRAME_LASTI) from its instr member (at
 * instr_at in head): a pointer into the code's units (3.11+), or 3.6-3.10's
 * int f_lasti as it is */
static __always_inline __u64 py_lasti(const struct py_walk *w, __u64 code, __u64 instr)
{
	if (w->flags & PY_F_FRAME_OBJECTS) {
		__s32 lasti = (__s32)instr;
		return lasti >= 0 && lasti < PY_LASTI_UNKNOWN ? (__u64)lasti : PY_LASTI_UNKNOWN;
	}
	__u64 first = code + w->adaptive;
	if (instr >= first && (instr - first) / 2 < PY_LASTI_UNKNOWN)
		return (instr - first) / 2;
	return PY_LASTI_UNKNOWN;
}

/* One frame: its word in words[base + n], then on to the one it was called from.
 * The frame's members are read at once, its first span bytes: one probe
 * read a frame instead of four (the chain workload's walk of 6 frames took
 * 2.3-3.1 us a sample with four, 1.2-1.6 us with one).  3.12+'s shim frame,
 * owned by the C stack, is not stored: it marks the frame before it as its
 * activation's entry. */
static long py_frame_step(__u64 i, void *ctx)
{
	struct py_walk *w = ctx;
	__u64 code = 0, prev = 0, instr = 0, frame = w->frame;
	__u8 entry = 0, *head = w->head;
	__u32 n = w->n, span = w->span;

	if (!frame || n >= w->max)
		return 1;
	if (span < 1 || span > PY_FRAME_HEAD || bpf_probe_read_user(head, span, (void *)frame)) {
		py_count(PY_READ_FAULT);
		w->frame = 0;
		return 1;
	}
	/* offsets under PY_FRAME_HEAD - 8 (py_walk_frames): the masks only
	 * show the verifier as much */
	/* 3.14 makes f_executable a tagged reference (_PyStackRef): its low
	 * bits are not the address's (an object is 16-byte aligned) */
	code = *(__u64 *)(head + (w->code & (PY_FRAME_HEAD - 9))) & ~7ull;
	prev = *(__u64 *)(head + (w->previous & (PY_FRAME_HEAD - 9)));
	instr = *(__u64 *)(head + (w->instr & (PY_FRAME_HEAD - 9)));
	entry = head[w->entry & (PY_FRAME_HEAD - 9)];
	w->frame = prev;
	if (w->flags & PY_F_OWNER) {
		if (entry == PY_OWNED_BY_CSTACK) {
			if (n > 0)
				w->words[(w->base + n - 1) & (MARPLE_STACK_DEPTH - 1)] |= 1ull << 63;
			return 0;
		}
		entry = 0;
	}
	if (w->flags & PY_F_FRAME_OBJECTS)
		entry = 1;
	if (!code) {
		py_count(PY_READ_FAULT);
		w->frame = 0;
		return 1;
	}
	w->words[(w->base + n) & (MARPLE_STACK_DEPTH - 1)] =
		(code & 0xffffffffffffull) | (py_lasti(w, code, instr) << 48) | ((__u64)(entry != 0) << 63);
	w->n = n + 1;
	return 0;
}

/* Perl's and PHP's lines: the line of a statement (a Perl COP, a PHP
 * opline) as a CPU last read it, by tgid, image and address, read again at
 * its every PY_MEMO_RECHECK-th use.  A statement's line never changes
 * while its code lives: a Perl chain three subs deep read three lines a
 * sample, ~250 ns of its ~1.3 us walk, a PHP chain one a frame.  One freed
 * with its code (a string eval's) and another made at its address keeps
 * the old line on this CPU until that recheck: 15 of its uses at most. */
#define INTERP_LINE_MEMO 256
struct interp_line_seen {
	__u64 who, at;
	__u32 line, uses;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct interp_line_seen[INTERP_LINE_MEMO]);
} interp_lines SEC(".maps");

/* The 32-bit line at offset line_at in the statement at at, of process
 * and image who, from the CPU's memo or read; PY_LASTI_UNKNOWN when it
 * cannot be read.  Global: verified once, not at each call. */
__noinline int interp_line(__u64 who, __u64 at, __u32 line_at)
{
	__u32 zero = 0, line = PY_LASTI_UNKNOWN;
	struct interp_line_seen *m = bpf_map_lookup_elem(&interp_lines, &zero);

	if (!at || !m)
		return PY_LASTI_UNKNOWN;
	struct interp_line_seen *e = &m[(at * 0x9e3779b97f4a7c15ull) >> 56 & (INTERP_LINE_MEMO - 1)];
	if (e->at == at && e->who == who && ++e->uses % PY_MEMO_RECHECK)
		return e->line;
	if (bpf_probe_read_user(&line, 4, (void *)(at + line_at)) || line >= PY_LASTI_UNKNOWN)
		return PY_LASTI_UNKNOWN;
	*e = (struct interp_line_seen){ .who = who, .at = at, .line = line, .uses = 1 };
	return line;
}

/* One PHP frame (zend_execute_data): its word in words[base + n], then on
 * to prev_execute_data.  Its head in one read, its line from the memo or
 * in a second (the opline's), the function's type in a third only where
 * ZEND_CALL_TOP is set (once an execute_ex activation). */
static long php_frame_step(__u64 i, void *ctx)
{
	struct py_walk *w = ctx;
	__u64 func, prev, opline, frame = w->frame;
	__u32 n = w->n, line = PY_LASTI_UNKNOWN;
	__u8 *head = w->head, entry, type = 0;

	if (!frame || n >= w->max)
		return 1;
	if (w->span < 1 || w->span > PY_FRAME_HEAD || bpf_probe_read_user(head, w->span, (void *)frame)) {
		py_count(PY_READ_FAULT);
		w->frame = 0;
		return 1;
	}
	func = *(__u64 *)(head + (w->code & (PY_FRAME_HEAD - 9)));
	prev = *(__u64 *)(head + (w->previous & (PY_FRAME_HEAD - 9)));
	opline = *(__u64 *)(head + (w->instr & (PY_FRAME_HEAD - 9)));
	entry = head[(w->entry >> 3) & (PY_FRAME_HEAD - 9)] & (1 << (w->entry & 7));
	w->frame = prev;
	if (!func) {
		py_count(PY_READ_FAULT);
		w->frame = 0;
		return 1;
	}
	if (entry && (bpf_probe_read_user(&type, 1, (void *)func) || type == PHP_INTERNAL_FUNCTION))
		entry = 0;
	line = interp_line(w->who, opline, w->adaptive);
	line = line < PY_LASTI_UNKNOWN ? line : PY_LASTI_UNKNOWN;
	w->words[(w->base + n) & (MARPLE_STACK_DEPTH - 1)] =
		(func & 0xffffffffffffull) | ((__u64)line << 48) | ((__u64)(entry != 0) << 63);
	w->n = n + 1;
	return 0;
}

/* A method's frame's word: its method entry (ep[-2], which names its
 * class), or the one behind the imemo that holds the method's $~ in its
 * place (a new one each call: stored, it would make each call's stack
 * new); else its iseq.  One read of 16 bytes. */
static __always_inline __u64 ruby_method_entry(__u64 me_cref, __u64 iseq)
{
	__u64 head[2];
	if (!me_cref || bpf_probe_read_user(head, sizeof(head), (void *)me_cref))
		return iseq;
	__u64 kind = (head[0] >> RUBY_IMEMO_SHIFT) & 0xf;
	if ((head[0] & RUBY_FLAGS_TYPE) != RUBY_T_IMEMO)
		return iseq;
	return kind == RUBY_IMEMO_MENT ? me_cref : kind == RUBY_IMEMO_SVAR && head[1] ? head[1] : iseq;
}

/* iseq's code and its length (into c), from the CPU's memo or read (its
 * body at offsets' low byte, then the body's first 16 bytes: the code at
 * its second byte, the length at its third) and kept there; c->encoded 0
 * when it cannot be read.  A method frame (c->word its ep[-2]): its word
 * (ruby_method_entry), the memo's entry without a read.  owner: the
 * process and image.  Global: verified once, not in each state of the
 * frame step (inlined, the sampling program verified in 698 instructions
 * more). */
__noinline int ruby_iseq_code(__u64 iseq, __u64 owner, __u32 offsets, struct ruby_code *c)
{
	__u32 zero = 0, set = (__u32)(iseq >> 3) & (RUBY_ISEQ_SETS - 1);
	struct ruby_iseq_memo *m = bpf_map_lookup_elem(&ruby_iseq_memos, &zero);
	__u64 b[2] = { 0 }, me;

	if (!c || !m)
		return 0;
	struct ruby_iseq_seen *w = m->way[set];
	me = c->word;
	c->word = iseq;
	if (w[1].iseq == iseq && w[1].owner == owner)
		w++;
	if (w->iseq == iseq && w->owner == owner) {
		c->size = w->size;
		c->encoded = w->encoded;
		if (me && me == w->ment)
			c->word = me;
		else if (me)
			w->ment = (c->word = ruby_method_entry(me, iseq)) == me ? me : 0;
		return 0;
	}
	__u64 body = py_read_ptr(iseq + (offsets & 0xff));
	c->encoded = 0;
	if (body && bpf_probe_read_user(b, sizeof(b), (void *)body) == 0) {
		c->encoded = b[(offsets >> 11) & 1];
		c->size = ((__u32 *)b)[(offsets >> 18) & 3];
	}
	if (me)
		c->word = ruby_method_entry(me, iseq);
	if (c->encoded) {
		/* the set's second way keeps the one met before */
		w = m->way[set];
		w[1] = w[0];
		w[0].iseq = iseq;	/* member by member, as ruby_step's memo */
		w[0].owner = owner;
		w[0].encoded = c->encoded;
		w[0].size = c->size;
		w[0].ment = c->word == me ? me : 0;
	}
	return 0;
}

/* Ruby's walk (PY_F_RUBY): its state, in the CPU's ruby_bufs (ruby_step reads it there) */
struct ruby_walk {
	__u64 frame;			/* the next control frame to read */
	__u64 stack, end;		/* the VM stack: its values from stack, its frames up to end */
	__u64 owner;			/* the process and image (ruby_iseq_code) */
	__u64 cf_lo, cf_hi;		/* control frames read into ruby_bufs.cfs */
	__u64 env_lo, env_hi;		/* VM stack words read into ruby_bufs.envs */
	/* the last iseq frame's: its iseq and ep[-2] (0 but in a method's),
	 * what ruby_iseq_code said of them (recursion: the next the same) */
	__u64 last_iseq, last_me, last_encoded, last_word;
	__u32 last_size;
	__u16 pc, iseq, ep, span;	/* rb_control_frame_t's pc, iseq, ep; its size */
	__u16 body, encoded, iseq_size;	/* rb_iseq_t's body, the body's iseq_encoded, iseq_size */
	__u16 n, max, base;		/* frames stored, room for, where the first goes */
};

/* Control frames are read RUBY_CF_BYTES at a time (sixteen of 3.1's 64
 * bytes), from the one wanted on towards the VM stack's end (its
 * callers'); the envs' words likewise, RUBY_ENV_BYTES down from the one
 * wanted (a caller's env lies below its callee's).  A read costs as much
 * as the rest of a frame's step: two a frame before, for recursion nine
 * deep 26 reads, 3 now (eight frames a read: 4, and 4% more time in
 * the walk).  Each buffer has room past its size for a member read at a
 * masked offset. */
#define RUBY_CF_BYTES 1024
#define RUBY_ENV_BYTES 512
struct ruby_bufs {
	__u8 cfs[RUBY_CF_BYTES + PY_FRAME_HEAD];
	__u8 envs[RUBY_ENV_BYTES + 24];
	/* the walk's state, a frame's env words and its iseq's code: here,
	 * not on the BPF stack, where they put the uprobe programs' chain of
	 * calls through ruby_step over 512 bytes (py_fresh says why that
	 * matters) */
	struct ruby_walk walk;
	__u64 env[3];			/* ruby_frame_word's */
	struct ruby_code code;		/* ruby_frame_word's, filled by ruby_iseq_code */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ruby_bufs);
} ruby_bufs SEC(".maps");

/* The control frame at w->frame, in the frames read (read now, with
 * those after it, if not there yet), or NULL */
static __always_inline __u8 *ruby_cf(struct ruby_walk *w, struct ruby_bufs *b)
{
	__u64 cfp = w->frame;

	if (cfp < w->cf_lo || cfp + w->span > w->cf_hi) {
		__u64 len = w->end - cfp;
		len = len < RUBY_CF_BYTES ? len : RUBY_CF_BYTES;
		asm volatile("" : "+r"(len));	/* checked as passed */
		if (len < 1 || len > RUBY_CF_BYTES || bpf_probe_read_user(b->cfs, len, (void *)cfp))
			return NULL;
		w->cf_lo = cfp;
		w->cf_hi = cfp + len;
	}
	return b->cfs + ((cfp - w->cf_lo) & (RUBY_CF_BYTES - 1));
}

/* ep[-2..0] (the method entry, the specval, the flags) into env: from the
 * VM stack's words read (read now, with those below, if not there yet),
 * or on their own for an env not in the VM stack (moved to the heap when
 * a block captured it).  0 when they cannot be read. */
static __always_inline int ruby_env(struct ruby_walk *w, struct ruby_bufs *b, __u64 ep, __u64 *env)
{
	__u64 hi = ep + 8;

	if (ep < w->stack + 16 || hi > w->end)
		return ep && bpf_probe_read_user(env, 24, (void *)(ep - 16)) == 0;
	if (ep - 16 < w->env_lo || hi > w->env_hi) {
		__u64 lo = hi - w->stack > RUBY_ENV_BYTES ? hi - RUBY_ENV_BYTES : w->stack;
		__u64 len = hi - lo;
		asm volatile("" : "+r"(len));	/* checked as passed */
		if (len < 24 || len > RUBY_ENV_BYTES || bpf_probe_read_user(b->envs, len, (void *)lo))
			return 0;
		w->env_lo = lo;
		w->env_hi = hi;
	}
	__builtin_memcpy(env, b->envs + ((ep - 16 - w->env_lo) & (RUBY_ENV_BYTES - 1)), 24);
	return 1;
}

/* What a Ruby control frame gives the stack being built (ruby_frame_word) */
enum ruby_frame_kind {
	RUBY_FRAME_NONE,		/* nothing: not a frame of its own */
	RUBY_FRAME_WORD,		/* its word */
	RUBY_FRAME_FINISHES,		/* nothing, but the frame stored before began
					 * a vm_exec activation */
};

/* Ruby: each control frame's word as a CPU last made it, by the process
 * and image, the frame's place (cfp, and its slot: its distance in frames
 * from the VM stack's end, the same for a caller from sample to sample)
 * and what it holds (pc, iseq, ep), made again at every
 * PY_MEMO_RECHECK-th use.  A caller's frame does not change while its
 * callee runs: recursion nine deep made 13 words a sample, each from its
 * env's flags, its method entry and its iseq's code (~70-100 ns a frame).
 * A frame at the same place with the same pc, iseq and ep is the same
 * call of the same code: its word is the same but for a method entry that
 * is not (an alias's), until the recheck. */
#define RUBY_FRAME_MEMO 64
struct ruby_frame_seen {
	__u64 owner, cfp, pc, iseq, ep, word;
	__u32 kind, uses;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ruby_frame_seen[RUBY_FRAME_MEMO]);
} ruby_frames_seen SEC(".maps");

/* The frame's word (*word) from its pc, iseq and ep: the env's flags and
 * method entry (ep[-2..0]) from the words read (ruby_env); an iseq's frame
 * its body's iseq_encoded from the memo or in two reads more (its pc's
 * position), a method's stored by its method entry.  A frame that is
 * neither (a dummy's, a C block's) is not stored: if it began a vm_exec
 * activation, the frame before it did.  enum ruby_frame_kind, or -1: its
 * env could not be read (counted). */
static __always_inline int ruby_frame_word(struct ruby_walk *w, struct ruby_bufs *b, __u64 pc, __u64 iseq, __u64 ep,
					   __u64 *word)
{
	__u64 *env = b->env;
	__u32 pos = PY_LASTI_UNKNOWN;

	env[0] = env[1] = env[2] = 0;
	if (!ruby_env(w, b, ep, env)) {
		py_count(PY_READ_FAULT);
		return -1;
	}
	__u64 finish = (env[2] & RUBY_FRAME_FLAG_FINISH) != 0;
	if ((env[2] & RUBY_FRAME_MAGIC_MASK) == RUBY_FRAME_MAGIC_CFUNC) {
		*word = env[0];
	} else if (iseq && !(env[2] & RUBY_FRAME_FLAG_CFRAME)) {
		__u64 me = (env[2] & RUBY_FRAME_MAGIC_MASK) == RUBY_FRAME_MAGIC_METHOD ? env[0] : 0;
		struct ruby_code *c = &b->code;
		c->encoded = 0;
		c->size = 0;
		c->word = me;
		if (iseq == w->last_iseq && me == w->last_me) {
			c->encoded = w->last_encoded;
			c->size = w->last_size;
			c->word = w->last_word;
		} else {
			ruby_iseq_code(iseq, w->owner, w->body | w->encoded << 8 | (__u32)w->iseq_size << 16, c);
			w->last_iseq = iseq;
			w->last_me = me;
			w->last_encoded = c->encoded;
			w->last_size = c->size;
			w->last_word = c->word;
		}
		/* a pc at the code's end: its last instruction running */
		if (c->encoded && pc >= c->encoded && (pc - c->encoded) / 8 <= c->size &&
		    (pc - c->encoded) / 8 < PY_LASTI_UNKNOWN)
			pos = (__u32)((pc - c->encoded) / 8);
		*word = c->word;
	} else {
		return finish ? RUBY_FRAME_FINISHES : RUBY_FRAME_NONE;
	}
	if (!*word)
		return RUBY_FRAME_NONE;
	*word = (*word & 0xffffffffffffull) | ((__u64)pos << 48) | (finish << 63);
	return RUBY_FRAME_WORD;
}
/* One Ruby control frame (rb_control_frame_t, at the walk's frame): its word in
/* One Ruby control frame (rb_control_frame_t, at w->frame): its word in
 * the stack being built (stack_scratch), from the CPU's memo or made
 * (ruby_frame_word), then on to its caller's, the next up to the stack's
 * end.  The frame comes from the frames read (ruby_cf).  A global
 * function, checked once by the verifier. */
__noinline int ruby_step(void)
{
	__u32 zero = 0;
	__u64 *words = bpf_map_lookup_elem(&stack_scratch, &zero);
	struct ruby_bufs *b = bpf_map_lookup_elem(&ruby_bufs, &zero);
	struct ruby_frame_seen *m = bpf_map_lookup_elem(&ruby_frames_seen, &zero);
	__u64 word = 0;
	int kind;

	if (!words || !b || !m)
		return 1;
	struct ruby_walk *w = &b->walk;
	if (!w->frame || w->n >= w->max || w->frame + w->span > w->end)
		return 1;
	__u32 n = w->n;
	__u64 cfp = w->frame;
	__u8 *cf = ruby_cf(w, b);
	if (!cf) {
		py_count(PY_READ_FAULT);
		return 1;
	}
	__u64 pc = *(__u64 *)(cf + (w->pc & (PY_FRAME_HEAD - 9)));
	__u64 iseq = *(__u64 *)(cf + (w->iseq & (PY_FRAME_HEAD - 9)));
	__u64 ep = *(__u64 *)(cf + (w->ep & (PY_FRAME_HEAD - 9)));
	w->frame += w->span;
	/* the VM's base frame (Init_VM's dummy "<main>"): no activation's,
	 * and its env (on the heap) not read */
	if (w->frame >= w->end)
		return 1;
	struct ruby_frame_seen *e = &m[((w->end - cfp) / w->span) & (RUBY_FRAME_MEMO - 1)];
	if (e->cfp == cfp && e->pc == pc && e->iseq == iseq && e->ep == ep && e->owner == w->owner &&
	    ++e->uses % PY_MEMO_RECHECK) {
		kind = e->kind;
		word = e->word;
	} else {
		kind = ruby_frame_word(w, b, pc, iseq, ep, &word);
		if (kind < 0) {
			w->frame = 0;
			return 1;
		}
		/* member by member: a whole struct is built on the BPF stack first */
		e->owner = w->owner;
		e->cfp = cfp;
		e->pc = pc;
		e->iseq = iseq;
		e->ep = ep;
		e->word = word;
		e->kind = kind;
		e->uses = 1;
	}
	if (kind == RUBY_FRAME_FINISHES && n > 0)
		words[(w->base + n - 1) & (MARPLE_STACK_DEPTH - 1)] |= 1ull << 63;
	if (kind != RUBY_FRAME_WORD)
		return 0;
	words[(w->base + n) & (MARPLE_STACK_DEPTH - 1)] = word;
	w->n = n + 1;
	return 0;
}

static long ruby_walk_step(__u64 i, void *ctx)
{
	return ruby_step() ? 1 : 0;
}

/* Where the sampled thread's ec pointer is (PY_F_RUBY): its own
 * ruby_current_ec, found as glibc finds a module's TLS (struct py_proc's
 * ruby_tls_*) from its thread pointer (fsbase); a libruby without it: the
 * VM's main thread's ec member, in the main thread only.  0: not found. */
static __always_inline __u64 ruby_ec_at(const struct py_proc *p, __u32 tid, __u64 fsbase)
{
	if (p->ruby_tls_slot) {
		__u64 modid = py_read_ptr(p->runtime + (__s64)p->ruby_tls_slot);
		__u64 dtv = fsbase && modid && modid < (1 << 16) ? py_read_ptr(fsbase + 8) : 0;
		__u64 block = dtv ? py_read_ptr(dtv + modid * 16) : 0;
		return block && block != ~0ull ? block + p->ruby_tls_offset : 0;
	}
	if (tid != bpf_get_current_pid_tgid() >> 32)
		return 0;
	__u64 vm = py_read_ptr(p->runtime);
	__u64 th = vm ? py_read_ptr(vm + p->tstate_frame) : 0;
	return th ? th + p->tstate_tid : 0;
}

/* Ruby: where a thread's ec pointer is (ruby_ec_at) and the thread
 * (rb_thread_t) its ec was checked to be of, as last found, by the thread
 * (its tid and image, its thread pointer): of the six dependent reads
 * before a sample's frames, four fewer. */
#define RUBY_EC_MEMO 16
struct ruby_ec_memo {
	__u64 who[RUBY_EC_MEMO], fsbase[RUBY_EC_MEMO], at[RUBY_EC_MEMO], th[RUBY_EC_MEMO];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ruby_ec_memo);
} ruby_ec_memos SEC(".maps");

/* Ruby's frames (PY_F_RUBY): the sampled thread's ec's, from its cfp up
 * to its VM stack's end (its start and end into w).  The ec's vm_stack, vm_stack_size,
 * cfp and thread_ptr in one read (into head); a thread whose ec is not
 * found, or whose ec's thread is not it, is counted and not walked. */
static __always_inline __u64 ruby_first_frame(const struct py_proc *p, __u32 tid, __u8 *head, struct ruby_walk *w)
{
	__u32 zero = 0, slot = tid & (RUBY_EC_MEMO - 1);
	struct ruby_ec_memo *m = bpf_map_lookup_elem(&ruby_ec_memos, &zero);
	__u64 fsbase = 0, who = py_who(tid, p->exec_id);
	__u32 span = p->ruby_ec_thread + 8;
	span = span > p->cframe_current + 8u ? span : p->cframe_current + 8u;

	if (!m)
		return 0;
	if (p->ruby_tls_slot) {
		struct task_struct *t = bpf_get_current_task_btf();
		fsbase = t->thread.fsbase;	/* a load, not a helper's read */
	}
	int known = m->who[slot] == who && m->fsbase[slot] == fsbase;
	__u64 at = known ? m->at[slot] : ruby_ec_at(p, tid, fsbase);
	__u64 ec = at ? py_read_ptr(at) : 0;
	if (!ec || span > PY_FRAME_HEAD - 8 || bpf_probe_read_user(head, span, (void *)ec)) {
		py_count(PY_NO_THREAD_STATE);
		return 0;
	}
	__u64 stack = *(__u64 *)(head + (p->interp_head & (PY_FRAME_HEAD - 9)));
	__u64 size = *(__u64 *)(head + (p->interp_threads & (PY_FRAME_HEAD - 9)));
	__u64 cfp = *(__u64 *)(head + (p->cframe_current & (PY_FRAME_HEAD - 9)));
	__u64 th = *(__u64 *)(head + (p->ruby_ec_thread & (PY_FRAME_HEAD - 9)));
	if (fsbase && (!th || ((!known || th != m->th[slot]) && py_read_ptr(th + p->ruby_thread_id) != fsbase))) {
		py_count(PY_NO_THREAD_STATE);
		return 0;
	}
	m->who[slot] = who;
	m->fsbase[slot] = fsbase;
	m->at[slot] = at;
	m->th[slot] = th;
	if (!stack || size > (1ull << 28))
		return 0;
	w->stack = stack;
	w->end = stack + size * 8;
	return cfp;
}

/* Ruby's frames (PY_F_RUBY) of the sampled thread, leaf first, into the
 * stack being built (stack_scratch, py_append's ips) from base on (at
 * most max): how many */
static __noinline int ruby_walk_frames(const struct py_proc *p, __u32 tid, __u8 *head, int base, int max)
{
	__u32 zero = 0;
	struct ruby_bufs *b = bpf_map_lookup_elem(&ruby_bufs, &zero);

	if (!b)
		return 0;
	struct ruby_walk *w = &b->walk;
	*w = (struct ruby_walk){ .pc = p->frame_instr, .iseq = p->frame_code, .ep = p->frame_entry,
				 .span = p->frame_previous, .body = p->code_adaptive, .encoded = p->tstate_next,
				 .iseq_size = p->ruby_iseq_size, .base = (__u16)base, .max = (__u16)max,
				 .owner = py_who(bpf_get_current_pid_tgid() >> 32, p->exec_id) };
	/* a control frame is read whole, its size: one whose members lie
	 * further out than a head holds, no walk */
	if (w->span > PY_FRAME_HEAD - 8 + 1 || w->pc > w->span - 8 || w->iseq > w->span - 8 || w->ep > w->span - 8) {
		py_count(PY_READ_FAULT);
		return 0;
	}
	w->frame = ruby_first_frame(p, tid, head, w);
	if (!w->frame)
		return 0;
	bpf_loop(PY_MAX_FRAMES, ruby_walk_step, NULL, 0);
	if (w->n == max && w->frame)
		py_count(PY_CUT_DEPTH);
	return w->n;
}

/* The word at runtime + tstate_frame, in the main thread only: PHP's
 * current_execute_data (PY_F_PHP), Perl's PL_curinterp (PY_F_PERL) */
static __always_inline __u64 main_thread_word(const struct py_proc *p, __u32 tid)
{
	if (tid != bpf_get_current_pid_tgid() >> 32) {
		py_count(PY_NO_THREAD_STATE);
		return 0;
	}
	return py_read_ptr(p->runtime + p->tstate_frame);
}

/* Perl's walk (PY_F_PERL): where it is in the context stacks, what it
 * has stored (struct perl_offsets in python.h says what a frame is).  In
 * a per-CPU map, not on the stack: the verifier follows bpf_loop's
 * callback until what it knows of the walk's state converges, and a
 * state on the stack, known exactly, took the sampling program to 208,677
 * instructions verified; in a map value, which it does not know, the walk
 * adds 1,064 to 21,298) */
struct perl_walk {
	struct perl_offsets o;
	__u64 si, si_prev, cxstack, cop, main_cv;
	__u64 who;			/* tgid | exec_id << 32 (interp_line) */
	__s32 ix;			/* the next context of si to read, down to 0 */
	__s32 cx_lo, cx_hi;		/* si's contexts cx_lo..cx_hi are in perl_cxs */
	__s32 cx_batch;			/* contexts read at once */
	__u16 n, max, base;
	__u16 si_frames;		/* frames stored from si's contexts */
	__u32 block_line;		/* a sort block's line + 1, for the next frame */
	__u8 done;
	__u8 op_running;		/* PL_op set: the innermost runops is running */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct perl_walk);
} perl_walks SEC(".maps");

/* Contexts are read PERL_CX_BYTES (python.h) at a time, down from the
 * one wanted (nine of 5.36's 104 bytes: crunch's chain and its loops in
 * one read, not six; a read, ~75 ns even of a line in cache, costs more
 * than the rest of a context's step); the
 * interpreter's PL_op, PL_curcop and PL_curstackinfo likewise in one.  The
 * scratch has PY_FRAME_HEAD bytes more, so a member read at a masked
 * offset from any context's start stays inside. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8[PERL_CX_BYTES + PY_FRAME_HEAD]);
} perl_cxs SEC(".maps");

/* Perl: a process's interpreter (PL_curinterp) and its main CV
 * (PL_main_cv), as a CPU last read them, by tgid and image (who), read
 * again at the CPU's every PY_MEMO_RECHECK-th walk of the process:
 * two reads a sample fewer, of nine for a chain three subs deep.  Neither
 * moves once the program is parsed (perl_alloc, perl_parse); one not set
 * yet is not kept.  Kept with where PL_curinterp is (runtime): a pid used
 * again by a new process of the same image count has its libperl
 * elsewhere, and does not take the old one's. */
#define PERL_INTERP_MEMO 64
struct perl_interp_seen {
	__u64 who, runtime, interp, main_cv;
	__u32 walks;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct perl_interp_seen[PERL_INTERP_MEMO]);
} perl_interps SEC(".maps");

/* The main thread's interpreter into *interp and its main CV into
 * *main_cv, from the CPU's memo or read: 1, or 0 (another thread's
 * sample, counted; not set yet) */
static __always_inline int perl_interp(const struct py_proc *p, __u32 tid, __u64 *interp, __u64 *main_cv)
{
	__u32 zero = 0;
	struct perl_interp_seen *m = bpf_map_lookup_elem(&perl_interps, &zero);
	__u64 who = py_who(tid, p->exec_id);

	if (!m)
		return 0;
	struct perl_interp_seen *e = &m[tid & (PERL_INTERP_MEMO - 1)];
	if (e->who == who && e->runtime == p->runtime && ++e->walks % PY_MEMO_RECHECK) {
		*interp = e->interp;
		*main_cv = e->main_cv;
		return 1;
	}
	*interp = main_thread_word(p, tid);
	*main_cv = *interp ? py_read_ptr(*interp + p->perl.interp_main_cv) : 0;
	if (!*interp || !*main_cv)
		return 0;
	*e = (struct perl_interp_seen){ .who = who, .runtime = p->runtime, .interp = *interp, .main_cv = *main_cv, .walks = 1 };
	return 1;
}

/* A step's maps (perl_step): the walk's state, where the words go, the
 * scratch a stack info is read into, the contexts read */
struct perl_ctx {
	struct perl_walk *w;
	__u64 *words;
	__u8 *head;
	__u8 *cxs;
};

static __always_inline __u32 perl_line(const struct perl_walk *w, __u64 cop)
{
	__u32 line = interp_line(w->who, cop, w->o.cop_line);
	return line < PY_LASTI_UNKNOWN ? line : PY_LASTI_UNKNOWN;
}

/* Stack info si's context stack and its last index into w: 1, or 0 when
 * it cannot be read (counted) */
static __always_inline int perl_read_si(struct perl_walk *w, __u8 *head, __u64 si)
{
	__u32 span = w->o.si_cxix + 4;
	span = span > w->o.si_cxstack + 8u ? span : w->o.si_cxstack + 8u;
	span = span > w->o.si_prev + 8u ? span : w->o.si_prev + 8u;
	if (span > PY_FRAME_HEAD - 8 || bpf_probe_read_user(head, span, (void *)si)) {
		py_count(PY_READ_FAULT);
		return 0;
	}
	w->si = si;
	w->si_frames = 0;
	w->si_prev = *(__u64 *)(head + (w->o.si_prev & (PY_FRAME_HEAD - 9)));
	w->cxstack = *(__u64 *)(head + (w->o.si_cxstack & (PY_FRAME_HEAD - 9)));
	w->ix = *(__s32 *)(head + (w->o.si_cxix & (PY_FRAME_HEAD - 9)));
	w->cx_lo = 0;
	w->cx_hi = -1;
	return 1;
}

/* Context ix of the stack info, in the contexts read (read now, with
 * those under it, if not there yet), or NULL (counted) */
static __always_inline __u8 *perl_cx(const struct perl_ctx *c)
{
	struct perl_walk *w = c->w;
	__u32 size = w->o.cx_size;

	if (w->ix < w->cx_lo || w->ix > w->cx_hi) {
		__s32 lo = w->ix + 1 - w->cx_batch;
		lo = lo > 0 ? lo : 0;
		__u64 len = (__u64)(w->ix + 1 - lo) * size;
		asm volatile("" : "+r"(len));	/* checked as passed */
		if (len > PERL_CX_BYTES || bpf_probe_read_user(c->cxs, len, (void *)(w->cxstack + (__u64)lo * size))) {
			py_count(PY_READ_FAULT);
			return NULL;
		}
		w->cx_lo = lo;
		w->cx_hi = w->ix;
	}
	return c->cxs + ((__u32)(w->ix - w->cx_lo) * size & (PERL_CX_BYTES - 1));
}

/* The next context's frame: its CV (0: none, go on), whether it is an
 * entry and the COP its caller is at; a sort block's context ends an
 * activation; loops and blocks are passed.  -1: a read failed. */
static __always_inline int perl_context(const struct perl_ctx *c, __u64 *cv, int *entry, __u64 *oldcop)
{
	struct perl_walk *w = c->w;
	__u8 *head = perl_cx(c);

	if (!head)
		return -1;
	w->ix--;
	__u8 type = head[0], t = type & PERL_CXTYPEMASK;
	*oldcop = *(__u64 *)(head + (w->o.cx_oldcop & (PY_FRAME_HEAD - 9)));
	*entry = *(__u64 *)(head + (w->o.cx_retop & (PY_FRAME_HEAD - 9))) == 0;
	/* a sort SUB's (or an XS MULTICALL's) context stays pushed between
	 * its calls: innermost with PL_op unset, the C between them runs */
	if ((t == PERL_CXT_SUB || t == PERL_CXT_FORMAT) &&
	    !((type & PERL_CXP_MULTICALL) && w->n == 0 && !w->op_running))
		*cv = *(__u64 *)(head + (w->o.cx_sub_cv & (PY_FRAME_HEAD - 9)));
	else if (t == PERL_CXT_EVAL && !(type & PERL_CXP_TRY))
		*cv = *(__u64 *)(head + (w->o.cx_eval_cv & (PY_FRAME_HEAD - 9)));
	if (t != PERL_CXT_NULL)
		return 0;
	/* its activation's outermost frame is the last stored (a sub the
	 * block called as its last op is one already: returning to no op,
	 * its retop is NULL); none: the block runs itself, or sort's C does */
	if (w->si_frames > 0 && w->n > 0)
		c->words[(w->base + w->n - 1) & (MARPLE_STACK_DEPTH - 1)] |= 1ull << 63;
	else if (w->n > 0 || w->op_running)
		w->block_line = perl_line(w, w->cop) + 1;
	w->cop = *oldcop;
	return 0;
}

/* One step: the next context (or the stack info before, or past the
 * first the main program): a frame is stored, a sort block's waiting one
 * first (the block is the code of the frame it is in, and its own
 * activation's; that context is read again next) */
static __always_inline int perl_frame_step(const struct perl_ctx *c)
{
	struct perl_walk *w = c->w;
	__u64 cv = 0, oldcop = 0;
	int entry = 1;

	if (w->n >= w->max)
		return 1;
	if (w->ix < 0) {
		if (w->si_prev)
			return perl_read_si(w, c->head, w->si_prev) ? 0 : 1;
		cv = w->main_cv;
		w->done = 1;
	} else if (perl_context(c, &cv, &entry, &oldcop) < 0) {
		return 1;
	}
	if (!cv)		/* not a frame, or pp_entersub is pushing it */
		return 0;
	__u32 line = w->block_line ? w->block_line - 1 : perl_line(w, w->cop);
	/* the leaf sub called, its first statement not run yet: the COP is
	 * its caller's, no line of its own */
	if (!w->block_line && w->n == 0 && w->cop == oldcop)
		line = PY_LASTI_UNKNOWN;
	c->words[(w->base + w->n) & (MARPLE_STACK_DEPTH - 1)] =
		(cv & 0xffffffffffffull) | ((__u64)line << 48) | ((__u64)(entry || w->block_line) << 63);
	w->n++;
	w->si_frames++;
	if (w->block_line) {
		w->block_line = 0;
		w->ix += !w->done;
		w->done = 0;
		return 0;
	}
	w->cop = oldcop;
	return w->done ? 1 : 0;
}

/* perl_frame_step on the walk in its maps (the words: the stack being
 * built, stack_scratch): a global function, which the verifier checks
 * once, not once for each state it follows bpf_loop's callback in */
__noinline int perl_step(void)
{
	__u32 zero = 0;
	struct perl_ctx c = { .w = bpf_map_lookup_elem(&perl_walks, &zero),
			      .words = bpf_map_lookup_elem(&stack_scratch, &zero),
			      .head = bpf_map_lookup_elem(&py_head, &zero),
			      .cxs = bpf_map_lookup_elem(&perl_cxs, &zero) };

	if (!c.w || !c.words || !c.head || !c.cxs)
		return 1;
	return perl_frame_step(&c);
}

static long perl_walk_step(__u64 i, void *ctx)
{
	return perl_step() ? 1 : 0;
}

/* Perl's frames (PY_F_PERL), of the main interpreter in the main thread,
 * leaf first, into the stack being built (stack_scratch, py_append's ips)
 * from base on (at most max): how many */
static __noinline int perl_walk_frames(const struct py_proc *p, __u32 tid, __u8 *head, int base, int max)
{
	__u32 zero = 0;
	struct perl_walk *w = bpf_map_lookup_elem(&perl_walks, &zero);
	__u8 *cxs = bpf_map_lookup_elem(&perl_cxs, &zero);
	__u64 interp, main_cv;

	if (!w || !cxs || !perl_interp(p, tid, &interp, &main_cv))
		return 0;
	*w = (struct perl_walk){ .o = p->perl, .base = (__u16)base, .max = (__u16)max, .ix = -1,
				 .who = py_who(tid, p->exec_id) };
	/* PL_op, PL_curcop, PL_curstackinfo in that order within
	 * PERL_CX_BYTES, a context 8 to PERL_CX_MAX bytes: a row of
	 * perllayout.c that does not fit is never used */
	__u32 op = w->o.interp_op, len = w->o.interp_curstackinfo + 8 - op;
	w->cx_batch = PERL_CX_BYTES / w->o.cx_size;
	if (len > PERL_CX_BYTES || bpf_probe_read_user(cxs, len, (void *)(interp + op))) {
		py_count(PY_READ_FAULT);
		return 0;
	}
	w->op_running = *(__u64 *)cxs != 0;
	w->cop = *(__u64 *)(cxs + ((w->o.interp_curcop - op) & (PERL_CX_BYTES - 1)));
	__u64 si = *(__u64 *)(cxs + ((w->o.interp_curstackinfo - op) & (PERL_CX_BYTES - 1)));
	w->main_cv = main_cv;
	if (!si || !perl_read_si(w, head, si))
		return 0;
	/* contexts and stack infos, not only frames: a loop or block each */
	bpf_loop(PY_MAX_FRAMES * 4, perl_walk_step, NULL, 0);
	if (!w->done && w->n == max)
		py_count(PY_CUT_DEPTH);
	return w->n;
}

/* CPython's or PHP's frames of the current thread, as py_walk_frames.
 * Each runtime's walk is a function of its own, not inlined in py_append:
 * inlined, py_append's frame held the largest of their locals beneath every
 * walk's calls (224 bytes), over the 512 bytes a chain of calls may take
 * (py_fresh says why). */
static __noinline int cpython_walk_frames(const struct py_proc *p, __u32 tid, __u64 *words, int base, int max)
{
	__u32 zero = 0;
	__u8 *head = bpf_map_lookup_elem(&py_head, &zero);
	__u64 frame = 0;

	if (!head)
		return 0;
	if (p->flags & PY_F_PHP) {
		frame = main_thread_word(p, tid);
	} else {
		__u64 tstate = py_thread_state(p, py_thread_id(p, tid));
		if (!tstate)
			return 0;
		frame = py_read_ptr(tstate + p->tstate_frame);
		if (frame && (p->flags & PY_F_CFRAME))
			frame = py_read_ptr(frame + p->cframe_current);
	}
	struct py_walk w = { .frame = frame, .code = p->frame_code, .previous = p->frame_previous,
			     .instr = p->frame_instr, .entry = p->frame_entry, .adaptive = p->code_adaptive,
			     .flags = p->flags, .base = (__u16)base, .max = (__u16)max, .words = words,
			     .head = head, .who = py_who(bpf_get_current_pid_tgid() >> 32, p->exec_id) };
	__u32 span = w.code > w.previous ? w.code : w.previous;
	span = span > w.instr ? span : w.instr;
	span += 8;
	__u32 entry_byte = p->flags & PY_F_PHP ? w.entry >> 3 : w.entry;
	if (entry_byte + 1 > span)
		span = entry_byte + 1;
	/* a layout whose members lie further out than a head holds: no walk */
	if (span > PY_FRAME_HEAD - 8 + 1 || entry_byte > PY_FRAME_HEAD - 9) {
		py_count(PY_READ_FAULT);
		return 0;
	}
	w.span = span;
	/* bpf_loop: the verifier checks one step, not PY_MAX_FRAMES of them (a 70 ms
	 * load otherwise) */
	if (p->flags & PY_F_PHP)
		bpf_loop(PY_MAX_FRAMES, php_frame_step, &w, 0);
	else
		bpf_loop(PY_MAX_FRAMES, py_frame_step, &w, 0);
	if (w.n == max && w.frame)
		py_count(PY_CUT_DEPTH);
	if (w.n == 0)
		py_count(PY_NO_FRAMES);
	return w.n;
}

/* The current thread's Python frames, leaf first, into words[base..]
 * (at most max of them): how many, 0 when it has none. */
static __always_inline int py_walk_frames(const struct py_proc *p, __u32 tid, __u64 *words, int base, int max)
{
	__u32 zero = 0;
	__u8 *head = bpf_map_lookup_elem(&py_head, &zero);
	if (!head)
		return 0;
	py_count(PY_SAMPLES);
	if (p->flags & (PY_F_PERL | PY_F_RUBY)) {
		int n = 0;
		if (p->flags & PY_F_PERL) {
			if (py_walks & PY_WALKS_PERL)
				n = perl_walk_frames(p, tid, head, base, max);
		} else if (py_walks & PY_WALKS_RUBY) {
			n = ruby_walk_frames(p, tid, head, base, max);
		}
		if (n == 0)
			py_count(PY_NO_FRAMES);
		return n;
	}
	if (!(py_walks & (p->flags & PY_F_PHP ? PY_WALKS_PHP : PY_WALKS_CPYTHON))) {
		py_count(PY_NO_FRAMES);
		return 0;
	}
	return cpython_walk_frames(p, tid, words, base, max);
}

struct py_known_walk {
	const __u64 *words;		/* the stack: its Python words from first to end */
	__u32 first, end, tgid;
	__u16 qualname, linetable;	/* struct py_proc's code_qualname, code_linetable */
	int unknown;			/* a code object user space has not named as it is */
	__u64 last;			/* the code object found known last */
};

/* Is code object code of tgid one user space named (py_codes), still
 * pointing at the names it had, its members at offsets' low and high 16
 * bits?  Two members next to each other (Ruby's) or one (Perl's) in one
 * read.  Global: verified once, not in each state of py_known_step. */
__noinline int py_code_known(__u32 tgid, __u64 code, __u32 offsets)
{
	struct py_code_key key = { .tgid = tgid, .code = code };
	struct py_code_id *id = bpf_map_lookup_elem(&py_codes, &key);
	__u32 q = offsets & 0xffff, l = offsets >> 16, lo = q < l ? q : l;
	__u64 v[2];

	if (!id)
		return 0;
	if (q + l - 2 * lo > 8)
		return py_read_ptr(code + q) == id->qualname && py_read_ptr(code + l) == id->linetable;
	if (bpf_probe_read_user(v, sizeof(v), (void *)(code + lo)))
		return 0;
	return v[(q - lo) / 8 & 1] == id->qualname && v[(l - lo) / 8 & 1] == id->linetable;
}

/* Python word first + i of a stack: is its code object one user space named
 * (py_codes), still pointing at the names it had?  Else the walk stops.
 * The frame before's code object again (recursion) is known without a
 * look. */
static long py_known_step(__u64 i, void *ctx)
{
	struct py_known_walk *w = ctx;
	__u32 k = w->first + (__u32)i;

	if (k >= w->end)
		return 1;
	asm volatile("" : "+r"(k));	/* the mask stays */
	__u64 code = PY_FRAME_CODE(w->words[k & (MARPLE_STACK_DEPTH - 1)]);
	if (code == w->last)
		return 0;
	if (!py_code_known(w->tgid, code, w->qualname | (__u32)w->linetable << 16)) {
		w->unknown = 1;
		return 1;
	}
	w->last = code;
	return 0;
}

/* The Python frames of a stack, by content, whose code objects a CPU found
 * all named, as they were, and when: a stack stored again with the same
 * frames (after a drain's flip, in a new slot; or with another native
 * part) is not checked nor told again for PY_CHECKED_FRESH_NS.  A new
 * stack is made by each native leaf and line sampled, and a drain moves
 * every stack to a new slot: a Perl chain told a sixth of its samples
 * (691 of 3,950 in 4 s), a Ruby recursion a quarter, each check 2-4 us;
 * not told again, a Ruby sample costs ~400 ns less.  New frames are still
 * checked: a code object freed and another made at its address under the
 * same frames is named as before, by content, in user space (names_of). */
#define PY_CHECKED_MEMO 256
#define PY_CHECKED_FRESH_NS 1000000000ull
struct py_checked {
	__u64 who;			/* tgid | exec_id << 32 */
	__u64 hash;			/* of the Python words */
	__u64 at;			/* when found named (bpf_ktime_get_ns) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_checked[PY_CHECKED_MEMO]);
} py_checked_memo SEC(".maps");

/* Past this much waiting in proc_news, a request wakes user space even if
 * it could wait (4 KiB, a quarter of the ring Python requests once had) */
#define PY_REQUESTS_WAKE_AT (16 * 1024 / 4)

/* A new stack with Python frames in slot id of the stacks map (its words
 * ips[0..total), the Python ones from first): its code objects are named
 * now, not after the process has exited; when all are known (py_codes),
 * user space names it from its cache when it next reads.  Told by the
 * sample that claimed its slot (stacks_store's STACKS_STORED_NEW), once a
 * slot and generation of its half: a sample that found it there asks
 * nothing (a per-slot flag asked at every sample cost a Perl chain's
 * sample ~115 ns, a cold line of its own).  A stack user space moved into
 * a new set (memleak's kept ones) it named before. */
static __always_inline void py_tell(int id, __u32 tgid, const __u64 *ips, int first, int total)
{
	__u32 exec_id = stacks_exec_id(), zero = 0;
	__u64 who = py_who(tgid, exec_id), now;
	__u64 hash = stacks_hash_words(ips, (__u32)first, (__u32)total, STACKS_HASH_SEED ^ who);
	struct py_checked *memo = bpf_map_lookup_elem(&py_checked_memo, &zero);
	struct py_checked *e = memo ? &memo[hash & (PY_CHECKED_MEMO - 1)] : NULL;
	now = bpf_ktime_get_ns();
	if (e && e->who == who && e->hash == hash && now - e->at < PY_CHECKED_FRESH_NS) {
		py_count(PY_CHECKED_LATELY);
		return;
	}
	struct py_proc *p = bpf_map_lookup_elem(&py_procs, &tgid);
	struct py_known_walk w = { .words = ips, .first = (__u32)first, .end = (__u32)total, .tgid = tgid,
				   .unknown = 1 };
	if (p) {
		w.qualname = p->code_qualname;
		w.linetable = p->code_linetable;
		/* a Perl CV is known by its body pointer, at its offset 0 */
		w.unknown = !(p->flags & PY_F_PERL) && (!w.qualname || !w.linetable);
	}
	if (!w.unknown)
		bpf_loop(PY_MAX_FRAMES, py_known_step, &w, 0);
	PROCNEWS_RECORD(struct py_request) *r = procnews_reserve(PROCNEWS_PYTHON, sizeof(*r));
	if (!r) {
		py_count(PY_TELL_LOST);
		return;
	}
	if (e && !w.unknown)
		*e = (struct py_checked){ .who = who, .hash = hash, .at = now };
	r->body.pid = tgid;
	r->body.exec_id = exec_id;
	r->body.stack_id = id;
	r->body.flags = w.unknown ? 0 : PY_REQUEST_KNOWN;
	__u64 wake = w.unknown || bpf_ringbuf_query(&proc_news, BPF_RB_AVAIL_DATA) >= PY_REQUESTS_WAKE_AT
			     ? BPF_RB_FORCE_WAKEUP
			     : BPF_RB_NO_WAKEUP;
	bpf_ringbuf_submit(r, wake);
}

/* stacks_store_user's user stack in ips[0..n) (stack_scratch), leaf first
 * (a stack collector's every user stack comes here when stacks_python is
 * set): in a Python process the thread's Python frames (PY_FRAME_* words)
 * are put after it, behind PY_STACK_MARK, to be stored as one stack, which
 * user space splits (lib/collect/stackframes.c) and merges (pyframes.c).
 * The stack's length now, n when it has no Python frames.  A global
 * function, checked once and apart: 82 instructions fewer verified. */
__noinline int py_append(int n)
{
	__u32 zero = 0;
	__u64 *ips = bpf_map_lookup_elem(&stack_scratch, &zero);
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	int total = n;

	if (!ips || n < 0 || n > MARPLE_STACK_DEPTH - 3)
		return n;
	struct py_proc *p = py_proc_of(tgid, stacks_exec_id());
	if (p) {
		/* room for the mark and a zero after the last frame; the walk's
		 * run time added up (PY_WALK_NS) in the samples the stages'
		 * clock times (PY_WALKS_TIMED): what Python frames cost a
		 * sample, apart from the rest of the program.  Not in every
		 * sample: two clock reads and a counter cost a Perl chain's
		 * sample ~120 ns, a tenth of its runtime check.  The walk's
		 * start is the clock's lap, in its map: with a flag kept in a
		 * register across the walk, the verifier walked the walks
		 * twice, timed and not (4,100 instructions more) */
		stacks_clock_lap(STACKS_STAGE_RUNTIME);
		int m = py_walk_frames(p, (__u32)id, ips, n + 1, MARPLE_STACK_DEPTH - 2 - n);
		struct stacks_stage_clock *clock = stacks_clock();
		if (clock && clock->on) {
			__u32 idx = PY_WALK_NS;
			__u64 *ns = bpf_map_lookup_elem(&py_counters, &idx);
			if (ns)
				*ns += bpf_ktime_get_ns() - clock->last;
			py_count(PY_WALKS_TIMED);
		}
		if (m > 0) {
			__u32 at = n;
			asm volatile("" : "+r"(at));	/* the mask stays */
			ips[at & (MARPLE_STACK_DEPTH - 1)] = PY_STACK_MARK;
			total = n + 1 + m;
		}
	}
	/* zeroes up to the end of the last group of 8 (the hash reads them)
	 * and after the stack (the reader stops there) */
	/* clang knows total's bounds, the verifier not: it keeps the check */
	__u32 end = total;
	asm volatile("" : "+r"(end));
	for (int j = 0; j < 8; j++) {
		__u32 k = end + j;
		if (k < MARPLE_STACK_DEPTH)
			ips[k & (MARPLE_STACK_DEPTH - 1)] = 0;
	}
	return total;
}

/* The stack py_append made (native frames, total with its Python ones) was
 * stored as id: counted, and told to user space if this sample put it
 * there (fresh). */
static __noinline void py_stored(int id, const __u64 *ips, int native, int total, int fresh)
{
	if (total > native && id >= 0) {
		py_count(PY_STACKS);
		if (fresh)
			py_tell(id, bpf_get_current_pid_tgid() >> 32, ips, native + 1, total);
	}
}

#endif
