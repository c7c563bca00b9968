/* folded.c — folded stack lines (folded.h). */
#include "folded.h"

#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "lines.h"
#include "stream.h"
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

int folded_input_is_stream(struct lines *l)
{
	size_t n;
	const char *b = lines_peek(l, 1, &n);
	return n > 0 && b[0] == '{';
}

int folded_next_line(struct lines *l, int maxcounts, struct folded_line *out, const char **why)
{
	const char *s;
	size_t len;
	int r;

	while ((r = lines_next(l, &s, &len)) > 0) {
		if (len == 0 || (len == 1 && s[0] == '\r'))
			continue;
		if (memchr(s, 0, len)) {
			*why = "NUL byte in line: binary data, not text (nothing more is read)";
			return FOLDED_NUL;
		}
		return folded_parse_line(s, len, maxcounts, out, why) < 0 ? -1 : 1;
	}
	return r < 0 ? -2 : 0;
}

int folded_next_sample(struct lines *l, struct folded_profile *p, struct folded_line *out, uint64_t *nbad)
{
	const char *why;
	int r;

	while ((r = folded_next_line(l, 2, out, &why)) != 0 && r != -2) {
		if (r == FOLDED_NUL) {	/* binary data: nothing more is read */
			p->nul_line = lines_lineno(l);
			break;
		}
		char msg[160];
		if (r > 0 && !out->len)
			why = "no frames before the count", r = -1;
		else if (r > 0 && out->ncounts == 2) {
			snprintf(msg, sizeof(msg), "two counts (a differential profile): a %s profile holds one", p->what);
			why = msg, r = -1;
		} else if (r > 0 && p->integral && !out->integral) {
			snprintf(msg, sizeof(msg), "count is not a whole number (%s's values are integers)", p->what);
			why = msg, r = -1;
		}
		if (r > 0) {
			p->good++;
			return 1;
		}
		p->malformed++;
		if ((*nbad)++ < MARPLE_REPORT_FIRST)
			marple_warn_at(p->file, lines_lineno(l), "%s", why);
	}
	if (r == -2)
		return -1;
	why = stream_unusable_why(p->good, p->malformed, p->nul_line);
	if (why) {
		marple_warn_at(p->file, 0, "%s", why);
		return -1;
	}
	return 0;
}

size_t folded_split_frames(const char *stack, size_t len, struct mstr **frames, size_t *cap)
{
	size_t n = 0, pos = 0, flen;
	const char *f;

	if (!len)
		return 0;
	while (folded_next_frame(stack, len, &pos, &f, &flen)) {
		*frames = marple_grow(*frames, cap, n + 1, sizeof(**frames));
		(*frames)[n++] = (struct mstr){ f, flen };
	}
	return n;
}
