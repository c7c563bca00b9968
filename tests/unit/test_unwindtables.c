/* test_unwindtables — the unwind rows built from .eh_frame (lib/collect/unwindtables.h)
 * against what binutils' readelf --debug-dump=frames-interp says, row by
 * row, for Debian's libc and python3 (no frame pointers, PLT, the signal
 * trampoline, _start). */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "unwindtables.h"
#include "unwindtablescfi.h"

struct table {
	struct unwind_row *rows;
	uint32_t n;
};

static int build(const char *path, struct table *t)
{
	struct unwindtables_rowstats st;
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	struct unwindtables_rowbuf b = { 0 };
	int rc = elf ? unwindtablescfi_read(elf, UNWINDTABLES_CFI_OURS, UINT32_MAX, &b, &st) : -1;
	t->n = (uint32_t)b.nrows;
	t->rows = malloc(((size_t)t->n + 1) * sizeof(*t->rows));
	memcpy(t->rows, b.rows, (size_t)t->n * sizeof(*t->rows));
	unwindtablescfi_buf_free(&b);
	elf_end(elf);
	close(fd);
	return rc;
}

struct tally {
	uint64_t rows, mismatches, plt, signal, end, rbp_saved, unsupported;
};

/* One row of readelf's table: LOC CFA reg... with the column names in cols. */
static void check_row(const struct table *t, char *line, char cols[][8], int ncols, struct tally *k)
{
	char *save, *tok = strtok_r(line, " \t\n", &save);
	uint64_t loc = strtoull(tok, NULL, 16);
	const char *cfa = strtok_r(NULL, " \t\n", &save), *rbp = "u", *ra = "u";
	for (int c = 0; c < ncols && (tok = strtok_r(NULL, " \t\n", &save)); c++) {
		if (tok[0] == '(') {	/* "r10 (r10)": the name of the register above */
			c--;
			continue;
		}
		if (strcmp(cols[c], "rbp") == 0)
			rbp = tok;
		else if (strcmp(cols[c], "ra") == 0)
			ra = tok;
	}
	const struct unwind_row *r = unwindtables_find(t->rows, t->n, loc);
	int ok = r != NULL;
	k->rows++;
	if (ok && strcmp(ra, "u") == 0) {
		ok = r->cfa == UNWIND_END;
		k->end += ok;
	} else if (ok && strcmp(cfa, "exp") == 0) {
		ok = r->cfa == UNWIND_PLT || r->cfa == UNWIND_SIGNAL;
		k->plt += r->cfa == UNWIND_PLT;
		k->signal += r->cfa == UNWIND_SIGNAL;
	} else if (ok && ((strncmp(cfa, "rsp+", 4) != 0 && strncmp(cfa, "rbp+", 4) != 0) || strcmp(ra, "c-8") != 0 ||
			  (rbp[0] != 'c' && rbp[0] != 'u'))) {
		ok = r->cfa == UNWIND_UNSUPPORTED;	/* rules the BPF side does not walk: it stops there */
		k->unsupported++;
	} else if (ok) {
		int kind = strncmp(cfa, "rsp+", 4) == 0 ? UNWIND_RSP : strncmp(cfa, "rbp+", 4) == 0 ? UNWIND_RBP : -1;
		ok = r->cfa == kind && r->cfa_off == atoi(cfa + 4) && strcmp(ra, "c-8") == 0;
		if (rbp[0] == 'c') {
			ok = ok && r->rbp == UNWIND_RBP_SAVED && r->rbp_off == atoi(rbp + 1);
			k->rbp_saved++;
		} else {
			ok = ok && r->rbp == UNWIND_RBP_SAME;
		}
	}
	if (!ok && k->mismatches++ < 5)
		printf("# mismatch at %#" PRIx64 ": readelf cfa %s rbp %s ra %s; row %s\n", loc, cfa, rbp, ra,
		       r ? "differs" : "missing");
}

/* An FDE without instructions of its own (readelf prints no table) starts
 * with its CIE's initial rule: check it at the FDE's first address. */
struct cie {
	unsigned long off;
	char row[256], cols[32][8];
	int ncols;
};

