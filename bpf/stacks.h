/* stacks.h — what the kernel and user sides of the stack collectors share:
 * the aggregation key, the stack depth and the drop counters.
 *
 * Included by bpf/stacks.bpf.h (kernel side, after vmlinux.h) and by
 * lib/collect/stackframes.h (user side).  A collector that aggregates stacks keeps a
 * count table  struct stack_key -> its own value (u64 samples, bytes, us...),
 * fills the key with stacks_fill_key() (stacks.bpf.h) and, at the end, turns
 * each key into root-first frames with lib/collect/stackframes.h.
 */
#ifndef MARPLE_STACKS_H
#define MARPLE_STACKS_H

/* Frames a stack holds: one stack-map value.  clang's parser recurses past
 * 127 (the kernel's perf_event_max_stack, which still bounds --unwind fp's
 * bpf_get_stack).  A user stack walked by --unwind tables that is deeper
 * keeps its MARPLE_STACK_DEPTH - 1 leaf frames and ends in
 * UNWIND_MARK_TRUNCATED. */
#define MARPLE_STACK_DEPTH 256
#define MARPLE_COMM_LEN 16

/* The hash of the stack store and of the count tables (bpf/stackstore.bpf.h,
 * STACKS_COUNT_MAPS in bpf/stacks.bpf.h): FNV-1a's multiply a word, the high
 * bits folded down.  User space adds to a count table with it too
 * (lib/collect/counttable.h), so a key has one entry whoever claimed it. */
#define STACKS_HASH_SEED 14695981039346656037ull
/* entries a claim probes before it gives up: the table is nearly full */
#define STACKS_PROBES 16

static inline __attribute__((always_inline)) __u64 stacks_hash_word(__u64 h, __u64 word)
{
	h = (h ^ word) * 1099511628211ull;
	return h ^ (h >> 29);
}

/* A count key's hash, from its 32-bit words, two a step (its size a
 * multiple of 8, its padding zeroed; a struct stack_key is only 4-aligned,
 * and the verifier refuses a misaligned load from the stack): never 0, a
 * free entry's owner. */
static inline __attribute__((always_inline)) __u64 stacks_hash_key(const __u32 *words, __u32 nwords)
{
	__u64 h = STACKS_HASH_SEED;
#ifdef __bpf__
#pragma unroll
#endif
	for (__u32 i = 0; i + 1 < nwords; i += 2)
		h = stacks_hash_word(h, words[i] | (__u64)words[i + 1] << 32);
	return h | !h;
}

/* The slot or entry a claim in the stack store or a count table looks at
 * p-th for hash h, in a set of half from base (double hashing). */
static inline __attribute__((always_inline)) __u32 stacks_probe_at(__u64 h, __u32 p, __u32 base, __u32 half)
{
	return base + (__u32)((h + p * ((h >> 32) | 1)) % half);
}

/* A stack id that was not asked for (-K, kernel threads' user stacks, -U's
 * kernel stacks).  Other negative ids are the -errno bpf_get_stackid returned. */
#define STACK_ID_NONE (-32767)
/* The id of a stack the stack map had no room for (-ENOMEM). */
#define STACK_ID_LOST (-12)
/* The id of a stack not read: another walk was under way on its CPU (-EBUSY) */
#define STACK_ID_NESTED (-16)

/* Set in a key's exec_id by marple-offcpu --both for its on-CPU samples
 * (exec ids are small counts): stackframes_key masks it off. */
#define STACK_EXEC_ID_ON_CPU 0x80000000u
/* Set by marple-offcpu --runq for run-queue time (runnable, not running). */
#define STACK_EXEC_ID_RUNQ 0x40000000u

struct stack_key {
	__u32 pid;			/* tgid: the process */
	__s32 user_stack_id;
	__s32 kern_stack_id;
	char comm[MARPLE_COMM_LEN];
	__u32 exec_id;			/* which image of pid: task->self_exec_id (low 32
					 * bits), bumped by every execve, so stacks from
					 * before and after an exec stay apart and resolve
					 * against their own files */
};

