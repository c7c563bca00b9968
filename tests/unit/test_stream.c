/* test_stream — unit tests of lib/stream and lib/escape: hostile names
 * round-trip byte for byte, every malformed-line class is caught with its
 * line number, headers/trailers and concatenated streams read right. */
#include <stdlib.h>
#include <string.h>

#include "framedesc.h"
#include "stream.h"
#include "test.h"
#include "util.h"
#include "xml.h"

static const char *const hostile[] = {
	"", "plain", "with space", "a,b", "a;b", "a#b", "100%", "%41", "{json}",
	"std::vector<std::pair<int, char>>::operator[](unsigned long)",
	"quote\"s 'and' \\backslash", "new\nline", "cr\rlf", "tab\there",
	"nul\0inside", "\x01\x02\x7f", "inv\xff\xfeutf8", "\xc3\x28", "\xed\xa0\x80",
	"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5", "<script>alert(1)</script>", "]]>",
	"key=value", "=", "trailing%", "\xe2\x80\xa8",
};
/* Lengths as sizeof(literal) - 1 gives them (NUL and all); an ASan run checks them. */
static const size_t hostile_len[] = {
	0, 5, 10, 3, 3, 3, 4, 3, 6, 60, 24, 8, 5, 8, 10, 3, 9, 2, 3, 14, 25, 3, 9, 1, 9, 3,
};
#define NHOSTILE (sizeof(hostile) / sizeof(hostile[0]))

static FILE *reader_of(const char *text)
{
	return fmemopen((void *)text, strlen(text), "r");
}

static int mstr_same(struct mstr m, const char *s, size_t len)
{
	return m.len == len && memcmp(m.s, s, len) == 0;
}

static void test_escape_roundtrip(void)
{
	int all = 1;
	for (size_t i = 0; i < NHOSTILE; i++) {
		char *e = escape_dup(hostile[i], hostile_len[i]);
		if (strpbrk(e, ",;#\n\r") != NULL)
			all = 0;
		size_t n = strlen(e);
		long d = escape_decode_inplace(e, n, NULL);
		if (d != (long)hostile_len[i] || memcmp(e, hostile[i], hostile_len[i]) != 0)
			all = 0;
		free(e);
	}
	test_cond("escape: every hostile name round-trips and has no separator", all);
	char *e = escape_dup("caf\xc3\xa9 x", 7);
	test_cond("escape: valid UTF-8 and spaces stay readable", strcmp(e, "caf\xc3\xa9 x") == 0);
	free(e);
	e = escape_dup("a,b;c#d%e", 9);
	test_cond("escape: separators become %XX", strcmp(e, "a%2Cb%3Bc%23d%25e") == 0);
	free(e);
	/* Every single byte value round-trips. */
	int bytes_ok = 1;
	for (int b = 0; b < 256; b++) {
		char c = (char)b;
		char *x = escape_dup(&c, 1);
		long d = escape_decode_inplace(x, strlen(x), NULL);
		if (d != 1 || (unsigned char)x[0] != b)
			bytes_ok = 0;
		free(x);
	}
	test_cond("escape: all 256 byte values round-trip", bytes_ok);
}

