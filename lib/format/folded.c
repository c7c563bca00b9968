/* folded.c — folded stack lines and the unique-stack hash table (folded.h). */
#include "folded.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r' || c == '\n';
}

/* A count ending at e: \d+(\.\d*)? preceded by one blank.  Returns its start or NULL. */
static const char *count_before(const char *s, const char *e, double *v, int *integral, uint64_t *iv)
{
	const char *p = e;
	while (p > s && p[-1] >= '0' && p[-1] <= '9')
		p--;
	const char *dot = NULL;
	if (p > s && p[-1] == '.') {
		dot = p - 1;
		p = dot;
		while (p > s && p[-1] >= '0' && p[-1] <= '9')
			p--;
		if (p == dot)
			return NULL;
	} else if (p == e)
		return NULL;
	if (p == s || !is_blank(p[-1]))
		return NULL;
	uint64_t n = 0;
	int ok = 1;
	const char *ie = dot ? dot : e;
	for (const char *q = p; q < ie; q++) {
		uint64_t d = (uint64_t)(*q - '0');
		if (n > (UINT64_MAX - d) / 10)
			ok = 0;
		n = n * 10 + d;
	}
	if (dot)
		for (const char *q = dot + 1; q < e; q++)
			if (*q != '0')
				ok = 0;
	char buf[64];
	size_t l = (size_t)(e - p);
	if (ok && ie - p <= 15) {
		/* below 10^15 the integer is exact as a double, as strtod would give it */
		*v = (double)n;
	} else if (l < sizeof(buf)) {
		memcpy(buf, p, l);
		buf[l] = 0;
		*v = strtod(buf, NULL);
	} else {	/* long (zero-padded) counts are read whole, as Perl does */
		char *big = marple_strndup(p, l);
		*v = strtod(big, NULL);
		free(big);
	}
	*integral = ok;
	*iv = n;
	return p;
}

int folded_parse_line(const char *s, size_t len, int maxcounts, struct folded_line *out,
		      const char **why)
{
	if (len && s[len - 1] == '\r')
		len--;
	double v;
	int integral;
	uint64_t iv;
	const char *c = count_before(s, s + len, &v, &integral, &iv);
	if (!c) {
		*why = "no count at the end of the line (expected \"stack count\")";
		return -1;
	}
	out->stack = s;
	out->len = (size_t)(c - 1 - s);
	out->ncounts = 1;
	out->count[0] = v;
	out->icount[0] = iv;
	out->integral = integral;
	out->count[1] = 0;
	out->icount[1] = 0;
	if (maxcounts > 1) {
		const char *c2 = count_before(s, c - 1, &v, &integral, &iv);
		if (c2) {
			out->ncounts = 2;
			out->count[1] = out->count[0];
			out->icount[1] = out->icount[0];
			out->count[0] = v;
			out->icount[0] = iv;
			out->integral = out->integral && integral;
			out->len = (size_t)(c2 - 1 - s);
		}
	}
	return 0;
}

int folded_line_looks_folded(const char *s, size_t len)
{
	struct folded_line fl;
	const char *why;
	if (len == 0 || is_blank(s[0]))
		return 0;
	return folded_parse_line(s, len, 2, &fl, &why) == 0 && fl.len > 0;
}

int folded_next_frame(const char *stack, size_t len, size_t *pos, const char **f, size_t *flen)
{
	if (*pos > len)
		return 0;
	const char *st = stack + *pos;
	const char *semi = memchr(st, ';', len - *pos);
	size_t l = semi ? (size_t)(semi - st) : len - *pos;
	*f = st;
	*flen = l;
	*pos += l + 1;
	return 1;
}

/* ---- hashing ---- */

