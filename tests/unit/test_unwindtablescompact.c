/* test_unwindtablescompact — the compact tables (lib/collect/unwindtablescompact.h)
 * the BPF walker reads: for libc, python3, libpython and, where installed,
 * the big ones (gcc's cc1, libLLVM: ~1 M rows each), the rows our reader
 * builds, compacted, give at every row's first and last byte, at every page
 * boundary, before the first row and past the last the same rule as a
 * binary search over the rows themselves (unwindtables_find); a table takes
 * under 5 bytes a row; and rules that find no room stop the walk (the
 * unsupported rule), never another rule. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "unwindtables.h"
#include "unwindtablescompact.h"
#include "unwindtablescfi.h"

static int same_rule(const struct unwind_rule *u, const struct unwind_row *r)
{
	return u->cfa == r->cfa && u->cfa_off == r->cfa_off && u->rbp == r->rbp && u->rbp_off == r->rbp_off;
}

/* pcs compared: mismatches (the first few printed) */
static uint64_t mismatches;
static void check_pc(const struct unwind_row *rows, uint32_t n, const uint32_t *words, uint32_t off,
		     const struct unwindtables_rules *rules, uint64_t pc)
{
	const struct unwind_row *r = unwindtables_find(rows, n, pc);
	int got = unwindtablescompact_find(words, off, pc);
	int ok = r ? got >= 0 && (uint32_t)got < rules->n && same_rule(&rules->v[got], r) : got == -1;
	if (!ok && mismatches++ < 3)
		printf("# pc %#" PRIx64 ": rows say %s (cfa %d%+d), the compact table rule %d\n", pc, r ? "a row" : "none",
		       r ? r->cfa : -1, r ? r->cfa_off : 0, got);
}

/* Every boundary of rows[0..n) compacted at word off of words (a table
 * placed after another one: its positions are absolute). */
static uint64_t compare_all(const struct unwind_row *rows, uint32_t n, const uint32_t *words, uint32_t off,
			    const struct unwindtables_rules *rules)
{
	mismatches = 0;
	check_pc(rows, n, words, off, rules, 0);
	check_pc(rows, n, words, off, rules, (uint64_t)rows[n - 1].pc + 100000);
	check_pc(rows, n, words, off, rules, (uint64_t)1 << 40);
	for (uint32_t i = 0; i < n; i++) {
		check_pc(rows, n, words, off, rules, rows[i].pc);
		check_pc(rows, n, words, off, rules, (uint64_t)rows[i].pc - 1);
		check_pc(rows, n, words, off, rules, (uint64_t)rows[i].pc + 1);
	}
	uint64_t first = rows[0].pc >> UNWIND_PAGE_SHIFT, last = rows[n - 1].pc >> UNWIND_PAGE_SHIFT;
	for (uint64_t p = first ? first - 1 : 0; p <= last + 1; p++) {
		uint64_t at = p << UNWIND_PAGE_SHIFT;
		check_pc(rows, n, words, off, rules, at);
		check_pc(rows, n, words, off, rules, at + (1u << UNWIND_PAGE_SHIFT) - 1);
		check_pc(rows, n, words, off, rules, at + 0x7ff);
	}
	return mismatches;
}

