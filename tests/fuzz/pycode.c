/* pycode — libFuzzer target for what a traced Python process hands the
 * collector about its code: a code object's line table (co_lnotab 3.6-3.9,
 * co_linetable 3.10, the location table 3.11+) read with its
 * co_firstlineno, and the _Py_DebugOffsets at the start of _PyRuntime
 * (lib/collect/pylayout.c).  Both come from the process's own memory.
 *
 * Input: byte 0 picks the version (3.6 + byte % 8; its top bit: read the
 * rest as debug offsets instead), bytes 1-4 the instruction (lasti) and
 * 5-8 co_firstlineno, little-endian; the rest is the table.  The whole
 * table always gives a line (0: none), never "read more"; a part of it gives
 * either "read more" (-1) or the whole table's answer; debug offsets read
 * as a layout describe one that agrees with itself.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>
#include "python.h"
#include "pylayout.h"

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void debug_offsets(const uint8_t *data, size_t size)
{
	struct pylayout l;
	uint64_t version;
	const char *why = NULL;
	char what[128];

	if (pylayout_from_debug_offsets(data, size, &l, &version, &why) == 0 &&
	    pylayout_differ(&l, &l, what, sizeof(what)) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 9)
		return 0;
	if (data[0] & 0x80) {
		debug_offsets(data + 1, size - 1);
		return 0;
	}
	const struct pylayout *l = pylayout_table(3, 6 + data[0] % 8);
	if (!l)
		return 0;
	unsigned lasti = le32(data + 1);
	int first = (int)le32(data + 5);
	const unsigned char *t = data + 9;
	size_t len = size - 9;
	int whole = pylayout_line(l, t, len, 1, first, lasti);
	if (whole < 0)
		abort();
	for (size_t part = 0; part < len; part += 1 + len / 8) {
		int r = pylayout_line(l, t, part, 0, first, lasti);
		if (r != -1 && r != whole)
			abort();
	}
	return 0;
}
