/* mappedfiles.h — the model of the files processes map: one identity per
 * file, each file opened safely and mapped once, and a slot per thing learned
 * about it by each of its analyzers (the symbolizer's symbols, the unwind
 * tables' rows, Python's facts).  One cache in a collector, shared by every
 * client and thread (mappedfiles_shared); the process images that map the
 * files are the symbolizer's (syms.h), each naming its files through here.
 *
 *   struct mappedfiles *mf = mappedfiles_shared();
 *   struct mappedfile *f = mappedfiles_find(mf, mappedfile_id_of_line(&l));
 *   if (!f)
 *           f = mappedfiles_open_line(mf, pid, &l);   // NULL: unreadable
 *   struct mine *m = mappedfile_slot(f, me);           // what I learned, or NULL
 *   if (!m)
 *           mappedfile_set_slot(f, me, m = analyze(f->data, f->size), mine_free);
 *   ...
 *   mappedfile_put(f);                                  // when I no longer need it
 *   mappedfiles_release(mf);
 *
 * Identity: device (as stat's st_dev) and inode, and the file's size and
 * mtime when it was opened: a file replaced in place (an inode reused after
 * a delete, an upgrade writing over a library) is a new entry, never the
 * old one's facts.  The GNU build-id is read once (mappedfile_build_id).
 *
 * Reading: a file is mapped once, read-only, and only if it is ELF (a
 * browser maps a thousand memfd regions nobody reads).  A traced process
 * can truncate a file it owns while we read the mapping: the pages past the
 * new end then fault (SIGBUS).  That fault is survived: the rest of the
 * mapping becomes zeros, the file is counted as truncated
 * (mappedfile_truncated, mappedfiles_stats) and its analyzers read nothing
 * more from it.  Files are opened with procmaps_open_safe: never blocking,
 * regular files only. */
#ifndef MARPLE_MAPPEDFILES_H
#define MARPLE_MAPPEDFILES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>

#include "procmaps.h"

/* A file's identity: device (as stat's st_dev) and inode. */
struct mappedfile_id {
	uint64_t dev, ino;
};

static inline struct mappedfile_id mappedfile_id_of_line(const struct procmaps_line *l)
{
	return (struct mappedfile_id){ makedev(l->dev_major, l->dev_minor), l->inode };
}

static inline struct mappedfile_id mappedfile_id_of_stat(const struct stat *st)
{
	return (struct mappedfile_id){ (uint64_t)st->st_dev, (uint64_t)st->st_ino };
}

/* The device as the kernel encodes a superblock's s_dev (what BPF sees):
 * major << 20 | minor. */
static inline uint32_t mappedfile_id_kernel_dev(struct mappedfile_id id)
{
	return (uint32_t)(major(id.dev) << 20 | minor(id.dev));
}

static inline int mappedfile_id_equal(struct mappedfile_id a, struct mappedfile_id b)
{
	return a.dev == b.dev && a.ino == b.ino;
}

struct mappedfile {
	struct mappedfile_id id;
	int64_t size_opened;		/* st_size and st_mtim when opened */
	struct timespec mtime;
	uid_t uid;			/* its owner */
	uint32_t stamp;			/* its change time (mappedfile_stamp) */
	const unsigned char *data;	/* the whole file mapped read-only; NULL: not ELF or unreadable */
	size_t size;
	const char *path;		/* the path it was first opened by (as a process names it) */
};

/* A file's change time folded to 32 bits, as the BPF side's unwind_stamp
 * reads it from the inode: what tells a file from another given its
 * inode number, or from itself rewritten in place (users cannot set it). */
uint32_t mappedfile_stamp(const struct stat *st);

struct mappedfiles;
/* The collector's one cache (made on first use); each call one more user. */
struct mappedfiles *mappedfiles_shared(void);
/* One user less; the last frees the files no analyzer holds. */
void mappedfiles_release(struct mappedfiles *mf);

/* The known file of that identity, one reference more, or NULL: no open,
 * no stat (the device and inode of a maps line are trusted, as the kernel
 * wrote them; not for a deleted file's line, whose inode may be reused). */
struct mappedfile *mappedfiles_find(struct mappedfiles *mf, struct mappedfile_id id);
/* The file pid maps at l (procmaps_open_file), opened now unless known by
 * its identity; one reference more, or NULL if it cannot be opened. */
struct mappedfile *mappedfiles_open_line(struct mappedfiles *mf, pid_t pid, const struct procmaps_line *l);
/* The file at path (a debug file; under /proc/PID/root for a container's),
 * opened with procmaps_open_safe; one reference more, or NULL. */
struct mappedfile *mappedfiles_open_path(struct mappedfiles *mf, const char *path);
/* The file open as fd (st: its fstat, a regular file); fd stays the
 * caller's.  One reference more. */
struct mappedfile *mappedfiles_of_fd(struct mappedfiles *mf, int fd, const struct stat *st, const char *path);
/* One reference less; the last frees the file and its slots. */
void mappedfile_put(struct mappedfile *f);

/* What owner (an analyzer: a syms cache, the unwind tables, pyframes)
 * learned about f, or NULL.  One slot per owner; free_fn(data) is called
 * when the file is freed (or the slot set again). */
void *mappedfile_slot(struct mappedfile *f, const void *owner);
void mappedfile_set_slot(struct mappedfile *f, const void *owner, void *data, void (*free_fn)(void *));

/* The GNU build-id in hex ("" if none), read on first ask. */
const char *mappedfile_build_id(struct mappedfile *f);
/* 1 once the file was found shorter than its mapping (truncated under us). */
int mappedfile_truncated(const struct mappedfile *f);
/* Let go of f's resident pages (read again from the page cache when needed). */
void mappedfile_release_pages(struct mappedfile *f);

struct mappedfiles_stats {
	uint64_t opened;		/* files opened and mapped */
	uint64_t held;			/* files held now */
	uint64_t not_elf;		/* opened, but no ELF: not mapped */
	uint64_t truncated;		/* found truncated while read (survived faults) */
	uint64_t unmapped;		/* ELF files left unmapped: too many mapped at once */
};
void mappedfiles_stats(const struct mappedfiles *mf, struct mappedfiles_stats *out);

#endif
