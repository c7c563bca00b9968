/* stream.h — reader and writer of the marple stream format (marple-format(5)).
 *
 * A stream is a sequence of sections.  Each section is one JSON header line,
 * its records, and an optional JSON trailer line:
 *
 *   {"marple":1,"interface":"callstack","datatype":"stack",...}
 *   12#bash;main;do_work;compute
 *   {"trailer":1,"records":1,"lost":0,"dropped":0,"ended":"duration",...}
 *
 * Names are escaped with %XX so that any byte string survives (see escape.h).
 */
#ifndef MARPLE_STREAM_H
#define MARPLE_STREAM_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "escape.h"

#define MARPLE_FORMAT_VERSION 1

enum datatype { DATATYPE_NONE = 0, DATATYPE_STACK, DATATYPE_EVENT, DATATYPE_POINT };

const char *stream_datatype_name(enum datatype dt);
enum datatype stream_datatype_from_name(const char *name);

/* A key=value field of an event or point record; both decoded. */
struct field {
	struct mstr key;
	struct mstr value;
};

struct stack_rec {
	uint64_t weight;
	size_t nframes;
	struct mstr *frames;	/* root first: names, as printed */
	const uint32_t *tags;	/* tags[i]: frame i's identity tag, 0 none;
				 * NULL: no frame of the record has one */
};

/* Frame identity (marple-format(5)): a frame written "name#89abcdef" is
 * code other than the section's first of that name, told apart by the tag,
 * and described by the trailer under the same text.  Readers print the name
 * (frames[i]) and keep frames apart, or look up descriptions, by the key:
 * the name, and for a tagged frame a NUL byte and the tag's 4 bytes after
 * it (kept in the line's buffer: no copy). */
#define STREAM_TAG_TEXT_LEN 9		/* "#" and 8 hex digits */
#define STREAM_TAG_KEY_LEN 5		/* NUL and 4 bytes */
static inline struct mstr stream_frame_key(const struct stack_rec *s, size_t i)
{
	struct mstr k = s->frames[i];
	if (s->tags && s->tags[i])
		k.len += STREAM_TAG_KEY_LEN;
	return k;
}
/* The tag of key[0..len) (a stream_frame_key), 0 none; *name_len: its name's
 * length.  (A name holding a NUL byte 5 bytes from its end, only from a
 * hand-made stream, reads as tagged: its frame is merely told apart.) */
uint32_t stream_frame_key_split(const char *key, size_t len, size_t *name_len);
/* The tag that ends a frame's text as written, s[0..len) ("#" and 8
 * lower-case hex digits, not all 0), or 0: none. */
uint32_t stream_tag_of_text(const char *s, size_t len);

struct event_rec {
	uint64_t time;		/* ns, clock named in the header */
	struct mstr type;
	struct mstr track;
	size_t nfields;
	struct field *fields;
};

struct point_rec {
	double x, y;
	struct mstr info;
	size_t nfields;
	struct field *fields;
};

/* ---- reading ---- */

enum stream_item {
	STREAM_ERROR = -1,	/* malformed line; stream_reader_error() says why */
	STREAM_EOF = 0,
	STREAM_HEADER,		/* a section begins: stream_reader_header() */
	STREAM_RECORD,		/* stream_reader_stack/event/point() by datatype */
	STREAM_TRAILER,		/* the section's trailer: stream_reader_trailer() */
};

struct stream_reader;

/* name is used in messages ("<stdin>" for stdin).  The reader does not close f. */
struct stream_reader *stream_reader_new(FILE *f, const char *name);
/* The same, reading the lines of l (lines.h: no FILE in between; l is not freed). */
struct lines;
struct stream_reader *stream_reader_new_lines(struct lines *l, const char *name);
/* on: records come back from stream_reader_next unparsed (STREAM_RECORD, counted,
 * only checked to be inside a section): the caller reads stream_reader_line_text
 * and, if it cannot parse the line itself, calls stream_reader_parse_record,
 * which returns STREAM_RECORD or STREAM_ERROR as stream_reader_next would
 * have.  For the hot loops of readers that want a few fields of huge sections. */
void stream_reader_defer_records(struct stream_reader *r, int on);
enum stream_item stream_reader_parse_record(struct stream_reader *r);
/* Deferred records taken from what is read, not one stream_reader_next a
 * line: the bytes read ahead of the current line (whole lines up to the
 * last newline, and no NUL byte) when they may be records of the current
 * section, else *len is 0.  The caller takes as many record lines from the
 * start as it can read itself and says so with stream_reader_took: they
 * count as records returned; the rest comes from stream_reader_next. */
