/* folded — libFuzzer target for the folded-stack parser and the unique-stack
 * aggregate (lib/format/folded.c).
 *
 * Input: folded text ("stack count" or "stack c1 c2" per line).  Each line is
 * parsed with one and two counts allowed; accepted lines must point inside
 * the line, have 1..maxcounts counts, and whole counts that agree with their
 * double value; the frames, joined by ';', give the stack back.  Accepted
 * stacks go into a hashtab, whose sorted view must be strictly increasing
 * in byte order, hold every stack once, and sum the counts (saturating).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"
#include "hashtab.h"

static int cmp_bytes(const char *a, size_t al, const char *b, size_t bl)
{
	int c = memcmp(a, b, al < bl ? al : bl);
	return c ? c : (al > bl) - (al < bl);
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data, *s = buf, *e = buf + size;
	struct hashtab *agg = hashtab_new();
	uint64_t total = 0, lines_ok = 0;

	while (s < e) {
		const char *nl = memchr(s, '\n', (size_t)(e - s));
		size_t len = (size_t)((nl ? nl : e) - s);
		char *line = malloc(len ? len : 1);	/* exact size: ASan sees overreads */
		memcpy(line, s, len);
		(void)folded_line_looks_folded(line, len);
		for (int maxc = 1; maxc <= 2; maxc++) {
			struct folded_line fl;
			const char *why = NULL;
			if (folded_parse_line(line, len, maxc, &fl, &why) < 0) {
				if (!why || !*why)
					abort();
				continue;
			}
			if (fl.stack < line || fl.stack + fl.len > line + len)
				abort();
			if (fl.ncounts < 1 || fl.ncounts > maxc)
				abort();
			for (int k = 0; k < fl.ncounts; k++)
				if (fl.integral && fl.icount[k] < (1ull << 53) && (double)fl.icount[k] != fl.count[k])
					abort();
			/* Frames joined by ';' are the stack. */
			size_t pos = 0, joined = 0, nframes = 0;
			const char *f;
			size_t flen;
			while (folded_next_frame(fl.stack, fl.len, &pos, &f, &flen)) {
				if (f < fl.stack || f + flen > fl.stack + fl.len)
					abort();
				if (memcmp(f, fl.stack + joined, flen) != 0)
					abort();
				joined += flen + 1;
				if (++nframes > fl.len + 1)
					abort();
			}
			if (joined != fl.len + 1)
				abort();
			if (maxc == 1 && fl.integral) {
				hashtab_add(agg, fl.stack, fl.len, fl.icount[0], 0);
				total = sat_add(total, fl.icount[0]);
				lines_ok++;
			}
		}
		free(line);
		s = nl ? nl + 1 : e;
	}

	struct hashtab_entry **v = hashtab_sorted(agg);
	size_t n = hashtab_size(agg);
	uint64_t sum = 0;
	if (n > lines_ok)
		abort();
	for (size_t i = 0; i < n; i++) {
		if (i && cmp_bytes(v[i - 1]->key, v[i - 1]->len, v[i]->key, v[i]->len) >= 0)
			abort();
		sum = sat_add(sum, v[i]->count[0]);
	}
	if (sum != total)
		abort();
	hashtab_free(agg);
	return 0;
}
