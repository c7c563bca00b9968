/* marple-import — convert data files of the original Python MARPLE to a marple stream.
 *
 * The original (github.com/ensoft/marple, common/data_io.py) wrote a JSON
 * "metaheader" line mapping each section's index to its header plus byte
 * offsets, then per section a JSON header line, one record per line with
 * fields separated by "$$$", and a blank line:
 *
 *   {"0": {"start time": "2018-08-14 10:20:30.123456", "end time": "...",
 *          "interface": "callstack", "datatype": "stack",
 *          "data options": {"weight_units": "samples"}, "start byte": 0, "end byte": 97}}
 *   {"start time": "2018-08-14 10:20:30.123456", ..., "datatype": "stack", ...}
 *   12$$$bash$$$main$$$do_work
 *   (blank line)
 *
 * stack: weight$$$frame$$$frame...   point: x$$$y$$$info
 * event: time$$$type$$${python dict}$$$[connected pairs]   (time in microseconds)
 * Older files (no metaheader; "weight#f1;f2", "x,y,info", "time,type,datum")
 * are read too.  Output: one marple section per input section.
 *
 *   $ marple-import old.marple | marple-cat -l
 *
 * Exit status: 0 ok, 1 bad input (lines named; nothing usable) or I/O error, 2 usage.
 */
#define _XOPEN_SOURCE 700
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lines.h"
#include "options.h"
#include "stream.h"
#include "util.h"

static struct {
	const char *out;
	uint64_t unit_ns;	/* nanoseconds per unit of event times */
} opt = { NULL, 1000 };

static const struct options_entry options[] = {
	OPTIONS_OUTPUT,
	{ 'u', "time-unit", "UNIT", "unit of event times in the input (default us,\n"
		"as the original's perf collectors wrote them)" },
	OPTIONS_DESCRIBE("kind=filter"),
	OPTIONS_HELP,
	{ 0 }
};

static const struct options_help help = {
	.synopsis = "[-o FILE] [--time-unit ns|us|ms|s] [FILE...]",
	.about = "Convert data files of the original Python MARPLE into a marple stream.\n",
	.after = "With no FILE, or FILE '-', read stdin.  Bad lines are named and skipped.\n"
	         "See marple-import(1) and marple-format(5).\n",
};

/* ---- a growable byte buffer ---- */

struct buf {
	char *s;
	size_t len, cap;
};

static void buf_add(struct buf *b, const void *p, size_t n)
{
	b->s = marple_grow(b->s, &b->cap, b->len + n + 1, 1);
	memcpy(b->s + b->len, p, n);
	b->len += n;
	b->s[b->len] = 0;
}

static void buf_utf8(struct buf *b, unsigned long cp)
{
	char u[4];
	size_t n;

	if (cp >= 0xdc80 && cp <= 0xdcff) {	/* Python's surrogateescape: a raw byte */
		u[0] = (char)(cp - 0xdc00);
		buf_add(b, u, 1);
		return;
	}
	if ((cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		cp = 0xfffd;
	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | cp >> 6);
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | cp >> 12);
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | cp >> 18);
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	buf_add(b, u, n);
}

/* ---- Python literals (repr of dicts, tuples, lists, str, numbers) ---- */

struct pyparse {
	const char *s, *end;
	const char *err;
};

static void skip_ws(struct pyparse *p)
{
	while (p->s < p->end && (*p->s == ' ' || *p->s == '\t'))
		p->s++;
}

