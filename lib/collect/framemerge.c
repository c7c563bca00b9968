/* framemerge.c — an interpreter's frames into its native stack (see framemerge.h). */
#include "framemerge.h"

#include <stdlib.h>
#include <string.h>

#include "pyframes.h"
#include "util.h"

#include <linux/types.h>
#include "python.h"

/* The merged stack being made, root first; and a Ruby activation's C
 * methods not placed yet (pend[head..npend): their words) */
struct merging {
	const struct framemerge_stack *s;
	struct framemerge_result *r;
	int pend[PY_MAX_FRAMES];
	int npend, head;
};

static void put_native(struct merging *g, const char *name)
{
	g->r->out[g->r->nout++] = (struct framemerge_frame){ .native = name, .word = -1 };
}

static void put_word(struct merging *g, int j)
{
	g->r->out[g->r->nout++] = (struct framemerge_frame){ .native = NULL, .word = j };
}

static int is_cmethod(const struct merging *g, int j)
{
	return g->s->cmethod && g->s->cmethod[j].is;
}

/* The C methods waiting: up to t (its C function's frame comes next), then
 * those whose functions are not known (another file's): they stay where
 * the Ruby frames left them. */
static void put_pending(struct merging *g, int t)
{
	for (; g->head < g->npend; g->head++) {
		const struct framemerge_cmethod *c = &g->s->cmethod[g->pend[g->head]];
		if (g->head > t && c->hi > c->lo)
			break;
		put_word(g, g->pend[g->head]);
	}
}

/* The frames of segment [start, end) of the words, root first, in place of
 * their activation; a Ruby activation's C methods (its leafmost frames:
 * one calling Ruby code calls it in an activation of its own) wait for
 * their C functions' native frames (put_pending). */
static void put_segment(struct merging *g, int start, int end)
{
	int q = start;
	while (q < end && is_cmethod(g, q))
		q++;
	for (int j = end - 1; j >= q; j--)
		put_word(g, j);
	for (int j = q - 1; j >= start; j--)
		g->pend[g->npend++] = j;
	put_pending(g, -1);
}

/* Before the native frame at pc (a return address made its call's): the C
 * methods waiting, up to the one whose C function pc is in, if one is. */
static void put_pending_at(struct merging *g, uint64_t pc)
{
	for (int t = g->head; t < g->npend; t++) {
		const struct framemerge_cmethod *c = &g->s->cmethod[g->pend[t]];
		if (pc >= c->lo && pc < c->hi) {
			put_pending(g, t);
			return;
		}
	}
}

/* All the C methods waiting, as an activation or the leaf comes: their
 * functions' frames not seen (called through a function of another file,
 * or not yet) */
static void put_all_pending(struct merging *g)
{
	for (; g->head < g->npend; g->head++)
		put_word(g, g->pend[g->head]);
	g->head = g->npend = 0;
}

static int in_eval(const struct framemerge_stack *s, uint64_t pc)
{
	return (pc >= s->eval_lo && pc < s->eval_hi) || (pc >= s->cold_lo && pc < s->cold_hi);
}

/* The words, leaf first, split at each entry frame into one segment per
 * activation: how many, complete 0 when cut before the last one's entry. */
static int segments(const struct framemerge_stack *s, int *seg_start, int *seg_end, int *complete)
{
	int ns = 0;
	*complete = 1;
	for (int j = 0; j < s->m;) {
		seg_start[ns] = j;
		while (j < s->m && !PY_FRAME_ENTRY(s->words[j]))
			j++;
		if (j == s->m) {
			*complete = 0;	/* cut before its entry frame: its activation is unknown */
			break;
		}
		seg_end[ns++] = ++j;
	}
	return ns;
}

/* Replace each native activation of the eval loop with the frames it ran.
 * The activations, leaf first, are the native frames in the eval loop.
 * Equal counts pair one to one.  Otherwise (a sample while an activation
 * starts or ends, a stack cut) the pairs that are certain are kept: from
 * the root when the native stack is whole, else from the leaf; the rest
 * stays native, or is left out. */
void framemerge_run(const struct framemerge_stack *s, struct framemerge_result *r)
{
	int n = s->n, m = s->m, act[MARPLE_STACK_DEPTH], na = 0, complete;
	int seg_start[PY_MAX_FRAMES + 1], seg_end[PY_MAX_FRAMES + 1], pair_of_act[MARPLE_STACK_DEPTH];

	memset(r, 0, sizeof(*r));
	for (int i = 0; i < n; i++)
		if (in_eval(s, s->ips[i] - (i > 0)))
			act[na++] = i;
	int ns = segments(s, seg_start, seg_end, &complete);
	int pairs = pyframes_pair(na, ns, complete, s->native_whole, pair_of_act);
	/* Paired from the leaf, the native stack seen holds the innermost
	 * activations: the frames left over ran in activations further out,
	 * beyond where the native stack was cut, so they go first, whole, then
	 * a frame saying native frames are missing there */
	int outer_from = m;
	if (!pyframes_from_root(na, ns, complete, s->native_whole) && na < ns + !complete)
		outer_from = pairs ? seg_end[pairs - 1] : 0;
	if (na == ns && complete) {
		r->merged = 1;
	} else {
		r->mismatched = 1;
		r->unpaired = na - pairs;
		int kept = m - outer_from;
		for (int a = 0; a < na; a++)
			if (pair_of_act[a] >= 0)
				kept += seg_end[pair_of_act[a]] - seg_start[pair_of_act[a]];
		r->dropped = m - kept;
		r->outside = outer_from < m;
	}
	struct merging *g = marple_calloc(1, sizeof(*g));
	g->s = s;
	g->r = r;
	r->out = marple_malloc(sizeof(*r->out) * (size_t)(n + m + 2));
	for (int j = m - 1; j >= outer_from; j--)
		put_word(g, j);
	if (outer_from < m)
		put_native(g, "[native frames not unwound]");
	for (int i = n - 1, a = na - 1; i >= 0; i--) {
		uint64_t pc = s->ips[i] - (i > 0);
		if (a >= 0 && act[a] == i) {
			put_all_pending(g);
			int seg = pair_of_act[a--];
			if (seg >= 0) {
				put_segment(g, seg_start[seg], seg_end[seg]);
				continue;
			}
		}
		const char *native = s->native[n - 1 - i];
		/* Ruby's VM loop, called by the activation before it: the Ruby
		 * frames say it */
		if (i + 1 < n && a + 1 < na && act[a + 1] == i + 1 && pc >= s->loop_lo && pc < s->loop_hi)
			continue;
		/* 3.12+'s -X perf trampoline (its perf map's "py::qualname:file"):
		 * the walked frames say the same, with the line */
		if (strncmp(native, "py::", 4) == 0) {
			r->trampolines++;
			continue;
		}
		if (g->head < g->npend)
			put_pending_at(g, pc);
		put_native(g, native);
	}
	put_all_pending(g);
	free(g);
}
