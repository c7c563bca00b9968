/* util.c — program name, messages, exit codes, checked numbers, safe output. */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *marple_progname = "marple";

void marple_init(int argc, char **argv)
{
	static char outbuf[1 << 16];

	(void)argc;
	if (argv && argv[0]) {
		const char *slash = strrchr(argv[0], '/');
		marple_progname = slash ? slash + 1 : argv[0];
		argv[0] = (char *)marple_progname;	/* getopt's messages: "marple-x: ...", not the path */
	}
	signal(SIGPIPE, SIG_DFL);
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
}

static void vmsg(const char *fmt, va_list ap)
{
	fflush(stdout);
	fprintf(stderr, "%s: ", marple_progname);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void marple_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

void marple_fatal(int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	exit(status);
}

void marple_warn_at(const char *file, unsigned long line, const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	if (line)
		fprintf(stderr, "%s: %s:%lu: ", marple_progname, file, line);
	else
		fprintf(stderr, "%s: %s: ", marple_progname, file);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void marple_usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	marple_usage_try();
}

/* A program named for a driver's command (-n "marple: collect") points at
 * that command's help: "marple collect -h", not "marple: collect -h". */
void marple_usage_try(void)
{
	const char *sep = strstr(marple_progname, ": ");

	if (sep)
		fprintf(stderr, "Try '%.*s %s -h' for more information.\n", (int)(sep - marple_progname),
			marple_progname, sep + 2);
	else
		fprintf(stderr, "Try '%s -h' for more information.\n", marple_progname);
	exit(EXIT_USAGE);
}

int marple_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v;

	if (!s || !*s)
		return errno = EINVAL, -1;
	if (marple_parse_u64_span(s, strlen(s), &v) < 0)
		return -1;
	if (v < min || v > max)
		return errno = ERANGE, -1;
	*out = v;	/* only on success, like the other parsers */
	return 0;
}

int marple_parse_u64_span(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 20)
		return errno = (len ? ERANGE : EINVAL), -1;
	if (len < 20) {		/* 19 digits cannot overflow: no check a digit (times, pids: millions a second) */
		for (size_t i = 0; i < len; i++) {
			unsigned d = (unsigned char)s[i] - '0';
			if (d > 9)
				return errno = EINVAL, -1;
			v = v * 10 + d;
		}
		*out = v;
		return 0;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned char)s[i] - '0';
		if (d > 9)
			return errno = EINVAL, -1;
		if (v > (UINT64_MAX - d) / 10)
			return errno = ERANGE, -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

int marple_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out)
{
	char *end;
	long long v;

	if (!s || !*s || (s[0] != '-' && (s[0] < '0' || s[0] > '9')))
		return errno = EINVAL, -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno)
		return -1;
	if (*end)
		return errno = EINVAL, -1;
	if (v < min || v > max)
		return errno = ERANGE, -1;
	*out = v;
	return 0;
}

int marple_parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	if (!s || !*s || strchr(" \t\n", s[0]))
		return errno = EINVAL, -1;
	errno = 0;
	v = strtod(s, &end);
	if (*end || end == s)
		return errno = EINVAL, -1;
	if (errno || !isfinite(v) || v < min || v > max)
		return errno = ERANGE, -1;
	*out = v;
	return 0;
}

int marple_parse_duration_ns(const char *s, uint64_t *out)
{
	static const struct { const char *suffix; double mult; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
		{ "m", 60e9 }, { "h", 3600e9 }, { "d", 86400e9 }, { "", 1e9 },
	};
	char num[64];
	size_t n = 0;
	double v;

	if (!s)
		return errno = EINVAL, -1;
	while (s[n] && (s[n] == '.' || (s[n] >= '0' && s[n] <= '9')))
		n++;
	if (n == 0 || n >= sizeof(num))
		return errno = EINVAL, -1;
	memcpy(num, s, n);
	num[n] = 0;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(s + n, units[i].suffix) == 0) {
			if (marple_parse_double(num, 0, 1e12, &v) < 0)
				return -1;
			v *= units[i].mult;
			if (v > 9.2e18)
				return errno = ERANGE, -1;
			*out = (uint64_t)v;
			return 0;
		}
	}
	return errno = EINVAL, -1;
}

