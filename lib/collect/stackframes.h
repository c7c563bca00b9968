/* stackframes.h — turn BPF stack ids (or raw addresses) into the root-first
 * frames of a marple stack record: comm first, then user frames outermost
 * first, an optional "-" delimiter, then kernel frames (optionally "_[k]").
 *
 * It only reads: the stack map (by id) and the symbols.  Attaching, the
 * pid notes, counters and count tables of bpf/stacks.bpf.h are stacksbpf.h's.
 * Usage, with the kernel side in bpf/stacks.bpf.h (struct stack_key):
 *
 *   struct stackframes *sf = stackframes_new(syms, ksyms,
 *                   bpf_map__fd(skel->maps.stacks), SF_DELIMIT | SF_ANNOTATE_KERNEL);
 *   for each key/value of the collector's hash map:
 *       stackframes_key(sf, &key);          // comm, user frames, "-", kernel frames
 *       stackframes_write(sf, stdout, value);
 *
 * Unresolved addresses become "[unknown]" (or "[module]" when the mapping is
 * known but has no symbol there, as stackcollapse-perf.pl does).  A stack that
 * could not be read (negative id other than STACK_ID_NONE, or an id no longer
 * in the stack map) becomes one "[missing user stack]"/"[missing kernel stack]"
 * frame, and is counted (stackframes_stats); one the stack map had no room
 * for (STACK_ID_LOST) is "[lost: stack map full]", counted by the kernel side.
 * An unnamed frame in a JIT's anonymous executable memory is a placeholder
 * (jitframes.h) until written: stackframes_write_table, stackframes_write
 * and stackframes_jit_names name it then, from the process's perf map if one
 * has appeared since.
 */
#ifndef MARPLE_STACKFRAMES_H
#define MARPLE_STACKFRAMES_H

#include <jansson.h>
#include <linux/types.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "stacks.h"
#include "syms.h"

enum stackframes_flags {
	SF_DELIMIT = 1,			/* "-" between user and kernel frames */
	SF_ANNOTATE_KERNEL = 2,		/* kernel frames get "_[k]" */
	SF_ADDRESSES = 4,		/* unresolved user frames as "[module+0xoff]" */
	SF_DWARF_ACCEPTED = 8,		/* the collector takes --unwind dwarf: advice may name it */
	SF_NO_INLINE = 16,		/* no inline frames from DWARF (--no-inline) */
	SF_NO_SOURCES = 32,		/* no DWARF nor Go table read: no lines, no
					 * inline frames (MARPLE_SOURCES=off) */
};

struct stackframes;
struct stackframes *stackframes_new(struct syms_cache *syms, struct ksyms *ksyms, int stack_map_fd,
				    int flags);
void stackframes_free(struct stackframes *sf);

/* Start a stack whose first frame is comm (NUL-terminated or MARPLE_COMM_LEN bytes). */
void stackframes_begin(struct stackframes *sf, const char *comm);
/* Append user frames from a leaf-first array of return addresses. */
void stackframes_user_ips(struct stackframes *sf, pid_t pid, const uint64_t *ips, size_t n);
/* The same, named from image exec_id of pid (syms_cache_lookup_exec). */
void stackframes_user_ips_exec(struct stackframes *sf, pid_t pid, uint64_t exec_id, const uint64_t *ips,
			       size_t n);
/* Replace the user frames just appended, from frames[first] (stackframes_frames
 * counts) to the end, with names[0..n), root first (lib/collect/pyframes.c
 * puts Python functions in place of the interpreter's); before any kernel
 * frame.  The names must outlive sf's use of this stack. */
void stackframes_user_splice(struct stackframes *sf, size_t first, const char *const *names, size_t n);
/* A user stack holding Python frames after its native ones (bpf/python.h
 * PY_STACK_MARK) gets its native frames appended as any other, from
 * frames[first] on, then merge(arg, sf, pid, exec_id, first, ips, n, words,
 * m) with the n native addresses and the m Python words (leaf first), to
 * splice them in (lib/collect/pyframes.c); weigh(arg, weight) is told the
 * weight that stack is counted with (stackframes_weigh).  Without merge the
 * Python words are left out. */