/* A quoted str (or bytes, with a b prefix) literal, decoded into out. */
static int py_string(struct pyparse *p, struct buf *out)
{
	int bytes = 0;
	char q;

	if (p->s < p->end && (*p->s == 'b' || *p->s == 'B')) {
		bytes = 1;
		p->s++;
	}
	if (p->s >= p->end || (*p->s != '\'' && *p->s != '"')) {
		p->err = "expected a quoted string";
		return -1;
	}
	q = *p->s++;
	while (p->s < p->end && *p->s != q) {
		char c = *p->s++;
		if (c != '\\') {
			buf_add(out, &c, 1);
			continue;
		}
		if (p->s >= p->end)
			break;
		c = *p->s++;
		unsigned long cp = 0;
		int digits = 0;
		switch (c) {
		case 'n': buf_add(out, "\n", 1); continue;
		case 't': buf_add(out, "\t", 1); continue;
		case 'r': buf_add(out, "\r", 1); continue;
		case 'a': buf_add(out, "\a", 1); continue;
		case 'b': buf_add(out, "\b", 1); continue;
		case 'f': buf_add(out, "\f", 1); continue;
		case 'v': buf_add(out, "\v", 1); continue;
		case '\\': case '\'': case '"': buf_add(out, &c, 1); continue;
		case '\n': continue;
		case 'x': digits = 2; break;
		case 'u': digits = bytes ? 0 : 4; break;
		case 'U': digits = bytes ? 0 : 8; break;
		default:
			if (c >= '0' && c <= '7') {
				cp = (unsigned long)(c - '0');
				for (int k = 0; k < 2 && p->s < p->end && *p->s >= '0' && *p->s <= '7'; k++)
					cp = cp * 8 + (unsigned long)(*p->s++ - '0');
				if (bytes) {
					char ch = (char)(cp & 0xff);
					buf_add(out, &ch, 1);
				} else
					buf_utf8(out, cp);
				continue;
			}
			/* unknown escapes stay as written, as Python keeps them */
			buf_add(out, "\\", 1);
			buf_add(out, &c, 1);
			continue;
		}
		if (!digits) {
			buf_add(out, "\\", 1);
			buf_add(out, &c, 1);
			continue;
		}
		for (int k = 0; k < digits; k++) {
			int h = p->s < p->end ? escape_hex_digit((unsigned char)*p->s) : -1;
			if (h < 0) {
				p->err = "bad \\x, \\u or \\U escape in a string";
				return -1;
			}
			cp = cp * 16 + (unsigned long)h;
			p->s++;
		}
		if (bytes) {
			char ch = (char)cp;
			buf_add(out, &ch, 1);
		} else
			buf_utf8(out, cp);
	}
	if (p->s >= p->end) {
		p->err = "unterminated string";
		return -1;
	}
	p->s++;
	return 0;
}

/* Any value: strings decoded; numbers, None, True, False and nested
 * containers kept as their source text. */
static int py_value(struct pyparse *p, struct buf *out)
{
	skip_ws(p);
	if (p->s >= p->end) {
		p->err = "value missing";
		return -1;
	}
	if (*p->s == '\'' || *p->s == '"' ||
	    ((*p->s == 'b' || *p->s == 'B') && p->s + 1 < p->end && (p->s[1] == '\'' || p->s[1] == '"')))
		return py_string(p, out);
	const char *start = p->s;
	if (*p->s == '(' || *p->s == '[' || *p->s == '{') {
		int depth = 0;
		while (p->s < p->end) {
			char c = *p->s;
			if (c == '\'' || c == '"') {
				struct buf tmp = { 0 };
				int rc = py_string(p, &tmp);
				free(tmp.s);
				if (rc)
					return -1;
				continue;
			}
			p->s++;
			if (c == '(' || c == '[' || c == '{')
				depth++;
			else if (c == ')' || c == ']' || c == '}') {
				if (--depth == 0)
					break;
			}
		}
		if (depth) {
			p->err = "unbalanced brackets";
			return -1;
		}
	} else {
		while (p->s < p->end && *p->s != ',' && *p->s != ':' && *p->s != ')' && *p->s != ']' &&
		       *p->s != '}' && *p->s != ' ')
			p->s++;
		if (p->s == start) {
			p->err = "value missing";
			return -1;
		}
	}
	buf_add(out, start, (size_t)(p->s - start));
	return 0;
}

/* Parsed event datum: keys and values (both decoded), in order. */
struct kv {
	struct buf *k, *v;
	size_t n, cap;
};

static void kv_clear(struct kv *kv)
{
	for (size_t i = 0; i < kv->n; i++)
		kv->k[i].len = kv->v[i].len = 0;
	kv->n = 0;
}

