/* leaky.c — leaks a known number of bytes from a known function and frees
 * everything it allocates from another:
 *   leak_here:  200 blocks of 5000 bytes (1,000,000 bytes) never freed;
 *   tidy_up:    malloc, calloc, realloc, posix_memalign, aligned_alloc,
 *               memalign, valloc and mmap, 20,000 calls, all freed;
 *   reserve_space: address space, no memory, kept: 1 GiB PROT_NONE and
 *               64 MiB MAP_NORESERVE (as runtimes reserve their heaps).
 * Then it sleeps SLEEP_AFTER_MS (so it can be traced with -p) and exits.
 * Given a path (GO_FILE, starting with /) instead of SLEEP_BEFORE_MS, it
 * starts once that file exists (a collector's MARPLE_READY_FILE: a fixed
 * sleep lost the race with attaching on a loaded machine), 30 s at most.
 *
 * Usage: leaky [SLEEP_BEFORE_MS|GO_FILE [SLEEP_AFTER_MS]]
 * WORKLOAD_CFLAGS: -O1 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -fno-inline
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define LEAK_BLOCKS 200
#define LEAK_SIZE 5000

static void *volatile keep[LEAK_BLOCKS];
static void *volatile sink;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	if (ms > 0)
		nanosleep(&ts, NULL);
}

__attribute__((noinline)) void leak_here(void)
{
	for (int i = 0; i < LEAK_BLOCKS; i++) {
		keep[i] = malloc(LEAK_SIZE);
		memset(keep[i], 1, 16);
	}
}

__attribute__((noinline)) void tidy_up(void)
{
	void *p;

	for (int i = 0; i < 2500; i++) {
		p = malloc(100000);
		sink = p;
		free(p);
		p = calloc(10, 1000);
		p = realloc(p, 50000);
		sink = p;
		free(p);
		p = realloc(NULL, 3000);
		free(p);
		if (posix_memalign(&p, 64, 8000) == 0)
			free(p);
		p = aligned_alloc(4096, 8192);
		free(p);
		p = memalign(128, 7000);
		free(p);
		p = valloc(12000);
		free(p);
		p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED)
			munmap(p, 1 << 20);
	}
}

__attribute__((noinline)) void reserve_space(void)
{
	sink = mmap(NULL, 1ul << 30, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	sink = mmap(NULL, 64ul << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
}

static void wait_for(const char *path)
{
	for (int i = 0; i < 3000 && access(path, F_OK) != 0; i++)
		sleep_ms(10);
}

int main(int argc, char **argv)
{
	if (argc > 1 && argv[1][0] == '/')
		wait_for(argv[1]);
	else
		sleep_ms(argc > 1 ? atol(argv[1]) : 0);
	reserve_space();
	leak_here();
	tidy_up();
	sleep_ms(argc > 2 ? atol(argv[2]) : 0);
	return 0;
}
