/* folded.h — Brendan Gregg's folded stack format and the aggregation of
 * unique stacks.
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

/* ---- unique stacks: a hash table keyed by the folded stack text ---- */

struct stack_agg;
struct stack_agg_entry {
	const char *key;	/* folded stack, not NUL-terminated */
	size_t len;
	uint64_t count[2];
};

struct stack_agg *stack_agg_new(void);
void stack_agg_free(struct stack_agg *a);
/* Add counts to the stack (copied on first sight).  Counts saturate at 2^64-1. */
void stack_agg_add(struct stack_agg *a, const char *key, size_t len, uint64_t c0, uint64_t c1);
size_t stack_agg_size(const struct stack_agg *a);
/* All entries sorted by key in byte order (as sort(1) with LC_ALL=C and Perl's
 * cmp do); the array is owned by the aggregate and valid until the next add. */
struct stack_agg_entry **stack_agg_sorted(struct stack_agg *a);

/* A fast 64-bit hash of bytes (not cryptographic). */
uint64_t marple_hash(const void *p, size_t len);

#endif
