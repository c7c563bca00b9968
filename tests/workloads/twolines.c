/* twolines — one function, spin, whose time is on two lines of its own: a
 * loop on one line runs ROUNDS rounds, the same loop on the next line twice
 * as many, so a profile by line puts spin's samples about 1:2 on the two
 * (spin is called by main; nothing is inlined into it).
 * Usage: twolines SECONDS
 * WORKLOAD_CFLAGS: -O2 -g -fno-omit-frame-pointer
 */
#include <stdlib.h>
#include <time.h>

#define ROUNDS 4096

static volatile unsigned sink;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Each loop on one line, so each line's samples are its loop's. */
__attribute__((noinline)) unsigned spin(unsigned x, double seconds)
{
	double end = now() + seconds;
	do {
		for (int i = 0; i < 100; i++) {
			for (int r = 0; r < ROUNDS; r++) x = (x * 2654435761u) ^ (x >> 13);	/* one share */
			for (int r = 0; r < 2 * ROUNDS; r++) x = (x * 2246822519u) ^ (x >> 11);	/* two */
		}
	} while (now() < end);
	return x;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1;
	sink = spin(1, seconds);
	return 0;
}
