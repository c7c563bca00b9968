/* escape — libFuzzer target for the %XX escaping (lib/format/escape.c).
 *
 * Input: any bytes, taken as one name.  Escaping then unescaping must give the
 * input back; the escaped text must hold no separator (, ; # %-not-escape),
 * no control byte and only valid UTF-8 (so it is greppable and safe in a
 * record); unescaping arbitrary text must never read or write out of bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

static int is_hex(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *)data;
	char *e = escape_dup(in, size);
	size_t elen = strlen(e);

	/* The escaped form: separators and controls only as %XX, valid UTF-8. */
	for (size_t i = 0; i < elen;) {
		unsigned char c = (unsigned char)e[i];
		if (c == '%') {
			if (i + 2 >= elen)
				abort();
			if (!is_hex((unsigned char)e[i + 1]) || !is_hex((unsigned char)e[i + 2]))
				abort();
			i += 3;
			continue;
		}
		if (c == ',' || c == ';' || c == '#' || c < 0x20 || c == 0x7f)
			abort();
		size_t n = escape_utf8_len((const unsigned char *)e + i, elen - i);
		if (n == 0)
			abort();
		i += n;
	}
	/* Escaping is the identity on names that need none. */
	long d = escape_decode_inplace(e, elen, NULL);
	if (d != (long)size || memcmp(e, in, size) != 0)
		abort();
	free(e);

	/* Unescaping foreign text: in bounds, never longer, errors point at a '%'. */
	char *copy = malloc(size ? size : 1);
	memcpy(copy, in, size);
	size_t bad = (size_t)-1;
	long n = escape_decode_inplace(copy, size, &bad);
	if (n > (long)size)
		abort();
	if (n < 0 && (bad >= size || in[bad] != '%'))
		abort();
	free(copy);
	return 0;
}
