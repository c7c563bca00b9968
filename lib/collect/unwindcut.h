/* unwindcut.h — finishing in user space the user stacks that the kernel's
 * table walk (--unwind tables) stopped where a table was missing.
 *
 * A file's table is built when it is first sampled, so a new process's first
 * samples come before its files' tables: the walk stops there with
 * "[no unwind table]".  A stack collector's program sends such a sample
 * instead of counting it (struct cut_sample on the cut_samples ring buffer,
 * bpf/stacks.bpf.h: its count key and value, the registers where the walk
 * stopped and a copy of the stack above); this walks on from there with
 * libunwind over the same .eh_frame (unwinddwarfwalk.h), puts what it found
 * in place of the marker, and counts the whole stack in the collector's
 * drain (stackdrain_add_walked): its records come out as drained ones do.
 * A walk that gets no further counts the stack as the kernel cut it:
 * nothing is lost either way.
 *
 *   struct unwindcut *c = unwindcut_new(syms, drain);
 *   ring_buffer__add(rb, cut_samples_fd, unwindcut_on_sample, c);
 *   ...
 *   unwindcut_trailer_add(c, unwind);             // the trailer's "unwind"
 *
 * lib/collect/stackcollector.h does this for a collector that sets
 * finish_cuts.
 */
#ifndef MARPLE_UNWINDCUT_H
#define MARPLE_UNWINDCUT_H

#include <jansson.h>
#include <stddef.h>

struct unwindcut;
struct syms_cache;
struct stackdrain;

struct unwindcut *unwindcut_new(struct syms_cache *syms, struct stackdrain *d);
void unwindcut_free(struct unwindcut *c);
/* A ring buffer's callback: one struct cut_sample walked on and counted;
 * -ENOMEM (said) when libunwind has no memory for the process. */
int unwindcut_on_sample(void *c, void *data, size_t len);
/* --timed (a collector whose count key is a struct stack_key): each sample
 * walked on is a sample of ts too, at its time. */
struct timedsamples;
void unwindcut_set_timed(struct unwindcut *c, struct timedsamples *ts);
/* Into the trailer's "unwind" object: "cuts_finished" (samples walked on to
 * more frames), "cuts_left" (no further: counted as cut), "cuts_us" (the time
 * spent), this section's. */
void unwindcut_trailer_add(struct unwindcut *c, json_t *unwind);

#endif
