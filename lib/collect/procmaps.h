/* procmaps.h — a process and its mapped files: the one reader of
 * /proc/PID/maps, a mapped file's identity (device and inode, GNU build-id)
 * and how to open the very file a process maps (in a container, deleted or
 * replaced since).  The symbolizer, the unwind tables, uprobes and Python
 * frames read processes through it; a file's identity and what is learned
 * about it are mappedfiles.h's. */
#ifndef MARPLE_PROCMAPS_H
#define MARPLE_PROCMAPS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <gelf.h>

/* One line of /proc/PID/maps. */
struct procmaps_line {
	uint64_t start, end;		/* [start, end) in the process */
	uint64_t pgoff;			/* the file offset mapped at start */
	char perms[5];			/* "r-xp" */
	unsigned dev_major, dev_minor;	/* the file's device, as the line shows it */
	uint64_t inode;			/* 0: no file (anonymous, [stack], [vdso]...) */
	/* The rest of the line: "/usr/lib/libc.so.6", "[vdso]", "" for
	 * anonymous memory; " (deleted)" taken off (see deleted).  As the
	 * kernel prints it: a newline in a file name shows as "\012".  Points
	 * into the line read (valid until the next line). */
	const char *path;
	int deleted;			/* the path ended in " (deleted)": only map_files opens it */
};

/* Parse one line (its newline, if any, is taken off in place); 0, or -1 when
 * it is not a whole maps line (truncated, a number out of range). */
int procmaps_parse(char *line, struct procmaps_line *out);

static inline int procmaps_is_exec(const struct procmaps_line *l)
{
	return l->perms[2] == 'x';
}

static inline int procmaps_is_file(const struct procmaps_line *l)
{
	return l->path[0] == '/';
}

/* Reading a process's mappings, line after line. */
struct procmaps {
	FILE *f;
	char *buf;
	size_t cap;
	pid_t pid;
};

/* An image's layout as /proc/PID/stat shows it, fields 26-28, 45-47, 50-51
 * (startcode endcode startstack start_data end_data start_brk env_start
 * env_end): where its code, data, heap and stack were put, randomized at
 * each exec (syms.h tells images apart by it).  pid's current one: 0 or -1. */
#define PROCMAPS_LAYOUT_N 8
int procmaps_read_layout(pid_t pid, uint64_t out[PROCMAPS_LAYOUT_N]);

/* Open pid's maps (ours: getpid()); 0, or -1 (errno set: the process is
 * gone, or not ours to read). */
int procmaps_open(struct procmaps *m, pid_t pid);
/* The next well-formed line into l: 1, or 0 at the end. */
int procmaps_next(struct procmaps *m, struct procmaps_line *l);
void procmaps_close(struct procmaps *m);

/* pid's root directory as a prefix for the paths its maps name: "" when it
 * is ours (the paths keep working after it exits), else "/proc/PID/root".
 * size >= 32. */
void procmaps_root(pid_t pid, char *buf, size_t size);

/* "/proc/PID/map_files/START-END": the very file behind l, whatever mount
 * namespace it lives in, deleted or replaced since. */
void procmaps_map_files_path(pid_t pid, const struct procmaps_line *l, char *buf, size_t size);

/* Open path (relative to dirfd; AT_FDCWD) read-only on a traced process's
 * behalf: never blocking (O_NONBLOCK, O_NOCTTY: a FIFO or a terminal where a
 * debug link points must not stall the collector), and a regular file only
 * (fstat into *st when st is not NULL).  An fd, or -1 (errno EINVAL: not a
 * regular file, counted by procmaps_refused). */
struct stat;
int procmaps_open_safe(int dirfd, const char *path, struct stat *st);
/* How many files procmaps_open_safe refused as not regular, and the first's
 * path (*first; NULL when none), for a trailer or a warning. */
uint64_t procmaps_refused(const char **first);

/* Open l's file read-only (procmaps_open_safe): by map_files, else by its path in the process's
 * root (a newline shown as "\012" tried both ways).  An fd, or -1. */
int procmaps_open_file(pid_t pid, const struct procmaps_line *l);

/* The GNU build-id of an ELF file in hex into buf (2 * 20 + 1 bytes for
 * SHA-1's, at most 2 * 64 + 1): 0, or -1 when it has none (or buf is too
 * small for it).  Read from its notes, the section or, stripped of section
 * headers, the PT_NOTE segments. */
int procmaps_build_id(Elf *elf, char *buf, size_t size);
/* A copy of our own vdso's image (every process maps the kernel's one
 * image: a table built from ours is everyone's), *len bytes to free; NULL
 * when we have none. */
void *procmaps_own_vdso(size_t *len);

#endif
