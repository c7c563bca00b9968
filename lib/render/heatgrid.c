/* heatgrid.c — streaming heat-map buckets and their interactive SVG. */
#include "heatgrid.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "intern.h"
#include "svg.h"
#include "timefmt.h"
#include "util.h"
#include "xml.h"
#include "timefmt.js.h"	/* lib/render/timefmt.js, the times of the tooltips */
#include "heatgrid.js.h"	/* lib/render/heatgrid.js, made a C string by the Makefile */

struct ent {
	uint32_t id;
	uint32_t n;
};

struct bucket {
	uint64_t n;
	uint64_t other;
	struct ent *e;
	uint32_t ne, cap;
};

struct heatgrid {
	struct heatgrid_config cfg;
	struct intern *labels;
	uint32_t npinned;
	/* grid */
	struct bucket **cols;		/* cols[i] is column base + i, NULL if empty */
	size_t ncols, colcap;
	int64_t base;
	uint64_t span;			/* columns merged: widths are stepsec*span or period*span */
	uint32_t rows, rowcap;
	double step;			/* value per row; 0 = not chosen yet */
	struct heatgrid_stats st;
};

static void configure(struct heatgrid *g, const struct heatgrid_config *cfg)
{
	g->cfg = *cfg;
	if (!g->cfg.rows)
		g->cfg.rows = 50;
	if (!g->cfg.maxcols)
		g->cfg.maxcols = 1000;
	if (g->cfg.stepsec <= 0)
		g->cfg.stepsec = 1;
	if (!g->cfg.have_maxv || g->cfg.rows < 2)
		g->cfg.overflow = 0;	/* an overflow row needs a range and one row below it */
	if (!g->cfg.have_maxv || !(g->cfg.ylo > 0) || g->cfg.ylo >= g->cfg.maxv - g->cfg.minv)
		g->cfg.ylog = 0;
	g->span = 1;
	g->rows = g->cfg.rows;
	g->step = 0;
	if (g->cfg.have_maxv) {
		g->step = (g->cfg.maxv - g->cfg.minv) / (g->rows - (g->cfg.overflow ? 1 : 0));
	} else if (g->cfg.have_step) {
		g->step = g->cfg.step;
		g->rows = 1;
	}
	g->rowcap = g->rows;
}

struct heatgrid *heatgrid_new(const struct heatgrid_config *cfg)
{
	struct heatgrid *g = marple_calloc(1, sizeof(*g));
	configure(g, cfg);
	g->labels = intern_new();
	return g;
}

void heatgrid_reconfigure(struct heatgrid *g, const struct heatgrid_config *cfg)
{
	if (g->ncols || g->st.counted || g->st.below || g->st.above)
		marple_fatal(EXIT_DATA, "internal error: heatgrid_reconfigure of a grid that holds records");
	configure(g, cfg);
}

/* Rows below the overflow row: value ranges of their own. */
static uint32_t regular_rows(const struct heatgrid *g)
{
	return g->rows - (g->cfg.overflow ? 1 : 0);
}

/* The value at the lower edge of row r, r = rows the top edge (infinity above
 * an overflow row).  Row 0 of a log scale starts at minv. */
static double row_edge(const struct heatgrid *g, uint32_t r)
{
	uint32_t nreg = regular_rows(g);
	double hi = g->cfg.maxv - g->cfg.minv;
	if (r > nreg)
		return INFINITY;
	if (r == 0 || !g->cfg.ylog)
		return g->cfg.minv + r * (g->step ? g->step : 1);
	return g->cfg.minv + g->cfg.ylo * pow(hi / g->cfg.ylo, (double)r / nreg);
}

/* The row of rel = v - minv (>= 0) in a fixed range (have_maxv). */
static uint32_t fixed_row(const struct heatgrid *g, double rel)
{
	uint32_t nreg = regular_rows(g);
	double hi = g->cfg.maxv - g->cfg.minv, rr;
	if (g->cfg.overflow && rel >= hi)
		return g->rows - 1;
	if (g->cfg.ylog)
		rr = rel <= g->cfg.ylo ? 0 : floor(log(rel / g->cfg.ylo) / log(hi / g->cfg.ylo) * nreg);
	else
		rr = floor(rel / g->step);
	return rr >= nreg ? nreg - 1 : rr < 0 ? 0 : (uint32_t)rr;
}

/* Records in the overflow row (0 without one). */
static uint64_t heatgrid_overflow_count(const struct heatgrid *g)
{
	uint64_t n = 0;
	for (size_t i = 0; g->cfg.overflow && i < g->ncols; i++)
		if (g->cols[i])
			n += g->cols[i][g->rows - 1].n;
	return n;
}

