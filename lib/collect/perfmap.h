/* perfmap.h — a JIT's /tmp/perf-PID.map ("START SIZE name", hex, one a
 * line; where lines overlap the later wins): found in the process's own
 * root, trusted only when its owner wrote it, read within limits, and
 * flattened into disjoint named ranges.  The symbolizer (syms.c) keeps one
 * per process image; JIT frames named late are jitframes.h's.
 *
 *   struct perfmap_process pp;
 *   perfmap_process_note(&pp, pid, root);       // while pid lives
 *   int fd = perfmap_open(&pp, &st);            // -1: none, or not trusted
 *   struct perfmap *pm = perfmap_read(fdopen(fd, "re"), &st, name_fn, ctx);
 *   const struct perfmap_sym *s = perfmap_find(pm, addr);
 *
 * The file is anyone's input: a line is kept to PERFMAP_LINE_MAX bytes and
 * a name to PERFMAP_NAME_MAX (as Python's strings are), at most
 * PERFMAP_BYTES_MAX bytes and PERFMAP_LINES_MAX lines are read (a 2 GiB
 * sparse file is one line of zeros), and what was cut or left is counted
 * in struct perfmap_skipped. */
#ifndef MARPLE_PERFMAP_H
#define MARPLE_PERFMAP_H

#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

#define PERFMAP_NAME_MAX 4096
#define PERFMAP_LINE_MAX (PERFMAP_NAME_MAX + 64)
#define PERFMAP_BYTES_MAX (256ull << 20)
#define PERFMAP_LINES_MAX (4u << 20)

/* What finding and trusting a process's map needs, kept from while it
 * lives: a map written at exit (the JVM's) is read after it is gone. */
struct perfmap_process {
	pid_t pid;
	pid_t nspid;			/* its pid in its own pid namespace */
	uid_t uid;			/* its owner */
	int root_fd;			/* its root directory (O_PATH) when not ours, else -1 */
};
/* root: pid's root prefix ("" when ours, else "/proc/PID/root"). */
void perfmap_process_note(struct perfmap_process *pp, pid_t pid, const char *root);
void perfmap_process_close(struct perfmap_process *pp);

/* Open pp's map: in its own root (tmp/perf-NSPID.map resolved inside it),
 * else /tmp/perf-PID.map in ours.  A regular file and no symlink; in our
 * root owned by root or the process's owner (as perf requires); in
 * another root owned by the process's owner only and on the mount of its
 * tmp/ (a file bind-mounted there is another's, however it is owned).
 * An fd (st: its fstat), or -1. */
int perfmap_open(const struct perfmap_process *pp, struct stat *st);

struct perfmap_sym {
	uint64_t addr, size;		/* [addr, addr + size) */
	uint64_t origin;		/* where its line's code starts (for the offset) */
	const char *name;		/* name_fn's */
};

struct perfmap_skipped {
	uint64_t bad_lines;		/* not "START SIZE name" */
	uint64_t long_lines;		/* cut to PERFMAP_LINE_MAX */
	uint64_t long_names;		/* cut to PERFMAP_NAME_MAX */
	uint64_t lines_unread;		/* past PERFMAP_LINES_MAX */
	uint64_t bytes_unread;		/* past PERFMAP_BYTES_MAX */
};

struct perfmap {
	struct perfmap_sym *syms;	/* disjoint, sorted */
	size_t n;
	dev_t dev;			/* the file read, to see when it changes */
	ino_t ino;
	off_t size;
	struct timespec mtime;
	struct perfmap_skipped skipped;
};

/* Each line's name as the caller keeps it (demangled, interned); it must
 * outlive the map. */
typedef const char *(*perfmap_name_fn)(void *ctx, const char *name);
/* Read and flatten the map open as f (st: its fstat, or NULL); f is closed. */
struct perfmap *perfmap_read(FILE *f, const struct stat *st, perfmap_name_fn name_fn, void *ctx);
/* Is pm what the file of st holds (same file, size and mtime)? */
int perfmap_unchanged(const struct perfmap *pm, const struct stat *st);
const struct perfmap_sym *perfmap_find(const struct perfmap *pm, uint64_t addr);
void perfmap_free(struct perfmap *pm);

#endif
