/* lines.h — fast line reading for text inputs (perf script, folded stacks):
 * one big buffer, memchr for newlines, no allocation per line.  A reader can
 * be peeked before deciding how to parse, and handed on as a FILE. */
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

/* Did the last line returned end the input without a newline? */
int lines_unterminated(const struct lines *l);

/* Line number of the last line returned (1-based). */
unsigned long lines_lineno(const struct lines *l);
const char *lines_name(const struct lines *l);

/* Make at least want bytes (or all of a shorter input) visible without
 * consuming them; returns the buffered unread bytes. */
const char *lines_peek(struct lines *l, size_t want, size_t *len);

/* A FILE that yields the unread buffered bytes, then the rest of the input
 * (for parsers that want a FILE, e.g. the stream reader).  The lines object
 * must outlive it; fclose it when done. */
FILE *lines_as_file(struct lines *l);

#endif
