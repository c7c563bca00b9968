/* unwindtables.bpf.h — the user-stack unwinder of --unwind tables, included by
 * stacks.bpf.h (which see): walks the current task's user stack from its
 * saved user registers with the rows lib/collect/unwindtables.c built from the
 * binaries' .eh_frame (struct unwind_row, stacks.h).  It never guesses: code
 * with CFI whose table is not loaded (or a rule it cannot follow) ends the
 * stack with a marker frame (UNWIND_MARK_*); frame pointers are followed
 * only in code without CFI (JIT, hand-written assembly) and only while they
 * look like a frame (above sp, aligned, near it).
 *
 * Maps (sized by the user side before load; 1 entry when not in this mode):
 *   unwind_rows      every file's table (page index and rows: stacks.h), one
 *                    after the other, 32-bit words two to an element (mmapped)
 *   unwind_rules     the distinct rules the rows name (mmapped)
 *   unwind_mappings  UNWIND_MAX_MAPPINGS executable mappings a slot (mmapped)
 *   unwind_procs     tgid -> its slot, count, and the start_stack it was read with
 *   unwind_files     (dev, inode) -> a built file's rows: where the process's
 *                    mappings do not say, the kernel's VMAs give the PC's file
 *   unwind_sample_vmas  the executable VMAs of the sampled process, read once
 *                    a sample with the VMA iterator (Linux 6.7)
 *   unwind_learned   tgid -> the VMAs its earlier samples found by lookup
 * and on proc_news (bpf/procnews.bpf.h) it tells user space
 *   PROCNEWS_UNWIND_VMA      each file VMA learned, once (struct
 *                            unwind_vma_note): the symbolizer's names for it
 *   PROCNEWS_UNWIND_REQUEST  a tgid whose mappings user space should (re)read:
 *                            unknown process, or a PC outside its mappings
 *                            (dlopen, exec)
 *   unwind_asked     when each tgid last asked (at most every 20 ms)
 *   unwind_counters  per-CPU enum unwind_counter
 */
#ifndef MARPLE_UNWIND_BPF_H
#define MARPLE_UNWIND_BPF_H

#include "procnews.bpf.h"
#include "stacks.h"
#include "stackscratch.bpf.h"
#include "kfuncs.bpf.h"
#include "task.bpf.h"

#define VM_EXEC_BIT 0x4	/* VM_EXEC, include/linux/mm.h (a macro: not in vmlinux.h) */

const volatile __u32 stacks_unwind = UNWIND_MODE_FP;
/* How a PC outside its process's loaded mappings finds its file
 * (UNWIND_LOOKUP_*, stacks.h): set before load by lib/collect/unwindtables.c,
 * which probes whether this kernel lets a perf-event program use the VMA
 * iterator (bpf/vmaiter.bpf.c). */
const volatile __u32 unwind_file_lookup = UNWIND_LOOKUP_FIND_VMA;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct unwind_words);
} unwind_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, UNWIND_RULES_RESERVED);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct unwind_rule);
} unwind_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, UNWIND_MAX_MAPPINGS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct unwind_mapping);
} unwind_mappings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_proc);
} unwind_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, struct unwind_file_key);
	__type(value, struct unwind_file);
} unwind_files SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} unwind_asked SEC(".maps");

/* A sample's executable VMAs, in address order: one walk of the VMAs (one
 * take of the mmap lock, which bpf_find_vma also takes, and may only once a
 * sample in a perf event: its release waits for an irq_work) gives the file
 * of every frame, however many files the stack crosses. */
#define UNWIND_SAMPLE_VMAS 128
enum { UNWIND_VMA_KIND_FILE, UNWIND_VMA_KIND_VDSO, UNWIND_VMA_KIND_ANON };
struct unwind_vma {
	__u64 start, end, pgoff;	/* pgoff in bytes */
	struct unwind_file_key key;	/* UNWIND_VMA_KIND_FILE */
	__u32 kind;
	__u32 stamp;			/* UNWIND_VMA_KIND_FILE: its inode's unwind_stamp */
};
struct unwind_vma_list {
	__u32 n;
	__u32 pad;
	struct unwind_vma v[UNWIND_SAMPLE_VMAS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_vma_list);
} unwind_sample_vmas SEC(".maps");

/* The VMAs a process's earlier samples found (bpf_find_vma finds one a
 * sample), used where its mappings from user space do not say (not read
 * yet, or mapped since): each sample finds one file more, and a process
 * whose stacks cross a few files (clang: its program, libLLVM,
 * libclang-cpp, libc) is walked whole after a few samples, whatever user
 * space is busy with.  tag: mm->start_stack, as in unwind_procs (a pid
 * reused by another image does not match); deleted at exec.  Sized 1 when
 * not in tables mode (unwindtables_size). */
#define UNWIND_LEARNED_VMAS 8
struct unwind_learned {
	__u64 tag;
	__u32 n;			/* VMAs in v */
	__u32 pad;
	struct unwind_vma v[UNWIND_LEARNED_VMAS];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct unwind_learned);
} unwind_learned SEC(".maps");

/* where a new unwind_learned is made (too big for the BPF stack) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_learned);
} unwind_learned_new SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UNWIND_NCOUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} unwind_counters SEC(".maps");

/* counter idx += n on this CPU.  Global, as stacks_count and py_count: a
 * counter's map lookup inlined at each of its ~90 sites cost the sampling
 * program's load 3,700 instructions walked and as many patches of the
 * whole program (~8 ms of a start). */
__noinline int unwind_count_add(__u32 idx, __u32 n)
{
	__u64 *v = bpf_map_lookup_elem(&unwind_counters, &idx);

	if (v)
		*v += n;
	return 0;
}

static __always_inline void unwind_count(__u32 idx)
{
	unwind_count_add(idx, 1);
}

/* Ask user space to (re)read tgid's mappings, at most every 20 ms. */
static __noinline void unwind_request(__u32 tgid)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 *last = bpf_map_lookup_elem(&unwind_asked, &tgid);

	if (last && now - *last < 20000000ull)
		return;
	bpf_map_update_elem(&unwind_asked, &tgid, &now, BPF_ANY);
	PROCNEWS_RECORD(__u32) *e = procnews_reserve(PROCNEWS_UNWIND_REQUEST, sizeof(*e));
	if (!e)
		return;
	e->body = tgid;
	bpf_ringbuf_submit(e, 0);
	unwind_count(UNWIND_REQUESTS);
}

/* A process has just exec'ed (stacks.bpf.h's stacks_exec): if it was
 * sampled before (seen), or its program is a file whose table was built (a
 * compiler run again and again), ask for its mappings now, not at its first
 * sample: bpf_find_vma can find one file a sample (in a perf event its lock
 * is released by an irq_work), the process's mappings any number. */