static void test_records_roundtrip(void)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *w = open_memstream(&buf, &size);
	struct mstr frames[NHOSTILE];
	struct field fields[NHOSTILE];

	for (size_t i = 0; i < NHOSTILE; i++) {
		frames[i] = (struct mstr){ hostile[i], hostile_len[i] };
		fields[i].key = (struct mstr){ hostile[i], hostile_len[i] };
		fields[i].value = (struct mstr){ hostile[NHOSTILE - 1 - i], hostile_len[NHOSTILE - 1 - i] };
	}
	json_t *h = stream_section_header_new("test", DATATYPE_STACK);
	stream_write_json(w, h);
	json_decref(h);
	stream_write_stack(w, 18446744073709551615ull, frames, NHOSTILE);
	for (size_t i = 0; i < NHOSTILE; i++)
		stream_write_stack(w, i, &frames[i], 1);
	json_t *t = stream_section_trailer_new(NHOSTILE + 1, 0, 0, "duration");
	stream_write_json(w, t);
	json_decref(t);
	h = stream_section_header_new("test-ev", DATATYPE_EVENT);
	stream_write_json(w, h);
	json_decref(h);
	for (size_t i = 0; i < NHOSTILE; i++)
		stream_write_event(w, 1000 + i, escape_mstr_c("ev"), frames[i], fields, NHOSTILE);
	h = stream_section_header_new("test-pt", DATATYPE_POINT);
	stream_write_json(w, h);
	json_decref(h);
	stream_write_point(w, 0.1, -2.5e-300, frames[9], fields, 3);
	fclose(w);

	FILE *f = fmemopen(buf, size, "r");
	struct stream_reader *r = stream_reader_new(f, "mem");
	int ok = 1, nrec = 0, nhdr = 0, ntrl = 0;
	enum stream_item it;
	while ((it = stream_reader_next(r)) != STREAM_EOF) {
		if (it == STREAM_ERROR) {
			printf("# %s:%lu: %s\n", stream_reader_name(r), stream_reader_line(r), stream_reader_error(r));
			ok = 0;
			break;
		}
		if (it == STREAM_HEADER)
			nhdr++;
		if (it == STREAM_TRAILER)
			ntrl++;
		if (it != STREAM_RECORD)
			continue;
		if (nhdr == 1 && nrec == 0) {
			const struct stack_rec *s = stream_reader_stack(r);
			ok &= s->weight == 18446744073709551615ull && s->nframes == NHOSTILE;
			for (size_t i = 0; ok && i < NHOSTILE; i++)
				ok &= mstr_same(s->frames[i], hostile[i], hostile_len[i]);
		} else if (nhdr == 1) {
			const struct stack_rec *s = stream_reader_stack(r);
			size_t i = (size_t)nrec - 1;
			ok &= s->weight == i && s->nframes == 1 && mstr_same(s->frames[0], hostile[i], hostile_len[i]);
		} else if (nhdr == 2) {
			const struct event_rec *e = stream_reader_event(r);
			size_t i = (size_t)nrec - 1 - NHOSTILE;
			ok &= e->time == 1000 + i && escape_mstr_eq(e->type, "ev") && mstr_same(e->track, hostile[i], hostile_len[i]);
			ok &= e->nfields == NHOSTILE;
			for (size_t k = 0; ok && k < NHOSTILE; k++)
				ok &= mstr_same(e->fields[k].key, hostile[k], hostile_len[k]) &&
				      mstr_same(e->fields[k].value, hostile[NHOSTILE - 1 - k], hostile_len[NHOSTILE - 1 - k]);
		} else {
			const struct point_rec *p = stream_reader_point(r);
			ok &= p->x == 0.1 && p->y == -2.5e-300 && mstr_same(p->info, hostile[9], hostile_len[9]);
			ok &= p->nfields == 3 && mstr_same(p->fields[2].key, hostile[2], hostile_len[2]);
		}
		nrec++;
	}
	test_cond("stream: hostile names round-trip in stack, event and point records", ok);
	test_cond("stream: record, header and trailer counts", nrec == (int)(1 + 2 * NHOSTILE + 1) && nhdr == 3 && ntrl == 1);
	test_cond("stream: 0.1 written as 0.1", strstr(buf, "\n0.1,") != NULL);
	stream_reader_free(r);
	fclose(f);
	free(buf);
}

