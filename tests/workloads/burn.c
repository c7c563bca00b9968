/* burn — a fixed amount of CPU work (for the profiler benchmarks): N rounds
 * through a few levels of calls, so every run does the same work and its
 * wall time shows how much a profiler slows it down.  Usage: burn ROUNDS.
 * WORKLOAD_CFLAGS: -O2 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls
 */
#include <stdlib.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void leaf(unsigned long n)
{
	unsigned long a = sink;
	for (unsigned long i = 0; i < n; i++)
		a = a * 6364136223846793005ull + i;
	sink = a;
}
__attribute__((noinline)) static void mid(int k)
{
	leaf(20000 + (unsigned long)k * 1000);
}
__attribute__((noinline)) static void top(int k)
{
	for (int j = 0; j < 8; j++)
		mid(k + j);
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 1000;
	for (long r = 0; r < rounds; r++)
		top((int)(r % 16));
	return 0;
}
