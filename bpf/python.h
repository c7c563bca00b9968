/* python.h — what the kernel and user sides of the Python frame walker share
 * (bpf/python.bpf.h, lib/collect/pyframes.c); PHP 8.2 is walked with the same
 * maps and words (PY_F_PHP below).
 *
 * User space finds a CPython process (3.6 and later: an ELF it maps exports
 * _PyEval_EvalFrameDefault and PyCode_Type), and puts in py_procs, keyed by
 * tgid, where its _PyRuntime is and the struct offsets of its version
 * (enum py_flags says which of the ways below the version takes).  At each
 * sample the BPF side finds the thread's PyThreadState, walks its frames
 * (3.11+: _PyInterpreterFrame.previous; 3.6-3.10: PyFrameObject.f_back) and
 * stores one word per frame, leaf first, in the stacks map (PY_FRAME_*): the
 * code object, the instruction it is at and whether the frame is the first
 * of its _PyEval_EvalFrameDefault activation.
 * No string is read in BPF: user space names the code objects.
 */
#ifndef MARPLE_PYTHON_H
#define MARPLE_PYTHON_H

#include "stacks.h"	/* struct stack_key, MARPLE_STACK_DEPTH */

enum py_state {
	PY_PENDING,			/* asked user space; not walked yet */
	PY_NATIVE,			/* not Python, or a version without a layout: natively */
	PY_WALK,			/* walk its frames with the offsets below */
};

/* The walks a program checks and runs (rodata py_walks): user space leaves
 * out those a capture cannot meet, whose checking would only lengthen the
 * load (lib/collect/pyframes.h's pyframes_walks_for) */
enum py_walks {
	PY_WALKS_CPYTHON = 1,
	PY_WALKS_PHP = 2,
	PY_WALKS_PERL = 4,
	PY_WALKS_RUBY = 8,
	PY_WALKS_ALL = 15,
};

/* How a version's frames and thread states are found (struct py_proc.flags) */
enum py_flags {
	PY_F_TSS = 1,			/* thread state by the pthread key at tss_key */
	PY_F_GIL = 2,			/* ... or as the GIL holder, at tstate_current */
	PY_F_THREAD_LIST = 4,		/* ... or in the interpreter's list of them */
	PY_F_PTHREAD_ID = 8,		/* tstate_tid is thread_id (pthread_self, the
					 * thread pointer), not native_thread_id */
	PY_F_CFRAME = 16,		/* tstate_frame is a _PyCFrame *, its frame
					 * at cframe_current (3.11, 3.12) */
	PY_F_FRAME_OBJECTS = 32,	/* PyFrameObject chain (3.6-3.10): frame_instr is
					 * the int f_lasti, every frame an entry */
	PY_F_OWNER = 64,		/* frame_entry is the owner byte: a frame owned
					 * by the C stack (3) is its activation's shim,
					 * the frame before it the entry (3.12+) */
	PY_F_PHP = 128,			/* not a CPython: a PHP (non-ZTS), read below */
	PY_F_LAUNCHER = 256,		/* PY_PENDING only: its program is a launcher
					 * (struct py_file.launch_slot), its library
					 * not found yet: looked for again each sample */
	PY_F_PERL = 512,		/* not a CPython: a threaded Perl 5, walked by
					 * struct py_proc.perl below */
	PY_F_RUBY = 1024,		/* not a CPython: a CRuby, read below */
};

/* A PHP process (PY_F_PHP) is walked with the same struct py_proc and the
 * same frame words, its members read as the Zend engine's: runtime is
 * &executor_globals, tstate_frame its current_execute_data; frame_code,
 * frame_previous and frame_instr are zend_execute_data's func,
 * prev_execute_data and opline; frame_entry the bit (counted from the
 * frame's start) of ZEND_CALL_TOP in This.u1.type_info: a frame that began
 * an execute_ex activation, if its function is not internal (a callback of
 * C called directly is marked so too); code_adaptive is zend_op.lineno,
 * the word's line in place of an instruction; code_qualname and
 * code_linetable zend_function's function_name and scope (what identifies
 * a function user space named).  Only the main thread runs PHP there. */