static void kv_free(struct kv *kv)
{
	for (size_t i = 0; i < kv->cap; i++) {
		free(kv->k[i].s);
		free(kv->v[i].s);
	}
	free(kv->k);
	free(kv->v);
	*kv = (struct kv){ 0 };
}

static void kv_push(struct kv *kv, const char *key, size_t len)
{
	size_t cap = kv->cap;
	if (kv->n == kv->cap) {
		kv->k = marple_grow(kv->k, &cap, kv->n + 1, sizeof(*kv->k));
		kv->v = marple_grow(kv->v, &kv->cap, kv->n + 1, sizeof(*kv->v));
		for (size_t i = kv->n; i < kv->cap; i++)
			kv->k[i] = kv->v[i] = (struct buf){ 0 };
	}
	kv->k[kv->n].len = kv->v[kv->n].len = 0;
	buf_add(&kv->k[kv->n], key ? key : "", key ? len : 0);
	kv->v[kv->n].len = 0;
	buf_add(&kv->v[kv->n], "", 0);
	kv->n++;
}

/* The original's field names of the tcptracer tuple. */
static const char *const tcp_names[] = { "source_pid", "source_comm", "source_port", "dest_pid",
					 "dest_comm", "dest_port", "net_ns" };

/* A dict, tuple or list literal (or None) into key/value pairs. */
static int py_datum(struct pyparse *p, struct kv *kv)
{
	skip_ws(p);
	if (p->end - p->s >= 4 && !memcmp(p->s, "None", 4)) {
		p->s += 4;
		return 0;
	}
	if (p->s >= p->end || (*p->s != '{' && *p->s != '(' && *p->s != '[')) {
		p->err = "event datum is not a dict or tuple";
		return -1;
	}
	char close = *p->s == '{' ? '}' : *p->s == '(' ? ')' : ']';
	int dict = *p->s == '{';
	p->s++;
	for (size_t i = 0;; i++) {
		char name[24];
		skip_ws(p);
		if (p->s < p->end && *p->s == close) {
			p->s++;
			break;
		}
		if (dict) {
			struct buf key = { 0 };
			if (py_value(p, &key)) {
				free(key.s);
				return -1;
			}
			kv_push(kv, key.s, key.len);
			free(key.s);
			skip_ws(p);
			if (p->s >= p->end || *p->s != ':') {
				p->err = "expected ':' in a dict";
				return -1;
			}
			p->s++;
		} else {
			snprintf(name, sizeof(name), "arg%zu", i);
			kv_push(kv, name, strlen(name));
		}
		if (py_value(p, &kv->v[kv->n - 1]))
			return -1;
		skip_ws(p);
		if (p->s < p->end && *p->s == ',') {
			p->s++;
			continue;
		}
		if (p->s < p->end && *p->s == close) {
			p->s++;
			break;
		}
		p->err = "expected ',' or the end of the datum";
		return -1;
	}
	if (!dict && kv->n == 7)
		for (size_t i = 0; i < 7; i++) {
			kv->k[i].len = 0;
			buf_add(&kv->k[i], tcp_names[i], strlen(tcp_names[i]));
		}
	skip_ws(p);
	if (p->s != p->end) {
		p->err = "text after the datum";
		return -1;
	}
	return 0;
}

/* ---- sections ---- */

static FILE *out;
static const char *in_name;
static unsigned long lineno, bad, nsections;
static struct section_state {
	int open;
	enum datatype dt;
	uint64_t records;
	int64_t end_rel_ns;	/* end - start, -1 if unknown */
} cur;

static void bad_line(const char *why)
{
	if (bad++ < 10)
		marple_warn_at(in_name, lineno, "%s", why);
}

/* "2018-08-14 10:20:30.123456" (local time, as Python's str(datetime.now())) -> ns. */
static int64_t py_time_ns(const char *s)
{
	struct tm tm = { 0 };
	const char *rest;

	if (!s || !(rest = strptime(s, "%Y-%m-%d %H:%M:%S", &tm)))
		return -1;
	tm.tm_isdst = -1;
	time_t t = mktime(&tm);
	if (t == (time_t)-1 || t < 0 || t > 9000000000)	/* 1970 .. 2255: ns fit in 64 bits */
		return -1;
	int64_t ns = (int64_t)t * 1000000000;
	if (*rest == '.') {
		int64_t scale = 100000000;
		for (rest++; *rest >= '0' && *rest <= '9' && scale; rest++, scale /= 10)
			ns += (*rest - '0') * scale;
	}
	return ns;
}

