/* marple-stackplot — a stacked-area plot (SVG) of point data over time, such
 * as memory by process from marple-memtime.
 *
 * Reads the first point section of a marple stream (files or stdin).  Points
 * with the same x are one sample; within a sample the y of points with the
 * same info label are added (two "bash" processes make one band).  The top N
 * labels by average (--top, default 10) get a band each, the rest are added
 * into "other"; the biggest band is at the bottom and the legend lists the
 * bands in the order they are stacked.  Hovering shows each band's value at
 * that time.
 *
 *   $ marple-memtime -i 500ms 60 | marple-stackplot --top 5 > mem.svg
 *   input:  0.5,312.5,firefox-esr,pid=2211,comm=firefox-esr,kind=pss
 *
 * Memory is O(bins x labels): past --bins samples, neighbouring samples are
 * averaged in pairs (each bin then covers 2, 4, ... samples).
 *
 * Exit status: 0 drawn, 1 no usable points, wrong datatype or I/O error,
 * 2 usage error.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "intern.h"
#include "options.h"
#include "stream.h"
#include "svg.h"
#include "util.h"
#include "xml.h"
#include "timefmt.h"
#include "timefmt.js.h"	/* lib/render/timefmt.js, the times of the tooltips */
#include "stackplot.js.h"	/* renderers/stackplot.js, made a C string by the Makefile */

static struct {
	uint64_t top;
	uint64_t maxbins;
	const char *by;
	const char *title;
	const char *outpath;
} opt = {
	.top = 10,
	.maxbins = 500,
};

enum { O_BINS = 256, O_BY, O_TITLE };
static const struct options_entry options[] = {
	{ 'T', "top", "N", "bands for the N largest labels (default 10)" },
	{ 'n', "", "N", NULL },		/* the old spelling: -n is a name elsewhere */
	{ O_BINS, "bins", "N", "at most N time bins (default 500); samples are averaged" },
	{ O_BY, "by", "KEY", "one band per value of field KEY (e.g. pid) instead of info" },
	{ O_TITLE, "title", "TEXT", "title (default: the section's \"INTERFACE on HOST\")" },
	OPTIONS_OUTPUT,
	OPTIONS_DESCRIBE("kind=renderer\tdisplay=stackplot,sp\treads=point\text=svg\tconfig=top:--top"),
	OPTIONS_HELP,
	{ 0 }
};

static const struct options_help help = {
	.synopsis = "[--top N] [--bins N] [--by KEY] [--title TEXT] [-o FILE] [FILE...]",
	.about = "Draw a stacked-area plot (SVG) of marple point data over time: one band per\n"
	         "info label (process), the top N and the rest as \"other\".\n",
	.after = "Hover for each band's value at that time.  See marple-stackplot(1).\n",
};

/* Samples are collected into bins of `per` consecutive samples each. */
struct plot {
	struct intern *labels;
	double **vals;		/* vals[label][bin]: sum of y in the bin */
	size_t nvals, capvals;
	double *xsum;		/* sum of the bin's sample x */
	uint32_t *nsamp;	/* samples in the bin */
	size_t nbins, capbins, capvals_bins;
	uint64_t per;
	int have_last;
	double last_x;
	uint64_t points;
};

static void plot_grow_bins(struct plot *p, size_t need)
{
	if (need <= p->capbins)
		return;
	size_t cap = p->capbins ? p->capbins * 2 : 64;
	while (cap < need)
		cap *= 2;
	p->xsum = realloc(p->xsum, cap * sizeof(double));
	p->nsamp = realloc(p->nsamp, cap * sizeof(uint32_t));
	if (!p->xsum || !p->nsamp)
		marple_fatal(EXIT_DATA, "out of memory");
	for (size_t l = 0; l < p->nvals; l++) {
		p->vals[l] = realloc(p->vals[l], cap * sizeof(double));
		if (!p->vals[l])
			marple_fatal(EXIT_DATA, "out of memory");
		memset(p->vals[l] + p->capbins, 0, (cap - p->capbins) * sizeof(double));
	}
	memset(p->xsum + p->capbins, 0, (cap - p->capbins) * sizeof(double));
	memset(p->nsamp + p->capbins, 0, (cap - p->capbins) * sizeof(uint32_t));
	p->capbins = cap;
}

