/* numparse — libFuzzer target for the fast decimal parser (lib/format/numparse.c).
 *
 * Input: any bytes, as a record number.  numparse_fast must agree with
 * strtod bit for bit whenever it takes the number, and must take none that is
 * not -?digits[.digits]; numparse_prefix must end where strtod ends and give
 * the same value, or report no finite number.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "numparse.h"

static int plain_decimal(const char *s, size_t len)
{
	size_t i = 0, digits = 0;
	if (i < len && s[i] == '-')
		i++;
	while (i < len && s[i] >= '0' && s[i] <= '9')
		i++, digits++;
	if (i < len && s[i] == '.') {
		i++;
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++, digits++;
	}
	return i == len && digits > 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *)data;
	char *copy = malloc(size);	/* exact size: ASan sees overreads */
	memcpy(copy, in, size);
	double v = 0;
	if (numparse_fast(copy, size, &v)) {
		if (!plain_decimal(copy, size))
			abort();
		char *z = strndup(in, size);
		double w = strtod(z, NULL);
		if (memcmp(&v, &w, sizeof(v)) != 0 && !(v == 0 && w == 0))
			abort();
		free(z);
	}
	free(copy);

	char *z = strndup(in, size);	/* NUL-terminated, as the prefix parser wants */
	double p = 0;
	const char *end = numparse_prefix(z, &p);
	if (end) {
		char *e2;
		double w = strtod(z, &e2);
		if (end < z || end > z + strlen(z) || !isfinite(p))
			abort();
		if (end != e2 || (memcmp(&p, &w, sizeof(p)) != 0 && !(p == 0 && w == 0)))
			abort();
	}
	free(z);
	return 0;
}