/* The first sample of each image of a process (pid, exec_id) is announced on
 * the proc_news ring buffer (PROCNEWS_IMAGE) (and, with STACKS_EXEC_NOTES, each exec of a
 * process already seen) so that user space snapshots its maps while it lives.
 * layout[] is where that image's code, data, heap and stack begin and end
 * (mm->start_code, end_code, start_stack, start_data, end_data, start_brk,
 * env_start, env_end: /proc/PID/stat fields 26-28, 45-47, 50-51), randomized at
 * each exec: user space checks that the maps it read are of this image. */
#define STACKS_LAYOUT_N 8
struct pid_note {
	__u32 pid;
	__u32 exec_id;
	__u64 layout[STACKS_LAYOUT_N];
};
/* pids_seen key of an image */
#define STACKS_SEEN_KEY(pid, exec_id) (((__u64)(exec_id) << 32) | (__u32)(pid))
/* pids_seen value: announced; user space answered whether the image is
 * Python (py_procs: PY_WALK or PY_NATIVE); and it is not: its samples pay
 * nothing more for Python */
#define STACKS_SEEN 1
#define STACKS_SEEN_PY_ANSWERED 2
#define STACKS_SEEN_NOT_PYTHON 4

/* Per-CPU counters (map stack_counters), summed by stacksbpf_read_counters(). */
enum stack_counter {
	STACKS_SAMPLES,			/* events the program saw */
	STACKS_MAP_FULL,		/* not counted: the aggregation map was full */
	STACKS_COLLISION,		/* unused since stacks are stored by content (kept: 0) */
	STACKS_NOSPACE,			/* a stack was lost: stack map full */
	STACKS_USER_FAULT,		/* a user stack could not be read (-EFAULT, ...) */
	STACKS_KERN_FAULT,		/* a kernel stack could not be read */
	STACKS_RINGBUF_FULL,		/* not counted: a ring buffer record could not be reserved */
	STACKS_LOST_SAMPLES,		/* samples whose stack (user, kernel or both) the full stack
					 * map had no room for: counted under "[lost: stack map full]" */
	STACKS_NESTED,			/* events in an interrupt on a CPU whose task was in
					 * one of our stack walks: their stacks not read
					 * (STACK_ID_NESTED), the CPU's walk state the other's */
	STACKS_NCOUNTERS
};

/* Draining (lib/collect/stackdrain.h): the stack store and the counts are
 * two sets; programs write into the active one while user space reads the
 * other, interns its stacks and counts, and clears it.  A stack's id names its
 * set: ids [0, half) are set 0's, [half, 2 half) set 1's.  The control block
 * is element 0 of the mmapable array stacks_ctl. */
struct stacks_ctl {
	__u32 set;			/* the set programs write into: 0 or 1 (user space flips it) */
	__u32 drain_asked;		/* a program asked for a drain (a set passed half full) */
	__u64 stacks_used[2];		/* slots claimed in each half of the stack store */
	__u64 counts_used[2];		/* entries inserted into each set's counts map */
	__u32 gen[2];			/* each set's generation: user space adds 1 when it
					 * clears the set, so an id kept across drains with its
					 * generation (memleak's allocations) still says which
					 * stack it named: stacks_get_kept, stackdrain_intern_kept */
	__u64 asked_ns;			/* when drain_asked was set (bpf_ktime_get_ns): the wait is measured */
	__u32 drain_thread;		/* user space drains in a thread of its own, which reads
					 * the requests on drain_requests (else on proc_news) */
	__u32 pad;
};

/* --dwarf: the user registers libunwind starts from (x86-64: ip, sp and the
 * callee-saved ones) and the top of the user stack, copied at the sample by
 * stacks_copy_user() (stacks.bpf.h) and unwound by lib/collect/unwinddwarfwalk.h. */
