/* treestacks.c — mallocs from 2^DEPTH distinct call stacks at a steady pace:
 * a binary tree of calls, left() or right() at each level, allocating and
 * freeing 100 bytes at each leaf, with a 1 ms nap every PACE leaves (0: no
 * nap); with LEAK, the block of one leaf in LEAK is never freed (LEAK 0: all
 * freed); with HOLD, first HOLD blocks of 100 bytes are allocated from
 * hold_blocks() and kept to the end (a collector that walks what is
 * outstanding has that many to walk).  For tests of a collector whose stack
 * store fills many times over during a capture.
 *
 * Usage: treestacks [DEPTH [SECONDS [PACE [LEAK [HOLD]]]]]   (defaults: 14, 3, 16, 0, 0)
 * WORKLOAD_CFLAGS: -O1 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -fno-inline
 */
#include <stdlib.h>
#include <time.h>

static void *volatile sink;
static long leaves, pace, leak;

static void branch(int depth, unsigned path);

__attribute__((noinline)) void left(int depth, unsigned path)
{
	branch(depth - 1, path >> 1);
	sink = sink;	/* not a tail call */
}

__attribute__((noinline)) void right(int depth, unsigned path)
{
	branch(depth - 1, path >> 1);
	sink = sink;
}

__attribute__((noinline)) static void branch(int depth, unsigned path)
{
	if (depth > 0) {
		if (path & 1)
			right(depth, path);
		else
			left(depth, path);
		sink = sink;
		return;
	}
	sink = malloc(100);
	++leaves;
	if (!leak || leaves % leak)
		free(sink);
	if (pace && leaves % pace == 0)
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
}

__attribute__((noinline)) void hold_blocks(long n)
{
	for (long i = 0; i < n; i++)
		sink = malloc(100);
}

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 14;
	double seconds = argc > 2 ? atof(argv[2]) : 3;
	struct timespec start, now;

	pace = argc > 3 ? atol(argv[3]) : 16;
	leak = argc > 4 ? atol(argv[4]) : 0;
	hold_blocks(argc > 5 ? atol(argv[5]) : 0);
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		for (unsigned p = 0; p < (1u << depth); p++)
			branch(depth, p);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec - start.tv_sec + (now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
	return 0;
}