static __always_inline void unwind_exec(__u32 tgid, int seen)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct file *exe = BPF_CORE_READ(t, mm, exe_file);
	bpf_map_delete_elem(&unwind_learned, &tgid);	/* its previous image's VMAs */
	if (!exe)
		return;
	struct unwind_file_key k = { .dev = BPF_CORE_READ(exe, f_inode, i_sb, s_dev),
				      .ino = BPF_CORE_READ(exe, f_inode, i_ino) };
	if (!seen && !bpf_map_lookup_elem(&unwind_files, &k))
		return;
	bpf_map_delete_elem(&unwind_asked, &tgid);	/* its previous image's requests */
	unwind_request(tgid);
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
	__u32 vma_state;		/* what the VMA lookup found last (UNWIND_VMA_*) */
	__u32 vmas_read;		/* unwind_sample_vmas holds this sample's VMAs */
	__u32 vma_refused;		/* a lookup was refused (busy): the stack's cut is counted */
	__u32 file_not_built;		/* the PC's file has no table yet (asked for) */
	__u32 cut_frames;		/* the walk stopped where a table was missing
					 * (UNWIND_DONE_NOT_LOADED): its frames, the
					 * marker last, until stacks_send_cut takes them */
	__u32 program_read;		/* code_start, code_end and program are read */
	__u32 have_m;			/* m holds the last frame's mapping: a caller in the
					 * same one (most are: a library calls itself) needs
					 * no search */
	__u64 tag;			/* mm->start_stack: the image (unwind_learned's tag) */
	__u64 code_start, code_end;	/* the program's executable segment: mm->start_code, end_code */
	struct unwind_file_key program;	/* the program's file: mm->exe_file */
	__u32 program_stamp;		/* ... its unwind_stamp */
	__u32 have_prev;		/* prev holds the mapping m held before it: a
					 * stack goes back and forth between a program
					 * and its libraries (libc's leaf, the program,
					 * libc's __libc_start_main, the program's _start) */
	struct unwind_mapping m;	/* the current frame's mapping */
	struct unwind_mapping prev;	/* the mapping before it (have_prev) */
	__u32 m_vma, prev_vma;		/* ... found in the VMAs, not in the process's set */
	struct unwind_mapping vma;	/* ... found in the VMAs: reused while the PC is in it */
	__u64 uretprobe_trampoline;	/* where pending uretprobes' return addresses point */
	__u64 uretprobe_next;		/* the pending return_instance of the next trampoline
					 * met (a kernel address), 0: none */
	/* the frame loop's counts, added to unwind_counters once a stack */
	__u32 frames_table, frames_fp, frames_same_mapping, frames_mapping_before, frames_memo;
	/* the CPU's last stack (struct unwind_memo) */
	__u32 memo_use;			/* it is of this image, no mappings changed since */
	__u32 memo_last;		/* its buffer (0, 1); this stack's is the other */
	__u32 memo_j;			/* its next frame to compare */
	__u32 memo_n;			/* frames this stack put in its own buffer */
	__u64 procs_gen;		/* unwind_procs_gen, read at the start */
	/* unwind_find_vma's VMA from the program's segment or those learned:
	 * here, not on the BPF stack, where its 48 bytes put the chain of
	 * calls through bpf_find_vma's callback at 528 bytes, over the 512 a
	 * program has where the kernel gives it no private stack (uprobes on
	 * Linux 6.18.44: tests/collectors/bpfstack.t) */
	struct unwind_vma known;
};

/* The walk's state lives in a map, not on the stack: the verifier then
 * checks bpf_loop's callback once for any frame count, instead of once per
 * frame (it tracks a stack slot's exact value: 256 frames exceeded its 1 M
 * instructions). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_walk);
} unwind_state SEC(".maps");

enum { UNWIND_VMA_NONE, UNWIND_VMA_FOUND, UNWIND_VMA_UNKNOWN_FILE, UNWIND_VMA_NO_TABLE, UNWIND_VMA_REFUSED };

/* struct inode's change time as kernels before 6.11 have it (6.6-6.10:
 * __i_ctime; before: i_ctime) */
struct inode___ctime_606 {
	struct timespec64 __i_ctime;
} __attribute__((preserve_access_index));
struct inode___ctime_old {
	struct timespec64 i_ctime;
} __attribute__((preserve_access_index));

/* The identity of an inode's contents beside its number: its change time
 * (nanoseconds, folded to 32 bits; user space's mappedfile_stamp in mappedfiles.c, from
 * st_ctim).  An unwind table is found by (device, inode); a table kept in
 * the shared maps outlives the collector that held its file open, and a
 * file made since may have been given the freed inode number.  The change
 * time is the kernel's clock when the inode last changed: a user cannot set
 * it, as he can a modification time.  It shares a cache line with i_ino.
 * Global: verified once, not in each of its callers (Python's among them). */
__noinline __u32 unwind_stamp(__u64 inode)
{
	struct inode *ino = (struct inode *)inode;
	__u64 sec, nsec;

	if (bpf_core_field_exists(ino->i_ctime_sec)) {
		sec = BPF_CORE_READ(ino, i_ctime_sec);
		nsec = BPF_CORE_READ(ino, i_ctime_nsec);
	} else if (bpf_core_field_exists(((struct inode___ctime_606 *)ino)->__i_ctime)) {
		sec = BPF_CORE_READ((struct inode___ctime_606 *)ino, __i_ctime.tv_sec);
		nsec = BPF_CORE_READ((struct inode___ctime_606 *)ino, __i_ctime.tv_nsec);
	} else {
		sec = BPF_CORE_READ((struct inode___ctime_old *)ino, i_ctime.tv_sec);
		nsec = BPF_CORE_READ((struct inode___ctime_old *)ino, i_ctime.tv_nsec);
	}
	/* since 6.13 the top bit of the nanoseconds says whether the time was
	 * queried (multigrain timestamps): not part of the time */
	__u64 ns = sec * 1000000000ull + (nsec & 0x3fffffff);
	return (__u32)(ns ^ (ns >> 32));
}

/* What a VMA lookup found (on the stack: bpf_find_vma wants it there) */
struct unwind_vma_result {
	struct unwind_mapping m;
	__u32 state;
	struct unwind_vma desc;		/* the VMA a lookup found, to learn */
};

/* The mapping of one executable VMA into s: its file's rows from
 * unwind_files (key), the vdso's from the process's mappings only, anonymous
 * code none (frame pointers).  Global: the verifier checks it once, not in
 * each of its four callers (callstack's program: 27,571 instructions walked
 * at load, now 24,888; 1,801 of them in bpf_find_vma's callback alone).
 * Called only where a PC's mapping is looked up in the VMAs. */
