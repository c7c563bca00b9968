/* demo — the bundled workload of `marple demo`: a little of everything marple
 * draws, in functions with telling names, for SECONDS (default 10).
 *
 *   cpu:    demo_cpu -> crunch_primes / crunch_hash   (callstack, flame graph)
 *   sleep:  demo_sleepy -> nap                         (offcpu, cpusched)
 *   pipe:   demo_ping <-> demo_pong over a pipe        (cpusched switches)
 *   memory: demo_grow touches 4 MB more every 0.25 s  (memtime, mallocstacks, memleak)
 *   disk:   demo_disk writes and fsyncs a file         (disklat, diskblockrq)
 *
 *   $ build/workloads/demo 5
 *
 * WORKLOAD_CFLAGS: -O1 -g -fno-omit-frame-pointer -fno-inline -pthread
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile int stop;
static volatile uint64_t sink;

static void nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static uint64_t crunch_primes(uint64_t limit)
{
	uint64_t count = 0;
	for (uint64_t n = 2; n < limit; n++) {
		int prime = 1;
		for (uint64_t d = 2; d * d <= n; d++)
			if (n % d == 0) {
				prime = 0;
				break;
			}
		count += (uint64_t)prime;
	}
	return count;
}

static uint64_t crunch_hash(int rounds)
{
	uint64_t h = 1469598103934665603ull;
	for (int i = 0; i < rounds; i++)
		h = (h ^ (uint64_t)i) * 1099511628211ull;
	return h;
}

static void *demo_cpu(void *arg)
{
	(void)arg;
	while (!stop) {
		sink += crunch_primes(20000);	/* about two thirds of the time */
		sink += crunch_hash(400000);
	}
	return NULL;
}

static void *demo_sleepy(void *arg)
{
	(void)arg;
	while (!stop)
		nap(20);
	return NULL;
}

static int ping_pipe[2], pong_pipe[2];

static void *demo_pong(void *arg)
{
	char c;
	(void)arg;
	while (read(ping_pipe[0], &c, 1) == 1 && c)
		if (write(pong_pipe[1], &c, 1) != 1)
			break;
	return NULL;
}

static void demo_ping(void)
{
	char c = 1;
	for (int i = 0; i < 200 && !stop; i++)
		if (write(ping_pipe[1], &c, 1) != 1 || read(pong_pipe[0], &c, 1) != 1)
			break;
}

static void *demo_pinger(void *arg)
{
	(void)arg;
	while (!stop) {
		demo_ping();
		nap(10);
	}
	return NULL;
}

static void *demo_grow(void *arg)
{
	(void)arg;
	for (int i = 0; i < 64 && !stop; i++) {
		char *p = malloc(4 << 20);	/* kept: memory grows over time */
		if (p)
			memset(p, i, 4 << 20);
		nap(250);
	}
	return NULL;
}

static void *demo_disk(void *arg)
{
	char path[] = "/var/tmp/marple-demo.XXXXXX";
	static char block[64 << 10];
	int fd = mkstemp(path);
	(void)arg;
	if (fd < 0)
		return NULL;
	unlink(path);
	memset(block, 'm', sizeof(block));
	while (!stop) {
		for (int i = 0; i < 16; i++)
			if (pwrite(fd, block, sizeof(block), (off_t)i * (off_t)sizeof(block)) < 0)
				break;
		fdatasync(fd);
		nap(50);
	}
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	pthread_t t[6];
	void *(*fn[6])(void *) = { demo_cpu, demo_sleepy, demo_pong, demo_pinger, demo_grow, demo_disk };
	char z = 0;

	if (secs <= 0 || secs > 86400) {
		fprintf(stderr, "Usage: demo [SECONDS]\n");
		return 2;
	}
	if (pipe(ping_pipe) || pipe(pong_pipe))
		return 1;
	for (int i = 0; i < 6; i++)
		pthread_create(&t[i], NULL, fn[i], NULL);
	nap((long)(secs * 1000));
	stop = 1;
	if (write(ping_pipe[1], &z, 1) != 1)
		return 1;
	pthread_join(t[2], NULL);
	close(pong_pipe[1]);	/* a pinger still waiting for its pong sees EOF */
	for (int i = 0; i < 6; i++)
		if (i != 2)
			pthread_join(t[i], NULL);
	return 0;
}
