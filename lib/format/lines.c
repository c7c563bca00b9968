/* lines.c — buffered line reader with peeking (see lines.h). */
#include "lines.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "util.h"

/* Reads of 256 KiB stay in a core's cache while their lines are parsed:
 * marple-fold on a 40 MB perf script took 91 ms of CPU with 4 MiB, 83 ms. */
#define LINES_BUF (1u << 18)

struct lines {
	FILE *f;
	char *name;
	char *buf;
	size_t cap, pos, end;
	unsigned long lineno;
	int eof, err;
	int unterminated;	/* the last line returned had no newline */
	int mapped;		/* buf is the whole file, mmap'ed (cap = its size) */
	size_t nul;		/* the first NUL byte in buf[pos, end), or NO_NUL */
	int line_nul;		/* the last line returned holds a NUL byte */
};

#define NO_NUL SIZE_MAX

/* The first NUL byte in buf[from, end): one memchr a read, not one a line. */
static size_t find_nul(const struct lines *l, size_t from)
{
	const char *z = memchr(l->buf + from, 0, l->end - from);
	return z ? (size_t)(z - l->buf) : NO_NUL;
}

struct lines *lines_new(FILE *f, const char *name)
{
	struct lines *l = marple_calloc(1, sizeof(*l));
	l->f = f;
	l->name = marple_strdup(name ? name : "<stdin>");
	l->cap = LINES_BUF;
	l->buf = marple_malloc(l->cap + 1);
	l->nul = NO_NUL;
	return l;
}

/* A mapped file that shrinks under us turns our next read of its lost tail
 * into SIGBUS.  That is the input's fault, not a crash: say so, naming the
 * file, and exit as for any input that cannot be read.  The message is made
 * when the file is mapped (a handler may only write(2)); the first mappings
 * are named, any later one by its program alone.  A SIGBUS elsewhere is
 * not ours to explain: it takes its default action. */
#define SHRUNK_NAMED 8
static struct shrunk_note {
	const char *start;
	size_t len;
	char msg[320];
	size_t msglen;
} shrunk[SHRUNK_NAMED];
static volatile sig_atomic_t shrunk_n, shrunk_unnamed;

static void shrunk_handler(int sig, siginfo_t *si, void *ctx)
{
	static const char unnamed[] = ": an input file shrank while it was read\n";
	const char *a = si->si_addr;

	(void)ctx;
	for (int i = 0; i < shrunk_n; i++)
		if (a >= shrunk[i].start && a < shrunk[i].start + shrunk[i].len) {
			if (write(2, shrunk[i].msg, shrunk[i].msglen) < 0) {
				/* nothing more to say it with */
			}
			_exit(EXIT_DATA);
		}
	if (shrunk_unnamed) {
		if (write(2, marple_progname, strlen(marple_progname)) < 0 || write(2, unnamed, sizeof(unnamed) - 1) < 0) {
			/* nothing more to say it with */
		}
		_exit(EXIT_DATA);
	}
	signal(sig, SIG_DFL);	/* the access is made again, and kills us */
}

static void guard_mapping(const char *start, size_t len, const char *name)
{
	static int installed;

	if (!installed) {
		struct sigaction sa = { 0 };
		sa.sa_sigaction = shrunk_handler;
		sa.sa_flags = SA_SIGINFO;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGBUS, &sa, NULL);
		installed = 1;
	}
	if (shrunk_n >= SHRUNK_NAMED) {
		shrunk_unnamed = 1;
		return;
	}
	struct shrunk_note *n = &shrunk[shrunk_n];
	int w = snprintf(n->msg, sizeof(n->msg), "%s: %s: the file shrank while it was read\n", marple_progname, name);
	n->msglen = w < 0 ? 0 : (size_t)w < sizeof(n->msg) ? (size_t)w : sizeof(n->msg) - 1;
	n->start = start;
	n->len = len;
	shrunk_n++;
}

struct lines *lines_new_whole(FILE *f, const char *name)
{
	struct stat st;
	int fd = fileno(f);
	/* only a regular file not read from yet: the mapping must be all of it */
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > SIZE_MAX / 2 || ftello(f) != 0 || lseek(fd, 0, SEEK_CUR) != 0)
		return lines_new(f, name);
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (p == MAP_FAILED)
		return lines_new(f, name);
	struct lines *l = marple_calloc(1, sizeof(*l));
	l->f = f;
	l->name = marple_strdup(name ? name : "<stdin>");
	l->buf = p;
	l->cap = l->end = (size_t)st.st_size;
	l->eof = 1;
	l->mapped = 1;
	guard_mapping(p, l->cap, l->name);
	l->nul = find_nul(l, 0);
	return l;
}

int lines_stable(const struct lines *l) { return l->mapped; }

