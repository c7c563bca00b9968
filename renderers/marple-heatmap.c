/* marple-heatmap — latency and subsecond-offset heat maps as interactive SVG.
 *
 * Reads a marple point or event section (and the --every intervals after it;
 * files or stdin), or plain "time value" lines as Brendan Gregg's
 * trace2heatmap.pl reads them, and writes one SVG:
 *
 *   --latency (default for points): x = time in columns, y = value in rows,
 *     colour = how many points fell in the bucket;
 *   --offset (default for events): x = whole periods (seconds), y = the offset
 *     within the period (0-1 s), colour = number of events.
 *
 *   $ marple-cpusched 10 | marple-heatmap --highlight zoneadmd > offset.svg
 *   $ printf '1000000 250\n1500000 300\n' | marple-heatmap --unitstime us > lat.svg
 *
 * Memory is O(buckets x names per bucket), never O(records): each bucket keeps
 * exact counts of the first NAMES_PER_BUCKET names (and always of --highlight
 * names) plus one "others" count.  A latency map whose column width or value
 * range is not given is drawn in two passes: the records go to a temporary
 * file, their time span chooses the column width (about 150 columns for a
 * short capture) and a log histogram of their values the clipped range (the
 * top row holds what lies above the --clip percentile), then they are counted.
 * Otherwise rows double their step as larger values arrive and, past
 * --maxcols, columns double their width.
 *
 * Exit status: 0 drawn (bad lines are counted on stderr), 1 nothing usable,
 * wrong datatype or I/O error, 2 usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "heatgrid.h"
#include "lines.h"
#include "numparse.h"
#include "options.h"
#include "stream.h"
#include "svg.h"
#include "util.h"
#include "xml.h"

enum mode { MODE_DEFAULT, MODE_LATENCY, MODE_OFFSET };

static struct {
	enum mode mode;
	uint64_t period_ns;
	const char *period_name;
	int color_rank;
	const char *highlight[HG_MAX_HIGHLIGHT];
	int nhighlight;
	const char **isolate;
	int nisolate;
	const char *by;			/* field naming the label; default comm/info */
	const char *field;		/* event field holding the value (latency mode) */
	double timefactor;		/* plain input: units of time per second */
	const char *unitslabel;
	double minlat, maxlat, steplat, stepsec;
	int have_maxlat, have_steplat, have_stepsec;
	double clip_pct;		/* 100: no clipping */
	int ylog;
	uint64_t rows;
	uint64_t maxcols;
	int grid;
	int wall;
	const char *title;
	const char *outpath;
} opt = {
	.period_ns = 1000000000ull,
	.period_name = "1s",
	.timefactor = 1,
	.rows = 50,
	.maxcols = 1000,
	.clip_pct = 99,
};


enum {
	O_LATENCY = 256, O_OFFSET, O_PERIOD, O_COLOR, O_HIGHLIGHT, O_ISOLATE, O_BY, O_FIELD,
	O_UNITSTIME, O_UNITSLABEL, O_MINLAT, O_MAXLAT, O_ROWS, O_STEPLAT, O_STEPSEC, O_MAXCOLS,
	O_GRID, O_TITLE, O_WALL, O_CLIP, O_NOCLIP, O_YLOG,
};