static void section_end(void)
{
	if (!cur.open)
		return;
	json_t *t = json_object();
	json_object_set_new(t, "trailer", json_integer(1));
	if (cur.end_rel_ns >= 0)
		json_object_set_new(t, "end_ns", json_integer(cur.end_rel_ns));
	json_object_set_new(t, "records", json_integer((json_int_t)cur.records));
	json_object_set_new(t, "lost", json_integer(0));
	json_object_set_new(t, "dropped", json_integer(0));
	json_object_set_new(t, "ended", json_string("eof"));
	stream_write_json(out, t);
	json_decref(t);
	cur.open = 0;
}

static void copy_str(json_t *to, const char *key, json_t *from, const char *fkey)
{
	json_t *v = json_object_get(from, fkey);
	if (json_is_string(v))
		json_object_set_new(to, key, stream_json_string_bytes(json_string_value(v), json_string_length(v)));
}

/* A section header of the original; returns 0 if it is one. */
static int section_begin(json_t *h)
{
	const char *iface = stream_header_str(h, "interface", NULL);
	enum datatype dt = stream_datatype_from_name(stream_header_str(h, "datatype", ""));
	json_t *opts = json_object_get(h, "data options");

	if (!iface || !*iface || dt == DATATYPE_NONE)
		return -1;
	section_end();
	if (!strcmp(iface, "memusage"))
		iface = "memleak";	/* the original's name for memleak's data */

	json_t *o = json_object();
	json_object_set_new(o, "marple", json_integer(MARPLE_FORMAT_VERSION));
	json_object_set_new(o, "interface", stream_json_string_bytes(iface, strlen(iface)));
	json_object_set_new(o, "datatype", json_string(stream_datatype_name(dt)));
	int64_t start = py_time_ns(stream_header_str(h, "start time", NULL));
	int64_t end = py_time_ns(stream_header_str(h, "end time", NULL));
	cur.end_rel_ns = -1;
	if (dt != DATATYPE_EVENT && start > 0) {
		/* stacks and points: the capture's span on a clock starting at 0 */
		json_object_set_new(o, "start_ns", json_integer(0));
		json_object_set_new(o, "clock", json_string("relative"));
		if (end >= start)
			cur.end_rel_ns = end - start;
	} else if (dt == DATATYPE_EVENT) {
		json_object_set_new(o, "clock", json_string("monotonic"));
	}
	if (start > 0)
		json_object_set_new(o, "wall_ns", json_integer(start));
	json_t *units = json_object();
	if (dt == DATATYPE_STACK)
		copy_str(units, "weight", opts, "weight_units");
	else if (dt == DATATYPE_EVENT)
		json_object_set_new(units, "time", json_string("ns"));
	else {
		copy_str(units, "x", opts, "x_units");
		copy_str(units, "y", opts, "y_units");
		json_t *labels = json_object();
		copy_str(labels, "x", opts, "x_label");
		copy_str(labels, "y", opts, "y_label");
		json_object_set_new(o, "labels", labels);
	}
	json_object_set_new(o, "units", units);
	if (json_is_object(opts))
		json_object_set(o, "options", opts);
	json_object_set_new(o, "imported", json_string("python-marple"));
	if (stream_write_json(out, o) != 0)
		marple_fatal(EXIT_DATA, "%s:%lu: cannot write the header", in_name, lineno);
	json_decref(o);
	cur.open = 1;
	cur.dt = dt;
	cur.records = 0;
	nsections++;
	return 0;
}

static size_t split3(char *s, char **parts, size_t max);

/* Split a record into at most max fields (the last takes the rest): at "$$$",
 * or in the oldest files, where there is none, at the first max-1 commas. */