void heatgrid_free(struct heatgrid *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->ncols; i++) {
		if (!g->cols[i])
			continue;
		for (uint32_t r = 0; r < g->rowcap; r++)
			free(g->cols[i][r].e);
		free(g->cols[i]);
	}
	free(g->cols);
	intern_free(g->labels);
	free(g);
}

/* ---- labels ---- */

uint32_t heatgrid_label(struct heatgrid *g, const char *s, size_t len)
{
	return intern_get(g->labels, s, len);
}

uint32_t heatgrid_pin_label(struct heatgrid *g, const char *s, size_t len)
{
	uint32_t id = heatgrid_label(g, s, len);
	if (id + 1 > g->npinned)
		g->npinned = id + 1;	/* pinned names are interned first: ids 0..npinned-1 */
	return id;
}

/* ---- buckets ---- */

static void bucket_count(struct heatgrid *g, struct bucket *b, uint32_t id, uint32_t n)
{
	b->n += n;
	for (uint32_t i = 0; i < b->ne; i++)
		if (b->e[i].id == id) {
			b->e[i].n += n;
			return;
		}
	if (b->ne >= HG_NAMES_PER_BUCKET && id >= g->npinned) {
		b->other += n;
		return;
	}
	if (b->ne == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 2;
		b->e = realloc(b->e, b->cap * sizeof(struct ent));
		if (!b->e)
			marple_fatal(EXIT_DATA, "out of memory");
	}
	b->e[b->ne++] = (struct ent){ id, n };
}

static void bucket_merge(struct heatgrid *g, struct bucket *dst, struct bucket *src)
{
	uint64_t n = dst->n + src->n;
	for (uint32_t i = 0; i < src->ne; i++)
		bucket_count(g, dst, src->e[i].id, src->e[i].n);
	dst->other += src->other;
	dst->n = n;
	free(src->e);
	*src = (struct bucket){ 0 };
}

static struct bucket *new_column(struct heatgrid *g)
{
	return marple_calloc(g->rowcap, sizeof(struct bucket));
}

/* Halve the number of columns: column c becomes c / 2 (floor). */
static void merge_columns(struct heatgrid *g)
{
	int64_t nb = g->base >= 0 ? g->base / 2 : -((-g->base + 1) / 2);
	int64_t last = g->base + (int64_t)g->ncols - 1;
	int64_t nl = last >= 0 ? last / 2 : -((-last + 1) / 2);
	size_t n = (size_t)(nl - nb + 1);
	struct bucket **cols = marple_calloc(n > 0 ? n : 1, sizeof(*cols));

	for (size_t i = 0; i < g->ncols; i++) {
		int64_t c = g->base + (int64_t)i;
		int64_t nc = c >= 0 ? c / 2 : -((-c + 1) / 2);
		struct bucket *src = g->cols[i];
		if (!src)
			continue;
		struct bucket **dst = &cols[nc - nb];
		if (!*dst) {
			*dst = src;
			continue;
		}
		for (uint32_t r = 0; r < g->rowcap; r++)
			if (src[r].n)
				bucket_merge(g, &(*dst)[r], &src[r]);
		free(src);
	}
	free(g->cols);
	g->cols = cols;
	g->ncols = g->colcap = n;
	g->base = nb;
	g->span *= 2;
}

/* The column array slot for absolute column c, growing the array; NULL if c
 * is out of the permitted range (counted by the caller). */
static struct bucket *column(struct heatgrid *g, int64_t c)
{
	if (g->ncols == 0) {
		g->base = c;
		g->colcap = 16;
		g->cols = marple_calloc(g->colcap, sizeof(*g->cols));
		g->ncols = 1;
	} else if (c < g->base) {
		size_t add = (size_t)(g->base - c);
		if (g->ncols + add > HG_MAX_COLS)
			return NULL;
		g->cols = marple_grow(g->cols, &g->colcap, g->ncols + add, sizeof(*g->cols));
		memmove(g->cols + add, g->cols, g->ncols * sizeof(*g->cols));
		memset(g->cols, 0, add * sizeof(*g->cols));
		g->ncols += add;
		g->base = c;
	} else if (c >= g->base + (int64_t)g->ncols) {
		size_t n = (size_t)(c - g->base) + 1;
		if (n > HG_MAX_COLS)
			return NULL;
		size_t old = g->colcap;
		g->cols = marple_grow(g->cols, &g->colcap, n, sizeof(*g->cols));
		memset(g->cols + old, 0, (g->colcap - old) * sizeof(*g->cols));
		g->ncols = n;
	}
	struct bucket **slot = &g->cols[c - g->base];
	if (!*slot)
		*slot = new_column(g);
	return *slot;
}

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;
	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* Too many columns?  Widen them, unless the user fixed the width. */
