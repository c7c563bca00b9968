/* stream.c — streaming reader and writer of marple sections (marple-format(5)).
 * The reader keeps one line and one record at a time: memory is O(record). */
#include "stream.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "lines.h"
#include "numparse.h"
#include "util.h"

#define MAX_LINE (64u << 20)

static const char *const datatype_names[] = { "none", "stack", "event", "point" };

const char *stream_datatype_name(enum datatype dt)
{
	return (unsigned)dt < 4 ? datatype_names[dt] : "none";
}

enum datatype stream_datatype_from_name(const char *name)
{
	for (int i = 1; i < 4; i++)
		if (name && strcmp(name, datatype_names[i]) == 0)
			return (enum datatype)i;
	return DATATYPE_NONE;
}

struct stream_reader {
	struct lines *lines;	/* the one line reader (lib/format/lines.h) */
	int own_lines;		/* made by stream_reader_new: freed with the reader */
	int defer;		/* records are returned unparsed (stream_reader_defer_records) */
	int parsed;		/* the current record has been parsed */
	char *name;
	char *line;		/* the current line: in the lines' buffer, NUL-terminated
				 * there, or (mapped lines are read-only) a copy in own */
	char *own;
	size_t cap;
	size_t len;
	unsigned long lineno;
	long section;
	enum datatype dt;
	int have_trailer;
	uint64_t records;
	unsigned long rejected_header;	/* line of the header just rejected: its records are malformed */
	unsigned long nul_line;	/* the first line holding a NUL byte: reading stops there */
	uint64_t malformed, usable;	/* lines returned as STREAM_ERROR, and records not */
	json_t *header;
	json_t *trailer;
	char err[256];
	int escaped;		/* the record holds a '%' (decoding changes it) */
	const char *rawp;	/* the line before decoding: line, or raw when escaped */
	char *raw;		/* a copy of the line before decoding */
	size_t rawcap, rawlen;
	struct stack_rec stack;
	size_t framecap;
	uint32_t *tags;		/* stack.tags when a frame of the record has one */
	size_t tagcap, ntags;
	struct event_rec event;
	struct point_rec point;
	struct field *fields;
	size_t fieldcap;
};

struct stream_reader *stream_reader_new_lines(struct lines *l, const char *name)
{
	struct stream_reader *r = marple_calloc(1, sizeof(*r));
	r->lines = l;
	r->name = marple_strdup(name ? name : "<stdin>");
	r->section = -1;
	return r;
}

struct stream_reader *stream_reader_new(FILE *f, const char *name)
{
	struct stream_reader *r = stream_reader_new_lines(lines_new(f, name), name);
	r->own_lines = 1;
	return r;
}

void stream_reader_defer_records(struct stream_reader *r, int on)
{
	r->defer = on;
}

void stream_reader_free(struct stream_reader *r)
{
	if (!r)
		return;
	json_decref(r->header);
	json_decref(r->trailer);
	free(r->name);
	free(r->own);
	if (r->own_lines)
		lines_free(r->lines);
	free(r->raw);
	free(r->stack.frames);
	free(r->tags);
	free(r->fields);
	free(r);
}

static enum stream_item fail(struct stream_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static enum stream_item fail(struct stream_reader *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	return STREAM_ERROR;
}

static int decode(struct stream_reader *r, char *s, size_t len, struct mstr *out, const char *what)
{
	size_t bad;
	long n = escape_decode_inplace(s, len, &bad);
	if (n < 0) {
		fail(r, "bad %%XX escape in %s at column %zu", what, (size_t)(s - r->line) + bad + 1);
		return -1;
	}
	*out = (struct mstr){ s, (size_t)n };
	return 0;
}

/* One field of split_fields: key=value from p to q, eq its first '=' (NULL: none). */
static int add_field(struct stream_reader *r, size_t *n, char *p, char *q, char *eq)
{
	if (!eq) {
		fail(r, "field %zu is not key=value", *n + 1);
		return -1;
	}
	if (*n >= r->fieldcap)
		r->fields = marple_grow(r->fields, &r->fieldcap, *n + 1, sizeof(*r->fields));
	r->fields[*n].key = (struct mstr){ p, (size_t)(eq - p) };
	r->fields[(*n)++].value = (struct mstr){ eq + 1, (size_t)(q - eq - 1) };
	return 0;
}

/* The fields of a line without %XX escapes (c the comma before the first):
 * an event has some ten of them, millions of events, so where the CPU can
 * the commas and '=' are found 16 bytes a step, a bit for each. */
static int split_fields(struct stream_reader *r, char *c, char *e, size_t *nout)
{
	size_t n = 0, len = (size_t)(e - c), start = 1;
	char *eq = NULL;

#ifdef __SSE2__
	const __m128i comma = _mm_set1_epi8(','), equals = _mm_set1_epi8('=');
	for (size_t i = 0; i < len; i += 16) {
		__m128i v;
		if (i + 16 <= len) {
			v = _mm_loadu_si128((const __m128i *)(const void *)(c + i));
		} else {	/* the tail, padded with NULs (neither ',' nor '=') */
			char tail[16] = { 0 };
			memcpy(tail, c + i, len - i);
			v = _mm_loadu_si128((const __m128i *)(const void *)tail);
		}
		unsigned cm = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, comma));
		unsigned em = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, equals));
		if (i == 0)
			cm &= ~1u;	/* the comma before the first field */
		for (unsigned all = cm | em; all; all &= all - 1) {
			unsigned bit = all & -all;
			size_t at = i + (size_t)__builtin_ctz(all);
			if (em & bit) {
				if (!eq)
					eq = c + at;
			} else {
				if (add_field(r, &n, c + start, c + at, eq) < 0)
					return -1;
				start = at + 1;
				eq = NULL;
			}
		}
	}
