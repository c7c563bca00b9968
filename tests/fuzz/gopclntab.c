/* gopclntab — libFuzzer target for the Go function table reader
 * (lib/collect/gopclntab.c), its inlining tables too.
 *
 * Input: a 4-byte little-endian length L, then a .gopclntab section's L
 * bytes, its text at 0x401000; the bytes after it are the binary's
 * funcdata at 0x480000 (gofunc there too: 1.18+ offsets count from it).
 * The seeds (tests/fuzz/gopclntab-seeds.py): small tables of each layout,
 * 1.16, 1.18 and 1.20, two functions at 0x401000, main.b inlined into
 * main.a's first 0x10 bytes; one of each whose inlined call's instruction
 * is in the inlined code again (a cycle).  Every function's entry and a
 * spread of addresses are looked up, as a function and as a chain.  Beyond
 * no crash/leak/UB: a function found starts at or before the address, its
 * name and file are set, and a chain is no longer than asked.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gopclntab.h"

#define FUNCDATA_AT 0x480000
#define MAX_CHAIN 8

static void check_lookup(struct gopclntab *g, uint64_t addr)
{
	struct gopclntab_frame f, chain[MAX_CHAIN];
	if (gopclntab_lookup(g, addr, &f) && (f.entry > addr || !f.function || !f.file))
		abort();
	int n = gopclntab_chain(g, addr, chain, MAX_CHAIN);
	if (n < 0 || n > MAX_CHAIN)
		abort();
	for (int i = 0; i < n; i++)
		if (!chain[i].function || !chain[i].file || chain[i].entry > addr)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t len;
	if (size < 4)
		return 0;
	memcpy(&len, data, 4);
	data += 4, size -= 4;
	if (len > size)
		len = (uint32_t)size;
	struct gopclntab *g = gopclntab_parse(data, len, 0x401000);
	if (!g)
		return 0;
	gopclntab_set_funcdata(g, data + len, size - len, FUNCDATA_AT, FUNCDATA_AT);
	for (uint64_t a = 0x400ff0; a < 0x401400; a += 5)
		check_lookup(g, a);
	for (size_t i = 0; i + 8 <= len && i < 128; i += 8) {
		uint64_t a;
		memcpy(&a, data + i, 8);
		check_lookup(g, a);
	}
	gopclntab_close(g);
	return 0;
}
