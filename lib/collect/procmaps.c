/* procmaps.c — a process and its mapped files (see procmaps.h).  The maps
 * file is read by hand, not by sscanf: a number too big for its field is an
 * error, not a silent ULLONG_MAX, and a truncated line is told from a whole
 * one. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procmaps.h"
#include "util.h"

/* Hex digits at *p, at most max of them, into *v; 0, or -1 if none or too many. */
static int hex_field(const char **p, int max, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	int n = 0;

	for (;; s++, n++) {
		int d;
		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		if (n == max)
			return -1;
		x = x << 4 | (uint64_t)d;
	}
	if (n == 0)
		return -1;
	*v = x;
	*p = s;
	return 0;
}

static int dec_field(const char **p, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		uint64_t d = (uint64_t)(*s - '0');
		if (x > (UINT64_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	*v = x;
	*p = s;
	return 0;
}

static int expect(const char **p, char c)
{
	if (**p != c)
		return -1;
	(*p)++;
	return 0;
}

int procmaps_parse(char *line, struct procmaps_line *out)
{
	static const char deleted[] = " (deleted)";
	const char *p = line;
	uint64_t dmaj, dmin;
	size_t len = strlen(line);

	if (len && line[len - 1] == '\n')
		line[--len] = 0;
	memset(out, 0, sizeof(*out));
	if (hex_field(&p, 16, &out->start) || expect(&p, '-') || hex_field(&p, 16, &out->end) || expect(&p, ' '))
		return -1;
	for (int i = 0; i < 4; i++, p++) {
		if (!*p || !strchr("rwxsp-", *p))
			return -1;
		out->perms[i] = *p;
	}
	if (expect(&p, ' ') || hex_field(&p, 16, &out->pgoff) || expect(&p, ' ') || hex_field(&p, 8, &dmaj) ||
	    expect(&p, ':') || hex_field(&p, 8, &dmin) || expect(&p, ' ') || dec_field(&p, &out->inode))
		return -1;
	if (*p && *p != ' ')
		return -1;
	while (*p == ' ')
		p++;
	/* a file's line names it: without a name it was cut short */
	if (out->end < out->start || (out->inode && !*p))
		return -1;
	out->dev_major = (unsigned)dmaj;
	out->dev_minor = (unsigned)dmin;
	out->path = p;
	size_t pl = strlen(p), dl = sizeof(deleted) - 1;
	if (p[0] == '/' && pl > dl && strcmp(p + pl - dl, deleted) == 0) {
		line[(size_t)(p - line) + pl - dl] = 0;
		out->deleted = 1;
	}
	return 0;
}

int procmaps_open(struct procmaps *m, pid_t pid)
{
	char path[64];

	memset(m, 0, sizeof(*m));
	m->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	m->f = fopen(path, "re");
	return m->f ? 0 : -1;
}

int procmaps_next(struct procmaps *m, struct procmaps_line *l)
{
	while (m->f && getline(&m->buf, &m->cap, m->f) > 0)
		if (procmaps_parse(m->buf, l) == 0)
			return 1;
	return 0;
}

void procmaps_close(struct procmaps *m)
{
	if (m->f)
		fclose(m->f);
	free(m->buf);
	memset(m, 0, sizeof(*m));
}

void procmaps_root(pid_t pid, char *buf, size_t size)
{
	static struct stat ours;
	static int ours_known;
	struct stat a;

	snprintf(buf, size, "/proc/%d/root", (int)pid);
	if (!ours_known)
		ours_known = stat("/", &ours) == 0;
	if (ours_known && stat(buf, &a) == 0 && a.st_dev == ours.st_dev && a.st_ino == ours.st_ino)
		buf[0] = 0;
}

void procmaps_map_files_path(pid_t pid, const struct procmaps_line *l, char *buf, size_t size)
{
	snprintf(buf, size, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, l->start, l->end);
}

/* Files refused by procmaps_open_safe: not regular (a FIFO where a debug
 * link points), counted; the first one's path kept to be named. */
static _Atomic uint64_t refused_files;
static char first_refused[256];

int procmaps_open_safe(int dirfd, const char *path, struct stat *st)
{
	struct stat own;
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (!st)
		st = &own;
	if (fd < 0)
		return -1;
	if (fstat(fd, st) == 0 && S_ISREG(st->st_mode))
		return fd;
	close(fd);
	if (atomic_fetch_add(&refused_files, 1) == 0)
		snprintf(first_refused, sizeof(first_refused), "%s", path);
	errno = EINVAL;
	return -1;
}

uint64_t procmaps_refused(const char **first)
{
	uint64_t n = atomic_load(&refused_files);

	if (first)
		*first = n ? first_refused : NULL;
	return n;
}

int procmaps_open_file(pid_t pid, const struct procmaps_line *l)
{
	char path[4200], root[64];
	int fd;

	procmaps_map_files_path(pid, l, path, sizeof(path));
	if ((fd = procmaps_open_safe(AT_FDCWD, path, NULL)) >= 0 || l->deleted || !procmaps_is_file(l))
		return fd;
	/* no map_files (not allowed to us): by name, in the process's root */
	procmaps_root(pid, root, sizeof(root));
	if (snprintf(path, sizeof(path), "%s%s", root, l->path) >= (int)sizeof(path))
		return -1;
	if ((fd = procmaps_open_safe(AT_FDCWD, path, NULL)) >= 0 || !strstr(path, "\\012"))
		return fd;
	/* the kernel shows a newline in a name as \012: the name may have one */
	char *w = path;
	for (const char *r = path; *r; w++) {
		if (strncmp(r, "\\012", 4) == 0)
			*w = '\n', r += 4;
		else
			*w = *r++;
	}
	*w = 0;
	return procmaps_open_safe(AT_FDCWD, path, NULL);
}

/* The first GNU build-id note in data into buf. */
static int note_build_id(Elf_Data *data, char *buf, size_t size)
{
	GElf_Nhdr nh;
	size_t off = 0, name_off, desc_off, next;

	while (data && (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const unsigned char *id = (const unsigned char *)data->d_buf + desc_off;
		off = next;
		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
		    memcmp((const char *)data->d_buf + name_off, "GNU", 4) != 0 || nh.n_descsz < 2 ||
		    nh.n_descsz > 64 || nh.n_descsz * 2 + 1 > size)
			continue;
		for (size_t i = 0; i < nh.n_descsz; i++)
			snprintf(buf + 2 * i, 3, "%02x", id[i]);
		return 0;
	}
	return -1;
}

int procmaps_build_id(Elf *elf, char *buf, size_t size)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t phnum = 0;
	int sections = 0;

	if (!elf)
		return -1;
	while ((scn = elf_nextscn(elf, scn))) {
		sections = 1;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE &&
		    note_build_id(elf_getdata(scn, NULL), buf, size) == 0)
			return 0;
	}
	if (sections || elf_getphdrnum(elf, &phnum) != 0)
		return -1;
	for (size_t i = 0; i < phnum; i++) {	/* no section headers: the notes' segments */
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_NOTE &&
		    note_build_id(elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR), buf,
				  size) == 0)
			return 0;
	}
	return -1;
}

