/* stacktree.c — merging stacks into a tree; reading folded or stream input
 * for the stack renderers (see stacktree.h). */
#include "stacktree.h"

#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "folded.h"
#include "framedesc.h"
#include "hashtab.h"
#include "lines.h"
#include "stream.h"
#include "timed.h"
#include "util.h"
#include "weight.h"


struct stree {
	int flamechart;
	struct stacktree_node *nodes;
	size_t n, cap;
	/* (parent, name) -> node */
	uint32_t *slots;
	size_t mask;
	/* interned names: the table finds them, names[] shows them by id */
	struct hashtab *name_tab;
	struct mstr *names;
	size_t nnames, names_cap;
	char **blocks;
	size_t nblocks;
	char *blk;
	size_t blk_used, blk_cap;
	double *v2;		/* second counts, once some input had two */
	/* the previous stack's frames and nodes: sorted input shares prefixes */
	char *prev;
	size_t prev_cap;
	size_t *prev_off, *prev_len;
	uint32_t *prev_node;
	size_t prev_n, prev_ncap;
	size_t prev_bytes;	/* length of prev_s when it holds the folded text */
	int prev_text;		/* prev_s is the previous folded stack, ';' and all */
	const char *prev_s;	/* prev, or that stack's line in a stable input (not copied) */
	size_t hashed;		/* children in the table */
	/* lazy tails (stacktree_lazy_tails): tail_of[node] indexes tails, or STREE_NONE */
	int lazy;
	size_t max_frames;	/* stacktree_max_frames: frames past these not kept, 0: all */
	uint32_t *tail_of;
	struct tail *tails;
	size_t ntails, tails_cap;
	uint32_t free_tail;	/* a freed tails entry, or STREE_NONE */
	int stable;		/* the input being read outlives the tree: tails point into it */
	struct lines **inputs;	/* mapped inputs the tails point into */
	size_t ninputs, inputs_cap;
	struct mstr *scratch_frames;	/* --user-threads-only: a folded line's frames */
	size_t scratch_cap;
	char *lineless;		/* --nolineno: a stack's names without lines */
	size_t lineless_cap;
	struct mstr *lineless_frames;
	size_t lineless_frames_cap;
};

/* The frames below a node that only one stack has reached so far, kept as
 * folded text ("c;d;e") with that stack's weights, not yet made nodes. */
struct tail {
	const char *s;
	size_t len;
	double w0, w1;
};

static uint32_t *new_slots(size_t n)
{
	uint32_t *s = marple_malloc(n * sizeof(uint32_t));
	memset(s, 0xff, n * sizeof(uint32_t));
	return s;
}

static const char *store(struct stree *t, const char *s, size_t len)
{
	if (t->blk_cap - t->blk_used < len || !t->blk) {
		size_t cap = len > (1u << 20) ? len : (1u << 20);
		t->blk = marple_malloc(cap ? cap : 1);
		t->blk_cap = cap;
		t->blk_used = 0;
		t->blocks = realloc(t->blocks, (t->nblocks + 1) * sizeof(char *));
		if (!t->blocks)
			marple_fatal(EXIT_DATA, "out of memory");
		t->blocks[t->nblocks++] = t->blk;
	}
	char *d = t->blk + t->blk_used;
	memcpy(d, s, len);
	t->blk_used += len;
	return d;
}

/* The id of a frame name: names[id], ids dense in order of first sight. */
static uint32_t intern(struct stree *t, const char *s, size_t len)
{
	const struct hashtab_entry *e = hashtab_add(t->name_tab, s, len, 0, 0);
	size_t id = hashtab_index(t->name_tab, e);

	if (id == t->nnames) {	/* a new name */
		if (id >= STREE_NONE)
			marple_fatal(EXIT_DATA, "too many distinct frame names");
		t->names = marple_grow(t->names, &t->names_cap, id + 1, sizeof(*t->names));
		t->names[t->nnames++] = (struct mstr){ e->key, len };
	}
	return (uint32_t)id;
}

static inline uint64_t child_hash(uint32_t parent, uint32_t name)
{
	uint64_t k = ((uint64_t)parent << 32) | name;
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return k;
}