#define HEATMAP_STR(x) #x
#define HEATMAP_XSTR(x) HEATMAP_STR(x)
static const struct options_entry options[] = {
	{ O_LATENCY, "latency", NULL, "x = time, y = value (default for points and plain lines)" },
	{ O_OFFSET, "offset", NULL, "x = whole periods, y = offset in the period (default for events)" },
	{ O_PERIOD, "period", "P", "offset period: 1s (default), 1m, 1h or 1d" },
	{ O_WALL, "wall", NULL, "offsets within wall-clock (UTC) seconds, minutes, ..." },
	{ O_COLOR, "color", "linear|rank", "colour by count (linear, default) or by rank of count" },
	{ O_COLOR, "colour", "linear|rank", NULL },
	{ O_HIGHLIGHT, "highlight", "NAME",
	  "draw NAME's buckets in another hue (repeatable, up to " HEATMAP_XSTR(HG_MAX_HIGHLIGHT) ")" },
	{ O_ISOLATE, "isolate", "NAME", "only count NAME (repeatable)" },
	{ O_BY, "by", "KEY", "group by field KEY (default: comm for events, info for points)" },
	{ O_FIELD, "field", "KEY", "events in --latency mode: y is the numeric field KEY" },
	{ O_UNITSTIME, "unitstime", "U", "plain lines: time column in s (default), ms, us or ns" },
	{ O_UNITSLABEL, "unitslabel", "TEXT", "unit of the values, for labels (also --unitslatency)" },
	{ O_UNITSLABEL, "unitslatency", "TEXT", NULL },
	{ O_MINLAT, "minlat", "N", "smallest value to include (default 0)" },
	{ O_MAXLAT, "maxlat", "N", "largest value to include (default: as the data needs)" },
	{ O_ROWS, "rows", "N", "number of rows (default 50)" },
	{ O_STEPLAT, "steplat", "N", "value step per row, instead of --rows" },
	{ O_CLIP, "clip", "PCT", "values above the PCT percentile share the labelled top row (default 99)" },
	{ O_NOCLIP, "no-clip", NULL, "no clipping: the rows reach the largest value (as --clip 100)" },
	{ O_YLOG, "ylog", NULL, "log-scaled value rows" },
	{ O_STEPSEC, "stepsec", "N", "seconds per column (default: from the time span, 0.01 to 1)" },
	{ O_MAXCOLS, "maxcols", "N", "widen columns beyond this many (default 1000)" },
	{ O_GRID, "grid", NULL, "draw grid lines" },
	{ O_TITLE, "title", "TEXT", "title" },
	OPTIONS_OUTPUT,
	OPTIONS_DESCRIBE("kind=renderer\tdisplay=heatmap,hm\treads=point\text=svg\tdefault-for=point\tconfig=mode:--,color:--color,rows:--rows"),
	OPTIONS_HELP,
	{ 0 }
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [--latency | --offset] [options] [FILE...]\n"
		"Draw a latency or subsecond-offset heat map (SVG) of marple point or event\n"
		"sections, or of plain \"time value\" lines (trace2heatmap.pl input).\n"
		"\n",
		marple_progname);
	options_usage(f, options);
	fputs("\n"
	      "Hover on a bucket for its range and count; click for the distribution details.\n"
	      "See marple-heatmap(1).\n",
	      f);
}

