/* cachedir.c — the cache folders: where, checked, evicted (see cachedir.h). */
#include "cachedir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lockfile.h"
#include "util.h"

#define TMP_MAX_AGE_S 3600	/* a temporary file this old was left by a writer that died */
/* The folder's mtime when a look found the cache under its limit with
 * nothing to clean, and the bytes it held: a collector's open reads this
 * instead of looking at every entry again (2,700 entries: 9 ms of CPU) */
#define LOOK_NOTE ".looked"

/* A directory we may keep entries in: ours, and writable by no one else
 * (else another user could plant or change entries). */
static int dir_usable(int fd, const char *path, const char *name)
{
	struct stat st;

	if (fstat(fd, &st) != 0)
		return 0;
	if (st.st_uid != geteuid()) {
		marple_warn("%s cache %s not used: it belongs to uid %u, not to us (uid %u)", name, path,
			    (unsigned)st.st_uid, (unsigned)geteuid());
		return 0;
	}
	if (st.st_mode & 022) {
		marple_warn("%s cache %s not used: others may write in it (mode %04o)", name, path,
			    (unsigned)(st.st_mode & 07777));
		return 0;
	}
	return 1;
}

static uint64_t size_limit(void)
{
	const char *env = getenv("MARPLE_CACHE_SIZE");
	uint64_t mb = CACHEDIR_SIZE_DEFAULT_MB;

	if (env && *env && marple_parse_u64(env, 1, 1u << 20, &mb) != 0) {
		marple_warn("MARPLE_CACHE_SIZE: '%s' is not a size in MB from 1 to 1048576; %u used", env,
			    CACHEDIR_SIZE_DEFAULT_MB);
		mb = CACHEDIR_SIZE_DEFAULT_MB;
	}
	return mb << 20;
}

struct cachedir *cachedir_open_at(const char *root, const char *name)
{
	char path[4200];