static void maybe_merge(struct heatgrid *g)
{
	while (g->ncols > g->cfg.maxcols && !g->cfg.fixed_stepsec)
		merge_columns(g);
}

static void grow_rows(struct heatgrid *g, uint32_t rows)
{
	uint32_t cap = g->rowcap;
	while (cap < rows)
		cap *= 2;
	if (cap > HG_MAX_ROWS)
		cap = HG_MAX_ROWS;
	for (size_t i = 0; i < g->ncols; i++) {
		if (!g->cols[i])
			continue;
		g->cols[i] = realloc(g->cols[i], cap * sizeof(struct bucket));
		if (!g->cols[i])
			marple_fatal(EXIT_DATA, "out of memory");
		memset(g->cols[i] + g->rowcap, 0, (cap - g->rowcap) * sizeof(struct bucket));
	}
	g->rowcap = cap;
	g->rows = rows;
}

/* Double the value step: row r becomes r / 2. */
static void double_step(struct heatgrid *g)
{
	for (size_t i = 0; i < g->ncols; i++) {
		struct bucket *col = g->cols[i];
		if (!col)
			continue;
		for (uint32_t r = 0; r < g->rows; r++) {
			if (!col[r].n)
				continue;
			uint32_t nr = r / 2;
			if (nr == r)
				continue;
			if (!col[nr].n && !col[nr].e) {
				col[nr] = col[r];
				col[r] = (struct bucket){ 0 };
			} else {
				bucket_merge(g, &col[nr], &col[r]);
			}
		}
	}
	g->step *= 2;
}

static double nice_step(double v, uint32_t rows)
{
	double want = v / rows * 1.0000001;
	double p = pow(10, floor(log10(want)));
	if (p >= want)
		return p;
	if (2 * p >= want)
		return 2 * p;
	if (5 * p >= want)
		return 5 * p;
	return 10 * p;
}

static void add_at(struct heatgrid *g, int64_t c, uint32_t r, uint32_t id)
{
	struct bucket *col = column(g, c);
	if (!col) {
		g->st.above++;
		return;
	}
	bucket_count(g, &col[r], id, 1);
	g->st.counted++;
	if (g->ncols > g->cfg.maxcols)
		maybe_merge(g);
}

void heatgrid_add_value(struct heatgrid *g, double t_s, double v, uint32_t id)
{
	double rel = v - g->cfg.minv;
	uint32_t r;

	if (!(rel >= 0)) {
		g->st.below++;
		return;
	}
	if (g->cfg.have_maxv && v > g->cfg.maxv && !g->cfg.overflow) {
		g->st.above++;
		return;
	}
	if (g->step == 0 && rel > 0)
		g->step = nice_step(rel, g->rows);
	if (g->cfg.have_maxv) {
		r = fixed_row(g, rel);
	} else if (g->step == 0) {
		r = 0;	/* only zeros so far: row 0 whatever the step */
	} else {
		double rr = floor(rel / g->step);
		if (g->cfg.have_step) {
			if (rr >= HG_MAX_ROWS) {
				g->st.above++;
				return;
			}
			r = (uint32_t)rr;
			if (r >= g->rows)
				grow_rows(g, r + 1);
		} else {
			while (rr >= g->rows) {
				double_step(g);
				rr = floor(rel / g->step);
			}
			r = (uint32_t)rr;
		}
	}
	double w = g->cfg.stepsec * (double)g->span;
	double cc = floor(t_s / w);
	if (!(fabs(cc) < 9e15)) {
		g->st.above++;
		return;
	}
	add_at(g, (int64_t)cc, r, id);
}

void heatgrid_add_offset(struct heatgrid *g, int64_t t_ns, uint32_t id)
{
	int64_t period = (int64_t)g->cfg.period_ns;
	int64_t p = floor_div(t_ns, period);
	uint64_t off = (uint64_t)(t_ns - p * period);
	uint32_t r = (uint32_t)(off * g->rows / (uint64_t)period);

	if (r >= g->rows)
		r = g->rows - 1;
	add_at(g, floor_div(p, (int64_t)g->span), r, id);
}

struct heatgrid_stats heatgrid_stats(const struct heatgrid *g)
{
	return g->st;
}

