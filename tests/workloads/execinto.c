/* execinto — image Y of the exec tests (execfrom execs it): burns CPU (or
 * sleeps) in into_hot(), linked at the address of execfrom's from_hot().
 * Usage: execinto burn|sleep|leak SECONDS (burn: SECONDS of CPU time)
 * leak: leaks 100 x 5000 bytes (500,000) in into_leak(), at the address of
 * execfrom's from_leak(), first, then naps like sleep.
 * WORKLOAD_CFLAGS: -O1 -g -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls -no-pie -Wl,--section-start=hotcode=0x10000000
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LEAK_BLOCKS 300

static volatile unsigned long sink;
static void *volatile keep[LEAK_BLOCKS];

__attribute__((noinline, section("hotcode"))) void into_hot(int sleep_mode)
{
	if (sleep_mode) {
		struct timespec ts = { 0, 5 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		return;
	}
	for (unsigned long i = 0; i < 1000000; i++)
		sink += i ^ (sink >> 3);
}

/* leak mode: n blocks of size bytes never freed (the same code in both
 * images, at the same address) */
__attribute__((noinline, section("hotcode"))) void into_leak(int n, size_t size)
{
	for (int i = 0; i < n && i < LEAK_BLOCKS; i++) {
		keep[i] = malloc(size);
		memset(keep[i], 1, 16);
	}
}

__attribute__((noinline)) void into_loop(int sleep_mode, double secs)
{
	/* burning: SECONDS of CPU time, so a loaded machine samples as many */
	clockid_t clock = sleep_mode ? CLOCK_MONOTONIC : CLOCK_PROCESS_CPUTIME_ID;
	struct timespec t0, t;
	clock_gettime(clock, &t0);
	do {
		into_hot(sleep_mode);
		clock_gettime(clock, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
}

int main(int argc, char **argv)
{
	if (argc < 3 || (strcmp(argv[1], "burn") && strcmp(argv[1], "sleep") && strcmp(argv[1], "leak"))) {
		fprintf(stderr, "usage: execinto burn|sleep|leak SECONDS\n");
		return 2;
	}
	if (argv[1][0] == 'l')
		into_leak(100, 5000);
	into_loop(argv[1][0] != 'b', atof(argv[2]));
	return 0;
}
