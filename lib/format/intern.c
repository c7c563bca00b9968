/* intern.c — open-addressing hash of strings kept in one growing arena. */
#include "intern.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

struct intern {
	char *arena;
	size_t arena_len, arena_cap;
	size_t *off, *len;
	uint32_t *hash;		/* by id: low bits of the string's hash */
	size_t n, cap_off, cap_len, cap_hash;
	uint32_t *tab;		/* id + 1, 0 = empty */
	size_t tabcap;
	uint32_t last;		/* one-entry cache: consecutive records often repeat */
};

struct intern *intern_new(void)
{
	struct intern *t = marple_calloc(1, sizeof(*t));
	t->tabcap = 1024;
	t->tab = marple_calloc(t->tabcap, sizeof(uint32_t));
	t->last = UINT32_MAX;
	return t;
}

void intern_free(struct intern *t)
{
	if (!t)
		return;
	free(t->arena);
	free(t->off);
	free(t->len);
	free(t->hash);
	free(t->tab);
	free(t);
}

static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h ^ (h >> 29);
}

static void rehash(struct intern *t)
{
	size_t cap = t->tabcap * 2;
	uint32_t *tab = marple_calloc(cap, sizeof(uint32_t));
	for (size_t id = 0; id < t->n; id++) {
		size_t i = t->hash[id] & (cap - 1);
		while (tab[i])
			i = (i + 1) & (cap - 1);
		tab[i] = (uint32_t)id + 1;
	}
	free(t->tab);
	t->tab = tab;
	t->tabcap = cap;
}

uint32_t intern_get(struct intern *t, const char *s, size_t len)
{
	if (t->last != UINT32_MAX && t->len[t->last] == len && !memcmp(t->arena + t->off[t->last], s, len))
		return t->last;
	uint32_t h = (uint32_t)hash_bytes(s, len);
	size_t i = h & (t->tabcap - 1);
	while (t->tab[i]) {
		uint32_t id = t->tab[i] - 1;
		if (t->hash[id] == h && t->len[id] == len && !memcmp(t->arena + t->off[id], s, len))
			return t->last = id;
		i = (i + 1) & (t->tabcap - 1);
	}
	if (t->n >= UINT32_MAX - 1)
		fatal(EXIT_DATA, "too many distinct names");
	t->arena = marple_grow(t->arena, &t->arena_cap, t->arena_len + len + 1, 1);
	memcpy(t->arena + t->arena_len, s, len);
	t->arena[t->arena_len + len] = 0;
	t->off = marple_grow(t->off, &t->cap_off, t->n + 1, sizeof(size_t));
	t->len = marple_grow(t->len, &t->cap_len, t->n + 1, sizeof(size_t));
	t->hash = marple_grow(t->hash, &t->cap_hash, t->n + 1, sizeof(uint32_t));
	t->off[t->n] = t->arena_len;
	t->len[t->n] = len;
	t->hash[t->n] = h;
	t->arena_len += len + 1;
	t->tab[i] = (uint32_t)t->n + 1;
	uint32_t id = (uint32_t)t->n++;
	if (t->n * 2 > t->tabcap)
		rehash(t);
	return t->last = id;
}

const char *intern_str(const struct intern *t, uint32_t id, size_t *len)
{
	if (len)
		*len = t->len[id];
	return t->arena + t->off[id];
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
	return t->off[id];
}
