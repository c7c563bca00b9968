/* intern.c — open-addressing hash of strings kept in one growing arena. */
#include "intern.h"

#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "util.h"

/* A lookup touches one table slot (hash, length and place are kept there, so
 * probes read nothing else) and the arena: on big profiles, with a name
 * looked up for every frame, the cache misses were most of the time. */
struct slot {
	uint32_t hash, id;	/* id + 1; 0 = empty */
	uint32_t len, off;	/* the arena is kept below 4 GiB */
};

struct entry {
	size_t off, len;
};

struct intern {
	char *arena;
	size_t arena_len, arena_cap;
	struct entry *ent;	/* by id */
	size_t n, ent_cap;
	struct slot *tab;
	size_t tabcap;
	uint32_t last;		/* one-entry cache: consecutive records often repeat */
	size_t last_slot;	/* its slot in tab */
};

struct intern *intern_new(void)
{
	struct intern *t = marple_calloc(1, sizeof(*t));
	t->tabcap = 1024;
	t->tab = marple_calloc(t->tabcap, sizeof(*t->tab));
	t->last = UINT32_MAX;
	return t;
}

void intern_free(struct intern *t)
{
	if (!t)
		return;
	free(t->arena);
	free(t->ent);
	free(t->tab);
	free(t);
}

static void rehash(struct intern *t)
{
	size_t cap = t->tabcap * 2;
	struct slot *tab = marple_calloc(cap, sizeof(*tab));
	for (size_t j = 0; j < t->tabcap; j++) {
		if (!t->tab[j].id)
			continue;
		size_t i = t->tab[j].hash & (cap - 1);
		while (tab[i].id)
			i = (i + 1) & (cap - 1);
		tab[i] = t->tab[j];
	}
	free(t->tab);
	t->tab = tab;
	t->tabcap = cap;
}

/* a == b for n bytes: names are short (a frame some 10 to 60 bytes), and a
 * call of memcmp for each of tens of millions of lookups cost more than the
 * comparison; 8 bytes a step, the last 8 overlapping. */
static inline int bytes_equal(const char *a, const char *b, size_t n)
{
	uint64_t x, y;
	if (n < 8)
		return !memcmp(a, b, n);
	for (size_t i = 0; i + 8 < n; i += 8) {
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
			return 0;
	}
	memcpy(&x, a + n - 8, 8);
	memcpy(&y, b + n - 8, 8);
	return x == y;
}

static inline int same(const struct intern *t, const struct slot *sl, uint32_t h, const char *s, size_t len)
{
	return sl->hash == h && sl->len == len && bytes_equal(t->arena + sl->off, s, len);
}

uint32_t intern_hash(const char *s, size_t len)
{
	/* hashtab_hash mixes every bit into the low ones, which pick the slot */
	return (uint32_t)hashtab_hash(s, len);
}

void intern_prefetch(const struct intern *t, uint32_t h, int stage)
{
	const struct slot *sl = &t->tab[h & (t->tabcap - 1)];
	if (!stage)
		__builtin_prefetch(sl);
	else if (sl->id && sl->hash == h)
		__builtin_prefetch(t->arena + sl->off);
}

uint32_t intern_get(struct intern *t, const char *s, size_t len)
{
	return intern_get_hashed(t, s, len, intern_hash(s, len));
}

uint32_t intern_get_hashed(struct intern *t, const char *s, size_t len, uint32_t h)
{
	size_t i = h & (t->tabcap - 1);
	if (t->last != UINT32_MAX && same(t, &t->tab[t->last_slot], h, s, len))
		return t->last;
	for (; t->tab[i].id; i = (i + 1) & (t->tabcap - 1))
		if (same(t, &t->tab[i], h, s, len)) {
			t->last_slot = i;
			return t->last = t->tab[i].id - 1;
		}
	if (t->n >= UINT32_MAX - 1 || t->arena_len + len + 1 > UINT32_MAX)
		marple_fatal(EXIT_DATA, "too many distinct names (more than 4 GiB)");
	t->arena = marple_grow(t->arena, &t->arena_cap, t->arena_len + len + 1, 1);
	memcpy(t->arena + t->arena_len, s, len);
	t->arena[t->arena_len + len] = 0;
	t->ent = marple_grow(t->ent, &t->ent_cap, t->n + 1, sizeof(*t->ent));
	t->ent[t->n] = (struct entry){ t->arena_len, len };
	uint32_t id = (uint32_t)t->n++;
	t->tab[i] = (struct slot){ h, id + 1, (uint32_t)len, (uint32_t)t->arena_len };
	t->arena_len += len + 1;
	t->last_slot = i;
	if (t->n * 2 > t->tabcap) {
		rehash(t);
		t->last = UINT32_MAX;
		return id;
	}
	return t->last = id;
}

const char *intern_str(const struct intern *t, uint32_t id, size_t *len)
{
	if (len)
		*len = t->ent[id].len;
	return t->arena + t->ent[id].off;
}

size_t intern_count(const struct intern *t)
{
	return t->n;
}

const char *intern_arena(const struct intern *t, size_t *len)
{
	*len = t->arena_len;
	return t->arena;
}

size_t intern_offset(const struct intern *t, uint32_t id)
{
	return t->ent[id].off;
}
