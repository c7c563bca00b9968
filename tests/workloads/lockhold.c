/* lockhold — a mutex held for known times by a known function, under
 * contention: thread "lh_holder" takes it in hold_lock, keeps it 2 ms
 * (asleep), lets it go and naps 1 ms; thread "lh_waiter" takes it in
 * want_lock every 0.3 ms, timing each pthread_mutex_lock, and lets it go at
 * once.  So the waiter waits about two thirds of the time, nearly all of it
 * for hold_lock to let go.  Runs SECONDS, then prints the mutex's address
 * and the waiter's own measure of its waits (the fixture's answer):
 *   lockhold: mutex 0x5581f4a0c040 waited_us 1310021 waits 655
 * With "mmap", two more threads ("lh_mapper") map and unmap memory in
 * map_churn, so the kernel's mmap_lock is contended too.  With "fork" the
 * holder is a process of its own (a child), the mutex process-shared.
 * With "futex2" the mutex is a lock of futex2's calls (Linux 6.7:
 * futex_wait, futex_wake) taken in f2_lock, let go in f2_unlock, not
 * glibc's (which calls futex(2)); its word's address is printed.
 *
 * Usage: lockhold [SECONDS [mmap|fork|futex2]]   (default 2)
 * WORKLOAD_CFLAGS: -O2 -g -pthread -fno-omit-frame-pointer -fno-optimize-sibling-calls
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* in memory shared with a forked holder */
static struct shared {
	pthread_mutex_t mutex;
	int word;		/* futex2's lock: 0 free, 1 taken, 2 taken and waited for */
	volatile int done;
} *sh;
static double seconds = 2;
static int futex2;

/* futex2's calls on x86-64 (Debian 12's headers predate them) */
#define SYS_futex_wake_ 454
#define SYS_futex_wait_ 455
#define FUTEX2_U32_PRIVATE (0x02 | 128)
#define FUTEX2_MATCH_ANY 0xffffffffUL

static void futex2_failed(void)
{
	perror("lockhold: futex2");
	exit(1);
}

/* A three-state lock on sh->word: waiters sleep in futex_wait. */
__attribute__((noinline)) static void f2_lock(void)
{
	int c = __sync_val_compare_and_swap(&sh->word, 0, 1);

	if (c != 0 && c != 2)
		c = __sync_lock_test_and_set(&sh->word, 2);
	while (c != 0) {
		if (syscall(SYS_futex_wait_, &sh->word, 2UL, FUTEX2_MATCH_ANY, FUTEX2_U32_PRIVATE, NULL,
			    CLOCK_MONOTONIC) < 0 && errno != EAGAIN && errno != EINTR)
			futex2_failed();
		c = __sync_lock_test_and_set(&sh->word, 2);
	}
}

__attribute__((noinline)) static void f2_unlock(void)
{
	if (__sync_fetch_and_sub(&sh->word, 1) == 1)
		return;
	__atomic_store_n(&sh->word, 0, __ATOMIC_RELEASE);
	if (syscall(SYS_futex_wake_, &sh->word, FUTEX2_MATCH_ANY, 1, FUTEX2_U32_PRIVATE) < 0)
		futex2_failed();
}

__attribute__((noinline)) static void take(void)
{
	if (futex2)
		f2_lock();
	else
		pthread_mutex_lock(&sh->mutex);
}

__attribute__((noinline)) static void give(void)
{
	if (futex2)
		f2_unlock();
	else
		pthread_mutex_unlock(&sh->mutex);
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void nap(long ns)
{
	struct timespec ts = { 0, ns };
	nanosleep(&ts, NULL);
}

__attribute__((noinline)) static void hold_lock(void)
{
	take();
	nap(2000000);
	give();
}

static void *holder(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "lh_holder", 0, 0, 0);
	while (!sh->done) {
		hold_lock();
		nap(1000000);
	}
	return NULL;
}

/* One turn of the waiter: how long it waited for the mutex, in ns. */
__attribute__((noinline)) static double want_lock(void)
{
	double t0 = now(), t;

	take();
	t = now();
	give();
	return t - t0;
}

static void *waiter(void *arg)
{
	double waited = 0, w;
	long waits = 0;

	(void)arg;
	prctl(PR_SET_NAME, "lh_waiter", 0, 0, 0);
	while (!sh->done) {
		w = want_lock();
		waited += w;
		waits += w > 20e-6;	/* (an uncontended lock takes well under 1 us) */
		nap(300000);
	}
	printf("lockhold: mutex %p waited_us %.0f waits %ld\n", futex2 ? (void *)&sh->word : (void *)&sh->mutex,
	       waited * 1e6, waits);
	return NULL;
}

/* mmap: page faults and munmap fight over the process's mmap_lock */
__attribute__((noinline)) static void map_churn(void)
{
	size_t len = 4 << 20;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	for (size_t i = 0; i < len; i += 4096)
		p[i] = 1;
	munmap(p, len);
}

static void *mapper(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "lh_mapper", 0, 0, 0);
	while (!sh->done)
		map_churn();
	return NULL;
}

/* The mutex, process-shared, in a shared mapping. */
static void share(void)
{
	pthread_mutexattr_t a;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		perror("lockhold: mmap"), exit(1);
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&sh->mutex, &a);
}

int main(int argc, char **argv)
{
	pthread_t t[4];
	const char *mode = argc > 2 ? argv[2] : "";
	int n = 0, forked = strcmp(mode, "fork") == 0;
	pid_t child = 0;

	seconds = argc > 1 ? atof(argv[1]) : 2;
	if (seconds <= 0) {
		fprintf(stderr, "usage: lockhold [SECONDS [mmap|fork|futex2]]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	futex2 = strcmp(mode, "futex2") == 0;
	share();
	if (forked && (child = fork()) == 0) {
		holder(NULL);
		_exit(0);
	}
	if (child < 0 || (!forked && pthread_create(&t[n++], NULL, holder, NULL) != 0) ||
	    pthread_create(&t[n++], NULL, waiter, NULL) != 0)
		return perror("lockhold: fork or pthread_create"), 1;
	while (strcmp(mode, "mmap") == 0 && n < 4)
		if (pthread_create(&t[n++], NULL, mapper, NULL) != 0)
			return perror("lockhold: pthread_create"), 1;
	for (double end = now() + seconds; now() < end;)
		nap(50000000);
	sh->done = 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	if (child > 0)
		waitpid(child, NULL, 0);
	return 0;
}
