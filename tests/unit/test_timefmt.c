/* test_timefmt.c — the one time format of axes and tooltips (timefmt.c; its
 * twin timefmt.js is checked against the same table by page-scripts.t). */
#include <string.h>

#include "test.h"
#include "timefmt.h"

static int is(double ns, int sig, const char *want)
{
	char b[64];
	size_t n = timefmt_ns(b, sizeof(b), ns, sig);
	if (strcmp(b, want) != 0 || n != strlen(want)) {
		printf("# timefmt_ns(%.17g, %d) = '%s', wanted '%s'\n", ns, sig, b, want);
		return 0;
	}
	return 1;
}

int main(void)
{
	test_plan(8);
	test_cond("timefmt: zero is 0 s", is(0, 3, "0 s"));
	test_cond("timefmt: nanoseconds", is(850, 3, "850 ns") && is(1, 3, "1 ns"));
	test_cond("timefmt: microseconds, 3 significant digits", is(12345, 3, "12.3 \xc2\xb5s"));
	test_cond("timefmt: milliseconds, trailing zeros dropped", is(4.5e6, 3, "4.5 ms") && is(12345678, 3, "12.3 ms") &&
		  is(100e6, 3, "100 ms"));
	test_cond("timefmt: seconds; whole seconds past 1000 s keep their digits", is(1.234e9, 3, "1.23 s") &&
		  is(1560e9, 3, "1560 s"));
	test_cond("timefmt: rounding up into the next unit", is(999.96e6, 3, "1 s") && is(999.9996e3, 4, "1 ms"));
	test_cond("timefmt: more digits when asked", is(1234567891, 7, "1.234568 s"));
	test_cond("timefmt: negative times", is(-2e6, 3, "-2 ms"));
	return test_report();
}
