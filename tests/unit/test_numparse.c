/* test_numparse.c — the fast decimal parser gives bit-for-bit what strtod
 * gives, on hand-picked edge cases and on a million random decimals. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "numparse.h"
#include "test.h"

static int same_as_strtod(const char *s)
{
	double a, b = strtod(s, NULL);
	if (!numparse_fast(s, strlen(s), &a))
		return 1;	/* not taken: the caller falls back to strtod */
	return memcmp(&a, &b, sizeof(a)) == 0;
}

int main(void)
{
	test_plan(11);
	static const char *const cases[] = {
		"0", "-0", "1", "12.25", "0.1", "0.3", "-3", "5.", ".5", "-.5", "123456789012345678",
		"9007199254740993", "9007199254740992", "0.0000000000000000000001", "1795262401.123456789",
		"3.14159265358979", "100", "99999999999999999", "0.000001",
	};
	int ok = 1;
	double d;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ok &= same_as_strtod(cases[i]);
	test_cond("numparse: edge cases equal strtod", ok);
	test_cond("numparse: exponents left to strtod", !numparse_fast("1e5", 3, &d));
	test_cond("numparse: hex left to strtod", !numparse_fast("0x10", 4, &d));
	test_cond("numparse: sign alone refused", !numparse_fast("-", 1, &d) && !numparse_fast(".", 1, &d));
	test_cond("numparse: trailing garbage refused", !numparse_fast("12a", 3, &d));
	test_cond("numparse: 20 digits left to strtod", !numparse_fast("12345678901234567890", 20, &d));

	uint64_t x = 88172645463325252ull;
	int bad = 0, taken = 0;
	char buf[64];
	for (int i = 0; i < 1000000; i++) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		int frac = (int)(x % 9);
		unsigned long long p10 = 1;
		for (int k = 0; k < frac; k++)
			p10 *= 10;
		snprintf(buf, sizeof(buf), "%s%llu.%0*llu", (x >> 40) & 1 ? "-" : "",
			 (unsigned long long)((x >> 20) % 100000000), frac, (unsigned long long)(x >> 8) % p10);
		double a, b = strtod(buf, NULL);
		if (numparse_fast(buf, strlen(buf), &a)) {
			taken++;
			if (memcmp(&a, &b, sizeof(a)))
				bad++;
		}
	}
	test_cond("numparse: 1e6 random decimals equal strtod", bad == 0);
	printf("# fast path taken for %d of 1000000\n", taken);
	test_cond("numparse: the fast path is taken for ordinary decimals", taken > 900000);
	const char *e = numparse_prefix("2.5 7", &d);
	test_cond("numparse: prefix stops at a space", e && *e == ' ' && d == 2.5);
	e = numparse_prefix("1e3\n", &d);
	test_cond("numparse: prefix falls back to strtod", e && *e == '\n' && d == 1000);
	test_cond("numparse: prefix refuses words", numparse_prefix("abc", &d) == NULL);
	return test_report();
}
