/* marple-flamescope — a subsecond-offset heat map of a timed stack section
 * beside the flame graph of any time range, in one self-contained HTML page.
 *
 * Reads the timed stack sections of its input (marple-callstack --timed,
 * marple-offcpu --timed: marple-format(5), "Timed stack sections"): the
 * first one's collector, and every later section of it (--every writes one an
 * interval) on the same time axis, with its stacks merged into the others'.
 * Writes a page that needs no network: each column of the heat map is a
 * second (--column), each cell a slice of it (--row, 20 ms), coloured by how
 * much was sampled then; click a cell or drag across cells for the flame graph
 * of that range, shift-drag for a baseline (a differential flame graph),
 * search frames by regex, filter by process or thread.
 *
 *   $ marple-callstack --timed 60 | marple-flamescope > cpu.html
 *   var C={...,"rows":50,"cols":60}; var Z={"cell":"H4sIAAAA...",...}
 *
 * What is sampled is kept per cell, stack and thread (all a selection of cells
 * needs), as typed arrays gzip-compressed and base64-encoded in the page.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gzb64.h"
#include "intern.h"
#include "options.h"
#include "stream.h"
#include "timed.h"
#include "util.h"
#include "xml.h"

static struct {
	const char *title, *out;
	double column_s, row_ms;
	const char *color;
} opt = { .title = "Flame Scope", .color = "quantile", .column_s = 1, .row_ms = 20 };

#include "timefmt.js.h"	/* lib/render/timefmt.js, the times of the page */
#include "flamescope.js.h"	/* renderers/flamescope.js, made a C string by the Makefile */

/* Columns the page can draw: 3 px each in a canvas of at most 32767 px. */
#define MAX_COLUMNS 10800

/* One (cell, stack, thread) with what was sampled there. */
struct entry {
	uint32_t cell, stack, thread;
	uint64_t w;			/* samples, or ns of blocks */
};

struct scope {
	int state;			/* 0 looking, 1 in the stacks, 2 in the samples */
	json_t *hdr;			/* the first drawn stack section's: what the page says */
	uint64_t start, row_ns, col_ns, ns_per_weight;	/* start: the first section's, time 0 */
	uint32_t nrows;
	struct intern *names;		/* frame names */
	struct intern *stacks;		/* stacks of all sections, by their name ids */
	uint32_t *frames;		/* per stack: nframes, then name ids root first */
	size_t nframes, framecap;
	size_t *stack_at;		/* where each stack begins in frames */
	size_t nstacks, stackcap;
	uint32_t *local;		/* this section's stack positions: their ids in stacks */
	size_t nlocal, localcap;
	uint32_t *key;			/* a stack's name ids, while it is looked up */
	size_t keycap;
	/* Where this section's sample times land on the time axis, which is the
	 * first section's clock: sections of one run continue its clock, one
	 * whose clock starts over (another boot) is placed by its wall_ns. */
	int64_t shift;			/* added to a sample's time */
	uint64_t prev_start;		/* the section before's start_ns, its own clock */
	uint64_t sections;		/* samples sections drawn */
	struct intern *threads;		/* "pid tid" */
	uint32_t *thread_name;		/* frame 0 of the first stack seen of it */
	size_t tncap;
	struct entry *e;
	size_t ne, ecap;
	uint64_t samples, lost, bad, early, skipped_sections;
	char *skipped_first;		/* "INTERFACE at FILE:LINE" of the first left out */
};

enum { O_COLUMN = 256, O_ROW, O_COLOR, O_TITLE };

static const struct options_entry options[] = {
	{ O_COLUMN, "column", "SEC", "seconds per heat-map column (default 1)" },
	{ O_ROW, "row", "MS", "milliseconds per row (default 20)" },
	{ O_COLOR, "color", "quantile|linear|rank", "colour cells by quantile of count (default), count or rank" },
	{ O_TITLE, "title", "TEXT", "page title (default \"Flame Scope\")" },
	OPTIONS_OUTPUT,
	OPTIONS_DESCRIBE("kind=renderer\tdisplay=flamescope\treads=timed\text=html"),
	OPTIONS_HELP,
	{ 0 }
};