uint64_t marple_opt_u64(const char *opt, const char *arg, uint64_t min, uint64_t max)
{
	uint64_t v;
	if (marple_parse_u64(arg, min, max, &v) < 0)
		marple_usage_error("%s: '%s' is not a whole number from %llu to %llu", opt, arg ? arg : "",
			    (unsigned long long)min, (unsigned long long)max);
	return v;
}

double marple_opt_double(const char *opt, const char *arg, double min, double max)
{
	double v;
	if (marple_parse_double(arg, min, max, &v) < 0)
		marple_usage_error("%s: '%s' is not a number from %g to %g", opt, arg ? arg : "", min, max);
	return v;
}

int marple_close_output(FILE *f, const char *path)
{
	int bad = fflush(f) != 0 || ferror(f);
	int saved = errno;

	if (fclose(f) != 0 && !bad) {
		bad = 1;
		saved = errno;
	}
	if (bad) {
		if (saved == EPIPE)
			exit(EXIT_DATA);
		marple_warn("%s: write error: %s", path, strerror(saved));
		return -1;
	}
	return 0;
}

void marple_warn_skipped_lines(uint64_t n)
{
	if (n)
		marple_warn("%llu malformed line%s skipped%s", (unsigned long long)n, n == 1 ? "" : "s",
			n > MARPLE_REPORT_FIRST ? " (only the first 20 shown)" : "");
}

void marple_close_stdout(void)
{
	if (marple_close_output(stdout, "<stdout>") < 0)
		exit(EXIT_DATA);
}

struct outfile {
	FILE *f;
	char *path;
	char *tmp;
	int held;		/* standard output, held in f (a tmpfile) until the commit */
};

struct outfile *marple_outfile_try_open(const char *path)
{
	struct outfile *o = marple_calloc(1, sizeof(*o));

	if (!path || strcmp(path, "-") == 0) {
		o->f = stdout;
		return o;
	}
	o->path = marple_strdup(path);
	/* A device or a pipe (-o /dev/null, -o /dev/stdout) is written as it
	 * is: a temporary file renamed over it replaced /dev/null itself. */
	struct stat st;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (!(o->f = fopen(path, "w"))) {
			marple_warn("%s: cannot open: %s", path, strerror(errno));
			goto fail;
		}
		return o;
	}
	o->tmp = marple_malloc(strlen(path) + 16);
	sprintf(o->tmp, "%s.XXXXXX", path);
	int fd = mkstemp(o->tmp);
	if (fd < 0) {
		marple_warn("%s: cannot create: %s", path, strerror(errno));
		goto fail;
	}
	/* mkstemp makes 0600; pictures are meant to be shared like any file. */
	mode_t um = umask(0);
	umask(um);
	fchmod(fd, 0666 & ~um);
	o->f = fdopen(fd, "w");
	if (!o->f) {
		marple_warn("%s: %s", path, strerror(errno));
		close(fd);
		unlink(o->tmp);
		goto fail;
	}
	return o;
fail:
	free(o->tmp);
	free(o->path);
	free(o);
	return NULL;
}

struct outfile *marple_outfile_open(const char *path)
{
	struct outfile *o = marple_outfile_try_open(path);

	/* Exit rather than return NULL: five programs used the result
	 * unchecked and crashed on an unwritable -o path. */
	if (!o)
		exit(EXIT_DATA);
	return o;
}

struct outfile *marple_outfile_open_whole(const char *path)
{
	if (path && strcmp(path, "-") != 0)
		return marple_outfile_open(path);
	struct outfile *o = marple_calloc(1, sizeof(*o));
	if (!(o->f = tmpfile()))
		marple_fatal(EXIT_DATA, "cannot make a temporary file: %s", strerror(errno));
	o->held = 1;
	return o;
}

/* A held output onto standard output; 0, or -1 after a message. */
static int outfile_release(struct outfile *o)
{
	char buf[65536];
	size_t n;
	int rc = 0;

	if (fflush(o->f) != 0 || ferror(o->f) || fseeko(o->f, 0, SEEK_SET) < 0) {
		marple_warn("<stdout>: temporary file: %s", strerror(errno));
		rc = -1;
	}
	while (rc == 0 && (n = fread(buf, 1, sizeof(buf), o->f)) > 0)
		if (fwrite(buf, 1, n, stdout) != n)
			break;
	fclose(o->f);
	if (rc == 0)
		marple_close_stdout();
	free(o);
	return rc;
}

