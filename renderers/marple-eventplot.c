/* marple-eventplot — marple event sections -> one self-contained HTML page.
 *
 * A timeline per track (per CPU, per process), every event a mark coloured
 * by type, sched_switch runs as bars of the task switched in, connected
 * events (the same flow= value, as marple-ipc writes) as arrows between
 * tracks; zoom and pan on time, filters by event type and by regex on the
 * fields, details on hover.  Drawn on a canvas, so large captures stay fast;
 * no network access.
 *
 * The events travel compactly (about 4 bytes an event for a scheduler
 * capture, 18 as JSON text): grouped by track, columns of varints -- time
 * deltas on the track (zigzag), type and field-set numbers, the strings
 * interned -- gzip-compressed and base64-encoded (lib/render/gzb64), inflated
 * by the browser's own DecompressionStream straight into the typed arrays it
 * draws from, already in track order.
 *
 *   $ sudo marple-cpusched 5 | marple-eventplot > sched.html
 *   5123000100,connect,4711,comm=curl,pid=4711,...,flow=127.0.0.1:40312>127.0.0.1:8080
 *   -> a mark on track "curl (4711)", an arrow to the matching accept
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "eventread.h"
#include "gzb64.h"
#include "intern.h"
#include "options.h"
#include "protowire.h"
#include "stream.h"
#include "util.h"
#include "xml.h"
#include "timefmt.js.h"	/* lib/render/timefmt.js, the times of the page */
#include "eventplot.js.h"	/* renderers/eventplot.js, made a C string by the Makefile */

static struct {
	const char *title;
	const char *output;
	int per_process;
} opt = { .title = "Events" };

enum { OPT_TITLE = 256, OPT_PER_PROCESS };
static const struct options_entry options[] = {
	{ OPT_TITLE, "title", "TITLE", "page title (default \"Events\")" },
	{ OPT_PER_PROCESS, "per-process", NULL, "a row per process (default: a row per command,\nits processes together)" },
	{ 't', "", "TITLE", NULL },	/* the old spelling: -t is a thread's */
	OPTIONS_OUTPUT,
	OPTIONS_DESCRIBE("kind=renderer\tdisplay=plot,tcp,tcpplot,eventplot\treads=event\text=html"),
	OPTIONS_HELP,
	{ 0 }
};

static const struct options_help help = {
	.synopsis = "[--title TITLE] [--per-process] [-o FILE] [FILE...]",
	.about = "Draw marple event sections as an interactive HTML timeline (one page, no network).\n",
	.after = "With no FILE, or FILE '-', read stdin.  Exit: 0 ok, 1 bad or no input, 2 usage.\n"
	         "See marple-eventplot(1).\n",
};

/* ---- interned strings (field sets, tracks, types, flows) ---- */

/* The id of s in t; *added set if it is new. */
static size_t lookup(struct intern *t, const char *s, size_t len, int *added)
{
	size_t n = intern_count(t);
	uint32_t id = intern_get(t, s, len);
	if (added)
		*added = id == n;
	return id;
}

static struct intern *fieldsets, *tracks, *types, *flows;
static char **track_label;	/* by track index: label shown */
static size_t track_label_cap;
/* A command's row: its processes ("track\0pid" of each, interned) and how
 * many, by track index. */
static struct intern *track_procs;
static size_t *track_nprocs;
static size_t track_nprocs_cap;
/* An event by where it is written: its track and its number on the track. */
struct place {
	uint32_t track;
	uint64_t nth;
};
static struct place *flow_first;	/* by flow index: the first event; track UINT32_MAX after linking */
static size_t flow_cap;
static struct place *links;
static size_t nlinks, links_cap;
static char *buf;
static size_t bufcap;
/* each track's columns: one varint per event each, in the order they came */
struct track_cols {
	struct pbuf dt, type, fields;
	uint64_t last, count;
};
static struct track_cols *tcols;
static size_t tcols_cap;