static const struct options_help help = {
	.synopsis = "[OPTION]... [FILE]...",
	.about = "Draw the timed stack sections of the input (marple-callstack --timed,\n"
	         "marple-offcpu --timed) as a subsecond-offset heat map beside the flame graph\n"
	         "of a selected time range, in one self-contained HTML page.  Every section\n"
	         "of the first one's collector is drawn on one time axis (--every writes one\n"
	         "an interval); other collectors' are left out, and named.\n",
	.after = "With no FILE, or FILE '-', read stdin.  Exit: 0 ok, 1 bad or unusable input,\n"
	         "2 usage.  See marple-flamescope(1).\n",
};

/* A stack record of the section: its id among every section's stacks (the
 * same stack in two intervals is one stack of the page). */
static void add_stack(struct scope *s, const struct stack_rec *sr)
{
	s->key = marple_grow(s->key, &s->keycap, sr->nframes + 1, sizeof(*s->key));
	for (size_t i = 0; i < sr->nframes; i++)
		s->key[i] = intern_get(s->names, sr->frames[i].s, sr->frames[i].len);
	uint32_t id = intern_get(s->stacks, (const char *)s->key, sr->nframes * sizeof(*s->key));

	if (id == s->nstacks) {
		s->stack_at = marple_grow(s->stack_at, &s->stackcap, s->nstacks + 1, sizeof(*s->stack_at));
		s->stack_at[s->nstacks++] = s->nframes;
		s->frames = marple_grow(s->frames, &s->framecap, s->nframes + sr->nframes + 1, sizeof(*s->frames));
		s->frames[s->nframes++] = (uint32_t)sr->nframes;
		memcpy(s->frames + s->nframes, s->key, sr->nframes * sizeof(*s->key));
		s->nframes += sr->nframes;
	}
	s->local = marple_grow(s->local, &s->localcap, s->nlocal + 1, sizeof(*s->local));
	s->local[s->nlocal++] = id;
}

static uint32_t thread_of(struct scope *s, const struct timed_sample *ts)
{
	char key[32];
	int n = snprintf(key, sizeof(key), "%u %u", ts->pid, ts->tid);
	size_t before = intern_count(s->threads);
	uint32_t id = intern_get(s->threads, key, (size_t)n);

	if (id == before) {
		s->thread_name = marple_grow(s->thread_name, &s->tncap, (size_t)id + 1, sizeof(*s->thread_name));
		s->thread_name[id] = s->frames[s->stack_at[ts->stack] + 1];	/* every stack has a frame */
	}
	return id;
}

static void add_entry(struct scope *s, uint64_t rel, uint32_t stack, uint32_t thread, uint64_t w)
{
	uint64_t col = rel / s->col_ns, row = rel % s->col_ns / s->row_ns;
	uint64_t cell = col * s->nrows + row;

	if (cell >= UINT32_MAX) {
		s->bad++;
		return;
	}
	s->e = marple_grow(s->e, &s->ecap, s->ne + 1, sizeof(*s->e));
	s->e[s->ne++] = (struct entry){ (uint32_t)cell, stack, thread, w };
}

/* A sample into its cell; a block into every cell it overlaps. */
static void add_sample(struct scope *s, const struct timed_sample *ts)
{
	uint32_t th = thread_of(s, ts);

	s->samples++;
	/* on the axis: ts->time + shift - start, unless that is before 0 */
	if (ts->time > INT64_MAX || (int64_t)ts->time + s->shift < (int64_t)s->start) {
		s->early++;
		return;
	}
	uint64_t rel = (uint64_t)((int64_t)ts->time + s->shift - (int64_t)s->start);
	if (!ts->dur || !s->ns_per_weight) {
		add_entry(s, rel, (uint32_t)ts->stack, th, 1);
		return;
	}
	for (uint64_t t = rel, end = rel + ts->dur; t < end;) {
		uint64_t cell_end = (t / s->col_ns) * s->col_ns + (t % s->col_ns / s->row_ns + 1) * s->row_ns;
		uint64_t col_end = (t / s->col_ns + 1) * s->col_ns;
		if (cell_end > col_end)
			cell_end = col_end;
		uint64_t e = end < cell_end ? end : cell_end;
		add_entry(s, t, (uint32_t)ts->stack, th, e - t);
		t = e;
	}
}

