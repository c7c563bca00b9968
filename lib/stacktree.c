/* stacktree.c — merging stacks into a tree; reading folded or stream input
 * for the stack renderers (see stacktree.h). */
#include "stacktree.h"

#include <stdlib.h>
#include <string.h>

#include "folded.h"
#include "lines.h"
#include "stream.h"
#include "util.h"

#define MAX_REPORTED 20

struct stree {
	int flamechart;
	struct stree_node *nodes;
	size_t n, cap;
	/* (parent, name) -> node */
	uint32_t *slots;
	size_t mask;
	/* interned names */
	struct mstr *names;
	uint64_t *name_hash;
	size_t nnames, names_cap;
	uint32_t *name_slots;
	size_t name_mask;
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
	size_t hashed;		/* children in the table */
};

static uint32_t *new_slots(size_t n)
{
	uint32_t *s = xmalloc(n * sizeof(uint32_t));
	memset(s, 0xff, n * sizeof(uint32_t));
	return s;
}

static const char *store(struct stree *t, const char *s, size_t len)
{
	if (t->blk_cap - t->blk_used < len || !t->blk) {
		size_t cap = len > (1u << 20) ? len : (1u << 20);
		t->blk = xmalloc(cap ? cap : 1);
		t->blk_cap = cap;
		t->blk_used = 0;
		t->blocks = realloc(t->blocks, (t->nblocks + 1) * sizeof(char *));
		if (!t->blocks)
			fatal(EXIT_DATA, "out of memory");
		t->blocks[t->nblocks++] = t->blk;
	}
	char *d = t->blk + t->blk_used;
	memcpy(d, s, len);
	t->blk_used += len;
	return d;
}