#define USER_STACK_MAX 16384
enum { UREG_IP, UREG_SP, UREG_BP, UREG_BX, UREG_R12, UREG_R13, UREG_R14, UREG_R15, UREG_N };

struct user_stack {
	__u64 regs[UREG_N];
	__u32 len;			/* bytes of data[] copied from regs[UREG_SP] up */
	__u32 pad;
	__u8 data[USER_STACK_MAX];
};

/* A copy of the current task's state for --dwarf, filled by
 * stacks_dwarf_sample() (stacks.bpf.h) and unwound by lib/collect/unwinddwarf.h; type
 * is the collector's record type (ring buffers carry several). */
struct dwarf_sample {
	__u32 type;
	__u32 cpu;
	__u64 time;			/* bpf_ktime_get_ns */
	__u32 pid, tid;
	char comm[MARPLE_COMM_LEN];
	__s32 kern_stack_id;		/* STACK_ID_NONE or an id in the stacks map */
	__u32 exec_id;			/* which image of pid (struct stack_key) */
	struct user_stack user;		/* user.len 0: no user stack */
};

/* --unwind tables: a sample whose user walk stopped where a table was
 * missing (a process's first samples come before its files' tables are
 * built), sent to user space by stacks_send_cut() (stacks.bpf.h) on the
 * cut_samples ring buffer in place of its count, to be walked on there and
 * counted in the collector's drain (lib/collect/unwindcut.h): its count
 * key and the value it would have added, as the collector's count map has
 * them (stack the struct stack_key within key). */
#define CUT_KEY_MAX 64
#define CUT_VALUES_MAX 4
struct cut_sample {
	__u32 frames;			/* native frames of stack's stored user stack, the
					 * marker (UNWIND_MARK_NO_TABLE) last */
	__u32 exact;			/* user.regs[UREG_IP] is the interrupted PC, not a
					 * return address */
	__u64 time;			/* bpf_ktime_get_ns (--timed) */
	__u32 tid, cpu;
	struct stack_key stack;
	__u8 key[CUT_KEY_MAX];		/* the count map's key (its first key_size bytes) */
	__u64 value[CUT_VALUES_MAX];	/* ... and the sums to add (the first value_size) */
	struct user_stack user;		/* ip, sp and bp where the walk stopped (the
					 * other registers 0), the stack from sp up */
};

/* --unwind tables: user stacks walked in the kernel with rows built from each
 * file's .eh_frame by lib/collect/unwindtables.c.  A row holds from its pc (the
 * file's own address, as in its program headers) up to the next row's: how
 * to find the CFA (the caller's stack pointer; the return address is just
 * below it, at CFA-8) and where the caller's rbp was saved. */
enum unwind_cfa {
	UNWIND_NONE,			/* no CFI here (between FDEs): frame pointers where valid */
	UNWIND_RSP,			/* CFA = rsp + cfa_off */
	UNWIND_RBP,			/* CFA = rbp + cfa_off */
	UNWIND_PLT,			/* a PLT entry: CFA = rsp + 8, +8 from byte 11 of its 16 */
	UNWIND_END,			/* the return address is undefined: the outermost frame (_start) */
	UNWIND_SIGNAL,			/* __restore_rt: the interrupted registers are in the
					 * ucontext at rsp (rip +168, rsp +160, rbp +120) */
	UNWIND_UNSUPPORTED,		/* CFI whose rules the walker cannot follow: the walk
					 * stops (UNWIND_MARK_UNSUPPORTED), no guess */
};
enum { UNWIND_RBP_SAME, UNWIND_RBP_SAVED };	/* rbp unchanged, or at CFA + rbp_off */

struct unwind_row {
	__u32 pc;
	__s32 cfa_off;
	__u8 cfa;			/* enum unwind_cfa */
	__u8 rbp;			/* UNWIND_RBP_* */
	__s16 rbp_off;
	__u32 pad;			/* an array map's elements are 8-byte aligned: 16 bytes a row */
};