/* Read the layout of pid's current image from /proc/PID/stat (fields 26-28,
 * 45-47, 50-51, as struct pid_note has them).  0 or -1. */
int procmaps_read_layout(pid_t pid, uint64_t out[PROCMAPS_LAYOUT_N])
{
	static const int field[PROCMAPS_LAYOUT_N] = { 26, 27, 28, 45, 46, 47, 50, 51 };
	char path[64], buf[1024];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	char *p = strrchr(buf, ')');	/* the comm before it may hold anything */
	if (!p)
		return -1;
	p++;
	for (int f = 3, i = 0; i < PROCMAPS_LAYOUT_N; f++) {
		char *end;
		while (*p == ' ')
			p++;
		if (!*p)
			return -1;
		if (f == field[i]) {
			out[i++] = strtoull(p, &end, 10);
			p = end;
		} else {
			p += strcspn(p, " ");
		}
	}
	return 0;
}

void *procmaps_own_vdso(size_t *len)
{
	struct procmaps pm;
	struct procmaps_line pl;
	uint64_t start = 0, end = 0;

	if (procmaps_open(&pm, getpid()) < 0)
		return NULL;
	while (procmaps_next(&pm, &pl))
		if (strcmp(pl.path, "[vdso]") == 0) {
			start = pl.start, end = pl.end;
			break;
		}
	procmaps_close(&pm);
	if (end <= start || end - start > (64u << 20))
		return NULL;
	*len = end - start;
	void *buf = marple_malloc(*len);
	memcpy(buf, (const void *)(uintptr_t)start, *len);
	return buf;
}
