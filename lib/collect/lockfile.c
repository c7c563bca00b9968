/* lockfile.c — a lock file its holder removes (see lockfile.h). */
#include "lockfile.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

int lockfile_flock(int fd, int op)
{
	int rc;

	while ((rc = flock(fd, op)) != 0 && errno == EINTR)
		;
	return rc;
}

/* flock(fd, LOCK_EX) within wait_ms: 0, or -1. */
static int lock_within(int fd, uint64_t wait_ms, int *waited)
{
	if (wait_ms == LOCKFILE_FOREVER) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (waited)
			*waited = 1;
		return lockfile_flock(fd, LOCK_EX);
	}
	uint64_t deadline = marple_now_monotonic_ns() + wait_ms * 1000000ull;
	while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		if ((errno != EWOULDBLOCK && errno != EINTR) || marple_now_monotonic_ns() >= deadline)
			return -1;
		if (waited)
			*waited = 1;
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000000 }, NULL);
	}
	return 0;
}

int lockfile_take(int dir, const char *name, uint64_t wait_ms, int *waited)
{
	struct stat st, now;

	if (waited)
		*waited = 0;
	for (;;) {
		int fd = openat(dir, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
		if (fd < 0)
			return -1;
		if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
		    lock_within(fd, wait_ms, waited) != 0) {
			close(fd);
			return -1;
		}
		if (fstatat(dir, name, &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_ino == st.st_ino &&
		    now.st_dev == st.st_dev)
			return fd;
		close(fd);	/* removed by its holder meanwhile: the one there now */
	}
}

void lockfile_remove(int dir, const char *name, int fd)
{
	unlinkat(dir, name, 0);	/* ours while we hold it */
	close(fd);		/* the flock goes with it */
}
