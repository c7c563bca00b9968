/* test_pyelf.c — pyelf_fde_extent: the function whose FDE holds a file
 * address, read from an interpreter's mapped file (Debian's python3, and
 * libruby-3.1 when scripts/install-deps put it there): the eval loop's
 * symbol and its FDE agree, an address in no FDE has none. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mappedfiles.h"
#include "pyelf.h"
#include "test.h"

#define LIBRUBY "/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1"

/* path's facts, its file held in *f (NULL: it cannot be opened) */
static struct pyelf *read_file(struct mappedfiles *mf, const char *path, struct mappedfile **f)
{
	struct pyelf *e = calloc(1, sizeof(*e));
	*f = mappedfiles_open_path(mf, path);
	if (e && *f)
		pyelf_read(e, *f);
	return e;
}

/* cases on the eval loop [lo, hi) of e, named name: 3 */
static void check_loop(const char *name, const struct pyelf *e, uint64_t lo, uint64_t hi)
{
	uint64_t a = 0, b = 0;
	char what[160];

	snprintf(what, sizeof(what), "pyelf: %s's eval loop found (%#lx-%#lx)", name, (unsigned long)lo,
		 (unsigned long)hi);
	test_cond(what, lo && hi > lo);
	int found = pyelf_fde_extent(e, lo + (hi - lo) / 2, &a, &b);
	snprintf(what, sizeof(what), "pyelf: an address inside %s's eval loop is in its FDE (%#lx-%#lx)", name,
		 (unsigned long)a, (unsigned long)b);
	test_cond(what, found == 0 && a == lo && b == hi);
	snprintf(what, sizeof(what), "pyelf: %s: no FDE holds address 0 or one past the file", name);
	test_cond(what, pyelf_fde_extent(e, 0, &a, &b) != 0 && pyelf_fde_extent(e, 1ull << 40, &a, &b) != 0);
}

int main(void)
{
	struct mappedfiles *mf = mappedfiles_shared();
	struct mappedfile *py, *rb = NULL;
	int ruby = access(LIBRUBY, R_OK) == 0;

	test_plan(ruby ? 8 : 4);
	struct pyelf *p = read_file(mf, "/usr/bin/python3", &py);
	test_cond("pyelf: Debian's python3 is a CPython with an FDE table", p && p->python == 1 && p->fde_count > 0);
	check_loop("python3", p, p->eval_lo, p->eval_hi);
	if (ruby) {
		struct pyelf *r = read_file(mf, LIBRUBY, &rb);
		test_cond("pyelf: libruby-3.1 is a CRuby with an FDE table", r && r->ruby && r->fde_count > 0);
		check_loop("libruby-3.1 (vm_exec_core)", r, r->loop_lo, r->loop_hi);
		free(r);
	} else {
		printf("NOTE: %s absent (scripts/install-deps installs ruby): its 4 cases not run\n", LIBRUBY);
	}
	free(p);
	mappedfile_put(py);
	mappedfile_put(rb);
	mappedfiles_release(mf);
	return test_report();
}