/* ---- drawing ---- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Offset unit for labels: ms for 1 s, s for 1 m, min for 1 h, h for 1 d. */
static void offset_unit(uint64_t period_ns, double *div_ns, const char **unit)
{
	if (period_ns <= 1000000000ull) { *div_ns = 1e6; *unit = "ms"; }
	else if (period_ns <= 60000000000ull) { *div_ns = 1e9; *unit = "s"; }
	else if (period_ns <= 3600000000000ull) { *div_ns = 60e9; *unit = "min"; }
	else { *div_ns = 3600e9; *unit = "h"; }
}

static void write_js_names(FILE *f, const char *const *names, int n)
{
	fputc('[', f);
	for (int i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		xml_js_string_cstr(f, names[i]);
	}
	fputc(']', f);
}

/* The smallest of 1, 2, 5, 10, 20, 50, ... that is at least min. */
static size_t nice_count(double min)
{
	for (size_t p = 1;; p *= 10)
		for (size_t m = 1; m <= 5; m += m == 2 ? 3 : 1)
			if ((double)(m * p) >= min)
				return m * p;
}

static void x_label(FILE *f, const struct heatgrid_draw *d, const struct heatgrid *g, size_t c, double x0, double y0,
		    double boxw, double maph, double colw)
{
	char a[48], buf[64];
	double t = (double)(g->base + (int64_t)c) * colw, div = 1;
	const char *u = "s";
	/* offset maps of minutes, hours, days count columns in that unit */
	if (d->offset && d->period_ns >= 86400000000000ull) { div = 86400; u = "d"; }
	else if (d->offset && d->period_ns >= 3600000000000ull) { div = 3600; u = "h"; }
	else if (d->offset && d->period_ns >= 60000000000ull) { div = 60; u = "m"; }
	if (div == 1) {		/* seconds: as the tooltips write times */
		timefmt_ns(buf, sizeof(buf), t * 1e9, 4);
	} else {
		svg_num(a, sizeof(a), t / div, 8);
		snprintf(buf, sizeof(buf), "%s%s", a, u);
	}
	svg_text(f, x0 + (double)c * boxw, y0 + maph + 14, "middle", "axis", buf);
	if (d->wall_origin_ns > 0) {	/* the wall-clock time below it */
		time_t w = (time_t)floor(((double)d->wall_origin_ns / 1e9) + t);
		struct tm tm;
		if (localtime_r(&w, &tm) &&
		    strftime(buf, sizeof(buf), d->offset && d->period_ns >= 86400000000000ull ? "%m-%d" : "%H:%M:%S", &tm))
			svg_text(f, x0 + (double)c * boxw, y0 + maph + 26, "middle", "sub", buf);
	}
	if (d->grid)
		fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
			x0 + (double)c * boxw, y0, x0 + (double)c * boxw, y0 + maph);
}

/* What drawing needs to know: the counts' range, sizes and units. */
struct heatgrid_layout {
	uint64_t maxn, nlit;		/* the largest count; buckets with any */
	uint32_t maxne;			/* the most names in one bucket (the details box) */
	uint64_t *ranks;		/* distinct counts ascending, for colour by rank */
	size_t nrank, ncols;
	double boxw, boxh, x0, y0, mapw, maph, width, height, dety, detw;
	double rowstep, colw;		/* value per row, seconds per column */
	double unit_ns;			/* values are times of this many ns each (0: not times) */
	const char *unit;
	char sub[400];			/* the subtitle line */
	size_t sublen;
};

/* A value as the y axis shows it ("12.5 ms"); returns its length. */
static size_t value_text(char *buf, size_t size, const struct heatgrid_layout *L, double v)
{
	char a[48];
	if (L->unit_ns > 0)
		return timefmt_ns(buf, size, v * L->unit_ns, 4);
	svg_num(a, sizeof(a), v, 6);
	int n = snprintf(buf, size, "%s%s%s", a, L->unit && *L->unit ? " " : "", L->unit ? L->unit : "");
	return n < 0 ? 0 : (size_t)n;
}

/* The label of the y axis at row boundary r ("12.5 ms"); returns its length. */
static size_t y_label(char *buf, size_t size, const struct heatgrid *g, const struct heatgrid_draw *d,
		      const struct heatgrid_layout *L, uint32_t r)
{
	return value_text(buf, size, L, d->offset ? r * L->rowstep : g->cfg.minv + r * L->rowstep);
}

#define HG_MAX_TICKS 80
struct heatgrid_tick {
	double y;
	char text[80];
};

/* Ticks of a clipped or log-scaled value axis: 1-2-5 values where they fit
 * (at least 14 px apart), and the overflow row's "≥ maxv" label. */
