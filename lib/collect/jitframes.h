/* jitframes.h — frames in JIT code that had no name when their stack was
 * named, kept as (process, address) and named again when the stacks are
 * written (lib/collect/stackframes.c does all of this).
 *
 * The JVM lists its compiled code in /tmp/perf-PID.map only at exit or on
 * `jcmd PID Compiler.perfmap`: after a collector draining while it samples
 * has named the stacks.  Such a frame gets a placeholder (a string that no
 * symbol is, interned) that takes the place of its name in the stack's key;
 * at write time each placeholder's process has its map read again (if it has
 * appeared or changed, also after the process has exited) and the frame
 * gets its name, or what it would have been shown as ("[unknown]").
 *
 *   name = jitframes_pending(syms, pid, exec_id, addr, "[unknown]");
 *   jitframes_weigh(pid, leaf_placeholder_or_NULL, weight);   // each stack
 *   jitframes_resolve();                      // at the end, before writing
 *   shown = jitframes_name(frame);            // for each frame written
 *
 * The state is the process's (one registry for every stackframes): the
 * placeholders live in the tables of records, which know no stackframes.
 */
#ifndef MARPLE_JITFRAMES_H
#define MARPLE_JITFRAMES_H

#include <jansson.h>
#include <stdint.h>
#include <sys/types.h>

#include "syms.h"

/* The placeholder of addr (the address looked up) in image exec_id of pid,
 * unnamed now; fallback is shown if it stays so.  Past 1,000,000 distinct
 * addresses, fallback itself (memory). */
const char *jitframes_pending(struct syms_cache *syms, pid_t pid, uint64_t exec_id, uint64_t addr,
			      const char *fallback);
/* Is frame a placeholder? */
int jitframes_is_pending(const char *frame);
/* Any placeholders made? */
int jitframes_any(void);
/* Count weight for a stack of pid (0: none) whose leaf is leaf (a
 * placeholder, or NULL): for the advice on unnamed JIT code. */
void jitframes_weigh(pid_t pid, const char *leaf, uint64_t weight);
/* Name what can be named now: read the perf maps of the placeholders'
 * processes again, look their addresses up.  Then, once for each node or
 * java process whose samples are mostly in JIT code still unnamed, say on
 * stderr which flag or command names it. */
void jitframes_resolve(void);
/* What to show for frame: the name found for a placeholder (or its
 * fallback), any other frame itself. */
const char *jitframes_name(const char *frame);
/* The same for a stack written at once (not through a table): a placeholder
 * not named yet is looked up again, without reading every map. */
const char *jitframes_name_now(const char *frame);

struct jitframes_stats {
	uint64_t frames;		/* distinct (process, address) without a name when sampled */
	uint64_t named_later;		/* ... named by jitframes_resolve */
	uint64_t leaf_weight;		/* the weight of the stacks with such a leaf */
	uint64_t leaf_weight_named;	/* ... of those named later */
};
/* "jit_frames": {...} in a trailer when there were any. */
void jitframes_trailer_add(json_t *trailer);
/* syms is about to be freed: its placeholders keep the names they have. */
void jitframes_forget(struct syms_cache *syms);

#endif
