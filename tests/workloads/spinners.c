/* spinners — N CPU-bound threads named "spin0".."spinN-1", all pinned to one
 * CPU, so each spends most of its time runnable but waiting for it.  Each
 * spins in spin_here for SECONDS and prints what the kernel counted for it
 * meanwhile, from /proc/thread-self/schedstat (run time, run-queue wait):
 *   spin2 tid=4243 runq_ns=1493020211 run_ns=502118790 wall_ns=2000004113
 *
 * Usage: spinners [THREADS [SECONDS [CPU]]]   (defaults: 4, 2, 0)
 * WORKLOAD_CFLAGS: -O2 -g -pthread -fno-omit-frame-pointer -fno-optimize-sibling-calls
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static double seconds = 2;
static int cpu;
static volatile unsigned long sink;

static unsigned long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/* run time and run-queue wait of the calling thread, in ns */
static void schedstat(unsigned long long *run, unsigned long long *wait)
{
	FILE *f = fopen("/proc/thread-self/schedstat", "r");
	if (!f || fscanf(f, "%llu %llu", run, wait) != 2) {
		perror("spinners: /proc/thread-self/schedstat");
		exit(1);
	}
	fclose(f);
}

__attribute__((noinline)) static void spin_here(unsigned long long until)
{
	while (now_ns() < until)
		for (int i = 0; i < 10000; i++)
			sink = sink * 6364136223846793005ull + 1;
}

static void *spinner(void *arg)
{
	char name[16];
	unsigned long long run0, wait0, run1, wait1, t0;

	snprintf(name, sizeof(name), "spin%ld", (long)arg);
	prctl(PR_SET_NAME, name, 0, 0, 0);
	schedstat(&run0, &wait0);
	t0 = now_ns();
	spin_here(t0 + (unsigned long long)(seconds * 1e9));
	schedstat(&run1, &wait1);
	printf("%s tid=%d runq_ns=%llu run_ns=%llu wall_ns=%llu\n", name, gettid(), wait1 - wait0, run1 - run0,
	       now_ns() - t0);
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 4;
	pthread_t th[64];
	cpu_set_t set;

	seconds = argc > 2 ? atof(argv[2]) : 2;
	cpu = argc > 3 ? atoi(argv[3]) : 0;
	if (n < 1 || n > 64 || seconds <= 0) {
		fprintf(stderr, "usage: spinners [THREADS (1-64) [SECONDS [CPU]]]\n");
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0) {	/* the threads inherit it */
		perror("spinners: sched_setaffinity");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (long i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, spinner, (void *)i) != 0) {
			perror("spinners: pthread_create");
			return 1;
		}
	for (long i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}
