/* timefmt.c — times and durations as every page shows them (see timefmt.h). */
#include "timefmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The unit for a time of ns nanoseconds: its size in ns and its name. */
static void timefmt_unit(double ns, double *div, const char **name)
{
	double a = fabs(ns);
	if (a >= 1e9) { *div = 1e9; *name = "s"; }
	else if (a >= 1e6) { *div = 1e6; *name = "ms"; }
	else if (a >= 1e3) { *div = 1e3; *name = "\xc2\xb5s"; }	/* µs */
	else if (a > 0) { *div = 1; *name = "ns"; }
	else { *div = 1e9; *name = "s"; }			/* 0 s */
}

size_t timefmt_ns(char *buf, size_t size, double ns, int sig)
{
	double div;
	const char *name;
	char num[48];

	if (sig < 1) sig = 1;
	if (sig > 15) sig = 15;
	if (!isfinite(ns)) {
		int n = snprintf(buf, size, "%s", isnan(ns) ? "?" : ns > 0 ? "\xe2\x88\x9e" : "-\xe2\x88\x9e");
		return n < 0 ? 0 : (size_t)n;
	}
	timefmt_unit(ns, &div, &name);
	double v = ns / div;
	/* digits after the point: sig minus those before it (none for >= 10^sig) */
	int before = fabs(v) >= 1 ? (int)floor(log10(fabs(v))) + 1 : 1;
	int after = sig - before;
	if (after < 0)
		after = 0;
	snprintf(num, sizeof(num), "%.*f", after, v);
	/* rounding may have carried into a new unit: 999.96 ms is 1 s */
	if (div < 1e9 && fabs(strtod(num, NULL)) >= 1000)
		return timefmt_ns(buf, size, (ns < 0 ? -1 : 1) * 1000 * div, sig);
	if (strchr(num, '.')) {		/* trailing zeros and a bare point go */
		char *e = num + strlen(num) - 1;
		while (*e == '0')
			*e-- = 0;
		if (*e == '.')
			*e = 0;
	}
	if (!strcmp(num, "-0"))
		strcpy(num, "0");
	int n = snprintf(buf, size, "%s %s", num, name);
	return n < 0 ? 0 : (size_t)n;
}