__noinline int unwind_vma_mapping(struct unwind_vma_result *s, const struct unwind_vma *v)
{
	if (!s || !v)
		return 0;
	s->m.start = v->start;
	s->m.end = v->end;
	s->m.bias = 0;
	s->m.row_count = 0;
	if (v->kind == UNWIND_VMA_KIND_VDSO) {
		s->state = UNWIND_VMA_NO_TABLE;	/* CFI, whose table comes with the process's mappings */
		return 0;
	}
	if (v->kind == UNWIND_VMA_KIND_ANON) {
		s->m.row_off = UNWIND_NO_CFI;	/* JIT code: frame pointers */
		s->state = UNWIND_VMA_FOUND;
		return 0;
	}
	struct unwind_file *uf = bpf_map_lookup_elem(&unwind_files, &v->key);
	if (!uf || (uf->stamp && uf->stamp != v->stamp)) {
		s->state = UNWIND_VMA_UNKNOWN_FILE;	/* or another file's, gone: asked again */
		return 0;
	}
	__s64 delta = 0;
	for (int i = 0; i < UNWIND_FILE_LOADS; i++)
		if (i < uf->nloads && v->pgoff >= uf->loads[i].start && v->pgoff < uf->loads[i].end) {
			delta = uf->loads[i].delta;
			break;
		}
	s->m.bias = v->start - v->pgoff + delta;
	s->m.row_off = uf->row_off;
	s->m.row_count = uf->row_count;
	s->state = UNWIND_VMA_FOUND;
	return 0;
}

/* One VMA as the walker wants it: range, file offset, file or kind. */
static __always_inline void unwind_vma_describe(struct unwind_vma *v, struct task_struct *task,
						struct vm_area_struct *vma)
{
	struct file *f = BPF_CORE_READ(vma, vm_file);

	v->start = BPF_CORE_READ(vma, vm_start);
	v->end = BPF_CORE_READ(vma, vm_end);
	v->pgoff = BPF_CORE_READ(vma, vm_pgoff) << 12;
	if (f) {
		v->kind = UNWIND_VMA_KIND_FILE;
		struct inode *ino = BPF_CORE_READ(f, f_inode);
		v->key.dev = BPF_CORE_READ(ino, i_sb, s_dev);
		v->key.pad = 0;
		v->key.ino = BPF_CORE_READ(ino, i_ino);
		v->stamp = unwind_stamp((__u64)ino);
	} else {
		v->kind = v->start == (__u64)BPF_CORE_READ(task, mm, context.vdso) ? UNWIND_VMA_KIND_VDSO
										   : UNWIND_VMA_KIND_ANON;
	}
}

/* bpf_find_vma's callback: the mapping of the VMA that holds the PC. */
static long unwind_vma_found(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct unwind_vma_result *r = data;

	unwind_vma_describe(&r->desc, task, vma);
	unwind_vma_mapping(r, &r->desc);
	return 0;
}

/* Read the current task's executable VMAs into unwind_sample_vmas with the
 * VMA iterator: one take of the mmap lock for the whole sample.  0, or -1
 * if the VMAs could not be looked at (mmap lock or irq_work busy). */
static __noinline int unwind_vmas_read(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;
	__u32 zero = 0;
	struct unwind_vma_list *l = bpf_map_lookup_elem(&unwind_sample_vmas, &zero);
	int err;

	if (!l)
		return -1;
	l->n = 0;
	err = kfunc_iter_task_vma_new(&it, task, 0);
	while (err == 0 && (vma = kfunc_iter_task_vma_next(&it))) {
		if (!(vma->vm_flags & VM_EXEC_BIT))
			continue;
		__u32 n = l->n;
		if (n >= UNWIND_SAMPLE_VMAS)
			break;	/* the rest: not found, as a PC in no VMA */
		unwind_vma_describe(&l->v[n], task, vma);
		l->n = n + 1;
	}
	kfunc_iter_task_vma_destroy(&it);
	return err == 0 ? 0 : -1;
}

/* The VMA of this sample's list that holds pc, into v: a binary search
 * (the iterator goes in address order; 2^7 VMAs: 8 steps). */
