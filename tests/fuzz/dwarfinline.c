/* dwarfinline — libFuzzer target for the DWARF inline-chain reader
 * (lib/collect/dwarfinline.c, through libdw).
 *
 * Input: an ELF file (the seeds: tiny static builds of an inline chain,
 * DWARF 4, 5 and zlib-compressed, linked at 0x400000).  It is opened from a
 * memfd and asked about a spread of addresses across its text and a few
 * taken from the input.  Beyond no crash/leak/UB/hang: every chain is at
 * most DWARFINLINE_MAX_DEPTH long with names and files set, and every
 * lookup is counted once, resolved or by its reason.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dwarfinline.h"

static void check_lookup(struct dwarfinline *d, uint64_t addr)
{
	struct dwarfinline_frame f[DWARFINLINE_MAX_DEPTH];
	int n = dwarfinline_lookup(d, addr, f, DWARFINLINE_MAX_DEPTH);
	if (n < 0 || n > DWARFINLINE_MAX_DEPTH)
		abort();
	for (int i = 0; i < n; i++)
		if (!f[i].function || !f[i].file)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("dwarfinline-fuzz", MFD_CLOEXEC);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	/* no real debug root: a mutated build-id must not read the host's files */
	struct dwarfinline *d = dwarfinline_open(path, "/nonexistent", 1 << 20);
	if (d) {
		for (uint64_t a = 0x400000; a < 0x400200; a += 3)
			check_lookup(d, a);
		for (size_t i = 0; i + 8 <= size && i < 64; i += 8) {
			uint64_t a;
			memcpy(&a, data + i, 8);
			check_lookup(d, a);
		}
		const struct dwarfinline_stats *s = dwarfinline_stats(d);
		if (s->resolved + s->no_dwarf + s->no_unit + s->no_function + s->bad_dwarf != s->lookups)
			abort();
		dwarfinline_close(d);
	}
	close(fd);
	return 0;
}