/* Fields as "k=v" joined by 0x1f (the page splits on it). */
static size_t join_fields(const struct event_rec *e)
{
	size_t need = 1;
	for (size_t i = 0; i < e->nfields; i++)
		need += e->fields[i].key.len + e->fields[i].value.len + 2;
	buf = marple_grow(buf, &bufcap, need, 1);
	size_t n = 0;
	for (size_t i = 0; i < e->nfields; i++) {
		if (i)
			buf[n++] = 0x1f;
		memcpy(buf + n, e->fields[i].key.s, e->fields[i].key.len);
		n += e->fields[i].key.len;
		buf[n++] = '=';
		memcpy(buf + n, e->fields[i].value.s, e->fields[i].value.len);
		n += e->fields[i].value.len;
	}
	return n;
}

/* A process (track pid) on command row tr: counted once, and the row's
 * label says how many when there are several. */
static void count_process(size_t tr, struct mstr pid, const struct mstr *comm)
{
	char key[48];
	int added;

	if (pid.len > 32)
		pid.len = 32;
	int n = snprintf(key, sizeof(key), "%zu:%.*s", tr, (int)pid.len, pid.s);
	lookup(track_procs, key, (size_t)n, &added);
	if (!added || ++track_nprocs[tr] < 2)
		return;
	size_t len = comm->len + 32;
	free(track_label[tr]);
	track_label[tr] = marple_malloc(len);
	snprintf(track_label[tr], len, "%.*s (%zu processes)", (int)comm->len, comm->s, track_nprocs[tr]);
}

/* The row of an event.  A process's events (a track that is not a CPU, with
 * a comm) go on its command's row, so a server under a thousand curls is two
 * rows, not a thousand (--per-process: its own); the row is labelled
 * "comm (pid)" while it holds one process, "comm (N processes)" after. */
static size_t track_of(const struct event_rec *e)
{
	const struct mstr *comm = stream_fields_get(e->fields, e->nfields, "comm");
	uint64_t cpu;
	int grouped = !opt.per_process && comm && eventread_track_cpu(e->track, &cpu) < 0;
	char *key = marple_malloc((grouped ? comm->len : e->track.len) + 2);
	size_t klen = 0, tr;
	int added;

	if (grouped) {	/* "\001comm": not a track's name */
		key[klen++] = 1;
		memcpy(key + klen, comm->s, comm->len);
		klen += comm->len;
	} else {
		memcpy(key, e->track.s, e->track.len);
		klen = e->track.len;
	}
	tr = lookup(tracks, key, klen, &added);
	free(key);
	if (added) {
		size_t had = tcols_cap, hadn = track_nprocs_cap;
		tcols = marple_grow(tcols, &tcols_cap, tr + 1, sizeof(*tcols));
		memset(tcols + had, 0, (tcols_cap - had) * sizeof(*tcols));
		track_nprocs = marple_grow(track_nprocs, &track_nprocs_cap, tr + 1, sizeof(*track_nprocs));
		memset(track_nprocs + hadn, 0, (track_nprocs_cap - hadn) * sizeof(*track_nprocs));
		track_label = marple_grow(track_label, &track_label_cap, tr + 1, sizeof(char *));
		if (comm && eventread_track_cpu(e->track, &cpu) < 0) {
			size_t n = comm->len + e->track.len + 4;
			track_label[tr] = marple_malloc(n);
			snprintf(track_label[tr], n, "%.*s (%.*s)", (int)comm->len, comm->s,
				 (int)e->track.len, e->track.s);
		} else {
			track_label[tr] = marple_strndup(e->track.s, e->track.len);
		}
	}
	if (grouped)
		count_process(tr, e->track, comm);
	return tr;
}

/* One event: its track, type and fields interned, a flow linked, and its
 * entry in EV written (er->events is its index). */