/* One malformed input per class: the error must name the right line. */
static void test_malformed(void)
{
	static const struct { const char *name, *text, *reason; unsigned long line; } cases[] = {
		{ "record before header", "5#a\n", "before any section header", 1 },
		{ "bad JSON", "{\"marple\":1,\n", "bad JSON", 1 },
		{ "JSON not object", "{\"marple\":1}\n[1]\n", "", 1 },
		{ "neither header nor trailer", "{\"x\":1}\n", "neither", 1 },
		{ "missing version", "{\"interface\":\"a\",\"datatype\":\"stack\",\"marple\":\"1\"}\n", "format version", 1 },
		{ "newer version", "{\"marple\":99,\"interface\":\"a\",\"datatype\":\"stack\"}\n", "newer", 1 },
		{ "bad datatype", "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"tree\"}\n", "datatype", 1 },
		{ "missing interface", "{\"marple\":1,\"datatype\":\"stack\"}\n", "interface", 1 },
		{ "duplicate key", "{\"marple\":1,\"marple\":1,\"interface\":\"a\",\"datatype\":\"stack\"}\n", "bad JSON", 1 },
		{ "stack without #", "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"stack\"}\n1#a\n12;a;b\n", "without '#'", 3 },
		{ "negative weight", "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"stack\"}\n-1#a\n", "weight", 2 },
		{ "huge weight", "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"stack\"}\n18446744073709551616#a\n", "weight", 2 },
		{ "weight with garbage", "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"stack\"}\n12x#a\n", "weight", 2 },
		{ "bad escape", "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"stack\"}\n1#a%G1\n", "escape", 2 },
		{ "cut escape", "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"stack\"}\n1#a%4\n", "escape", 2 },
		{ "no final newline", "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"stack\"}\n1#abc", "no newline", 2 },
		{ "event missing track", "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"event\"}\n5,sw\n", "time,type,track", 2 },
		{ "event bad time", "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"event\"}\n5.5,sw,cpu0\n", "time", 2 },
		{ "event empty type", "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"event\"}\n5,,cpu0\n", "type", 2 },
		{ "event field without =", "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"event\"}\n5,sw,cpu0,pid\n", "key=value", 2 },
		{ "event empty field inside", "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"event\"}\n5,sw,cpu0,a=1,,b=2\n", "field 2 is not key=value", 2 },
		{ "event trailing comma", "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"event\"}\n5,sw,cpu0,\n", "empty field", 2 },
		{ "point missing info", "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"point\"}\n1,2\n", "x,y,info", 2 },
		{ "point bad number", "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"point\"}\n1,zz,a\n", "not a number", 2 },
		{ "point nan", "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"point\"}\n1,nan,a\n", "not a number", 2 },
		{ "point inf", "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"point\"}\n1e999,1,a\n", "out of range", 2 },
		{ "trailer before header", "{\"trailer\":1}\n", "before any section", 1 },
		{ "two trailers", "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"stack\"}\n{\"trailer\":1}\n{\"trailer\":1}\n", "second trailer", 3 },
		{ "record after trailer", "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"stack\"}\n{\"trailer\":1}\n1#a\n", "after the section", 3 },
		{ "truncated section", "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"stack\"}\n1#a\n{\"trailer\":1,\"records\":2}\n", "trailer says 2", 3 },
		{ "NUL byte", "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"stack\"}\n1#a\0b\n", "NUL", 2 },
		{ "start_ns a string", "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"stack\",\"start_ns\":\"x\"}\n", "\"start_ns\" is not a whole number", 1 },
		{ "start_ns 1e300", "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"stack\",\"start_ns\":1e300}\n", "\"start_ns\"", 1 },
		{ "start_ns negative", "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"stack\",\"start_ns\":-5}\n", "\"start_ns\"", 1 },
		{ "wall_ns negative", "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"stack\",\"wall_ns\":-1}\n", "\"wall_ns\"", 1 },
		{ "host an object", "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"stack\",\"host\":{\"a\":[1]}}\n", "\"host\" is not a string", 1 },
		{ "units an array", "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"stack\",\"units\":[1,2]}\n", "\"units\" is not an object of strings", 1 },
		{ "a unit a number", "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"stack\",\"units\":{\"weight\":1}}\n", "\"units\"", 1 },
		{ "options an array", "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"stack\",\"options\":[]}\n", "\"options\"", 1 },
		{ "timed unknown", "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"stack\",\"timed\":\"yes\"}\n", "\"timed\"", 1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = strlen(cases[i].text);
		if (strcmp(cases[i].name, "NUL byte") == 0)
			len = strlen(cases[i].text) + 3;
		FILE *f = fmemopen((void *)cases[i].text, len, "r");
		struct stream_reader *r = stream_reader_new(f, "case");
		enum stream_item it;
		int got_error = 0;
		while ((it = stream_reader_next(r)) != STREAM_EOF)
			if (it == STREAM_ERROR) {
				got_error = 1;
				break;
			}
		char name[128];
		snprintf(name, sizeof(name), "malformed: %s", cases[i].name);
		int ok = got_error && stream_reader_line(r) == cases[i].line &&
			 strstr(stream_reader_error(r), cases[i].reason) != NULL;
		if (!ok)
			printf("# %s: line %lu: %s\n", cases[i].name, stream_reader_line(r), stream_reader_error(r));
		test_cond(name, ok);
		stream_reader_free(r);
		fclose(f);
	}
}

/* Read text through; the items of each kind, and the reader's verdict. */
static const char *verdict_of(const char *text, size_t len, int *records, int *errors)
{
	static char why[200];
	FILE *f = fmemopen((void *)text, len, "r");
	struct stream_reader *r = stream_reader_new(f, "case");
	enum stream_item it;
	*records = *errors = 0;
	while ((it = stream_reader_next(r)) != STREAM_EOF) {
		*records += it == STREAM_RECORD;
		*errors += it == STREAM_ERROR;
	}
	const char *v = stream_reader_unusable(r);
	snprintf(why, sizeof(why), "%s", v ? v : "");
	stream_reader_free(r);
	fclose(f);
	return why;
}

/* marple-format(5), UNUSABLE INPUT: a NUL byte, or more malformed lines than usable records. */
static void test_unusable(void)
{
	int rec, err;
	const char *why;
	static const char nul[] = "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"stack\"}\n1#a\n1#b\0\n1#c\n1#d\n";
	why = verdict_of(nul, sizeof(nul) - 1, &rec, &err);
	test_cond("unusable: a NUL byte ends reading (no record after it)", rec == 1 && err == 1);
	test_cond("unusable: a NUL byte makes the input unusable", strstr(why, "NUL byte at line 3") != NULL);
	const char *half = "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"stack\"}\n1#a\n-1#b\n1#c\nx#d\n";
	why = verdict_of(half, strlen(half), &rec, &err);
	test_cond("unusable: as many malformed lines as usable records is usable", rec == 2 && err == 2 && !*why);
	const char *most = "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"stack\"}\n1#a\n-1#b\nx#d\n";
	why = verdict_of(most, strlen(most), &rec, &err);
	test_cond("unusable: more malformed lines than usable records",
		  strstr(why, "2 malformed lines, more than its 1 usable record") != NULL);
	/* a header rejected: its records are malformed, not taken as the previous section's */
	const char *hdr = "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"event\"}\n5,t,cpu0\n"
			  "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"stack\",\"units\":[1]}\n1#a\n2#b\n"
			  "{\"trailer\":1,\"records\":2}\n";
	why = verdict_of(hdr, strlen(hdr), &rec, &err);
	test_cond("unusable: the records and trailer of a rejected header are malformed", rec == 1 && err == 4 && *why);
	test_cond("unusable: the rule alone", !stream_unusable_why(3, 3, 0) && stream_unusable_why(3, 4, 0) &&
		  stream_unusable_why(100, 0, 7) && !stream_unusable_why(0, 0, 0));
}

static void test_concatenated(void)
{
	const char *one = "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"stack\"}\n3#x;y\n{\"trailer\":1,\"records\":1}\n";
	char both[512];
	snprintf(both, sizeof(both), "%s%s", one, one);
	FILE *f = reader_of(both);
	struct stream_reader *r = stream_reader_new(f, "cat");
	enum stream_item it;
	int headers = 0, records = 0, errors = 0;
	while ((it = stream_reader_next(r)) != STREAM_EOF) {
		headers += it == STREAM_HEADER;
		records += it == STREAM_RECORD;
		errors += it == STREAM_ERROR;
	}
	test_cond("concatenated: two sections, two records, no error", headers == 2 && records == 2 && errors == 0);
	test_cond("concatenated: section index", stream_reader_section(r) == 1);
	stream_reader_free(r);
	fclose(f);

	/* No trailer, blank lines and CRLF are accepted; a header after records starts a new section. */
	f = reader_of("{\"marple\":1,\"interface\":\"a\",\"datatype\":\"event\"}\r\n\n7,sw,cpu1,pid=3\r\n"
		      "{\"marple\":1,\"interface\":\"b\",\"datatype\":\"point\",\"extra\":{\"x\":1}}\n1,2,info\n");
	r = stream_reader_new(f, "loose");
	headers = records = errors = 0;
	int fields_ok = 0;
	while ((it = stream_reader_next(r)) != STREAM_EOF) {
		headers += it == STREAM_HEADER;
		records += it == STREAM_RECORD;
		errors += it == STREAM_ERROR;
		if (it == STREAM_RECORD && stream_reader_datatype(r) == DATATYPE_EVENT) {
			const struct event_rec *e = stream_reader_event(r);
			const struct mstr *pid = stream_fields_get(e->fields, e->nfields, "pid");
			fields_ok = e->time == 7 && escape_mstr_eq(e->track, "cpu1") && pid && escape_mstr_eq(*pid, "3");
		}
	}
	test_cond("optional trailer, blank lines, CRLF", headers == 2 && records == 2 && errors == 0);
	test_cond("event fields by key", fields_ok);
	stream_reader_free(r);
	fclose(f);
}

static void test_header(void)
{
	json_t *h = stream_section_header_new("callstack", DATATYPE_STACK);
	test_cond("header: has version, start, wall clock, host, kernel",
		  stream_header_int(h, "marple", 0) == 1 && stream_header_int(h, "start_ns", 0) > 0 &&
			  stream_header_int(h, "wall_ns", 0) > 1600000000000000000ll && stream_header_str(h, "host", NULL) &&
			  stream_header_str(h, "kernel", NULL));
	json_decref(h);
	json_t *s = stream_json_string_bytes("bad\xff name", 9);
	test_cond("header: invalid UTF-8 string is %-escaped", s && strcmp(json_string_value(s), "bad%FF name") == 0);
	json_decref(s);
}

static void test_numbers(void)
{
	uint64_t v;
	double d;
	test_cond("marple_parse_u64 accepts 42", marple_parse_u64("42", 0, 100, &v) == 0 && v == 42);
	test_cond("marple_parse_u64 rejects trailing garbage", marple_parse_u64("42x", 0, 100, &v) < 0);
	test_cond("marple_parse_u64 rejects sign", marple_parse_u64("-1", 0, 100, &v) < 0 && marple_parse_u64("+1", 0, 100, &v) < 0);
	test_cond("marple_parse_u64 enforces range", marple_parse_u64("101", 0, 100, &v) < 0);
	test_cond("marple_parse_u64 rejects overflow", marple_parse_u64("99999999999999999999", 0, UINT64_MAX, &v) < 0);
	test_cond("marple_parse_double rejects nan", marple_parse_double("nan", -1e9, 1e9, &d) < 0);
	test_cond("parse_duration 500ms", marple_parse_duration_ns("500ms", &v) == 0 && v == 500000000ull);
	test_cond("parse_duration 10", marple_parse_duration_ns("10", &v) == 0 && v == 10000000000ull);
	test_cond("parse_duration 2m", marple_parse_duration_ns("2m", &v) == 0 && v == 120000000000ull);
	test_cond("parse_duration rejects 10x", marple_parse_duration_ns("10x", &v) < 0);
}

/* stream_write_double's text of v, in buf */
static const char *double_text(double v, char *buf, size_t size)
{
	FILE *f = fmemopen(buf, size, "w");
	stream_write_double(f, v);
	fclose(f);
	return buf;
}

static void test_doubles(void)
{
	char b[64];
	test_cond("stream_write_double: small seconds in fixed point (memtime's first x)",
		  strcmp(double_text(7.5803e-05, b, sizeof b), "0.000075803") == 0);
	test_cond("stream_write_double: negative small values too", strcmp(double_text(-1.5e-3, b, sizeof b), "-0.0015") == 0);
	test_cond("stream_write_double: plain values unchanged", strcmp(double_text(1.000076222, b, sizeof b), "1.000076222") == 0);
	test_cond("stream_write_double: tiny values keep the exponent", strcmp(double_text(1e-300, b, sizeof b), "1e-300") == 0);
	test_cond("stream_write_double: huge values keep the exponent", strcmp(double_text(1e300, b, sizeof b), "1e+300") == 0);
	int same = 1;
	for (double v = 1e-12; v < 1; v *= 3.7)
		same &= strtod(double_text(v, b, sizeof b), NULL) == v && !strchr(b, 'e');
	test_cond("stream_write_double: 1e-12 to 1 read back the same, no exponent", same);
}

static void test_xml(void)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *m = open_memstream(&buf, &size);
	xml_escape_write(m, "<a href=\"x\">&'\x01\xff]]>", 19);
	fclose(m);
	test_cond("xml: markup escaped, control and invalid bytes replaced",
		  strcmp(buf, "&lt;a href=&quot;x&quot;&gt;&amp;&#39;\xef\xbf\xbd\xef\xbf\xbd]]&gt;") == 0);
	free(buf);
	m = open_memstream(&buf, &size);
	xml_js_string_cstr(m, "</script>\"\\\n");
	fclose(m);
	test_cond("js: string safe inside <script>", strcmp(buf, "\"\\u003c/script\\u003e\\\"\\\\\\u000a\"") == 0);
	free(buf);
}