static uint32_t new_node(struct stree *t, uint32_t parent, uint32_t name)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		t->nodes = realloc(t->nodes, cap * sizeof(*t->nodes));
		if (!t->nodes)
			marple_fatal(EXIT_DATA, "out of memory");
		if (t->v2) {
			t->v2 = realloc(t->v2, cap * sizeof(*t->v2));
			if (!t->v2)
				marple_fatal(EXIT_DATA, "out of memory");
		}
		if (t->lazy) {
			t->tail_of = realloc(t->tail_of, cap * sizeof(*t->tail_of));
			if (!t->tail_of)
				marple_fatal(EXIT_DATA, "out of memory");
		}
		t->cap = cap;
	}
	uint32_t id = (uint32_t)t->n++;
	struct stacktree_node *nd = &t->nodes[id];
	nd->name = name;
	nd->parent = parent;
	nd->first = nd->next = nd->last = STREE_NONE;
	nd->nkids = 0;
	nd->v = 0;
	if (t->v2)
		t->v2[id] = 0;
	if (t->lazy)
		t->tail_of[id] = STREE_NONE;
	if (parent != STREE_NONE) {
		struct stacktree_node *p = &t->nodes[parent];
		if (p->last == STREE_NONE)
			p->first = id;
		else
			t->nodes[p->last].next = id;
		p->last = id;
	}
	return id;
}

#define FEW_KIDS 8

static void grow_children(struct stree *t)
{
	size_t nm = t->mask * 2 + 1;
	uint32_t *ns = new_slots(nm + 1);
	for (size_t i = 1; i < t->n; i++) {
		if (t->nodes[t->nodes[i].parent].nkids <= FEW_KIDS)
			continue;
		size_t k = child_hash(t->nodes[i].parent, t->nodes[i].name) & nm;
		while (ns[k] != STREE_NONE)
			k = (k + 1) & nm;
		ns[k] = (uint32_t)i;
	}
	free(t->slots);
	t->slots = ns;
	t->mask = nm;
}



static void hash_insert(struct stree *t, uint32_t id)
{
	size_t j = child_hash(t->nodes[id].parent, t->nodes[id].name) & t->mask;
	while (t->slots[j] != STREE_NONE)
		j = (j + 1) & t->mask;
	t->slots[j] = id;
	if (++t->hashed * 2 > t->mask) {
		grow_children(t);
	}
}

static void expand_tail(struct stree *t, uint32_t id);

/* The child of parent with this name, made if missing (then *made is set).
 * Parents with few children are searched along their list; larger ones
 * through the table. */
static uint32_t child(struct stree *t, uint32_t parent, uint32_t name, int *made)
{
	if (t->lazy && t->tail_of[parent] != STREE_NONE)
		expand_tail(t, parent);
	struct stacktree_node *p = &t->nodes[parent];
	uint32_t last = p->last;
	if (last != STREE_NONE && t->nodes[last].name == name)
		return last;
	if (t->flamechart || p->nkids == 0)
		goto make;
	if (p->nkids <= FEW_KIDS) {
		for (uint32_t c = p->first; c != STREE_NONE; c = t->nodes[c].next)
			if (t->nodes[c].name == name)
				return c;
	} else {
		size_t j = child_hash(parent, name) & t->mask;
		uint32_t id;
		while ((id = t->slots[j]) != STREE_NONE) {
			if (t->nodes[id].parent == parent && t->nodes[id].name == name)
				return id;
			j = (j + 1) & t->mask;
		}
	}
make:;
	*made = 1;
	uint32_t id = new_node(t, parent, name);
	p = &t->nodes[parent];
	p->nkids++;
	if (t->flamechart)
		return id;
	if (p->nkids == FEW_KIDS + 1) {
		for (uint32_t c = p->first; c != STREE_NONE; c = t->nodes[c].next)
			hash_insert(t, c);
	} else if (p->nkids > FEW_KIDS + 1)
		hash_insert(t, id);
	return id;
}

static void set_tail(struct stree *t, uint32_t id, const char *s, size_t len, double w0, double w1,
		     int copy)
{
	uint32_t k = t->free_tail;
	if (k != STREE_NONE) {
		t->free_tail = STREE_NONE;
	} else {
		if (t->ntails == t->tails_cap)
			t->tails = marple_grow(t->tails, &t->tails_cap, t->ntails + 1, sizeof(*t->tails));
		k = (uint32_t)t->ntails++;
	}
	t->tails[k] = (struct tail){ copy ? store(t, s, len) : s, len, w0, w1 };
	t->tail_of[id] = k;
}

