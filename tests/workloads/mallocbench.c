/* mallocbench.c — a malloc-heavy benchmark: N rounds of malloc + free (sizes
 * 16..1024 bytes), timed inside; prints "NS_PER_ROUND" (one malloc and one
 * free) on stdout.
 *
 * Usage: mallocbench [N [SLEEP_BEFORE_MS]]
 * WORKLOAD_CFLAGS: -O2 -g -fno-omit-frame-pointer
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void *volatile sink;

__attribute__((noinline)) void churn(long n)
{
	for (long i = 0; i < n; i++) {
		void *p = malloc(16 + (size_t)(i & 1023));
		sink = p;
		free(p);
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	long ms = argc > 2 ? atol(argv[2]) : 0;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L }, a, b;

	if (ms)
		nanosleep(&ts, NULL);
	clock_gettime(CLOCK_MONOTONIC, &a);
	churn(n);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (double)n);
	return 0;
}