#else
	for (size_t i = 1; i < len; i++) {
		if (c[i] == '=' && !eq) {
			eq = c + i;
		} else if (c[i] == ',') {
			if (add_field(r, &n, c + start, c + i, eq) < 0)
				return -1;
			start = i + 1;
			eq = NULL;
		}
	}
#endif
	if (start == len) {
		fail(r, "empty field at end of record");
		return -1;
	}
	if (add_field(r, &n, c + start, e, eq) < 0)
		return -1;
	*nout = n;
	return 0;
}

/* Parse the ",k=v,k=v..." after a record's fixed columns into r->fields: c is
 * the comma before the first field (NULL: no fields), e the end of the line. */
static int parse_fields(struct stream_reader *r, char *c, char *e, size_t *nout)
{
	size_t n = 0;

	*nout = 0;
	if (c && !r->escaped)
		return split_fields(r, c, e, nout);
	while (c) {
		char *p = c + 1, *q = p, *eq = NULL;
		int escaped = 0;
		if (p == e) {
			fail(r, "empty field at end of record");
			return -1;
		}
		/* one pass: the field's end, its first '=', any %XX to decode
		 * (fields are short: a loop beats three memchr calls) */
		for (; q < e && *q != ','; q++) {
			if (*q == '=' && !eq)
				eq = q;
			else if (*q == '%')
				escaped = 1;
		}
		c = q < e ? q : NULL;
		if (!eq) {
			fail(r, "field %zu is not key=value", n + 1);
			return -1;
		}
		r->fields = marple_grow(r->fields, &r->fieldcap, n + 1, sizeof(*r->fields));
		if (!escaped) {
			r->fields[n].key = (struct mstr){ p, (size_t)(eq - p) };
			r->fields[n].value = (struct mstr){ eq + 1, (size_t)(q - eq - 1) };
		} else if (decode(r, p, (size_t)(eq - p), &r->fields[n].key, "field key") < 0 ||
			   decode(r, eq + 1, (size_t)(q - eq - 1), &r->fields[n].value, "field value") < 0)
			return -1;
		n++;
	}
	*nout = n;
	return 0;
}

static int parse_number(struct stream_reader *r, const char *s, size_t len, double *out, const char *what)
{
	char buf[64];
	char *end;

	if (len == 0 || len >= sizeof(buf)) {
		fail(r, "%s is %s", what, len ? "too long" : "missing");
		return -1;
	}
	if (numparse_fast(s, len, out))	/* plain decimals: exact, no strtod */
		return 0;
	memcpy(buf, s, len);
	buf[len] = 0;
	errno = 0;
	*out = strtod(buf, &end);
	if (*end || end == buf || buf[0] == ' ' || buf[0] == '+' || (buf[0] != '-' && buf[0] != '.' && (buf[0] < '0' || buf[0] > '9'))) {
		fail(r, "%s '%s' is not a number", what, buf);
		return -1;
	}
	if (!isfinite(*out)) {
		fail(r, "%s '%s' is out of range", what, buf);
		return -1;
	}
	return 0;
}