static size_t split_fields(char *s, char **parts, size_t max)
{
	size_t n = 0;

	if (!strstr(s, "$$$")) {
		parts[n++] = s;
		for (; n < 3 && n < max && (s = strchr(s, ','));) {
			*s++ = 0;
			parts[n++] = s;
		}
		return n;
	}
	return split3(s, parts, max);
}

/* Split s at "$$$" into at most max pieces (the last takes the rest). */
static size_t split3(char *s, char **parts, size_t max)
{
	size_t n = 0;
	parts[n++] = s;
	while (n < max) {
		char *d = strstr(s, "$$$");
		if (!d)
			break;
		*d = 0;
		s = d + 3;
		parts[n++] = s;
	}
	return n;
}

static void stack_record(char *line)
{
	struct mstr frames_buf[64], *frames = frames_buf;
	size_t nframes = 0, cap = 64;
	char *w = line, *rest, sep;
	uint64_t weight;

	if (strstr(line, "$$$")) {
		rest = strstr(line, "$$$");
		*rest = 0;
		rest += 3;
		sep = '$';
	} else if ((rest = strchr(line, '#'))) {
		*rest++ = 0;
		sep = ';';
	} else {
		bad_line("stack record without \"$$$\" or \"#\" after the weight");
		return;
	}
	double dw;
	if (marple_parse_u64(w, 0, UINT64_MAX, &weight) != 0) {
		if (marple_parse_double(w, 0, 1.8e19, &dw) != 0) {
			bad_line("stack weight is not a number");
			return;
		}
		weight = (uint64_t)llround(dw);
	}
	for (char *s = rest;;) {
		char *e = sep == '$' ? strstr(s, "$$$") : strchr(s, ';');
		if (nframes == cap) {
			struct mstr *nf = marple_malloc(2 * cap * sizeof(*nf));
			memcpy(nf, frames, nframes * sizeof(*nf));
			if (frames != frames_buf)
				free(frames);
			frames = nf;
			cap *= 2;
		}
		frames[nframes++] = (struct mstr){ s, e ? (size_t)(e - s) : strlen(s) };
		if (!e)
			break;
		s = e + (sep == '$' ? 3 : 1);
	}
	stream_write_stack(out, weight, frames, nframes);
	if (frames != frames_buf)
		free(frames);
	cur.records++;
}

static void point_record(char *line)
{
	char *parts[3];
	size_t n;
	double x, y;

	n = split_fields(line, parts, 3);
	if (n < 3) {
		bad_line("point record needs x, y and info");
		return;
	}
	if (marple_parse_double(parts[0], -1e300, 1e300, &x) || marple_parse_double(parts[1], -1e300, 1e300, &y)) {
		bad_line("point x or y is not a number");
		return;
	}
	stream_write_point(out, x, y, escape_mstr_c(parts[2]), NULL, 0);
	cur.records++;
}

static struct kv datum;

/* The connection list of a 4-field event ("[('source_', 'dest_'), ...]")
 * added to datum as "connected=source_->dest_ ...".  Returns 0, or -1 after
 * counting a bad line. */
static int add_connections(const char *text)
{
	struct pyparse c = { text, text + strlen(text), NULL };
	struct kv conn = { 0 };
	if (py_datum(&c, &conn)) {
		bad_line(c.err);
		kv_free(&conn);
		return -1;
	}
	if (conn.n) {
		kv_push(&datum, "connected", 9);
		/* each pair ('source_', 'dest_') names the prefixes of the two ends */
		for (size_t i = 0; i < conn.n; i++) {
			struct buf *v = &datum.v[datum.n - 1];
			struct pyparse e = { conn.v[i].s, conn.v[i].s + conn.v[i].len, NULL };
			struct kv pair = { 0 };
			if (i)
				buf_add(v, " ", 1);
			if (py_datum(&e, &pair) == 0 && pair.n)
				for (size_t j = 0; j < pair.n; j++) {
					if (j)
						buf_add(v, "->", 2);
					buf_add(v, pair.v[j].s, pair.v[j].len);
				}
			else
				buf_add(v, conn.v[i].s, conn.v[i].len);
			kv_free(&pair);
		}
	}
	kv_free(&conn);
	return 0;
}