static void parse_options(int argc, char **argv)
{
	int c;

	while ((c = options_getopt(options, argc, argv)) != -1) {
		switch (c) {
		case O_LATENCY: opt.mode = MODE_LATENCY; break;
		case O_OFFSET: opt.mode = MODE_OFFSET; break;
		case O_PERIOD:
			if (!strcmp(optarg, "1s")) opt.period_ns = 1000000000ull;
			else if (!strcmp(optarg, "1m")) opt.period_ns = 60000000000ull;
			else if (!strcmp(optarg, "1h")) opt.period_ns = 3600000000000ull;
			else if (!strcmp(optarg, "1d")) opt.period_ns = 86400000000000ull;
			else marple_usage_error("--period: '%s' is not 1s, 1m, 1h or 1d", optarg);
			opt.period_name = optarg;
			break;
		case O_COLOR:
			if (!strcmp(optarg, "linear")) opt.color_rank = 0;
			else if (!strcmp(optarg, "rank")) opt.color_rank = 1;
			else marple_usage_error("--color: '%s' is not linear or rank", optarg);
			break;
		case O_HIGHLIGHT:
			if (opt.nhighlight == HG_MAX_HIGHLIGHT)
				marple_usage_error("--highlight: at most %d names", HG_MAX_HIGHLIGHT);
			opt.highlight[opt.nhighlight++] = optarg;
			break;
		case O_ISOLATE:
			opt.isolate = realloc(opt.isolate, (opt.nisolate + 1) * sizeof(char *));
			if (!opt.isolate)
				marple_fatal(EXIT_DATA, "out of memory");
			opt.isolate[opt.nisolate++] = optarg;
			break;
		case O_BY: opt.by = optarg; break;
		case O_FIELD: opt.field = optarg; break;
		case O_UNITSTIME:
			if (!strcmp(optarg, "s")) opt.timefactor = 1;
			else if (!strcmp(optarg, "ms")) opt.timefactor = 1e3;
			else if (!strcmp(optarg, "us")) opt.timefactor = 1e6;
			else if (!strcmp(optarg, "ns")) opt.timefactor = 1e9;
			else marple_usage_error("--unitstime: '%s' is not s, ms, us or ns", optarg);
			break;
		case O_UNITSLABEL: opt.unitslabel = optarg; break;
		case O_MINLAT: opt.minlat = marple_opt_double("--minlat", optarg, -1e300, 1e300); break;
		case O_MAXLAT:
			opt.maxlat = marple_opt_double("--maxlat", optarg, -1e300, 1e300);
			opt.have_maxlat = 1;
			break;
		case O_ROWS: opt.rows = marple_opt_u64("--rows", optarg, 1, HG_MAX_ROWS); break;
		case O_STEPLAT:
			opt.steplat = marple_opt_double("--steplat", optarg, 1e-300, 1e300);
			opt.have_steplat = 1;
			break;
		case O_STEPSEC:
			opt.stepsec = marple_opt_double("--stepsec", optarg, 1e-9, 1e9);
			opt.have_stepsec = 1;
			break;
		case O_CLIP: opt.clip_pct = marple_opt_double("--clip", optarg, 1e-6, 100); break;
		case O_NOCLIP: opt.clip_pct = 100; break;
		case O_YLOG: opt.ylog = 1; break;
		case O_MAXCOLS: opt.maxcols = marple_opt_u64("--maxcols", optarg, 1, 1000000); break;
		case O_GRID: opt.grid = 1; break;
		case O_WALL: opt.wall = 1; break;
		case O_TITLE: opt.title = optarg; break;
		case 'o': opt.outpath = optarg; break;
		case 'h': usage(stdout); marple_close_stdout(); exit(EXIT_OK);
		default: marple_usage_try();
		}
	}
	if (opt.have_maxlat && opt.maxlat <= opt.minlat)
		marple_usage_error("--maxlat must be larger than --minlat");
	if (opt.ylog && opt.have_steplat)
		marple_usage_error("--ylog and --steplat: log-scaled rows have no fixed step");
}

/* ---- input ---- */

static struct heatgrid *G;
static enum datatype drawn_dt;		/* DATATYPE_NONE until a section is chosen */
static int plain_input;
static enum mode mode;
static json_t *drawn_header;
static double t_first;			/* plain input: time of the first line */
static int have_t_first;
static int64_t origin_ns;		/* events: time 0 */
static int64_t point_shift_ns;		/* points with --wall: start's offset in its wall-clock period */
static int have_origin;
/* The drawn section's length in seconds (start_ns to the trailer's end_ns);
 * 0: not said, the records' span is used. */
static double section_seconds;
static int64_t section_start_ns = -1;
/* A collector's continuous mode (--every) writes a section an interval, each
 * ending "interval": the next section of the same interface, datatype and
 * host goes on on the same time axis.  last_interval: the last drawn section
 * ended so; section_shift_ns: a later interval's points, whose x counts from
 * its own start_ns, are that much after the first's. */
static int last_interval;
static int64_t section_shift_ns;
static uint64_t bad_lines, no_value;
static const char *last_input = "<stdin>";	/* named in "nothing usable" messages */

static int isolated(struct mstr name)
{
	if (!opt.nisolate)
		return 1;
	for (int i = 0; i < opt.nisolate; i++)
		if (strlen(opt.isolate[i]) == name.len && !memcmp(opt.isolate[i], name.s, name.len))
			return 1;
	return 0;
}

/* ---- the two passes of a latency map ---- */

struct spool_rec {
	double t, v;
	uint32_t id;
};

/* Values are counted in bins of 1/VH_SUB of an octave's width (at most 1.6%
 * of the value), from 2^VH_EMIN to 2^VH_EMAX: enough for a percentile. */
#define VH_SUB 64
#define VH_EMIN (-300)
#define VH_EMAX 300
#define VH_BINS ((VH_EMAX - VH_EMIN + 1) * VH_SUB)

static struct {
	FILE *f;
	uint64_t n, zero;		/* records; values equal to --minlat */
	double tmin, tmax, vmax, vminpos;	/* of t and of v - minlat */
	uint64_t *hist;
	double clip_pct;		/* the percentile the top row is above, 0: not clipped */
} spool;