/* A regular file is read a MiB at a time (stream.c's read_chunked): lines
 * across the chunk edges, a line longer than the buffer, frames with and
 * without %XX escapes, the raw text of each, and the last line's missing
 * newline read as through getline. */
static void test_chunked(void)
{
	FILE *f = tmpfile();
	size_t big = (3u << 20) / 2;	/* longer than the first buffer */
	fputs("{\"marple\":1,\"interface\":\"t\",\"datatype\":\"stack\"}\n", f);
	for (int i = 0; i < 40000; i++)	/* some 1.3 MiB: lines across chunk edges */
		fprintf(f, "%d#comm;main;frame_%d;leaf%s\n", i, i, i % 7 ? "" : "%3Bx");
	fputs("1#", f);
	for (size_t i = 0; i < big; i++)
		fputc('a' + (int)(i % 26), f);
	fputs(";end\n5#no;newline", f);
	rewind(f);

	struct stream_reader *r = stream_reader_new(f, "chunked");
	enum stream_item it;
	int ok = 1, raw_ok = 1, n = 0, big_ok = 0;
	char want[64];
	while ((it = stream_reader_next(r)) == STREAM_HEADER || it == STREAM_RECORD) {
		if (it != STREAM_RECORD)
			continue;
		const struct stack_rec *s = stream_reader_stack(r);
		struct mstr raw = stream_reader_raw(r);
		if (n < 40000) {
			int w = snprintf(want, sizeof(want), "frame_%d", n);
			ok &= s->weight == (uint64_t)n && s->nframes == 4 && mstr_same(s->frames[2], want, (size_t)w) &&
			      mstr_same(s->frames[3], n % 7 ? "leaf" : "leaf;x", n % 7 ? 4 : 6);
			w = snprintf(want, sizeof(want), "%d#comm;main;frame_%d;leaf%s", n, n, n % 7 ? "" : "%3Bx");
			raw_ok &= mstr_same(raw, want, (size_t)w);
		} else {
			big_ok = s->nframes == 2 && s->frames[0].len == big && s->frames[0].s[big - 1] == 'a' + (int)((big - 1) % 26) &&
				 mstr_same(s->frames[1], "end", 3) && raw.len == big + 6;
		}
		n++;
	}
	test_cond("stream: a regular file's records read right across chunk edges", ok && n == 40001);
	test_cond("stream: a regular file's raw lines, escaped or not, as written", raw_ok);
	test_cond("stream: a line longer than the read buffer", big_ok);
	test_cond("stream: a regular file's last line without newline is an error on its line",
		  it == STREAM_ERROR && stream_reader_line(r) == 40003 && strstr(stream_reader_error(r), "newline"));
	stream_reader_free(r);
	fclose(f);
}

