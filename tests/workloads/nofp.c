/* nofp — a call chain main -> chain_a -> chain_b -> chain_c built WITHOUT
 * frame pointers; chain_c burns CPU.  Frame-pointer unwinding (BPF's
 * bpf_get_stackid) cannot walk past chain_c: rbp holds data here, so the
 * callers are lost or wrong; DWARF unwinding from .eh_frame (--dwarf) recovers
 * main;chain_a;chain_b;chain_c.
 * Usage: nofp SECONDS [block|malloc]
 * block: chain_c burns 5 ms of CPU, then sleeps 15 ms in nanosleep, over and
 * over: 75% of the time off the CPU, blocked in chain_c (marple-offcpu --dwarf).
 * malloc: chain_c leaks 64 bytes a millisecond, from code with no frame
 * pointer (memleak and mallocstacks --unwind fp).
 * WORKLOAD_CFLAGS: -O2 -fomit-frame-pointer -fno-optimize-sibling-calls
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;
static int block, leak;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* uses many registers (rbp included) so nothing points at a frame chain */
__attribute__((noinline)) unsigned long chain_c(unsigned long n)
{
	unsigned long a = 1, b = 2, c = 3, d = 4, e = 5, f = 6, g = 7;
	double t0 = now();
	if (leak) {
		struct timespec nap = { 0, 1000000 };
		sink += (unsigned long)malloc(64);
		nanosleep(&nap, NULL);
		return sink;
	}
	for (unsigned long i = 0; i < n; i++) {
		a += b ^ i; b += c * 3; c ^= d + i; d += e >> 1; e ^= f + a; f += g ^ b; g += a >> 2;
		sink = a + b + c + d + e + f + g;
		if (block && (i & 1023) == 0 && now() - t0 >= 0.005)
			break;
	}
	if (block) {
		struct timespec nap = { 0, 15000000 };
		nanosleep(&nap, NULL);
	}
	return sink;
}
__attribute__((noinline)) unsigned long chain_b(unsigned long n) { return chain_c(n) + 1; }
__attribute__((noinline)) unsigned long chain_a(unsigned long n) { return chain_b(n) + 2; }

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3, t0 = now();
	unsigned long r = 0;
	block = argc > 2 && strcmp(argv[2], "block") == 0;
	leak = argc > 2 && strcmp(argv[2], "malloc") == 0;
	while (now() - t0 < secs)
		r += chain_a(block ? ~0ul : 2000000);
	return (int)(r & 1) * 0;
}