/* Make the first frame of a node's tail a node (the only child so far), the
 * rest of the tail moving down to it. */
static void expand_tail(struct stree *t, uint32_t id)
{
	uint32_t k = t->tail_of[id];
	struct tail tl = t->tails[k];
	const char *semi = memchr(tl.s, ';', tl.len);
	size_t fl = semi ? (size_t)(semi - tl.s) : tl.len;
	int made = 0;

	t->tail_of[id] = STREE_NONE;
	t->free_tail = k;
	uint32_t c = child(t, id, intern(t, tl.s, fl), &made);
	t->nodes[c].v += tl.w0;
	if (t->v2)
		t->v2[c] += tl.w1;
	if (semi)
		set_tail(t, c, semi + 1, tl.len - fl - 1, tl.w0, tl.w1, 0);
}

void stacktree_lazy_tails(struct stree *t)
{
	if (t->n != 1 || t->lazy)
		return;
	t->lazy = 1;
	t->tail_of = marple_malloc(t->cap * sizeof(*t->tail_of));
	t->tail_of[0] = STREE_NONE;
	t->free_tail = STREE_NONE;
}

struct stree *stacktree_new(int flamechart)
{
	struct stree *t = marple_calloc(1, sizeof(*t));
	t->flamechart = flamechart;
	t->mask = 1023;
	t->slots = new_slots(t->mask + 1);
	t->name_tab = hashtab_new();
	new_node(t, STREE_NONE, intern(t, "all", 3));
	return t;
}

void stacktree_free(struct stree *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nblocks; i++)
		free(t->blocks[i]);
	free(t->blocks);
	free(t->scratch_frames);
	free(t->lineless);
	free(t->lineless_frames);
	free(t->nodes);
	free(t->slots);
	free(t->names);
	hashtab_free(t->name_tab);
	free(t->v2);
	free(t->prev);
	free(t->prev_off);
	free(t->prev_len);
	free(t->prev_node);
	free(t->tail_of);
	free(t->tails);
	for (size_t i = 0; i < t->ninputs; i++)
		lines_free(t->inputs[i]);
	free(t->inputs);
	free(t);
}

/* The second counts, from the first input that had them (until then each
 * node's second count equals its first). */
static void need_v2(struct stree *t)
{
	t->v2 = marple_malloc((t->cap ? t->cap : 1) * sizeof(*t->v2));
	for (size_t k = 0; k < t->n; k++)
		t->v2[k] = t->nodes[k].v;
}

static void grow_prev(struct stree *t, size_t n)
{
	if (n <= t->prev_ncap)
		return;
	size_t cap = t->prev_ncap;
	t->prev_off = marple_grow(t->prev_off, &cap, n, sizeof(size_t));
	cap = t->prev_ncap;
	t->prev_len = marple_grow(t->prev_len, &cap, n, sizeof(size_t));
	cap = t->prev_ncap;
	t->prev_node = marple_grow(t->prev_node, &cap, n, sizeof(uint32_t));
	t->prev_ncap = cap;
}

/* Descend one frame from cur (made if missing), remembering it as frame i of
 * the previous stack. */
static inline uint32_t add_frame(struct stree *t, uint32_t cur, size_t i, const char *s, size_t len,
				 size_t off, double w0, double w1, int *made)
{
	cur = child(t, cur, intern(t, s, len), made);
	t->nodes[cur].v += w0;
	if (t->v2)
		t->v2[cur] += w1;
	t->prev_off[i] = off;
	t->prev_len[i] = len;
	t->prev_node[i] = cur;
	return cur;
}

void stacktree_max_frames(struct stree *t, size_t n)
{
	t->max_frames = n;
}

/* Add one stack (frames root first) with its weights; the root node (id 0,
 * named "all") gets them too. */