static int by_cell(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->cell != y->cell)
		return x->cell < y->cell ? -1 : 1;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return x->thread < y->thread ? -1 : x->thread > y->thread;
}

/* Sort the entries and merge equal (cell, stack, thread) ones. */
static void merge_entries(struct scope *s)
{
	size_t o = 0;

	if (!s->ne)	/* no samples: e is NULL, which qsort may not be given even for none */
		return;
	qsort(s->e, s->ne, sizeof(*s->e), by_cell);
	for (size_t i = 0; i < s->ne; i++) {
		if (o && s->e[o - 1].cell == s->e[i].cell && s->e[o - 1].stack == s->e[i].stack &&
		    s->e[o - 1].thread == s->e[i].thread)
			s->e[o - 1].w += s->e[i].w;
		else
			s->e[o++] = s->e[i];
	}
	s->ne = o;
}

/* Does a stack section belong with the first one drawn: the same collector
 * on the same host, weights in the same unit (one heat map adds them)? */
static int same_kind(json_t *first, json_t *hdr)
{
	static const char *const keys[] = { "interface", "host", "cpu" };
	for (size_t k = 0; k < sizeof(keys) / sizeof(*keys); k++)
		if (strcmp(stream_header_str(first, keys[k], ""), stream_header_str(hdr, keys[k], "")))
			return 0;
	const char *u1 = json_string_value(json_object_get(json_object_get(first, "units"), "weight"));
	const char *u2 = json_string_value(json_object_get(json_object_get(hdr, "units"), "weight"));
	return !strcmp(u1 ? u1 : "samples", u2 ? u2 : "samples");
}

static uint64_t header_start(json_t *hdr)
{
	int64_t start = stream_header_int(hdr, "start_ns", 0);
	return start > 0 ? (uint64_t)start : 0;
}

/* A timed stack section that is drawn: where its samples go on the axis. */
static void place_section(struct scope *s, json_t *hdr)
{
	uint64_t start = header_start(hdr);

	if (!s->hdr) {
		s->hdr = json_deep_copy(hdr);
		s->start = start;
		s->ns_per_weight = timed_ns_per_weight(hdr);
		s->shift = 0;
	} else if (start < s->prev_start ||
		   strcmp(stream_header_str(hdr, "clock", ""), stream_header_str(s->hdr, "clock", ""))) {
		/* its clock is not the first one's, or started over: by the wall clock */
		int64_t wall = stream_header_int(hdr, "wall_ns", -1), wall0 = stream_header_int(s->hdr, "wall_ns", -1);
		if (wall >= 0 && wall0 >= 0)
			s->shift = wall - wall0 + (int64_t)s->start - (int64_t)start;
	}
	s->prev_start = start;
}

static void on_header(struct scope *s, struct stream_reader *r)
{
	json_t *hdr = stream_reader_header(r);
	enum timed_role role = timed_role(hdr);

	if (s->state == 1 && role == TIMED_SAMPLES) {
		s->state = 2;
		s->sections++;
		return;
	}
	if (s->state == 1)
		marple_warn_at(stream_reader_name(r), stream_reader_line(r),
			"the timed stack section before has no samples section: looking further");
	s->state = 0;
	if (role != TIMED_STACKS)
		return;
	if (s->hdr && !same_kind(s->hdr, hdr)) {
		if (!s->skipped_sections++ &&
		    asprintf(&s->skipped_first, "%s at %s:%lu", stream_header_str(hdr, "interface", "?"),
			     stream_reader_name(r), stream_reader_line(r)) < 0)
			s->skipped_first = NULL;
		return;
	}
	s->state = 1;
	s->nlocal = 0;
	place_section(s, hdr);
}