void lines_free(struct lines *l)
{
	if (!l)
		return;
	if (l->mapped) {
		for (int i = 0; i < shrunk_n; i++)
			if (shrunk[i].start == l->buf)
				shrunk[i].len = 0;
		munmap(l->buf, l->cap);
	}
	else
		free(l->buf);
	free(l->name);
	free(l);
}

unsigned long lines_lineno(const struct lines *l) { return l->lineno; }
int lines_has_nul(const struct lines *l) { return l->line_nul; }
int lines_unterminated(const struct lines *l) { return l->unterminated; }

/* Move unread bytes to the front, grow if full, read more.  Returns bytes read. */
static size_t fill(struct lines *l)
{
	if (l->eof || l->err)
		return 0;
	if (l->pos > 0) {
		memmove(l->buf, l->buf + l->pos, l->end - l->pos);
		l->end -= l->pos;
		if (l->nul != NO_NUL)
			l->nul -= l->pos;
		l->pos = 0;
	}
	if (l->end == l->cap) {
		l->cap *= 2;
		l->buf = realloc(l->buf, l->cap + 1);
		if (!l->buf)
			marple_fatal(EXIT_DATA, "out of memory");
	}
	/* read(2): what a pipe has now, not a full buffer (stdio would wait for
	 * it); a FILE without a descriptor (fmemopen) through stdio */
	int fd = fileno(l->f);
	ssize_t n;
	do
		n = fd >= 0 ? read(fd, l->buf + l->end, l->cap - l->end)
			    : (ssize_t)fread(l->buf + l->end, 1, l->cap - l->end, l->f);
	while (n < 0 && errno == EINTR);
	if (n > 0) {
		l->end += (size_t)n;
		if (l->nul == NO_NUL)
			l->nul = find_nul(l, l->end - (size_t)n);
	} else if (n < 0 || (fd < 0 && ferror(l->f))) {
		marple_warn_at(l->name, 0, "read error: %s", strerror(n < 0 ? errno : EIO));
		l->err = 1;
	} else
		l->eof = 1;
	return n > 0 ? (size_t)n : 0;
}

int lines_next(struct lines *l, const char **s, size_t *len)
{
	char *w;
	int rc = lines_next_writable(l, &w, len);
	*s = w;
	return rc;
}

/* Return the line buf[pos, pos + len) and consume it and skip bytes more. */
static int take_line(struct lines *l, char **s, size_t *len, size_t linelen, size_t skip)
{
	*s = l->buf + l->pos;
	*len = linelen;
	l->pos += linelen + skip;
	l->lineno++;
	l->line_nul = l->nul < l->pos;
	if (l->line_nul)
		l->nul = find_nul(l, l->pos);
	return 1;
}

int lines_next_writable(struct lines *l, char **s, size_t *len)
{
	for (;;) {
		char *p = l->buf + l->pos;
		char *nl = memchr(p, '\n', l->end - l->pos);
		if (nl)
			return take_line(l, s, len, (size_t)(nl - p), 1);
		if (l->eof || l->err) {
			if (l->err)
				return -1;
			if (l->pos == l->end)
				return 0;
			l->unterminated = 1;
			return take_line(l, s, len, l->end - l->pos, 0);
		}
		fill(l);
	}
}

const char *lines_buffered(const struct lines *l, size_t *len)
{
	*len = (l->nul < l->end ? l->nul : l->end) - l->pos;
	return l->buf + l->pos;
}

void lines_skip(struct lines *l, size_t len, unsigned long n)
{
	l->pos += len;
	l->lineno += n;
	l->line_nul = 0;
}

const char *lines_peek(struct lines *l, size_t want, size_t *len)
{
	while (l->end - l->pos < want && !l->eof && !l->err)
		fill(l);
	*len = l->end - l->pos;
	return l->buf + l->pos;
}

char **lines_of_file(const char *path, const char *what, size_t *n)
{
	FILE *f = fopen(path, "r");
	char **all = NULL;
	size_t cap = 0, len;
	const char *s;
	int rc;

	if (!f)
		marple_fatal(EXIT_DATA, "%s: cannot read %s: %s", path, what, strerror(errno));
	struct lines *l = lines_new(f, path);
	*n = 0;
	while ((rc = lines_next(l, &s, &len)) > 0) {
		if (memchr(s, 0, len))	/* the line would end there, unseen */
			marple_fatal(EXIT_DATA, "%s:%zu: %s: a NUL byte in the line", path, *n + 1, what);
		all = marple_grow(all, &cap, *n + 1, sizeof(*all));
		all[(*n)++] = marple_strndup(s, len);
	}
	lines_free(l);
	fclose(f);
	if (rc < 0)
		exit(EXIT_DATA);
	return all;
}