static void check_bare_fde(const struct table *t, const char *hdr, const struct cie *cies, int ncies,
			   struct tally *k)
{
	const char *c = strstr(hdr, "cie="), *pc = strstr(hdr, "pc=");
	unsigned long off = c ? strtoul(c + 4, NULL, 16) : 0;
	for (int i = 0; c && pc && i < ncies; i++) {
		if (cies[i].off != off)
			continue;
		char row[300], cols[32][8];
		memcpy(cols, cies[i].cols, sizeof(cols));
		snprintf(row, sizeof(row), "%016lx%s", strtoul(pc + 3, NULL, 16), cies[i].row + 16);
		check_row(t, row, cols, cies[i].ncols, k);
	}
}

/* Every row readelf shows for path, checked against our table. */
static struct tally compare(const char *path, const struct table *t)
{
	static struct cie cies[64];
	char cmd[512], line[240], cols[32][8], fde[256] = "";
	int ncols = 0, in_fde = 0, ncies = 0, fde_rows = 0;
	struct tally k = { 0 };

	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames-interp '%s' 2>/dev/null", path);
	FILE *p = popen(cmd, "r");
	if (!p)
		return k;
	while (fgets(line, sizeof(line), p)) {
		if (strstr(line, " FDE ") || strstr(line, " CIE ")) {
			if (fde[0] && !fde_rows)
				check_bare_fde(t, fde, cies, ncies, &k);
			fde[0] = 0;
			fde_rows = 0;
		}
		if (strstr(line, " FDE ")) {
			in_fde = 1;
			snprintf(fde, sizeof(fde), "%s", line);
		} else if (strstr(line, " CIE ")) {
			in_fde = 0;
			if (ncies < 64)
				cies[ncies++].off = strtoul(line, NULL, 16);
		} else if (!in_fde && ncies && line[0] == '0' && strlen(line) > 20 && line[16] == ' ') {
			struct cie *ce = &cies[ncies - 1];
			snprintf(ce->row, sizeof(ce->row), "%s", line);
			memcpy(ce->cols, cols, sizeof(cols));
			ce->ncols = ncols;
		} else if (strstr(line, "   LOC ")) {
			char *save, *tok = strtok_r(line, " \t\n", &save);
			ncols = 0;
			strtok_r(NULL, " \t\n", &save);		/* CFA */
			while ((tok = strtok_r(NULL, " \t\n", &save)) && ncols < 32)
				snprintf(cols[ncols++], sizeof(cols[0]), "%s", tok);
		} else if (in_fde && line[0] >= '0' && line[0] <= 'f' && strlen(line) > 20 && line[16] == ' ') {
			check_row(t, line, cols, ncols, &k);
			fde_rows++;
		}
	}
	if (fde[0] && !fde_rows)
		check_bare_fde(t, fde, cies, ncies, &k);
	pclose(p);
	return k;
}

int main(void)
{
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6", *python = "/usr/bin/python3";
	struct table lt = { 0 }, pt = { 0 };

	test_plan(11);

	test_cond("libc: rows built", build(libc, &lt) == 0 && lt.n > 10000);
	struct tally k = compare(libc, &lt);
	printf("# libc: %u rows, %" PRIu64 " of readelf's rows checked (%" PRIu64 " with rules we leave to frame "
	       "pointers), %" PRIu64 " differ\n", lt.n, k.rows, k.unsupported, k.mismatches);
	test_cond("libc: every row of readelf's agrees", k.rows > 20000 && k.mismatches == 0);
	test_cond("libc: PLT expressions recognised", k.plt >= 1);
	test_cond("libc: the signal trampoline recognised", k.signal >= 1);
	test_cond("libc: saved rbp rows", k.rbp_saved > 1000);
	/* pthread_create's start_thread and clone end the stack: undefined RA */
	test_cond("libc: outermost frames (undefined return address)", k.end >= 1);

	test_cond("python3: rows built", build(python, &pt) == 0 && pt.n > 10000);
	k = compare(python, &pt);
	printf("# python3: %u rows, %" PRIu64 " of readelf's rows checked, %" PRIu64 " differ\n", pt.n, k.rows,
	       k.mismatches);
	test_cond("python3: every row of readelf's agrees", k.rows > 20000 && k.mismatches == 0);
	test_cond("python3: _start is the outermost frame", k.end >= 1);

	/* sorted, and lookups before the first row find nothing */
	int sorted = 1;
	for (uint32_t i = 1; i < lt.n; i++)
		sorted &= lt.rows[i - 1].pc < lt.rows[i].pc;
	test_cond("rows sorted by pc", sorted);
	test_cond("no row before the first", unwindtables_find(lt.rows, lt.n, lt.rows[0].pc - 1) == NULL);
	free(lt.rows);
	free(pt.rows);
	return test_report();
}