static void on_item(struct scope *s, struct stream_reader *r, enum stream_item it)
{
	struct timed_sample ts;
	const char *why;

	if (it == STREAM_ERROR) {
		stream_reader_warn(r);
		s->bad++;
	} else if (it == STREAM_HEADER) {
		on_header(s, r);
	} else if (it == STREAM_RECORD && s->state == 1) {
		add_stack(s, stream_reader_stack(r));
	} else if (it == STREAM_RECORD && s->state == 2) {
		if (timed_sample_parse(stream_reader_event(r), &ts, &why) < 0 || ts.stack >= s->nlocal) {
			marple_warn_at(stream_reader_name(r), stream_reader_line(r), "%s",
				ts.stack >= s->nlocal ? "sample names a stack its stack section does not have" : why);
			s->bad++;
		} else {
			ts.stack = s->local[ts.stack];
			add_sample(s, &ts);
		}
	} else if (it == STREAM_TRAILER && s->state == 2) {
		int64_t lost = stream_header_int(stream_reader_trailer(r), "lost", 0);
		s->lost += lost > 0 ? (uint64_t)lost : 0;
		s->state = 0;
	}
}

/* One input; -1 when it is unusable (marple-format(5), message printed). */
static int read_input(struct scope *s, const char *path)
{
	FILE *f = marple_open_input(path);
	struct stream_reader *r = stream_reader_new(f, marple_input_name(path));
	enum stream_item it;

	while ((it = stream_reader_next(r)) != STREAM_EOF)
		on_item(s, r, it);
	s->state = 0;	/* a section ends with its input */
	const char *why = stream_reader_unusable(r);	/* marple-format(5): nothing drawn */
	if (why)
		marple_warn_at(marple_input_name(path), 0, "%s", why);
	stream_reader_free(r);
	if (f != stdin)
		fclose(f);
	return why ? -1 : 0;
}

/* An array of n values packed in the fewest bytes (1, 2 or 4) that hold the
 * largest, as byte planes: every value's low byte, then every second byte, and
 * so on (a stack id's high bytes are mostly alike, and gzip finds runs in a
 * plane it cannot see between interleaved bytes: 10 M samples' stack deltas
 * take 8.1 MB instead of 10.3).  Written gzip + base64 as a property of Z,
 * {w:width,n:count,d:"..."}, or with block as an element of its own:
 * <script type="text/plain" id="z-NAME" data-w data-n>. */
static void write_packed(FILE *f, const char *name, const uint32_t *v, size_t n, int block)
{
	uint32_t max = 0;
	for (size_t i = 0; i < n; i++)
		if (v[i] > max)
			max = v[i];
	int width = max < 256 ? 1 : max < 65536 ? 2 : 4;
	unsigned char *b = marple_malloc(n * (size_t)width + 1);
	for (int plane = 0; plane < width; plane++)
		for (size_t i = 0; i < n; i++)
			b[plane * n + i] = (unsigned char)(v[i] >> (8 * plane));
	/* a big array goes in its own element after the page's script (block):
	 * the heat map is drawn while the browser still reads it */
	if (block)
		fprintf(f, "<script type=\"text/plain\" id=\"z-%s\" data-w=\"%d\" data-n=\"%zu\">", name, width, n);
	else
		fprintf(f, "%s:{w:%d,n:%zu,d:", name, width, n);
	gzb64_write(f, b, n * (size_t)width, 6);
	fputs(block ? "</script>\n" : "}", f);
	free(b);
}

static void write_config(FILE *f, struct scope *s, uint32_t ncols)
{
	const char *unit = json_string_value(json_object_get(json_object_get(s->hdr, "units"), "weight"));
	json_t *c = json_pack("{s:s,s:s,s:f,s:f,s:i,s:i,s:s,s:I,s:I,s:I,s:I}", "interface",
			      stream_header_str(s->hdr, "interface", "?"), "unit", unit ? unit : "samples", "column_s",
			      opt.column_s, "row_ms", opt.row_ms, "rows", (json_int_t)s->nrows, "cols",
			      (json_int_t)ncols, "color", opt.color, "samples",
			      (json_int_t)s->samples, "lost", (json_int_t)s->lost, "wall_ns",
			      (json_int_t)stream_header_int(s->hdr, "wall_ns", 0), "sections", (json_int_t)s->sections);
	char *js = json_dumps(c, JSON_COMPACT | JSON_ENSURE_ASCII);

	/* ASCII only, and no '<' can come from these values: safe in <script> */
	fprintf(f, "var C=%s;\nvar N=[", js ? js : "{}");
	free(js);
	json_decref(c);
	for (uint32_t i = 0; i < intern_count(s->names); i++) {
		size_t len;
		const char *n = intern_str(s->names, i, &len);
		if (i)
			fputs(i % 64 ? "," : ",\n", f);
		xml_js_string_write(f, n, len);
	}
	fputs("];\nvar TH=[", f);
	for (uint32_t i = 0; i < intern_count(s->threads); i++) {
		unsigned pid = 0, tid = 0;
		sscanf(intern_str(s->threads, i, NULL), "%u %u", &pid, &tid);
		fprintf(f, "%s[%u,%u,%u]", i ? "," : "", pid, tid, s->thread_name[i]);
	}
	fputs("];\n", f);
}