static void stacktree_add(struct stree *t, const struct mstr *frames, size_t n, double w0, double w1)
{
	uint32_t cur = 0;
	size_t i = 0, bytes = 0;

	if (t->max_frames && n > t->max_frames)
		n = t->max_frames;

	if (t->prev_s != t->prev)
		t->prev_n = 0;	/* the previous frames are not in prev */
	if (w1 != w0 && !t->v2)
		need_v2(t);
	double *v2 = t->v2;
	t->nodes[0].v += w0;
	if (v2)
		v2[0] += w1;
	/* reuse the path of the previous stack while the frames are equal */
	for (; i < n && i < t->prev_n; i++) {
		if (frames[i].len != t->prev_len[i] ||
		    memcmp(frames[i].s, t->prev + t->prev_off[i], frames[i].len) != 0)
			break;
		cur = t->prev_node[i];
		t->nodes[cur].v += w0;
		if (v2)
			v2[cur] += w1;
	}
	grow_prev(t, n);
	if (i > 0)
		bytes = t->prev_off[i - 1] + t->prev_len[i - 1];
	size_t total = bytes;
	for (size_t k = i; k < n; k++)
		total += frames[k].len;
	t->prev = marple_grow(t->prev, &t->prev_cap, total + 1, 1);
	for (; i < n; i++) {
		memcpy(t->prev + bytes, frames[i].s, frames[i].len);
		int made = 0;
		cur = add_frame(t, cur, i, frames[i].s, frames[i].len, bytes, w0, w1, &made);
		bytes += frames[i].len;
	}
	t->prev_n = n;
	t->prev_text = 0;
	t->prev_s = t->prev;
}

/* Length of the common prefix of a and b (sorted stacks share hundreds of
 * bytes, so 16 at a time where the CPU can). */
static size_t common_prefix(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t n = alen < blen ? alen : blen, i = 0;
#ifdef __SSE2__
	for (; i + 16 <= n; i += 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(a + i));
		__m128i y = _mm_loadu_si128((const __m128i *)(const void *)(b + i));
		unsigned diff = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, y)) ^ 0xffffu;
		if (diff)
			return i + (size_t)__builtin_ctz(diff);
	}
#endif
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	for (; i + 8 <= n; i += 8) {
		uint64_t x, y;
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
			return i + (size_t)__builtin_ctzll(x ^ y) / 8;
	}
#endif
	while (i < n && a[i] == b[i])
		i++;
	return i;
}

/* Folded text root first is the common case (and sorted input the common
 * order), so it skips the frame array: the previous stack is kept as text, one
 * byte comparison finds the frames both share, and only the frames after them
 * are split and looked up. */
static void add_folded_text(struct stree *t, const char *stack, size_t len, double w0, double w1)
{
	size_t same = t->prev_text ? common_prefix(stack, len, t->prev_s, t->prev_bytes) : 0;
	size_t i = 0, pos = 0;
	uint32_t cur = 0;

	if (w1 != w0 && !t->v2)
		need_v2(t);
	t->nodes[0].v += w0;
	if (t->v2)
		t->v2[0] += w1;
	/* Frame i is shared if it lies in the common bytes and ends where the
	 * current stack's frame ends too.  Before the first difference both
	 * have a ';' after each frame; a frame ending at the difference is
	 * shared only if both stacks end it there. */
	size_t np = t->prev_n;
	while (i < np && t->prev_off[i] + t->prev_len[i] < same)
		i++;
	if (i < np) {
		size_t e = t->prev_off[i] + t->prev_len[i];
		if (e == same && (e == len || stack[e] == ';'))
			i++;
	}
	if (i > 0)
		pos = t->prev_off[i - 1] + t->prev_len[i - 1] + 1;
	struct stacktree_node *nodes = t->nodes;
	for (size_t k = 0; k < i; k++)
		nodes[t->prev_node[k]].v += w0;
	if (t->v2)
		for (size_t k = 0; k < i; k++)
			t->v2[t->prev_node[k]] += w1;
	if (i > 0)
		cur = t->prev_node[i - 1];
	/* pos > len: the whole stack was shared */
	for (; pos <= len; i++) {
		if (i >= t->prev_ncap)
			grow_prev(t, i + 1);
		const char *semi = memchr(stack + pos, ';', len - pos);
		size_t fl = semi ? (size_t)(semi - stack) - pos : len - pos;
		int made = 0;
		cur = add_frame(t, cur, i, stack + pos, fl, pos, w0, w1, &made);
		pos += fl + 1;
		if (made && t->lazy && semi) {
			/* a new node: the frames below it are this stack's alone */
			set_tail(t, cur, stack + pos, len - pos, w0, w1, !t->stable);
			i++;
			break;
		}
	}
	t->prev_n = i;
	if (t->stable) {
		t->prev_s = stack;
	} else {
		if (t->prev_s != t->prev)
			same = 0;
		if (len + 1 > t->prev_cap)
			t->prev = marple_grow(t->prev, &t->prev_cap, len + 1, 1);
		memcpy(t->prev + same, stack + same, len - same);
		t->prev_s = t->prev;
	}
	t->prev_bytes = len;
	t->prev_text = 1;
}