void stackframes_set_python(struct stackframes *sf,
			    void (*merge)(void *arg, struct stackframes *sf, pid_t pid, uint64_t exec_id, size_t first,
					  const uint64_t *ips, size_t n, const uint64_t *words, size_t m),
			    void (*weigh)(void *arg, uint64_t weight), void *arg);
/* Say what name is (marple-format(5), the trailer's "frames"): kind
 * ("python", "jit"...), file or NULL, line or 0.  The first description of a
 * name wins; frames named from addresses are described as they are named,
 * and one whose name an earlier frame of other code (another file, build id
 * or offset) has is told apart by an identity tag (stackframes_tags). */
void stackframes_describe(struct stackframes *sf, const char *name, const char *kind, const char *file, int line);
/* Add "frames" to a stack section's trailer: a description of every frame
 * name made so far. */
void stackframes_trailer_add(const struct stackframes *sf, json_t *trailer);
/* on: keys marked STACK_EXEC_ID_ON_CPU (marple-offcpu --both), those marked
 * STACK_EXEC_ID_RUNQ (--runq) and the others become different records of a table (stackframes_collect), to be written by
 * stackframes_write_table_cpu; not for tables written otherwise. */
void stackframes_split_cpu(struct stackframes *sf, int on);
/* Did the user stack just appended reach a stack root (_start, clone...)?
 * 0 too when it could not be judged (cut at the depth limit). */
int stackframes_user_whole(const struct stackframes *sf);
/* Append kernel frames from a leaf-first array (with the delimiter first if asked). */
void stackframes_kernel_ips(struct stackframes *sf, const uint64_t *ips, size_t n);
/* A stack as the namer takes it: n addresses, leaf first; or, n < 0, why
 * there are none: STACK_ID_NONE (no stack: nothing appended), STACK_ID_LOST
 * (the store was full), any other (it could not be read: "[missing ...]"). */
struct stack_ips {
	const uint64_t *ips;
	int n;
};
void stackframes_user_stack(struct stackframes *sf, pid_t pid, uint64_t exec_id, struct stack_ips s);
void stackframes_kernel_stack(struct stackframes *sf, struct stack_ips s);
/* begin + both stacks for a key, its comm, pid and exec id (k's stack ids
 * are not read: stackdrain.h hands the addresses of drained stacks). */
void stackframes_key_stacks(struct stackframes *sf, const struct stack_key *k, struct stack_ips user,
			    struct stack_ips kern);
/* The same from ids of the kernel's stack store (bpf/stacks.h), read there:
 * a stack id is a slot of that store and nothing else. */
void stackframes_user_id(struct stackframes *sf, pid_t pid, int id);
void stackframes_user_id_exec(struct stackframes *sf, pid_t pid, uint64_t exec_id, int id);
void stackframes_kernel_id(struct stackframes *sf, int id);
/* begin + user_id_exec + kernel_id for a key. */
void stackframes_key(struct stackframes *sf, const struct stack_key *k);
/* Read a stack-map id into ips[MARPLE_STACK_DEPTH] (leaf first); returns the depth, -1 if absent. */
int stackframes_read_id(struct stackframes *sf, int id, uint64_t *ips);

/* The frames built so far (root first); valid until the next begin. */
const char *const *stackframes_frames(struct stackframes *sf, size_t *n);
/* Their identity tags (marple-format(5)), as many: 0 for a frame that is
 * what its name is described as in the trailer, else the tag it is
 * described under, for stream_write_stack_tagged. */
const uint32_t *stackframes_tags(const struct stackframes *sf);
void stackframes_write(struct stackframes *sf, FILE *f, uint64_t weight);
/* Name the JIT frames of the stack built so far with what is known now (a
 * stack written at once, not through a table: stackframes_write does). */
void stackframes_jit_names(struct stackframes *sf);
/* Count weight for the stack just built (stackframes_write and _collect do;
 * call it when writing the frames another way). */