/* Threads per entry as the how-manieth thread of its stack (a stack is mostly
 * run by few threads: small numbers), and the (stack, thread) pairs in the
 * order those numbers were given, from which the page rebuilds them: the
 * pairs go into Z, the numbers are left in v. */
static void write_threads(FILE *f, struct scope *s, uint32_t *v)
{
	struct intern *pairs = intern_new();
	uint32_t *nlocal = marple_calloc(s->nstacks + 1, sizeof(*nlocal));
	uint32_t *local = NULL, *ps = NULL, *pt = NULL;
	size_t lcap = 0, pscap = 0, ptcap = 0;

	for (size_t i = 0; i < s->ne; i++) {
		uint32_t key[2] = { s->e[i].stack, s->e[i].thread };
		size_t before = intern_count(pairs);
		uint32_t id = intern_get(pairs, (const char *)key, sizeof(key));
		if (id == before) {
			local = marple_grow(local, &lcap, (size_t)id + 1, sizeof(*local));
			ps = marple_grow(ps, &pscap, (size_t)id + 1, sizeof(*ps));
			pt = marple_grow(pt, &ptcap, (size_t)id + 1, sizeof(*pt));
			local[id] = nlocal[key[0]]++;
			ps[id] = key[0];
			pt[id] = key[1];
		}
		v[i] = local[id];
	}
	write_packed(f, "pstack", ps, intern_count(pairs), 0);
	fputs(",\n", f);
	write_packed(f, "pthread", pt, intern_count(pairs), 0);
	intern_free(pairs);
	free(nlocal);
	free(local);
	free(ps);
	free(pt);
}

static uint32_t entry_weight(const struct scope *s, size_t i)
{
	uint64_t w = timed_weight(s->e[i].w, s->ns_per_weight);
	return w > UINT32_MAX ? UINT32_MAX : (uint32_t)w;
}

/* Per cell: how many entries it has (the page finds a cell's entries from
 * these) and their weight (the heat map, drawn before the entries are read;
 * a total past 2^32-1 is drawn as that). */
static void write_cells(FILE *f, const struct scope *s, uint32_t ncols)
{
	size_t ncells = (size_t)ncols * s->nrows;
	uint32_t *n = marple_calloc(ncells, sizeof(*n));
	uint64_t *w64 = marple_calloc(ncells, sizeof(*w64));
	uint32_t *w = marple_malloc(ncells * sizeof(*w));

	for (size_t i = 0; i < s->ne; i++) {
		n[s->e[i].cell]++;
		w64[s->e[i].cell] += entry_weight(s, i);
	}
	for (size_t c = 0; c < ncells; c++)
		w[c] = w64[c] > UINT32_MAX ? UINT32_MAX : (uint32_t)w64[c];
	write_packed(f, "ncell", n, ncells, 0);
	fputs(",\n", f);
	write_packed(f, "cellw", w, ncells, 0);
	free(n);
	free(w64);
	free(w);
}

