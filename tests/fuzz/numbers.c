/* numbers — libFuzzer target for the checked number parsers (lib/format/util.c):
 * marple_parse_u64, marple_parse_u64_span, marple_parse_i64, marple_parse_double, marple_parse_duration_ns.
 *
 * Input: any bytes, as the text of a command-line argument or record field.
 * Beyond no crash: a success must mean the whole text was a number in range
 * (for whole numbers, printing the value back gives the digits without leading
 * zeros), and a failure must leave the output untouched.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	char back[32];
	uint64_t u = 12345, u2 = 12345;
	int64_t i = 12345;
	double d = 12345;

	memcpy(s, data, size);
	s[size] = 0;

	if (marple_parse_u64(s, 10, UINT64_MAX - 10, &u) == 0) {
		if (u < 10 || u > UINT64_MAX - 10)
			abort();
		const char *p = s;
		while (p[0] == '0' && p[1])
			p++;
		snprintf(back, sizeof(back), "%" PRIu64, u);
		if (strcmp(back, p) != 0)
			abort();
	} else if (u != 12345)
		abort();

	if (marple_parse_u64_span((const char *)data, size, &u2) == 0) {
		if (size == 0 || strlen(s) != size)
			abort();
		if (marple_parse_u64(s, 0, UINT64_MAX, &u) != 0 || u != u2)
			abort();
	} else if (u2 != 12345)
		abort();

	if (marple_parse_i64(s, -1000, INT64_MAX, &i) == 0) {
		if (i < -1000)
			abort();
	} else if (i != 12345)
		abort();

	if (marple_parse_double(s, -1e6, 1e300, &d) == 0) {
		if (!isfinite(d) || d < -1e6 || d > 1e300)
			abort();
	} else if (d != 12345)
		abort();

	u = 12345;
	if (marple_parse_duration_ns(s, &u) == 0) {
		if (u > 9200000000000000000ull)
			abort();
	} else if (u != 12345)
		abort();

	free(s);
	return 0;
}