/* Halve the bins: bin i becomes (2i, 2i+1). */
static void plot_merge(struct plot *p)
{
	size_t n = (p->nbins + 1) / 2;
	for (size_t i = 0; i < n; i++) {
		size_t a = 2 * i, b = 2 * i + 1;
		p->xsum[i] = p->xsum[a] + (b < p->nbins ? p->xsum[b] : 0);
		p->nsamp[i] = p->nsamp[a] + (b < p->nbins ? p->nsamp[b] : 0);
		for (size_t l = 0; l < p->nvals; l++)
			p->vals[l][i] = p->vals[l][a] + (b < p->nbins ? p->vals[l][b] : 0);
	}
	for (size_t i = n; i < p->nbins; i++) {
		p->xsum[i] = 0;
		p->nsamp[i] = 0;
		for (size_t l = 0; l < p->nvals; l++)
			p->vals[l][i] = 0;
	}
	p->nbins = n;
	p->per *= 2;
}

static void plot_add(struct plot *p, double x, double y, struct mstr info)
{
	if (!p->have_last || x != p->last_x) {	/* a new sample */
		if (!p->nbins || p->nsamp[p->nbins - 1] >= p->per) {
			if (p->nbins >= opt.maxbins)
				plot_merge(p);
			if (!p->nbins || p->nsamp[p->nbins - 1] >= p->per) {
				plot_grow_bins(p, p->nbins + 1);
				p->nbins++;
			}
		}
		p->xsum[p->nbins - 1] += x;
		p->nsamp[p->nbins - 1]++;
		p->have_last = 1;
		p->last_x = x;
	}
	uint32_t id = intern_get(p->labels, info.s, info.len);
	if (id >= p->nvals) {
		p->vals = marple_grow(p->vals, &p->capvals, id + 1, sizeof(double *));
		for (size_t l = p->nvals; l <= id; l++)
			p->vals[l] = marple_calloc(p->capbins ? p->capbins : 1, sizeof(double));
		p->nvals = id + 1;
	}
	p->vals[id][p->nbins - 1] += y;
	p->points++;
}

struct band {
	uint32_t id;		/* UINT32_MAX: "other" */
	double total;
	double *v;		/* value per bin */
};

