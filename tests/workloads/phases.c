/* phases — burns CPU in phase_one() for its first SECONDS, then in
 * phase_two() for the next SECONDS, so that a profile with the time of every
 * sample (--timed) can be cut in two and each half shows its own function.
 * Usage: phases SECONDS [wait]; with "wait" it starts on SIGUSR1.  Each phase
 * checks the clock only every few milliseconds of work, so nearly every
 * sample lands in the phase function itself.
 * WORKLOAD_CFLAGS: -O1 -g -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "workload.h"

static volatile unsigned long sink;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

__attribute__((noinline)) void phase_one(double until)
{
	do {
		for (unsigned long i = 0; i < 2000000; i++)
			sink += i ^ (sink >> 3);
	} while (now() < until);
}

__attribute__((noinline)) void phase_two(double until)
{
	do {
		for (unsigned long i = 0; i < 2000000; i++)
			sink += i ^ (sink >> 5);
	} while (now() < until);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2;
	if (argc > 2 && strcmp(argv[2], "wait") == 0)
		wait_usr1();
	double t0 = now();
	phase_one(t0 + secs);
	phase_two(t0 + 2 * secs);
	return 0;
}
