/* stacksbpf.h — the user side of bpf/stacks.bpf.h, for the collectors built
 * on it: size its stack store before load, attach its exec hook and read its
 * pid notes while capturing, then read the collector's count table into stack
 * records (named by stackframes.h) and put its counters in the trailer.
 * stackframes.h only turns stacks into frames; this is what touches BPF.
 *
 *   stacksbpf_set_storage(skel->obj, n);                // before load
 *   struct bpf_link *exec;
 *   struct procnewsring *news = stacksbpf_news_open(skel->obj, syms, &exec);
 *   ... while capturing: ring_buffer__poll(procnewsring_ring(news), timeout)  (snapshots new pids) ...
 *   stacksbpf_collect_counts(sf, bpf_map__fd(skel->maps.counts), table);  // then stackframes_write_table
 *   stacksbpf_read_counters(bpf_map__fd(skel->maps.stack_counters), counters);
 *   dropped = stacksbpf_trailer_add(trailer, counters, sf);   // "stack_errors"
 */
#ifndef MARPLE_STACKSBPF_H
#define MARPLE_STACKSBPF_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "stackframes.h"
#include "stacks.h"
#include "syms.h"

/* Sum the per-CPU stack_counters map into out[STACKS_NCOUNTERS]; 0 or -1. */
int stacksbpf_read_counters(int counters_fd, uint64_t out[STACKS_NCOUNTERS]);
/* "stages": {"timed_samples": n, "kernel_stack_ns": ns a timed sample, ...}
 * into a trailer's "sampling" (NULL: nothing), from obj's per-CPU stage
 * clock (stacks_samples: where the BPF time of a sample goes, stacks.h),
 * for the samples since *before, which becomes now's. */
struct bpf_object;
void stacksbpf_stages_trailer_add(json_t *sampling, struct bpf_object *obj, struct stacks_stage_clock *before);
/* Add the counters (non-zero ones) and sf's stats (sf may be NULL) to a
 * trailer as "stack_errors": {...}, and print a one-line summary on stderr
 * when anything was lost.  Returns the trailer's "dropped": the samples not
 * counted at all (stacksbpf_not_counted) and those counted under
 * "[lost: stack map full]" (samples_stack_map_full). */
/* Samples not counted at all: map_full + ringbuf_full. */
uint64_t stacksbpf_not_counted(const uint64_t counters[STACKS_NCOUNTERS]);
uint64_t stacksbpf_trailer_add(json_t *trailer, const uint64_t counters[STACKS_NCOUNTERS],
			    const struct stackframes *sf);

/* The same, into t (stackframes_collect), to be written with other records
 * (both sets of the count table counts_fd; a table it cannot read, said). */
struct hashtab;
void stacksbpf_collect_counts(struct stackframes *sf, int counts_fd, struct hashtab *t);
/* One struct stack_key -> u64 key drained into table->t (the add() of a
 * stackdrain of such counts, stackdrain.h). */
struct stacksbpf_table {
	struct stackframes *sf;
	struct hashtab *t;
};
struct stackdrain_entry;
void stacksbpf_table_add(const struct stackdrain_entry *e, void *table);

/* Draining with ring buffers that carry stack ids (stackdrain.h): rb is read
 * after each flip, before the idle set is cleared, and --timed's samples
 * (ts, or NULL) are known by the drain's numbers for their stacks. */
struct stackdrain;
struct timedsamples;
struct ring_buffer;
void stacksbpf_drain_rings(struct stackdrain *d, struct ring_buffer *rb, struct timedsamples *ts);

/* Size the stacks map (N distinct stacks a set: 2N slots, stackdrain.h)
 * and its index stack_slots (2N, one owner a slot) of a BPF object that
 * includes bpf/stacks.bpf.h;
 * before load.  0 or -1. */
struct bpf_object;
int stacksbpf_set_storage(struct bpf_object *obj, uint32_t n);
/* Size its count table (counts) to n entries a set.
 * n 0, in both: STACKSBPF_STORAGE_DEFAULT (--stack-storage not given). */
int stacksbpf_set_counts_size(struct bpf_object *obj, uint32_t n);

/* A stack slot holds MARPLE_STACK_DEPTH addresses (2 KiB), and the whole
 * store is mapped into the collector: 2 x 16384 slots are 64 MiB resident.
 * A sampling collector sizes it to its rate instead: room in a set for twice
 * what events_per_s bring in a drain period (a set is drained sooner when a
 * quarter full), a power of two from STACKSBPF_STORAGE_MIN up to the
 * default; 99 Hz on 2 CPUs takes 4 MiB. */
#define STACKSBPF_STORAGE_DEFAULT 16384u
#define STACKSBPF_STORAGE_MIN 1024u
/* An event collector (offcpu, lock, diskblockrq) has no rate to size it
 * from: 4096 a set, 16 MiB, not 64 (a second of a build here filled a set
 * of offcpu with 2,022 stacks, lock's with 450, diskblockrq's with 77); a
 * set is drained when a quarter full, and a stack that finds its set full
 * is counted lost (stack_errors.stack_map_full).  memevents' page faults
 * and the allocations of mallocstacks and memleak bring thousands of new
 * stacks a second (memevents: 19 drains asked in 2 s with 8192 a set;
 * mallocstacks: 23, a set 30% full at most, where 4096 a set was 65% full
 * once a drain waited 203 ms at load 12; memleak, drained by a real-time
 * thread: 26 drains in 2 s with 4096, 25% full at most): twice as much. */
#define STACKSBPF_STORAGE_EVENTS 4096u
#define STACKSBPF_STORAGE_BUSY 8192u
uint32_t stacksbpf_storage_for(uint64_t events_per_s, uint64_t drain_ms);

/* For -p/-t: -1 with one clear line said when the process or thread does
 * not exist (pid or tid <= 0: not given; the collector exits 1), else 0. */
int stacksbpf_check_target(long long pid, long long tid);

/* The reader of the process news (procnewsring.h) of a loaded BPF object that
 * includes stacks.bpf.h, with the symbolizer as the client of two kinds:
 * each image of a process announced (struct pid_note) is snapshotted (one
 * that could not be checked is asked for again: its pids_seen entry
 * dropped), and each file VMA the unwinder found is posted to syms.  The
 * object's stacks_exec program (STACKS_EXEC_NOTES), if it has one, is
 * attached (*exec_link, for bpf_link__destroy; NULL if none or it failed,
 * with a warning) so images are snapshotted as they exec.  Other clients
 * (unwind tables, Python frames) register on it too; poll procnewsring_ring().
 * NULL + message on failure. */
struct bpf_link;
struct procnewsring;
struct procnewsring *stacksbpf_news_open(struct bpf_object *obj, struct syms_cache *syms, struct bpf_link **exec_link);

#endif