static int cmp_band(const void *a, const void *b)
{
	const struct band *x = a, *y = b;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* A "nice" axis maximum and step: 1, 2 or 5 times a power of ten. */
static double nice_step(double max, int ticks)
{
	double raw = max / ticks;
	if (!(raw > 0))
		return 1;
	double p = pow(10, floor(log10(raw)));
	return raw <= p ? p : raw <= 2 * p ? 2 * p : raw <= 5 * p ? 5 * p : 10 * p;
}

/* The picture: the bands drawn (the top N by total, then "other") and where. */
struct picture {
	struct band *all, *bands;
	size_t nl, nb, nshow, nbands;
	double x0, y0, pw, ph, legx, width, height;
	double xmin, xmax, xspan, ystep, ytop;
	double *px;			/* x of each bin */
	const char *unit, *ylabel;
	const char *axis_unit;		/* the y labels' unit: unit, or KiB ... for bytes */
	double axis_div;		/* y value / axis_div = a y label's number */
};

/* Per-bin averages over the samples in the bin, ranked by total; the top
 * opt.top labels are bands, the rest one "other" band. */
static void make_bands(struct plot *p, struct picture *P)
{
	size_t nl = P->nl = intern_count(p->labels), nb = P->nb = p->nbins;
	struct band *all = P->all = marple_calloc(nl ? nl : 1, sizeof(*all));

	for (size_t l = 0; l < nl; l++) {
		all[l].id = (uint32_t)l;
		all[l].v = p->vals[l];
		for (size_t b = 0; b < nb; b++) {
			all[l].v[b] /= p->nsamp[b];
			all[l].total += all[l].v[b];
		}
	}
	qsort(all, nl, sizeof(*all), cmp_band);
	P->nshow = nl > opt.top ? (size_t)opt.top : nl;
	P->bands = marple_calloc(P->nshow + 1, sizeof(*P->bands));
	memcpy(P->bands, all, P->nshow * sizeof(*P->bands));
	P->nbands = P->nshow;
	if (nl > P->nshow) {
		struct band *other = &P->bands[P->nbands++];
		*other = (struct band){ UINT32_MAX, 0, marple_calloc(nb, sizeof(double)) };
		for (size_t l = P->nshow; l < nl; l++)
			for (size_t b = 0; b < nb; b++)
				other->v[b] += all[l].v[b];
	}
}

/* Bytes on the y axis in KiB, MiB or GiB, as memtime writes MiB: memleak's
 * memusage labels were "3000000000 bytes", clipped and over the axis title. */
static void axis_scale(struct picture *P, double ymax)
{
	static const char *const binary[] = { "bytes", "KiB", "MiB", "GiB", "TiB", "PiB" };
	size_t k = 0;

	P->axis_unit = P->unit;
	P->axis_div = 1;
	if (strcmp(P->unit, "bytes") != 0)
		return;
	while (k + 1 < sizeof(binary) / sizeof(binary[0]) && ymax / P->axis_div >= 1024)
		P->axis_div *= 1024, k++;
	P->axis_unit = binary[k];
}

static void layout_plot(struct plot *p, json_t *hdr, struct picture *P)
{
	size_t nb = P->nb;
	P->x0 = 80, P->y0 = 60, P->pw = 1000, P->ph = 420;
	P->legx = P->x0 + P->pw + 20, P->width = P->legx + 220, P->height = P->y0 + P->ph + 60;
	if (P->height < P->y0 + 20 + 16.0 * (double)P->nbands + 20)
		P->height = P->y0 + 20 + 16.0 * (double)P->nbands + 20;
	P->xmin = p->xsum[0] / p->nsamp[0], P->xmax = p->xsum[nb - 1] / p->nsamp[nb - 1];
	double ymax = 0;
	for (size_t b = 0; b < nb; b++) {
		double s = 0;
		for (size_t k = 0; k < P->nbands; k++)
			s += P->bands[k].v[b];
		if (s > ymax)
			ymax = s;
	}
	json_t *units = json_object_get(hdr, "units"), *labels = json_object_get(hdr, "labels");
	P->unit = json_string_value(json_object_get(units, "y"));
	P->ylabel = json_string_value(json_object_get(labels, "y"));
	if (!P->unit)
		P->unit = "";
	axis_scale(P, ymax);
	P->ystep = nice_step(ymax / P->axis_div, 5) * P->axis_div;
	P->ytop = ceil(ymax / P->ystep) * P->ystep;
	if (!(P->ytop > 0))
		P->ytop = 1;
	P->xspan = P->xmax > P->xmin ? P->xmax - P->xmin : 1;
	P->px = marple_malloc(nb * sizeof(double));
	for (size_t b = 0; b < nb; b++)
		P->px[b] = P->x0 + (nb == 1 ? P->pw / 2 : (p->xsum[b] / p->nsamp[b] - P->xmin) / P->xspan * P->pw);

}

/* The subtitle, the axes and the grid. */
static void draw_axes(FILE *f, struct plot *p, json_t *hdr, const struct picture *P)
{
	char buf[256], a[48];
	double x0 = P->x0, y0 = P->y0, pw = P->pw, ph = P->ph;
	const char *unit = P->axis_unit, *host = stream_header_str(hdr, "host", NULL);
	int n = snprintf(buf, sizeof(buf), "%s%s%s; %llu points, %zu labels, samples per bin: %zu",
			 stream_header_str(hdr, "interface", "?"), host ? " on " : "", host ? host : "",
			 (unsigned long long)p->points, P->nl, (size_t)p->per);
	svg_text_n(f, P->width / 2, 42, "middle", "sub", buf, n < 0 ? 0 : (size_t)n >= sizeof(buf) ? sizeof(buf) - 1 : (size_t)n);
	/* y axis and grid */
	for (double v = 0; v <= P->ytop * 1.0000001; v += P->ystep) {
		double y = y0 + ph - v / P->ytop * ph;
		fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", x0, y, x0 + pw, y);
		svg_num(a, sizeof(a), v / P->axis_div, 6);
		snprintf(buf, sizeof(buf), "%s%s%s", a, *unit ? " " : "", unit);
		svg_text(f, x0 - 4, y + 4, "end", "axis", buf);
	}
	/* x axis: about 8 labels */
	double xstep = nice_step(P->xspan, 8);
	for (double v = ceil(P->xmin / xstep) * xstep; v <= P->xmax + xstep * 1e-9; v += xstep) {
		double x = x0 + (v - P->xmin) / P->xspan * pw;
		if (P->nb == 1)
			x = x0 + pw / 2;
		timefmt_ns(buf, sizeof(buf), fabs(v) < xstep * 1e-6 ? 0 : v * 1e9, 6);	/* as the tooltip writes times */
		svg_text(f, x, y0 + ph + 14, "middle", "axis", buf);
		if (P->nb == 1)
			break;
	}
	svg_text(f, x0 + pw / 2, y0 + ph + 32, "middle", "axis", "time (s)");
	snprintf(buf, sizeof(buf), "%s%s%s%s", P->ylabel ? P->ylabel : "value", *unit ? " (" : "", unit, *unit ? ")" : "");
	fprintf(f, "<text x=\"16\" y=\"%.1f\" text-anchor=\"middle\" class=\"axis\" transform=\"rotate(-90 16 %.1f)\">",
		y0 + ph / 2, y0 + ph / 2);
	xml_escape_cstr(f, buf);
	fputs("</text>\n", f);
}

/* The bands, bottom (biggest) first, then the hover cursor and area. */
static void draw_bands(FILE *f, const struct picture *P)
{
	size_t nb = P->nb;
	double y0 = P->y0, ph = P->ph, ytop = P->ytop;
	double *base = marple_calloc(nb, sizeof(double));
	char col[8];

	fputs("<g id=\"sp-bands\">\n", f);
	for (size_t k = 0; k < P->nbands; k++) {
		const struct band *bd = &P->bands[k];
		if (bd->id == UINT32_MAX)
			strcpy(col, "#bbbbbb");
		else
			svg_palette_color(k, col);
		fprintf(f, "<path fill=\"%s\" stroke=\"#fff\" stroke-width=\"0.3\" data-band=\"%zu\" d=\"", col, k);
		for (size_t b = 0; b < nb; b++) {
			double y = y0 + ph - (base[b] + bd->v[b]) / ytop * ph;
			fprintf(f, "%s%.1f,%.1f", b ? " L" : "M", P->px[b], y);
			if (nb == 1)
				fprintf(f, " L%.1f,%.1f", P->px[b] + 2, y);
		}
		for (size_t b = nb; b-- > 0;) {
			double y = y0 + ph - base[b] / ytop * ph;
			if (nb == 1)
				fprintf(f, " L%.1f,%.1f", P->px[b] + 2, y);
			fprintf(f, " L%.1f,%.1f", P->px[b], y);
		}
		fputs(" Z\"/>\n", f);
		for (size_t b = 0; b < nb; b++)
			base[b] += bd->v[b];
	}
	fputs("</g>\n", f);
	free(base);
	fprintf(f, "<line id=\"sp-cursor\" x1=\"0\" y1=\"%.1f\" x2=\"0\" y2=\"%.1f\" stroke=\"#000\" stroke-width=\"0.7\" visibility=\"hidden\" pointer-events=\"none\"/>\n",
		y0, y0 + ph);
	fprintf(f, "<rect id=\"sp-hover\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#fff\" fill-opacity=\"0\"/>\n",
		P->x0, y0, P->pw, ph);
}

/* The legend: same order as the stack, top band first. */
static void draw_legend(FILE *f, struct plot *p, const struct picture *P)
{
	char col[8];

	fputs("<g id=\"sp-legend\">\n", f);
	for (size_t k = P->nbands, i = 0; k-- > 0; i++) {
		size_t len = 5;
		const char *name = "other";
		if (P->bands[k].id == UINT32_MAX)
			strcpy(col, "#bbbbbb");
		else {
			svg_palette_color(k, col);
			name = intern_str(p->labels, P->bands[k].id, &len);
		}
		double y = P->y0 + 10 + 16.0 * (double)i;
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/>\n", P->legx, y - 9, col);
		if (len > 40) {	/* long names: cut at a character boundary; the tooltip has them whole */
			len = 38;
			while (len && ((unsigned char)name[len] & 0xc0) == 0x80)
				len--;
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"start\" class=\"axis\">", P->legx + 14, y);
			xml_escape_write(f, name, len);
			fputs("\xe2\x80\xa6</text>\n", f);
			continue;
		}
		svg_text_n(f, P->legx + 14, y, "start", "axis", name, len);
	}
	fputs("</g>\n", f);
}

