/* stackframes.h — turn BPF stack ids (or raw addresses) into the root-first
 * frames of a marple stack record: comm first, then user frames outermost
 * first, an optional "-" delimiter, then kernel frames (optionally "_[k]").
 *
 * Usage, with the kernel side in bpf/stacks.bpf.h (struct stack_key):
 *
 *   struct stackframes *sf = stackframes_new(syms, ksyms,
 *                   bpf_map__fd(skel->maps.stacks), SF_DELIMIT | SF_ANNOTATE_KERNEL);
 *   struct bpf_link *exec;
 *   struct ring_buffer *notes = stacks_pidnotes_open(skel->obj, syms, &exec);
 *   ... while capturing: ring_buffer__poll(notes, timeout)  (snapshots new pids) ...
 *   for each key/value of the collector's hash map:
 *       stackframes_key(sf, &key);          // comm, user frames, "-", kernel frames
 *       stackframes_write(sf, stdout, value);
 *   stacks_read_counters(bpf_map__fd(skel->maps.stack_counters), counters);
 *   stacks_trailer_add(trailer, counters, sf);   // adds "stack_errors" etc.
 *
 * Unresolved addresses become "[unknown]" (or "[module]" when the mapping is
 * known but has no symbol there, as stackcollapse-perf.pl does).  A stack that
 * could not be read (negative id other than STACK_ID_NONE, or an id no longer
 * in the stack map) becomes one "[missing user stack]"/"[missing kernel stack]"
 * frame, and is counted (stackframes_stats).
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
/* Append kernel frames from a leaf-first array (with the delimiter first if asked). */
void stackframes_kernel_ips(struct stackframes *sf, const uint64_t *ips, size_t n);
/* Same from stack-map ids; STACK_ID_NONE appends nothing. */
void stackframes_user_id(struct stackframes *sf, pid_t pid, int id);
void stackframes_user_id_exec(struct stackframes *sf, pid_t pid, uint64_t exec_id, int id);
void stackframes_kernel_id(struct stackframes *sf, int id);
/* begin + user_id_exec + kernel_id for a key. */
void stackframes_key(struct stackframes *sf, const struct stack_key *k);
/* Read a stack-map id into ips[MARPLE_STACK_DEPTH] (leaf first); returns the depth, -1 if absent. */
int stackframes_read_id(struct stackframes *sf, int id, uint64_t *ips);

/* The frames built so far (root first); valid until the next begin. */
const char *const *stackframes_frames(struct stackframes *sf, size_t *n);
void stackframes_write(struct stackframes *sf, FILE *f, uint64_t weight);

struct stackframes_stats {
	uint64_t missing_user;		/* user stacks shown as "[missing user stack]" */
	uint64_t missing_kernel;
	uint64_t unknown_frames;	/* addresses without a symbol */
};
void stackframes_stats(const struct stackframes *sf, struct stackframes_stats *out);

/* Sum the per-CPU stack_counters map into out[STACKS_NCOUNTERS]; 0 or -1. */
int stacks_read_counters(int counters_fd, uint64_t out[STACKS_NCOUNTERS]);
/* Add the counters (non-zero ones) and sf's stats (sf may be NULL) to a
 * trailer as "stack_errors": {...}, and print a one-line summary on stderr
 * when anything was lost.  Returns the number of samples not counted at all
 * (map_full + ringbuf_full), for the trailer's "dropped". */
uint64_t stacks_trailer_add(json_t *trailer, const uint64_t counters[STACKS_NCOUNTERS],
			    const struct stackframes *sf);

/* A user-space aggregation table: byte-string keys -> u64 weight. */
struct stacktab;
struct stacktab *stacktab_new(void);
void stacktab_free(struct stacktab *t);
void stacktab_add(struct stacktab *t, const void *key, size_t len, uint64_t weight);
size_t stacktab_size(const struct stacktab *t);
/* Iterate: *pos starts at 0; returns 0 at the end. */
int stacktab_next(const struct stacktab *t, size_t *pos, const void **key, size_t *len, uint64_t *weight);

/* Add the frames built so far to t (key: the frames NUL-separated), so that
 * keys which symbolize to the same frames become one record. */
void stackframes_collect(struct stackframes *sf, struct stacktab *t, uint64_t weight);
/* Write the records of a table filled by stackframes_collect; returns how many. */
uint64_t stacktab_write_frames(const struct stacktab *t, FILE *f);

/* Write one stack record per distinct frame list of a BPF hash map
 * struct stack_key -> u64 (the collector's aggregation), weight = the sum of
 * the values.  Returns the number of records written. */
uint64_t stacks_write_counts(struct stackframes *sf, int counts_fd, FILE *f);
/* The same, into t (stackframes_collect), to be written with other records. */
void stacks_collect_counts(struct stackframes *sf, int counts_fd, struct stacktab *t);

/* Size the stacks map (N distinct stacks) and its index stack_slots of a
 * BPF object that includes bpf/stacks.bpf.h; before load.  0 or -1. */
struct bpf_object;
int stacks_set_storage(struct bpf_object *obj, uint32_t n);

/* For -p/-t: exit 1 with one clear line when the process or thread does not
 * exist (pid or tid <= 0: not given). */
void stacks_check_target(long long pid, long long tid);

/* Snapshot each image of a process announced on the pid_notes ring buffer
 * (stacks.bpf.h: struct pid_note); poll it with ring_buffer__poll().  NULL +
 * message on failure. */
struct ring_buffer;
struct ring_buffer *stacks_pidnotes_new(int ringbuf_fd, struct syms_cache *syms);
/* The same for a loaded BPF object that includes stacks.bpf.h, and better:
 * a snapshot that could not be checked is asked for again (its pids_seen
 * entry dropped), and the object's stacks_exec program (STACKS_EXEC_NOTES), if
 * it has one, is attached (*exec_link, for bpf_link__destroy; NULL if none
 * or it failed, with a warning) so images are snapshotted as they exec. */
struct bpf_link;
struct ring_buffer *stacks_pidnotes_open(struct bpf_object *obj, struct syms_cache *syms,
					 struct bpf_link **exec_link);

#endif