static void write_page(FILE *f, struct scope *s)
{
	uint32_t ncols = s->ne ? s->e[s->ne - 1].cell / s->nrows + 1 : 1;
	uint32_t *v = marple_malloc((s->ne + 1) * sizeof(*v));

	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n<title>", f);
	xml_escape_cstr(f, opt.title);
	fputs("</title>\n<style>\n"
	      "body{margin:0;font:13px Verdana,sans-serif;background:#f4f4f0;color:#222}\n"
	      "h1{font-size:17px;margin:8px 10px 2px}\n"
	      "#bar{margin:4px 10px;display:flex;gap:12px;align-items:center;flex-wrap:wrap}\n"
	      "#main{display:flex;gap:10px;margin:0 10px;align-items:flex-start}\n"
	      "#hm{overflow-x:auto;max-width:48vw;flex:none;background:#fff;border:1px solid #ccc}\n"
	      "#hm canvas{display:block;cursor:crosshair}\n"
	      "#scale{display:flex;align-items:center;gap:6px;margin:0 0 6px 64px;font-size:11px;color:#333}\n"
	      "#scale .bar{display:inline-block;width:100px;height:10px;border:1px solid #ccc}\n"
	      "#fgbox{flex:1;min-width:300px}\n"
	      "#fgtitle{font-weight:bold;margin:2px 0 4px;min-height:18px}\n"
	      "#fg{position:relative;background:#fff;border:1px solid #ccc;overflow-x:hidden;overflow-y:auto;"
	      "max-height:75vh}\n"
	      ".fr{position:absolute;height:16px;box-sizing:border-box;border:1px solid #fff;"
	      "font-size:11px;line-height:14px;overflow:hidden;white-space:nowrap;padding:0 2px;cursor:pointer}\n"
	      ".fr.hit{outline:2px solid #c0f;z-index:1}\n"
	      "#tip{position:fixed;display:none;white-space:pre;background:#ffffe0;border:1px solid #888;"
	      "padding:4px 6px;font-size:12px;pointer-events:none;z-index:3}\n"
	      "#help{margin:2px 10px 6px;color:#555}\n"
	      "</style></head>\n<body>\n<h1>", f);
	xml_escape_cstr(f, opt.title);
	fputs("</h1>\n<div id=\"help\">Click a cell or drag across cells: the flame graph of that time. "
	      "Shift-drag: a baseline (differential: red grew, blue shrank). Esc: clear.</div>\n"
	      "<div id=\"bar\"><label>Search <input id=\"q\" size=\"24\" placeholder=\"regex\"></label>"
	      "<span id=\"share\"></span><label>Process/thread <select id=\"flt\"></select></label>"
	      "<span id=\"status\">loading…</span></div>\n"
	      "<div id=\"main\"><div id=\"hm\"><canvas id=\"cv\"></canvas><div id=\"scale\"></div></div>"
	      "<div id=\"fgbox\"><div id=\"fgtitle\"></div><div id=\"fg\"></div></div></div>\n"
	      "<div id=\"tip\"></div>\n<script>\n", f);
	write_config(f, s, ncols);
	/* Z: what the heat map needs first (a number a cell) and the small
	 * arrays; the entries' threads, weights and stacks, most of the bytes,
	 * follow the script in elements of their own */
	fputs("var Z={", f);
	write_packed(f, "frames", s->frames, s->nframes, 0);
	fputs(",\n", f);
	write_cells(f, s, ncols);
	fputs(",\n", f);
	write_threads(f, s, v);
	fputs("};\n", f);
	fputs(timefmt_js, f);
	fputs(flamescope_js, f);
	fputs("</script>\n", f);
	write_packed(f, "thread", v, s->ne, 1);
	for (size_t i = 0; i < s->ne; i++)
		v[i] = entry_weight(s, i);
	write_packed(f, "weight", v, s->ne, 1);
	/* stacks, sorted within a cell, as deltas from the one before in the
	 * same cell: small numbers gzip well */
	for (size_t i = 0; i < s->ne; i++)
		v[i] = i && s->e[i].cell == s->e[i - 1].cell ? s->e[i].stack - s->e[i - 1].stack : s->e[i].stack;
	write_packed(f, "stack", v, s->ne, 1);
	fputs("</body></html>\n", f);
	free(v);
}