static inline void add_frame(struct stream_reader *r, size_t *n, char *s, size_t len)
{
	if (*n >= r->framecap)	/* the call only when the array grows */
		r->stack.frames = marple_grow(r->stack.frames, &r->framecap, *n + 1, sizeof(struct mstr));
	r->stack.frames[(*n)++] = (struct mstr){ s, len };
}

uint32_t stream_tag_of_text(const char *s, size_t len)
{
	uint32_t tag = 0;

	if (len < STREAM_TAG_TEXT_LEN || s[len - STREAM_TAG_TEXT_LEN] != '#')
		return 0;
	for (const char *p = s + len - STREAM_TAG_TEXT_LEN + 1; p < s + len; p++) {
		unsigned d = *p >= '0' && *p <= '9' ? (unsigned)(*p - '0') : *p >= 'a' && *p <= 'f' ? (unsigned)(*p - 'a' + 10) : 16;
		if (d > 15)
			return 0;
		tag = tag << 4 | d;
	}
	return tag;
}

/* stack.tags filled with 0 (no tag) up to frame n. */
static void tags_upto(struct stream_reader *r, size_t n)
{
	if (!r->stack.tags)
		r->ntags = 0;
	r->tags = marple_grow(r->tags, &r->tagcap, n, sizeof(*r->tags));
	if (n > r->ntags)
		memset(r->tags + r->ntags, 0, (n - r->ntags) * sizeof(*r->tags));
	if (n > r->ntags)
		r->ntags = n;
	r->stack.tags = r->tags;
}

/* Frame i's name is its decoded text without the tag's: the tag's 5 key
 * bytes go after the name (stream_frame_key), in the room the 9 bytes of
 * its text leave. */
static void set_tag(struct stream_reader *r, size_t i, uint32_t tag)
{
	tags_upto(r, i + 1);
	struct mstr *f = &r->stack.frames[i];
	char *key = (char *)f->s;
	key[f->len] = 0;
	memcpy(key + f->len + 1, &tag, sizeof(tag));
	r->tags[i] = tag;
}

/* The line as read, copied before it is changed in place (stream_reader_raw). */
static void keep_raw(struct stream_reader *r)
{
	r->raw = marple_grow(r->raw, &r->rawcap, r->len + 1, 1);
	memcpy(r->raw, r->line, r->len + 1);
	r->rawp = r->raw;
}

/* The tags of a record without %XX escapes whose frames hold a '#'. */
static void split_tags(struct stream_reader *r)
{
	keep_raw(r);
	for (size_t i = 0; i < r->stack.nframes; i++) {
		uint32_t tag = stream_tag_of_text(r->stack.frames[i].s, r->stack.frames[i].len);
		if (tag) {
			r->stack.frames[i].len -= STREAM_TAG_TEXT_LEN;
			set_tag(r, i, tag);
		}
	}
	if (r->stack.tags)
		tags_upto(r, r->stack.nframes);
}

/* The frames of a stack without %XX escapes: 16 bytes a step where the CPU
 * can, a bit for each ';' (a big profile has tens of millions of frames, and a
 * call of memchr for each cost more than the search), and a '#' noted (a
 * tag: split_tags). */
static enum stream_item split_frames(struct stream_reader *r, char *p, char *e)
{
	size_t n = 0, len = (size_t)(e - p), start = 0, i = 0;
	unsigned hashes = 0;

#ifdef __SSE2__
	const __m128i semi = _mm_set1_epi8(';'), hash = _mm_set1_epi8('#');
	for (; i + 16 <= len; i += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
		unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, semi));
		hashes |= (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, hash));
		while (m) {
			size_t at = i + (size_t)__builtin_ctz(m);
			m &= m - 1;
			add_frame(r, &n, p + start, at - start);
			start = at + 1;
		}
	}
#endif
	for (; i < len; i++)
		if (p[i] == ';') {
			add_frame(r, &n, p + start, i - start);
			start = i + 1;
		} else {
			hashes |= p[i] == '#';
		}
	add_frame(r, &n, p + start, len - start);
	r->stack.nframes = n;
	if (hashes)
		split_tags(r);
	return STREAM_RECORD;
}

static enum stream_item parse_stack(struct stream_reader *r, char *p, char *e)
{
	char *hash = memchr(p, '#', (size_t)(e - p));
	size_t n = 0;