static uint32_t intern(struct stree *t, const char *s, size_t len)
{
	uint64_t h = marple_hash(s, len);
	size_t j = h & t->name_mask;
	uint32_t id;
	while ((id = t->name_slots[j]) != STREE_NONE) {
		if (t->name_hash[id] == h && t->names[id].len == len && memcmp(t->names[id].s, s, len) == 0)
			return id;
		j = (j + 1) & t->name_mask;
	}
	if (t->nnames == t->names_cap) {
		size_t cap = t->names_cap ? t->names_cap * 2 : 1024;
		t->names = realloc(t->names, cap * sizeof(*t->names));
		t->name_hash = realloc(t->name_hash, cap * sizeof(*t->name_hash));
		if (!t->names || !t->name_hash)
			fatal(EXIT_DATA, "out of memory");
		t->names_cap = cap;
	}
	id = (uint32_t)t->nnames++;
	t->names[id] = (struct mstr){ store(t, s, len), len };
	t->name_hash[id] = h;
	t->name_slots[j] = id;
	if (t->nnames * 2 > t->name_mask) {
		size_t nm = t->name_mask * 2 + 1;
		uint32_t *ns = new_slots(nm + 1);
		for (size_t i = 0; i < t->nnames; i++) {
			size_t k = t->name_hash[i] & nm;
			while (ns[k] != STREE_NONE)
				k = (k + 1) & nm;
			ns[k] = (uint32_t)i;
		}
		free(t->name_slots);
		t->name_slots = ns;
		t->name_mask = nm;
	}
	return id;
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
			fatal(EXIT_DATA, "out of memory");
		if (t->v2) {
			t->v2 = realloc(t->v2, cap * sizeof(*t->v2));
			if (!t->v2)
				fatal(EXIT_DATA, "out of memory");
		}
		t->cap = cap;
	}
	uint32_t id = (uint32_t)t->n++;
	struct stree_node *nd = &t->nodes[id];
	nd->name = name;
	nd->parent = parent;
	nd->first = nd->next = nd->last = STREE_NONE;
	nd->nkids = 0;
	nd->v = 0;
	if (t->v2)
		t->v2[id] = 0;
	if (parent != STREE_NONE) {
		struct stree_node *p = &t->nodes[parent];
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

/* The child of parent with this name, made if missing.  Parents with few
 * children are searched along their list; larger ones through the table. */
static uint32_t child(struct stree *t, uint32_t parent, uint32_t name)
{
	struct stree_node *p = &t->nodes[parent];
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

struct stree *stree_new(int flamechart)
{
	struct stree *t = xcalloc(1, sizeof(*t));
	t->flamechart = flamechart;
	t->mask = 1023;
	t->slots = new_slots(t->mask + 1);
	t->name_mask = 1023;
	t->name_slots = new_slots(t->name_mask + 1);
	new_node(t, STREE_NONE, intern(t, "all", 3));
	return t;
}

void stree_free(struct stree *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nblocks; i++)
		free(t->blocks[i]);
	free(t->blocks);
	free(t->nodes);
	free(t->slots);
	free(t->names);
	free(t->name_hash);
	free(t->name_slots);
	free(t->v2);
	free(t->prev);
	free(t->prev_off);
	free(t->prev_len);
	free(t->prev_node);
	free(t);
}

void stree_add(struct stree *t, const struct mstr *frames, size_t n, double w0, double w1)
{
	uint32_t cur = 0;
	size_t i = 0, bytes = 0;

	if (w1 != w0 && !t->v2) {
		t->v2 = xmalloc((t->cap ? t->cap : 1) * sizeof(*t->v2));
		for (size_t k = 0; k < t->n; k++)
			t->v2[k] = t->nodes[k].v;
	}
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
	if (n > t->prev_ncap) {
		size_t cap = t->prev_ncap;
		t->prev_off = xgrow(t->prev_off, &cap, n, sizeof(size_t));
		cap = t->prev_ncap;
		t->prev_len = xgrow(t->prev_len, &cap, n, sizeof(size_t));
		cap = t->prev_ncap;
		t->prev_node = xgrow(t->prev_node, &cap, n, sizeof(uint32_t));
		t->prev_ncap = cap;
	}
	if (i > 0)
		bytes = t->prev_off[i - 1] + t->prev_len[i - 1];
	for (; i < n; i++) {
		cur = child(t, cur, intern(t, frames[i].s, frames[i].len));
		t->nodes[cur].v += w0;
		if (t->v2)
			t->v2[cur] += w1;
		t->prev = xgrow(t->prev, &t->prev_cap, bytes + frames[i].len + 1, 1);
		memcpy(t->prev + bytes, frames[i].s, frames[i].len);
		t->prev_off[i] = bytes;
		t->prev_len[i] = frames[i].len;
		t->prev_node[i] = cur;
		bytes += frames[i].len;
	}
	t->prev_n = n;
}

void stree_add_folded(struct stree *t, const char *stack, size_t len, double w0, double w1,
		      int reverse)
{
	static struct mstr *fr;
	static size_t cap;
	size_t n = 0, pos = 0, fl;
	const char *f;

	while (folded_next_frame(stack, len, &pos, &f, &fl)) {
		fr = xgrow(fr, &cap, n + 1, sizeof(*fr));
		fr[n++] = (struct mstr){ f, fl };
	}
	if (reverse)
		for (size_t i = 0; i < n / 2; i++) {
			struct mstr x = fr[i];
			fr[i] = fr[n - 1 - i];
			fr[n - 1 - i] = x;
		}
	stree_add(t, fr, n, w0, w1);
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

const uint32_t *stree_children(struct stree *t, uint32_t id, int sorted, size_t *n)
{
	static uint32_t *kids;
	static size_t cap;
	size_t k = 0;

	*n = t->nodes[id].nkids;
	kids = xgrow(kids, &cap, *n + 1, sizeof(*kids));
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

void stree_sort_children(struct stree *t, uint32_t id)
{
	size_t k;
	const uint32_t *kids = stree_children(t, id, 1, &k);
	if (k < 2)
		return;
	t->nodes[id].first = kids[0];
	for (size_t j = 0; j + 1 < k; j++)
		t->nodes[kids[j]].next = kids[j + 1];
	t->nodes[kids[k - 1]].next = STREE_NONE;
	t->nodes[id].last = kids[k - 1];
}

void stree_sort_by_name(struct stree *t)
{
	for (size_t i = 0; i < t->n; i++)
		stree_sort_children(t, (uint32_t)i);
}

size_t stree_size(const struct stree *t) { return t->n; }
const struct stree_node *stree_node(const struct stree *t, uint32_t id) { return &t->nodes[id]; }
struct mstr stree_name(const struct stree *t, uint32_t id) { return t->names[id]; }
size_t stree_names(const struct stree *t) { return t->nnames; }
double stree_weight2(const struct stree *t, uint32_t id) { return t->v2 ? t->v2[id] : t->nodes[id].v; }

/* ---- input ---- */

static void bad(struct stree_input *in, const char *file, unsigned long line, const char *why)
{
	in->bad++;
	if (in->reported++ < MAX_REPORTED)
		warn_at(file, line, "%s", why);
}

static int read_stream(struct stree *t, struct lines *l, const char *file, struct stree_input *in)
{
	FILE *f = lines_as_file(l);
	struct stream_reader *r = stream_reader_new(f, file);
	enum stream_item it;
	double factor = in->factor > 0 ? in->factor : 1;
	struct mstr *rev = NULL;
	size_t revcap = 0;
	int rc = 0;

	while ((it = stream_reader_next(r)) != STREAM_EOF) {
		if (it == STREAM_ERROR) {
			bad(in, file, stream_reader_line(r), stream_reader_error(r));
			continue;
		}
		if (it == STREAM_HEADER) {
			if (stream_reader_datatype(r) != DATATYPE_STACK) {
				warn_at(file, stream_reader_line(r),
					"section %ld holds %s data, not stacks (select stack sections with marple-cat -s)",
					stream_reader_section(r), datatype_name(stream_reader_datatype(r)));
				rc = -1;
				break;
			}
			json_t *u = json_object_get(stream_reader_header(r), "units");
			const char *w = json_string_value(json_object_get(u, "weight"));
			if (w && !in->unit)
				in->unit = xstrdup(w);
			continue;
		}
		if (it != STREAM_RECORD)
			continue;
		const struct stack_rec *s = stream_reader_stack(r);
		const struct mstr *fr = s->frames;
		if (in->reverse) {
			rev = xgrow(rev, &revcap, s->nframes + 1, sizeof(*rev));
			for (size_t i = 0; i < s->nframes; i++)
				rev[i] = s->frames[s->nframes - 1 - i];
			fr = rev;
		}
		double w = (double)s->weight * factor;
		stree_add(t, fr, s->nframes, w, w);
		in->stacks++;
	}
	free(rev);
	stream_reader_free(r);
	fclose(f);
	return rc;
}

int stree_read(struct stree *t, const char *path, struct stree_input *in)
{
	FILE *f = open_input(path);
	const char *file = input_name(path);
	struct lines *l = lines_new(f, file);
	double factor = in->factor > 0 ? in->factor : 1;
	const char *s, *why;
	size_t len, plen;
	int rc = 0, r;
	const char *peek = lines_peek(l, 1, &plen);

	if (plen > 0 && peek[0] == '{') {
		rc = read_stream(t, l, file, in);
	} else {
		struct folded_line fl;
		while ((r = lines_next(l, &s, &len)) > 0) {
			if (len == 0 || (len == 1 && s[0] == '\r'))
				continue;
			if (folded_parse_line(s, len, 2, &fl, &why) < 0) {
				bad(in, file, lines_lineno(l), why);
				continue;
			}
			double w0 = fl.count[0] * factor, w1 = w0;
			if (fl.ncounts == 2) {
				w1 = fl.count[1] * factor;
				in->two_counts = 1;
			}
			stree_add_folded(t, fl.stack, fl.len, w0, w1, in->reverse);
			in->stacks++;
		}
		if (r < 0)
			rc = -1;
	}
	lines_free(l);
	if (f != stdin)
		fclose(f);
	return rc;
}

int stree_read_operands(struct stree *t, int n, char **paths, struct stree_input *in)
{
	char *stdin_only[] = { "-" };
	if (n <= 0) {
		paths = stdin_only;
		n = 1;
	}
	for (int i = 0; i < n; i++)
		if (stree_read(t, paths[i], in) < 0)
			return -1;
	if (in->bad)
		warnmsg("%llu malformed line%s skipped%s", (unsigned long long)in->bad, in->bad == 1 ? "" : "s",
			in->bad > MAX_REPORTED ? " (only the first 20 shown)" : "");
	return 0;
}