/* Data for the hover (stackplot.js). */
static void write_script_data(FILE *f, struct plot *p, const struct picture *P)
{
	size_t nb = P->nb;

	fputs("<script type=\"text/ecmascript\"><![CDATA[\nvar SP = {unit: ", f);
	xml_js_string_cstr(f, P->unit);
	fputs(",\nxs: [", f);
	for (size_t b = 0; b < nb; b++)
		fprintf(f, "%s%.9g", b ? "," : "", p->xsum[b] / p->nsamp[b]);
	fputs("],\npx: [", f);
	for (size_t b = 0; b < nb; b++)
		fprintf(f, "%s%.1f", b ? "," : "", P->px[b]);
	fputs("],\nbands: [\n", f);
	for (size_t k = 0; k < P->nbands; k++) {
		size_t len = 5;
		const char *name = P->bands[k].id == UINT32_MAX ? "other" : intern_str(p->labels, P->bands[k].id, &len);
		fputs(k ? ",\n{name: " : "{name: ", f);
		xml_js_string_write(f, name, len);
		fputs(", v: [", f);
		for (size_t b = 0; b < nb; b++)
			fprintf(f, "%s%.6g", b ? "," : "", P->bands[k].v[b]);
		fputs("]}", f);
	}
	fputs("]};\n]]></script>\n", f);
}

