/* test_lockfile — a lock file its holder removes (lib/collect/lockfile.h):
 * taken once at a time (a second take waits, or gives up when told to),
 * removed by its holder; a process that waited for the lock of a file its
 * holder removed takes the file at the name now, never the removed one; a
 * link or a folder at the name is refused. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lockfile.h"
#include "test.h"
#include "util.h"

static ino_t inode_of(int dir, const char *name)
{
	struct stat st;
	return fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? st.st_ino : 0;
}

/* A child waits for the lock the parent holds, the parent removes the file
 * after 100 ms: the child's lock is on the file made afresh at the name
 * (exit 0), not on the removed one. */
static void waiter_takes_the_new_file(int dir)
{
	int fd = lockfile_take(dir, "w.lock", 0, NULL);
	pid_t child = fork();

	if (child == 0) {
		close(fd);	/* the parent's (a lock goes with the last of its descriptors) */
		int waited = 0, mine = lockfile_take(dir, "w.lock", LOCKFILE_FOREVER, &waited);
		struct stat st;
		_exit(mine >= 0 && waited && fstat(mine, &st) == 0 && st.st_ino == inode_of(dir, "w.lock") ? 0 : 1);
	}
	nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000000 }, NULL);
	lockfile_remove(dir, "w.lock", fd);
	int status = -1;
	waitpid(child, &status, 0);
	test_cond("lockfile: a waiter for a removed file's lock takes the one made at the name since",
		  fd >= 0 && child > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
	test_plan(8);
	char tmpl[] = "/tmp/marple-lockfile.XXXXXX";
	const char *path = mkdtemp(tmpl);
	int dir = path ? open(path, O_RDONLY | O_DIRECTORY) : -1;

	int a = lockfile_take(dir, "x.lock", 0, NULL);
	struct stat st;
	test_cond("lockfile: taken, the file made 0600", a >= 0 && fstat(a, &st) == 0 && (st.st_mode & 0777) == 0600);
	int waited = 0;
	test_cond("lockfile: held: a second take with no wait gives up at once",
		  lockfile_take(dir, "x.lock", 0, &waited) < 0 && waited == 0);
	uint64_t t0 = marple_now_monotonic_ns();
	int b = lockfile_take(dir, "x.lock", 50, &waited);
	uint64_t ms = (marple_now_monotonic_ns() - t0) / 1000000;
	test_cond("lockfile: held: a take with 50 ms waits them, says so, gives up", b < 0 && waited && ms >= 45);
	lockfile_remove(dir, "x.lock", a);
	test_cond("lockfile: removed by its holder", inode_of(dir, "x.lock") == 0);
	b = lockfile_take(dir, "x.lock", 0, NULL);
	test_cond("lockfile: taken again once let go (a new file)", b >= 0 && inode_of(dir, "x.lock") != 0);
	lockfile_remove(dir, "x.lock", b);
	waiter_takes_the_new_file(dir);
	test_cond("lockfile: a link at the name: refused",
		  symlinkat("/etc/passwd", dir, "l.lock") == 0 && lockfile_take(dir, "l.lock", 0, NULL) < 0);
	test_cond("lockfile: a folder at the name: refused",
		  mkdirat(dir, "d.lock", 0700) == 0 && lockfile_take(dir, "d.lock", 0, NULL) < 0);
	unlinkat(dir, "w.lock", 0);
	unlinkat(dir, "l.lock", 0);
	unlinkat(dir, "d.lock", AT_REMOVEDIR);
	if (path)
		rmdir(path);
	return test_report();
}
