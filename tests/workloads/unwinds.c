/* unwinds — stacks that are hard to unwind, built WITHOUT frame pointers
 * (so only the .eh_frame tables can walk them); each mode burns CPU in a
 * known chain for SECONDS:
 *   deep     main;deep_start;recurse x 300;deep_leaf: deeper than the 256
 *            frames a stack holds (clang's parser recurses this deep)
 *   signal   main;sig_outer, interrupted every 10 ms by SIGALRM whose handler
 *            burns 5 ms: ...;sig_outer;[the signal trampoline];on_alarm;sig_burn
 *   dlopen   main;dl_phase waits for SIGUSR1, then dlopens libz (not linked
 *            in) and calls crc32 over and over: ...;main;dl_phase;crc32...
 *   threads  two threads: start_thread;...;thread_main;th_a;th_b;th_burn
 * Usage: unwinds MODE SECONDS
 * WORKLOAD_CFLAGS: -O2 -fomit-frame-pointer -fno-optimize-sibling-calls -fno-inline -pthread
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "workload.h"

static volatile unsigned long sink;
static double secs;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* rbp is used for data in every burner: no frame chain to follow */
static void burn(unsigned long n)
{
	unsigned long a = 1, b = 2, c = 3, d = 4, e = 5, f = 6;
	for (unsigned long i = 0; i < n; i++) {
		a += b ^ i; b += c * 3; c ^= d + i; d += e >> 1; e ^= f + a; f += a >> 2;
		sink = a + b + c + d + e + f;
	}
}

__attribute__((noinline)) void deep_leaf(void) { burn(200000); }
__attribute__((noinline)) int recurse(int n)
{
	if (n == 0)
		deep_leaf();
	else
		recurse(n - 1);
	return n + (int)(sink & 1);
}
__attribute__((noinline)) void deep_start(void) { recurse(300); }

__attribute__((noinline)) void sig_burn(void) { burn(400000); }
__attribute__((noinline)) void on_alarm(int sig) { sig_burn(); }
__attribute__((noinline)) void sig_outer(void) { burn(20000); }

__attribute__((noinline)) void dl_phase(void)
{
	wait_usr1();
	double t0 = now();
	void *z = dlopen("libz.so.1", RTLD_NOW);
	unsigned long (*crc)(unsigned long, const unsigned char *, unsigned) = z ? dlsym(z, "crc32") : NULL;
	if (!crc) {
		fprintf(stderr, "unwinds: cannot load libz.so.1's crc32\n");
		exit(1);
	}
	static unsigned char buf[65536];
	memset(buf, 7, sizeof(buf));
	while (now() - t0 < secs)
		sink += crc(0, buf, sizeof(buf));
}

__attribute__((noinline)) void th_burn(void) { burn(200000); }
__attribute__((noinline)) void th_b(void) { th_burn(); }
__attribute__((noinline)) void th_a(void) { th_b(); }
__attribute__((noinline)) void *thread_main(void *arg)
{
	double t0 = now();
	while (now() - t0 < secs)
		th_a();
	return arg;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	double t0 = now();
	secs = argc > 2 ? atof(argv[2]) : 3;

	if (strcmp(mode, "deep") == 0) {
		while (now() - t0 < secs)
			deep_start();
	} else if (strcmp(mode, "signal") == 0) {
		struct itimerval it = { { 0, 10000 }, { 0, 10000 } };
		signal(SIGALRM, on_alarm);
		setitimer(ITIMER_REAL, &it, NULL);
		while (now() - t0 < secs)
			sig_outer();
	} else if (strcmp(mode, "dlopen") == 0) {
		dl_phase();
	} else if (strcmp(mode, "threads") == 0) {
		pthread_t t[2];
		for (int i = 0; i < 2; i++)
			pthread_create(&t[i], NULL, thread_main, NULL);
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
	} else {
		fprintf(stderr, "usage: unwinds deep|signal|dlopen|threads SECONDS\n");
		return 2;
	}
	return 0;
}
