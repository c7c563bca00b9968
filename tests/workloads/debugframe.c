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

/* the seconds of a monotonic clock, as a double */
static double mono_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_nsec * 1e-9 + (double)ts.tv_sec;
}

/* a xorshift generator over many live registers (rbp among them, with no
 * frame pointer): nothing on the stack links the frames but the CFI */
__attribute__((noinline)) unsigned long df_c(unsigned long n)
{
	unsigned long x = 88172645463325252ul, s1 = 0, s2 = 1, s3 = 2, s4 = 3, s5 = 5;
	while (n--) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		s1 += x; s2 ^= s1; s3 += s2 >> 3; s4 ^= s3 + x; s5 += s4 ^ s1;
	}
	sink = x + s1 + s2 + s3 + s4 + s5;
	return sink;
}
/* the chain the test looks for: main;df_a;df_b;df_c */
__attribute__((noinline)) unsigned long df_b(unsigned long n)
{
	return df_c(n) ^ n;
}

__attribute__((noinline)) unsigned long df_a(unsigned long n)
{
	return df_b(n) + n / 2;
}

int main(int argc, char **argv)
{
	double end = mono_seconds() + (argc > 1 ? atof(argv[1]) : 3);
	unsigned long rounds = 0;

	for (;;) {
		if (mono_seconds() >= end)
			break;
		rounds += df_a(2000000) & 1;
	}
	return (int)(rounds >> 63);
}
