/* test_unwindtablescfi — our CFI reader (lib/collect/unwindtablescfi.h) against
 * libdw's evaluation of the same FDEs, row for row, on Debian's libc,
 * python3 and libpython (no frame pointers: PLT expressions, the signal
 * trampoline, remember/restore_state, _start's undefined return address).
 * And a workload whose CFI is in .debug_frame only.
 * tests/unit/test_unwindtables.c holds the rows to readelf's view as well. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "unwindtablescfi.h"

struct built {
	struct unwindtables_rowbuf b;
	struct unwind_row *rows;
	uint32_t n;
	struct unwindtables_rowstats st;
	int rc;
};

static struct built build(const char *path, int engine)
{
	struct built b = { .rc = -1 };
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return b;
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf)
		b.rc = unwindtablescfi_read(elf, engine, UINT32_MAX, &b.b, &b.st);
	b.rows = b.b.rows;
	b.n = (uint32_t)b.b.nrows;
	elf_end(elf);
	close(fd);
	return b;
}

/* Rows that differ between a and b (a count of the longer table's extra rows too). */
static uint64_t differences(const struct built *a, const struct built *b)
{
	uint64_t d = a->n > b->n ? a->n - b->n : b->n - a->n;
	uint32_t n = a->n < b->n ? a->n : b->n;
	for (uint32_t i = 0; i < n; i++) {
		const struct unwind_row *x = &a->rows[i], *y = &b->rows[i];
		if (x->pc == y->pc && x->cfa == y->cfa && x->cfa_off == y->cfa_off && x->rbp == y->rbp &&
		    x->rbp_off == y->rbp_off)
			continue;
		if (d++ < 3)
			printf("# row %u: ours pc %#x cfa %u%+d rbp %u%+d, libdw's pc %#x cfa %u%+d rbp %u%+d\n", i, x->pc,
			       x->cfa, x->cfa_off, x->rbp, x->rbp_off, y->pc, y->cfa, y->cfa_off, y->rbp, y->rbp_off);
	}
	return d;
}

/* Three cases for one file: built, the same rows as libdw's, and libdw
 * asked for a small share of the FDEs at most. */
static void compare(const char *name, const char *path)
{
	char msg[160];
	struct built ours = build(path, UNWINDTABLES_CFI_OURS), ref = build(path, UNWINDTABLES_CFI_LIBDW);

	snprintf(msg, sizeof(msg), "%s: rows built by ours and by libdw", name);
	test_cond(msg, ours.rc == 0 && ref.rc == 0 && ours.n > 1000);
	uint64_t d = differences(&ours, &ref);
	printf("# %s (%s): %u rows (libdw %u), %" PRIu64 " FDEs, %" PRIu64 " handed to libdw, %" PRIu64
	       " row ranges left to frame pointers, %" PRIu64 " differences\n",
	       name, path, ours.n, ref.n, ours.st.fdes, ours.st.fdes_libdw, ours.st.unsupported, d);
	snprintf(msg, sizeof(msg), "%s: 0 rows differ from libdw's", name);
	test_cond(msg, d == 0);
	snprintf(msg, sizeof(msg), "%s: libdw needed for under 1%% of the FDEs", name);
	test_cond(msg, ours.st.fdes > 100 && ours.st.fdes_libdw * 100 < ours.st.fdes);
	unwindtablescfi_buf_free(&ours.b);
	unwindtablescfi_buf_free(&ref.b);
}

int main(void)
{
	const char *lp = test_libpython();

	const char *bin = getenv("MARPLE_BIN");
	char df[512];

	snprintf(df, sizeof(df), "%s/workloads/debugframe", bin ? bin : "build");
	test_plan(lp ? 15 : 12);
	compare("libc", "/lib/x86_64-linux-gnu/libc.so.6");
	compare("python3", "/usr/bin/python3");
	if (lp)
		compare("libpython", lp);

	/* into the caller's array (the BPF map): the same rows when they fit,
	 * "too many" when one row does not */
	struct built lc = build("/lib/x86_64-linux-gnu/libc.so.6", UNWINDTABLES_CFI_OURS);
	struct unwindtables_rowstats st;
	struct unwindtables_rowbuf fb = { .fixed = 1, .rows_cap = lc.n };
	int fd = open("/lib/x86_64-linux-gnu/libc.so.6", O_RDONLY);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	fb.rows = calloc(lc.n + 1, sizeof(*fb.rows));
	int rc = unwindtablescfi_read(elf, UNWINDTABLES_CFI_OURS, UINT32_MAX, &fb, &st);
	test_cond("a fixed array that fits: the same rows",
		  rc == 0 && fb.nrows == lc.n && memcmp(fb.rows, lc.rows, lc.n * sizeof(*fb.rows)) == 0);
	fb.rows_cap = lc.n - 1;
	memset(fb.rows, 0xab, (lc.n + 1) * sizeof(*fb.rows));
	rc = unwindtablescfi_read(elf, UNWINDTABLES_CFI_OURS, UINT32_MAX, &fb, &st);
	uint8_t last[sizeof(*fb.rows)];
	memset(last, 0xab, sizeof(last));
	test_cond("a fixed array one row short: too many, nothing written past it",
		  rc == 1 && fb.nrows == 0 && memcmp(&fb.rows[lc.n - 1], last, sizeof(last)) == 0);
	elf_end(elf);
	close(fd);
	free(fb.rows);
	fb.rows = NULL;
	unwindtablescfi_buf_free(&fb);
	unwindtablescfi_buf_free(&lc.b);

	/* CFI in .debug_frame only (its functions have no .eh_frame entry):
	 * read there, and the same rows as libdw's dwarf_getcfi gives */
	struct built ours = build(df, UNWINDTABLES_CFI_OURS), ref = build(df, UNWINDTABLES_CFI_LIBDW);
	printf("# debugframe (%s): %u rows, %" PRIu64 " FDEs, %" PRIu64 " from .debug_frame\n", df, ours.n,
	       ours.st.fdes, ours.st.fdes_debug_frame);
	test_cond("debugframe: df_a, df_b, df_c, main from .debug_frame",
		  ours.rc == 0 && ours.st.fdes_debug_frame >= 4 && ours.st.fdes_libdw == 0);
	test_cond("debugframe: 0 rows differ from libdw's", ref.rc == 0 && differences(&ours, &ref) == 0);
	int has_rsp_rows = 0;
	for (uint32_t i = 0; i < ours.n; i++)
		has_rsp_rows += ours.rows[i].cfa == UNWIND_RSP && ours.rows[i].cfa_off > 8;
	test_cond("debugframe: rows with the CFA past pushed registers", has_rsp_rows >= 2);
	unwindtablescfi_buf_free(&ours.b);
	unwindtablescfi_buf_free(&ref.b);

	/* a file with no CFI at all */
	struct built none = build("/dev/null", UNWINDTABLES_CFI_OURS);
	test_cond("no ELF: no rows", none.rc != 0 && none.n == 0);
	return test_report();
}
