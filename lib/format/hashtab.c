/* hashtab.c — the hash function and the bytes-to-counts table (hashtab.h). */
#include "hashtab.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Keys of 128 bytes and more (whole samples of perf script) in four lanes
 * of 16 bytes: the multiplies no longer wait for each other, 2.3 times as
 * fast.  Shorter keys hash as they always did. */
static uint64_t hash_lanes(const unsigned char **pp, size_t *lenp, uint64_t h)
{
	const unsigned char *p = *pp;
	size_t len = *lenp;
	uint64_t l1 = h ^ 0x452821e638d01377ull, l2 = h ^ 0xbe5466cf34e90c6cull, l3 = h ^ 0xc0ac29b7c97c50ddull;

	while (len >= 64) {
		h = hashtab_mix(hashtab_rd64(p) ^ 0xa0761d6478bd642full ^ h, hashtab_rd64(p + 8) ^ 0xe7037ed1a0b428dbull);
		l1 = hashtab_mix(hashtab_rd64(p + 16) ^ 0xa0761d6478bd642full ^ l1, hashtab_rd64(p + 24) ^ 0xe7037ed1a0b428dbull);
		l2 = hashtab_mix(hashtab_rd64(p + 32) ^ 0xa0761d6478bd642full ^ l2, hashtab_rd64(p + 40) ^ 0xe7037ed1a0b428dbull);
		l3 = hashtab_mix(hashtab_rd64(p + 48) ^ 0xa0761d6478bd642full ^ l3, hashtab_rd64(p + 56) ^ 0xe7037ed1a0b428dbull);
		p += 64;
		len -= 64;
	}
	*pp = p;
	*lenp = len;
	return hashtab_mix(h ^ 0x8ebc6af09c88c6e3ull, l1 ^ 0x589965cc75374cc3ull) ^
	       hashtab_mix(l2 ^ 0x8ebc6af09c88c6e3ull, l3 ^ 0x589965cc75374cc3ull);
}

uint64_t hashtab_hash(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 0x243f6a8885a308d3ull ^ len;
	if (len >= 128)
		h = hash_lanes(&p, &len, h);
	while (len >= 16) {
		h = hashtab_mix(hashtab_rd64(p) ^ 0xa0761d6478bd642full ^ h, hashtab_rd64(p + 8) ^ 0xe7037ed1a0b428dbull);
		p += 16;
		len -= 16;
	}
	uint64_t a = 0, b = 0;
	if (len >= 8) {
		a = hashtab_rd64(p);
		b = hashtab_rd64(p + len - 8);
	} else if (len >= 4) {
		uint32_t x, y;
		memcpy(&x, p, 4);
		memcpy(&y, p + len - 4, 4);
		a = x;
		b = y;
	} else if (len > 0) {
		a = ((uint64_t)p[0] << 16) | ((uint64_t)p[len >> 1] << 8) | p[len - 1];
	}
	return hashtab_mix(a ^ 0x8ebc6af09c88c6e3ull ^ h, b ^ 0x589965cc75374cc3ull);
}

uint64_t hashtab_hash_line(const void *data, size_t len)
{
	const unsigned char *p = data;
	struct hashtab_line h = HASHTAB_LINE_START;
	size_t i = 0;

	for (; i + 16 <= len; i += 16)
		hashtab_line_block(&h, p + i);
	return hashtab_line_end(&h, p + i, len - i, len);
}

uint64_t hashtab_hash_to_nl(const void *data, size_t avail, size_t *len)
{
	const unsigned char *p = data;
	struct hashtab_line h = HASHTAB_LINE_START;
	size_t i = 0;

	for (; i + 16 <= avail; i += 16) {
		unsigned m = hashtab_line_nl(p + i);
		if (m) {
			*len = i + (size_t)__builtin_ctz(m);
			return hashtab_line_end(&h, p + i, *len - i, *len);
		}
		hashtab_line_block(&h, p + i);
	}
	const unsigned char *end = memchr(p + i, '\n', avail - i);
	if (!end) {
		*len = SIZE_MAX;
		return 0;
	}
	*len = (size_t)(end - p);
	return hashtab_line_end(&h, p + i, *len - i, *len);
}

struct arena_block {
	struct arena_block *next;
	size_t used, cap;
	char data[];
};

struct hashtab {
	struct hashtab_entry *ent;
	uint64_t *hashes;
	size_t n, cap;
	uint64_t *slots;	/* the hash's high half | index + 1; 0 = empty */
	size_t mask;
	struct arena_block *arena;
	struct hashtab_entry **sorted;
};

struct hashtab *hashtab_new(void)
{
	struct hashtab *a = marple_calloc(1, sizeof(*a));
	a->mask = 1023;
	a->slots = marple_calloc(a->mask + 1, sizeof(*a->slots));
	return a;
}

void hashtab_free(struct hashtab *a)
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

/* A copy of s[0..len) and a NUL, in a block that never moves. */
static char *arena_copy(struct hashtab *a, const char *s, size_t len)
{
	struct arena_block *b = a->arena;
	if (!b || b->cap - b->used <= len) {
		size_t cap = len >= (1u << 20) ? len + 1 : (1u << 20);
		b = marple_malloc(sizeof(*b) + cap);
		b->cap = cap;
		b->used = 0;
		b->next = a->arena;
		a->arena = b;
	}
	char *d = b->data + b->used;
	memcpy(d, s, len);
	d[len] = 0;
	b->used += len + 1;
	return d;
}