static void render(FILE *f, struct plot *p, json_t *hdr)
{
	struct picture P = { 0 };

	make_bands(p, &P);
	layout_plot(p, hdr, &P);
	/* titled as marple display titles it: what the section is, from where */
	char title[512];
	const char *host = stream_header_str(hdr, "host", NULL);
	snprintf(title, sizeof(title), "%s%s%s", stream_header_str(hdr, "interface", "Stack Plot"), host ? " on " : "",
		 host ? host : "");
	svg_begin(f, P.width, P.height, opt.title ? opt.title : title);
	draw_axes(f, p, hdr, &P);
	draw_bands(f, &P);
	draw_legend(f, p, &P);
	write_script_data(f, p, &P);
	svg_tooltip(f);
	fputs("<script type=\"text/ecmascript\"><![CDATA[\n", f);
	fputs(timefmt_js, f);
	fputs(stackplot_js, f);
	fputs("]]></script>\n", f);
	svg_end(f);

	if (P.nl > P.nshow)
		free(P.bands[P.nshow].v);
	free(P.bands);
	free(P.all);
	free(P.px);
}

int main(int argc, char **argv)
{
	struct plot p = { .per = 1 };
	json_t *hdr = NULL;
	uint64_t bad = 0;
	int c;

	marple_init(argc, argv);
	while ((c = options_getopt(options, argc, argv)) != -1) {
		switch (c) {
		case 'n':
		case 'T': opt.top = marple_opt_u64("--top", optarg, 1, 1000); break;
		case O_BINS: opt.maxbins = marple_opt_u64("--bins", optarg, 2, 100000); break;
		case O_TITLE: opt.title = optarg; break;
		case O_BY: opt.by = optarg; break;
		case 'o': opt.outpath = optarg; break;
		case 'h': options_help(stdout, options, &help); marple_close_stdout(); return EXIT_OK;
		default: marple_usage_try();
		}
	}
	p.labels = intern_new();
	char *stdin_only[] = { "-" };
	char **files = optind < argc ? argv + optind : stdin_only;
	int nfiles = optind < argc ? argc - optind : 1;

	for (int i = 0; i < nfiles; i++) {
		FILE *in = marple_open_input(files[i]);
		struct stream_reader *r = stream_reader_new(in, marple_input_name(files[i]));
		enum stream_item it;
		int want = 0;
		while ((it = stream_reader_next(r)) != STREAM_EOF) {
			if (it == STREAM_ERROR) {
				if (bad++ < 10)
					stream_reader_warn(r);
				continue;
			}
			if (it == STREAM_HEADER) {
				enum datatype dt = stream_reader_datatype(r);
				if (dt != DATATYPE_POINT)
					marple_fatal(EXIT_DATA, "%s:%lu: section %ld (%s) holds %s records; marple-stackplot draws point sections",
					      stream_reader_name(r), stream_reader_line(r), stream_reader_section(r),
					      stream_header_str(stream_reader_header(r), "interface", "?"), stream_datatype_name(dt));
				want = !hdr;
				if (want)
					hdr = json_incref(stream_reader_header(r));
				else
					marple_warn_at(stream_reader_name(r), stream_reader_line(r),
						"section %ld (%s) not drawn: marple-stackplot draws the first section "
						"(select others with marple-cat -s)", stream_reader_section(r),
						stream_header_str(stream_reader_header(r), "interface", "?"));
				continue;
			}
			if (it == STREAM_RECORD && want) {
				const struct point_rec *pt = stream_reader_point(r);
				const struct mstr *v = opt.by ? stream_fields_get(pt->fields, pt->nfields, opt.by) : NULL;
				plot_add(&p, pt->x, pt->y, v ? *v : pt->info);
			}
		}
		const char *why = stream_reader_unusable(r);	/* marple-format(5): nothing drawn */
		if (why) {
			marple_warn_at(stream_reader_name(r), 0, "%s", why);
			exit(EXIT_DATA);
		}
		stream_reader_free(r);
		if (in != stdin)
			fclose(in);
	}
	if (bad)
		marple_warn("%llu bad line%s skipped", (unsigned long long)bad, bad == 1 ? "" : "s");
	if (!hdr)
		marple_fatal(EXIT_DATA, "%s: no marple point section in the input", marple_input_name(files[nfiles - 1]));
	if (!p.points)
		marple_fatal(EXIT_DATA, "%s: nothing to draw: the point section is empty", marple_input_name(files[nfiles - 1]));

	struct outfile *o = marple_outfile_open(opt.outpath);
	render(marple_outfile_stream(o), &p, hdr);
	int rc = marple_outfile_commit(o) < 0 ? EXIT_DATA : EXIT_OK;
	for (size_t l = 0; l < p.nvals; l++)
		free(p.vals[l]);
	free(p.vals);
	free(p.xsum);
	free(p.nsamp);
	intern_free(p.labels);
	json_decref(hdr);
	return rc;
}
