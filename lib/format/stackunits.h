/* stackunits.h — the rule every reader of stack sections follows
 * (marple-format(5), UNITS): stacks of different weight units never add.
 *
 * A capture of callstack (samples) and offcpu (microseconds) holds two units;
 * summing them gave a flame graph of 1,284 samples + 221,473,093 us as one
 * total.  The first stack section read sets the unit; a later stack section of
 * another unit is skipped, named in one line on stderr, and counted:
 *
 *   struct stackunits u = { 0 };
 *   at each stack section's header:
 *       if (!stackunits_admit(&u, hdr, file, line, section)) skip its records;
 *   at the end: stackunits_free(&u);
 *
 * A header that names no unit weighs samples (marple-format(5)).
 */
#ifndef MARPLE_STACKUNITS_H
#define MARPLE_STACKUNITS_H

#include <jansson.h>
#include <stdint.h>

struct stackunits {
	char *unit;		/* the unit kept: the first stack section's */
	char *first;		/* where it came from: "file section N (interface)" */
	uint64_t skipped;	/* stack sections skipped for another unit */
};

/* The weight unit a stack section's header names ("samples" if none). */
const char *stackunits_of(json_t *hdr);
/* 1: read the section (its unit is the kept one, or the first); 0: skip it
 * (said: "prog: file:line: section N (iface) weighs us, not samples as ...").
 * file, line and section say where the header is. */
int stackunits_admit(struct stackunits *u, json_t *hdr, const char *file, unsigned long line, long section);
void stackunits_free(struct stackunits *u);

#endif
