/* shortlived — a process that is gone before a profiler reads its maps
 * again: main -> chain_a -> chain_b -> chain_c burns CPU for SECONDS (wall
 * clock) and it exits, built without frame pointers.  Run over and over, it
 * is a build's compiler that fails, a configure test, `sh -c`.
 * Usage: shortlived SECONDS [late LIBSECONDS]
 * late: first sleeps 0.3 s, then maps libz (dlopen) and burns LIBSECONDS in
 * its adler32 (called from lib_burn), then the chain: a library mapped long
 * after the exec, and after a profiler's first look again (50 ms), by a
 * process gone well before its next (1 s).
 * WORKLOAD_CFLAGS: -O2 -fomit-frame-pointer -fno-optimize-sibling-calls
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

__attribute__((noinline)) unsigned long chain_c(double until)
{
	unsigned long a = 1, b = 2, c = 3, d = 4;
	while (now() < until)
		for (unsigned long i = 0; i < 20000; i++) {
			a += b ^ i; b += c * 3; c ^= d + i; d += a >> 1;
			sink = a + b + c + d;
		}
	return sink;
}
__attribute__((noinline)) unsigned long chain_b(double until) { return chain_c(until) + 1; }
__attribute__((noinline)) unsigned long chain_a(double until) { return chain_b(until) + 2; }

typedef unsigned long (*adler_fn)(unsigned long, const unsigned char *, unsigned);

/* adler32 over 64 KiB, again and again, until the time is up */
__attribute__((noinline)) unsigned long lib_burn(adler_fn adler, double until)
{
	static unsigned char buf[65536];
	unsigned long sum = 1;
	while (now() < until)
		sum = adler(sum, buf, sizeof(buf));
	return sum;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.025;
	unsigned long r = 0;

	if (argc > 3 && strcmp(argv[2], "late") == 0) {
		struct timespec nap = { 0, 300 * 1000 * 1000 };
		nanosleep(&nap, NULL);
		void *z = dlopen("libz.so.1", RTLD_NOW);
		adler_fn adler = z ? (adler_fn)dlsym(z, "adler32") : NULL;
		if (!adler) {
			fprintf(stderr, "shortlived: no libz.so.1 with adler32\n");
			return 1;
		}
		r += lib_burn(adler, now() + atof(argv[3]));
	}
	r += chain_a(now() + secs);
	return (int)(r & 1) * 0;
}
