/* test.h — a two-macro harness for lib/ unit tests (in the spirit of sds's). */
#ifndef MARPLE_TEST_H
#define MARPLE_TEST_H
#include <stdio.h>
#include <unistd.h>

static int test_failed, test_passed;

#define test_cond(name, cond)                                                        \
	do {                                                                         \
		if (cond) {                                                          \
			test_passed++;                                               \
			printf("PASS: %s\n", name);                                  \
		} else {                                                             \
			test_failed++;                                               \
			printf("FAIL: %s: %s:%d: %s\n", name, __FILE__, __LINE__, #cond); \
		}                                                                    \
	} while (0)

/* test_plan(n): this test prints n cases; tests/run-all fails it otherwise. */
#define test_plan(n) printf("PLAN: %d\n", (int)(n))

#define test_report() (fflush(stdout), test_failed ? 1 : 0)

/* libpython where Debian puts it (python3-dev's, or a python3.X's shared
 * build), or NULL: a big real library for the unwind table tests. */
static inline const char *test_libpython(void)
{
	static const char *const paths[] = { "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0",
					     "/usr/lib/x86_64-linux-gnu/libpython3.12.so.1.0",
					     "/usr/lib/x86_64-linux-gnu/libpython3.13.so.1.0" };
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (access(paths[i], R_OK) == 0)
			return paths[i];
	return NULL;
}

#endif