static size_t value_ticks(const struct heatgrid *g, const struct heatgrid_layout *L, struct heatgrid_tick *t)
{
	size_t n = 0;
	uint32_t nreg = regular_rows(g);
	double base = L->y0 + L->maph, top = base - nreg * L->boxh, hi = g->cfg.maxv - g->cfg.minv;
	double last = INFINITY;		/* y of the last tick placed */
	if (g->cfg.ylog) {
		double lo = g->cfg.ylo, span = log(hi / lo), decades = span / log(10);
		int per = (double)nreg * L->boxh / 14 / (decades > 0.1 ? decades : 0.1) >= 3 ? 3 : 1;
		for (int e = (int)floor(log10(lo)); e <= (int)ceil(log10(hi)) && n < HG_MAX_TICKS - 1; e++)
			for (int k = 0; k < per && n < HG_MAX_TICKS - 1; k++) {
				double v = (k == 0 ? 1 : k == 1 ? 2 : 5) * pow(10, e);
				double y = base - log(v / lo) / span * nreg * L->boxh;
				if (v < lo || v > hi || last - y < 14 || (g->cfg.overflow && y - top < 14))
					continue;
				t[n].y = last = y;
				value_text(t[n++].text, sizeof(t->text), L, g->cfg.minv + v);
			}
	} else {
		double fit = (double)nreg * L->boxh / 20, ts = nice_step(hi, fit >= 1 ? (uint32_t)fit : 1);
		for (uint32_t k = 0; k * ts < hi && n < HG_MAX_TICKS - 1; k++) {
			double y = base - k * ts / g->step * L->boxh;
			if (g->cfg.overflow && y - top < 14)
				break;
			t[n].y = y;
			value_text(t[n++].text, sizeof(t->text), L, g->cfg.minv + k * ts);
		}
	}
	if (g->cfg.overflow) {
		char v[64];
		value_text(v, sizeof(v), L, g->cfg.maxv);
		t[n].y = top;
		snprintf(t[n++].text, sizeof(t->text), "\xe2\x89\xa5 %s", v);
	}
	return n;
}

/* The y axis labels and where they go. */
static size_t y_ticks(const struct heatgrid *g, const struct heatgrid_draw *d, const struct heatgrid_layout *L,
		      struct heatgrid_tick *t)
{
	if (!d->offset && (g->cfg.overflow || g->cfg.ylog))
		return value_ticks(g, L, t);
	size_t n = 0;
	uint32_t ystep = (uint32_t)ceil(14.0 / L->boxh);
	for (uint32_t r = 0; r <= g->rows && n < HG_MAX_TICKS; r += ystep, n++) {
		t[n].y = L->y0 + L->maph - r * L->boxh;
		y_label(t[n].text, sizeof(t->text), g, d, L, r);
	}
	return n;
}

static void count_buckets(const struct heatgrid *g, const struct heatgrid_draw *d, struct heatgrid_layout *L)
{
	for (size_t i = 0; i < g->ncols; i++)
		for (uint32_t r = 0; g->cols[i] && r < g->rows; r++) {
			const struct bucket *bk = &g->cols[i][r];
			if (!bk->n)
				continue;
			L->nlit++;
			if (bk->n > L->maxn)
				L->maxn = bk->n;
			uint32_t ne = bk->ne + (bk->other ? 1 : 0);
			if (ne > L->maxne)
				L->maxne = ne;
		}
	if (!d->color_rank)
		return;
	L->ranks = marple_malloc((L->nlit ? L->nlit : 1) * sizeof(uint64_t));
	for (size_t i = 0; i < g->ncols; i++)
		for (uint32_t r = 0; g->cols[i] && r < g->rows; r++)
			if (g->cols[i][r].n)
				L->ranks[L->nrank++] = g->cols[i][r].n;
	qsort(L->ranks, L->nrank, sizeof(uint64_t), cmp_u64);
	size_t u = 0;
	for (size_t i = 0; i < L->nrank; i++)
		if (!u || L->ranks[u - 1] != L->ranks[i])
			L->ranks[u++] = L->ranks[i];
	L->nrank = u;
}

