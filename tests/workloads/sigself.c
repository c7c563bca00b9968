/* sigself — signals itself N times (SIGUSR1, handled), then exits: under a
 * tracer (marple-callstack -c) each one stops it until the tracer lets it go
 * on, so N signals show how long the tracer leaves it stopped.
 * Usage: sigself [N] (default 1000) */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
	(void)sig;
	handled++;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;

	signal(SIGUSR1, on_usr1);
	for (long i = 0; i < n; i++)
		kill(getpid(), SIGUSR1);
	printf("sigself: %ld signals handled\n", (long)handled);
	return handled == n ? 0 : 1;
}
