/* timedsamples.h — the user side of --timed (bpf/timed.bpf.h): keep every
 * sample's time from the timed_samples ring buffer, and at the end write the
 * timed stack section and its samples section (marple-format(5), "Timed
 * stack sections"; lib/format/timed.h reads them).
 *
 *   timedsamples_size(skel->obj, rate);              before load
 *   skel->rodata->timed_mode = true;
 *   ... load ...
 *   struct timedsamples *ts = timedsamples_new(skel->obj, rb);   rb: the ring_buffer polled
 *   timedsamples_mark(hdr);                          "timed":"stacks" in the stack header
 *   ... capture, polling rb ...
 *   w = timedsamples_walk_new(ts, sf); ... n = timedsamples_walk_write(w, stdout);
 *   ... the stack section's trailer ...
 *   timedsamples_write_section(ts, hdr, "sample", ended, stdout);
 */
#ifndef MARPLE_TIMEDSAMPLES_H
#define MARPLE_TIMEDSAMPLES_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "stackframes.h"

struct bpf_object;
struct ring_buffer;
struct timedsamples;

/* Size the object's timed_samples ring buffer for records_per_s records a
 * second (all CPUs) drained every 20 ms, with room to spare.  Before load. */
int timedsamples_size(struct bpf_object *obj, uint64_t records_per_s);
/* Drain the object's timed_samples ring buffer through rb (NULL: the
 * collector reads it, its records its own: timedsamples_add_keyed).  NULL +
 * message on failure. */
struct timedsamples *timedsamples_new(struct bpf_object *obj, struct ring_buffer *rb);
void timedsamples_free(struct timedsamples *ts);
/* The counts are drained by d (stackdrain.h): each sample's stacks are
 * known by d's numbers (stackdrain_number_key) as it comes, as the keys d
 * hands timedsamples_key are. */
struct stackdrain;
struct stackdrain_entry;
void timedsamples_set_drain(struct timedsamples *ts, struct stackdrain *d);
/* With counts drained: w = timedsamples_walk_new(ts, sf);
 * timedsamples_key is the add() of the stackdrain (arg w), stackdrain_emit,
 * then timedsamples_walk_write(w, f);
 * w goes on for the next section (--every), freed by timedsamples_walk_free. */
struct timedsamples_walk;
struct timedsamples_walk *timedsamples_walk_new(struct timedsamples *ts, struct stackframes *sf);
void timedsamples_key(const struct stackdrain_entry *e, void *walk);
uint64_t timedsamples_walk_write(struct timedsamples_walk *w, FILE *f);
void timedsamples_walk_free(struct timedsamples_walk *w);
/* Continuous mode, after a section's samples section: the samples, their
 * keys and records from none again. */
void timedsamples_restart(struct timedsamples *ts);

/* A sample found by user space (e.g. a block still going at the end); cpu
 * UINT32_MAX: not known (its track is written "-"). */
void timedsamples_add(struct timedsamples *ts, const struct stack_key *key, uint32_t tid, uint32_t cpu,
		      uint64_t time, uint64_t dur);

/* A collector whose aggregation key is not a struct stack_key (marple-lock's
 * lock and two stacks): a sample of key (len bytes, its stack ids numbered
 * by the drain: stackdrain_number_key), and, as the key is drained, the
 * position of its record in the stack section (rec).  Instead of
 * timedsamples_add, timedsamples_key and timedsamples_walk_*. */
void timedsamples_add_keyed(struct timedsamples *ts, const void *key, size_t len, uint32_t pid, uint32_t tid,
			    uint32_t cpu, uint64_t time, uint64_t dur);
void timedsamples_name_key(struct timedsamples *ts, const void *key, size_t len, uint32_t rec);

/* Mark a stack section's header as timed. */
void timedsamples_mark(json_t *stack_hdr);


/* Write the samples section (header from the stack section's, records in time
 * order, trailer with "lost" from timed_lost (since the section before) and
 * "dropped" for samples whose key the count table did not hold).  type names a
 * record ("sample", "block").  end_ns: the section's cut (--every), which
 * ends "interval"; 0: the last, ended last_ended.  Returns the number of
 * samples written. */
uint64_t timedsamples_write_section(struct timedsamples *ts, json_t *stack_hdr, const char *type,
				    const char *last_ended, uint64_t end_ns, FILE *f);

#endif
