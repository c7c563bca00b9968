/* pagefaults.c — page faults from a known call stack: touch_pages() maps
 * MIB mebibytes (default 64) of anonymous memory and writes one byte per
 * page, so it takes one fault per 4 KiB page.
 *
 * With "read", read_pages() read(2)s each page from /dev/zero instead: the
 * kernel's copy into the fresh page takes the fault (page_fault_kernel, not
 * page_fault_user).
 *
 * Usage: pagefaults [MIB [SLEEP_BEFORE_MS|wait [read]]]  ("wait": start on
 * SIGUSR1, once the test's collector is ready)
 * WORKLOAD_CFLAGS: -O1 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -fno-inline
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <string.h>
#include <time.h>
#include "workload.h"

__attribute__((noinline)) long touch_pages(char *p, size_t len)
{
	long n = 0;
	for (size_t off = 0; off < len; off += 4096, n++)
		((volatile char *)p)[off] = 1;
	return n;
}

__attribute__((noinline)) long read_pages(char *p, size_t len)
{
	int fd = open("/dev/zero", O_RDONLY);
	long n = 0;

	for (size_t off = 0; fd >= 0 && off < len && read(fd, p + off, 4096) == 4096; off += 4096)
		n++;
	if (fd >= 0)
		close(fd);
	return n;
}

int main(int argc, char **argv)
{
	size_t len = (size_t)(argc > 1 ? atol(argv[1]) : 64) << 20;
	long ms = argc > 2 ? atol(argv[2]) : 0;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	char *p;

	if (argc > 2 && strcmp(argv[2], "wait") == 0)
		wait_usr1();
	else if (ms)
		nanosleep(&ts, NULL);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	madvise(p, len, MADV_NOHUGEPAGE);
	if (argc > 3 && strcmp(argv[3], "read") == 0)
		return read_pages(p, len) == (long)(len >> 12) ? 0 : 1;
	touch_pages(p, len);
	return 0;
}