FILE *marple_outfile_stream(struct outfile *o)
{
	return o->f;
}

/* replace: rename over path; else link, which refuses a path that exists. */
static int outfile_finish(struct outfile *o, int replace)
{
	int rc = 0;

	if (o->held)
		return outfile_release(o);
	if (!o->path) {
		marple_close_stdout();
		free(o);
		return 0;
	}
	if (marple_close_output(o->f, o->path) < 0) {
		rc = -1;
	} else if (!o->tmp) {
		/* a device or a pipe, written as it is */
	} else if (replace && rename(o->tmp, o->path) < 0) {
		marple_warn("%s: cannot rename into place: %s", o->path, strerror(errno));
		rc = -1;
	} else if (!replace && link(o->tmp, o->path) < 0) {
		marple_warn("%s: cannot write: %s", o->path, strerror(errno));
		rc = -1;
	}
	if (o->tmp && (rc < 0 || !replace))
		unlink(o->tmp);
	free(o->tmp);
	free(o->path);
	free(o);
	return rc;
}

int marple_outfile_commit(struct outfile *o)
{
	return outfile_finish(o, 1);
}

int marple_outfile_commit_new(struct outfile *o)
{
	return outfile_finish(o, 0);
}

void marple_outfile_abort(struct outfile *o)
{
	if (o->held)
		fclose(o->f);
	else if (o->path) {
		fclose(o->f);
		if (o->tmp)
			unlink(o->tmp);
	}
	free(o->tmp);
	free(o->path);
	free(o);
}

FILE *marple_open_input(const char *path)
{
	FILE *f;
	struct stat st;

	if (!path || strcmp(path, "-") == 0)
		return stdin;
	f = fopen(path, "r");
	if (!f)
		marple_fatal(EXIT_DATA, "%s: %s", path, strerror(errno));
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode))
		marple_fatal(EXIT_DATA, "%s: is a directory", path);
	return f;
}

const char *marple_input_name(const char *path)
{
	return (!path || strcmp(path, "-") == 0) ? "<stdin>" : path;
}

const char *marple_operands_name(int n, char **paths)
{
	static char buf[256];
	size_t used = 0;

	if (n <= 0)
		return "<stdin>";
	if (n == 1)
		return marple_input_name(paths[0]);
	buf[0] = 0;
	for (int i = 0; i < n && used < sizeof(buf) - 8; i++) {
		int w = snprintf(buf + used, sizeof(buf) - used, "%s%s", i ? ", " : "", marple_input_name(paths[i]));
		if (w < 0 || (size_t)w >= sizeof(buf) - used) {
			strcpy(buf + sizeof(buf) - 5, "...");
			break;
		}
		used += (size_t)w;
	}
	return buf;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int marple_write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w, len -= (size_t)w;
	}
	return 0;
}

uint64_t marple_now_monotonic_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t marple_thread_cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

uint64_t marple_now_realtime_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

void *marple_malloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		marple_fatal(EXIT_DATA, "out of memory");
	return p;
}

void *marple_calloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz ? sz : 1);
	if (!p)
		marple_fatal(EXIT_DATA, "out of memory");
	return p;
}

char *marple_strdup(const char *s)
{
	return marple_strndup(s, strlen(s));
}

char *marple_strndup(const char *s, size_t n)
{
	char *p = marple_malloc(n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *marple_asprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		marple_fatal(EXIT_DATA, "out of memory");
	return s;
}

void *marple_grow(void *buf, size_t *cap, size_t need, size_t sz)
{
	size_t c = *cap ? *cap : 16;

	if (need <= *cap)
		return buf;
	while (c < need) {
		if (c > SIZE_MAX / 2 / sz)
			marple_fatal(EXIT_DATA, "out of memory");
		c *= 2;
	}
	buf = realloc(buf, c * sz);
	if (!buf)
		marple_fatal(EXIT_DATA, "out of memory");
	*cap = c;
	return buf;
}
