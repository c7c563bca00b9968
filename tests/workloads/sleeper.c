/* sleeper — blocks most of the time, for the offcpu tests.  Usage: sleeper SECONDS [wait]
 * (wait: start only on SIGUSR1, as in hotcold).
 * The main thread sleeps in wait_here() (10 ms naps); a second thread blocks
 * reading a pipe in read_pipe() that the main thread writes to every 10th nap.
 * WORKLOAD_CFLAGS: -O1 -g -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls -pthread
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

static int fds[2];

__attribute__((noinline)) void wait_here(void)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	nanosleep(&ts, NULL);
}

__attribute__((noinline)) int read_pipe(void)
{
	char c;
	return (int)read(fds[0], &c, 1);
}

static void *reader(void *arg)
{
	while (read_pipe() == 1)
		;
	return arg;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	struct timespec t0, t;
	pthread_t th;
	long n = 0;

	if (argc > 2 && strcmp(argv[2], "wait") == 0)
		wait_usr1();
	if (pipe(fds) < 0 || pthread_create(&th, NULL, reader, NULL) != 0)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		wait_here();
		if (++n % 10 == 0 && write(fds[1], "x", 1) != 1)
			return 1;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	close(fds[1]);
	pthread_join(th, NULL);
	return 0;
}