static void scope_free(struct scope *s)
{
	json_decref(s->hdr);
	intern_free(s->names);
	intern_free(s->stacks);
	intern_free(s->threads);
	free(s->frames);
	free(s->stack_at);
	free(s->local);
	free(s->key);
	free(s->skipped_first);
	free(s->thread_name);
	free(s->e);
}

int main(int argc, char **argv)
{
	int ch, rc = EXIT_OK;

	marple_init(argc, argv);
	while ((ch = options_getopt(options, argc, argv)) != -1) {
		switch (ch) {
		case O_COLUMN: opt.column_s = marple_opt_double("--column", optarg, 0.001, 86400); break;
		case O_ROW: opt.row_ms = marple_opt_double("--row", optarg, 0.001, 86400000); break;
		case O_COLOR:
			if (strcmp(optarg, "quantile") && strcmp(optarg, "linear") && strcmp(optarg, "rank"))
				marple_usage_error("--color: '%s' is not quantile, linear or rank", optarg);
			opt.color = optarg;
			break;
		case O_TITLE: opt.title = optarg; break;
		case 'o': opt.out = optarg; break;
		case 'h': options_help(stdout, options, &help); marple_close_stdout(); return EXIT_OK;
		default: marple_usage_try();
		}
	}
	struct scope s = { .names = intern_new(), .stacks = intern_new(), .threads = intern_new() };
	s.col_ns = (uint64_t)llround(opt.column_s * 1e9);
	s.row_ns = (uint64_t)llround(opt.row_ms * 1e6);
	if (s.row_ns > s.col_ns)
		marple_usage_error("--row %g ms is longer than a --column of %g s", opt.row_ms, opt.column_s);
	if ((s.col_ns + s.row_ns - 1) / s.row_ns > 100000)
		marple_usage_error("--row %g ms: more than 100000 rows in a column", opt.row_ms);
	s.nrows = (uint32_t)((s.col_ns + s.row_ns - 1) / s.row_ns);

	char *stdin_only[] = { "-" };
	char **files = optind < argc ? argv + optind : stdin_only;
	int nfiles = optind < argc ? argc - optind : 1;
	for (int i = 0; i < nfiles; i++)
		if (read_input(&s, files[i]) < 0) {
			rc = EXIT_DATA;
			goto cleanup;
		}
	const char *inputs = marple_operands_name(argc - optind, argv + optind);
	if (!s.sections) {
		marple_warn_at(inputs, 0, "no timed stack section with its samples (collect with marple-callstack --timed)");
		rc = EXIT_DATA;
		goto cleanup;
	}
	if (s.skipped_sections)
		marple_warn_at(inputs, 0, "%llu timed stack section%s of another collector, host or unit not drawn (the first: %s); "
			"one page draws the sections of one: choose with marple-cat -i INTERFACE or -s",
			(unsigned long long)s.skipped_sections, s.skipped_sections == 1 ? "" : "s",
			s.skipped_first ? s.skipped_first : "?");
	if (s.bad)
		marple_warn_at(inputs, 0, "%llu malformed lines or samples left out", (unsigned long long)s.bad);
	if (s.early)
		marple_warn_at(inputs, 0, "%llu samples before the section's start left out", (unsigned long long)s.early);
	merge_entries(&s);
	if (s.ne == 0) {
		marple_warn_at(inputs, 0, "the timed stack section%s no samples", s.sections == 1 ? " has" : "s have");
		rc = EXIT_DATA;
		goto cleanup;
	}
	/* the page gives a column at least 3 px of one canvas, which browsers
	 * draw up to 32767 px wide: past that the map is blank */
	uint32_t ncols = s.e[s.ne - 1].cell / s.nrows + 1;
	if (ncols > MAX_COLUMNS)
		marple_warn_at(inputs, 0, "%u columns of %g s: more than a browser draws (about %d); "
			"--column %.0f draws them in about 1000", ncols, opt.column_s, MAX_COLUMNS,
			ceil(ncols * opt.column_s / 1000));
	struct outfile *o = marple_outfile_open(opt.out);
	write_page(marple_outfile_stream(o), &s);
	if (marple_outfile_commit(o) < 0)
		rc = EXIT_DATA;
cleanup:
	scope_free(&s);
	return rc;
}