static void one_file(const char *name, const char *path)
{
	char msg[160];
	struct unwindtables_rowbuf b = { 0 };
	struct unwindtables_rowstats st;
	int fd = open(path, O_RDONLY);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	int rc = elf ? unwindtablescfi_read(elf, UNWINDTABLES_CFI_OURS, UINT32_MAX, &b, &st) : -1;
	uint32_t n = (uint32_t)b.nrows;

	snprintf(msg, sizeof(msg), "%s: rows built and compacted", name);
	uint64_t words = rc == 0 ? unwindtablescompact_words(b.rows, n) : 0;
	test_cond(msg, rc == 0 && n > 1000 && words > n);
	if (words > n) {
		/* a small table first: this one's positions do not start at 0 */
		static const struct unwind_row small[] = { { .pc = 0x1000, .cfa = UNWIND_RSP, .cfa_off = 8 },
							   { .pc = 0x1010, .cfa = UNWIND_NONE } };
		struct unwind_rule *rv = calloc(UNWIND_MAX_RULES, sizeof(*rv));
		struct unwindtables_rules rules;
		uint64_t w0 = unwindtablescompact_words(small, 2);
		uint32_t *w = calloc(w0 + words, sizeof(*w));
		unwindtablescompact_rules_init(&rules, rv, UNWIND_MAX_RULES);
		unwindtablescompact_pack(small, 2, &rules, w, 0);
		unwindtablescompact_pack(b.rows, n, &rules, w + w0, (uint32_t)w0);
		uint64_t d = compare_all(b.rows, n, w, (uint32_t)w0, &rules);
		double per_row = (double)((words - n) * 4 + n * 4 + rules.n * sizeof(struct unwind_rule)) / n;
		/* the rows a lookup searches: its page's */
		uint32_t npages = w[w0 + 1], most = 0;
		for (uint32_t k = 0; k < npages; k++) {
			uint32_t in_page = w[w0 + UNWIND_TABLE_HEADER + k + 1] - w[w0 + UNWIND_TABLE_HEADER + k];
			most = in_page > most ? in_page : most;
		}
		printf("# %s (%s): %u rows, %u distinct rules, %" PRIu64 " index words, %.2f bytes a row "
		       "(16 uncompacted), %.1f rows a page (at most %u), %" PRIu64 " pcs disagree\n",
		       name, path, n, rules.n, words - n, per_row, (double)n / npages, most, d);
		snprintf(msg, sizeof(msg), "%s: every row boundary and page boundary: the rows' own rule", name);
		test_cond(msg, d == 0);
		snprintf(msg, sizeof(msg), "%s: the table before it still answers", name);
		test_cond(msg, compare_all(small, 2, w, 0, &rules) == 0);
		snprintf(msg, sizeof(msg), "%s: under 5 bytes a row (index and rules included)", name);
		test_cond(msg, per_row < 5);

		/* as the disk cache keeps it: exported, then imported at another
		 * place, beside another file's rules (other rule numbers) */
		char *out = malloc(UNWINDTABLESCOMPACT_EXPORT_MAX(words));
		size_t len = unwindtablescompact_export(w, (uint32_t)w0, (uint32_t)words, &rules, out);
		struct unwind_rule *rv2 = calloc(UNWIND_MAX_RULES, sizeof(*rv2));
		struct unwindtables_rules rules2;
		uint32_t *w2 = calloc(7 + len / 4 + 1, sizeof(*w2)), rows2 = 0;
		unwindtablescompact_rules_init(&rules2, rv2, UNWIND_MAX_RULES);
		unwindtablescompact_rule_index(&rules2, &(struct unwind_row){ .cfa = UNWIND_RBP, .cfa_off = 1234 });
		memcpy(w2 + 7, out, len);
		uint32_t got = unwindtablescompact_import(w2, 7, len, &rules2, &rows2);
		snprintf(msg, sizeof(msg), "%s: exported and imported elsewhere: the same rule at every boundary", name);
		test_cond(msg, got == words && rows2 == n && compare_all(b.rows, n, w2, 7, &rules2) == 0);
		memcpy(w2 + 7, out, len);
		w2[7 + words - 1] |= UNWIND_MAX_RULES - 1;	/* a rule it does not have */
		snprintf(msg, sizeof(msg), "%s: an exported table naming a rule it lacks is refused", name);
		test_cond(msg, unwindtablescompact_import(w2, 7, len, &rules2, &rows2) == 0);
		unwindtablescompact_rules_free(&rules2);
		free(rv2);
		free(w2);
		free(out);
		unwindtablescompact_rules_free(&rules);
		free(w);
		free(rv);
	}
	unwindtablescfi_buf_free(&b);
	elf_end(elf);
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	const char *lp = test_libpython();
	struct {
		const char *name, *path;
	} files[] = { { "libc", "/lib/x86_64-linux-gnu/libc.so.6" },
		      { "python3", "/usr/bin/python3" },
		      { "libpython", lp },
		      { "cc1", "/usr/lib/gcc/x86_64-linux-gnu/12/cc1" },
		      { "libLLVM", "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1" } };
	int nfiles = 0;

	elf_version(EV_CURRENT);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		nfiles += i < 2 || (files[i].path && access(files[i].path, R_OK) == 0);
	test_plan(6 * nfiles + 6);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (i < 2 || (files[i].path && access(files[i].path, R_OK) == 0))
			one_file(files[i].name, files[i].path);

	/* a row holding many pages, a page with no row starting in it, rows
	 * at a page's first and last byte */
	static const struct unwind_row rows[] = {
		{ .pc = 0x2000, .cfa = UNWIND_RSP, .cfa_off = 8 },
		{ .pc = 0x2001, .cfa = UNWIND_RSP, .cfa_off = 16, .rbp = UNWIND_RBP_SAVED, .rbp_off = -16 },
		{ .pc = 0x2fff, .cfa = UNWIND_RBP, .cfa_off = 16, .rbp = UNWIND_RBP_SAVED, .rbp_off = -16 },
		{ .pc = 0x7000, .cfa = UNWIND_NONE },
		{ .pc = 0x7800, .cfa = UNWIND_PLT },
		{ .pc = 0x9000, .cfa = UNWIND_END },
	};
	uint32_t n = sizeof(rows) / sizeof(rows[0]);
	struct unwind_rule rv[UNWIND_RULES_RESERVED + 2];
	struct unwindtables_rules rules;
	uint64_t words = unwindtablescompact_words(rows, n);
	uint32_t w[128];
	unwindtablescompact_rules_init(&rules, rv, UNWIND_RULES_RESERVED + 2);
	unwindtablescompact_pack(rows, n, &rules, w, 0);
	uint64_t npages = (0x9000 >> UNWIND_PAGE_SHIFT) - (0x2000 >> UNWIND_PAGE_SHIFT) + 1;
	test_cond("made up rows: header, page index and 6 rows", words == UNWIND_TABLE_HEADER + npages + 1 + 6);
	uint64_t d = 0;
	for (uint64_t pc = 0; pc < 0xb000; pc++) {
		const struct unwind_row *r = unwindtables_find(rows, n, pc);
		int got = unwindtablescompact_find(w, 0, pc);
		/* 2 rules of room past the reserved ones: RSP+8 and RSP+16 get
		 * theirs; the RBP, PLT and END rows find none: unsupported */
		int want = !r ? -1
			   : r->cfa == UNWIND_NONE ? UNWIND_RULE_NONE
			   : r->pc < 0x2fff ? UNWIND_RULES_RESERVED + (r->pc == 0x2001)
			   : UNWIND_RULE_UNSUPPORTED;
		d += got != want;
	}
	test_cond("made up rows: every pc up to 0xb000, rule room for 2: the rows' rules, then unsupported", d == 0);
	test_cond("made up rows: the 3 rows without rule room counted", rules.rows_without_room == 3);
	unwindtablescompact_rules_free(&rules);

	/* a page with a row at each of its 1024 bytes, the most a page holds:
	 * the search's UNWIND_PAGE_SHIFT halvings reach each of them */
	enum { FULL = 1 << UNWIND_PAGE_SHIFT };
	static struct unwind_row full[FULL + 2];
	full[0] = (struct unwind_row){ .pc = 0x3ff0, .cfa = UNWIND_RSP, .cfa_off = 8 };
	for (uint32_t i = 0; i <= FULL; i++)
		full[i + 1] = (struct unwind_row){ .pc = 0x4000 + i, .cfa = UNWIND_RSP, .cfa_off = 8 + 8 * (i % 3) };
	uint32_t *fw = calloc(unwindtablescompact_words(full, FULL + 2), sizeof(uint32_t));
	struct unwind_rule frv[UNWIND_RULES_RESERVED + 8];
	unwindtablescompact_rules_init(&rules, frv, UNWIND_RULES_RESERVED + 8);
	unwindtablescompact_pack(full, FULL + 2, &rules, fw, 0);
	d = 0;
	for (uint64_t pc = 0x3f00; pc < 0x4500; pc++) {
		const struct unwind_row *r = unwindtables_find(full, FULL + 2, pc);
		int got = unwindtablescompact_find(fw, 0, pc);
		d += r ? got < 0 || frv[got].cfa_off != r->cfa_off : got != -1;
	}
	test_cond("a page with a row at every byte: every pc finds its row's rule", d == 0);
	unwindtablescompact_rules_free(&rules);
	free(fw);

	static const struct unwind_row disorder[] = { { .pc = 0x10 }, { .pc = 0x10 } };
	test_cond("rows not strictly increasing: no table", unwindtablescompact_words(disorder, 2) == 0);
	test_cond("no rows: no table", unwindtablescompact_words(rows, 0) == 0);
	return test_report();
}
