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

/* A fast 64-bit hash of bytes (not cryptographic): every table of marple's hashes with it. */
uint64_t hashtab_hash(const void *p, size_t len);

/* Another hash of bytes, for a table whose keys are often read as lines
 * (marple-fold's stacks): hashtab_hash_to_nl hashes p[0, *len) while it finds
 * the first '\n' in p[0, avail) (one pass, not memchr and then hashtab_hash;
 * *len = SIZE_MAX when there is none), the same hash as hashtab_hash_line(p,
 * *len) gives.  Such a table is used only through the _hashed calls. */
uint64_t hashtab_hash_line(const void *p, size_t len);
uint64_t hashtab_hash_to_nl(const void *p, size_t avail, size_t *len);

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
