/* hashtab.h — marple's hash functions and its one table: distinct byte
 * strings (any bytes, NUL included), each with two counts.  Folded stacks in
 * marple-fold (count[1] the "after" of a differential), symbolized stacks in
 * the collectors (their frames NUL-separated), interned frame names.
 *
 *   struct hashtab *t = hashtab_new();
 *   hashtab_add(t, "a;b", 3, 5, 0);            -- a new entry: counts 5, 0
 *   hashtab_add(t, "a;b", 3, 2, 0);            -- the same one: 7, 0
 *   for (size_t i = 0; i < hashtab_size(t); i++)   -- in order of first add
 *           e = hashtab_at(t, i);              -- e->key, e->len, e->count[]
 *   struct hashtab_entry **v = hashtab_sorted(t);  -- or in byte order
 *   hashtab_free(t);
 *
 * Open addressing with linear probing over an array of entry indexes (each
 * beside half its key's hash, so a probe reads only entries that may match); keys
 * are copied into blocks that never move, each followed by a NUL (a key
 * without NUL bytes is a C string), so an entry's key pointer stays valid
 * until hashtab_free (the entry itself only until the next add).
 */
#ifndef MARPLE_HASHTAB_H
#define MARPLE_HASHTAB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* A fast 64-bit hash of bytes (not cryptographic): every table of marple's hashes with it. */
uint64_t hashtab_hash(const void *p, size_t len);

/* Another hash of bytes, for a table whose keys are often read as lines
 * (marple-fold's stacks, perf script's samples): it composes, so a reader
 * hashes bytes in the pass that finds where they end.  hashtab_hash_to_nl
 * hashes p[0, *len) while it finds the first '\n' in p[0, avail) (*len =
 * SIZE_MAX when there is none): the same as hashtab_hash_line(p, *len).  A
 * table hashed so is used only through the _hashed calls. */
uint64_t hashtab_hash_line(const void *p, size_t len);
uint64_t hashtab_hash_to_nl(const void *p, size_t avail, size_t *len);

/* The line hash a block at a time, for a reader's own scan:
 *   struct hashtab_line h = HASHTAB_LINE_START;
 *   for (i = 0; i + 16 <= len; i += 16)    -- whole 16-byte blocks
 *           hashtab_line_block(&h, p + i);  -- (hashtab_line_nl(p + i): its '\n's)
 *   hash = hashtab_line_end(&h, p + i, len - i, len);  -- the last 0-15 bytes
 * Two lanes take the blocks in turn (they swap after each), so one block's
 * multiply does not wait for the one before; the last bytes are read with
 * loads that may overlap, never outside p[0, len). */
struct hashtab_line {
	uint64_t a, b;
};
#define HASHTAB_LINE_START ((struct hashtab_line){ 0x243f6a8885a308d3ull, 0x13198a2e03707344ull })

/* The pieces of both hashes: 8 bytes as read (little-endian on x86-64),
 * and a 64x64 multiply folded to 64 bits. */