static void add_event(struct eventread *er, const struct event_rec *e)
{
	int added;
	size_t tr = track_of(e);
	size_t ty = lookup(types, e->type.s, e->type.len, NULL);
	size_t fs = lookup(fieldsets, buf, join_fields(e), NULL);
	/* times from the previous event on the track (the first from the first
	 * section's start); a later section may go back in time, so deltas are
	 * zigzag-coded (signed) */
	struct track_cols *tc = &tcols[tr];
	struct place here = { (uint32_t)tr, tc->count };
	int64_t delta = (int64_t)(e->time - (tc->count ? tc->last : er->t0));
	tc->last = e->time;
	tc->count++;
	protowire_varint(&tc->dt, ((uint64_t)delta << 1) ^ (uint64_t)(delta >> 63));
	protowire_varint(&tc->type, ty);
	protowire_varint(&tc->fields, fs);
	const struct mstr *flow = stream_fields_get(e->fields, e->nfields, "flow");
	if (flow) {
		size_t fl = lookup(flows, flow->s, flow->len, &added);
		flow_first = marple_grow(flow_first, &flow_cap, fl + 1, sizeof(*flow_first));
		if (added) {
			flow_first[fl] = here;
		} else if (flow_first[fl].track != UINT32_MAX) {
			links = marple_grow(links, &links_cap, nlinks + 2, sizeof(*links));
			links[nlinks++] = flow_first[fl];
			links[nlinks++] = here;
			flow_first[fl].track = UINT32_MAX;	/* one arrow per flow */
		}
	}
}

/* EV: {n, f, c, d} -- n events, f field sets, c the events of each track,
 * d the base64 of gzip of: the field sets (varint length, bytes), then three
 * columns of n varints, each track's events after the last's: time delta on
 * the track (zigzag), type, field set. */
static void write_events(FILE *out, const struct eventread *er)
{
	struct pbuf all = { 0 };
	size_t nf = intern_count(fieldsets), nt = intern_count(tracks);

	for (size_t i = 0; i < nf; i++) {
		size_t len;
		const char *fs = intern_str(fieldsets, (uint32_t)i, &len);
		protowire_varint(&all, len);
		protowire_raw(&all, fs, len);
	}
	for (size_t r = 0; r < nt; r++)
		protowire_raw(&all, tcols[r].dt.b, tcols[r].dt.n);
	for (size_t r = 0; r < nt; r++)
		protowire_raw(&all, tcols[r].type.b, tcols[r].type.n);
	for (size_t r = 0; r < nt; r++)
		protowire_raw(&all, tcols[r].fields.b, tcols[r].fields.n);
	fprintf(out, "{\"n\":%llu,\"f\":%zu,\"c\":[", (unsigned long long)er->events, nf);
	for (size_t r = 0; r < nt; r++)
		fprintf(out, "%s%llu", r ? "," : "", (unsigned long long)tcols[r].count);
	fputs("],\"d\":", out);
	gzb64_write(out, all.b, all.n, 6);
	fputc('}', out);
	free(all.b);
}

/* The page up to the data: title, style and the controls (the title escaped). */
static void write_page_head(FILE *out)
{
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n<title>", out);
	xml_escape_cstr(out, opt.title);
	fputs("</title>\n<style>\n"
	      "body{margin:0;font:13px sans-serif;background:#fff;color:#222}\n"
	      "#bar{padding:6px 8px;border-bottom:1px solid #ccc;display:flex;flex-wrap:wrap;gap:10px;align-items:center}\n"
	      "#bar h1{font-size:15px;margin:0 10px 0 0}\n"
	      "#types label{margin-right:8px;white-space:nowrap}\n"
	      "#re{width:220px}#re.bad{background:#fcc}\n"
	      "#status{color:#555;padding:3px 8px}\n"
	      "#tip{position:absolute;display:none;background:#ffe;border:1px solid #aa8;padding:4px 6px;"
	      "white-space:pre;font:12px monospace;pointer-events:none;max-width:600px;overflow:hidden}\n"
	      "canvas{display:block;cursor:crosshair}\n"
	      "#legend{padding:4px 8px;color:#333;display:flex;flex-wrap:wrap;gap:4px 12px;align-items:center}\n"
	      "#legend i{display:inline-block;width:12px;height:10px;margin-right:4px;vertical-align:middle}\n"
	      "</style></head><body>\n<div id=\"bar\"><h1 id=\"title\">", out);
	xml_escape_cstr(out, opt.title);
	fputs("</h1><button id=\"zin\" title=\"zoom in (+)\">+</button>"
	      "<button id=\"zout\" title=\"zoom out (-)\">\u2212</button>"
	      "<button id=\"reset\" title=\"whole capture (0)\">reset</button>"
	      "<input id=\"re\" placeholder=\"regex on fields, e.g. comm=bash\">"
	      "<span id=\"types\"></span></div>\n"
	      "<div id=\"status\"></div><canvas id=\"plot\"></canvas><div id=\"legend\"></div><div id=\"tip\"></div>\n"
	      "<script>\nvar EV=", out);
}

