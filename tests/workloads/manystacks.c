/* manystacks.c — mallocs from DEPTHS distinct call stacks: descend() recurses
 * to each depth from 1 to DEPTHS and there allocates and frees 100 bytes,
 * ROUNDS times (so 100 * DEPTHS * ROUNDS bytes in all).  For tests of what a
 * collector does when its stack store is too small.  Keep DEPTHS under the
 * 127 frames a stack holds, or the deepest stacks look alike.
 *
 * Usage: manystacks [DEPTHS [ROUNDS]]
 * WORKLOAD_CFLAGS: -O1 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -fno-inline
 */
#include <stdlib.h>

static void *volatile sink;

__attribute__((noinline)) void descend(int depth)
{
	if (depth > 0) {
		descend(depth - 1);
		sink = sink;	/* not a tail call */
		return;
	}
	sink = malloc(100);
	free(sink);
}

int main(int argc, char **argv)
{
	int depths = argc > 1 ? atoi(argv[1]) : 100;
	int rounds = argc > 2 ? atoi(argv[2]) : 1;

	for (int r = 0; r < rounds; r++)
		for (int d = 1; d <= depths; d++)
			descend(d);
	return 0;
}
