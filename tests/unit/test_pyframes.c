/* test_pyframes.c — pairing the eval loop's native activations with the
 * Python frames' segments (pyframes_pair): one to one when the counts agree,
 * only the certain pairs when not, never an invented order. */
#include <string.h>

#include "pyframes.h"
#include "test.h"

static int pairs_are(int na, int ns, int complete, int whole, int want_n, const int *want)
{
	int got[16];
	int n = pyframes_pair(na, ns, complete, whole, got);
	if (n != want_n || memcmp(got, want, sizeof(int) * (size_t)na) != 0) {
		printf("# pyframes_pair(%d, %d, %d, %d) = %d:", na, ns, complete, whole, n);
		for (int i = 0; i < na; i++)
			printf(" %d", got[i]);
		printf("\n");
		return 0;
	}
	return 1;
}

int main(void)
{
	test_plan(6);
	test_cond("pyframes: equal counts pair one to one",
		  pairs_are(3, 3, 1, 1, 3, (int[]){ 0, 1, 2 }) && pairs_are(2, 2, 1, 0, 2, (int[]){ 0, 1 }));
	/* a sample as an activation starts: the leaf one has no frame yet */
	test_cond("pyframes: an extra leaf activation stays native (whole stack: from the root)",
		  pairs_are(3, 2, 1, 1, 2, (int[]){ -1, 0, 1 }));
	/* the native stack cut short at the root: its leaf side is what is known */
	test_cond("pyframes: a native stack not whole pairs from the leaf",
		  pairs_are(2, 3, 1, 0, 2, (int[]){ 0, 1 }) && pairs_are(3, 2, 1, 0, 2, (int[]){ 0, 1, -1 }));
	/* more segments than activations on a stack that looked whole (a
	 * thread's parent in clone3): cut after all, its leaf side is known */
	test_cond("pyframes: more segments than activations pair from the leaf, the rest before the cut",
		  pairs_are(2, 3, 1, 1, 2, (int[]){ 0, 1 }) && pairs_are(1, 3, 1, 1, 1, (int[]){ 0 }) &&
			  !pyframes_from_root(2, 3, 1, 1) && !pyframes_from_root(0, 1, 1, 1) &&
			  pyframes_from_root(3, 2, 1, 1));
	test_cond("pyframes: Python frames cut before their last entry pair from the leaf",
		  pairs_are(3, 2, 0, 1, 2, (int[]){ 0, 1, -1 }));
	test_cond("pyframes: no activation or no segment: nothing paired",
		  pairs_are(0, 2, 1, 1, 0, (int[]){ 0 }) && pairs_are(2, 0, 1, 1, 0, (int[]){ -1, -1 }));
	return test_report();
}