static int spooling(void)
{
	return mode == MODE_LATENCY && !(opt.have_stepsec && (opt.have_maxlat || opt.have_steplat) && !opt.ylog);
}

static size_t vh_bin(double rel)
{
	int e;
	double m = frexp(rel, &e);	/* rel = m * 2^e, m in [0.5, 1) */
	if (e < VH_EMIN)
		return 0;
	if (e > VH_EMAX)
		return VH_BINS - 1;
	return (size_t)(e - VH_EMIN) * VH_SUB + (size_t)((m - 0.5) * 2 * VH_SUB);
}

static double vh_upper(size_t b)
{
	return ldexp(0.5 + (double)(b % VH_SUB + 1) / (2.0 * VH_SUB), (int)(b / VH_SUB) + VH_EMIN);
}

/* An unlinked temporary file in TMPDIR (tmpfile(3) would ignore it). */
static FILE *spool_open(void)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	snprintf(path, sizeof(path), "%s/marple-heatmap.XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w+") : NULL;
	if (!f)
		marple_fatal(EXIT_DATA, "%s: a temporary file for the records: %s", path, strerror(errno));
	unlink(path);
	return f;
}

static void spool_add(double t_s, double v, uint32_t id)
{
	struct spool_rec rec = { t_s, v, id };
	double rel = v - opt.minlat;

	if (!spool.f) {
		spool.f = spool_open();
		spool.hist = marple_calloc(VH_BINS, sizeof(uint64_t));
		spool.tmin = spool.vminpos = INFINITY;
		spool.tmax = -INFINITY;
	}
	if (fwrite(&rec, sizeof(rec), 1, spool.f) != 1)
		marple_fatal(EXIT_DATA, "a temporary file for the records: %s", strerror(errno));
	spool.n++;
	if (t_s < spool.tmin) spool.tmin = t_s;
	if (t_s > spool.tmax) spool.tmax = t_s;
	if (!(rel >= 0) || (opt.have_maxlat && v > opt.maxlat))
		return;		/* out of range: counted as such in the second pass */
	if (rel == 0) {
		spool.zero++;
		return;
	}
	spool.hist[vh_bin(rel)]++;
	if (rel > spool.vmax) spool.vmax = rel;
	if (rel < spool.vminpos) spool.vminpos = rel;
}

/* The clip value (relative to --minlat) at the pct percentile: the upper edge
 * of the bin holding it, rounded up to 3 significant digits; 0 if nothing
 * would lie above it. */
static double clip_value(double pct)
{
	uint64_t total = spool.zero, seen = spool.zero;
	for (size_t b = 0; b < VH_BINS; b++)
		total += spool.hist[b];
	uint64_t k = (uint64_t)ceil(pct / 100 * (double)total);
	if (seen >= k)
		return 0;
	for (size_t b = 0; b < VH_BINS; b++) {
		seen += spool.hist[b];
		if (seen < k)
			continue;
		double c = vh_upper(b), p = pow(10, floor(log10(c)) - 2);
		c = ceil(c / p * (1 - 1e-12)) * p;
		return c <= spool.vmax ? c : 0;
	}
	return 0;
}

/* Column width and value rows chosen from what the first pass saw. */
static void spool_config(struct heatgrid_config *cfg)
{
	/* 60 to 150 columns for a capture under 100 s rather than a strip of a
	 * few 1 s ones; its length is the section's when the stream says it */
	static const double steps[] = { 0.01, 0.02, 0.05, 0.1, 0.2, 0.5 };
	double span = section_seconds > 0 ? section_seconds : spool.tmax - spool.tmin;
	if (!opt.have_stepsec) {
		cfg->stepsec = 1;
		for (size_t i = 0; i < sizeof(steps) / sizeof(*steps); i++)
			if (steps[i] * 150 >= span) {
				cfg->stepsec = steps[i];
				break;
			}
	}
	if (!opt.have_maxlat && !opt.have_steplat) {
		double c = opt.clip_pct < 100 && opt.rows >= 2 ? clip_value(opt.clip_pct) : 0;
		if (c > 0) {
			cfg->have_maxv = cfg->overflow = 1;
			cfg->maxv = opt.minlat + c;
			spool.clip_pct = opt.clip_pct;
		} else if (opt.ylog && spool.vmax > 0) {
			cfg->have_maxv = 1;
			cfg->maxv = opt.minlat + spool.vmax;
		}
	}
	if (opt.ylog && cfg->have_maxv && isfinite(spool.vminpos)) {
		cfg->ylog = 1;
		cfg->ylo = spool.vminpos;
	}
}

