/* hashtab.c — the hash function and the bytes-to-counts table (hashtab.h). */
#include "hashtab.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

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

/* Keys of 128 bytes and more (whole samples of perf script) in four lanes
 * of 16 bytes: the multiplies no longer wait for each other, 2.3 times as
 * fast.  Shorter keys hash as they always did. */
static uint64_t hash_lanes(const unsigned char **pp, size_t *lenp, uint64_t h)
{
	const unsigned char *p = *pp;
	size_t len = *lenp;
	uint64_t l1 = h ^ 0x452821e638d01377ull, l2 = h ^ 0xbe5466cf34e90c6cull, l3 = h ^ 0xc0ac29b7c97c50ddull;

	while (len >= 64) {
		h = mix(rd64(p) ^ 0xa0761d6478bd642full ^ h, rd64(p + 8) ^ 0xe7037ed1a0b428dbull);
		l1 = mix(rd64(p + 16) ^ 0xa0761d6478bd642full ^ l1, rd64(p + 24) ^ 0xe7037ed1a0b428dbull);
		l2 = mix(rd64(p + 32) ^ 0xa0761d6478bd642full ^ l2, rd64(p + 40) ^ 0xe7037ed1a0b428dbull);
		l3 = mix(rd64(p + 48) ^ 0xa0761d6478bd642full ^ l3, rd64(p + 56) ^ 0xe7037ed1a0b428dbull);
		p += 64;
		len -= 64;
	}
	*pp = p;
	*lenp = len;
	return mix(h ^ 0x8ebc6af09c88c6e3ull, l1 ^ 0x589965cc75374cc3ull) ^
	       mix(l2 ^ 0x8ebc6af09c88c6e3ull, l3 ^ 0x589965cc75374cc3ull);
}

uint64_t hashtab_hash(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 0x243f6a8885a308d3ull ^ len;
	if (len >= 128)
		h = hash_lanes(&p, &len, h);
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

/* The line hash (hashtab.h): 16-byte blocks taken in turn by two lanes (a
 * block's multiply does not wait for the one before: the lanes swap after
 * each block), then the last 0-15 bytes zero-filled, with the length.  A
 * block is the same whether the end was known before (hashtab_hash_line) or
 * found in it (hashtab_hash_to_nl). */

#define LINE_SEED0 0x243f6a8885a308d3ull
#define LINE_SEED1 0x13198a2e03707344ull

static inline void line_block(uint64_t *a, uint64_t *b, uint64_t lo, uint64_t hi)
{
	uint64_t t = mix(lo ^ 0xa0761d6478bd642full ^ *a, hi ^ 0xe7037ed1a0b428dbull);
	*a = *b;
	*b = t;
}

static inline uint64_t line_finish(uint64_t a, uint64_t b, uint64_t lo, uint64_t hi, size_t len)
{
	return mix(mix(lo ^ 0x8ebc6af09c88c6e3ull ^ a, hi ^ 0x589965cc75374cc3ull ^ len) ^ b,
		   0x452821e638d01377ull ^ len);
}

/* Bytes 0-7 of the last r < 16 bytes at p, zero-filled (no copy: loads
 * that may overlap, as hashtab_hash's). */
static inline uint64_t line_low(const unsigned char *p, size_t r)
{
	uint32_t x, y;

	if (r >= 8)
		return rd64(p);
	if (r >= 4) {
		memcpy(&x, p, 4);
		memcpy(&y, p + r - 4, 4);
		return x | ((uint64_t)y >> (8 * (8 - r))) << 32;
	}
	uint64_t v = 0;
	for (size_t i = 0; i < r; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* Bytes 8-15 of the same, zero-filled. */
static inline uint64_t line_high(const unsigned char *p, size_t r)
{
	return r <= 8 ? 0 : rd64(p + r - 8) >> (8 * (16 - r));
}

uint64_t hashtab_hash_line(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t a = LINE_SEED0, b = LINE_SEED1, w[2];
	size_t i = 0;

	for (; i + 16 <= len; i += 16) {
		memcpy(w, p + i, 16);
		line_block(&a, &b, w[0], w[1]);
	}
	return line_finish(a, b, line_low(p + i, len - i), line_high(p + i, len - i), len);
}

/* Where the first '\n' of the 16 bytes at p is (16: none): SSE2 on x86-64
 * (every x86-64 has it: three instructions), else eight bytes at a time,
 * the borrow of a zero byte running only upwards (the lowest flag exact). */
static inline unsigned line_nl_at(const unsigned char *p)
{
#ifdef __SSE2__
	__m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
	unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8('\n')));
	return m ? (unsigned)__builtin_ctz(m) : 16;
#else
	for (unsigned k = 0; k < 16; k += 8) {
		uint64_t x = rd64(p + k) ^ 0x0a0a0a0a0a0a0a0aull;
		uint64_t t = (x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull;
		if (t)
			return k + (unsigned)__builtin_ctzll(t) / 8;
	}
	return 16;
#endif
}

/* The first k < 8 bytes of w, zero-filled. */
static inline uint64_t line_first(uint64_t w, unsigned k)
{
	return k ? w & (~0ull >> (64 - 8 * k)) : 0;
}

uint64_t hashtab_hash_to_nl(const void *data, size_t avail, size_t *len)
{
	const unsigned char *p = data;
	uint64_t a = LINE_SEED0, b = LINE_SEED1, lo, hi;
	size_t i = 0;

	for (; i + 16 <= avail; i += 16) {
		unsigned k = line_nl_at(p + i);
		lo = rd64(p + i);
		hi = rd64(p + i + 8);
		if (k < 16) {	/* the end: the bytes from it on zeroed */
			*len = i + k;
			return line_finish(a, b, k < 8 ? line_first(lo, k) : lo, k < 8 ? 0 : line_first(hi, k - 8), *len);
		}
		line_block(&a, &b, lo, hi);
	}
	const unsigned char *end = memchr(p + i, '\n', avail - i);
	if (!end) {
		*len = SIZE_MAX;
		return 0;
	}
	*len = (size_t)(end - p);
	return line_finish(a, b, line_low(p + i, *len - i), line_high(p + i, *len - i), *len);
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
