/* debuglink — libFuzzer target for the .gnu_debuglink reader
 * (lib/collect/elfsyms.c elfsyms_debuglink): the section's bytes come from
 * any file a traced process maps, and the name it gives becomes part of a
 * path root opens.
 *
 * Input: the section's bytes.  An accepted name must lie inside the input,
 * end at a NUL there, be 1..255 bytes, hold no '/', and be neither "." nor
 * ".." (so the path built from it stays in the directory it is looked up
 * in).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elfsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *copy = malloc(size ? size : 1);	/* exact size: ASan sees overreads */
	const char *name = NULL;

	memcpy(copy, data, size);
	if (elfsyms_debuglink(size ? copy : NULL, size, &name) == 0) {
		const char *end = memchr(copy, 0, size);
		size_t len = end ? (size_t)(end - (const char *)copy) : 0;
		if (name != (const char *)copy || !end || len == 0 || len > 255 || memchr(name, '/', len) ||
		    strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			abort();
	}
	free(copy);
	return 0;
}
