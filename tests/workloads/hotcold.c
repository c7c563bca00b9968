/* hotcold — burns CPU in two functions in a 3:1 ratio, for the callstack tests.
 * Usage: hotcold SECONDS [wait].  hot_loop() does 3 units of work for each
 * unit of cold_loop(); main() calls both through run_round().  Both are leaves, so
 * with frame-pointer stacks run_round() is not seen (gcc never sets up a frame
 * in a leaf function: the leaf's caller is lost); --dwarf shows it.  With
 * "wait" it starts only on SIGUSR1 (for tests that need the process running
 * before a capture begins and its work inside the capture).
 * WORKLOAD_CFLAGS: -O1 -g -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "workload.h"

static volatile unsigned long sink;

__attribute__((noinline)) void hot_loop(void)
{
	for (unsigned long i = 0; i < 3000000; i++)
		sink += i ^ (sink >> 3);
}

__attribute__((noinline)) void cold_loop(void)
{
	for (unsigned long i = 0; i < 1000000; i++)
		sink += i ^ (sink >> 3);
}

__attribute__((noinline)) void run_round(void)
{
	hot_loop();
	cold_loop();
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	struct timespec t0, t;
	if (argc > 2 && strcmp(argv[2], "wait") == 0)
		wait_usr1();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		run_round();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}
