/* debugframe — a call chain main -> df_a -> df_b -> df_c (df_c burns CPU)
 * built without frame pointers and with its call frame information in
 * .debug_frame only (-g -fno-asynchronous-unwind-tables -fno-unwind-tables:
 * gcc writes no .eh_frame entry for this file's functions), so a stack
 * walk gets past df_c only by reading .debug_frame.
 * Usage: debugframe SECONDS
 * WORKLOAD_CFLAGS: -O2 -g -fomit-frame-pointer -fno-asynchronous-unwind-tables -fno-unwind-tables -fno-optimize-sibling-calls
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* uses many registers (rbp included) so nothing points at a frame chain */
__attribute__((noinline)) unsigned long df_c(unsigned long n)
{
	unsigned long a = 1, b = 2, c = 3, d = 4, e = 5, f = 6, g = 7;
	for (unsigned long i = 0; i < n; i++) {
		a += b ^ i; b += c * 3; c ^= d + i; d += e >> 1; e ^= f + a; f += g ^ b; g += a >> 2;
		sink = a + b + c + d + e + f + g;
	}
	return sink;
}
__attribute__((noinline)) unsigned long df_b(unsigned long n) { return df_c(n) + 1; }
__attribute__((noinline)) unsigned long df_a(unsigned long n) { return df_b(n) + 2; }

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3, t0 = now();
	unsigned long r = 0;
	while (now() - t0 < secs)
		r += df_a(2000000);
	return (int)(r & 1) * 0;
}