/* zend_function.type (its first byte) */
/* A CRuby process (PY_F_RUBY, lib/collect/rubylayout.h) likewise: runtime
 * is &ruby_current_vm_ptr, tstate_frame rb_vm_t's main thread, tstate_tid
 * that thread's ec, interp_head, interp_threads and cframe_current the
 * ec's vm_stack, vm_stack_size and cfp; the control frames from cfp up to
 * the stack's end (frame_previous is their size) are read at frame_instr
 * (pc), frame_code (iseq) and frame_entry (ep: the env's flags at ep[0],
 * its method entry at ep[-2]); code_adaptive is rb_iseq_t.body and
 * tstate_next the body's iseq_encoded.  A word holds the iseq and its pc's
 * position (a method's frame: its method entry, which names its class, and
 * the position in its iseq), or a C method's method entry (position
 * PY_LASTI_UNKNOWN), the frame that began a vm_exec activation
 * (VM_FRAME_FLAG_FINISH) marked as the entry.
 * Each thread's ec is its own ruby_current_ec (struct py_proc's ruby_tls_*
 * below); a libruby without one: the main thread's only. */
#define RUBY_FRAME_MAGIC_MASK 0x7fff0001
#define RUBY_FRAME_MAGIC_CFUNC 0x55550001
#define RUBY_FRAME_MAGIC_METHOD 0x11110001
/* An object's type in its flags' low 5 bits, an imemo's kind in bits
 * 12-15 (also lib/collect/rubylayout.h's): a method entry, an iseq, the
 * imemo holding a method's $~, its method entry after its flags */
#define RUBY_FLAGS_TYPE 0x1f
#define RUBY_T_IMEMO 0x1a
#define RUBY_IMEMO_SHIFT 12
#define RUBY_IMEMO_MENT 6
#define RUBY_IMEMO_ISEQ 7
#define RUBY_IMEMO_SVAR 2
#define RUBY_FRAME_FLAG_FINISH 0x20
#define RUBY_FRAME_FLAG_CFRAME 0x80
#define PHP_INTERNAL_FUNCTION 1
#define PHP_USER_FUNCTION 2
#define PHP_EVAL_CODE 4
#define PY_OWNED_BY_CSTACK 3

/* A Perl process (PY_F_PERL, a build with ithreads: its interpreter's
 * variables in a struct interpreter): runtime is &PL_curinterp, the main
 * interpreter (other interpreters, threads->create's, are not walked: the
 * main thread's stacks only).  Its sub calls are the context stack
 * (PERL_CONTEXT entries of the current PERL_SI, then of the ones it was
 * pushed over): each sub (or format, or string eval / require) gives a
 * word, its CV and the line of the COP it is at (the innermost PL_curcop,
 * each outer one the next inner frame's blk_oldcop), then the main
 * program (PL_main_cv).  An entry is a frame its own runops activation
 * began: a sub called from C (its blk_sub.retop NULL: call_sv, sort SUB,
 * MULTICALL), or the innermost frame over a sort { } block's context
 * (CXt_NULL, pushed by pp_sort on its own stack info; nothing else pushes
 * one in 5.36); a block running with no sub over it (PL_op set: between
 * two comparisons sort's C code runs with none) gets a word of its own,
 * its enclosing sub's CV at the block's line.  A sub context whose CV is
 * not set yet (pp_entersub is pushing it) is passed, and so is a sort
 * SUB's (CXp_MULTICALL) when it is the innermost and PL_op is unset
 * (sort's C runs between two calls).  The leaf sub's line is
 * PY_LASTI_UNKNOWN until its first statement runs (PL_curcop is still its
 * caller's). */
#define PERL_CXT_NULL 0
#define PERL_CXT_SUB 9
#define PERL_CXT_FORMAT 10
#define PERL_CXT_EVAL 11
#define PERL_CXTYPEMASK 15
#define PERL_CXP_MULTICALL 16
#define PERL_CXP_TRY 128
#define PERL_SVT_PVCV 13
/* Bytes of a Perl's context stack (and of its interpreter's PL_op to
 * PL_curstackinfo) the BPF walk reads at once; a context is 8 to 128 */
#define PERL_CX_BYTES 1024
#define PERL_CX_MAX 128

struct perl_offsets {
	__u16 interp_op, interp_curcop, interp_curstackinfo, interp_main_cv;	/* struct interpreter */
	__u16 si_cxstack, si_cxix, si_prev;	/* PERL_SI */
	__u16 cx_size, cx_oldcop, cx_retop, cx_sub_cv, cx_eval_cv;	/* PERL_CONTEXT (its type at 0) */
	__u16 cop_line;				/* COP */
};