	if (!hash)
		return fail(r, "stack record without '#' between weight and frames");
	if (marple_parse_u64_span(p, (size_t)(hash - p), &r->stack.weight) < 0)
		return fail(r, "stack weight '%.*s' is not a whole number below 2^64",
			    (int)((hash - p) > 40 ? 40 : (hash - p)), p);
	p = hash + 1;
	r->stack.tags = NULL;
	if (!r->escaped)
		return split_frames(r, p, e);
	for (;;) {
		char *semi = memchr(p, ';', (size_t)(e - p));
		char *fe = semi ? semi : e;
		/* the tag is read before decoding: "%23" is a '#' of the name */
		uint32_t tag = stream_tag_of_text(p, (size_t)(fe - p));
		r->stack.frames = marple_grow(r->stack.frames, &r->framecap, n + 1, sizeof(struct mstr));
		if (decode(r, p, (size_t)(fe - p) - (tag ? STREAM_TAG_TEXT_LEN : 0), &r->stack.frames[n], "frame") < 0)
			return STREAM_ERROR;
		r->stack.nframes = ++n;
		if (tag)
			set_tag(r, n - 1, tag);
		if (!semi)
			break;
		p = semi + 1;
	}
	if (r->stack.tags)
		tags_upto(r, n);
	return STREAM_RECORD;
}

static enum stream_item parse_event(struct stream_reader *r, char *p, char *e)
{
	char *c1 = memchr(p, ',', (size_t)(e - p));
	char *c2, *c3;

	if (!c1)
		return fail(r, "event record needs time,type,track");
	if (marple_parse_u64_span(p, (size_t)(c1 - p), &r->event.time) < 0)
		return fail(r, "event time '%.*s' is not a whole number of nanoseconds",
			    (int)((c1 - p) > 40 ? 40 : (c1 - p)), p);
	c2 = memchr(c1 + 1, ',', (size_t)(e - c1 - 1));
	if (!c2)
		return fail(r, "event record needs time,type,track");
	c3 = memchr(c2 + 1, ',', (size_t)(e - c2 - 1));
	if (c1 + 1 == c2)
		return fail(r, "event type is empty");
	if (decode(r, c1 + 1, (size_t)(c2 - c1 - 1), &r->event.type, "event type") < 0 ||
	    decode(r, c2 + 1, (size_t)((c3 ? c3 : e) - c2 - 1), &r->event.track, "event track") < 0)
		return STREAM_ERROR;
	if (parse_fields(r, c3, e, &r->event.nfields) < 0)
		return STREAM_ERROR;
	r->event.fields = r->fields;
	return STREAM_RECORD;
}

static enum stream_item parse_point(struct stream_reader *r, char *p, char *e)
{
	char *c1 = memchr(p, ',', (size_t)(e - p));
	char *c2, *c3;

	if (!c1 || !(c2 = memchr(c1 + 1, ',', (size_t)(e - c1 - 1))))
		return fail(r, "point record needs x,y,info");
	if (parse_number(r, p, (size_t)(c1 - p), &r->point.x, "x") < 0 ||
	    parse_number(r, c1 + 1, (size_t)(c2 - c1 - 1), &r->point.y, "y") < 0)
		return STREAM_ERROR;
	c3 = memchr(c2 + 1, ',', (size_t)(e - c2 - 1));
	if (decode(r, c2 + 1, (size_t)((c3 ? c3 : e) - c2 - 1), &r->point.info, "info") < 0)
		return STREAM_ERROR;
	if (parse_fields(r, c3, e, &r->point.nfields) < 0)
		return STREAM_ERROR;
	r->point.fields = r->fields;
	return STREAM_RECORD;
}

/* The members marple-format(5) documents, checked once here so that no reader
 * takes "start_ns":"x" or "units":[1,2] for something: NULL, or what is wrong
 * (naming the member). */
static const char *header_member_error(json_t *h)
{
	static const char *const times[] = { "start_ns", "wall_ns" };
	static const char *const strings[] = { "clock", "host", "kernel" };
	static const char *const names[] = { "units", "labels" };
	static char why[128];
	json_t *v, *m;
	const char *k;

	for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++)
		if ((v = json_object_get(h, times[i])) && (!json_is_integer(v) || json_integer_value(v) < 0)) {
			snprintf(why, sizeof(why), "header \"%s\" is not a whole number of nanoseconds (0 to 2^63-1)",
				 times[i]);
			return why;
		}
	for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++)
		if ((v = json_object_get(h, strings[i])) && !json_is_string(v)) {
			snprintf(why, sizeof(why), "header \"%s\" is not a string", strings[i]);
			return why;
		}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(v = json_object_get(h, names[i])))
			continue;
		int ok = json_is_object(v);
		if (ok)
			json_object_foreach(v, k, m)
				ok = ok && json_is_string(m);
		if (!ok) {
			snprintf(why, sizeof(why), "header \"%s\" is not an object of strings", names[i]);
			return why;
		}
	}
	if ((v = json_object_get(h, "options")) && !json_is_object(v))
		return "header \"options\" is not an object";
	if ((v = json_object_get(h, "timed")) &&
	    (!json_is_string(v) || (strcmp(json_string_value(v), "stacks") && strcmp(json_string_value(v), "samples"))))
		return "header \"timed\" is neither \"stacks\" nor \"samples\"";
	return NULL;
}

