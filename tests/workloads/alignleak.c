/* alignleak.c — leaks known bytes through the allocators whose result is
 * not a returned pointer, or is one that can mean failure:
 *   leak_aligned: 50 x posix_memalign(64, 4096) (204,800 bytes), the block
 *                 returned through its first argument;
 *   leak_mapped:  10 anonymous 64 KiB mmaps (655,360 bytes);
 *   fail_mapped:  10 mmaps that fail (length 0: EINVAL): MAP_FAILED, no
 *                 memory.
 * Then it exits without freeing anything.
 *
 * Usage: alignleak
 * WORKLOAD_CFLAGS: -O1 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -fno-inline
 */
#include <stdlib.h>
#include <sys/mman.h>

static void *keep[70];

__attribute__((noinline)) void leak_aligned(void)
{
	for (int i = 0; i < 50; i++)
		if (posix_memalign(&keep[i], 64, 4096) != 0)
			keep[i] = NULL;
}

__attribute__((noinline)) void leak_mapped(void)
{
	for (int i = 50; i < 60; i++)
		keep[i] = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

__attribute__((noinline)) void fail_mapped(void)
{
	for (int i = 60; i < 70; i++)
		keep[i] = mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

int main(void)
{
	leak_aligned();
	leak_mapped();
	fail_mapped();
	return 0;
}
