/* numparse.c — Clinger's fast path for decimal numbers, strtod otherwise. */
#include "numparse.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static const double pow10_exact[] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
				      1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };

/* Parse -?digits[.digits] from s (up to e); returns the end of what was
 * parsed, or NULL when the fast path cannot give the exact answer. */
static const char *fast(const char *s, const char *e, double *out)
{
	const char *p = s;
	int neg = 0, sig = 0, exp10 = 0, ndig = 0;
	uint64_t m = 0;

	if (p < e && *p == '-') {
		neg = 1;
		p++;
	}
	for (; p < e && *p >= '0' && *p <= '9'; p++, ndig++) {
		if (m || *p != '0')
			sig++;
		if (sig > 19)
			return NULL;
		m = m * 10 + (uint64_t)(*p - '0');
	}
	if (p < e && *p == '.') {
		for (p++; p < e && *p >= '0' && *p <= '9'; p++, ndig++) {
			if (m || *p != '0')
				sig++;
			if (sig > 19)
				return NULL;
			m = m * 10 + (uint64_t)(*p - '0');
			exp10--;
		}
	}
	if (!ndig || m > (1ull << 53) || exp10 < -22)
		return NULL;
	if (p < e && (*p == 'e' || *p == 'E' || *p == 'x' || *p == 'X'))
		return NULL;
	double d = (double)m;
	d = exp10 < 0 ? d / pow10_exact[-exp10] : d;
	*out = neg ? -d : d;
	return p;
}

int numparse_fast(const char *s, size_t len, double *out)
{
	const char *e = s + len;
	return fast(s, e, out) == e;
}

const char *numparse_prefix(const char *p, double *out)
{
	const char *e = p;
	while (*e && *e != ' ' && *e != '\t' && *e != '\n' && *e != '\r' && *e != ',')
		e++;
	const char *end = fast(p, e, out);
	if (end == e)
		return end;
	char *se;
	errno = 0;
	*out = strtod(p, &se);
	if (se == p || !isfinite(*out))
		return NULL;
	return se;
}
