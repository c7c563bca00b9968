/* perfmap — libFuzzer target for the perf map reader (lib/collect/perfmap.c),
 * which reads what any traced process writes in /tmp/perf-PID.map.
 *
 * Input: the file's bytes.  Read through perfmap_read, the map must be
 * disjoint sorted ranges of positive size, each name at most
 * PERFMAP_NAME_MAX bytes and one the reader was handed, each range found by
 * perfmap_find at its first and last address, an address between two
 * ranges found in none; the counts of what was skipped never exceed the
 * lines there were.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "perfmap.h"

static const char *keep(void *ctx, const char *name)
{
	return hashtab_add(ctx, name, strlen(name), 1, 0)->key;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = fmemopen((void *)data, size ? size : 1, "r");
	struct hashtab *names = hashtab_new();
	uint64_t lines = 1;

	if (!f || !size) {
		if (f)
			fclose(f);
		hashtab_free(names);
		return 0;
	}
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	struct perfmap *pm = perfmap_read(f, NULL, keep, names);
	for (size_t i = 0; i < pm->n; i++) {
		const struct perfmap_sym *s = &pm->syms[i];
		if (s->size == 0 || s->addr + s->size < s->addr || strlen(s->name) > PERFMAP_NAME_MAX ||
		    (i && pm->syms[i - 1].addr + pm->syms[i - 1].size > s->addr))
			abort();
		if (perfmap_find(pm, s->addr) != s || perfmap_find(pm, s->addr + s->size - 1) != s)
			abort();
		if (i && pm->syms[i - 1].addr + pm->syms[i - 1].size < s->addr &&
		    perfmap_find(pm, s->addr - 1) != NULL)
			abort();
		if (hashtab_size(names) == 0 || s->origin > s->addr)
			abort();
	}
	if (pm->skipped.bad_lines + pm->skipped.lines_unread > lines || pm->skipped.long_names > lines)
		abort();
	perfmap_free(pm);
	hashtab_free(names);
	return 0;
}
