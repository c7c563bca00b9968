/* inlinelookup — the bench's driver of lib/collect/dwarfinline.c: FILE's
 * inline chain at each address read from stdin (hex, one a line), printed
 * as `addr2line -a -f -i -e FILE` prints them, then the same addresses
 * looked up again and again for SECONDS (default 1) on one core; on stderr
 * (open: the file opened and its units indexed; first: the first lookup,
 * which reads its unit; cold_cpu: the CPU of the open and of the first
 * lookup of every address; units: read of indexed):
 *
 *   open_ms 12.3 first_ms 2.1 cold_cpu_ms 40.2 units 35 of 1804 build_ms 38.0 lookups 1000
 *   lookups_per_s 8123456 table_bytes 1234567 dwarf_bytes 10013701
 *
 * usage: inlinelookup FILE [SECONDS] < addresses
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dwarfinline.h"

static double clock_s(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

static void print_chain(struct dwarfinline *d, uint64_t a)
{
	struct dwarfinline_frame f[DWARFINLINE_MAX_DEPTH];
	int n = dwarfinline_lookup(d, a, f, DWARFINLINE_MAX_DEPTH);
	printf("0x%016llx\n", (unsigned long long)a);
	if (n == 0)
		printf("??\n??:0\n");
	for (int i = 0; i < n; i++)
		printf("%s\n%s:%u\n", f[i].function, f[i].file, f[i].line);
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: inlinelookup FILE [SECONDS] < addresses\n");
		return 2;
	}
	double secs = argc == 3 ? strtod(argv[2], NULL) : 1.0;
	size_t n = 0, cap = 0;
	uint64_t *addr = NULL;
	char line[64];
	while (fgets(line, sizeof(line), stdin)) {
		if (n == cap && !(addr = realloc(addr, (cap = cap ? cap * 2 : 1024) * sizeof(*addr))))
			return 1;
		addr[n++] = strtoull(line, NULL, 16);
	}
	double cpu0 = clock_s(CLOCK_PROCESS_CPUTIME_ID), t0 = now();
	struct dwarfinline *d = dwarfinline_open(argv[1], NULL, 0);
	if (!d) {
		fprintf(stderr, "inlinelookup: %s: not an ELF file\n", argv[1]);
		return 1;
	}
	double open_s = now() - t0;
	struct dwarfinline_frame f[DWARFINLINE_MAX_DEPTH];
	if (n)
		dwarfinline_lookup(d, addr[0], f, DWARFINLINE_MAX_DEPTH);	/* its unit is read here */
	double first_s = now() - t0 - open_s;
	for (size_t i = 1; i < n; i++)
		dwarfinline_lookup(d, addr[i], f, DWARFINLINE_MAX_DEPTH);
	double cold_cpu_s = clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
	for (size_t i = 0; i < n; i++)
		print_chain(d, addr[i]);
	unsigned long long looked = 0;
	double start = now(), end = start;
	while (n && end - start < secs) {
		for (size_t i = 0; i < n; i++)
			dwarfinline_lookup(d, addr[i], f, DWARFINLINE_MAX_DEPTH);
		looked += n;
		end = now();
	}
	const struct dwarfinline_stats *st = dwarfinline_stats(d);
	fprintf(stderr, "open_ms %.1f first_ms %.1f cold_cpu_ms %.1f units %llu of %llu build_ms %.1f lookups %zu "
		"lookups_per_s %.0f table_bytes %llu dwarf_bytes %llu\n",
		open_s * 1e3, first_s * 1e3, cold_cpu_s * 1e3, (unsigned long long)st->units_read,
		(unsigned long long)st->units, (double)st->build_ns / 1e6, n,
		end > start ? (double)looked / (end - start) : 0.0, (unsigned long long)st->table_bytes,
		(unsigned long long)st->dwarf_bytes);
	dwarfinline_close(d);
	free(addr);
	return fflush(stdout) == 0 ? 0 : 1;
}