/* One process (py_procs value).  Offsets are in bytes. */
struct py_proc {
	__u64 runtime;			/* address of _PyRuntime (3.6: of _PyThreadState_Current) */
	__u32 exec_id;			/* the image it was read from (stack_key.exec_id) */
	__u32 state;			/* enum py_state */
	__u32 tss_key;			/* in _PyRuntime: autoTSSkey (Py_tss_t: int
					 * initialized, then the pthread key) */
	__u32 tstate_current;		/* in _PyRuntime: gilstate.tstate_current */
	__u32 tsd_block;		/* glibc: from the thread pointer (fsbase) to
					 * struct pthread.specific_1stblock (16 bytes a key:
					 * seq, data), derived by user space at start */
	__u16 tstate_frame;		/* PyThreadState's current frame (or cframe) */
	__u16 tstate_tid;		/* PyThreadState.native_thread_id (or thread_id) */
	__u16 cframe_current;		/* _PyCFrame.current_frame */
	__u16 frame_code;		/* _PyInterpreterFrame.f_code (PyFrameObject.f_code) */
	__u16 frame_previous;		/* .previous (.f_back) */
	__u16 frame_instr;		/* .prev_instr/.instr_ptr (a _Py_CODEUNIT *; .f_lasti) */
	__u16 frame_entry;		/* .is_entry (a bool), or .owner */
	__u16 code_adaptive;		/* PyCodeObject.co_code_adaptive: the first code unit */
	__u16 code_qualname;		/* .co_qualname and .co_linetable: a code object's */
	__u32 unknown_samples;		/* PY_PENDING: its samples so far, stored native only */
	__u16 code_linetable;		/* identity as user space named it (py_codes) */
	__u16 flags;			/* enum py_flags */
	__u32 interp_head;		/* in _PyRuntime: interpreters.head */
	__u16 interp_threads;		/* PyInterpreterState's first thread state */
	__u16 tstate_next;		/* PyThreadState.next */
	/* a process in another pid namespace (a container) knows its threads
	 * by that namespace's ids: its nsfs device and inode, else 0 */
	__u64 pidns_dev, pidns_ino;
	struct perl_offsets perl;	/* PY_F_PERL */
	/* PY_F_RUBY: a thread's own ec is libruby's thread-local
	 * ruby_current_ec (general dynamic TLS): the module id ld.so put in
	 * the GOT slot at runtime + ruby_tls_slot (0: not found, the main
	 * thread's ec only), glibc's dtv at the thread pointer + 8, 16 bytes
	 * a module, the block's address first, the variable at
	 * ruby_tls_offset in it; used only if the ec's thread_ptr (at
	 * ruby_ec_thread) says, at ruby_thread_id, that its thread_id
	 * (pthread_self) is the sampled thread's pointer */
	__s32 ruby_tls_slot;
	__u32 ruby_tls_offset;
	__u16 ruby_ec_thread, ruby_thread_id;
	__u16 ruby_iseq_size;		/* rb_iseq_constant_body.iseq_size (beside
					 * iseq_encoded, tstate_next: both in its first 16) */
};

/* What one Python ELF file tells (py_files, keyed by its inode as
 * struct unwind_file_key is), so that a process whose program it is, or
 * whose program is a launcher of it, is walked from its first sample,
 * before user space has looked at it: proc's runtime is _PyRuntime's file
 * address; text_vaddr and text_offset its lowest executable PT_LOAD's.  The
 * program's load bias is the process's start_code less text_vaddr; a
 * library's, from the VMA that maps its text: vm_start - vm_pgoff * 4096 -
 * (text_vaddr - text_offset).
 * A launcher (launch_slot set, proc unused) is a program that runs a shared
 * libpython (pyenv's python3.12 calls libpython3.12.so's Py_BytesMain; so
 * is Debian's ruby3.1 of libruby-3.1.so, through ruby_init):
 * launch_slot is the file address of the GOT slot through which it calls
 * it, a pointer into the library once bound (lazily: at the first call). */
struct py_file {
	struct py_proc proc;
	__u64 text_vaddr, text_offset;
	__u64 launch_slot;
	__u32 stamp;			/* the file's change time when read
					 * (unwind_stamp, mappedfile_stamp) */
	__u32 unused;
};

/* On proc_news (a PROCNEWS_PYTHON record): look at a process (stack_id -1), or name
 * the code objects of a stack of Python frames seen for the first time, now,
 * while the process lives (stack_id: its id in the stacks map).  A stack
 * whose code objects user space has all named, each still the object it
 * named (py_codes), is told with PY_REQUEST_KNOWN and without waking user
 * space: named from its cache, in order with the requests before it, when
 * it next reads the ring.  A wake-up a new stack (one sample in three on a
 * busy interpreter: each line's instruction makes its own stack) cost the
 * collector more CPU than the rest of its Python work. */
struct py_request {
	__u32 pid;
	__u32 exec_id;
	__s32 stack_id;
	__u32 flags;			/* PY_REQUEST_KNOWN */
};
#define PY_REQUEST_KNOWN 1