static inline uint64_t rd64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static inline uint64_t mix(uint64_t a, uint64_t b)
{
	__uint128_t r = (__uint128_t)a * b;
	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

uint64_t marple_hash(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 0x243f6a8885a308d3ull ^ len;
	while (len >= 16) {
		h = mix(rd64(p) ^ 0xa0761d6478bd642full ^ h, rd64(p + 8) ^ 0xe7037ed1a0b428dbull);
		p += 16;
		len -= 16;
	}
	uint64_t a = 0, b = 0;
	if (len >= 8) {
		a = rd64(p);
		b = rd64(p + len - 8);
	} else if (len >= 4) {
		uint32_t x, y;
		memcpy(&x, p, 4);
		memcpy(&y, p + len - 4, 4);
		a = x;
		b = y;
	} else if (len > 0) {
		a = ((uint64_t)p[0] << 16) | ((uint64_t)p[len >> 1] << 8) | p[len - 1];
	}
	return mix(a ^ 0x8ebc6af09c88c6e3ull ^ h, b ^ 0x589965cc75374cc3ull);
}

/* ---- the table ---- */

struct arena_block {
	struct arena_block *next;
	size_t used, cap;
	char data[];
};

struct stack_agg {
	struct stack_agg_entry *ent;
	uint64_t *hashes;
	size_t n, cap;
	uint32_t *slots;	/* index + 1, 0 = empty */
	size_t mask;
	struct arena_block *arena;
	struct stack_agg_entry **sorted;
};

struct stack_agg *stack_agg_new(void)
{
	struct stack_agg *a = marple_calloc(1, sizeof(*a));
	a->mask = 1023;
	a->slots = marple_calloc(a->mask + 1, sizeof(uint32_t));
	return a;
}

void stack_agg_free(struct stack_agg *a)
{
	if (!a)
		return;
	for (struct arena_block *b = a->arena, *nx; b; b = nx) {
		nx = b->next;
		free(b);
	}
	free(a->ent);
	free(a->hashes);
	free(a->slots);
	free(a->sorted);
	free(a);
}

static char *arena_copy(struct stack_agg *a, const char *s, size_t len)
{
	struct arena_block *b = a->arena;
	if (!b || b->cap - b->used < len) {
		size_t cap = len > (1u << 20) ? len : (1u << 20);
		b = marple_malloc(sizeof(*b) + cap);
		b->cap = cap;
		b->used = 0;
		b->next = a->arena;
		a->arena = b;
	}
	char *d = b->data + b->used;
	memcpy(d, s, len);
	b->used += len;
	return d;
}

static void rehash(struct stack_agg *a)
{
	size_t nmask = a->mask * 2 + 1;
	uint32_t *ns = marple_calloc(nmask + 1, sizeof(uint32_t));
	for (size_t i = 0; i < a->n; i++) {
		size_t j = a->hashes[i] & nmask;
		while (ns[j])
			j = (j + 1) & nmask;
		ns[j] = (uint32_t)(i + 1);
	}
	free(a->slots);
	a->slots = ns;
	a->mask = nmask;
}

static inline uint64_t sat_add(uint64_t x, uint64_t y)
{
	return x + y < x ? UINT64_MAX : x + y;
}

void stack_agg_add(struct stack_agg *a, const char *key, size_t len, uint64_t c0, uint64_t c1)
{
	uint64_t h = marple_hash(key, len);
	size_t j = h & a->mask;
	uint32_t s;
	while ((s = a->slots[j])) {
		struct stack_agg_entry *e = &a->ent[s - 1];
		if (a->hashes[s - 1] == h && e->len == len && memcmp(e->key, key, len) == 0) {
			e->count[0] = sat_add(e->count[0], c0);
			e->count[1] = sat_add(e->count[1], c1);
			return;
		}
		j = (j + 1) & a->mask;
	}
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 1024;
		a->ent = realloc(a->ent, cap * sizeof(*a->ent));
		a->hashes = realloc(a->hashes, cap * sizeof(*a->hashes));
		if (!a->ent || !a->hashes)
			fatal(EXIT_DATA, "out of memory");
		a->cap = cap;
	}
	struct stack_agg_entry *e = &a->ent[a->n];
	e->key = arena_copy(a, key, len);
	e->len = len;
	e->count[0] = c0;
	e->count[1] = c1;
	a->hashes[a->n] = h;
	a->n++;
	a->slots[j] = (uint32_t)a->n;
	if (a->n * 2 > a->mask)
		rehash(a);
}

size_t stack_agg_size(const struct stack_agg *a)
{
	return a->n;
}

static int cmp_entry(const void *x, const void *y)
{
	const struct stack_agg_entry *a = *(struct stack_agg_entry *const *)x;
	const struct stack_agg_entry *b = *(struct stack_agg_entry *const *)y;
	size_t m = a->len < b->len ? a->len : b->len;
	int c = memcmp(a->key, b->key, m);
	if (c)
		return c;
	return a->len < b->len ? -1 : a->len > b->len;
}

struct stack_agg_entry **stack_agg_sorted(struct stack_agg *a)
{
	free(a->sorted);
	a->sorted = marple_malloc((a->n + 1) * sizeof(*a->sorted));
	for (size_t i = 0; i < a->n; i++)
		a->sorted[i] = &a->ent[i];
	qsort(a->sorted, a->n, sizeof(*a->sorted), cmp_entry);
	return a->sorted;
}