/* The event's track: the CPU if the datum names one ("cpu 2", "003" ->
 * cpu2, cpu3), else the process (pid, source_pid, arg0, datum), else "all". */
static void event_track(struct buf *track)
{
	for (size_t i = 0; i < datum.n && !track->len; i++)
		if (!strcmp(datum.k[i].s, "cpu")) {
			const char *v = datum.v[i].s;
			while (*v == ' ')
				v++;
			if (strncmp(v, "cpu", 3))
				buf_add(track, "cpu", 3);
			else
				v += 3;
			while (*v == ' ' || (*v == '0' && v[1] >= '0' && v[1] <= '9'))
				v++;
			for (; *v; v++)
				if (*v != ' ')
					buf_add(track, v, 1);
		}
	const char *keys[] = { "pid", "source_pid", "arg0", "datum" };
	for (size_t k = 0; k < 4 && !track->len; k++)
		for (size_t i = 0; i < datum.n && !track->len; i++)
			if (!strcmp(datum.k[i].s, keys[k]) && datum.v[i].len)
				buf_add(track, datum.v[i].s, datum.v[i].len);
	if (!track->len)
		buf_add(track, "all", 3);
}

static void event_record(char *line)
{
	char *parts[4];
	size_t n;
	uint64_t t;
	double dt;
	struct pyparse p;

	int dollars = strstr(line, "$$$") != NULL;
	n = split_fields(line, parts, 4);
	if (n < 3) {
		bad_line("event record needs time, type and datum");
		return;
	}
	if (marple_parse_u64(parts[0], 0, UINT64_MAX / opt.unit_ns, &t) == 0)
		t *= opt.unit_ns;
	else if (marple_parse_double(parts[0], 0, (double)(UINT64_MAX / opt.unit_ns) / 2, &dt) == 0)
		t = (uint64_t)llround(dt * (double)opt.unit_ns);
	else {
		bad_line("event time is not a number (or out of range)");
		return;
	}
	kv_clear(&datum);
	p = (struct pyparse){ parts[2], parts[2] + strlen(parts[2]), NULL };
	if (py_datum(&p, &datum)) {
		/* old files: "time,track,datum" with a plain datum */
		if (!dollars || n == 3) {
			kv_clear(&datum);
			kv_push(&datum, "datum", 5);
			buf_add(&datum.v[0], parts[2], strlen(parts[2]));
		} else {
			bad_line(p.err);
			return;
		}
	}
	if (n == 4 && add_connections(parts[3]) < 0)
		return;

	struct buf track = { 0 };
	const char *type = *parts[1] ? parts[1] : "event";
	event_track(&track);
	struct field *f = marple_calloc(datum.n ? datum.n : 1, sizeof(*f));
	for (size_t i = 0; i < datum.n; i++) {
		f[i].key = (struct mstr){ datum.k[i].s, datum.k[i].len };
		f[i].value = (struct mstr){ datum.v[i].s ? datum.v[i].s : "", datum.v[i].len };
		if (!f[i].key.len)
			f[i].key = MSTR("key");
	}
	stream_write_event(out, t, escape_mstr_c(type), (struct mstr){ track.s, track.len }, f, datum.n);
	free(f);
	free(track.s);
	cur.records++;
}

