/* inlinechain — a hot loop in mix, inlined into stage2, inlined into stage1,
 * inlined into pipeline (called by main): built -O2 -g, the binary has one
 * out-of-line function, pipeline, and DWARF saying which inlined function
 * each address is in.  Nearly all the time is in mix's rounds, so a
 * profile with inline frames reads main;pipeline;stage1;stage2;mix.
 * Usage: inlinechain SECONDS
 * WORKLOAD_CFLAGS: -O2 -g -fno-omit-frame-pointer
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned sink;

static inline __attribute__((always_inline)) unsigned mix(unsigned x)
{
	for (int round = 0; round < 512; round++)
		x = (x * 2654435761u) ^ (x >> 13);
	return x;
}

static inline __attribute__((always_inline)) unsigned stage2(unsigned x)
{
	return mix(x + 1) + 3;
}

static inline __attribute__((always_inline)) unsigned stage1(unsigned x)
{
	return stage2(x ^ 7) * 5;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

__attribute__((noinline)) unsigned pipeline(unsigned x, double seconds)
{
	double end = now() + seconds;
	do {
		for (int i = 0; i < 1000; i++)
			x = stage1(x);
	} while (now() < end);
	return x;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1;
	sink = pipeline(1, seconds);
	return 0;
}