/* Same for folded text "a;b;c". */
static void stacktree_add_folded(struct stree *t, const char *stack, size_t len, double w0, double w1,
		      int reverse)
{
	static struct mstr *fr;
	static size_t cap;
	size_t n = 0, pos = 0, fl;
	const char *f;

	if (!reverse) {
		add_folded_text(t, stack, len, w0, w1);
		return;
	}
	while (folded_next_frame(stack, len, &pos, &f, &fl)) {
		if (n == cap)
			fr = marple_grow(fr, &cap, n + 1, sizeof(*fr));
		fr[n++] = (struct mstr){ f, fl };
	}
	for (size_t i = 0; i < n / 2; i++) {
		struct mstr x = fr[i];
		fr[i] = fr[n - 1 - i];
		fr[n - 1 - i] = x;
	}
	stacktree_add(t, fr, n, w0, w1);
}

static const struct stree *sort_tree;

static int cmp_by_name(const void *a, const void *b)
{
	struct mstr x = sort_tree->names[sort_tree->nodes[*(const uint32_t *)a].name];
	struct mstr y = sort_tree->names[sort_tree->nodes[*(const uint32_t *)b].name];
	size_t m = x.len < y.len ? x.len : y.len;
	int c = memcmp(x.s, y.s, m);
	if (c)
		return c;
	return x.len < y.len ? -1 : x.len > y.len;
}

const uint32_t *stacktree_children(struct stree *t, uint32_t id, int sorted, size_t *n)
{
	static uint32_t *kids;
	static size_t cap;
	size_t k = 0;

	if (t->lazy && t->tail_of[id] != STREE_NONE)
		expand_tail(t, id);
	*n = t->nodes[id].nkids;
	kids = marple_grow(kids, &cap, *n + 1, sizeof(*kids));
	for (uint32_t c = t->nodes[id].first; c != STREE_NONE; c = t->nodes[c].next)
		kids[k++] = c;
	if (!sorted || k < 2)
		return kids;
	sort_tree = t;
	size_t j = 1;
	while (j < k && cmp_by_name(&kids[j - 1], &kids[j]) <= 0)
		j++;
	if (j == k)
		return kids;	/* sorted input gives sorted children */
	qsort(kids, k, sizeof(*kids), cmp_by_name);
	return kids;
}

const struct stacktree_node *stacktree_node(const struct stree *t, uint32_t id) { return &t->nodes[id]; }
struct mstr stacktree_name(const struct stree *t, uint32_t id) { return t->names[id]; }
size_t stacktree_names(const struct stree *t) { return t->nnames; }
double stacktree_weight2(const struct stree *t, uint32_t id) { return t->v2 ? t->v2[id] : t->nodes[id].v; }

/* ---- input ---- */

static void bad(struct stacktree_input *in, const char *file, unsigned long line, const char *why)
{
	in->bad++;
	if (in->reported++ < MARPLE_REPORT_FIRST)
		marple_warn_at(file, line, "%s", why);
}

/* --nolineno: the frames of a record without their lines (into t's scratch). */
static const struct mstr *lineless_frames(struct stree *t, const struct mstr *fr, size_t n)
{
	size_t need = 0, o = 0;
	for (size_t i = 0; i < n; i++)
		need += fr[i].len;
	t->lineless = marple_grow(t->lineless, &t->lineless_cap, need + 1, 1);
	t->lineless_frames = marple_grow(t->lineless_frames, &t->lineless_frames_cap, n + 1, sizeof(struct mstr));
	for (size_t i = 0; i < n; i++) {
		size_t at = stackfilter_line_at(fr[i].s, fr[i].len), len = at ? at + 1 : fr[i].len;
		memcpy(t->lineless + o, fr[i].s, len);
		if (at)
			t->lineless[o + at] = ')';
		t->lineless_frames[i] = (struct mstr){ t->lineless + o, len };
		o += len;
	}
	return t->lineless_frames;
}

/* --nolineno: a frame described with its line describes the frame without
 * it too ("fib (x.py:9)" -> "fib (x.py)": still a Python function). */