/* The second pass: count the spooled records into a grid configured for them. */
static void spool_replay(struct heatgrid_config *cfg)
{
	struct spool_rec rec;

	if (!spool.f)
		return;
	spool_config(cfg);
	heatgrid_reconfigure(G, cfg);
	if (fflush(spool.f) != 0 || fseek(spool.f, 0, SEEK_SET) != 0)
		marple_fatal(EXIT_DATA, "a temporary file for the records: %s", strerror(errno));
	for (uint64_t i = 0; i < spool.n; i++) {
		if (fread(&rec, sizeof(rec), 1, spool.f) != 1)
			marple_fatal(EXIT_DATA, "a temporary file for the records: %s",
			      ferror(spool.f) ? strerror(errno) : "shorter than written");
		heatgrid_add_value(G, rec.t, rec.v, rec.id);
	}
	fclose(spool.f);
	free(spool.hist);
}

/* A record at time t (ns from the origin) with value v (latency mode). */
static void add(int64_t t_ns, double t_s, double v, struct mstr name)
{
	if (!isolated(name))
		return;
	uint32_t id = heatgrid_label(G, name.s, name.len);
	if (mode == MODE_OFFSET)
		heatgrid_add_offset(G, t_ns, id);
	else if (spooling())
		spool_add(t_s, v, id);
	else
		heatgrid_add_value(G, t_s, v, id);
}

static void choose_section(struct stream_reader *r)
{
	json_t *hdr = stream_reader_header(r);
	enum datatype dt = stream_reader_datatype(r);
	const char *iface = stream_header_str(hdr, "interface", "?");

	if (dt != DATATYPE_POINT && dt != DATATYPE_EVENT)
		marple_fatal(EXIT_DATA, "%s:%lu: section %ld (%s) holds %s records; marple-heatmap draws "
				 "event and point sections (stacks: try marple-flamegraph)",
		      stream_reader_name(r), stream_reader_line(r), stream_reader_section(r), iface,
		      stream_datatype_name(dt));
	drawn_dt = dt;
	drawn_header = json_incref(hdr);
	section_start_ns = stream_header_int(hdr, "start_ns", -1);
	mode = opt.mode != MODE_DEFAULT ? opt.mode : dt == DATATYPE_EVENT && !opt.field ? MODE_OFFSET : MODE_LATENCY;
	if (dt == DATATYPE_EVENT && mode == MODE_LATENCY && !opt.field)
		marple_fatal(EXIT_DATA, "%s: section %ld (%s) holds events: a latency heat map of events needs "
				 "--field KEY naming a numeric field (or use --offset)",
		      stream_reader_name(r), stream_reader_section(r), iface);
	if (stream_header_int(hdr, "start_ns", -1) >= 0 && dt == DATATYPE_EVENT) {
		origin_ns = stream_header_int(hdr, "start_ns", 0);
		have_origin = 1;
	}
	if (opt.wall && mode == MODE_OFFSET) {
		int64_t wall = stream_header_int(hdr, "wall_ns", -1), start = stream_header_int(hdr, "start_ns", -1);
		if (wall < 0 || start < 0)
			marple_fatal(EXIT_DATA, "%s: section %ld (%s): --wall needs start_ns and wall_ns in the header",
			      stream_reader_name(r), stream_reader_section(r), iface);
		int64_t shift = wall % (int64_t)opt.period_ns;
		if (dt == DATATYPE_EVENT)
			origin_ns = start - shift;
		else
			point_shift_ns = shift;
	}
}

/* Does the section beginning go on from the drawn one's last interval (the
 * same interface, datatype and host; events on the same clock)? */