/* The subtitle line: what was drawn, how many, the colour scale's range. */
static void subtitle_text(const struct heatgrid *g, const struct heatgrid_draw *d, struct heatgrid_layout *L)
{
	char *sub = L->sub;
	size_t size = sizeof(L->sub);
	int n = snprintf(sub, size, "%s; %llu %s, colour by %s (max %llu per bucket)",
			 d->subtitle ? d->subtitle : "", (unsigned long long)g->st.counted, d->what,
			 d->color_rank ? "rank" : "linear", (unsigned long long)L->maxn);
	if (g->cfg.overflow && n > 0 && (size_t)n < size) {	/* what the clipped top row holds */
		char v[64], pct[48] = "";
		value_text(v, sizeof(v), L, g->cfg.maxv);
		if (d->clip_pct > 0)
			snprintf(pct, sizeof(pct), ", above the %gth percentile", d->clip_pct);
		n += snprintf(sub + n, size - (size_t)n, "; top row: %llu %s \xe2\x89\xa5 %s%s",
			      (unsigned long long)heatgrid_overflow_count(g), d->what, v, pct);
	}
	L->sublen = n < 0 ? 0 : (size_t)n >= size ? size - 1 : (size_t)n;
}

static void layout_map(const struct heatgrid *g, const struct heatgrid_draw *d, struct heatgrid_layout *L)
{
	uint32_t rows = g->rows;
	L->ncols = g->ncols ? g->ncols : 1;
	/* a few columns (a short capture) share the 1200 px as many do, rather
	 * than making a strip at the left of a wide page */
	double boxw = 1200.0 / (double)L->ncols, boxh = 480.0 / rows;
	if (boxw < 1) boxw = 1;
	L->boxw = floor(boxw * 10) / 10;
	if (boxh > 8) boxh = 8;
	if (boxh < 1) boxh = 1;
	L->boxh = floor(boxh * 10) / 10;
	L->x0 = 80, L->y0 = 62;
	L->mapw = L->boxw * (double)L->ncols, L->maph = L->boxh * rows;
	L->width = L->x0 + L->mapw + 30;
	if (L->width < 640)
		L->width = 640;
	L->dety = L->y0 + L->maph + 62;
	L->height = L->dety + 30 + 14.0 * (L->maxne ? L->maxne : 1) + 10;
	L->detw = L->width - L->x0 - 20;

	/* value per row and the origin of columns, in the units the page shows */
	double div_ns = 1;
	L->unit = d->unit;
	L->unit_ns = (double)d->unit_ns;
	if (d->offset) {
		offset_unit(d->period_ns, &div_ns, &L->unit);
		L->unit_ns = div_ns <= 1e9 ? div_ns : 0;	/* minutes and hours keep their own labels */
		L->rowstep = (double)d->period_ns / rows / div_ns;
		L->colw = (double)d->period_ns / 1e9 * (double)g->span;
	} else {
		L->rowstep = g->step ? g->step : 1;
		L->colw = g->cfg.stepsec * (double)g->span;
	}
	/* the widest y label (about 6.6 px a character) ends 4 px left of the map
	 * and must start right of the rotated axis title (x 10..22) */
	struct heatgrid_tick ticks[HG_MAX_TICKS];
	size_t widest = 0, nt = y_ticks(g, d, L, ticks);
	for (size_t i = 0; i < nt; i++)
		if (strlen(ticks[i].text) > widest)
			widest = strlen(ticks[i].text);
	if (30 + 6.6 * (double)widest > L->x0) {
		L->x0 = ceil(30 + 6.6 * (double)widest);
		L->width = L->x0 + L->mapw + 30 < 640 ? 640 : L->x0 + L->mapw + 30;
		L->detw = L->width - L->x0 - 20;
	}
	/* the subtitle is centred: the page is as wide as it needs (at most
	 * 7.2 px a character of 12 px Verdana, 10 px either side), so a long
	 * host name or clip note never starts left of the page */
	subtitle_text(g, d, L);
	size_t chars = 0;
	for (size_t i = 0; i < L->sublen; i++)
		chars += ((unsigned char)L->sub[i] & 0xc0) != 0x80;
	if (7.2 * (double)chars + 20 > L->width) {
		L->width = ceil(7.2 * (double)chars + 20);
		L->detw = L->width - L->x0 - 20;
	}
}

