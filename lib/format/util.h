/* util.h — what every marple program needs: its name in messages, grep-like
 * exit codes, checked number parsing, safe output and clocks. */
#ifndef MARPLE_UTIL_H
#define MARPLE_UTIL_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdnoreturn.h>

/* Exit codes, as grep and jq use them. */
enum { EXIT_OK = 0, EXIT_DATA = 1, EXIT_USAGE = 2 };

extern const char *marple_progname;

/* Set marple_progname from argv[0], make SIGPIPE end us quietly, give stdout a big buffer. */
void marple_init(int argc, char **argv);

/* "prog: message" on stderr; marple_fatal() exits with status. */
void marple_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
noreturn void marple_fatal(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "prog: file:line: reason"; line 0 leaves the line out. */
void marple_warn_at(const char *file, unsigned long line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Malformed lines: the first MARPLE_REPORT_FIRST are named one by one as they
 * are met, then marple_warn_skipped_lines() says how many were skipped in all. */
#define MARPLE_REPORT_FIRST 20
void marple_warn_skipped_lines(uint64_t n);
/* Usage error: "prog: reason" + "Try 'prog -h'." and exit 2. */
noreturn void marple_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* After getopt has complained: "Try 'prog -h'." and exit 2. */
noreturn void marple_usage_try(void);

/* Checked parsing of whole strings: no sign where none is allowed, no trailing
 * garbage, range enforced.  Return 0 on success, -1 (errno set) otherwise. */
int marple_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
int marple_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out);
int marple_parse_double(const char *s, double min, double max, double *out);
/* Like marple_parse_u64 on a counted, unterminated span (for record fields). */
int marple_parse_u64_span(const char *s, size_t len, uint64_t *out);
/* Durations: "10", "10s", "500ms", "2m", "1h" -> nanoseconds. */
int marple_parse_duration_ns(const char *s, uint64_t *out);

/* Option helpers for getopt loops: parse or exit 2 naming the option. */
uint64_t marple_opt_u64(const char *opt, const char *arg, uint64_t min, uint64_t max);
double marple_opt_double(const char *opt, const char *arg, double min, double max);

/* Flush and close stdout; on any write error print "write error" and exit 1.
 * A closed pipe downstream (EPIPE) exits quietly with status 1 too. */
void marple_close_stdout(void);
/* Same check for a FILE we wrote; returns 0 or -1 after a message naming path. */
int marple_close_output(FILE *f, const char *path);

/* Output that appears only when complete: writes to a temporary file beside
 * path (mkstemp) and renames it over path at commit.  path "-" or NULL means
 * stdout; a path that is not a regular file (/dev/null, a pipe) is written
 * directly. */
struct outfile;
struct outfile *marple_outfile_open(const char *path);	/* exits 1 with a message if it cannot */
struct outfile *marple_outfile_try_open(const char *path);	/* NULL after a message if it cannot */
/* The same, but standard output too is written only at the commit (held in an
 * unlinked temporary file until then): for programs that write as they read
 * and may find the input unusable at its end (marple-format(5)). */
struct outfile *marple_outfile_open_whole(const char *path);
FILE *marple_outfile_stream(struct outfile *o);
int marple_outfile_commit(struct outfile *o);	/* 0, or -1 after a message */
/* The same, but never over a file that exists by then (link(2), not rename). */
int marple_outfile_commit_new(struct outfile *o);
void marple_outfile_abort(struct outfile *o);	/* removes the temporary file */

/* Open an input operand: "-" or NULL is stdin.  Exits 1 with a message on failure. */
FILE *marple_open_input(const char *path);
const char *marple_input_name(const char *path);	/* "-"/NULL -> "<stdin>" */
/* What to call a program's input operands in a message about all of them:
 * "<stdin>", the one file, or the first names joined by ", ". */
const char *marple_operands_name(int n, char **paths);

/* buf[0..len) written whole to fd (through EINTR and short writes): 0, or -1. */
int marple_write_full(int fd, const void *buf, size_t len);
uint64_t marple_now_monotonic_ns(void);
/* This thread's CPU time, ns: what a piece of work cost, apart from waiting
 * for a CPU on a loaded machine. */
uint64_t marple_thread_cpu_ns(void);
uint64_t marple_now_realtime_ns(void);

/* Grow *buf to hold at least need elements of size sz; exits 1 on out-of-memory. */
void *marple_grow(void *buf, size_t *cap, size_t need, size_t sz);
void *marple_malloc(size_t n);
void *marple_calloc(size_t n, size_t sz);
char *marple_strdup(const char *s);
char *marple_strndup(const char *s, size_t n);
/* A new string printed with fmt (free it); exits 1 on out-of-memory. */
char *marple_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
