/* perfmap.c — a JIT's perf map: found, trusted, read within limits and
 * flattened (see perfmap.h). */
#include "perfmap.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util.h"

void perfmap_process_note(struct perfmap_process *pp, pid_t pid, const char *root)
{
	char path[64], *line = NULL;
	size_t lcap = 0;
	struct stat ps;
	FILE *f;

	pp->pid = pid;
	pp->root_fd = -1;
	pp->nspid = pid;
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	pp->uid = stat(path, &ps) == 0 ? ps.st_uid : 0;
	if (root[0])
		pp->root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!(f = fopen(path, "re")))
		return;
	while (getline(&line, &lcap, f) > 0) {
		if (strncmp(line, "NStgid:", 7) != 0)
			continue;
		/* the last pid of the line: the innermost namespace's */
		char *last = strrchr(line, '\t');
		long v = last ? strtol(last + 1, NULL, 10) : 0;
		if (v > 0)
			pp->nspid = (pid_t)v;
		break;
	}
	free(line);
	fclose(f);
}

void perfmap_process_close(struct perfmap_process *pp)
{
	if (pp->root_fd >= 0)
		close(pp->root_fd);
	pp->root_fd = -1;
}

/* The mount fd's file is on (statx STATX_MNT_ID); 0 when unknown. */
static uint64_t mount_of(int dirfd, const char *path, int flags)
{
	struct statx sx;

	if (statx(dirfd, path, flags | AT_STATX_DONT_SYNC, STATX_MNT_ID, &sx) != 0 || !(sx.stx_mask & STATX_MNT_ID))
		return 0;
	return sx.stx_mnt_id;
}

/* pp's map in its own root: resolved inside it (its symlinks cannot lead
 * out), owned by the process's owner, on the mount of the tmp/ it is in. */
static int open_in_root(const struct perfmap_process *pp, struct stat *st)
{
	char path[64];
	struct open_how how = { .flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	struct open_how dir_how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
				    .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };

	int dir = (int)syscall(SYS_openat2, pp->root_fd, "tmp", &dir_how, sizeof(dir_how));
	if (dir < 0)
		return -1;
	snprintf(path, sizeof(path), "perf-%d.map", (int)pp->nspid);
	int fd = (int)syscall(SYS_openat2, dir, path, &how, sizeof(how));
	/* a file bind-mounted onto the map's name is on a mount of its own */
	if (fd >= 0 && (fstat(fd, st) != 0 || st->st_uid != pp->uid ||
			mount_of(fd, "", AT_EMPTY_PATH) != mount_of(dir, "", AT_EMPTY_PATH) ||
			mount_of(fd, "", AT_EMPTY_PATH) == 0)) {
		close(fd);
		fd = -1;
	}
	close(dir);
	return fd;
}

