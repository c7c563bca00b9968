/* directio.c — direct I/O from a known call stack: write_direct() writes
 * COUNT blocks of 64 KiB with O_DIRECT to FILE (created, then removed), then
 * read_direct() reads them back.
 *
 * Usage: directio FILE [COUNT [SLEEP_BEFORE_MS|GO_FILE]]
 * (GO_FILE, a path: it starts once that file exists.)
 * WORKLOAD_CFLAGS: -O1 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -fno-inline
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BLOCK 65536

__attribute__((noinline)) int write_direct(int fd, char *buf, int count)
{
	for (int i = 0; i < count; i++)
		if (pwrite(fd, buf, BLOCK, (off_t)i * BLOCK) != BLOCK)
			return -1;
	return 0;
}

__attribute__((noinline)) int read_direct(int fd, char *buf, int count)
{
	for (int i = 0; i < count; i++)
		if (pread(fd, buf, BLOCK, (off_t)i * BLOCK) != BLOCK)
			return -1;
	return 0;
}

int main(int argc, char **argv)
{
	int count = argc > 2 ? atoi(argv[2]) : 64;
	long ms = argc > 3 ? atol(argv[3]) : 0;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	void *buf;
	int fd;

	if (argc < 2) {
		fprintf(stderr, "usage: directio FILE [COUNT [SLEEP_BEFORE_MS|GO_FILE]]\n");
		return 2;
	}
	/* a path: wait until it exists (a collector's MARPLE_READY_FILE), 30 s at most */
	for (int i = 0; argc > 3 && argv[3][0] == '/' && i < 3000 && access(argv[3], F_OK) != 0; i++)
		usleep(10000);
	if (ms)
		nanosleep(&ts, NULL);
	if (posix_memalign(&buf, 4096, BLOCK))
		return 1;
	memset(buf, 'x', BLOCK);
	fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0600);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	if (write_direct(fd, buf, count) || read_direct(fd, buf, count)) {
		perror("direct I/O");
		return 1;
	}
	close(fd);
	unlink(argv[1]);
	return 0;
}