/* struct unwind_row is how user space builds a file's rows (16 bytes, the
 * on-disk cache's format too); the kernel holds them compact (4 bytes a row,
 * lib/collect/unwindtablescompact.h builds them): each distinct rule once in
 * unwind_rules, and each file's table, in the unwind_rows array of 32-bit
 * words (two to an element: an array map's elements are 8-byte aligned),
 * at its row_off:
 *   [0] page0: the first row's page (file address >> UNWIND_PAGE_SHIFT)
 *   [1] npages: pages from page0 to the last row's, included
 *   [2 .. 2 + npages] the page index: for page page0 + k, the position (in
 *       unwind_rows' words) of its first row, the row after the last for k =
 *       npages
 *   then the rows, one word each: the pc's offset in its page << 16 | its
 *   rule's index in unwind_rules.
 * A PC's row: its page's rows (~20 in compiled code) searched by
 * offset; none at or below it: the row before them, which started in an
 * earlier page; a PC past the last row's page: the last row. */
/* Pages of 1 KiB: ~20 rows each in compiled code (libLLVM 19, cc1 24, libc
 * 21; 300 at most), searched in 5 steps within 2 cache lines, for 0.15 byte
 * a row of index (4 KiB pages: ~90 rows, 7 steps, 0.05 byte) */
#define UNWIND_PAGE_SHIFT 10
#define UNWIND_PAGE_SEARCH_STEPS (UNWIND_PAGE_SHIFT + 1)	/* a page holds <= 2^10 rows */
#define UNWIND_ROW_RULE_BITS 16
#define UNWIND_MAX_RULES (1u << UNWIND_ROW_RULE_BITS)
#define UNWIND_TABLE_HEADER 2					/* words before the page index */
struct unwind_rule {
	__s32 cfa_off;
	__u8 cfa;			/* enum unwind_cfa */
	__u8 rbp;			/* UNWIND_RBP_* */
	__s16 rbp_off;
};
/* Rule 0 is UNWIND_NONE's; rule 1 UNWIND_UNSUPPORTED's, which rows whose
 * rule found no room left in unwind_rules get (the walk stops there). */
enum { UNWIND_RULE_NONE, UNWIND_RULE_UNSUPPORTED, UNWIND_RULES_RESERVED };
struct unwind_words {
	__u32 w[2];
};

/* One executable mapping of a process: its addresses [start, end), file
 * address = address - bias, and its file's table at word row_off of the
 * unwind_rows array, row_count rows.  row_count 0: no table; then row_off
 * UNWIND_NO_CFI says the code has no CFI at all (JIT, hand-written
 * assembly: frame pointers are followed where they look valid), anything
 * else that it has CFI but no table was loaded (too big for the room left,
 * unreadable): the walk stops there with UNWIND_MARK_NO_TABLE. */
#define UNWIND_NO_CFI 0xffffffffu
struct unwind_mapping {
	__u64 start, end, bias;
	__u32 row_off, row_count;
};

/* Each file whose table was built (or found to have no CFI, or no room),
 * by the kernel's identity of its inode (s_dev as the kernel encodes it:
 * major << 20 | minor, as /proc/PID/maps prints them; i_ino): the walker
 * finds the file of a PC its process's mappings do not hold (a process
 * not loaded yet: its first samples; a dlopen since) with bpf_find_vma.
 * loads: its PT_LOAD segments' file ranges [start, end) (start page-aligned)
 * and offset - vaddr, for the bias of a mapping at file offset pgoff. */