static void describe_lineless(struct framedesc *fd, json_t *trailer)
{
	json_t *frames = json_object_get(trailer, "frames"), *v, *alias = json_object();
	const char *name;

	json_object_foreach(frames, name, v) {
		size_t at = stackfilter_line_at(name, strlen(name));
		if (!at)
			continue;
		char *short_name = marple_strndup(name, at + 1);
		short_name[at] = ')';
		json_object_set(alias, short_name, v);
		free(short_name);
	}
	json_t *tr = json_pack("{s:o}", "frames", alias);
	framedesc_add(fd, tr);
	json_decref(tr);
}

static int read_stream(struct stree *t, struct lines *l, const char *file, struct stacktree_input *in)
{
	struct stream_reader *r = stream_reader_new_lines(l, file);
	enum stream_item it;
	double factor = in->factor > 0 ? in->factor : 1;
	struct mstr *rev = NULL;
	size_t revcap = 0;
	int rc = 0, stack_sections = 0, other_sections = 0, skipping = 0;
	int section_off = 1;	/* the section's "cpu": 1 off (or not said), 0 on */

	while ((it = stream_reader_next(r)) != STREAM_EOF) {
		if (it == STREAM_ERROR) {
			bad(in, file, stream_reader_line(r), stream_reader_error(r));
			continue;
		}
		if (it == STREAM_HEADER) {
			/* a collector's other sections (memleak's points after its
			 * stacks): named and left out, as marple-fold does */
			skipping = stream_reader_datatype(r) != DATATYPE_STACK;
			if (skipping) {
				other_sections++;
				/* a timed section's samples: the stack section
				 * before holds the same weight (marple-fold's rule) */
				if (timed_role(stream_reader_header(r)) == TIMED_SAMPLES)
					continue;
				marple_warn_at(file, stream_reader_line(r), "section %ld holds %s data, not stacks: skipped",
					stream_reader_section(r), stream_datatype_name(stream_reader_datatype(r)));
				continue;
			}
			skipping = !stackunits_admit(&in->units, stream_reader_header(r), file, stream_reader_line(r),
						     stream_reader_section(r));
			if (skipping)
				continue;
			stack_sections++;
			const char *cpu = stream_header_str(stream_reader_header(r), "cpu", NULL);
			section_off = !cpu || strcmp(cpu, "on") != 0;
			if (section_off == 0)
				in->on_cpu = 1;
			if (!in->unit)
				in->unit = marple_strdup(in->units.unit);
			if (!in->measure) {
				struct weight_meaning m;
				weight_meaning_of(stream_reader_header(r), &m);
				in->measure = marple_strdup(m.measure);
			}
			const char *iface = stream_header_str(stream_reader_header(r), "interface", NULL);
			if (iface && !in->interface) {
				in->interface = marple_strdup(iface);
				const char *host = stream_header_str(stream_reader_header(r), "host", NULL);
				if (host)
					in->host = marple_strdup(host);
				json_t *o = json_object_get(stream_reader_header(r), "options");
				in->on_cpu = json_is_true(json_object_get(o, "on_cpu"));
			}
			continue;
		}
		if (it == STREAM_TRAILER && !skipping && in->frames) {
			framedesc_add(in->frames, stream_reader_trailer(r));
			if (in->nolineno)
				describe_lineless(in->frames, stream_reader_trailer(r));
		}
		if (it != STREAM_RECORD || skipping)
			continue;
		const struct stack_rec *s = stream_reader_stack(r);
		const struct mstr *fr = in->nolineno ? lineless_frames(t, s->frames, s->nframes) : s->frames;
		if (in->user_threads && stackfilter_kernel_thread(s->frames, s->nframes)) {
			stackfilter_count_add(&in->kthreads, s->frames[0], (double)s->weight * factor);
			in->stacks++;
			continue;
		}
		if (in->reverse) {
			rev = marple_grow(rev, &revcap, s->nframes + 1, sizeof(*rev));
			for (size_t i = 0; i < s->nframes; i++)
				rev[i] = fr[s->nframes - 1 - i];
			fr = rev;
		}
		double w = (double)s->weight * factor;
		stacktree_add(t, fr, s->nframes, w, in->split_offcpu && in->on_cpu && !section_off ? 0 : w);
		in->stacks++;
	}
	const char *why = stream_reader_unusable(r);
	if (why) {
		marple_warn_at(file, 0, "%s", why);
		rc = -1;
	} else if (other_sections && !stack_sections && !in->units.skipped) {
		marple_warn_at(file, 0, "no stack section, nothing to draw (select stack sections with marple-cat -s)");
		rc = -1;
	}
	free(rev);
	stream_reader_free(r);
	return rc;
}