/* The data as JavaScript: events, track labels, types and the links between
 * events by their place in track order. */
static void write_page_data(FILE *out, const struct eventread *er)
{
	write_events(out, er);
	fputs(";\nvar TR=[", out);
	for (size_t i = 0; i < intern_count(tracks); i++) {
		if (i)
			fputc(',', out);
		xml_js_string_cstr(out, track_label[i]);
	}
	fputs("];\nvar TY=[", out);
	for (size_t i = 0; i < intern_count(types); i++) {
		size_t len;
		const char *ty = intern_str(types, (uint32_t)i, &len);
		if (i)
			fputc(',', out);
		xml_js_string_write(out, ty, len);
	}
	/* links between events by their place in track order */
	uint64_t *first = marple_calloc(intern_count(tracks) + 1, sizeof(uint64_t));
	for (size_t r = 0; r < intern_count(tracks); r++)
		first[r + 1] = first[r] + tcols[r].count;
	fputs("];\nvar LK=[", out);
	for (size_t i = 0; i < nlinks; i++)
		fprintf(out, "%s%llu", i ? "," : "", (unsigned long long)(first[links[i].track] + links[i].nth));
	free(first);
	fprintf(out, "];\nvar META={\"end\":%lld};\n</script>\n<script>\n", (long long)(er->end - er->t0));
}

static void free_all(void)
{
	for (size_t i = 0; i < intern_count(tracks); i++)
		free(track_label[i]);
	free(track_label);
	free(track_nprocs);
	intern_free(track_procs);
	intern_free(fieldsets);
	for (size_t r = 0; r < intern_count(tracks); r++) {
		free(tcols[r].dt.b);
		free(tcols[r].type.b);
		free(tcols[r].fields.b);
	}
	intern_free(tracks);
	intern_free(types);
	intern_free(flows);
	free(flow_first);
	free(links);
	free(buf);
	free(tcols);
}

int main(int argc, char **argv)
{
	int c;

	marple_init(argc, argv);
	while ((c = options_getopt(options, argc, argv)) != -1) {
		switch (c) {
		case 't':
		case OPT_TITLE: opt.title = optarg; break;
		case 'o': opt.output = optarg; break;
		case OPT_PER_PROCESS: opt.per_process = 1; break;
		case 'h': options_help(stdout, options, &help); return EXIT_OK;
		default: marple_usage_try();
		}
	}
	struct outfile *of = marple_outfile_open(opt.output);
	if (!of)
		return EXIT_DATA;
	FILE *out = marple_outfile_stream(of);
	/* the input is read whole before the page begins: a failure leaves no
	 * half page behind */
	fieldsets = intern_new();
	tracks = intern_new();
	track_procs = intern_new();
	types = intern_new();
	flows = intern_new();
	struct eventread er = { .on_event = add_event };
	int nin = argc - optind;
	if (eventread_files(&er, nin, argv + optind) < 0) {
		marple_outfile_abort(of);
		return EXIT_DATA;
	}
	if (eventread_check(&er, nin, argv + optind) < 0) {
		marple_outfile_abort(of);
		return EXIT_DATA;
	}

	write_page_head(out);
	write_page_data(out, &er);
	fputs(timefmt_js, out);
	fputs(eventplot_js, out);
	fputs("</script>\n</body></html>\n", out);

	free_all();
	return eventread_finish(&er, of, nin, argv + optind);
}
