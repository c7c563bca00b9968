/* inlinelookup — the bench's driver of lib/collect/dwarfinline.c (and with
 * -g of lib/collect/gopclntab.c: a Go binary's own tables): FILE's inline
 * chain at each address read from stdin (hex, one a line), printed as
 * `addr2line -a -f -i -e FILE` prints them, then the same addresses looked
 * up again and again for SECONDS (default 1) on one core; on stderr (open:
 * the file opened and its units indexed, or its Go table copied; first: the
 * first lookup, which reads its unit; cold_cpu: the CPU of the open and of
 * the first lookup of every address; units: read of indexed):
 *
 *   open_ms 12.3 first_ms 2.1 cold_cpu_ms 40.2 units 35 of 1804 build_ms 38.0 lookups 1000
 *   lookups_per_s 8123456 table_bytes 1234567 dwarf_bytes 10013701
 *
 * usage: inlinelookup [-g] FILE [SECONDS] < addresses
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dwarfinline.h"
#include "gopclntab.h"

/* The file's reader: its DWARF, or with -g its Go table. */
struct reader {
	struct dwarfinline *dwarf;
	struct gopclntab *go;
};

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

static int lookup(struct reader *r, uint64_t a, struct dwarfinline_frame *f)
{
	if (r->dwarf)
		return dwarfinline_lookup(r->dwarf, a, f, DWARFINLINE_MAX_DEPTH);
	struct gopclntab_frame g[DWARFINLINE_MAX_DEPTH];
	int n = gopclntab_chain(r->go, a, g, DWARFINLINE_MAX_DEPTH);
	for (int i = 0; i < n; i++)
		f[i] = (struct dwarfinline_frame){ g[i].function, g[i].file, g[i].line };
	return n;
}

static void print_chain(struct reader *r, uint64_t a)
{
	struct dwarfinline_frame f[DWARFINLINE_MAX_DEPTH];
	int n = lookup(r, a, f);
	printf("0x%016llx\n", (unsigned long long)a);
	if (n == 0)
		printf("??\n??:0\n");
	for (int i = 0; i < n; i++)
		printf("%s\n%s:%u\n", f[i].function, f[i].file, f[i].line);
}

static void print_stats(struct reader *r, double open_s, double first_s, double cold_cpu_s, size_t n,
			double per_s)
{
	if (r->go) {
		struct gopclntab_stats st;
		gopclntab_stats(r->go, &st);
		fprintf(stderr, "open_ms %.1f first_ms %.1f cold_cpu_ms %.1f lookups %zu lookups_per_s %.0f "
			"funcdata_bytes %llu cut %llu bad_inline %llu\n", open_s * 1e3, first_s * 1e3,
			cold_cpu_s * 1e3, n, per_s, (unsigned long long)st.funcdata_bytes,
			(unsigned long long)st.cut, (unsigned long long)st.bad_inline);
		return;
	}
	const struct dwarfinline_stats *st = dwarfinline_stats(r->dwarf);
	fprintf(stderr, "open_ms %.1f first_ms %.1f cold_cpu_ms %.1f units %llu of %llu build_ms %.1f lookups %zu "
		"lookups_per_s %.0f table_bytes %llu dwarf_bytes %llu\n",
		open_s * 1e3, first_s * 1e3, cold_cpu_s * 1e3, (unsigned long long)st->units_read,
		(unsigned long long)st->units, (double)st->build_ns / 1e6, n, per_s,
		(unsigned long long)st->table_bytes, (unsigned long long)st->dwarf_bytes);
}

int main(int argc, char **argv)
{
	int go = argc > 1 && strcmp(argv[1], "-g") == 0;
	argc -= go, argv += go;
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: inlinelookup [-g] FILE [SECONDS] < addresses\n");
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
	struct reader r = { NULL, NULL };
	if (go)
		r.go = gopclntab_open(argv[1]);
	else
		r.dwarf = dwarfinline_open(argv[1], NULL, 0);
	if (!r.go && !r.dwarf) {
		fprintf(stderr, "inlinelookup: %s: %s\n", argv[1], go ? "no Go table" : "not an ELF file");
		return 1;
	}
	double open_s = now() - t0;
	struct dwarfinline_frame f[DWARFINLINE_MAX_DEPTH];
	if (n)
		lookup(&r, addr[0], f);	/* its unit is read here */
	double first_s = now() - t0 - open_s;
	for (size_t i = 1; i < n; i++)
		lookup(&r, addr[i], f);
	double cold_cpu_s = clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
	for (size_t i = 0; i < n; i++)
		print_chain(&r, addr[i]);
	unsigned long long looked = 0;
	double start = now(), end = start;
	while (n && end - start < secs) {
		for (size_t i = 0; i < n; i++)
			lookup(&r, addr[i], f);
		looked += n;
		end = now();
	}
	print_stats(&r, open_s, first_s, cold_cpu_s, n, end > start ? (double)looked / (end - start) : 0.0);
	dwarfinline_close(r.dwarf);
	gopclntab_close(r.go);
	free(addr);
	return fflush(stdout) == 0 ? 0 : 1;
}
