/* pipewake — who woke whom, with known stacks: thread "pw_reader" blocks in
 * reader_waits reading a pipe; thread "pw_writer" naps 1 ms in writer_naps
 * (woken by a timer interrupt), then writes a byte in writer_wakes, which
 * wakes the reader.  So nearly all of the reader's blocked time ends with a
 * waker stack holding writer_wakes, and the writer's naps end with an
 * interrupt.  Runs SECONDS, then prints how many bytes went through.  With
 * "fork" the writer is a process of its own (a child), not a thread.
 *
 * Usage: pipewake [SECONDS [fork]]   (default 2)
 * WORKLOAD_CFLAGS: -O2 -g -pthread -fno-omit-frame-pointer -fno-optimize-sibling-calls
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static int fds[2];
static double seconds = 2;

__attribute__((noinline)) static long reader_waits(void)
{
	char c;
	long n = 0;

	while (read(fds[0], &c, 1) == 1 && c == 'x')
		n++;
	return n;
}

static void *reader(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "pw_reader", 0, 0, 0);
	printf("pipewake: %ld bytes read\n", reader_waits());
	return NULL;
}

__attribute__((noinline)) static void writer_naps(void)
{
	struct timespec ts = { 0, 1000000 };
	nanosleep(&ts, NULL);
}

__attribute__((noinline)) static void writer_wakes(char c)
{
	if (write(fds[1], &c, 1) != 1) {
		perror("pipewake: write");
		exit(1);
	}
}

static void *writer(void *arg)
{
	struct timespec t0, t;

	(void)arg;
	prctl(PR_SET_NAME, "pw_writer", 0, 0, 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		writer_naps();
		writer_wakes('x');
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
	writer_wakes('.');	/* the end */
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t r, w;

	seconds = argc > 1 ? atof(argv[1]) : 2;
	if (seconds <= 0 || pipe(fds) != 0) {
		fprintf(stderr, "usage: pipewake [SECONDS]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 2 && strcmp(argv[2], "fork") == 0) {
		pid_t child = fork();
		if (child < 0) {
			perror("pipewake: fork");
			return 1;
		}
		if (child == 0) {
			writer(NULL);
			_exit(0);
		}
		reader(NULL);
		waitpid(child, NULL, 0);
		return 0;
	}
	if (pthread_create(&r, NULL, reader, NULL) != 0 || pthread_create(&w, NULL, writer, NULL) != 0) {
		perror("pipewake: pthread_create");
		return 1;
	}
	pthread_join(w, NULL);
	pthread_join(r, NULL);
	return 0;
}