	if (mkdir(root, 0700) != 0 && errno != EEXIST) {
		marple_warn("%s cache %s not used: %s", name, root, strerror(errno));
		return NULL;
	}
	int root_fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (root_fd < 0 && lstat(root, &st) == 0 && S_ISLNK(st.st_mode)) {
		/* not followed: whoever may change the link would choose where root writes */
		marple_warn("%s cache %s not used: a symbolic link (name the folder it points to in "
			    "MARPLE_CACHE_DIR)", name, root);
		return NULL;
	}
	if (root_fd < 0) {
		marple_warn("%s cache %s not used: %s", name, root, strerror(errno));
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/%s", root, name);
	if (!dir_usable(root_fd, root, name)) {
		close(root_fd);
		return NULL;
	}
	if (mkdirat(root_fd, name, 0700) != 0 && errno != EEXIST) {
		marple_warn("%s cache %s not used: %s", name, path, strerror(errno));
		close(root_fd);
		return NULL;
	}
	int fd = openat(root_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(root_fd);
	if (fd < 0) {
		marple_warn("%s cache %s not used: %s", name, path, strerror(errno));
		return NULL;
	}
	if (!dir_usable(fd, path, name)) {
		close(fd);
		return NULL;
	}
	struct cachedir *c = marple_calloc(1, sizeof(*c));
	c->fd = fd;
	c->path = marple_strdup(path);
	c->limit_bytes = size_limit();
	cachedir_evict(c, 1);
	return c;
}

void cachedir_close(struct cachedir *c)
{
	if (!c)
		return;
	close(c->fd);
	free(c->path);
	free(c);
}

int cachedir_root(char *dir, size_t cap, const char *what)
{
	const char *env = getenv("MARPLE_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	if (env && (!*env || strcmp(env, "off") == 0))
		return -1;
	if (env) {
		snprintf(dir, cap, "%s", env);
	} else if (geteuid() == 0) {
		snprintf(dir, cap, "/var/cache/marple");
	} else if (xdg && xdg[0] == '/') {	/* the XDG spec: a relative one is ignored */
		mkdir(xdg, 0700);
		snprintf(dir, cap, "%s/marple", xdg);
	} else if (home && home[0] == '/') {
		snprintf(dir, cap, "%s/.cache", home);
		mkdir(dir, 0700);
		snprintf(dir, cap, "%s/.cache/marple", home);
	} else {
		marple_warn("%s cache not used: no HOME, XDG_CACHE_HOME or MARPLE_CACHE_DIR", what);
		return -1;
	}
	return 0;
}

/* A lock file no one holds (its holder was killed, or an older marple
 * kept them): removed, as its holder would have (lockfile.h). */
static void remove_idle_lock(struct cachedir *c, const char *lock)
{
	int fd = lockfile_take(c->fd, lock, 0, NULL);

	if (fd >= 0)
		lockfile_remove(c->fd, lock, fd);
}

struct cached_file {
	char name[256];
	int64_t mtime_ns;
	uint64_t bytes;
};

static int older_first(const void *a, const void *b)
{
	const struct cached_file *x = a, *y = b;
	return (x->mtime_ns > y->mtime_ns) - (x->mtime_ns < y->mtime_ns);
}

/* Whether the folder is as the last look left it (LOOK_NOTE): no entry
 * written or removed since (each is a rename or an unlink, which moves the
 * folder's mtime; a use only touches the entry's), and under the limit. */
static int unchanged_since_look(struct cachedir *c)
{
	char buf[80];
	long long sec, nsec;
	unsigned long long bytes;
	struct stat st;
	int fd = openat(c->fd, LOOK_NOTE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0 || fstat(c->fd, &st) != 0)
		return 0;
	buf[n] = '\0';
	return sscanf(buf, "%lld %lld %llu", &sec, &nsec, &bytes) == 3 && sec == (long long)st.st_mtim.tv_sec &&
	       nsec == (long long)st.st_mtim.tv_nsec && bytes <= c->limit_bytes;
}

/* Note the folder's mtime after a look that left nothing to clean (its
 * total under the limit).  An entry renamed in by another collector while
 * we looked is missed until the folder changes again: a few MB over at most. */
static void note_look(struct cachedir *c, uint64_t total)
{
	struct stat st;
	int fd = openat(c->fd, LOOK_NOTE, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);

	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && fstat(c->fd, &st) == 0)
		dprintf(fd, "%lld %lld %llu\n", (long long)st.st_mtim.tv_sec, (long long)st.st_mtim.tv_nsec,
			(unsigned long long)total);
	close(fd);
}

void cachedir_evict(struct cachedir *c, int at_open)
{
	if (at_open && unchanged_since_look(c))
		return;
	int fd = openat(c->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	struct cached_file *files = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	struct stat st;
	time_t now = time(NULL);
	int left = 0;	/* temporary files left for a later look */

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(files->name) ||
		    fstatat(c->fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (strstr(de->d_name, ".tmp.")) {
			if (now - st.st_mtim.tv_sec > TMP_MAX_AGE_S)
				unlinkat(c->fd, de->d_name, 0);
			else
				left = 1;	/* a live writer's renames it; a dead one's ages */
			continue;
		}
		if (strstr(de->d_name, ".lock")) {	/* unlinked by us or its holder */
			remove_idle_lock(c, de->d_name);
			continue;
		}
		files = marple_grow(files, &cap, n + 1, sizeof(*files));
		snprintf(files[n].name, sizeof(files[n].name), "%s", de->d_name);
		files[n].mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
		files[n].bytes = (uint64_t)st.st_size;
		total += files[n++].bytes;
	}
	closedir(d);
	if (total > c->limit_bytes) {
		qsort(files, n, sizeof(*files), older_first);
		for (size_t i = 0; i < n && total > c->limit_bytes; i++)
			if (unlinkat(c->fd, files[i].name, 0) == 0) {
				total -= files[i].bytes;
				c->evicted++;
			}
	}
	free(files);
	if (!left && total <= c->limit_bytes)
		note_look(c, total);
}

