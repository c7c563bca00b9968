/* rundir.c — /run/marple, root's alone (see rundir.h). */
#include "rundir.h"

#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int rundir_root_only(const char *path, char *why, size_t len)
{
	struct stat st;

	if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022))
		return snprintf(why, len, "%s: not a folder of root's alone", path), -1;
	return 0;
}

int rundir_open(char *why, size_t len)
{
	if (mkdir(RUNDIR, 0700) != 0 && errno != EEXIST)
		return snprintf(why, len, RUNDIR ": %s", strerror(errno)), -1;
	if (rundir_root_only(RUNDIR, why, len) != 0)
		return -1;
	int fd = open(RUNDIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		snprintf(why, len, RUNDIR ": %s", strerror(errno));
	return fd;
}

int rundir_write_new(int dir, const char *name, const void *buf, size_t size)
{
	int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0)
		return -1;
	int rc = marple_write_full(fd, buf, size);
	return close(fd) == 0 ? rc : -1;
}

int rundir_boot_id(char *id, size_t cap)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
	int ok = f && fgets(id, (int)cap, f) != NULL;

	if (f)
		fclose(f);
	if (!ok)
		return -1;
	id[strcspn(id, "\n")] = 0;
	return id[0] ? 0 : -1;
}
