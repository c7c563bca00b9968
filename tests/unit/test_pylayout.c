/* test_pylayout.c — CPython layouts: the version the symbols say, the lines
 * of code objects as each interpreter itself gives them (golden files made
 * by the interpreters: tests/data/pylines/generate.py), a line table read
 * only in part answering the same or asking for more, and _Py_DebugOffsets
 * read, checked and refused. */
#include <linux/types.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pylayout.h"
#include "python.h"
#include "test.h"

struct check { int frames, wrong, partial_wrong; char first_wrong[160]; };

/* Each instruction's line against the interpreter's, whole and from every
 * prefix of the table that answers */
static void check_code(const struct pylayout *l, const unsigned char *t, size_t len, int first, const int *lasti,
		       const int *line, int n, struct check *c)
{
	for (int i = 0; i < n; i++) {
		int got = pylayout_line(l, t, len, 1, first, (unsigned)lasti[i]);
		c->frames++;
		if (got != line[i] && c->wrong++ == 0)
			snprintf(c->first_wrong, sizeof(c->first_wrong), "3.%u lasti %d: %d, want %d", l->minor,
				 lasti[i], got, line[i]);
		for (size_t part = 0; part < len; part += 1 + part / 3) {
			int p = pylayout_line(l, t, part, 0, first, (unsigned)lasti[i]);
			if (p != -1 && p != line[i] && c->partial_wrong++ == 0)
				snprintf(c->first_wrong, sizeof(c->first_wrong), "3.%u lasti %d, %zu bytes: %d, want %d",
					 l->minor, lasti[i], part, p, line[i]);
		}
	}
}

/* One golden file: code objects and their instructions' lines */
static int check_file(const char *path, struct check *c)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0;
	unsigned char *t = NULL;
	size_t len = 0;
	int *lasti = NULL, *line = NULL, n = 0, first = 0, ncap = 0;
	const struct pylayout *l = NULL;

	if (!f)
		return -1;
	while (getline(&buf, &cap, f) > 0) {
		unsigned minor;
		if (strncmp(buf, "code ", 5) == 0) {
			if (l)
				check_code(l, t, len, first, lasti, line, n, c);
			char hex[65536];
			hex[0] = 0;
			if (sscanf(buf, "code %u %d %65535s", &minor, &first, hex) < 2 || !(l = pylayout_table(3, minor)))
				return -1;
			len = strlen(hex) / 2;
			t = realloc(t, len + 1);
			for (size_t i = 0; i < len; i++)
				sscanf(hex + 2 * i, "%2hhx", &t[i]);
			n = 0;
		} else if (n < ncap || (lasti = realloc(lasti, sizeof(int) * (size_t)(ncap = ncap * 2 + 64)),
					 line = realloc(line, sizeof(int) * (size_t)ncap))) {
			if (sscanf(buf, "%d %d", &lasti[n], &line[n]) == 2)
				n++;
		}
	}
	if (l)
		check_code(l, t, len, first, lasti, line, n, c);
	fclose(f);
	free(buf), free(t), free(lasti), free(line);
	return 0;
}

/* 3.13.0's _Py_DebugOffsets words as pyenv's libpython3.13 holds them */
static const uint64_t debug_offsets_313[73] = {
	0, 0x30d00f0, 0, 283320, 608, 632, 194968, 7272, 7264, 7344, 7400, 7656, 7640, 7648, 16, 7752, 0, 7768,
	7760, 304, 0, 8, 16, 72, 152, 160, 232, 32, 80, 8, 0, 56, 72, 70, 208, 112, 120, 128, 136, 68, 52, 96,
	104, 200, 16, 8, 416, 24, 88, 168, 32, 24, 16, 40, 24, 16, 48, 32, 40, 24, 16, 32, 16, 24, 40, 16, 32,
	64, 32, 16, 40, 240, 200
};

int main(void)
{
	const char *top = getenv("MARPLE_TOP");
	static const unsigned minors[] = { 6, 7, 8, 9, 10, 11, 12, 13 };
	char path[4096];

	test_plan(8 + 4);
	for (size_t i = 0; i < sizeof(minors) / sizeof(minors[0]); i++) {
		struct check c = { 0 };
		snprintf(path, sizeof(path), "%s/tests/data/pylines/3.%u.txt", top ? top : ".", minors[i]);
		int rc = check_file(path, &c);
		char name[128];
		snprintf(name, sizeof(name), "pylayout: 3.%u: every instruction's line as the interpreter gives it",
			 minors[i]);
		if (rc != 0 || c.frames < 100 || c.wrong || c.partial_wrong)
			printf("# %s: %d instructions, %d wrong, %d wrong from a part; %s\n", path, c.frames, c.wrong,
			       c.partial_wrong, c.first_wrong);
		test_cond(name, rc == 0 && c.frames >= 100 && !c.wrong && !c.partial_wrong);
	}
	test_cond("pylayout: the version by symbols (3.6-3.10, Python 2, none)",
		  pylayout_minor_of(1u << PYSYM_EVAL_DEFAULT | 1u << PYSYM_EVAL_EX) == 6 &&
			  pylayout_minor_of(1u << PYSYM_EVAL_DEFAULT | 1u << PYSYM_RUNTIME | 1u << PYSYM_POSONLY) == 8 &&
			  pylayout_minor_of(0x1f | 1u << PYSYM_EVAL_EX) == 10 && pylayout_minor_of(1u << PYSYM_EVAL_EX) == 0 &&
			  pylayout_minor_of(0) == -1);

	unsigned char buf[PYLAYOUT_DEBUG_BYTES];
	struct pylayout own;
	uint64_t version;
	const char *why = NULL;
	memcpy(buf, debug_offsets_313, sizeof(buf));
	memcpy(buf, "xdebugpy", 8);
	int rc = pylayout_from_debug_offsets(buf, sizeof(buf), &own, &version, &why);
	char what[96] = "";
	int differ = rc == 0 ? pylayout_differ(pylayout_table(3, 13), &own, what, sizeof(what)) : -1;
	if (rc != 0 || differ)
		printf("# %s %s\n", rc ? why : "", what);
	test_cond("pylayout: 3.13's debug offsets read agree with the table", rc == 0 && differ == 0 &&
										 own.minor == 13 && version == 0x30d00f0);
	uint64_t ft = 1;
	memcpy(buf + 16, &ft, 8);
	int ft_rc = pylayout_from_debug_offsets(buf, sizeof(buf), &own, &version, &why);
	memcpy(buf + 16, &(uint64_t){ 0 }, 8);
	memcpy(buf + 8 * 30, &(uint64_t){ 90 }, 8);	/* the frame's executable past its size (80) */
	int bad_rc = pylayout_from_debug_offsets(buf, sizeof(buf), &own, &version, &why);
	memcpy(buf, "xdebugpz", 8);
	int cookie_rc = pylayout_from_debug_offsets(buf, sizeof(buf), &own, &version, &why);
	test_cond("pylayout: free-threaded, inconsistent and cookie-less debug offsets refused",
		  ft_rc == -2 && bad_rc == -1 && cookie_rc == -1 && version == 0);
	struct pylayout moved = *pylayout_table(3, 12);
	moved.frame_instr += 8;
	test_cond("pylayout: a difference is named",
		  pylayout_differ(pylayout_table(3, 12), &moved, what, sizeof(what)) == 1 &&
			  strcmp(what, "frame_instr 56 against 64") == 0);
	return test_report();
}