static __always_inline void unwind_vmas_find(struct unwind_vma_result *v, __u64 pc)
{
	__u32 zero = 0;
	struct unwind_vma_list *l = bpf_map_lookup_elem(&unwind_sample_vmas, &zero);

	if (!l)
		return;
	__u32 lo = 0, hi = l->n;
	if (hi > UNWIND_SAMPLE_VMAS)
		hi = UNWIND_SAMPLE_VMAS;
	/* lo, hi <= UNWIND_SAMPLE_VMAS (a power of 2): the masks only tell
	 * the verifier so */
	for (int step = 0; step < 8 && lo < hi; step++) {
		__u32 mid = (lo + (hi - lo) / 2) & (UNWIND_SAMPLE_VMAS - 1);
		if (l->v[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return;
	struct unwind_vma *e = &l->v[(lo - 1) & (UNWIND_SAMPLE_VMAS - 1)];
	if (pc < e->end) {
		v->desc = *e;
		unwind_vma_mapping(v, &v->desc);
	}
}

/* pc's VMA if it is in the program's own executable segment
 * [mm->start_code, end_code): no lookup, the kernel keeps where it loaded
 * the program.  Its file's lowest executable PT_LOAD is what start_code
 * points into; the mapping's bias follows from its page (the segment's
 * offset and address agree modulo the page size).  0, or -1. */
static __always_inline int unwind_program_vma(struct unwind_walk *s, __u64 pc, struct unwind_vma *v)
{
	if (!s->program_read) {
		struct task_struct *t = bpf_get_current_task_btf();
		struct mm_struct *mm = BPF_CORE_READ(t, mm);
		struct file *exe = BPF_CORE_READ(mm, exe_file);
		s->program_read = 1;
		s->code_start = BPF_CORE_READ(mm, start_code);
		s->code_end = BPF_CORE_READ(mm, end_code);
		s->program.dev = BPF_CORE_READ(exe, f_inode, i_sb, s_dev);
		s->program.ino = BPF_CORE_READ(exe, f_inode, i_ino);
		s->program_stamp = unwind_stamp((__u64)BPF_CORE_READ(exe, f_inode));
	}
	if (pc < s->code_start || pc >= s->code_end)
		return -1;
	struct unwind_file *uf = bpf_map_lookup_elem(&unwind_files, &s->program);
	if (!uf || uf->text_load == 0 || uf->text_load > UNWIND_FILE_LOADS || (uf->stamp && uf->stamp != s->program_stamp))
		return -1;	/* not built yet (the lookup asks for it), no PT_LOAD known, or another file's */
	v->start = s->code_start & ~4095ull;
	v->end = s->code_end;
	v->pgoff = uf->loads[(uf->text_load - 1) & (UNWIND_FILE_LOADS - 1)].start;
	v->key = s->program;
	v->stamp = s->program_stamp;
	v->kind = UNWIND_VMA_KIND_FILE;
	return 0;
}

/* pc's VMA among those the earlier samples of process tgid (its image:
 * tag) found: 0, or -1.  Also a launcher's libpython's (python.bpf.h),
 * whose own bpf_find_vma is refused in a sample whose walk made one.
 * Global: verified once for both (inlined in each, the sampling program
 * verified in 573 instructions more, 161 more with --no-python). */
__noinline int unwind_learned_vma(__u32 tgid, __u64 tag, __u64 pc, struct unwind_vma *v)
{
	struct unwind_learned *l = bpf_map_lookup_elem(&unwind_learned, &tgid);

	if (!l || !v || l->tag != tag)
		return -1;
	for (int i = 0; i < UNWIND_LEARNED_VMAS; i++) {
		if (i >= l->n)
			break;
		if (pc >= l->v[i].start && pc < l->v[i].end) {
			*v = l->v[i];
			return 0;
		}
	}
	return -1;
}

/* Tell user space of file VMA v of the current process (its image:
 * self_exec_id), which the walk found in the kernel: the symbolizer may
 * never read the process's maps with it (gone first). */
static __noinline void unwind_note_vma(__u32 tgid, const struct unwind_vma *v)
{
	PROCNEWS_RECORD(struct unwind_vma_note) *r = procnews_reserve(PROCNEWS_UNWIND_VMA, sizeof(*r));

	if (!r) {
		unwind_count(UNWIND_VMA_NOTES_LOST);
		return;
	}
	struct unwind_vma_note *e = &r->body;
	e->tgid = tgid;
	e->exec_id = (__u32)bpf_get_current_task_btf()->self_exec_id;
	e->start = v->start;
	e->end = v->end;
	e->pgoff = v->pgoff;
	e->key = v->key;
	bpf_ringbuf_submit(r, 0);
	unwind_count(UNWIND_VMA_NOTES);
}

/* Keep v, found by a lookup, for the process's later samples: the entry is
 * replaced whole (a copy with v added), never written in place, so that a
 * walk on another CPU reads it whole. */
static __always_inline void unwind_learn(struct unwind_walk *s, const struct unwind_vma *v)
{
	struct unwind_learned *l = bpf_map_lookup_elem(&unwind_learned, &s->tgid);
	__u32 zero = 0;
	struct unwind_learned *next = bpf_map_lookup_elem(&unwind_learned_new, &zero);

	if (!next)
		return;
	if (l && l->tag == s->tag) {
		if (l->n >= UNWIND_LEARNED_VMAS)
			return;	/* full: the rest by lookup (user space will have loaded it) */
		*next = *l;
	} else {
		next->tag = s->tag;
		next->n = 0;
	}
	__u32 i = next->n;
	if (i >= UNWIND_LEARNED_VMAS)
		return;
	next->v[i] = *v;
	next->n = i + 1;
	if (bpf_map_update_elem(&unwind_learned, &s->tgid, next, BPF_ANY) == 0 && v->kind == UNWIND_VMA_KIND_FILE)
		unwind_note_vma(s->tgid, v);
}

/* Find pc's mapping in the kernel's VMAs (the process's mappings do not
 * hold it) into the walk's m (unwind_state): from the program's segment,
 * the VMAs earlier samples found, or a lookup (one walk of the VMAs, or
 * bpf_find_vma: one file a sample).  0, or -1 with done set (a file not
 * built yet: asked; a lookup refused; no VMA there).  Global: the verifier
 * checks it and bpf_find_vma's callback once, not in every state of the
 * frame callback that reaches it (callstack's program without Python:
 * 21,865 instructions walked at load, now 16,406). */
__noinline int unwind_find_vma(__u64 pc)
{
	__u32 zero = 0;
	struct unwind_walk *s = bpf_map_lookup_elem(&unwind_state, &zero);

	if (!s)
		return -1;
	if (s->vma_state == UNWIND_VMA_NONE || pc < s->vma.start || pc >= s->vma.end) {
		struct unwind_vma_result v = {};
		if (unwind_program_vma(s, pc, &s->known) == 0) {
			unwind_vma_mapping(&v, &s->known);
			unwind_count(UNWIND_FRAMES_BY_PROGRAM);
		} else if (unwind_learned_vma(s->tgid, s->tag, pc, &s->known) == 0) {
			unwind_vma_mapping(&v, &s->known);
			unwind_count(UNWIND_FRAMES_LEARNED);
		} else if (unwind_file_lookup == UNWIND_LOOKUP_VMA_ITER) {
			if (!s->vmas_read) {
				s->vmas_read = unwind_vmas_read() == 0 ? 1 : 2;
				unwind_count(s->vmas_read == 1 ? UNWIND_VMA_WALKS : UNWIND_VMA_BUSY);
			}
			if (s->vmas_read == 1) {
				unwind_vmas_find(&v, pc);
				if (v.state != UNWIND_VMA_NONE)
					unwind_learn(s, &v.desc);
			} else
				v.state = UNWIND_VMA_REFUSED;
		} else {
			long err = bpf_find_vma(bpf_get_current_task_btf(), pc, unwind_vma_found, &v, 0);
			if (err != 0 && err != -2 /* ENOENT: no VMA there */) {
				unwind_count(UNWIND_VMA_BUSY);
				v.state = UNWIND_VMA_REFUSED;
			} else if (err == 0) {
				unwind_learn(s, &v.desc);
			}
		}
		s->vma = v.m;
		s->vma_state = v.state;
	}
	if (s->vma_state == UNWIND_VMA_FOUND) {
		s->m = s->vma;
		unwind_count(UNWIND_FRAMES_BY_VMA);
		return 0;
	}
	if (s->vma_state == UNWIND_VMA_UNKNOWN_FILE && !s->requested) {
		unwind_request(s->tgid);	/* a file never seen: build it */
		s->requested = 1;
	}
	if (s->vma_state == UNWIND_VMA_REFUSED)
		s->vma_refused = 1;
	if (s->vma_state == UNWIND_VMA_UNKNOWN_FILE)
		s->file_not_built = 1;
	s->done = UNWIND_DONE_NOT_LOADED;	/* no VMA: a bad return address */
	return -1;
}

/* The index in unwind_mappings of the mapping of slot (nmaps sorted) that
 * holds pc, or -1: a binary search (UNWIND_MAX_MAPPINGS = 2^8: 9 steps).
 * A global function: the verifier checks it once, not at every path that
 * calls it. */
__noinline int unwind_mapping_index(__u32 slot, __u32 nmaps, __u64 pc)
{
	__u32 lo = 0, hi = nmaps, base = slot * UNWIND_MAX_MAPPINGS;
	struct unwind_mapping *m;

	for (int step = 0; step < 9 && lo < hi; step++) {
		__u32 mid = lo + (hi - lo) / 2, idx = base + mid;
		m = bpf_map_lookup_elem(&unwind_mappings, &idx);
		if (!m)
			return -1;
		if (m->start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	__u32 idx = base + lo - 1;
	m = bpf_map_lookup_elem(&unwind_mappings, &idx);
	return m && pc < m->end ? (int)idx : -1;
}

/* Word pos of unwind_rows, or -1 past its end. */
static __always_inline __s64 unwind_word(__u32 pos)
{
	__u32 key = pos >> 1;
	struct unwind_words *e = bpf_map_lookup_elem(&unwind_rows, &key);

	return e ? (__s64)e->w[pos & 1] : -1;
}

/* The last row among words [lo, hi) of unwind_rows whose offset in its page
 * is at or below at: its position + 1, or lo if none (or -1).  A page holds
 * at most 2^UNWIND_PAGE_SHIFT rows.  Global: the verifier checks it once,
 * for any bounds. */
__noinline int unwind_page_search(__u32 lo, __u32 hi, __u32 at)
{
	for (int step = 0; step < UNWIND_PAGE_SEARCH_STEPS && lo < hi; step++) {
		__u32 mid = lo + (hi - lo) / 2;
		__s64 w = unwind_word(mid);
		if (w < 0)
			return -1;
		if ((__u32)w >> UNWIND_ROW_RULE_BITS <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (int)lo;
}

/* The rule index (in unwind_rules) of the row that holds file address pc
 * in the table at word off of unwind_rows (stacks.h), or -1 before its
 * first row: the page index, then a binary search among the rows of pc's
 * page (~20: 5 steps, against 20 over a whole file's rows).
 * lib/collect/unwindtablescompact.c's unwindtablescompact_find is the same in C,
 * tested against the rows it was built from.  Global, as above. */
__noinline int unwind_rule_index(__u32 off, __u64 pc)
{
	__u32 index = off + UNWIND_TABLE_HEADER;
	__u64 page = pc >> UNWIND_PAGE_SHIFT;
	__s64 page0 = unwind_word(off), npages = unwind_word(off + 1), lo, hi, w;

	if (page0 < 0 || npages < 0 || page < (__u64)page0)
		return -1;
	__u32 rows_at = index + (__u32)npages + 1;
	if (page - page0 >= (__u64)npages) {
		/* past the last row's page: the last row */
		hi = unwind_word(index + (__u32)npages);
		w = hi > 0 ? unwind_word((__u32)hi - 1) : -1;
		return w < 0 ? -1 : (int)(w & (UNWIND_MAX_RULES - 1));
	}
	__u32 k = (__u32)(page - page0), at = (__u32)pc & ((1u << UNWIND_PAGE_SHIFT) - 1);
	lo = unwind_word(index + k);
	hi = unwind_word(index + k + 1);
	if (lo < 0 || hi < 0)
		return -1;
	int end = unwind_page_search((__u32)lo, (__u32)hi, at);
	/* none at or below pc in its page: the row before, from an earlier
	 * page, unless there is none */
	if (end <= 0 || (__u32)end == rows_at)
		return -1;
	w = unwind_word((__u32)end - 1);
	return w < 0 ? -1 : (int)(w & (UNWIND_MAX_RULES - 1));
}

/* A frame pointer's frame is farther from sp than this: not a frame (a
 * thread's default stack is 8 MB) */
/* A uprobe's footprints in a user stack (another collector's, e.g.
 * marple-memleak's on malloc):
 * - a probed instruction runs out of line, in the process's "[uprobes]"
 *   page: a sample there is at the probed code's own address (the slot's
 *   start is utask->vaddr's instruction);
 * - a function with a uretprobe pending returns to the trampoline in that
 *   page, not its caller: each trampoline address met, leaf first, is the
 *   next pending return_instance's orig_ret_vaddr (the list is newest
 *   first; an instance chained to the one before it, a probed function's
 *   tail call into another, shares its caller's slot on the stack). */
#define UNWIND_XOL_SLOT_BYTES 128	/* UPROBE_XOL_SLOT_BYTES, arch/x86 */
#define UNWIND_URETPROBE_CHAIN 4

/* ra, or the return address a pending uretprobe's trampoline stands for */
static __always_inline __u64 unwind_uretprobe_ra(struct unwind_walk *s, __u64 ra)
{
	if (!s->uretprobe_next || ra != s->uretprobe_trampoline)
		return ra;
	struct return_instance *ri = (struct return_instance *)s->uretprobe_next;
	__u64 orig = BPF_CORE_READ(ri, orig_ret_vaddr);
	for (int i = 0; i < UNWIND_URETPROBE_CHAIN && ri; i++) {
		bool chained = BPF_CORE_READ(ri, chained);
		ri = BPF_CORE_READ(ri, next);
		if (!chained)
			break;
	}
	s->uretprobe_next = (__u64)ri;
	unwind_count(UNWIND_FRAMES_URETPROBE);
	return orig;
}

static __always_inline void unwind_uprobe_setup(struct unwind_walk *w, struct mm_struct *mm)
{
	struct uprobe_task *ut = (struct uprobe_task *)current_task_utask();

	if (!ut)
		return;
	__u64 xol = BPF_CORE_READ(ut, xol_vaddr);	/* 0 once the slot is let go */
	__u32 state = BPF_CORE_READ(ut, state);
	if (xol && w->ip >= xol && w->ip < xol + UNWIND_XOL_SLOT_BYTES &&
	    (state == bpf_core_enum_value(enum uprobe_task_state, UTASK_SSTEP) ||
	     state == bpf_core_enum_value(enum uprobe_task_state, UTASK_SSTEP_ACK) ||
	     state == bpf_core_enum_value(enum uprobe_task_state, UTASK_SSTEP_TRAPPED))) {
		w->ip = BPF_CORE_READ(ut, vaddr) + (w->ip - xol);
		unwind_count(UNWIND_LEAF_SINGLE_STEPPED);
	}
	struct return_instance *ri = BPF_CORE_READ(ut, return_instances);
	__u64 tramp = BPF_CORE_READ(mm, uprobes_state.xol_area, vaddr);
	if (ri && tramp) {
		w->uretprobe_next = (__u64)ri;
		w->uretprobe_trampoline = tramp;
		/* in the trampoline itself: the probed function has returned
		 * there; its caller resumes at the return address, with the
		 * stack as the function's entry left it, popped */
		if (w->ip >= tramp && w->ip < tramp + UNWIND_XOL_SLOT_BYTES) {
			__u64 sp = BPF_CORE_READ(ri, stack) + 8;
			w->ip = unwind_uretprobe_ra(w, tramp);
			w->sp = sp;
			w->exact = 0;
		}
	}
}

/* A copy of the part of the user stack the walk is in: a frame's words
 * (its return address, the caller's rbp) are read from it, and a read of
 * user memory (bpf_probe_read_user: ~60 ns, whatever its size up to a few
 * hundred bytes) is made only where the walk leaves it, every few frames.
 * The stack does not change under the walk: its task is the one the sample
 * interrupted.  len 0: nothing copied in this sample yet. */
#define UNWIND_WINDOW 512		/* a power of 2 */
struct unwind_window {
	__u64 start;			/* the user address of b[0] */
	__u32 len;			/* bytes copied */
	__u32 reads;			/* copies made in this sample (UNWIND_WINDOW_READS) */
	__u8 b[UNWIND_WINDOW + 8];	/* a word at any offset below len is in bounds */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_window);
} unwind_windows SEC(".maps");

/* Copy the stack from addr into w: UNWIND_WINDOW bytes, or up to the end
 * of addr's page where the stack's mapping ends sooner (its top: _start's
 * frame).  0, or -1 if the word at addr cannot be read. */
static __always_inline int unwind_window_fill(struct unwind_window *w, __u64 addr)
{
	__u32 len = 4096 - (addr & 4095);

	w->reads++;
	w->len = 0;
	if (bpf_probe_read_user(w->b, UNWIND_WINDOW, (void *)addr) == 0) {
		len = UNWIND_WINDOW;
	} else {
		if (len >= UNWIND_WINDOW || len < 8)
			return -1;	/* its own page (or the next) cannot be read */
		if (bpf_probe_read_user(w->b, len & (UNWIND_WINDOW - 1), (void *)addr) != 0)
			return -1;
	}
	w->start = addr;
	w->len = len;
	return 0;
}

/* The word at user stack address addr into *v, from the window (copied
 * there first if it is not in it): 0, or -1 if it cannot be read. */
static __always_inline int unwind_stack_word(__u64 addr, __u64 *v)
{
	__u32 zero = 0;
	struct unwind_window *w = bpf_map_lookup_elem(&unwind_windows, &zero);

	if (!w)
		return -1;
	__u64 off = addr - w->start;
	if (addr < w->start || off + 8 > w->len) {
		if (unwind_window_fill(w, addr) != 0)
			return -1;
		off = 0;
	}
	*v = *(__u64 *)(w->b + (off & (UNWIND_WINDOW - 1)));
	return 0;
}

/* The window emptied for a new sample's stack */
static __always_inline void unwind_window_reset(void)
{
	__u32 zero = 0;
	struct unwind_window *w = bpf_map_lookup_elem(&unwind_windows, &zero);

	if (w) {
		w->len = 0;
		w->reads = 0;
	}
}

/* The frame loop's counts of a stack into unwind_counters */
static __always_inline void unwind_count_frames(const struct unwind_walk *s)
{
	__u32 zero = 0;
	struct unwind_window *w = bpf_map_lookup_elem(&unwind_windows, &zero);

	if (s->frames_table)
		unwind_count_add(UNWIND_FRAMES_TABLE, s->frames_table);
	if (s->frames_fp)
		unwind_count_add(UNWIND_FRAMES_FP, s->frames_fp);
	if (s->frames_same_mapping)
		unwind_count_add(UNWIND_FRAMES_SAME_MAPPING, s->frames_same_mapping);
	if (s->frames_mapping_before)
		unwind_count_add(UNWIND_FRAMES_MAPPING_BEFORE, s->frames_mapping_before);
	if (s->frames_memo)
		unwind_count_add(UNWIND_FRAMES_LAST_STACK, s->frames_memo);
	if (w && w->reads)
		unwind_count_add(UNWIND_WINDOW_READS, w->reads);
}

#define UNWIND_FP_MAX_FRAME (8u << 20)

/* CPython 3.12's -X perf trampoline (x86-64): "sub $8,%rsp; call *%rcx;
 * add $8,%rsp; ret", copied for each code object into anonymous memory with
 * no CFI and no frame pointer.  Returning into one (6 bytes in), its
 * caller's return address is at sp + 8: 1 when that step was taken. */
static __always_inline int unwind_py_trampoline_step(struct unwind_walk *s)
{
	__u64 code[2] = { 0, 0 }, ra;

	/* a return address (not exact) just after the call, the bytes around it
	 * the trampoline's, little-endian */
	if (s->exact || bpf_probe_read_user(code, 11, (void *)(s->ip - 6)) != 0 ||
	    code[0] != 0x8348d1ff08ec8348ull || code[1] != 0xc308c4)
		return 0;
	if (bpf_probe_read_user(&ra, sizeof(ra), (void *)(s->sp + 8)) != 0 || ra == 0)
		return 0;
	s->frames_fp++;
	s->sp += 16;
	s->ip = unwind_uretprobe_ra(s, ra);
	return 1;
}

/* One frame by frame pointer, in code without CFI: the caller's rbp at
 * [rbp], its return address above it, if rbp looks like a frame of this
 * stack (at or above sp, 8-aligned, within UNWIND_FP_MAX_FRAME of it). */
static __always_inline void unwind_fp_step(struct unwind_walk *s)
{
	__u64 frame[2];

	if (unwind_py_trampoline_step(s))
		return;
	if (s->bp == 0) {
		s->done = UNWIND_DONE_COMPLETE;	/* rbp 0: the outermost frame (_start) */
		return;
	}
	if (s->bp < s->sp || (s->bp & 7) != 0 || s->bp - s->sp > UNWIND_FP_MAX_FRAME ||
	    unwind_stack_word(s->bp, &frame[0]) != 0 || unwind_stack_word(s->bp + 8, &frame[1]) != 0 ||
	    frame[1] == 0) {
		s->done = UNWIND_DONE_NO_TABLE;
		return;
	}
	s->frames_fp++;
	s->sp = s->bp + 16;
	s->bp = frame[0];
	s->ip = unwind_uretprobe_ra(s, frame[1]);
	s->exact = 0;
}

/* One frame by its row's rule; 0, or -1 when the rule says there is no CFI
 * here (frame pointers, checked). */
static __always_inline int unwind_row_step(struct unwind_walk *s, struct unwind_rule *r)
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
		s->frames_table++;
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
	/* the saved rbp first: it is below the return address, and a window
	 * copied from it holds both */
	__u64 bp = s->bp;
	if ((r->rbp == UNWIND_RBP_SAVED && unwind_stack_word(cfa + (__s64)r->rbp_off, &bp) != 0) ||
	    unwind_stack_word(cfa - 8, &ra) != 0) {
		s->done = UNWIND_DONE_FAULT;
		return 0;
	}
	s->bp = bp;
	s->frames_table++;
	s->sp = cfa;
	s->ip = unwind_uretprobe_ra(s, ra);
	s->exact = 0;
	if (ra == 0)
		s->done = UNWIND_DONE_COMPLETE;
	return 0;
}

/* The CPU's last user stack walked by table, each frame's PC, sp and rule
 * (leaf first): consecutive samples of a process mostly share their outer
 * frames, whose rules the next walk takes from here instead of searching the
 * mappings and the table (two or three cold cache lines a frame; 2.7 frames
 * here share one).  Two buffers: the last stack's, read while the walk
 * fills the other.  A rule is the file's at that PC: valid while the
 * process has the same mappings, which unwind_procs_gen says (no process
 * given a new set since).  The heads, first, share two cache lines. */
#define UNWIND_MEMO_FRAMES 128		/* a power of 2 */
struct unwind_memo_frame {
	__u64 pc, sp;
	struct unwind_rule rule;
};
struct unwind_memo_head {
	__u64 tag;			/* the image (mm->start_stack) */
	__u64 gen;			/* unwind_procs_gen when its slot was read */
	__u32 tgid, slot, nmaps, n;	/* n: frames in its buffer */
	__u32 have_m, pad;
	struct unwind_mapping m;	/* the mapping of its leaf (have_m) */
};
struct unwind_memo {
	__u32 last;			/* the buffer of the last stack */
	__u32 pad;
	struct unwind_memo_head h[2];
	struct unwind_memo_frame f[2][UNWIND_MEMO_FRAMES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_memo);
} unwind_memos SEC(".maps");

/* Moved on each time a process is given a new set of mappings in
 * unwind_procs (by user space, unwindtables.c) or loses its set (exec):
 * while it has not moved, a walk takes its process's slot from the CPU's
 * last stack of the same image, not from unwind_procs (a hash look-up,
 * ~350 ns a stack on a build). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);	/* user space moves it in place */
	__type(key, __u32);
	__type(value, __u64);
} unwind_procs_gen SEC(".maps");

static __always_inline void unwind_procs_changed(void)
{
	__u32 zero = 0;
	__u64 *gen = bpf_map_lookup_elem(&unwind_procs_gen, &zero);

	if (gen)
		__sync_fetch_and_add(gen, 1);
}

/* The CPU's last stack, if it was of the same image and no process has had
 * its mappings changed since (a slot let go may be given again, to it or
 * another): its process's slot, its leaf's mapping and its frames' rules
 * are this stack's too (w->memo_use): 1; else 0 (unwind_procs says) */
static __always_inline int unwind_memo_proc(struct unwind_walk *w, struct unwind_memo *memo)
{
	__u32 zero = 0;
	__u64 *gen = bpf_map_lookup_elem(&unwind_procs_gen, &zero);
	struct unwind_memo_head *prev = &memo->h[memo->last & 1];

	if (!gen)
		return 0;
	w->procs_gen = *gen;
	if (prev->tgid != w->tgid || prev->tag != w->tag || prev->gen != w->procs_gen || !prev->nmaps)
		return 0;
	w->slot = prev->slot;
	w->nmaps = prev->nmaps;
	w->memo_use = 1;
	if (prev->have_m) {
		/* the leaf is mostly in the last one's leaf's mapping: no search */
		w->m = prev->m;
		w->have_m = 1;
	}
	return 1;
}

/* A new stack's walk starts: the other buffer is cleared for it */
static __always_inline void unwind_memo_start(struct unwind_walk *w, struct unwind_memo *memo)
{
	__u32 last = memo->last & 1;
	struct unwind_memo_head *cur = &memo->h[last ^ 1];

	w->memo_last = last;
	cur->tgid = w->nmaps ? w->tgid : 0;	/* mappings not loaded: no memo */
	cur->tag = w->tag;
	cur->gen = w->procs_gen;
	cur->slot = w->slot;
	cur->nmaps = w->nmaps;
	cur->n = 0;
	cur->have_m = 0;
}

/* The walk ended: its buffer is the last stack's now */
static __always_inline void unwind_memo_end(struct unwind_walk *w, struct unwind_memo *memo)
{
	__u32 cur = (w->memo_last & 1) ^ 1;
	memo->h[cur].n = w->memo_n;
	memo->last = cur;
}

/* The leaf's mapping, one of the process's mappings (not a VMA's, which
 * only its own sample may trust), for the next stack's leaf */
static __always_inline void unwind_memo_leaf_mapping(struct unwind_walk *s, struct unwind_memo *memo)
{
	struct unwind_memo_head *cur = &memo->h[(s->memo_last & 1) ^ 1];

	cur->m = s->m;
	cur->have_m = 1;
}

/* pc's rule from the last stack, into *r: 1, or 0.  Both stacks go from
 * leaf (low sp) outward: the last stack's frames below this one's sp are
 * passed (a few a frame: the walk catches up as it goes), and the next
 * one is this frame if it has the same PC (the same code: the same rule). */
static __always_inline int unwind_memo_find(struct unwind_walk *s, struct unwind_memo *memo, __u64 pc,
					    struct unwind_rule *r)
{
	__u32 last = s->memo_last & 1, n = memo->h[last].n;

	if (!s->memo_use)
		return 0;
	for (int k = 0; k < 4; k++) {
		__u32 j = s->memo_j;
		if (j >= n || j >= UNWIND_MEMO_FRAMES)
			return 0;
		struct unwind_memo_frame *f = &memo->f[last][j & (UNWIND_MEMO_FRAMES - 1)];
		if (f->sp < s->sp) {
			s->memo_j = j + 1;
			continue;
		}
		if (f->pc != pc)
			return 0;
		*r = f->rule;
		s->memo_j = j + 1;
		return 1;
	}
	return 0;
}

/* This frame's PC, sp and rule into this stack's buffer */
static __always_inline void unwind_memo_note(struct unwind_walk *s, struct unwind_memo *memo, __u64 pc,
					     __u64 sp, const struct unwind_rule *r)
{
	__u32 n = s->memo_n;

	if (n >= UNWIND_MEMO_FRAMES)
		return;
	struct unwind_memo_frame *f = &memo->f[(s->memo_last & 1) ^ 1][n & (UNWIND_MEMO_FRAMES - 1)];
	f->pc = pc;
	f->sp = sp;
	f->rule = *r;
	s->memo_n = n + 1;
}

/* One frame by rule r (a table's or the last stack's): by frame pointer
 * where r says there is no CFI */
static __always_inline void unwind_rule_step(struct unwind_walk *s, struct unwind_rule *r)
{
	if (unwind_row_step(s, r) != 0)
		unwind_fp_step(s);
}

/* bpf_loop callback: record the current frame, then find its caller. */
static long unwind_frame(__u64 i, void *ctx)
{
	__u32 zero = 0;
	struct unwind_walk *s = bpf_map_lookup_elem(&unwind_state, &zero);
	__u64 *ips = bpf_map_lookup_elem(&stack_scratch, &zero);

	if (!s || !ips)
		return 1;
	__u32 n = s->n;
	if (n >= MARPLE_STACK_DEPTH)
		return 1;
	ips[n] = s->ip;
	s->n = n + 1;
	/* a return address is after its call: look up the call itself */
	__u64 pc = s->exact ? s->ip : s->ip - 1, sp = s->sp;
	struct unwind_memo *memo = bpf_map_lookup_elem(&unwind_memos, &zero);
	struct unwind_rule rule = { .cfa = UNWIND_NONE };
	if (memo && unwind_memo_find(s, memo, pc, &rule)) {
		s->frames_memo++;
		unwind_memo_note(s, memo, pc, sp, &rule);
		unwind_rule_step(s, &rule);
		return s->done != UNWIND_GO_ON;
	}
	if (s->have_m && pc >= s->m.start && pc < s->m.end) {
		s->frames_same_mapping++;
		if (n == 0 && memo)
			unwind_memo_leaf_mapping(s, memo);	/* the last stack's, kept */
	} else if (s->have_prev && pc >= s->prev.start && pc < s->prev.end) {
		struct unwind_mapping m = s->m;
		__u32 m_vma = s->m_vma;
		s->m = s->prev;
		s->m_vma = s->prev_vma;
		s->prev = m;
		s->prev_vma = m_vma;
		s->frames_same_mapping++;
		s->frames_mapping_before++;
	} else {
	if (s->have_m) {
		s->prev = s->m;
		s->prev_vma = s->m_vma;
		s->have_prev = 1;
	}
	s->have_m = 0;
	s->m_vma = 0;
	int mi = s->nmaps ? unwind_mapping_index(s->slot, s->nmaps, pc) : -1;
	__u32 mkey = (__u32)mi;
	struct unwind_mapping *pm = mi >= 0 ? bpf_map_lookup_elem(&unwind_mappings, &mkey) : NULL;
	if (pm) {
		s->m = *pm;
		if (n == 0 && memo)
			unwind_memo_leaf_mapping(s, memo);
	} else {
		/* not loaded yet, or mapped since (dlopen, a JIT): the kernel's
		 * VMA says which file, whose table may be built */
		if (s->nmaps && !s->requested) {
			unwind_request(s->tgid);
			s->requested = 1;
		}
		if (unwind_find_vma(pc) != 0)
			return 1;
		s->m_vma = 1;
	}
	s->have_m = 1;
	}
	struct unwind_mapping *m = &s->m;
	if (m->row_count == 0) {
		if (m->row_off != UNWIND_NO_CFI) {
			s->done = UNWIND_DONE_NOT_LOADED;	/* CFI, but no table: no guess */
			return 1;
		}
		unwind_fp_step(s);
		return s->done != UNWIND_GO_ON;
	}
	int ri = unwind_rule_index(m->row_off, pc - m->bias);
	__u32 rkey = (__u32)ri;
	struct unwind_rule *r = ri >= 0 ? bpf_map_lookup_elem(&unwind_rules, &rkey) : NULL;
	if (r)
		rule = *r;	/* else before the first FDE or between FDEs: no CFI there */
	/* a mapping the process's set does not have yet (a VMA's) may be gone
	 * by the next sample, its set unchanged: no rule of it is kept */
	if (memo && !s->m_vma)
		unwind_memo_note(s, memo, pc, sp, &rule);
	unwind_rule_step(s, &rule);
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

/* Walk the current task's user stack into this CPU's stack_scratch (leaf
 * first, zeroes after): the number of frames, a marker frame last where the
 * walk stopped short of the outermost frame for want of a table or of depth;
 * 0 for a task with no user stack.  A process whose tables are not loaded
 * yet (asked for) gets its leaf and the marker.  Global, the scratch looked
 * up here (a global function's pointer argument is one element): the
 * verifier checks it once, not for each path to it (offcpu's switch program
 * walked it and its frame callback 14 times: 60,698 instructions at load,
 * now 43,259). */
__noinline int unwind_user_stack(void)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u32 zero = 0;
	struct unwind_walk *w = bpf_map_lookup_elem(&unwind_state, &zero);
	__u64 *ips = bpf_map_lookup_elem(&stack_scratch, &zero);
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u64 tag;
	struct mm_struct *mm = (struct mm_struct *)current_task_mm_stack(&tag);

	if (!mm || !ips || !w)
		return 0;
	*w = (struct unwind_walk){};
	unwind_window_reset();
	unwind_count(UNWIND_STACKS);
	/* loads, not BPF_CORE_READ's probe reads: a helper call each */
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	w->ip = regs->ip;
	w->sp = regs->sp;
	w->bp = regs->bp;
	w->tag = tag;
	struct unwind_memo *memo = bpf_map_lookup_elem(&unwind_memos, &zero);
	w->exact = 1;
	w->tgid = tgid;
	unwind_uprobe_setup(w, mm);
	if (memo && unwind_memo_proc(w, memo)) {
		unwind_count(UNWIND_PROC_LAST_STACK);
	} else {
		struct unwind_proc *p = bpf_map_lookup_elem(&unwind_procs, &tgid);
		if (!p || p->tag != w->tag || p->n > UNWIND_MAX_MAPPINGS) {
			/* its mappings are not loaded yet (asked for): every
			 * frame's file by bpf_find_vma */
			unwind_count(UNWIND_NO_PROC);
			unwind_request(tgid);
			w->requested = 1;
		} else {
			w->slot = p->slot;
			w->nmaps = p->n;
		}
	}
	if (memo)
		unwind_memo_start(w, memo);
	bpf_loop(MARPLE_STACK_DEPTH, unwind_frame, NULL, 0);
	if (memo)
		unwind_memo_end(w, memo);
	unwind_count_frames(w);
	__u32 n = w->n;
	switch (w->done) {
	case UNWIND_GO_ON:
		unwind_count(UNWIND_CUT_DEPTH);
		n = unwind_mark(ips, n, UNWIND_MARK_TRUNCATED);
		break;
	case UNWIND_DONE_COMPLETE: unwind_count(UNWIND_COMPLETE); break;
	case UNWIND_DONE_NO_TABLE: unwind_count(UNWIND_CUT_NO_TABLE); break;
	case UNWIND_DONE_NOT_LOADED:
		unwind_count(UNWIND_CUT_NOT_LOADED);
		if (w->vma_refused)
			unwind_count(UNWIND_CUT_FILE_NOT_FOUND);
		else if (w->file_not_built)
			unwind_count(UNWIND_CUT_FILE_NOT_BUILT);
		n = unwind_mark(ips, n, UNWIND_MARK_NO_TABLE);
		w->cut_frames = n;
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
