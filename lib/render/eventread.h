/* eventread.h — the input loop of the event renderers (marple-eventplot,
 * marple-trace, marple-perfetto): every event section of the input operands
 * (none, or "-": stdin) read in order, each record handed to a callback, the
 * first 10 bad lines reported and all counted, the time origin and the end of
 * the capture kept; a section of another datatype ends reading with a message
 * (point sections are read too when the caller takes points, and the stack
 * section of a timed section when it takes stacks: its samples section
 * names them).
 *
 *   struct eventread er = { .on_event = draw, .ctx = out };
 *   if (eventread_files(&er, argc - optind, argv + optind) < 0) {
 *           marple_outfile_abort(of);
 *           return EXIT_DATA;
 *   }
 *   (what writes as it reads must write nothing before the first event)
 *   ... write what was gathered ...
 *   return eventread_finish(&er, of, argc - optind, argv + optind);
 */
#ifndef MARPLE_EVENTREAD_H
#define MARPLE_EVENTREAD_H

#include <stdint.h>

#include "stream.h"
#include "util.h"

struct eventread {
	/* set by the caller */
	void (*on_event)(struct eventread *er, const struct event_rec *e);
	/* optional: point sections are read too, each point handed here */
	void (*on_point)(struct eventread *er, const struct point_rec *p);
	/* optional: the records of timed stack sections (timed.h), each stack
	 * handed here (not counted as events), and their trailers */
	void (*on_stack)(struct eventread *er, const struct stack_rec *s);
	void (*on_stack_trailer)(struct eventread *er, json_t *trailer);
	/* optional: each section's header as it begins; -1 ends reading as an
	 * error (the callback says why) */
	int (*on_section)(struct eventread *er, json_t *header, enum datatype dt);
	void *ctx;		/* for the callbacks */
	/* kept by the reader (t0 and end already count e when on_event sees it) */
	uint64_t t0;		/* start_ns of the first section with one, else the first event's time */
	int have_t0;
	uint64_t end;		/* the latest event time or trailer end_ns */
	uint64_t events;	/* records handed on before this one: the index of e in on_event */
	uint64_t sections;	/* event sections read */
	uint64_t bad;		/* malformed lines skipped */
	const char *file;	/* where the header or record handed on is, for messages */
	unsigned long line;
};

/* Read the n operands in paths (stdin if n is 0).  Returns 0, or -1 after a
 * message ("prog: file:line: section of datatype ...: prog draws events only")
 * at a section of another datatype.  An operand that cannot be opened exits 1. */
int eventread_files(struct eventread *er, int n, char **paths);

/* The N of a "cpuN" track (per-CPU data): 0 and *cpu set, or -1 for another track. */
int eventread_track_cpu(struct mstr track, uint64_t *cpu);

/* Is there anything to draw?  No event section or no events is an error:
 * the count of bad lines and the reason, naming the operands, on stderr, and
 * -1.  A renderer that gathers its input calls this before its first byte of
 * output, so that a failure leaves none (eventread_finish checks it again). */
int eventread_check(const struct eventread *er, int n, char **paths);

/* The end of an event renderer's run: no event section, no events or any bad
 * line is an error (a message naming the operands or counting the bad lines;
 * of aborted: no file left under its name, nothing on stdout if held); else
 * of committed.  Returns the exit status: 1 for an error. */
int eventread_finish(const struct eventread *er, struct outfile *of, int n, char **paths);

#endif