struct unwind_file_key {
	__u32 dev;
	__u32 pad;
	__u64 ino;
};
#define UNWIND_FILE_LOADS 4
struct unwind_file {
	__u32 row_off, row_count;	/* as in struct unwind_mapping */
	__u32 nloads;
	__u32 text_load;		/* 1 + the index in loads of its lowest executable
					 * PT_LOAD (where mm->start_code points in a process
					 * whose program it is); 0: not among loads */
	__u32 stamp;			/* the inode's change time when the table was made
					 * (unwind_stamp): an inode number freed and given to
					 * another file never finds this one's table; 0: any */
	__u32 words;			/* the table's words in unwind_rows (header, page
					 * index, rows): what evicting it frees (user
					 * space's: lib/collect/unwindtablesroom.h) */
	struct {
		__u64 start, end;
		__s64 delta;
	} loads[UNWIND_FILE_LOADS];
};

/* A file VMA the walker found in the kernel for a process whose mappings
 * user space had not read (unwind_learned: not loaded yet, or mapped
 * since), told user space once on proc_news (PROCNEWS_UNWIND_VMA): the
 * symbolizer names the frames in it even when the process is gone before
 * its maps are read again (a short-lived process's libraries, mapped by
 * ld.so after the exec's snapshot).  exec_id: the image (task->self_exec_id,
 * as stack_key's), whose frames only it names. */
struct unwind_vma_note {
	__u32 tgid, exec_id;
	__u64 start, end, pgoff;	/* pgoff in bytes */
	struct unwind_file_key key;
};

/* The mappings of a process live in unwind_mappings[slot * UNWIND_MAX_MAPPINGS
 * + i], i < n, sorted by start; tag is its mm->start_stack when they were
 * read (a pid reused by another program does not match). */
#define UNWIND_MAX_MAPPINGS 256
struct unwind_proc {
	__u64 tag;
	__u32 slot, n;
};

/* Marker frames the walker writes instead of a guess, in the non-canonical
 * address range no code is at; stackframes.c names them. */
#define UNWIND_MARK_NO_TABLE 0x8000000000000001ull	/* "[no unwind table]" */
#define UNWIND_MARK_UNSUPPORTED 0x8000000000000002ull	/* "[unsupported unwind rule]" */
#define UNWIND_MARK_TRUNCATED 0x8000000000000003ull	/* "[truncated: 256+ frames]" */
#define UNWIND_IS_MARK(a) (((a) >> 48) == 0x8000)

