/* pingpace — context switches at a set rate: two threads hand a byte back
 * and forth through two pipes (each hand-off a thread blocking: two
 * switches a round trip), RATE/2 round trips a second in batches every
 * millisecond.  Runs SECONDS, then prints on stderr the switches its
 * threads made (voluntary and not, getrusage) and its CPU time:
 *   pingpace: switches 60212 per_s 20070 cpu_us 391224
 *
 * Usage: pingpace [SECONDS [RATE]]   (default 3 s, 20000 switches/s)
 * WORKLOAD_CFLAGS: -O2 -g -pthread -fno-omit-frame-pointer
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int ping[2], pong[2];

static void *echo(void *arg)
{
	char c;

	(void)arg;
	while (read(ping[0], &c, 1) == 1 && c == 'x')
		if (write(pong[1], &c, 1) != 1)
			break;
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3, rate = argc > 2 ? atof(argv[2]) : 20000;
	long batch = (long)(rate / 2 / 1000 + 0.5), ticks = (long)(seconds * 1000);
	struct timespec next;
	struct rusage ru;
	pthread_t t;
	char c = 'x';

	if (seconds <= 0 || batch < 1 || pipe(ping) || pipe(pong) || pthread_create(&t, NULL, echo, NULL)) {
		fprintf(stderr, "usage: pingpace [SECONDS [RATE >= 2000]]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (long i = 0; i < ticks; i++) {
		for (long j = 0; j < batch; j++)
			if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
				return perror("pingpace"), 1;
		next.tv_nsec += 1000000;
		if (next.tv_nsec >= 1000000000) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	c = '.';
	if (write(ping[1], &c, 1) != 1)
		return perror("pingpace"), 1;
	pthread_join(t, NULL);
	getrusage(RUSAGE_SELF, &ru);
	long sw = ru.ru_nvcsw + ru.ru_nivcsw;
	fprintf(stderr, "pingpace: switches %ld per_s %.0f cpu_us %ld\n", sw, sw / seconds,
		(long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
	return 0;
}