#define SLOT_TAG(h) ((h) & 0xffffffff00000000ull)

static void rehash(struct hashtab *a)
{
	size_t nmask = a->mask * 2 + 1;
	uint64_t *ns = marple_calloc(nmask + 1, sizeof(*ns));
	for (size_t i = 0; i < a->n; i++) {
		size_t j = a->hashes[i] & nmask;
		while (ns[j])
			j = (j + 1) & nmask;
		ns[j] = SLOT_TAG(a->hashes[i]) | (i + 1);
	}
	free(a->slots);
	a->slots = ns;
	a->mask = nmask;
}

static inline uint64_t sat_add(uint64_t x, uint64_t y)
{
	return x + y < x ? UINT64_MAX : x + y;
}

/* The slot of key (hash h): its entry's in *found, else the empty one to
 * take.  A slot holds half the hash, so entries and keys that cannot match
 * are not read (each one a cache miss in a big table). */
static size_t probe(const struct hashtab *a, uint64_t h, const void *key, size_t len, struct hashtab_entry **found)
{
	size_t j = h & a->mask;
	uint64_t s;

	while ((s = a->slots[j])) {
		struct hashtab_entry *e = &a->ent[(uint32_t)s - 1];
		if (SLOT_TAG(s) == SLOT_TAG(h) && e->len == len && memcmp(e->key, key, len) == 0) {
			*found = e;
			return j;
		}
		j = (j + 1) & a->mask;
	}
	*found = NULL;
	return j;
}

const struct hashtab_entry *hashtab_add_at(struct hashtab *a, size_t i, uint64_t c0, uint64_t c1)
{
	struct hashtab_entry *e = &a->ent[i];
	e->count[0] = sat_add(e->count[0], c0);
	e->count[1] = sat_add(e->count[1], c1);
	return e;
}

const struct hashtab_entry *hashtab_add(struct hashtab *a, const void *key, size_t len, uint64_t c0, uint64_t c1)
{
	return hashtab_add_hashed(a, hashtab_hash(key, len), key, len, c0, c1);
}

const struct hashtab_entry *hashtab_add_hashed(struct hashtab *a, uint64_t h, const void *key, size_t len,
					       uint64_t c0, uint64_t c1)
{
	struct hashtab_entry *e;
	size_t j = probe(a, h, key, len, &e);
	if (e)
		return hashtab_add_at(a, (size_t)(e - a->ent), c0, c1);
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 1024;
		a->ent = realloc(a->ent, cap * sizeof(*a->ent));
		a->hashes = realloc(a->hashes, cap * sizeof(*a->hashes));
		if (!a->ent || !a->hashes)
			marple_fatal(EXIT_DATA, "out of memory");
		a->cap = cap;
	}
	e = &a->ent[a->n];
	e->key = arena_copy(a, key, len);
	e->len = len;
	e->count[0] = c0;
	e->count[1] = c1;
	a->hashes[a->n] = h;
	a->n++;
	a->slots[j] = SLOT_TAG(h) | a->n;
	if (a->n * 2 > a->mask)
		rehash(a);
	return e;
}

const struct hashtab_entry *hashtab_find(const struct hashtab *a, const void *key, size_t len)
{
	return hashtab_find_hashed(a, hashtab_hash(key, len), key, len);
}

const struct hashtab_entry *hashtab_find_hashed(const struct hashtab *a, uint64_t hash, const void *key, size_t len)
{
	struct hashtab_entry *e;
	probe(a, hash, key, len, &e);
	return e;
}

size_t hashtab_size(const struct hashtab *a)
{
	return a->n;
}

size_t hashtab_bytes(const struct hashtab *a)
{
	size_t b = sizeof(*a) + a->cap * (sizeof(*a->ent) + sizeof(*a->hashes)) + (a->mask + 1) * sizeof(*a->slots);

	for (const struct arena_block *k = a->arena; k; k = k->next)
		b += sizeof(*k) + k->used;	/* what is touched of the block */
	if (a->sorted)
		b += (a->n + 1) * sizeof(*a->sorted);
	return b;
}

const struct hashtab_entry *hashtab_at(const struct hashtab *a, size_t i)
{
	return &a->ent[i];
}

size_t hashtab_index(const struct hashtab *a, const struct hashtab_entry *e)
{
	return (size_t)(e - a->ent);
}

static int cmp_entry(const void *x, const void *y)
{
	const struct hashtab_entry *a = *(struct hashtab_entry *const *)x;
	const struct hashtab_entry *b = *(struct hashtab_entry *const *)y;
	size_t m = a->len < b->len ? a->len : b->len;
	int c = memcmp(a->key, b->key, m);
	if (c)
		return c;
	return a->len < b->len ? -1 : a->len > b->len;
}

struct hashtab_entry **hashtab_sorted(struct hashtab *a)
{
	free(a->sorted);
	a->sorted = marple_malloc((a->n + 1) * sizeof(*a->sorted));
	for (size_t i = 0; i < a->n; i++)
		a->sorted[i] = &a->ent[i];
	qsort(a->sorted, a->n, sizeof(*a->sorted), cmp_entry);
	return a->sorted;
}
