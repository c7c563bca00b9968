/* mallocpaths.c — allocates known sizes from two call paths, in a known ratio,
 * and frees everything: path_small 3000 x 1000 bytes, path_big 1000 x 6000
 * bytes (so path_big's bytes are twice path_small's), ROUNDS times.
 *
 * With "grow" after PAUSE_MS, also path_grow each round: 500 x calloc(10, 100),
 * each then realloc'ed to 3000 bytes, and 500 x realloc(NULL, 700), which
 * libc serves with malloc.
 *
 * Usage: mallocpaths [ROUNDS [SLEEP_BEFORE_MS|wait [PAUSE_MS [grow]]]]  (PAUSE_MS
 * between rounds; "wait": start on SIGUSR1, once the test's collector is ready)
 * WORKLOAD_CFLAGS: -O1 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -fno-inline
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "workload.h"

static void *volatile sink;

__attribute__((noinline)) static void *alloc_small(void) { return malloc(1000); }
__attribute__((noinline)) static void *alloc_big(void) { return malloc(6000); }

__attribute__((noinline)) void path_small(void)
{
	for (int i = 0; i < 3000; i++) {
		sink = alloc_small();
		free(sink);
	}
}

__attribute__((noinline)) void path_big(void)
{
	for (int i = 0; i < 1000; i++) {
		sink = alloc_big();
		free(sink);
	}
}

__attribute__((noinline)) static void *grow_calloc(void) { return calloc(10, 100); }
__attribute__((noinline)) static void *grow_realloc(void *p) { return realloc(p, 3000); }
__attribute__((noinline)) static void *grow_new(void) { return realloc(NULL, 700); }

__attribute__((noinline)) void path_grow(void)
{
	for (int i = 0; i < 500; i++) {
		sink = grow_realloc(grow_calloc());
		free(sink);
		sink = grow_new();
		free(sink);
	}
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 1;
	long ms = argc > 2 ? atol(argv[2]) : 0, pause = argc > 3 ? atol(argv[3]) : 0;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	struct timespec pts = { pause / 1000, (pause % 1000) * 1000000L };

	if (argc > 2 && strcmp(argv[2], "wait") == 0)
		wait_usr1();
	else if (ms)
		nanosleep(&ts, NULL);
	for (int r = 0; r < rounds; r++) {
		path_small();
		path_big();
		if (argc > 4 && strcmp(argv[4], "grow") == 0)
			path_grow();
		if (pause)
			nanosleep(&pts, NULL);
	}
	return 0;
}