const char *stream_reader_ahead(const struct stream_reader *r, size_t *len);
void stream_reader_took(struct stream_reader *r, size_t bytes, unsigned long lines);
/* The current line as read (valid until the next call; a deferred record's
 * text, not yet decoded: it may hold NUL bytes and %XX escapes). */
struct mstr stream_reader_line_text(const struct stream_reader *r);
void stream_reader_free(struct stream_reader *r);

/* Next item.  After STREAM_ERROR the caller may go on reading (the bad line is
 * skipped) or stop.  Read errors of the FILE itself are STREAM_ERROR too. */
enum stream_item stream_reader_next(struct stream_reader *r);

const char *stream_reader_error(const struct stream_reader *r);	/* "reason" */
const char *stream_reader_name(const struct stream_reader *r);
unsigned long stream_reader_line(const struct stream_reader *r);
/* Index (0-based) of the current section, -1 before the first header. */
long stream_reader_section(const struct stream_reader *r);
enum datatype stream_reader_datatype(const struct stream_reader *r);
json_t *stream_reader_header(const struct stream_reader *r);	/* borrowed */
json_t *stream_reader_trailer(const struct stream_reader *r);	/* borrowed, NULL if none yet */
/* Records read so far in the current section. */
uint64_t stream_reader_records(const struct stream_reader *r);
const struct stack_rec *stream_reader_stack(const struct stream_reader *r);
const struct event_rec *stream_reader_event(const struct stream_reader *r);
const struct point_rec *stream_reader_point(const struct stream_reader *r);
/* The raw text of the current line (without newline), for passing through. */
struct mstr stream_reader_raw(const struct stream_reader *r);

/* Print "prog: file:line: reason" for the last error. */
void stream_reader_warn(const struct stream_reader *r);

/* The rule of marple-format(5), UNUSABLE INPUT, that every reader follows for
 * each input (a stream, folded text, perf script): an input holding a NUL
 * byte, or more malformed lines than usable records, is unusable (exit 1,
 * nothing written).  NULL when usable, else the reason, "unusable input: ...".
 * nul_line: the first line holding a NUL byte, 0 if none. */
const char *stream_unusable_why(uint64_t usable, uint64_t malformed, unsigned long nul_line);
/* The same for what the reader has read: records of any datatype are usable,
 * every STREAM_ERROR a malformed line; a NUL byte ends reading (STREAM_EOF
 * after the STREAM_ERROR that names it). */
const char *stream_reader_unusable(const struct stream_reader *r);

/* Look up a field by key; returns NULL if absent. */
const struct mstr *stream_fields_get(const struct field *f, size_t n, const char *key);

/* A time unit of weights ("ns", "us", "ms", "s"): its nanoseconds, and its
 * name spelled out in *name ("nanoseconds" ...) if name is not NULL; 0 for any
 * other unit (samples, bytes, requests ...). */
uint64_t stream_time_unit_ns(const char *unit, const char **name);

/* Helpers on headers: string or number members with defaults. */
const char *stream_header_str(json_t *hdr, const char *key, const char *dflt);
int64_t stream_header_int(json_t *hdr, const char *key, int64_t dflt);

/* ---- writing ---- */

/* A new header with marple version, interface, datatype, start_ns (monotonic),
 * wall_ns (realtime at the same moment), clock, host and kernel filled in.
 * Add "units", "labels", "options" etc. before writing it. */
json_t *stream_section_header_new(const char *interface, enum datatype dt);
/* A new trailer: records, lost, dropped, ended, end_ns (monotonic now). */
json_t *stream_section_trailer_new(uint64_t records, uint64_t lost, uint64_t dropped, const char *ended);

/* Write a JSON object as one line.  Returns 0, -1 on failure (message printed). */
int stream_write_json(FILE *f, json_t *obj);

void stream_write_stack(FILE *f, uint64_t weight, const struct mstr *frames, size_t n);
/* Frames given as C strings. */
void stream_write_stack_cstr(FILE *f, uint64_t weight, const char *const *frames, size_t n);
/* The same with each frame's identity tag (0: none; tags NULL: no frame has one). */
void stream_write_stack_tagged(FILE *f, uint64_t weight, const char *const *frames, const uint32_t *tags, size_t n);
void stream_write_event(FILE *f, uint64_t time, struct mstr type, struct mstr track,
			const struct field *fields, size_t n);
void stream_write_point(FILE *f, double x, double y, struct mstr info,
			const struct field *fields, size_t n);

/* A double in the shortest text that reads back to the same value. */
void stream_write_double(FILE *f, double v);

/* A JSON string from arbitrary bytes: valid UTF-8 is kept, other bytes are
 * %XX-escaped (as in records), so hostile names can go into headers. */
json_t *stream_json_string_bytes(const char *s, size_t len);

#endif