static int next_interval(struct stream_reader *r)
{
	json_t *hdr = stream_reader_header(r);
	static const char *const keys[] = { "interface", "host", "clock" };

	if (!last_interval || stream_reader_datatype(r) != drawn_dt)
		return 0;
	for (size_t k = 0; k < sizeof(keys) / sizeof(*keys); k++)
		if (strcmp(stream_header_str(hdr, keys[k], ""), stream_header_str(drawn_header, keys[k], "")))
			return 0;
	int64_t start = stream_header_int(hdr, "start_ns", -1);
	if (start < section_start_ns)	/* its clock started over: not on this axis */
		return 0;
	section_shift_ns = section_start_ns >= 0 ? start - section_start_ns : 0;
	last_interval = 0;	/* until its own trailer says */
	return 1;
}

static struct mstr label_of(const struct field *f, size_t n, struct mstr dflt, const char *dkey)
{
	const char *key = opt.by ? opt.by : dkey;
	if (key) {
		const struct mstr *v = stream_fields_get(f, n, key);
		if (v)
			return *v;
	}
	return dflt;
}

/* The value of field key as a number: 0, or -1 if it is absent or not a number. */
static int field_number(const struct field *f, size_t n, const char *key, double *v)
{
	const struct mstr *fv = stream_fields_get(f, n, key);
	char buf[64];
	if (!fv || fv->len >= sizeof(buf))
		return -1;
	memcpy(buf, fv->s, fv->len);
	buf[fv->len] = 0;
	return marple_parse_double(buf, -1e300, 1e300, v) < 0 ? -1 : 0;
}

static void read_stream(struct lines *l, const char *name)
{
	struct stream_reader *r = stream_reader_new_lines(l, name);
	enum stream_item it;
	int want = 0;

	while ((it = stream_reader_next(r)) != STREAM_EOF) {
		if (it == STREAM_ERROR) {
			if (bad_lines < 10)
				stream_reader_warn(r);
			bad_lines++;
			continue;
		}
		if (it == STREAM_HEADER) {
			if (drawn_dt == DATATYPE_NONE && !plain_input) {
				choose_section(r);
				want = 1;
			} else if (next_interval(r)) {
				want = 1;
			} else {
				if (stream_reader_datatype(r) != DATATYPE_POINT && stream_reader_datatype(r) != DATATYPE_EVENT)
					marple_fatal(EXIT_DATA, "%s:%lu: section %ld holds %s records; marple-heatmap draws event and point sections",
					      name, stream_reader_line(r), stream_reader_section(r),
					      stream_datatype_name(stream_reader_datatype(r)));
				marple_warn_at(name, stream_reader_line(r), "section %ld (%s) not drawn: marple-heatmap draws the first section "
					"(select others with marple-cat -s)", stream_reader_section(r),
					stream_header_str(stream_reader_header(r), "interface", "?"));
				want = 0;
			}
			continue;
		}
		if (it == STREAM_TRAILER && want) {
			json_t *t = stream_reader_trailer(r);
			int64_t end = stream_header_int(t, "end_ns", -1);
			if (section_start_ns >= 0 && end > section_start_ns)
				section_seconds = (double)(end - section_start_ns) / 1e9;
			last_interval = !strcmp(stream_header_str(t, "ended", ""), "interval");
		}
		if (it != STREAM_RECORD || !want)
			continue;
		if (drawn_dt == DATATYPE_POINT) {
			const struct point_rec *p = stream_reader_point(r);
			double v = p->y;
			if (opt.field && field_number(p->fields, p->nfields, opt.field, &v) < 0) {
				no_value++;
				continue;
			}
			double x = p->x + (double)section_shift_ns / 1e9;
			add((int64_t)llround(x * 1e9) + point_shift_ns, x, v, label_of(p->fields, p->nfields, p->info, NULL));
		} else {
			const struct event_rec *e = stream_reader_event(r);
			double v = 0;
			if (!have_origin) {
				origin_ns = (int64_t)e->time;
				have_origin = 1;
			}
			if (mode == MODE_LATENCY && field_number(e->fields, e->nfields, opt.field, &v) < 0) {
				no_value++;
				continue;
			}
			int64_t t = (int64_t)(e->time - (uint64_t)origin_ns);
			add(t, (double)t / 1e9, v, label_of(e->fields, e->nfields, e->track, "comm"));
		}
	}
	const char *why = stream_reader_unusable(r);	/* marple-format(5): nothing drawn */
	if (why) {
		marple_warn_at(name, 0, "%s", why);
		exit(EXIT_DATA);
	}
	stream_reader_free(r);
}