/* Per-CPU counters (map unwind_counters), for the trailer's "unwind". */
enum unwind_counter {
	UNWIND_STACKS,			/* user stacks walked */
	UNWIND_FRAMES_TABLE,		/* frames found with a table row */
	UNWIND_FRAMES_FP,		/* frames found by frame pointer (no row there) */
	UNWIND_COMPLETE,		/* stacks that reached the outermost frame */
	UNWIND_CUT_NO_TABLE,		/* stacks cut in code without CFI where rbp led nowhere valid */
	UNWIND_CUT_DEPTH,		/* stacks cut at MARPLE_STACK_DEPTH frames */
	UNWIND_CUT_FAULT,		/* stacks cut by a read of user memory that failed */
	UNWIND_NO_PROC,			/* stacks of a process whose mappings were not loaded yet
					 * (walked with bpf_find_vma) */
	UNWIND_REQUESTS,		/* requests to (re)read a process's mappings */
	UNWIND_CUT_NOT_LOADED,		/* stacks cut in code with CFI but no table loaded, or
					 * at a PC in no known mapping: [no unwind table] */
	UNWIND_CUT_UNSUPPORTED,		/* stacks cut at a rule the walker cannot follow */
	UNWIND_FRAMES_BY_VMA,		/* frames whose file bpf_find_vma found (process not
					 * loaded yet, or a mapping since) */
	UNWIND_VMA_BUSY,		/* the VMAs could not be looked at (the mmap lock, or
					 * the irq_work that releases it taken by an earlier
					 * call in this sample) */
	UNWIND_VMA_WALKS,		/* samples that walked their process's VMAs with the
					 * iterator (UNWIND_LOOKUP_VMA_ITER) */
	UNWIND_FRAMES_BY_PROGRAM,	/* frames found in the program's own code by
					 * mm->start_code (no VMA lookup) */
	UNWIND_FRAMES_LEARNED,		/* frames whose file an earlier sample of the process
					 * found (unwind_learned: no VMA lookup) */
	UNWIND_CUT_FILE_NOT_FOUND,	/* stacks cut at a PC whose file could not be found:
					 * the VMAs could not be looked at (busy), or a second
					 * bpf_find_vma in the sample was refused; part of
					 * cut_table_not_loaded */
	UNWIND_CUT_FILE_NOT_BUILT,	/* stacks cut at a PC whose file was found but has no
					 * table yet (being built, asked for); part of
					 * cut_table_not_loaded */
	UNWIND_FRAMES_SAME_MAPPING,	/* frames in the mapping of the frame before, or of
					 * the mapping before that: no search of the
					 * process's mappings */
	UNWIND_VMA_NOTES,		/* file VMAs told user space (struct unwind_vma_note) */
	UNWIND_VMA_NOTES_LOST,		/* ... not told: the ring buffer was full */
	UNWIND_FRAMES_URETPROBE,	/* return addresses a pending uretprobe had replaced
					 * with its trampoline, given back their own */
	UNWIND_LEAF_SINGLE_STEPPED,	/* leaves in an instruction a uprobe was running out
					 * of line, at the probed instruction's address */
	UNWIND_FRAMES_MAPPING_BEFORE,	/* frames_same_mapping's in the mapping before the
					 * frame before's (libc's, back from the program) */
	UNWIND_WINDOW_READS,		/* copies of the user stack the table walk read its
					 * words from (struct unwind_window) */
	UNWIND_CUTS_SENT,		/* stacks cut where a table was missing, sent to user
					 * space to be finished (struct cut_sample) */
	UNWIND_CUTS_NOT_SENT,		/* ... counted cut instead: the ring buffer was full */
	UNWIND_FRAMES_LAST_STACK,	/* frames whose rule (a row's, or none: frame pointers)
					 * the CPU's last stack of the process gave (struct
					 * unwind_memo): no search of the mappings or the table */
	UNWIND_PROC_LAST_STACK,		/* stacks whose process's mappings (its slot) the CPU's
					 * last stack gave: no look-up in unwind_procs */
	UNWIND_NCOUNTERS
};
#define UNWIND_COUNTER_NAMES \
	{ "stacks", "frames_by_table", "frames_by_frame_pointer", "complete", "cut_no_table", \
	  "cut_depth_limit", "cut_read_fault", "no_table_yet", "refresh_requests", "cut_table_not_loaded", \
	  "cut_unsupported_rule", "frames_file_by_vma", "find_vma_busy", "vma_walks", "frames_file_by_program", \
	  "frames_file_learned", "cut_file_not_found", "cut_file_not_built", "frames_same_mapping", "vma_notes", \
	  "vma_notes_lost", "frames_uretprobe", "leaf_single_stepped", \
	  "frames_mapping_before", "stack_window_reads", "cuts_sent", "cuts_not_sent", \
	  "frames_rule_from_last_stack", "mappings_from_last_stack" }

/* How the walker finds the file of a PC its process's loaded mappings do
 * not hold (rodata unwind_file_lookup; the trailer's unwind.file_lookup):
 * one walk of the process's VMAs a sample (Linux 6.7's iterator, if the
 * kernel lets a perf-event program use it), or bpf_find_vma (Linux 5.17),
 * which finds one file a sample. */
enum { UNWIND_LOOKUP_FIND_VMA, UNWIND_LOOKUP_VMA_ITER };
#define UNWIND_LOOKUP_NAMES { "find_vma", "vma_iterator" }

/* --unwind modes (rodata stacks_unwind of every stack collector) */
enum { UNWIND_MODE_FP, UNWIND_MODE_TABLES, UNWIND_MODE_DWARF };