/* A JSON line that is not a valid header or trailer: the records after a
 * rejected header belong to no known section (marked in parse_json_line). */
static enum stream_item parse_json_line(struct stream_reader *r)
{
	json_error_t jerr;
	json_t *obj = json_loadb(r->line, r->len, JSON_REJECT_DUPLICATES, &jerr);

	if (!obj) {
		r->rejected_header = r->lineno;
		return fail(r, "bad JSON header or trailer: %s (column %d)", jerr.text, jerr.column);
	}
	if (!json_is_object(obj)) {
		json_decref(obj);
		r->rejected_header = r->lineno;
		return fail(r, "header or trailer is not a JSON object");
	}
	if (json_object_get(obj, "trailer")) {
		if (r->rejected_header) {
			json_decref(obj);
			return fail(r, "trailer of the section whose header (line %lu) was rejected",
				    r->rejected_header);
		}
		if (r->section < 0) {
			json_decref(obj);
			return fail(r, "trailer before any section header");
		}
		if (r->have_trailer) {
			json_decref(obj);
			return fail(r, "second trailer in one section");
		}
		json_t *n = json_object_get(obj, "records");
		if (n && (!json_is_integer(n) || json_integer_value(n) < 0)) {
			json_decref(obj);
			return fail(r, "trailer \"records\" is not a whole number");
		}
		if (n && (uint64_t)json_integer_value(n) != r->records) {
			unsigned long long want = (unsigned long long)json_integer_value(n);
			json_decref(obj);
			return fail(r, "trailer says %llu records, section %ld has %llu (stream cut or edited)",
				    want, r->section, (unsigned long long)r->records);
		}
		json_decref(r->trailer);
		r->trailer = obj;
		r->have_trailer = 1;
		return STREAM_TRAILER;
	}
	json_t *v = json_object_get(obj, "marple");
	if (!v) {
		json_decref(obj);
		r->rejected_header = r->lineno;
		return fail(r, "JSON line is neither a section header (\"marple\") nor a trailer (\"trailer\")");
	}
	if (!json_is_integer(v) || json_integer_value(v) < 1) {
		json_decref(obj);
		r->rejected_header = r->lineno;
		return fail(r, "header \"marple\" (format version) is not a positive whole number");
	}
	if (json_integer_value(v) > MARPLE_FORMAT_VERSION) {
		long long ver = json_integer_value(v);
		json_decref(obj);
		r->rejected_header = r->lineno;
		return fail(r, "format version %lld is newer than this program reads (%d)", ver,
			    MARPLE_FORMAT_VERSION);
	}
	json_t *dt = json_object_get(obj, "datatype");
	if (!json_is_string(dt) || stream_datatype_from_name(json_string_value(dt)) == DATATYPE_NONE) {
		json_decref(obj);
		r->rejected_header = r->lineno;
		return fail(r, "header \"datatype\" must be \"stack\", \"event\" or \"point\"");
	}
	json_t *iface = json_object_get(obj, "interface");
	if (!json_is_string(iface) || !*json_string_value(iface)) {
		json_decref(obj);
		r->rejected_header = r->lineno;
		return fail(r, "header \"interface\" is missing or empty");
	}
	const char *why = header_member_error(obj);
	if (why) {
		json_decref(obj);
		r->rejected_header = r->lineno;
		return fail(r, "%s", why);
	}
	json_decref(r->header);
	json_decref(r->trailer);
	r->header = obj;
	r->trailer = NULL;
	r->have_trailer = 0;
	r->rejected_header = 0;
	r->dt = stream_datatype_from_name(json_string_value(dt));
	r->section++;
	r->records = 0;
	return STREAM_HEADER;
}

/* The next line into r->line (without its newline, NUL-terminated): 1, 0 at
 * the end, -1 on an error (set). */
