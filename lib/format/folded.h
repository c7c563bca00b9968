/* folded.h — Brendan Gregg's folded stack format and the aggregation of
 * unique stacks (in a hashtab.h table).
 *
 *   bash;main;do_work;compute 12          one count
 *   bash;main;do_work;compute 12 30       two counts (differential: before, after)
 *
 * A line is the stack (frames joined by ';', root first) and one or two counts
 * (whole or decimal numbers), each after one blank, as flamegraph.pl reads it.
 */
#ifndef MARPLE_FOLDED_H
#define MARPLE_FOLDED_H

#include <stddef.h>
#include <stdint.h>

struct folded_line {
	const char *stack;	/* points into the line */
	size_t len;
	int ncounts;		/* 1 or 2 */
	double count[2];	/* count[0] the only or first count */
	int integral;		/* all counts whole numbers below 2^64 */
	uint64_t icount[2];	/* the counts when integral */
};

/* Parse one line (no newline; a trailing CR is ignored).  maxcounts is 1
 * (only "stack N") or 2 (also "stack N1 N2").  Returns 0, or -1 with *why set
 * to a reason.  Empty stacks are accepted (count of nothing). */
int folded_parse_line(const char *s, size_t len, int maxcounts, struct folded_line *out,
		      const char **why);

/* Does this look like folded text?  (Checks one line.) */
int folded_line_looks_folded(const char *s, size_t len);

/* Iterate frames of a folded stack: *pos starts at 0; returns 0 at the end. */
int folded_next_frame(const char *stack, size_t len, size_t *pos, const char **f, size_t *flen);

/* ---- reading an input of folded text ---- */

struct lines;
struct mstr;

/* Does the input start as a marple stream (its first byte '{', a header)
 * rather than folded text?  Peeks; reads nothing. */
int folded_input_is_stream(struct lines *l);

/* The next line of folded text that is not blank, parsed (maxcounts as for
 * folded_parse_line).  Returns 1 with *out set, 0 at the end of the input,
 * -1 for a malformed line (*why says why, lines_lineno(l) where: reading may
 * go on), FOLDED_NUL for a line holding a NUL byte (binary data: the input is
 * unusable, marple-format(5); read no further), -2 on a read error (message
 * printed). */
#define FOLDED_NUL (-3)
int folded_next_line(struct lines *l, int maxcounts, struct folded_line *out, const char **why);

/* Folded text read as one profile's samples (marple-pprof, marple-speedscope):
 * each line with frames and one count (a whole number with integral set) is a
 * sample; the others are named (the first MARPLE_REPORT_FIRST of *nbad) and
 * skipped; at the end the input is judged by marple-format(5)'s rule.  what
 * names the profile's kind in messages ("pprof"). */
struct folded_profile {
	const char *file, *what;
	int integral;
	uint64_t good, malformed;
	unsigned long nul_line;
};
/* 1 and *out for the next sample; 0 at the end of a usable input; -1 when the
 * input is unusable or cannot be read (said). */
int folded_next_sample(struct lines *l, struct folded_profile *p, struct folded_line *out, uint64_t *nbad);

/* The frames of a folded stack, root first, into *frames (grown as needed,
 * *cap its room; pointing into stack): what a stream stack record holds.
 * Returns how many; an empty stack has none. */
size_t folded_split_frames(const char *stack, size_t len, struct mstr **frames, size_t *cap);

#endif