void stackframes_weigh(struct stackframes *sf, uint64_t weight);
/* The unwinding mode ("fp" by default, "dwarf", "tables"), for the advice
 * stacksbpf_trailer_add gives when many user stacks are incomplete. */
void stackframes_set_unwind_mode(struct stackframes *sf, const char *mode);
const char *stackframes_unwind_mode(const struct stackframes *sf);
/* The options of this collector that unwind from .eh_frame, for that advice
 * ("--unwind tables", and the dwarf ones with SF_DWARF_ACCEPTED). */
const char *stackframes_unwind_advice(const struct stackframes *sf);

/* Interpreters whose own frames marple does not walk yet: their stacks show
 * the interpreter's C functions, not the script's (PHP's are walked in
 * 8.2, Perl's in 5.36: a stack merged with them is not counted here). */
enum { STACKFRAMES_PERL, STACKFRAMES_RUBY, STACKFRAMES_PHP, STACKFRAMES_NUNWALKED };
extern const char *const stackframes_unwalked_names[STACKFRAMES_NUNWALKED];

struct stackframes_stats {
	uint64_t missing_user;		/* user stacks shown as "[missing user stack]" */
	uint64_t missing_kernel;
	uint64_t unknown_frames;	/* addresses without a symbol */
	uint64_t inline_frames;		/* frames of inlined functions added (DWARF) */
	uint64_t go_frames;		/* stripped Go frames named from .gopclntab */
	/* user stacks judged whole or not (shorter than the depth limit): whole
	 * when one of the three outermost frames is _start, __libc_start_main,
	 * clone, clone3, start_thread... or the outermost is in libc unnamed */
	uint64_t user_stacks, incomplete_user_stacks;		/* distinct stacks */
	/* of the incomplete: ending at a marker frame ([no unwind table],
	 * [unsupported unwind rule]), at code no symbol names; the rest end at
	 * a named function (no CFI there, or a frame pointer that led nowhere) */
	uint64_t incomplete_at_marker, incomplete_at_unnamed;
	/* weight of the stacks through an interpreter whose own frames are not
	 * walked (STACKFRAMES_PERL ...), and a process of each */
	uint64_t unwalked_weight[STACKFRAMES_NUNWALKED];
	int unwalked_pid[STACKFRAMES_NUNWALKED];
	uint64_t user_weight, incomplete_user_weight;		/* their weights, as written */
};
void stackframes_stats(const struct stackframes *sf, struct stackframes_stats *out);
/* From 0 again (continuous mode: each section counts its own). */
void stackframes_stats_reset(struct stackframes *sf);
/* Continuous mode, after a section is written and its tables of records
 * freed: the names, frame ids and descriptions start from none again (a
 * week of --every sections kept every frame name any section had); only
 * which code each name stood for first is kept (a hash and a tag, ~60 bytes
 * a name), so that a name without tag is the same code in every section.
 * Names and ids given out before are invalid after it. */
void stackframes_next_section(struct stackframes *sf);
/* The symbol cache forgot processes and files (syms_cache_forget_marked):
 * a name looked up since may sit where a forgotten one was. */
void stackframes_syms_forgotten(struct stackframes *sf);

/* Add the frames built so far to t, so that keys which symbolize to the same
 * frames become one record (weight in count[0]).  t's keys are sf's: its
 * frames by their ids in sf (1-3 bytes a frame), to be written by
 * stackframes_write_table with the same sf. */
struct hashtab;
/* Returns the record's position in t (hashtab_index): the same for every key
 * whose frames are the same. */
size_t stackframes_collect(struct stackframes *sf, struct hashtab *t, uint64_t weight);
/* Write the records of a table filled by stackframes_collect of sf, in the
 * order they were first added; returns how many. */
uint64_t stackframes_write_table(const struct stackframes *sf, const struct hashtab *t, FILE *f);
/* The same for a table filled with stackframes_split_cpu on: only its on-CPU
 * (on_cpu 1), run-queue (2) or off-CPU (0) records. */
uint64_t stackframes_write_table_cpu(const struct stackframes *sf, const struct hashtab *t, FILE *f, int on_cpu);

#endif
