/* pingpong — two threads named "mp_ping" and "mp_pong", both pinned to one CPU,
 * hand a byte back and forth through two pipes N times, so a scheduler trace
 * shows them switching to each other alternately.
 *
 * Usage: pingpong [ROUNDS [CPU]]   (defaults: 20000, 0)
 * WORKLOAD_CFLAGS: -O2 -g -pthread
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

static int ab[2], ba[2];
static long rounds = 20000;
static int cpu;

static void pin(const char *name)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0) {
		perror("sched_setaffinity");
		exit(1);
	}
	prctl(PR_SET_NAME, name, 0, 0, 0);
}

static void *ping(void *arg)
{
	char c = 'x';
	(void)arg;
	pin("mp_ping");
	for (long i = 0; i < rounds; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			exit(1);
	return NULL;
}

static void *pong(void *arg)
{
	char c;
	(void)arg;
	pin("mp_pong");
	for (long i = 0; i < rounds; i++)
		if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
			exit(1);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	if (argc > 1)
		rounds = strtol(argv[1], NULL, 10);
	if (argc > 2)
		cpu = (int)strtol(argv[2], NULL, 10);
	if (pipe(ab) || pipe(ba))
		return 1;
	pthread_create(&b, NULL, pong, NULL);
	pthread_create(&a, NULL, ping, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("%ld rounds\n", rounds);
	return 0;
}