static void read_plain(struct lines *l, const char *name)
{
	char *line;
	size_t n;
	unsigned long lineno = 0, nul_line = 0;
	uint64_t usable = 0, bad_before = bad_lines;
	static const struct mstr none = { "", 0 };
	int rc;

	while ((rc = lines_next_writable(l, &line, &n)) > 0) {
		const char *p = line;
		double t, v;

		lineno++;
		if (memchr(line, 0, n)) {	/* binary data: nothing more is read */
			nul_line = lineno;
			break;
		}
		line[n] = 0;	/* its newline (lines_new: never mapped) */
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\n' || *p == '\r' || (*p == 0 && p == line + n) || *p == '#')
			continue;
		if (!(p = numparse_prefix(p, &t)) || (*p != ' ' && *p != '\t')) {
			if (lineno == 1)	/* a header line, as trace2heatmap.pl allows */
				continue;
			goto bad;
		}
		while (*p == ' ' || *p == '\t')
			p++;
		if (!(p = numparse_prefix(p, &v)) || (*p != '\n' && *p != '\r' && *p != ' ' && *p != '\t' && *p != 0))
			goto bad;
		if (!have_t_first) {
			t_first = t;
			have_t_first = 1;
		}
		double ts = (t - t_first) / opt.timefactor;
		add((int64_t)llround(ts * 1e9), ts, v, none);
		usable++;
		continue;
	bad:
		if (bad_lines < 10)
			marple_warn_at(name, lineno, "not a \"time value\" line");
		bad_lines++;
	}
	if (rc < 0)
		exit(EXIT_DATA);	/* the read error was said */
	const char *why = stream_unusable_why(usable, bad_lines - bad_before, nul_line);	/* marple-format(5) */
	if (why) {
		marple_warn_at(name, 0, "%s", why);
		exit(EXIT_DATA);
	}
}

static void read_input(const char *path)
{
	FILE *f = marple_open_input(path);
	const char *name = marple_input_name(path);
	last_input = name;
	struct lines *l = lines_new(f, name);
	const char *peek;
	size_t have = 0, skip = 0;

	/* the first byte that is not white space says which: a stream's '{' */
	for (;;) {
		size_t want = skip + 1;
		peek = lines_peek(l, want, &have);
		while (skip < have && strchr("\n\r \t", peek[skip]))
			skip++;
		if (skip < have || have < want)	/* found it, or the input ended */
			break;
	}
	int c = skip < have ? (unsigned char)peek[skip] : EOF;
	if (c != EOF) {
		if (c == '{') {
			if (plain_input)
				marple_fatal(EXIT_DATA, "%s: a marple stream after plain \"time value\" input", name);
			read_stream(l, name);
		} else {
			if (drawn_dt != DATATYPE_NONE)
				marple_fatal(EXIT_DATA, "%s: plain \"time value\" lines after a marple stream", name);
			if (opt.wall)
				marple_fatal(EXIT_DATA, "%s: --wall needs a marple stream (plain lines have no wall-clock time)", name);
			plain_input = 1;
			mode = opt.mode != MODE_DEFAULT ? opt.mode : MODE_LATENCY;
			read_plain(l, name);
		}
	}
	lines_free(l);
	if (f != stdin)
		fclose(f);
}

/* ---- output ---- */

