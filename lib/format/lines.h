/* lines.h — the one line reader of every text input (marple streams, perf
 * script, folded stacks, "time value" lines): one big buffer, memchr for
 * newlines, no allocation per line.  A reader can be peeked before deciding
 * how to parse (the stream reader takes it then: stream_reader_new_lines).
 * It reads the FILE's descriptor with read(2), so a pipe's lines come as soon
 * as they are written; the FILE must not have been read through stdio. */
#ifndef MARPLE_LINES_H
#define MARPLE_LINES_H

#include <stddef.h>
#include <stdio.h>

struct lines;

/* Read lines from f (not closed by lines_free).  name is for messages. */
struct lines *lines_new(FILE *f, const char *name);
void lines_free(struct lines *l);
/* The same, but a regular file is mapped whole (no copying, no buffer), so
 * that the lines returned stay valid until lines_free: see lines_stable.
 * (A file truncated meanwhile is beyond help: SIGBUS.) */
struct lines *lines_new_whole(FILE *f, const char *name);
/* Do the lines returned stay valid until lines_free? */
int lines_stable(const struct lines *l);

/* Next line without its newline (a final line without one counts too).
 * Returns 1 and sets *s and *len (valid until the next call), 0 at end of input,
 * -1 on a read error (message printed). */
int lines_next(struct lines *l, const char **s, size_t *len);
/* The same, for a reader that ends the line in place: the line and the byte
 * after it (its newline, or a spare byte) may be written, unless the lines
 * are stable (mapped: lines_stable), when they are read-only. */
int lines_next_writable(struct lines *l, char **s, size_t *len);

/* The unread bytes already read, up to the first NUL byte (nothing more
 * is read): for a reader that takes many lines at once (lines_skip). */
const char *lines_buffered(const struct lines *l, size_t *len);
/* Consume len bytes of lines_buffered's, n whole lines (each with its
 * newline), as n calls of lines_next would. */
void lines_skip(struct lines *l, size_t len, unsigned long n);

/* Does the last line returned hold a NUL byte?  (Found a read at a time,
 * not a line at a time.) */
int lines_has_nul(const struct lines *l);
/* Did the last line returned end the input without a newline? */
int lines_unterminated(const struct lines *l);

/* Line number of the last line returned (1-based). */
unsigned long lines_lineno(const struct lines *l);

/* Make at least want bytes (or all of a shorter input) visible without
 * consuming them; returns the buffered unread bytes. */
const char *lines_peek(struct lines *l, size_t want, size_t *len);

/* Every line of a small file (the registry, a configuration), each a string
 * of its own, *n of them; exits 1 saying what could not be read, or which
 * line holds a NUL byte. */
char **lines_of_file(const char *path, const char *what, size_t *n);

#endif
