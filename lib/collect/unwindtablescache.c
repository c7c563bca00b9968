/* unwindtablescache.c — unwind rows cached on disk and shared by collectors
 * running at once (see unwindtablescache.h). */
#include "unwindtablescache.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cachedir.h"
#include "lockfile.h"
#include "rundir.h"
#include "util.h"

#define ENTRY_MAGIC "marpleUW"

/* An entry: this header, then size bytes (the caller's: unwindtables.c's
 * compact table).  checksum covers the header (its own field 0) and them. */
struct entry_header {
	char magic[8];
	uint32_t format, unit;		/* unit: UNWINDTABLESCACHE_UNIT */
	uint64_t size;
	uint64_t fdes, fdes_libdw, fdes_debug_frame, unsupported;	/* unwindtables_rowstats */
	char key[sizeof(((struct unwindtablescache_ticket *)0)->key)];
	uint64_t checksum;
};

struct unwindtablescache {
	struct cachedir *folder;
	int dir_fd;		/* .../unwind (folder's): every entry is opened relative to it */
	const char *dir;
	uint64_t limit_bytes;
	uint64_t unevicted_bytes;	/* written since the last eviction */
	unsigned tmp_seq;
	int write_warned;
	struct unwindtablescache_stats st;
};


/* Every step is a bijection of h, so any one changed word changes the sum. */
static uint64_t checksum_add(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t w;

	for (; len >= 8; b += 8, len -= 8) {
		memcpy(&w, b, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	for (; len; b++, len--)
		h = (h ^ *b) * 0x100000001b3ull;
	return h;
}

static uint64_t entry_checksum(const struct entry_header *h, const void *data, uint64_t size)
{
	struct entry_header copy = *h;

	copy.checksum = 0;
	return checksum_add(checksum_add(0xcbf29ce484222325ull, &copy, sizeof(copy)), data, size);
}

struct unwindtablescache *unwindtablescache_open_at(const char *dir)
{
	struct cachedir *folder = cachedir_open_at(dir, "unwind");
	if (!folder)
		return NULL;
	struct unwindtablescache *c = marple_calloc(1, sizeof(*c));
	c->folder = folder;
	c->dir_fd = folder->fd;
	c->dir = folder->path;
	c->limit_bytes = folder->limit_bytes;
	c->st.evicted = folder->evicted;
	return c;
}

struct unwindtablescache *unwindtablescache_open(void)
{
	char dir[4096];
	return cachedir_root(dir, sizeof(dir), "unwind") == 0 ? unwindtablescache_open_at(dir) : NULL;
}

void unwindtablescache_close(struct unwindtablescache *c)
{
	if (!c)
		return;
	cachedir_close(c->folder);
	free(c);
}

const char *unwindtablescache_dir(const struct unwindtablescache *c)
{
	return c->dir;
}

const struct unwindtablescache_stats *unwindtablescache_stats(const struct unwindtablescache *c)
{
	return &c->st;
}

/* The entry's name and key for the file elf, open as fd; 0 when it is not
 * to be cached.  An entry holds the table of the bytes it was built from:
 * it is named by the file (device and inode) and keyed by its version too
 * (size, mtime, and ctime, which no one can set back), so a file changed
 * in place finds its old entry stale.  Never by build-id alone: any user
 * can write a file with another program's build-id, and the table root
 * built from it would then unwind the real program (issue 40).  Only files
 * of root or ours are cached (others' owners could change them between
 * our fstat and our read), and never a process's memory image (fd -1, the
 * vdso: a process may rewrite its own). */
static int entry_identity(int fd, struct unwindtablescache_ticket *tk)
{
	struct stat st;

	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid()))
		return 0;
	snprintf(tk->name, sizeof(tk->name), "f-%" PRIx64 "-%" PRIu64, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
	snprintf(tk->key, sizeof(tk->key),
		 "file %" PRIx64 ":%" PRIu64 " size %" PRId64 " mtime %" PRId64 ".%09ld ctime %" PRId64 ".%09ld",
		 (uint64_t)st.st_dev, (uint64_t)st.st_ino, (int64_t)st.st_size, (int64_t)st.st_mtim.tv_sec,
		 st.st_mtim.tv_nsec, (int64_t)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
	return 1;
}

enum { ENTRY_OK = 1, ENTRY_MISSING = 0, ENTRY_STALE = -1, ENTRY_CORRUPT = -2, ENTRY_TOO_BIG = -3, ENTRY_UNCACHED = -4 };

static int read_full(int fd, void *buf, size_t len, off_t off)
{
	char *p = buf;

	while (len) {
		ssize_t r = pread(fd, p, len, off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r, len -= (size_t)r, off += r;
	}
	return 0;
}

/* tk's entry into buf[0..cap): ENTRY_*; ENTRY_TOO_BIG with *len the bytes
 * it holds. */
static int read_entry(struct unwindtablescache *c, const struct unwindtablescache_ticket *tk, void *buf, size_t cap,
		      size_t *len, struct unwindtables_rowstats *rst)
{
	struct entry_header h;
	struct stat st;
	char key[sizeof(h.key)] = { 0 };
	int rc = ENTRY_CORRUPT;

	/* O_NOFOLLOW: a symlink planted here is not read through (ELOOP: corrupt) */
	int fd = openat(c->dir_fd, tk->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? ENTRY_MISSING : ENTRY_CORRUPT;
	memcpy(key, tk->key, strnlen(tk->key, sizeof(key) - 1));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    read_full(fd, &h, sizeof(h), 0) != 0 || memcmp(h.magic, ENTRY_MAGIC, sizeof(h.magic)) != 0)
		goto out;
	if (h.format != UNWINDTABLESCACHE_FORMAT || h.unit != UNWINDTABLESCACHE_UNIT || memcmp(h.key, key, sizeof(key)) != 0) {
		rc = ENTRY_STALE;
		goto out;
	}
	if (h.size == 0 || h.size > SIZE_MAX / 2 || (uint64_t)st.st_size != sizeof(h) + h.size)
		goto out;
	if (h.size > cap) {
		*len = (size_t)h.size;
		rc = ENTRY_TOO_BIG;
		goto out;
	}
	if (read_full(fd, buf, h.size, sizeof(h)) != 0 || entry_checksum(&h, buf, h.size) != h.checksum)
		goto out;
	futimens(fd, NULL);	/* used now: evicted last */
	*len = (size_t)h.size;
	*rst = (struct unwindtables_rowstats){ .fdes = h.fdes, .fdes_libdw = h.fdes_libdw,
					    .fdes_debug_frame = h.fdes_debug_frame, .unsupported = h.unsupported };
	rc = ENTRY_OK;
out:
	close(fd);
	return rc;
}

/* The lock of entry name, taken; -1 when it cannot be (then the caller
 * builds without: the entry is written by rename either way).  *waited: it
 * was held by another collector.  Its holder removes the lock file when
 * done (unlock_entry, lockfile.h). */
static int lock_entry(struct unwindtablescache *c, const char *name, int *waited)
{
	char lock[sizeof(((struct unwindtablescache_ticket *)0)->name) + 8];

	snprintf(lock, sizeof(lock), "%s.lock", name);
	return lockfile_take(c->dir_fd, lock, UNWINDTABLESCACHE_WAIT_MS, waited);
}

static void unlock_entry(struct unwindtablescache *c, struct unwindtablescache_ticket *tk)
{
	char lock[sizeof(tk->name) + 8];

	if (tk->lock_fd < 0)
		return;
	snprintf(lock, sizeof(lock), "%s.lock", tk->name);
	lockfile_remove(c->dir_fd, lock, tk->lock_fd);	/* no lock files pile up */
	tk->lock_fd = -1;
}

size_t unwindtablescache_entry_size(struct unwindtablescache *c, int fd)
{
	struct unwindtablescache_ticket tk;
	struct stat st;

	if (!entry_identity(fd, &tk) || fstatat(c->dir_fd, tk.name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
	    !S_ISREG(st.st_mode) || (uint64_t)st.st_size <= sizeof(struct entry_header))
		return 0;
	return (size_t)st.st_size - sizeof(struct entry_header);
}

int unwindtablescache_lookup(struct unwindtablescache *c, struct unwindtablescache_ticket *tk, Elf *elf, int fd, void *buf,
		       size_t cap, size_t *len, struct unwindtables_rowstats *st)
{
	uint64_t t0 = marple_now_monotonic_ns(), c0 = marple_thread_cpu_ns();
	int waited = 0, rc;

	tk->name[0] = 0;
	tk->lock_fd = -1;
	(void)elf;
	if (!entry_identity(fd, tk)) {
		rc = ENTRY_UNCACHED;	/* counted as nothing */
		goto out;
	}
	if ((rc = read_entry(c, tk, buf, cap, len, st)) == ENTRY_OK || rc == ENTRY_TOO_BIG)
		goto out;
	/* build it ourselves, unless another collector is at it: then wait
	 * for its entry; read again once the lock is ours (it may have
	 * finished between our read and the lock) */
	tk->lock_fd = lock_entry(c, tk->name, &waited);
	if (tk->lock_fd >= 0 || waited)
		rc = read_entry(c, tk, buf, cap, len, st);
out:
	switch (rc) {
	case ENTRY_OK:
		unlock_entry(c, tk);
		c->st.read++;
		c->st.waited += (uint64_t)waited;
		break;
	case ENTRY_TOO_BIG:
		/* there, bigger than buf: buf was sized before the entry was
		 * written (by the collector we waited for, most often).  The
		 * caller looks up again with room for it, which reads it at
		 * once (the wait counted now), rather than build the file a
		 * second time */
		unlock_entry(c, tk);
		c->st.waited += (uint64_t)waited;
		break;
	case ENTRY_MISSING: c->st.missed++; break;
	case ENTRY_STALE: c->st.stale++; break;
	case ENTRY_CORRUPT: c->st.corrupt++; break;
	}
	c->st.ns += marple_now_monotonic_ns() - t0;
	c->st.cpu_ns += marple_thread_cpu_ns() - c0;
	return rc == ENTRY_OK ? 1 : rc == ENTRY_TOO_BIG ? UNWINDTABLESCACHE_MORE_ROOM : 0;
}

void unwindtablescache_refuse(struct unwindtablescache *c)
{
	c->st.read--;
	c->st.corrupt++;
}

void unwindtablescache_store(struct unwindtablescache *c, struct unwindtablescache_ticket *tk, const void *data, size_t size,
		       const struct unwindtables_rowstats *rst)
{
	uint64_t t0 = marple_now_monotonic_ns(), c0 = marple_thread_cpu_ns();
	struct entry_header h = { .format = UNWINDTABLESCACHE_FORMAT, .unit = UNWINDTABLESCACHE_UNIT, .size = size };
	char tmp[sizeof(tk->name) + 48];

	if (!tk->name[0] || !size) {
		unwindtablescache_abandon(c, tk);
		return;
	}
	memcpy(h.magic, ENTRY_MAGIC, sizeof(h.magic));
	memcpy(h.key, tk->key, strnlen(tk->key, sizeof(h.key) - 1));
	h.fdes = rst->fdes;
	h.fdes_libdw = rst->fdes_libdw;
	h.fdes_debug_frame = rst->fdes_debug_frame;
	h.unsupported = rst->unsupported;
	h.checksum = entry_checksum(&h, data, size);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d.%u", tk->name, (int)getpid(), c->tmp_seq++);
	int fd = openat(c->dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int ok = fd >= 0 && marple_write_full(fd, &h, sizeof(h)) == 0 && marple_write_full(fd, data, size) == 0;
	if (fd >= 0 && close(fd) != 0)
		ok = 0;
	/* rename replaces whatever is at the name, a symlink too, without following it */
	if (ok && renameat(c->dir_fd, tmp, c->dir_fd, tk->name) == 0) {
		c->st.written++;
		c->unevicted_bytes += sizeof(h) + (uint64_t)size;
	} else {
		if (!c->write_warned)
			marple_warn("unwind cache %s: cannot write %s: %s (said once)", c->dir, tk->name,
				    strerror(errno));
		c->write_warned = 1;
		c->st.write_failed++;
		if (fd >= 0)
			unlinkat(c->dir_fd, tmp, 0);
	}
	unlock_entry(c, tk);
	/* a look at the directory when the cache may have grown past its limit
	 * by a 16th (at open too): not at every entry, a capture writes dozens */
	if (c->unevicted_bytes > c->limit_bytes / 16) {
		cachedir_evict(c->folder, 0);
		c->unevicted_bytes = 0;
		c->st.evicted = c->folder->evicted;
	}
	c->st.ns += marple_now_monotonic_ns() - t0;
	c->st.cpu_ns += marple_thread_cpu_ns() - c0;
}

void unwindtablescache_abandon(struct unwindtablescache *c, struct unwindtablescache_ticket *tk)
{
	unlock_entry(c, tk);
}

int unwindtablescache_kernel_fact(struct unwindtablescache *c, const char *name, int *value)
{
	char file[64], id[64], line[160], want[80];
	int fd;

	if (!c || rundir_boot_id(id, sizeof(id)) < 0)
		return -1;
	snprintf(file, sizeof(file), ".%s", name);
	if ((fd = openat(c->dir_fd, file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -1;
	ssize_t n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	line[n] = 0;
	snprintf(want, sizeof(want), "%s ", id);
	size_t wl = strlen(want);
	if (strncmp(line, want, wl) != 0 || (line[wl] != '0' && line[wl] != '1') || line[wl + 1] != '\n')
		return -1;	/* another boot's, or not ours to believe */
	*value = line[wl] - '0';
	return 0;
}

void unwindtablescache_kernel_fact_set(struct unwindtablescache *c, const char *name, int value)
{
	char file[64], tmp[96], id[64], line[96];

	if (!c || rundir_boot_id(id, sizeof(id)) < 0)
		return;
	snprintf(file, sizeof(file), ".%s", name);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", file, (int)getpid());
	int len = snprintf(line, sizeof(line), "%s %d\n", id, value != 0);
	int fd = openat(c->dir_fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	int ok = fd >= 0 && marple_write_full(fd, line, (size_t)len) == 0;
	if (fd >= 0 && close(fd) != 0)
		ok = 0;
	if (!ok || renameat(c->dir_fd, tmp, c->dir_fd, file) != 0)
		unlinkat(c->dir_fd, tmp, 0);
}

void unwindtablescache_trailer_add(json_t *u, const struct unwindtablescache_stats *now,
				   const struct unwindtablescache_stats *before)
{
	json_object_set_new(u, "files_from_cache", json_integer((json_int_t)(now->read - before->read)));
	json_object_set_new(u, "files_from_cache_after_wait", json_integer((json_int_t)(now->waited - before->waited)));
	json_object_set_new(u, "files_rebuilt_stale", json_integer((json_int_t)(now->stale - before->stale)));
	json_object_set_new(u, "files_rebuilt_corrupt", json_integer((json_int_t)(now->corrupt - before->corrupt)));
	json_object_set_new(u, "cache_entries_written", json_integer((json_int_t)(now->written - before->written)));
	json_object_set_new(u, "cache_entries_evicted", json_integer((json_int_t)(now->evicted - before->evicted)));
	json_object_set_new(u, "cache_ms", json_real((double)(now->ns - before->ns) / 1e6));
	json_object_set_new(u, "cache_cpu_ms", json_real((double)(now->cpu_ns - before->cpu_ns) / 1e6));
}