static int next_line(struct stream_reader *r)
{
	char *s;
	size_t len;
	int rc = lines_next_writable(r->lines, &s, &len);

	if (rc <= 0)
		return rc < 0 ? (fail(r, "read error"), -1) : 0;
	if (lines_stable(r->lines)) {	/* mapped, read-only: a copy to end in place */
		r->own = marple_grow(r->own, &r->cap, len + 1, 1);
		memcpy(r->own, s, len);
		s = r->own;
	}
	r->line = s;
	r->lineno++;
	r->len = len;
	if (lines_unterminated(r->lines)) {
		fail(r, "last line has no newline (stream cut in the middle of a record?)");
		return -1;
	}
	if (r->len && r->line[r->len - 1] == '\r')
		r->len--;
	r->line[r->len] = 0;
	return 1;
}

/* Parse the record in r->line (kept as raw first). */
static enum stream_item parse_record(struct stream_reader *r)
{
	/* records are decoded in place, and only %XX escapes change them:
	 * most need no copy for stream_reader_raw */
	r->escaped = memchr(r->line, '%', r->len) != NULL;
	r->rawp = r->line;
	r->rawlen = r->len;
	if (r->escaped)
		keep_raw(r);
	r->parsed = 1;
	char *p = r->line, *e = r->line + r->len;
	switch (r->dt) {
	case DATATYPE_STACK: return parse_stack(r, p, e);
	case DATATYPE_EVENT: return parse_event(r, p, e);
	case DATATYPE_POINT: return parse_point(r, p, e);
	default: return fail(r, "record in a section of unknown datatype");
	}
}

static enum stream_item next_item(struct stream_reader *r)
{
	for (;;) {
		int rc = next_line(r);
		if (rc <= 0)
			return rc < 0 ? STREAM_ERROR : STREAM_EOF;
		if (r->len == 0)
			continue;
		if (r->len > MAX_LINE)
			return fail(r, "line longer than %u MiB", MAX_LINE >> 20);
		if (lines_has_nul(r->lines)) {	/* found a read at a time */
			r->nul_line = r->lineno;
			return fail(r, "NUL byte in line: binary data, not a text stream (nothing more is read)");
		}
		if (r->line[0] == '{') {
			r->raw = marple_grow(r->raw, &r->rawcap, r->len + 1, 1);
			memcpy(r->raw, r->line, r->len + 1);
			r->rawp = r->raw;
			r->rawlen = r->len;
			return parse_json_line(r);
		}
		if (r->rejected_header)
			return fail(r, "record of the section whose header (line %lu) was rejected", r->rejected_header);
		if (r->section < 0)
			return fail(r, "record before any section header (is this a marple stream?)");
		if (r->have_trailer)
			return fail(r, "record after the section's trailer");
		r->records++;
		if (r->defer) {		/* the caller parses it, or asks stream_reader_parse_record */
			r->parsed = 0;
			return STREAM_RECORD;
		}
		enum stream_item it = parse_record(r);
		if (it != STREAM_RECORD)
			r->records--;
		return it;
	}
}

enum stream_item stream_reader_next(struct stream_reader *r)
{
	if (r->nul_line)	/* binary data: the input is unusable, and its "lines" are noise */
		return STREAM_EOF;
	enum stream_item it = next_item(r);
	if (it == STREAM_ERROR)
		r->malformed++;
	else if (it == STREAM_RECORD)
		r->usable++;
	return it;
}

const char *stream_reader_ahead(const struct stream_reader *r, size_t *len)
{
	const char *s = lines_buffered(r->lines, len);
	const char *nl = *len ? memrchr(s, '\n', *len) : NULL;

	if (!r->defer || r->section < 0 || r->rejected_header || r->have_trailer || r->nul_line || !nl)
		*len = 0;
	else
		*len = (size_t)(nl + 1 - s);
	return s;
}

void stream_reader_took(struct stream_reader *r, size_t bytes, unsigned long lines)
{
	lines_skip(r->lines, bytes, lines);
	r->lineno += lines;
	r->records += lines;
	r->usable += lines;
}

enum stream_item stream_reader_parse_record(struct stream_reader *r)
{
	if (r->parsed)
		return STREAM_RECORD;
	enum stream_item it = parse_record(r);
	if (it != STREAM_RECORD) {
		r->records--;
		r->usable--;
		r->malformed++;
	}
	return it;
}

struct mstr stream_reader_line_text(const struct stream_reader *r)
{
	return (struct mstr){ r->line, r->len };
}

