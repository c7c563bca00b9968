/* test.h — a two-macro harness for lib/ unit tests (in the spirit of sds's). */
#ifndef MARPLE_TEST_H
#define MARPLE_TEST_H
#include <stdio.h>

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

#endif
