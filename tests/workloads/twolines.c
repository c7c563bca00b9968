/* twolines — one function, spin, whose time is on two lines of its own: a
 * loop on one line runs ROUNDS rounds, the same loop on the next line twice
 * as many, so a profile by line puts spin's samples about 1:2 on the two
 * (spin is called by main; nothing is inlined into it).  It stops when its
 * timer rings.
 * Usage: twolines SECONDS
 * WORKLOAD_CFLAGS: -O2 -g -fno-omit-frame-pointer
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/time.h>

#define ROUNDS 4096

static volatile unsigned sink;
static volatile sig_atomic_t rang;

static void ring(int sig)
{
	(void)sig;
	rang = 1;
}

/* Each loop on one line, so each line's samples are its loop's. */
__attribute__((noinline)) unsigned spin(unsigned x)
{
	while (!rang) {
		for (int r = 0; r < ROUNDS; r++) x = (x * 2654435761u) ^ (x >> 13);	/* one share */
		for (int r = 0; r < 2 * ROUNDS; r++) x = (x * 2246822519u) ^ (x >> 11);	/* two */
	}
	return x;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1;
	struct itimerval t = { .it_value = { (time_t)seconds, (suseconds_t)((seconds - (time_t)seconds) * 1e6) } };

	signal(SIGALRM, ring);
	if (t.it_value.tv_sec == 0 && t.it_value.tv_usec == 0)
		t.it_value.tv_usec = 1;
	setitimer(ITIMER_REAL, &t, NULL);
	sink = spin(1);
	return 0;
}