/* Fields of every length from 1 to 40 bytes, keys and values, '=' inside
 * values, after the 16-byte steps of split_fields and across them. */
static void test_fields(void)
{
	char text[8192], want_k[64], want_v[64];
	size_t at = (size_t)snprintf(text, sizeof(text), "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"event\"}\n7,sw,cpu0");
	for (int i = 1; i <= 40; i++) {
		text[at++] = ',';
		for (int k = 0; k < i; k++)
			text[at++] = (char)('a' + k % 26);
		text[at++] = '=';
		for (int k = 0; k < 41 - i; k++)
			text[at++] = k % 5 == 4 ? '=' : (char)('0' + k % 10);
	}
	text[at++] = '\n';
	FILE *f = fmemopen(text, at, "r");
	struct stream_reader *r = stream_reader_new(f, "fields");
	enum stream_item it = stream_reader_next(r);
	it = stream_reader_next(r);
	const struct event_rec *e = stream_reader_event(r);
	int ok = it == STREAM_RECORD && e->nfields == 40;
	for (int i = 1; ok && i <= 40; i++) {
		for (int k = 0; k < i; k++)
			want_k[k] = (char)('a' + k % 26);
		for (int k = 0; k < 41 - i; k++)
			want_v[k] = k % 5 == 4 ? '=' : (char)('0' + k % 10);
		ok = mstr_same(e->fields[i - 1].key, want_k, (size_t)i) &&
		     mstr_same(e->fields[i - 1].value, want_v, (size_t)(41 - i));
	}
	test_cond("stream: fields of 1 to 40 bytes, '=' in values, split right", ok);
	stream_reader_free(r);
	fclose(f);
}

