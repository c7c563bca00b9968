/* stacktree.h — call stacks merged into a tree (one node per unique path from
 * the root), for the renderers that draw stacks: flame graphs and tree maps.
 * Reads folded text ("stack count" or "stack count1 count2") and marple stack
 * sections alike.
 *
 *   a;b;c 3 + a;b 2  ->  all(5) - a(5) - b(5) - c(3)
 */
#ifndef MARPLE_STACKTREE_H
#define MARPLE_STACKTREE_H

#include <stddef.h>
#include <stdint.h>

#include "escape.h"
#include "stackfilter.h"
#include "stackunits.h"

#define STREE_NONE UINT32_MAX

struct framedesc;

struct stacktree_node {
	uint32_t name;		/* name id: stacktree_name() */
	uint32_t parent;	/* STREE_NONE for the root */
	uint32_t first, next;	/* first child, next sibling */
	uint32_t last;		/* last child (for appending) */
	uint32_t nkids;		/* number of children */
	double v;		/* weight including descendants (the first count) */
};

struct stree;

/* flamechart: keep children in arrival order and merge a frame only with the
 * last child of its parent (time order), instead of merging all equal names. */
struct stree *stacktree_new(int flamechart);
void stacktree_free(struct stree *t);
/* Call on a new tree: the frames of a folded stack below the first node it
 * made are kept as text until another stack reaches them or stacktree_children
 * asks (most frames of a large profile are never drawn).  Nodes are then
 * reachable only through stacktree_children, not first/next. */
void stacktree_lazy_tails(struct stree *t);

/* Keep at most the first n frames of each stack stacktree_add is given (a
 * picture that draws no more need not hold a tower of millions); 0: all. */
void stacktree_max_frames(struct stree *t, size_t n);

/* A node's children in an array valid until the next call, by name if sorted. */
const uint32_t *stacktree_children(struct stree *t, uint32_t id, int sorted, size_t *n);

const struct stacktree_node *stacktree_node(const struct stree *t, uint32_t id);
struct mstr stacktree_name(const struct stree *t, uint32_t name_id);
size_t stacktree_names(const struct stree *t);	/* number of distinct names */
/* The second count of a node (the first when no input had two). */
double stacktree_weight2(const struct stree *t, uint32_t id);

/* ---- reading renderer inputs ---- */

struct stacktree_input {
	int reverse;		/* frames leaf first */
	double factor;		/* multiply counts (0: 1) */
	/* results, summed over calls */
	uint64_t stacks;	/* usable stack lines/records */
	uint64_t bad;		/* malformed lines (each reported) */
	int two_counts;		/* some folded line had two counts */
	char *unit;		/* "units"."weight" of the first stream stack section, or NULL */
	char *measure;		/* what its weight measures (lib/format/weight.h), or NULL */
	struct stackunits units;	/* stack sections of another unit are skipped
					 * (stackunits.h); freed by stacktree_read_operands */
	char *interface;	/* "interface" of the first stream section, or NULL */
	char *host;		/* its "host", or NULL */
	int on_cpu;		/* its "options"."on_cpu" (offcpu --both) */
	int split_offcpu;	/* asked: with on_cpu, the second weight counts only the
				 * off-CPU stacks: those of sections whose header does not
				 * say "cpu":"on" (never decided by a frame's name) */
	int user_threads;	/* asked: kernel threads' stacks left out (stackfilter.h),
				 * counted in kthreads and said by stacktree_read_operands */
	struct stackfilter_count kthreads;
	int nolineno;		/* asked: frames "NAME (FILE:LINE)" as "NAME (FILE)", their
				 * descriptions too (stackfilter_line_at) */
	struct framedesc *frames;	/* if set: the stack trailers' frame descriptions
					 * are added to it (framedesc.h) */
	uint64_t reported;
};

/* Every operand (none: stdin) read (folded text or marple stack sections,
 * detected from the first line), then the count of malformed
 * lines on stderr if any.  Returns 0, or -1 at the first input that failed. */
int stacktree_read_operands(struct stree *t, int n, char **paths, struct stacktree_input *in);

#endif
