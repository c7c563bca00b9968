/* workload.h — what several test workloads share (included by their .c;
 * each workload is still built from its one .c file). */
#ifndef MARPLE_WORKLOAD_H
#define MARPLE_WORKLOAD_H

#include <signal.h>

/* Block until SIGUSR1 arrives: for tests that need the process running
 * before a capture begins and its work inside the capture. */
static inline void wait_usr1(void)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sigwait(&set, &sig);
}

#endif
