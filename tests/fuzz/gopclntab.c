/* gopclntab — libFuzzer target for the Go function table reader
 * (lib/collect/gopclntab.c).
 *
 * Input: a .gopclntab section's bytes (the seeds: small tables of each
 * layout, 1.16, 1.18 and 1.20, with two functions at 0x401000, made by
 * tests/fuzz/corpus/gopclntab/make-seeds.py), its text at 0x401000.  Every
 * function's entry and a spread of addresses are looked up.  Beyond no
 * crash/leak/UB: a function found starts at or before the address, and its
 * name and file are set.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gopclntab.h"

static void check_lookup(const struct gopclntab *g, uint64_t addr)
{
	struct gopclntab_frame f;
	if (gopclntab_lookup(g, addr, &f) && (f.entry > addr || !f.function || !f.file))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gopclntab *g = gopclntab_parse(data, size, 0x401000);
	if (!g)
		return 0;
	for (uint64_t a = 0x400ff0; a < 0x401400; a += 5)
		check_lookup(g, a);
	for (size_t i = 0; i + 8 <= size && i < 128; i += 8) {
		uint64_t a;
		memcpy(&a, data + i, 8);
		check_lookup(g, a);
	}
	gopclntab_close(g);
	return 0;
}