static inline uint64_t hashtab_rd64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static inline uint64_t hashtab_mix(uint64_t a, uint64_t b)
{
	__uint128_t r = (__uint128_t)a * b;
	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static inline void hashtab_line_block(struct hashtab_line *h, const void *block)
{
	const unsigned char *p = block;
	uint64_t t = hashtab_mix(hashtab_rd64(p) ^ 0xa0761d6478bd642full ^ h->a,
				      hashtab_rd64(p + 8) ^ 0xe7037ed1a0b428dbull);
	h->a = h->b;
	h->b = t;
}

/* Bytes 0-7 of the r < 16 bytes at p, zero-filled. */
static inline uint64_t hashtab_line_low(const unsigned char *p, size_t r)
{
	uint32_t x, y;
	uint64_t v = 0;

	if (r >= 8)
		return hashtab_rd64(p);
	if (r >= 4) {
		memcpy(&x, p, 4);
		memcpy(&y, p + r - 4, 4);
		return x | ((uint64_t)y >> (8 * (8 - r))) << 32;
	}
	for (size_t i = 0; i < r; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* The hash of len bytes whose last r = len % 16 are at p. */
static inline uint64_t hashtab_line_end(const struct hashtab_line *h, const void *last, size_t r, size_t len)
{
	const unsigned char *p = last;
	uint64_t lo = hashtab_line_low(p, r), hi = r <= 8 ? 0 : hashtab_rd64(p + r - 8) >> (8 * (16 - r));

	return hashtab_mix(hashtab_mix(lo ^ 0x8ebc6af09c88c6e3ull ^ h->a, hi ^ 0x589965cc75374cc3ull ^ len) ^ h->b,
				0x452821e638d01377ull ^ len);
}

/* The '\n's of the 16 bytes at p, a bit each (bit i: byte i): SSE2 on
 * x86-64 (every x86-64 has it: three instructions), else eight bytes at a
 * time (a byte's flag from its own bits only: no carry between bytes). */
static inline unsigned hashtab_line_nl(const void *block)
{
#ifdef __SSE2__
	__m128i x = _mm_loadu_si128((const __m128i *)block);
	return (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8('\n')));
#else
	unsigned m = 0;
	for (unsigned k = 0; k < 16; k += 8) {
		uint64_t x = hashtab_rd64((const unsigned char *)block + k) ^ 0x0a0a0a0a0a0a0a0aull;
		uint64_t nonzero = (((x & 0x7f7f7f7f7f7f7f7full) + 0x7f7f7f7f7f7f7f7full) | x) & 0x8080808080808080ull;
		uint64_t zero = (~nonzero & 0x8080808080808080ull) >> 7;
		m |= (unsigned)((zero * 0x0102040810204080ull) >> 56) << k;
	}
	return m;
#endif
}

struct hashtab;
struct hashtab_entry {
	const char *key;	/* the bytes, then a NUL not counted in len */
	size_t len;
	uint64_t count[2];
};

struct hashtab *hashtab_new(void);
void hashtab_free(struct hashtab *t);
/* Add counts to the entry of key[0..len) (copied on first sight) and return
 * it; counts saturate at 2^64-1. */
const struct hashtab_entry *hashtab_add(struct hashtab *t, const void *key, size_t len, uint64_t c0,
					uint64_t c1);
/* Add counts to entry i (0 <= i < hashtab_size: a caller that kept the
 * index of a key it adds again), without hashing its key; returns it. */
const struct hashtab_entry *hashtab_add_at(struct hashtab *t, size_t i, uint64_t c0, uint64_t c1);
/* The entry of key[0..len), or NULL: nothing is added. */
const struct hashtab_entry *hashtab_find(const struct hashtab *t, const void *key, size_t len);
/* The same, for a key whose hashtab_hash the caller has (to use it twice). */
const struct hashtab_entry *hashtab_find_hashed(const struct hashtab *t, uint64_t hash, const void *key,
						size_t len);
/* hashtab_add for a key whose hash the caller has: hashtab_hash, or for a
 * table only ever used through the _hashed calls, any hash of the caller's
 * that is the same each time for the same key (e.g. of more than the key). */
const struct hashtab_entry *hashtab_add_hashed(struct hashtab *t, uint64_t hash, const void *key, size_t len,
					       uint64_t c0, uint64_t c1);
size_t hashtab_size(const struct hashtab *t);
/* The bytes t uses in memory (entries, index, keys stored), for the trailers. */
size_t hashtab_bytes(const struct hashtab *t);
/* Entry i, 0 <= i < hashtab_size, in order of first add. */
const struct hashtab_entry *hashtab_at(const struct hashtab *t, size_t i);
/* The i of an entry (hashtab_add's answer): a dense id for each distinct key. */
size_t hashtab_index(const struct hashtab *t, const struct hashtab_entry *e);
/* All entries sorted by key in byte order (as sort(1) with LC_ALL=C and Perl's
 * cmp do); the array is owned by the table and valid until the next add. */
struct hashtab_entry **hashtab_sorted(struct hashtab *t);

#endif