/* Above the map: the subtitle, what is highlighted or isolated, the colour scale. */
static void draw_legend(FILE *f, const struct heatgrid *g, const struct heatgrid_draw *d, const struct heatgrid_layout *L)
{
	char buf[160], col[8];
	double x0 = L->x0, y0 = L->y0;
	svg_text_n(f, L->width / 2, 42, "middle", "sub", L->sub, L->sublen);
	if (d->nhighlight || d->nisolate) {
		double x = x0;
		for (int i = 0; i < d->nhighlight; i++) {
			svg_heat_color(0.7, 1 + i % 3, col);
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/>\n", x, y0 - 13, col);
			snprintf(buf, sizeof(buf), "highlight: %s", d->highlight[i]);
			svg_text(f, x + 14, y0 - 4, "start", "axis", buf);
			x += 20 + 7.0 * (double)strlen(buf);
		}
		if (d->nisolate) {
			size_t len = 0;
			buf[0] = 0;
			for (int i = 0; i < d->nisolate && len < sizeof(buf) - 1; i++)
				len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? ", " : "isolated: ", d->isolate[i]);
			svg_text(f, x, y0 - 4, "start", "axis", buf);
		}
	}

	/* colour scale: five swatches from the palest to the darkest count */
	if (L->maxn) {
		double sx = x0 + L->mapw - 5 * 12;
		if (sx < x0 + 260)
			sx = x0 + 260;
		svg_text(f, sx - 4, y0 - 4, "end", "axis", d->color_rank ? "count (rank): 1" : "count: 1");
		for (int i = 0; i < 5; i++) {
			svg_heat_color(i / 4.0, 0, col);
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"10\" fill=\"%s\"/>\n",
				sx + 12 * i, y0 - 13, col);
		}
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)L->maxn);
		svg_text(f, sx + 64, y0 - 4, "start", "axis", buf);
	}
}

static void draw_axes(FILE *f, const struct heatgrid *g, const struct heatgrid_draw *d, const struct heatgrid_layout *L)
{
	char buf[160], b[48];
	double x0 = L->x0, y0 = L->y0, boxw = L->boxw, mapw = L->mapw, maph = L->maph;
	const char *unit = L->unit;
	size_t ncols = L->ncols;

	/* y axis */
	struct heatgrid_tick ticks[HG_MAX_TICKS];
	size_t nt = y_ticks(g, d, L, ticks);
	for (size_t i = 0; i < nt; i++) {
		svg_text(f, x0 - 4, ticks[i].y + 4, "end", "axis", ticks[i].text);
		if (d->grid)
			fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
				x0, ticks[i].y, x0 + mapw, ticks[i].y);
	}
	/* x axis: a label every xstep columns (1, 2, 5, 10, ...) and at the end */
	double gap = d->wall_origin_ns > 0 ? 62 : 48;	/* "12:00:00" needs more room, "1.25 s" 48 px */
	size_t xstep = nice_count(gap / boxw), lastc = ncols / xstep * xstep;
	for (size_t c = 0; c <= ncols; c += xstep)
		x_label(f, d, g, c, x0, y0, boxw, maph, L->colw);
	if (lastc != ncols && (double)(ncols - lastc) * boxw >= gap)
		x_label(f, d, g, ncols, x0, y0, boxw, maph, L->colw);
	timefmt_ns(b, sizeof(b), L->colw * 1e9, 4);
	snprintf(buf, sizeof(buf), "time (%s per column)", b);
	svg_text(f, x0 + mapw / 2, y0 + maph + 42, "middle", "axis", buf);
	if (d->offset)	/* each tick names its own unit (0 s, 40 ms, ..., 1 s) */
		snprintf(buf, sizeof(buf), "offset within each %s", d->period_ns <= 1000000000ull ? "second" :
			 d->period_ns <= 60000000000ull ? "minute" : d->period_ns <= 3600000000000ull ? "hour" : "day");
	else if (unit && *unit)
		snprintf(buf, sizeof(buf), "%s (%s)", d->ylabel ? d->ylabel : "value", unit);
	else
		snprintf(buf, sizeof(buf), "%s", d->ylabel ? d->ylabel : "value");
	fprintf(f, "<text x=\"16\" y=\"%.1f\" text-anchor=\"middle\" class=\"axis\" transform=\"rotate(-90 16 %.1f)\">",
		y0 + maph / 2, y0 + maph / 2);
	xml_escape_cstr(f, buf);
	fputs("</text>\n", f);
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#ccc\" stroke-width=\"0.5\"/>\n",
		x0, y0, mapw, maph);
}

/* A bucket's colour: its shade by count (or rank), its hue by the pinned
 * (highlighted) name with the most of it. */
static void cell_colour(const struct heatgrid *g, const struct heatgrid_draw *d, const struct heatgrid_layout *L,
			const struct bucket *bk, char col[8])
{
	double t;
	if (d->color_rank) {
		size_t lo = 0, hi = L->nrank;
		while (lo < hi) {
			size_t m = (lo + hi) / 2;
			if (L->ranks[m] < bk->n) lo = m + 1; else hi = m;
		}
		t = L->nrank > 1 ? (double)lo / (double)(L->nrank - 1) : 1;
	} else {
		t = (double)bk->n / (double)L->maxn;
	}
	int hue = 0;
	uint64_t best = 0;
	for (uint32_t k = 0; k < bk->ne; k++)
		if (bk->e[k].id < g->npinned && bk->e[k].n > best) {
			best = bk->e[k].n;
			hue = 1 + (int)(bk->e[k].id % 3);
		}
	svg_heat_color(t, hue, col);
}