static void render(FILE *out)
{
	struct heatgrid_draw d = { 0 };
	char buf[256];

	d.offset = mode == MODE_OFFSET;
	d.period_ns = opt.period_ns;
	d.period_name = opt.period_name;
	d.color_rank = opt.color_rank;
	d.grid = opt.grid;
	d.highlight = opt.highlight;
	d.nhighlight = opt.nhighlight;
	d.isolate = opt.isolate;
	d.nisolate = opt.nisolate;
	d.what = drawn_dt == DATATYPE_EVENT ? "events" : plain_input ? "values" : "points";
	d.unit = opt.unitslabel;
	if (!d.unit && drawn_header) {
		json_t *u = json_object_get(drawn_header, "units");
		d.unit = json_string_value(json_object_get(u, drawn_dt == DATATYPE_EVENT ? "nothing" : "y"));
		if (opt.field && drawn_dt == DATATYPE_EVENT)
			d.unit = NULL;
	}
	if (!d.unit)
		d.unit = "";
	d.clip_pct = spool.clip_pct;
	d.unit_ns = *d.unit ? stream_time_unit_ns(d.unit, NULL) : 0;	/* times: labelled as times */
	if (drawn_header && !d.offset && drawn_dt == DATATYPE_POINT)
		d.ylabel = json_string_value(json_object_get(json_object_get(drawn_header, "labels"), "y"));
	if (opt.title)
		d.title = opt.title;
	else if (d.offset)
		d.title = !strcmp(opt.period_name, "1s") ? "Subsecond Offset Heat Map" :
			  !strcmp(opt.period_name, "1m") ? "Subminute Offset Heat Map" :
			  !strcmp(opt.period_name, "1h") ? "Subhour Offset Heat Map" : "Subday Offset Heat Map";
	else
		d.title = "Latency Heat Map";
	if (drawn_header) {
		const char *iface = stream_header_str(drawn_header, "interface", "?");
		const char *host = stream_header_str(drawn_header, "host", NULL);
		int64_t wall = stream_header_int(drawn_header, "wall_ns", -1);
		int64_t start = stream_header_int(drawn_header, "start_ns", -1);
		char when[64] = "";
		if (wall > 0) {
			/* wall-clock time of the origin */
			int64_t w = wall + (drawn_dt == DATATYPE_EVENT && start >= 0 ? origin_ns - start : 0) - point_shift_ns;
			time_t tt = (time_t)(w / 1000000000);
			struct tm tm;
			if (localtime_r(&tt, &tm))
				strftime(when, sizeof(when), ", from %Y-%m-%d %H:%M:%S %Z", &tm);
			d.wall_origin_ns = w;
		}
		snprintf(buf, sizeof(buf), "%s%s%s%s", iface, host ? " on " : "", host ? host : "", when);
		d.subtitle = buf;
	} else {
		d.subtitle = "time value lines";
	}
	heatgrid_draw_svg(G, out, &d);
}

int main(int argc, char **argv)
{
	marple_init(argc, argv);
	parse_options(argc, argv);

	struct heatgrid_config cfg = {
		.rows = (uint32_t)opt.rows,
		.minv = opt.minlat,
		.maxv = opt.maxlat, .have_maxv = opt.have_maxlat,
		.step = opt.steplat, .have_step = opt.have_steplat,
		.stepsec = opt.have_stepsec ? opt.stepsec : 1, .fixed_stepsec = opt.have_stepsec,
		.period_ns = opt.period_ns,
		.maxcols = (uint32_t)opt.maxcols,
	};
	G = heatgrid_new(&cfg);
	for (int i = 0; i < opt.nhighlight; i++)
		heatgrid_pin_label(G, opt.highlight[i], strlen(opt.highlight[i]));

	if (optind >= argc)
		read_input("-");
	for (int i = optind; i < argc; i++)
		read_input(argv[i]);
	spool_replay(&cfg);

	if (bad_lines)
		marple_warn("%llu bad line%s skipped", (unsigned long long)bad_lines, bad_lines == 1 ? "" : "s");
	if (no_value)
		marple_warn("%llu record%s without a numeric '%s' field skipped", (unsigned long long)no_value,
			no_value == 1 ? "" : "s", opt.field);
	struct heatgrid_stats st = heatgrid_stats(G);
	if (st.below || st.above)
		marple_warn("%llu value%s below --minlat and %llu above --maxlat left out",
			(unsigned long long)st.below, st.below == 1 ? "" : "s", (unsigned long long)st.above);
	if (st.counted == 0) {
		if (drawn_dt == DATATYPE_NONE && !plain_input)
			marple_fatal(EXIT_DATA, "%s: no marple section or \"time value\" line in the input", last_input);
		marple_fatal(EXIT_DATA, "%s: nothing to draw: no usable %s%s", last_input,
		      drawn_dt == DATATYPE_EVENT ? "event" : plain_input ? "\"time value\" line" : "point",
		      opt.nisolate ? " of the --isolate names" : "");
	}

	struct outfile *o = marple_outfile_open(opt.outpath);
	render(marple_outfile_stream(o));
	if (marple_outfile_commit(o) < 0)
		return EXIT_DATA;
	heatgrid_free(G);
	json_decref(drawn_header);
	free(opt.isolate);
	return EXIT_OK;
}
