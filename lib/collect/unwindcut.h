/* unwindcut.h — finishing in user space the user stacks that the kernel's
 * table walk (--unwind tables) stopped where a table was missing.
 *
 * A file's table is built when it is first sampled, so a new process's first
 * samples come before its files' tables: the walk stops there with
 * "[no unwind table]".  marple-callstack's program sends such a sample
 * instead of counting it (struct cut_sample, bpf/stacks.h: the registers
 * where the walk stopped and a copy of the stack above); this walks on from
 * there with libunwind over the same .eh_frame (unwinddwarfwalk.h), puts
 * what it found in place of the marker, and counts the whole stack.  A walk
 * that gets no further leaves the stack as the kernel cut it: nothing is
 * lost either way.
 *
 *   struct unwindcut *c = unwindcut_new(syms, sf);
 *   unwindcut_add(c, record);                     // each REC_CUT, as it comes
 *   unwindcut_collect(c, sf, table);              // at a section's end: into the
 *                                                 // table stackframes_collect fills
 *   unwindcut_trailer_add(c, unwind);             // the trailer's "unwind"
 *
 * The stacks are read from the kernel's store as they come (their ids are
 * let go at the next drain) and named at the section's end, as drained ones
 * are.
 */
#ifndef MARPLE_UNWINDCUT_H
#define MARPLE_UNWINDCUT_H

#include <jansson.h>
#include <linux/types.h>

#include "stacks.h"

struct unwindcut;
struct syms_cache;
struct stackframes;
struct hashtab;

struct unwindcut *unwindcut_new(struct syms_cache *syms, struct stackframes *sf);
void unwindcut_free(struct unwindcut *c);
/* Walk on from where s's walk stopped and keep the whole stack, weight 1;
 * -1 (said) when libunwind has no memory for the process. */
int unwindcut_add(struct unwindcut *c, const struct cut_sample *s);
/* Name the stacks kept since the last call and add them to t
 * (stackframes_collect), then let them go. */
void unwindcut_collect(struct unwindcut *c, struct stackframes *sf, struct hashtab *t);
/* Into the trailer's "unwind" object: "cuts_finished" (samples walked on to
 * more frames), "cuts_left" (no further: counted as cut), "cuts_us" (the time
 * spent), this section's. */
void unwindcut_trailer_add(struct unwindcut *c, json_t *unwind);

#endif