static void draw_cells(FILE *f, const struct heatgrid *g, const struct heatgrid_draw *d, const struct heatgrid_layout *L)
{
	char col[8];

	fprintf(f, "<g id=\"hm-cells\" data-rows=\"%u\" data-cols=\"%zu\" data-lit=\"%llu\">\n", g->rows, L->ncols,
		(unsigned long long)L->nlit);
	for (size_t i = 0; i < g->ncols; i++) {
		const struct bucket *colb = g->cols[i];
		if (!colb)
			continue;
		for (uint32_t r = 0; r < g->rows; r++) {
			const struct bucket *bk = &colb[r];
			if (!bk->n)
				continue;
			cell_colour(g, d, L, bk, col);
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
				   "data-c=\"%zu\" data-r=\"%u\" data-n=\"%llu\" data-d=\"",
				L->x0 + (double)i * L->boxw, L->y0 + L->maph - (r + 1) * L->boxh, L->boxw, L->boxh, col, i, r,
				(unsigned long long)bk->n);
			for (uint32_t k = 0; k < bk->ne; k++)
				fprintf(f, "%s%u:%u", k ? " " : "", bk->e[k].id, bk->e[k].n);
			fputc('"', f);
			if (bk->other)
				fprintf(f, " data-o=\"%llu\"", (unsigned long long)bk->other);
			fputs("/>\n", f);
		}
	}
	fputs("</g>\n<g id=\"hm-details\"></g>\n", f);
}

/* Parameters and names for the script (heatgrid.js). */
static void write_script_data(FILE *f, const struct heatgrid *g, const struct heatgrid_draw *d, const struct heatgrid_layout *L)
{
	fputs("<script type=\"text/ecmascript\"><![CDATA[\nvar HM = {", f);
	fprintf(f, "offset: %s, c0: %lld, colw: %.17g, rowstep: %.17g, minv: %.17g, unit: ",
		d->offset ? "true" : "false", (long long)g->base, L->colw, L->rowstep, d->offset ? 0.0 : g->cfg.minv);
	xml_js_string_cstr(f, L->unit ? L->unit : "");
	fputs(", what: ", f);
	xml_js_string_cstr(f, d->what);
	fprintf(f, ", unit_ns: %.17g, x0: %.1f, dety: %.1f, detw: %.1f, wall0: ", L->unit_ns, L->x0, L->dety, L->detw);
	if (d->wall_origin_ns > 0)
		fprintf(f, "%.3f", (double)d->wall_origin_ns / 1e6);
	else
		fputs("null", f);
	fputs(", highlight: ", f);
	write_js_names(f, d->highlight, d->nhighlight);
	if (!d->offset && (g->cfg.overflow || g->cfg.ylog)) {	/* rows of their own ranges */
		fputs(", edges: [", f);
		for (uint32_t r = 0; r <= g->rows; r++) {
			double v = row_edge(g, r);
			if (isinf(v))
				fprintf(f, "%snull", r ? "," : "");
			else
				fprintf(f, "%s%.9g", r ? "," : "", v);
		}
		fputs("]", f);
	}
	fputs(",\nnames: [", f);
	for (size_t i = 0; i < intern_count(g->labels); i++) {
		size_t len;
		const char *s = intern_str(g->labels, (uint32_t)i, &len);
		if (i)
			fputs(i % 8 ? "," : ",\n", f);
		xml_js_string_write(f, s, len);
	}
	fputs("]};\n]]></script>\n", f);
}

void heatgrid_draw_svg(const struct heatgrid *g, FILE *f, const struct heatgrid_draw *d)
{
	struct heatgrid_layout L = { 0 };

	count_buckets(g, d, &L);
	layout_map(g, d, &L);
	svg_begin(f, L.width, L.height, d->title);
	draw_legend(f, g, d, &L);
	draw_axes(f, g, d, &L);
	draw_cells(f, g, d, &L);
	svg_text(f, L.x0, L.dety - 8, "start", "sub", "Click a bucket for its distribution details; click a name there to show only its buckets.");
	write_script_data(f, g, d, &L);
	svg_tooltip(f);
	fputs("<script type=\"text/ecmascript\"><![CDATA[\n", f);
	fputs(timefmt_js, f);
	fputs(heatgrid_js, f);
	fputs("]]></script>\n", f);
	svg_end(f);
	free(L.ranks);
}