/* Where a sample's BPF time goes (issue 38): every STACKS_STAGE_EVERY-th
 * sample of a CPU (stacks_fill_key) is timed stage by stage into the
 * per-CPU struct stacks_stage_clock (map stacks_samples), and every
 * STACKS_STAGE_EVERY-th count update; the trailer's sampling.stages gives
 * each stage's nanoseconds per timed sample.  Timing one sample in 8 keeps
 * the clock's reads (~10 a timed sample) out of the cost it measures. */
#define STACKS_STAGE_EVERY 8
enum stacks_stage {
	STACKS_STAGE_KERNEL,		/* reading the kernel stack (bpf_get_stack) */
	STACKS_STAGE_USER,		/* walking the user stack (tables or frame pointers) */
	STACKS_STAGE_RUNTIME,		/* the Python check, walk and telling (python.bpf.h) */
	STACKS_STAGE_STORE,		/* hashing and storing stacks (stackstore.bpf.h), both */
	STACKS_STAGE_NEWS,		/* is the process's image known (pids_seen), or announced */
	STACKS_STAGE_COUNTS,		/* the count map's update (stacks_add), per timed update */
	STACKS_NSTAGES
};
#define STACKS_STAGE_NAMES { "kernel_stack", "user_walk", "runtime_check", "store", "process_news", "counts" }
struct stacks_stage_clock {
	__u64 ns[STACKS_NSTAGES];	/* nanoseconds in each stage, over the timed samples */
	__u64 timed;			/* samples timed */
	__u64 timed_counts;		/* count updates timed (STACKS_STAGE_COUNTS) */
	__u64 seen;			/* samples begun on this CPU */
	__u64 last;			/* when the stage running began (bpf_ktime_get_ns) */
	__u32 on;			/* this sample is being timed */
	__u32 counts_on;		/* the next count update is timed */
};
/* An image a CPU found announced, answered for good (stacks_image_look):
 * its pids_seen key and value, and the samples of it left before it is
 * looked up again (STACKS_SEEN_RECHECK, or pids_seen_gen moved on from
 * gen). */
struct stacks_seen_memo {
	__u64 key;
	__u32 value;
	__u32 left;
	__u32 gen, pad;
};
/* A CPU remembers this many images, one slot each by its pid's low bits:
 * with the last image alone remembered, a CPU sharing its time among a
 * build's processes looked 47% of its samples up in pids_seen, 9-17% with
 * these (bench callstack-bpf's load). */
#define STACKS_SEEN_MEMOS 64
/* A CPU's sample (map stacks_samples): its clock, and what it learned of its
 * image before its user stack was walked (stacks_image_look), read back
 * after the walk from here, not carried in registers: the verifier walks
 * the stack walk and the store once, not once for each answer (35,200
 * instructions against 28,300 when it did). */
struct stacks_sample {
	struct stacks_stage_clock clock;
	__u32 py_check;			/* to be checked for Python frames */
	__u32 seen;			/* the image was announced before (pids_seen) */
	__u64 walking;			/* a stacks_fill_key is under way on this CPU
					 * (64 bits: BPF exchanges no narrower) */
	struct stacks_seen_memo memo[STACKS_SEEN_MEMOS];
};
/* A CPU's samples of the same image look it up in pids_seen once in this
 * many (the process_news stage, the lookup most of it, was 900-1,600 ns
 * a timed sample on a loaded machine: bench callstack-bpf); in between user space may drop its entry to have it
 * announced again, which a recheck then finds. */
#define STACKS_SEEN_RECHECK 16

#define STACKS_COUNTER_NAMES \
	{ "samples", "map_full", "stack_collisions", "stack_map_full", "user_stack_errors", \
	  "kernel_stack_errors", "ringbuf_full", "samples_stack_map_full", "samples_nested" }

#endif
