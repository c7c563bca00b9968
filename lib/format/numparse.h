/* numparse.h — fast decimal-to-double for the common case of record numbers
 * ("12.25", "-3", "1795262401.5"): exact and correctly rounded like strtod
 * (Clinger's fast path: at most 19 significant digits fitting in 2^53, and a
 * power of ten up to 10^22), several times faster.  Anything else — exponents,
 * hex, inf/nan, long mantissas — is left to strtod by the caller. */
#ifndef MARPLE_NUMPARSE_H
#define MARPLE_NUMPARSE_H

#include <stddef.h>

/* The whole span s[0..len) as -?digits[.digits]: 1 and *out set, else 0. */
int numparse_fast(const char *s, size_t len, double *out);

/* A number at the start of p (fast path, else strtod); returns the end, or
 * NULL if there is no finite number there. */
const char *numparse_prefix(const char *p, double *out);

#endif
