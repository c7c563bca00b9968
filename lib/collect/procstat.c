/* procstat.c — /proc/PID/stat after the process name (see procstat.h). */
#include "procstat.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

const char *procstat_read(int dir_fd, const char *path, char *buf, size_t size)
{
	int fd = openat(dir_fd, path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, size - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = 0;
	const char *paren = strrchr(buf, ')');
	return paren ? paren + 1 : NULL;
}