const char *stream_reader_error(const struct stream_reader *r) { return r->err; }
const char *stream_reader_name(const struct stream_reader *r) { return r->name; }
unsigned long stream_reader_line(const struct stream_reader *r) { return r->lineno; }
long stream_reader_section(const struct stream_reader *r) { return r->section; }
enum datatype stream_reader_datatype(const struct stream_reader *r) { return r->dt; }
json_t *stream_reader_header(const struct stream_reader *r) { return r->header; }
json_t *stream_reader_trailer(const struct stream_reader *r) { return r->trailer; }
uint64_t stream_reader_records(const struct stream_reader *r) { return r->records; }
const struct stack_rec *stream_reader_stack(const struct stream_reader *r) { return &r->stack; }
const struct event_rec *stream_reader_event(const struct stream_reader *r) { return &r->event; }
const struct point_rec *stream_reader_point(const struct stream_reader *r) { return &r->point; }

struct mstr stream_reader_raw(const struct stream_reader *r)
{
	return (struct mstr){ r->rawp, r->rawlen };
}

void stream_reader_warn(const struct stream_reader *r)
{
	marple_warn_at(r->name, r->lineno, "%s", r->err);
}

const char *stream_unusable_why(uint64_t usable, uint64_t malformed, unsigned long nul_line)
{
	static char why[160];

	if (nul_line)
		snprintf(why, sizeof(why), "unusable input: a NUL byte at line %lu (binary data, not text)", nul_line);
	else if (malformed > usable)
		snprintf(why, sizeof(why), "unusable input: %llu malformed line%s, more than its %llu usable record%s",
			 (unsigned long long)malformed, malformed == 1 ? "" : "s", (unsigned long long)usable,
			 usable == 1 ? "" : "s");
	else
		return NULL;
	return why;
}

const char *stream_reader_unusable(const struct stream_reader *r)
{
	return stream_unusable_why(r->usable, r->malformed, r->nul_line);
}

const struct mstr *stream_fields_get(const struct field *f, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (escape_mstr_eq(f[i].key, key))
			return &f[i].value;
	return NULL;
}

const char *stream_header_str(json_t *hdr, const char *key, const char *dflt)
{
	json_t *v = hdr ? json_object_get(hdr, key) : NULL;
	return json_is_string(v) ? json_string_value(v) : dflt;
}

int64_t stream_header_int(json_t *hdr, const char *key, int64_t dflt)
{
	json_t *v = hdr ? json_object_get(hdr, key) : NULL;
	return json_is_integer(v) ? json_integer_value(v) : dflt;
}

/* ---- writing ---- */

json_t *stream_json_string_bytes(const char *s, size_t len)
{
	if (!escape_needed(s, len))
		return json_stringn(s, len);
	char *e = escape_dup(s, len);
	json_t *j = json_string(e);
	free(e);
	return j;
}

uint64_t stream_time_unit_ns(const char *unit, const char **name)
{
	static const struct { const char *unit, *name; uint64_t ns; } units[] = {
		{ "ns", "nanoseconds", 1 }, { "us", "microseconds", 1000 },
		{ "ms", "milliseconds", 1000000 }, { "s", "seconds", 1000000000 },
	};
	for (size_t i = 0; unit && i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(unit, units[i].unit) == 0) {
			if (name)
				*name = units[i].name;
			return units[i].ns;
		}
	return 0;
}

json_t *stream_section_header_new(const char *interface, enum datatype dt)
{
	struct utsname u;
	json_t *h = json_object();
	uint64_t mono = marple_now_monotonic_ns();
	uint64_t wall = marple_now_realtime_ns();

	json_object_set_new(h, "marple", json_integer(MARPLE_FORMAT_VERSION));
	json_object_set_new(h, "interface", json_string(interface));
	json_object_set_new(h, "datatype", json_string(stream_datatype_name(dt)));
	json_object_set_new(h, "start_ns", json_integer((json_int_t)mono));
	json_object_set_new(h, "wall_ns", json_integer((json_int_t)wall));
	json_object_set_new(h, "clock", json_string("monotonic"));
	if (uname(&u) == 0) {
		json_object_set_new(h, "host", stream_json_string_bytes(u.nodename, strlen(u.nodename)));
		json_object_set_new(h, "kernel", stream_json_string_bytes(u.release, strlen(u.release)));
	}
	return h;
}

