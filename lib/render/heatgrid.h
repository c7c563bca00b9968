/* heatgrid.h — a streaming heat-map grid: columns of time, rows of value (or
 * of offset within a period), a count per bucket and, per bucket, which names
 * contributed how much.  Memory is O(buckets x names per bucket), never
 * O(records): each bucket counts the first HG_NAMES_PER_BUCKET names exactly
 * (pinned names, e.g. highlights, always) and the rest as "others".
 *
 * Rows: with maxv the step is (maxv - minv) / rows; with step alone rows grow
 * as values need; with neither, the step starts at a 1-2-5 value fitting the
 * first value and doubles (merging row pairs) as larger values arrive.
 * With maxv and overflow, the top row holds every value >= maxv (a clipped
 * y range: nothing dropped) and the other rows split [minv, maxv); with ylog
 * those rows are log-spaced from minv + ylo up to maxv (row 0 also holds
 * what lies below minv + ylo).
 * Columns: stepsec seconds each (latency) or one period each (offset); past
 * maxcols they double in width, unless stepsec is fixed.
 *
 *   struct heatgrid *g = heatgrid_new(&cfg);
 *   heatgrid_add_value(g, 12.5, 3.2, heatgrid_label(g, "bash", 4));
 *   heatgrid_draw_svg(g, stdout, &draw);
 */
#ifndef MARPLE_HEATGRID_H
#define MARPLE_HEATGRID_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define HG_MAX_HIGHLIGHT 4
#define HG_MAX_ROWS 10000
#define HG_MAX_COLS 200000
#define HG_NAMES_PER_BUCKET 16

struct heatgrid_config {
	uint32_t rows;
	double minv, maxv;
	int have_maxv;
	double step;
	int have_step;
	int overflow;		/* with have_maxv: the top row is [maxv, inf) */
	int ylog;		/* with have_maxv: log-spaced rows from minv + ylo */
	double ylo;
	double stepsec;
	int fixed_stepsec;
	uint64_t period_ns;	/* offset mode */
	uint32_t maxcols;
};

struct heatgrid;

struct heatgrid *heatgrid_new(const struct heatgrid_config *cfg);
void heatgrid_free(struct heatgrid *g);

/* Intern a name; pinned names are always counted exactly in every bucket. */
uint32_t heatgrid_label(struct heatgrid *g, const char *s, size_t len);
uint32_t heatgrid_pin_label(struct heatgrid *g, const char *s, size_t len);

/* Latency: t seconds from the origin, value v. */
void heatgrid_add_value(struct heatgrid *g, double t_s, double v, uint32_t label);
/* Offset: t nanoseconds from the origin (may be negative). */
void heatgrid_add_offset(struct heatgrid *g, int64_t t_ns, uint32_t label);

struct heatgrid_stats {
	uint64_t counted;	/* records in buckets */
	uint64_t below, above;	/* values outside [minv, maxv] or time out of range */
};
struct heatgrid_stats heatgrid_stats(const struct heatgrid *g);
/* Change the configuration of a grid that holds no record yet (labels kept). */
void heatgrid_reconfigure(struct heatgrid *g, const struct heatgrid_config *cfg);

struct heatgrid_draw {
	int offset;			/* offset heat map (else latency) */
	uint64_t period_ns;
	const char *period_name;
	int color_rank;
	int grid;
	const char *const *highlight;
	int nhighlight;
	const char *const *isolate;
	int nisolate;
	const char *title, *subtitle;
	const char *what;		/* "events", "points", "values" */
	const char *unit;		/* of values */
	const char *ylabel;		/* what the values are (the header's labels.y), NULL: "value" */
	uint64_t unit_ns;		/* the unit is a time unit of this many ns (labels as times), else 0 */
	double clip_pct;		/* the overflow row is above this percentile (for the legend) */
	int64_t wall_origin_ns;		/* wall-clock time of the origin, 0 if unknown */
};

void heatgrid_draw_svg(const struct heatgrid *g, FILE *f, const struct heatgrid_draw *d);

#endif