int perfmap_open(const struct perfmap_process *pp, struct stat *st)
{
	char path[64];
	int fd = -1;

	if (pp->root_fd >= 0) {
		if ((fd = open_in_root(pp, st)) < 0)
			return -1;
	}
	for (int i = 0; fd < 0 && i < 2; i++) {
		pid_t pid = i == 0 ? pp->pid : pp->nspid;
		if (i == 1 && pid == pp->pid)
			break;
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
		if (fd >= 0 && (fstat(fd, st) < 0 || (st->st_uid != 0 && st->st_uid != pp->uid))) {
			close(fd);
			fd = -1;
		}
	}
	if (fd >= 0 && !S_ISREG(st->st_mode)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* One line of a perf map, in the order of the file. */
struct perfmap_line {
	uint64_t start, end;
	size_t line;		/* its index: a later line wins */
	const char *name;	/* name_fn's */
};

static int perfmap_line_cmp(const void *a, const void *b)
{
	const struct perfmap_line *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Max-heap of lines by line index (the newest on top). */
static void heap_push(const struct perfmap_line **h, size_t *n, const struct perfmap_line *l)
{
	size_t i = (*n)++;
	while (i > 0 && h[(i - 1) / 2]->line < l->line) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = l;
}

static void heap_pop(const struct perfmap_line **h, size_t *n)
{
	const struct perfmap_line *last = h[--*n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1]->line > h[c]->line)
			c++;
		if (h[c]->line <= last->line)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = last;
}

/* Turn the lines of a map into disjoint ranges, each named after the newest
 * line covering it (a JIT frees code and puts other code there; the JVM lists
 * a method again at each tier): a sweep over the lines' ends, with the
 * lines covering the current point in a heap by age. */
static void flatten(struct perfmap *pm, struct perfmap_line *l, size_t n)
{
	uint64_t *cuts = marple_malloc((2 * n + 1) * sizeof(*cuts));
	const struct perfmap_line **heap = marple_malloc((n + 1) * sizeof(*heap));
	size_t ncuts = 0, nheap = 0, next = 0, cap = 0;

	qsort(l, n, sizeof(*l), perfmap_line_cmp);
	for (size_t i = 0; i < n; i++) {
		cuts[ncuts++] = l[i].start;
		cuts[ncuts++] = l[i].end;
	}
	qsort(cuts, ncuts, sizeof(*cuts), u64_cmp);
	for (size_t c = 0; c + 1 < ncuts; c++) {
		uint64_t at = cuts[c], to = cuts[c + 1];
		if (at == to)
			continue;
		while (next < n && l[next].start <= at)
			heap_push(heap, &nheap, &l[next++]);
		while (nheap && heap[0]->end <= at)
			heap_pop(heap, &nheap);
		if (!nheap)
			continue;
		const struct perfmap_line *w = heap[0];
		struct perfmap_sym *prev = pm->n ? &pm->syms[pm->n - 1] : NULL;
		if (prev && prev->addr + prev->size == at && prev->origin == w->start && prev->name == w->name) {
			prev->size += to - at;	/* the same line goes on */
			continue;
		}
		pm->syms = marple_grow(pm->syms, &cap, pm->n + 1, sizeof(*pm->syms));
		pm->syms[pm->n++] = (struct perfmap_sym){ at, to - at, w->start, w->name };
	}
	free(cuts);
	free(heap);
}


/* The next line of f into buf (newline dropped, at most size - 1 bytes of
 * it kept, NUL-terminated), taking its bytes from *budget: its whole length,
 * or -1 at the end (or once the budget is spent). */
static long next_line(FILE *f, char *buf, size_t size, uint64_t *budget)
{
	long len = 0;
	int ch;

	while (*budget > 0 && (ch = getc_unlocked(f)) != EOF) {
		--*budget;
		if (ch == '\n') {
			buf[len < (long)size ? len : (long)size - 1] = 0;
			return len;
		}
		if (len < (long)size - 1)
			buf[len] = (char)ch;
		len++;
	}
	if (len == 0)
		return -1;
	buf[len < (long)size ? len : (long)size - 1] = 0;
	return len;
}

/* Cut name to PERFMAP_NAME_MAX bytes, not inside a UTF-8 sequence: 1 if cut. */
static int cut_name(char *name)
{
	size_t n = strnlen(name, PERFMAP_NAME_MAX + 1);

	if (n <= PERFMAP_NAME_MAX)
		return 0;
	n = PERFMAP_NAME_MAX;
	while (n > 0 && ((unsigned char)name[n] & 0xc0) == 0x80)
		n--;
	name[n] = 0;
	return 1;
}

/* "START SIZE name" into *out; 0, or -1 if the line is not one. */
static int parse_line(char *line, struct perfmap_line *out)
{
	char *e1, *e2;
	uint64_t start, size;

	if (!((line[0] >= '0' && line[0] <= '9') || (line[0] >= 'a' && line[0] <= 'f') ||
	      (line[0] >= 'A' && line[0] <= 'F')))
		return -1;
	errno = 0;
	start = strtoull(line, &e1, 16);
	if (e1 == line || *e1 != ' ' || errno)
		return -1;
	size = strtoull(e1 + 1, &e2, 16);
	if (e2 == e1 + 1 || *e2 != ' ' || errno || size == 0 || start + size < start)
		return -1;
	out->start = start;
	out->end = start + size;
	out->name = e2 + 1;
	return 0;
}

struct perfmap *perfmap_read(FILE *f, const struct stat *st, perfmap_name_fn name_fn, void *ctx)
{
	struct perfmap *pm = marple_calloc(1, sizeof(*pm));
	struct perfmap_line *lines = NULL, l;
	uint64_t budget = PERFMAP_BYTES_MAX;
	size_t cap = 0, n = 0;
	char *buf = marple_malloc(PERFMAP_LINE_MAX + 1);
	long len;

	if (st) {
		pm->dev = st->st_dev;
		pm->ino = st->st_ino;
		pm->size = st->st_size;
		pm->mtime = st->st_mtim;
	}
	while ((len = next_line(f, buf, PERFMAP_LINE_MAX + 1, &budget)) >= 0) {
		if (n >= PERFMAP_LINES_MAX) {
			pm->skipped.lines_unread++;
			continue;
		}
		if (len > PERFMAP_LINE_MAX)
			pm->skipped.long_lines++;
		if (parse_line(buf, &l) != 0) {
			pm->skipped.bad_lines++;
			continue;
		}
		pm->skipped.long_names += cut_name((char *)l.name);
		l.line = n;
		l.name = name_fn(ctx, l.name);
		lines = marple_grow(lines, &cap, n + 1, sizeof(*lines));
		lines[n++] = l;
	}
	if (budget == 0 && st && st->st_size > (off_t)PERFMAP_BYTES_MAX)
		pm->skipped.bytes_unread = (uint64_t)st->st_size - PERFMAP_BYTES_MAX;
	else if (budget == 0 && getc_unlocked(f) != EOF)
		pm->skipped.bytes_unread = 1;	/* at least: it grows as we read */
	free(buf);
	fclose(f);
	if (n)
		flatten(pm, lines, n);
	free(lines);
	return pm;
}

int perfmap_unchanged(const struct perfmap *pm, const struct stat *st)
{
	return pm->dev == st->st_dev && pm->ino == st->st_ino && pm->size == st->st_size &&
	       pm->mtime.tv_sec == st->st_mtim.tv_sec && pm->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

const struct perfmap_sym *perfmap_find(const struct perfmap *pm, uint64_t addr)
{
	size_t lo = 0, hi = pm ? pm->n : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pm->syms[mid].addr + pm->syms[mid].size <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < (pm ? pm->n : 0) && addr >= pm->syms[lo].addr)
		return &pm->syms[lo];
	return NULL;
}

void perfmap_free(struct perfmap *pm)
{
	if (!pm)
		return;
	free(pm->syms);
	free(pm);
}