json_t *stream_section_trailer_new(uint64_t records, uint64_t lost, uint64_t dropped, const char *ended)
{
	json_t *t = json_object();
	json_object_set_new(t, "trailer", json_integer(1));
	json_object_set_new(t, "end_ns", json_integer((json_int_t)marple_now_monotonic_ns()));
	json_object_set_new(t, "records", json_integer((json_int_t)records));
	json_object_set_new(t, "lost", json_integer((json_int_t)lost));
	json_object_set_new(t, "dropped", json_integer((json_int_t)dropped));
	json_object_set_new(t, "ended", json_string(ended ? ended : "eof"));
	return t;
}

int stream_write_json(FILE *f, json_t *obj)
{
	char *s = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (!s) {
		marple_warn("cannot encode JSON header (invalid UTF-8 in a string?)");
		return -1;
	}
	fputs(s, f);
	fputc('\n', f);
	free(s);
	return 0;
}

void stream_write_stack(FILE *f, uint64_t weight, const struct mstr *frames, size_t n)
{
	fprintf(f, "%llu#", (unsigned long long)weight);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(';', f);
		escape_write(f, frames[i].s, frames[i].len);
	}
	fputc('\n', f);
}

void stream_write_stack_cstr(FILE *f, uint64_t weight, const char *const *frames, size_t n)
{
	stream_write_stack_tagged(f, weight, frames, NULL, n);
}

void stream_write_stack_tagged(FILE *f, uint64_t weight, const char *const *frames, const uint32_t *tags, size_t n)
{
	fprintf(f, "%llu#", (unsigned long long)weight);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(';', f);
		escape_write(f, frames[i], strlen(frames[i]));
		if (tags && tags[i])
			fprintf(f, "#%08" PRIx32, tags[i]);
	}
	fputc('\n', f);
}

uint32_t stream_frame_key_split(const char *key, size_t len, size_t *name_len)
{
	uint32_t tag = 0;

	*name_len = len;
	if (len < STREAM_TAG_KEY_LEN || key[len - STREAM_TAG_KEY_LEN] != 0)
		return 0;
	memcpy(&tag, key + len - STREAM_TAG_KEY_LEN + 1, sizeof(tag));
	if (tag)
		*name_len = len - STREAM_TAG_KEY_LEN;
	return tag;
}

static void write_fields(FILE *f, const struct field *fields, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		fputc(',', f);
		/* A key may not hold a raw '=': that ends it. */
		const char *k = fields[i].key.s, *eq;
		size_t klen = fields[i].key.len;
		while ((eq = memchr(k, '=', klen))) {
			escape_write(f, k, (size_t)(eq - k));
			fputs("%3D", f);
			klen -= (size_t)(eq - k) + 1;
			k = eq + 1;
		}
		escape_write(f, k, klen);
		fputc('=', f);
		escape_write(f, fields[i].value.s, fields[i].value.len);
	}
}

void stream_write_event(FILE *f, uint64_t time, struct mstr type, struct mstr track,
			const struct field *fields, size_t n)
{
	fprintf(f, "%llu,", (unsigned long long)time);
	escape_write(f, type.s, type.len);
	fputc(',', f);
	escape_write(f, track.s, track.len);
	write_fields(f, fields, n);
	fputc('\n', f);
}

/* Shortest of %.15g/%.17g that reads back exactly: 0.1 stays "0.1". */
/* "d.ddde-N" (N <= 12) as "0.000ddd": the same digits, so the same value.
 * Readers of times in seconds (0.000075803, not 7.5803e-05) and people
 * reading the stream both expect fixed point there. */
static void write_small_fixed(FILE *f, const char *g)
{
	const char *e = strchr(g, 'e');
	long exp = e ? strtol(e + 1, NULL, 10) : 0;

	if (!e || exp >= 0 || exp < -12) {
		fputs(g, f);
		return;
	}
	if (*g == '-')
		fputc(*g++, f);
	fputs("0.", f);
	for (long i = 1; i < -exp; i++)
		fputc('0', f);
	for (const char *p = g; p < e; p++)
		if (*p != '.')
			fputc(*p, f);
}

void stream_write_double(FILE *f, double v)
{
	char buf[40];
	snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof(buf), "%.17g", v);
	write_small_fixed(f, buf);
}

void stream_write_point(FILE *f, double x, double y, struct mstr info,
			const struct field *fields, size_t n)
{
	stream_write_double(f, x);
	fputc(',', f);
	stream_write_double(f, y);
	fputc(',', f);
	escape_write(f, info.s, info.len);
	write_fields(f, fields, n);
	fputc('\n', f);
}