/* Frame identity tags (marple-format(5)): "name#89abcdef" reads as the name
 * with its tag, through both paths (with and without %XX escapes); "%23" is
 * a '#' of the name; a '#' not followed by 8 hex digits stays in the name;
 * the raw line is unchanged; the writer writes what the reader read; the
 * trailer's descriptions are found by the frame's key. */
static void test_tags(void)
{
	const char *text = "{\"marple\":1,\"interface\":\"a\",\"datatype\":\"stack\"}\n"
			   "3#p;spin#0000b0b1;main\n"
			   "4#p%25;spin#0000b0b1;x%23deadbeef;y#12;z#DEADBEEF;w#00000000\n"
			   "{\"trailer\":1,\"records\":2,\"frames\":{\"spin\":{\"kind\":\"native\",\"file\":\"/a\"},"
			   "\"spin#0000b0b1\":{\"kind\":\"native\",\"file\":\"/b\"}}}\n";
	FILE *f = reader_of(text);
	struct stream_reader *r = stream_reader_new(f, "tags");
	struct framedesc *fd = framedesc_new();
	int ok1 = 0, ok2 = 0, raw_ok = 1, described = 0;
	char *out = NULL;
	size_t outlen = 0;
	FILE *w = open_memstream(&out, &outlen);
	enum stream_item it;
	while ((it = stream_reader_next(r)) != STREAM_EOF) {
		if (it == STREAM_TRAILER)
			framedesc_add(fd, stream_reader_trailer(r));
		if (it != STREAM_RECORD)
			continue;
		const struct stack_rec *s = stream_reader_stack(r);
		struct mstr raw = stream_reader_raw(r);
		raw_ok &= memchr(raw.s, '#', raw.len) != NULL && strstr(raw.s, "spin#0000b0b1") != NULL;
		const char *names[8];
		for (size_t i = 0; i < s->nframes && i < 8; i++)
			names[i] = marple_strndup(s->frames[i].s, s->frames[i].len);
		stream_write_stack_tagged(w, s->weight, names, s->tags, s->nframes);
		if (s->weight == 3)
			ok1 = s->nframes == 3 && s->tags && escape_mstr_eq(s->frames[1], "spin") && s->tags[1] == 0xb0b1 &&
			      s->tags[0] == 0 && s->tags[2] == 0 && escape_mstr_eq(s->frames[2], "main");
		else
			ok2 = s->nframes == 6 && s->tags && escape_mstr_eq(s->frames[0], "p%") && s->tags[0] == 0 &&
			      escape_mstr_eq(s->frames[1], "spin") && s->tags[1] == 0xb0b1 &&
			      escape_mstr_eq(s->frames[2], "x#deadbeef") && s->tags[2] == 0 &&
			      escape_mstr_eq(s->frames[3], "y#12") && escape_mstr_eq(s->frames[4], "z#DEADBEEF") &&
			      escape_mstr_eq(s->frames[5], "w#00000000") && !s->tags[3] && !s->tags[4] && !s->tags[5];
		for (size_t i = 0; i < s->nframes && i < 8; i++)
			free((char *)names[i]);
	}
	fclose(w);
	test_cond("tags: a tagged frame reads as its name and tag", ok1);
	test_cond("tags: with %XX escapes too; %23 and a '#' without 8 lower-case hex digits are the name's", ok2);
	test_cond("tags: the raw line keeps the tag", raw_ok);
	test_cond("tags: written back as read",
		  out && strcmp(out, "3#p;spin#0000b0b1;main\n4#p%25;spin#0000b0b1;x%23deadbeef;y%2312;z%23DEADBEEF;w%2300000000\n") == 0);
	const struct framedesc_frame *a = framedesc_get(fd, "spin", 4);
	char key[9] = "spin";
	uint32_t tag = 0xb0b1;
	memcpy(key + 5, &tag, sizeof(tag));
	const struct framedesc_frame *b = framedesc_get(fd, key, sizeof(key));
	size_t name_len = 0;
	described = a && b && a->file && b->file && strcmp(a->file, "/a") == 0 && strcmp(b->file, "/b") == 0;
	test_cond("tags: the trailer describes the name and the tagged frame apart", described);
	test_cond("tags: a key splits into name and tag",
		  stream_frame_key_split(key, sizeof(key), &name_len) == 0xb0b1 && name_len == 4 &&
		  stream_frame_key_split("spin", 4, &name_len) == 0 && name_len == 4);
	free(out);
	framedesc_free(fd);
	stream_reader_free(r);
	fclose(f);
}

int main(void)
{
	test_plan(88);
	test_fields();
	test_chunked();
	test_escape_roundtrip();
	test_records_roundtrip();
	test_malformed();
	test_unusable();
	test_concatenated();
	test_tags();
	test_header();
	test_numbers();
	test_doubles();
	test_xml();
	return test_report();
}
