/* blockdev.c — -d's disk from /sys (see blockdev.h). */
#include "blockdev.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

int blockdev_disk(const char *dev, unsigned *major, unsigned *minor, int *partition)
{
	char path[PATH_MAX + 32], real[PATH_MAX], devno[32], extra[2];
	const char *name = dev;
	FILE *f;

	if (partition)
		*partition = 0;
	if (sscanf(dev, "%u:%u%1s", major, minor, extra) == 2) {
		snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", *major, *minor);
		if (access(path, F_OK) != 0)
			return 0;	/* not here now: the kernel's numbers, as given */
	} else {
		if (!strncmp(name, "/dev/", 5))
			name += 5;
		if (!*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
			marple_usage_error("-d '%s' is not a disk name (vda, /dev/vda) or MAJOR:MINOR", dev);
		snprintf(path, sizeof(path), "/sys/class/block/%s", name);
	}
	if (!realpath(path, real)) {
		marple_warn("-d: no disk %s (%s: %s)", dev, path, strerror(errno));
		return -1;
	}
	/* a partition's directory is inside its disk's */
	snprintf(path, sizeof(path), "%s/partition", real);
	if (access(path, F_OK) == 0) {
		*strrchr(real, '/') = 0;
		if (partition)
			*partition = 1;
	}
	snprintf(path, sizeof(path), "%s/dev", real);
	if (!(f = fopen(path, "re")) || !fgets(devno, sizeof(devno), f) || sscanf(devno, "%u:%u", major, minor) != 2) {
		marple_warn("-d: cannot read the device number of %s (%s)", dev, path);
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	return 0;
}