/* Convert one input; returns 0, or -1 after a message when it is not a MARPLE file. */
static int import_stream(FILE *f, const char *name)
{
	struct lines *l = lines_new(f, name);
	const char *s;
	size_t len;
	int rc, ret = 0;
	long expected = -1;
	char *line = NULL;
	size_t cap = 0;
	unsigned long before = nsections;

	in_name = name;
	while ((rc = lines_next(l, &s, &len)) == 1) {
		lineno = lines_lineno(l);
		if (memchr(s, 0, len)) {
			bad_line("line holds a NUL byte");
			continue;
		}
		line = marple_grow(line, &cap, len + 1, 1);
		memcpy(line, s, len);
		line[len] = 0;
		if (len && line[len - 1] == '\r')
			line[--len] = 0;
		if (len == 0) {
			section_end();
			continue;
		}
		if (line[0] == '{') {
			json_error_t je;
			json_t *j = json_loadb(line, len, 0, &je);
			if (!j || !json_is_object(j)) {
				bad_line("a line starting with '{' that is not a JSON object");
				json_decref(j);
				continue;
			}
			if (json_object_get(j, "marple")) {
				json_decref(j);
				marple_warn_at(in_name, lineno, "this is a marple stream already (read it directly)");
				ret = -1;
				break;
			}
			if (section_begin(j) == 0) {
				json_decref(j);
				continue;
			}
			if (lineno == 1) {
				/* the metaheader: {"0": {header, "start byte", "end byte"}, ...} */
				const char *key;
				json_t *v;
				expected = 0;
				json_object_foreach(j, key, v) {
					if (json_is_object(v) && json_object_get(v, "datatype"))
						expected++;
				}
				size_t size = json_object_size(j);
				json_decref(j);
				if (expected == 0 && size != 0) {
					marple_warn_at(in_name, 1, "not a MARPLE file (no metaheader or section header)");
					ret = -1;
					break;
				}
				continue;
			}
			json_decref(j);
			bad_line("JSON line that is not a section header (no interface or datatype)");
			continue;
		}
		if (!cur.open) {
			if (lineno == 1) {
				marple_warn_at(in_name, 1, "not a MARPLE file (no JSON header)");
				ret = -1;
				break;
			}
			bad_line("record outside a section");
			continue;
		}
		switch (cur.dt) {
		case DATATYPE_STACK: stack_record(line); break;
		case DATATYPE_POINT: point_record(line); break;
		case DATATYPE_EVENT: event_record(line); break;
		default: break;
		}
		if (ferror(out))
			break;
	}
	section_end();
	if (rc < 0)
		bad++;
	if (expected >= 0 && (unsigned long)expected != nsections - before)
		marple_warn_at(in_name, 0, "the metaheader lists %ld sections, the file holds %lu", expected,
			nsections - before);
	free(line);
	lines_free(l);
	return ret;
}

static int import_file(const char *path)
{
	FILE *f = marple_open_input(path);
	int rc = import_stream(f, marple_input_name(path));
	if (f != stdin)
		fclose(f);
	return rc;
}

int main(int argc, char **argv)
{
	int c;

	marple_init(argc, argv);
	while ((c = options_getopt(options, argc, argv)) != -1) {
		switch (c) {
		case 'o': opt.out = optarg; break;
		case 'u':
			if (!strcmp(optarg, "ns"))
				opt.unit_ns = 1;
			else if (!strcmp(optarg, "us"))
				opt.unit_ns = 1000;
			else if (!strcmp(optarg, "ms"))
				opt.unit_ns = 1000000;
			else if (!strcmp(optarg, "s"))
				opt.unit_ns = 1000000000;
			else
				marple_usage_error("--time-unit: '%s' is not ns, us, ms or s", optarg);
			break;
		case 'h': options_help(stdout, options, &help); marple_close_stdout(); return EXIT_OK;
		default: marple_usage_try();
		}
	}
	struct outfile *o = marple_outfile_open(opt.out);
	if (!o)
		return EXIT_DATA;
	out = marple_outfile_stream(o);
	int failed = 0;
	if (optind >= argc)
		failed |= import_file("-");
	for (int i = optind; i < argc; i++)
		failed |= import_file(argv[i]);
	kv_free(&datum);
	if (bad > 10)
		marple_warn("%lu bad lines in all (first ten shown)", bad);
	else if (bad)
		marple_warn("%lu bad line%s skipped", bad, bad == 1 ? "" : "s");
	if (nsections == 0) {
		marple_outfile_abort(o);
		if (!failed)
			marple_warn_at(marple_operands_name(argc - optind, argv + optind), 0, "no MARPLE section in input");
		return EXIT_DATA;
	}
	if (marple_outfile_commit(o) != 0)
		return EXIT_DATA;
	return failed ? EXIT_DATA : EXIT_OK;
}