/* --user-threads-only on folded text: a kernel thread's line, counted. */
static int kernel_thread_line(struct stree *t, const struct folded_line *fl, double w, struct stacktree_input *in)
{
	size_t n = folded_split_frames(fl->stack, fl->len, &t->scratch_frames, &t->scratch_cap);
	if (!stackfilter_kernel_thread(t->scratch_frames, n))
		return 0;
	stackfilter_count_add(&in->kthreads, t->scratch_frames[0], w);
	in->stacks++;
	return 1;
}

/* Read one input operand ("-" = stdin): folded text or marple stack sections,
 * detected from its first line.  Bad lines are reported as "prog: file:line:
 * reason" (the first 20) and counted.  Sections of another datatype are named
 * in one line each and skipped.  Returns 0, or -1 if the input is unusable
 * (marple-format(5): a NUL byte, or more malformed lines than usable ones),
 * has sections but no stack section, or cannot be read (message printed). */
static int stacktree_read(struct stree *t, const char *path, struct stacktree_input *in)
{
	FILE *f = marple_open_input(path);
	const char *file = marple_input_name(path);
	/* a lazy tree keeps a mapped input: its tails need not be copied */
	struct lines *l = t->lazy ? lines_new_whole(f, file) : lines_new(f, file);
	double factor = in->factor > 0 ? in->factor : 1;
	const char *why;
	int rc = 0, r;
	t->stable = lines_stable(l);

	if (folded_input_is_stream(l)) {
		rc = read_stream(t, l, file, in);
	} else {
		struct folded_line fl;
		uint64_t stacks_before = in->stacks, bad_before = in->bad;
		unsigned long nul_line = 0;
		while ((r = folded_next_line(l, 2, &fl, &why)) != 0 && r != -2) {
			if (r == FOLDED_NUL) {	/* binary data: nothing more is read */
				nul_line = lines_lineno(l);
				bad(in, file, nul_line, why);
				break;
			}
			if (r < 0) {
				bad(in, file, lines_lineno(l), why);
				continue;
			}
			double w0 = fl.count[0] * factor, w1 = w0;
			if (in->user_threads && kernel_thread_line(t, &fl, w0, in))
				continue;
			if (fl.ncounts == 2) {
				w1 = fl.count[1] * factor;
				in->two_counts = 1;
			}
			if (in->nolineno) {	/* the text is ours, not the input's: copied */
				size_t len = stackfilter_strip_lines(fl.stack, fl.len, &t->lineless, &t->lineless_cap);
				int stable = t->stable;
				t->stable = 0;
				stacktree_add_folded(t, t->lineless, len, w0, w1, in->reverse);
				t->stable = stable;
			} else
				stacktree_add_folded(t, fl.stack, fl.len, w0, w1, in->reverse);
			in->stacks++;
		}
		if (r == -2)
			rc = -1;
		why = stream_unusable_why(in->stacks - stacks_before, in->bad - bad_before, nul_line);
		if (rc == 0 && why) {
			marple_warn_at(file, 0, "%s", why);
			rc = -1;
		}
	}
	t->stable = 0;
	if (lines_stable(l) && t->ntails) {
		t->inputs = marple_grow(t->inputs, &t->inputs_cap, t->ninputs + 1, sizeof(*t->inputs));
		t->inputs[t->ninputs++] = l;
	} else {
		if (lines_stable(l))
			t->prev_text = 0;	/* prev_s points into it */
		lines_free(l);
	}
	if (f != stdin)
		fclose(f);
	return rc;
}

int stacktree_read_operands(struct stree *t, int n, char **paths, struct stacktree_input *in)
{
	char *stdin_only[] = { "-" };
	if (n <= 0) {
		paths = stdin_only;
		n = 1;
	}
	for (int i = 0; i < n; i++)
		if (stacktree_read(t, paths[i], in) < 0) {
			stackunits_free(&in->units);
			return -1;
		}
	marple_warn_skipped_lines(in->bad);
	stackfilter_count_say(&in->kthreads, in->unit, "without --user-threads-only they are drawn");
	stackunits_free(&in->units);
	return 0;
}