/* py_codes: the code objects user space has named, by process and address,
 * with what identified them (their co_qualname and co_linetable objects):
 * one freed and another made at its address (pointing at other objects) is
 * not known. */
struct py_code_key {
	__u32 tgid;
	__u32 pad;
	__u64 code;
};
struct py_code_id {
	__u64 qualname, linetable;
};

/* The stacks-map word of a frame: the code object's address (48 bits), the
 * index of the code unit it runs (15 bits; 3.6-3.10: f_lasti as it is;
 * PY_LASTI_UNKNOWN when outside 0..32766 or not yet started; PHP: the
 * line, PY_LASTI_UNKNOWN when none can be read), and is_entry
 * in the top bit. */
#define PY_FRAME_CODE(w) ((w) & 0xffffffffffffull)
#define PY_FRAME_LASTI(w) (((w) >> 48) & 0x7fff)
#define PY_FRAME_ENTRY(w) ((w) >> 63)
#define PY_LASTI_UNKNOWN 0x7fff
#define PY_MAX_FRAMES 255		/* bpf_loop steps: one stacks-map value less the mark */

/* In a stored user stack, the word between the native frames (before it)
 * and the Python frames (after it, PY_FRAME_* words, leaf first): a
 * non-canonical address, as unwindtables.bpf.h's markers are. */
#define PY_STACK_MARK 0x8000000000000010ull
#define PY_IS_STACK_MARK(w) ((w) == PY_STACK_MARK)

/* Per-CPU counters (py_counters). */
enum py_counter {
	PY_SAMPLES,			/* samples of processes walked */
	PY_STACKS,			/* ... whose Python frames were stored */
	PY_NO_THREAD_STATE,		/* a thread without a Python thread state */
	PY_BY_GIL_HOLDER,		/* thread state found as the GIL holder (not by TSS) */
	PY_NO_FRAMES,			/* a thread state with no frame */
	PY_CUT_DEPTH,			/* walks cut at PY_MAX_FRAMES frames */
	PY_READ_FAULT,			/* walks cut by a read that failed */
	PY_REQUESTS,			/* processes asked about */
	PY_WALK_NS,			/* nanoseconds walking Python frames, in the
					 * walks timed */
	PY_UNKNOWN_SAMPLES,		/* user stacks of processes not known yet (asked
					 * about, their program no known Python file) */
	PY_FROM_FILE,			/* processes walked from their first sample: their
					 * program a Python file known (py_files) */
	PY_BY_THREAD_LIST,		/* thread state found in the interpreter's list */
	PY_FROM_LIBRARY,		/* processes walked from their first sample after
					 * their launcher's call into libpython was bound */
	PY_LAUNCHER_UNBOUND,		/* samples of a launcher before that call was bound
					 * (the interpreter not started: no Python frames) */
	PY_LIBRARY_BUSY,		/* the library's VMA not found: bpf_find_vma refused */
	PY_LIBRARY_UNKNOWN,		/* ... found, but not a Python file known, or no
					 * bpf_find_vma in this kernel */
	PY_FILE_STALE,			/* a process's program known by its inode, but
					 * changed since it was read (another file given
					 * the inode, or rewritten in place); a launcher's
					 * library so changed counts as library_unknown's
					 * samples do, in samples_process_unknown */
	PY_REQUEST_LOST,		/* a process walked from its file not asked about:
					 * the ring full (looked at when its stacks merge) */
	PY_CHECKED_LATELY,		/* new stacks not told: their Python frames' code
					 * objects found named, as they were, by this CPU
					 * less than PY_CHECKED_FRESH_NS before */
	PY_WALKS_TIMED,			/* walks in the samples the stages' clock
					 * times (one in STACKS_STAGE_EVERY) */
	PY_TELL_LOST,			/* new stacks not told: the ring full (user
					 * space names them when it reads them) */
	PY_NCOUNTERS
};
#define PY_COUNTER_NAMES \
	{ "samples_of_python_processes", "stacks_walked", "no_thread_state", "thread_state_by_gil", "no_frames", "cut_depth_limit", \
	  "cut_read_fault", "processes_asked", "walk_ns", "samples_process_unknown", "processes_known_by_file", \
	  "thread_state_by_list", "processes_known_by_library", "samples_launcher_unbound", \
	  "library_lookup_busy", "library_unknown", "files_changed_since_read", \
	  "requests_lost_ring_full", "stacks_checked_lately", "walks_timed", \
	  "stacks_not_told_ring_full" }

#endif
