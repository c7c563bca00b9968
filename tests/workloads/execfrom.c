/* execfrom — image X of the exec tests: burns CPU (or sleeps) in from_hot()
 * for a while, then execs another program in the same process (same pid).
 * Usage: execfrom burn|sleep|leak SECONDS PROGRAM [ARG...] (burn: SECONDS of CPU time)
 * from_hot() is linked at 0x10000000 (section hotcode), where execinto puts
 * into_hot(): samples of the two images have the same addresses, so a
 * profiler that names the new image's stacks from the old image's files
 * says from_hot where into_hot ran.
 * leak: leaks 300 x 4000 bytes (1,200,000) in from_leak() first, then naps
 * like sleep; execinto's into_leak() is at the same address as from_leak().
 * WORKLOAD_CFLAGS: -O1 -g -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls -no-pie -Wl,--section-start=hotcode=0x10000000
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LEAK_BLOCKS 300

static volatile unsigned long sink;
static void *volatile keep[LEAK_BLOCKS];

__attribute__((noinline, section("hotcode"))) void from_hot(int sleep_mode)
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
__attribute__((noinline, section("hotcode"))) void from_leak(int n, size_t size)
{
	for (int i = 0; i < n && i < LEAK_BLOCKS; i++) {
		keep[i] = malloc(size);
		memset(keep[i], 1, 16);
	}
}

__attribute__((noinline)) void from_loop(int sleep_mode, double secs)
{
	/* burning: SECONDS of CPU time, so a loaded machine samples as many */
	clockid_t clock = sleep_mode ? CLOCK_MONOTONIC : CLOCK_PROCESS_CPUTIME_ID;
	struct timespec t0, t;
	clock_gettime(clock, &t0);
	do {
		from_hot(sleep_mode);
		clock_gettime(clock, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
}

int main(int argc, char **argv)
{
	if (argc < 4 || (strcmp(argv[1], "burn") && strcmp(argv[1], "sleep") && strcmp(argv[1], "leak"))) {
		fprintf(stderr, "usage: execfrom burn|sleep|leak SECONDS PROGRAM [ARG...]\n");
		return 2;
	}
	if (argv[1][0] == 'l')
		from_leak(300, 4000);
	from_loop(argv[1][0] != 'b', atof(argv[2]));
	execv(argv[3], argv + 3);
	perror(argv[3]);
	return 1;
}
