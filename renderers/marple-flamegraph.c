/* marple-flamegraph — interactive SVG flame graph from folded stacks or
 * marple stack sections.
 *
 * Reads folded text ("comm;root;...;leaf count", or "stack before after" for
 * a differential graph) or marple stack sections (files or stdin) and writes
 * one SVG: frames merged by stack prefix, widths proportional to the count,
 * hover for details, click to zoom, Ctrl-F to search with a regex.  The
 * options are flamegraph.pl's, with the same names and meaning.
 *
 *   $ marple-fold out.perf | marple-flamegraph --title "CPU" > cpu.svg
 *   <rect x="10.0" y="293" width="1180.0" height="15" fill="#e5a127"/><text x="13.0" y="304.2">bash</text>
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "framedesc.h"
#include "options.h"
#include "stacktree.h"
#include "stream.h"
#include "util.h"
#include "xml.h"
#include "flamegraph.js.h"	/* renderers/flamegraph.js, made a C string by the Makefile */

static struct {
	const char *title, *subtitle, *fonttype, *countname, *nametype, *colors, *bgcolors;
	const char *notes, *palfile, *out;
	double width, frameheight, fontsize, fontwidth, minwidth, total, factor;
	uint64_t maxdepth;
	int minwidth_pct, hash, random, cp, reverse, inverted, flamechart, negate, user_threads, nolineno;
} opt = {
	.fonttype = "Verdana", .nametype = "Function:", .palfile = "palette.map",
	.width = 1200, .frameheight = 16, .fontsize = 12, .fontwidth = 0.59, .minwidth = 0.1,
	.maxdepth = 5000,
};

enum {
	O_TITLE = 256, O_SUBTITLE, O_WIDTH, O_HEIGHT, O_MINWIDTH, O_FONTTYPE, O_FONTSIZE, O_FONTWIDTH,
	O_COUNTNAME, O_NAMETYPE, O_COLORS, O_BGCOLORS, O_HASH, O_RANDOM, O_CP, O_PALFILE, O_REVERSE,
	O_INVERTED, O_FLAMECHART, O_NEGATE, O_NOTES, O_TOTAL, O_FACTOR, O_MAXDEPTH, O_NOLINENO,
};

static const struct options_entry options[] = {
	{ O_TITLE, "title", "TEXT", "title (default \"Flame Graph\", \"Icicle Graph\" with --inverted,\n"
		"\"Off-CPU Time\" for marple-offcpu's streams)" },
	{ O_SUBTITLE, "subtitle", "TEXT", "second line under the title (default: a stream's\n"
		"interface and unit)" },
	{ O_WIDTH, "width", "PX", "width of the image (default 1200)" },
	{ O_HEIGHT, "height", "PX", "height of each frame (default 16)" },
	{ O_MINWIDTH, "minwidth", "N[%]", "omit frames narrower than N pixels, or N% of the total\n"
		"(default 0.1 px; said on stderr when 1% or more of the\n"
		"weight is left out)" },
	{ O_MAXDEPTH, "maxdepth", "N", "draw at most N frames of a stack (default 5000: 80,000 px)" },
	{ O_FONTTYPE, "fonttype", "FONT", "font family (default Verdana)" },
	{ O_FONTSIZE, "fontsize", "PT", "font size (default 12)" },
	{ O_FONTWIDTH, "fontwidth", "F", "average glyph width per font size (default 0.59)" },
	{ O_COUNTNAME, "countname", "NAME", "what counts count (default \"samples\", or the stream's unit)" },
	{ O_NAMETYPE, "nametype", "TEXT", "label before a frame's name (default \"Function:\")" },
	{ O_COLORS, "colors", "PALETTE", "hot (default; mem for bytes, io for offcpu), mem io wakeup\n"
		"chain java js perl red green blue aqua yellow purple orange" },
	{ O_BGCOLORS, "bgcolors", "COLOR", "background: yellow blue green grey or #rrggbb" },
	{ O_HASH, "hash", NULL, "colours from a hash of the name (same name, same colour)" },
	{ O_RANDOM, "random", NULL, "random colours (differ between runs)" },
	{ O_CP, "cp", NULL, "consistent palette: reuse and extend palette.map" },
	{ O_PALFILE, "palfile", "FILE", "the palette file for --cp (default palette.map)" },
	{ O_REVERSE, "reverse", NULL, "reverse each stack (leaf first), e.g. for callers of a leaf" },
	{ O_INVERTED, "inverted", NULL, "icicle graph: root at the top" },
	{ O_FLAMECHART, "flamechart", NULL, "keep input order (time on the x axis), merge only neighbours" },
	{ O_NEGATE, "negate", NULL, "swap the differential hues (red <-> blue)" },
	{ O_NOTES, "notes", "TEXT", "notes stored in the SVG (<desc>)" },
	{ O_TOTAL, "total", "N", "width of the whole graph in counts (>= the sum)" },
	{ O_FACTOR, "factor", "F", "multiply every count by F" },
	{ O_NOLINENO, "nolineno", NULL, "frames \"NAME (FILE:LINE)\" (Python's) as \"NAME (FILE)\":\n"
				    "a function's lines merge (marple display draws so)" },
	OPTIONS_USER_THREADS_ONLY,
	OPTIONS_OUTPUT,
	OPTIONS_DESCRIBE("kind=renderer\tdisplay=flamegraph,fg\treads=stack\text=svg\tdefault-for=stack\tconfig=coloring:--colors"),
	OPTIONS_HELP,
	{ 0 }
};

static const struct options_help help = {
	.synopsis = "[OPTION]... [FILE]...",
	.about = "Draw an interactive SVG flame graph from folded stacks (\"stack count\",\n"
	         "or \"stack count1 count2\" for a differential graph) or marple stack sections.\n",
	.after = "With no FILE, or FILE '-', read stdin; sections other than stacks are named\n"
	         "and skipped.  Exit: 0 ok, 1 bad input (no stack section, no usable stack,\n"
	         "unreadable: no SVG written), 2 usage error.\n"
	         "See marple-flamegraph(1).\n",
};

/* ---- colours ---- */

static uint64_t rng_state = 0x853c49e6748fea9bull;

static double rnd(void)
{
	uint64_t x = rng_state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return (double)((x * 0x2545f4914f6cdd1dull) >> 11) / 9007199254740992.0;
}

/* A value in [0,1] from a name: early characters weigh most, so similar names
 * get similar colours. */
static double name_hash(const char *s, size_t n, int backwards)
{
	double v = 0, w = 1, max = 1;
	int mod = 10;
	for (size_t i = 0; i < n && mod <= 12; i++) {
		unsigned char c = (unsigned char)s[backwards ? n - 1 - i : i];
		v += ((double)(c % mod) / (mod - 1)) * w;
		max += w;
		w *= 0.7;
		mod++;
	}
	return 1 - v / max;
}

static int ends_with(const char *s, size_t n, const char *suf)
{
	size_t k = strlen(suf);
	return n >= k && memcmp(s + n - k, suf, k) == 0;
}

static int has(const char *s, size_t n, const char *needle)
{
	return memmem(s, n, needle, strlen(needle)) != NULL;
}

/* The palette for one frame: the scheme itself, or one chosen by the name. */
static struct framedesc *frames;	/* what the stack trailers say each frame is */

static const char *palette_of(const char *s, size_t n)
{
	const char *c = opt.colors;
	/* Script functions (Python, PHP) apart from the interpreter's C, as --colors java
	 * tells Java from C++ */
	if (strcmp(c, "hot") == 0 && framedesc_is_script(framedesc_get(frames, s, n)))
		return "green";
	if (strcmp(c, "java") == 0) {
		if (ends_with(s, n, "_[j]")) return "green";
		if (ends_with(s, n, "_[i]")) return "aqua";
		if (ends_with(s, n, "_[k]")) return "orange";
		if (has(s, n, "::") || (n && s[0] == '-')) return "yellow";
		if (memchr(s, '/', n) || (memchr(s, '.', n) && !memchr(s, '(', n))) return "green";
		return "red";
	}
	if (strcmp(c, "js") == 0) {
		if (ends_with(s, n, "_[j]")) return "green";
		if (ends_with(s, n, "_[i]")) return "aqua";
		if (ends_with(s, n, "_[k]")) return "orange";
		if (memchr(s, '/', n) || has(s, n, ".js")) return "green";
		if (has(s, n, "::")) return "yellow";
		if (memchr(s, ':', n)) return "aqua";
		return "red";
	}
	if (strcmp(c, "perl") == 0) {
		if (has(s, n, "::")) return "yellow";
		if (has(s, n, "Perl") || has(s, n, ".pl")) return "green";
		if (memchr(s, ':', n)) return "aqua";
		return "red";
	}
	if (strcmp(c, "wakeup") == 0)
		return "aqua";
	if (strcmp(c, "chain") == 0)
		return ends_with(s, n, "_[w]") ? "aqua" : "blue";
	return c;
}

static void color_of(const char *s, size_t n, int rgb[3])
{
	double v1, v2, v3;
	if (opt.hash) {
		v1 = name_hash(s, n, 0);
		v2 = v3 = name_hash(s, n, 1);
	} else {
		v1 = rnd();
		v2 = rnd();
		v3 = rnd();
	}
	const char *p = palette_of(s, n);
	int r = 0, g = 0, b = 0;
	if (strcmp(p, "hot") == 0) {
		r = 205 + (int)(50 * v3); g = (int)(230 * v1); b = (int)(55 * v2);
	} else if (strcmp(p, "mem") == 0) {
		r = 0; g = 190 + (int)(50 * v2); b = (int)(210 * v1);
	} else if (strcmp(p, "io") == 0) {
		r = 80 + (int)(60 * v1); g = r; b = 190 + (int)(55 * v2);
	} else if (strcmp(p, "red") == 0) {
		r = 200 + (int)(55 * v1); g = 50 + (int)(80 * v1); b = g;
	} else if (strcmp(p, "green") == 0) {
		g = 200 + (int)(55 * v1); r = 50 + (int)(60 * v1); b = r;
	} else if (strcmp(p, "blue") == 0) {
		b = 205 + (int)(50 * v1); r = 80 + (int)(60 * v1); g = r;
	} else if (strcmp(p, "yellow") == 0) {
		r = 175 + (int)(55 * v1); g = r; b = 50 + (int)(20 * v1);
	} else if (strcmp(p, "purple") == 0) {
		r = 190 + (int)(65 * v1); g = 80 + (int)(60 * v1); b = r;
	} else if (strcmp(p, "aqua") == 0) {
		r = 50 + (int)(60 * v1); g = 165 + (int)(55 * v1); b = g;
	} else if (strcmp(p, "orange") == 0) {
		r = 190 + (int)(65 * v1); g = 90 + (int)(65 * v1); b = 0;
	}
	rgb[0] = r;
	rgb[1] = g;
	rgb[2] = b;
}

static const char *const palettes[] = { "hot", "mem", "io", "wakeup", "chain", "java", "js", "perl",
					"red", "green", "blue", "aqua", "yellow", "purple", "orange", NULL };

/* ---- consistent palette (--cp): "name->rgb(r,g,b)" lines ---- */

struct palent {
	char *name;
	size_t len;
	int rgb[3];
};
static struct palent *pal;
static size_t npal, palcap;

static void pal_load(void)
{
	FILE *f = fopen(opt.palfile, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	unsigned long ln = 0;
	if (!f)
		return;
	while ((n = getline(&line, &cap, f)) > 0) {
		ln++;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = 0;
		char *arrow = NULL;
		for (char *q = line; (q = strstr(q, "->rgb(")); q++)
			arrow = q;
		int r, g, b;
		if (!arrow || sscanf(arrow, "->rgb(%d,%d,%d)", &r, &g, &b) != 3) {
			marple_warn_at(opt.palfile, ln, "not a palette line (name->rgb(r,g,b))");
			continue;
		}
		pal = marple_grow(pal, &palcap, npal + 1, sizeof(*pal));
		pal[npal++] = (struct palent){ marple_strndup(line, (size_t)(arrow - line)), (size_t)(arrow - line),
					       { r & 255, g & 255, b & 255 } };
	}
	free(line);
	fclose(f);
}

static int pal_find(const char *s, size_t n, int rgb[3])
{
	for (size_t i = 0; i < npal; i++)
		if (pal[i].len == n && memcmp(pal[i].name, s, n) == 0) {
			memcpy(rgb, pal[i].rgb, sizeof(pal[i].rgb));
			return 1;
		}
	return 0;
}

static int cmp_pal(const void *a, const void *b)
{
	return strcmp(((const struct palent *)a)->name, ((const struct palent *)b)->name);
}

static void pal_save(void)
{
	qsort(pal, npal, sizeof(*pal), cmp_pal);
	struct outfile *o = marple_outfile_open(opt.palfile);
	FILE *f = marple_outfile_stream(o);
	for (size_t i = 0; i < npal; i++) {
		/* names with newlines cannot be stored in this line format */
		if (memchr(pal[i].name, '\n', pal[i].len))
			continue;
		fprintf(f, "%s->rgb(%d,%d,%d)\n", pal[i].name, pal[i].rgb[0], pal[i].rgb[1], pal[i].rgb[2]);
	}
	marple_outfile_commit(o);
}

/* ---- drawing ---- */

struct frame {
	uint32_t node;
	uint32_t depth;		/* root 0 */
	double start;		/* in counts from the left */
};

/* The count that sets the width: the second of a differential input. */
static double width_of(const struct stree *t, uint32_t id, int diff)
{
	return diff ? stacktree_weight2(t, id) : stacktree_node(t, id)->v;
}

/* printf's "%.0f" / "%.1f" without printf, for the coordinates of every frame:
 * the value times 10^dec, rounded to nearest with ties to even, decided on the
 * exact product (fma gives the rounding error of v * 10), as glibc rounds.
 * Negative (-0 too), huge and non-finite values go to printf.  buf holds >= 32
 * bytes; returns the length. */
static size_t fmt_fixed(char *buf, double v, int dec)
{
	if (!(v >= 0 && v < 1e14) || signbit(v))
		return (size_t)snprintf(buf, 32, "%.*f", dec, v);
	double p = dec ? v * 10 : v;
	double err = dec ? fma(v, 10, -p) : 0;
	double q = floor(p), f = p - q;
	if (f > 0.5 || (f == 0.5 && (err > 0 || (err == 0 && fmod(q, 2) != 0))))
		q += 1;
	uint64_t r = (uint64_t)q;
	char tmp[24];
	size_t n = 0, k = 0;
	if (dec) {
		tmp[n++] = (char)('0' + r % 10);
		tmp[n++] = '.';
		r /= 10;
	}
	do
		tmp[n++] = (char)('0' + r % 10);
	while ((r /= 10) > 0);
	while (n > 0)
		buf[k++] = tmp[--n];
	buf[k] = 0;
	return k;
}

static void put_fixed(FILE *f, double v, int dec)
{
	char buf[32];
	fwrite(buf, 1, fmt_fixed(buf, v, dec), f);
}

/* fmt_fixed at o (room for 32 bytes); returns the end. */
static char *cat_fixed(char *o, double v, int dec)
{
	size_t n = fmt_fixed(o, v, dec);
	return o + (n < 32 ? n : 31);
}

static void put_uint(FILE *f, uint64_t v)
{
	char buf[24];
	size_t n = sizeof(buf);
	do
		buf[--n] = (char)('0' + v % 10);
	while ((v /= 10) > 0);
	fwrite(buf + n, 1, sizeof(buf) - n, f);
}

static void put_num(FILE *f, double v)
{
	if (v == floor(v) && fabs(v) < 9e15)
		put_fixed(f, v, 0);
	else
		stream_write_double(f, v);
}

/* Label that fits w pixels: the name, or its start and "..", or nothing. */
static size_t fit(const char *s, size_t n, double w, int *dots)
{
	double cw = opt.fontsize * opt.fontwidth;
	size_t chars = (size_t)(w / cw);
	*dots = 0;
	if (chars < 3)
		return 0;
	if (n <= chars)
		return n;
	*dots = 1;
	size_t k = chars - 2;
	/* do not cut a UTF-8 sequence */
	while (k > 0 && ((unsigned char)s[k] & 0xc0) == 0x80)
		k--;
	return k;
}

/* Name as shown: without a trailing _[k] _[j] _[i] _[w] annotation. */
static size_t shown_len(const char *s, size_t n)
{
	if (n >= 4 && s[n - 4] == '_' && s[n - 3] == '[' && s[n - 1] == ']' && strchr("kjiw", s[n - 2]))
		return n - 4;
	return n;
}

/* Where everything goes: sizes from the options, and the frames drawn. */
struct layout {
	struct stree *t;
	int diff;
	int both;		/* offcpu --both: off-CPU frames blue, on-CPU warm */
	double timemax, xpad, fh, fs, ypad1, ypad2, ypad3, W, H, widthper;
	struct frame *fr;		/* pre-order, the root first */
	size_t nfr;
	uint32_t *out_id, *order;	/* name id -> script name index, and back */
	uint32_t nout;
	double maxdelta;		/* differential: the largest |after - before| */
	uint64_t narrow, deep;		/* frames left out: narrower than minwidth, above maxdepth */
	double narrow_w, deep_w;	/* the weight they stood for */
};

/* The frames in pre-order, omitting those narrower than minwidth, and the
 * picture's size. */
static void layout_frames(struct layout *L)
{
	struct stree *t = L->t;
	double sum = width_of(t, 0, L->diff);
	L->timemax = opt.total > sum ? opt.total : sum;
	L->xpad = 10, L->fh = opt.frameheight, L->fs = opt.fontsize;
	L->ypad1 = L->fs * 3, L->ypad2 = L->fs * 2 + 10, L->ypad3 = opt.subtitle ? L->fs * 2 : 0;
	L->W = opt.width, L->widthper = (L->W - 2 * L->xpad) / L->timemax;
	double minw = opt.minwidth_pct ? L->timemax * opt.minwidth / 100 : opt.minwidth / L->widthper;

	struct frame *stack = NULL;
	size_t frcap = 0, sp = 0, stcap = 0;
	uint32_t maxd = 0;
	stack = marple_grow(stack, &stcap, 1, sizeof(*stack));
	stack[sp++] = (struct frame){ 0, 0, 0 };
	/* a frame left out takes what is above it along (counted once, as its
	 * own weight): a deep tower is never made into nodes (lazy tails) */
	while (sp) {
		struct frame cur = stack[--sp];
		double w = width_of(t, cur.node, L->diff);
		if (w < minw && cur.node != 0) {
			L->narrow++;
			L->narrow_w += w;
			continue;
		}
		if (cur.depth > opt.maxdepth) {
			L->deep++;
			L->deep_w += w;
			continue;
		}
		L->fr = marple_grow(L->fr, &frcap, L->nfr + 1, sizeof(*L->fr));
		L->fr[L->nfr++] = cur;
		if (cur.depth > maxd)
			maxd = cur.depth;
		size_t k;
		const uint32_t *kids = stacktree_children(t, cur.node, !opt.flamechart, &k);
		double x = cur.start;
		/* children pushed in reverse so that the first is drawn first */
		stack = marple_grow(stack, &stcap, sp + k, sizeof(*stack));
		for (size_t i = 0; i < k; i++) {
			stack[sp + k - 1 - i] = (struct frame){ kids[i], cur.depth + 1, x };
			x += width_of(t, kids[i], L->diff);
		}
		sp += k;
	}
	free(stack);
	if (L->deep) {	/* said in the picture too: its top is not the stacks' */
		static char sub[400];
		snprintf(sub, sizeof(sub), "%s%s%llu stack%s cut at %llu frames (--maxdepth)", opt.subtitle ? opt.subtitle : "",
			 opt.subtitle ? "; " : "", (unsigned long long)L->deep, L->deep == 1 ? "" : "s",
			 (unsigned long long)opt.maxdepth);
		opt.subtitle = sub;
		L->ypad3 = L->fs * 2;
	}
	L->H = (maxd + 1) * L->fh + L->ypad1 + L->ypad2 + L->ypad3;
}

/* The background: a gradient between *g1 and *g2, or (*g1 NULL) the colour returned. */
static const char *background(const char **g1, const char **g2)
{
	const char *bg = opt.bgcolors;
	if (!bg)
		bg = strcmp(opt.colors, "mem") == 0 ? "green"
		     : (!strcmp(opt.colors, "io") || !strcmp(opt.colors, "wakeup") || !strcmp(opt.colors, "chain")) ? "blue"
		     : "yellow";
	*g1 = *g2 = NULL;
	if (!strcmp(bg, "yellow")) *g1 = "#eeeeee", *g2 = "#eeeeb0";
	else if (!strcmp(bg, "blue")) *g1 = "#eeeeee", *g2 = "#e0e0ff";
	else if (!strcmp(bg, "green")) *g1 = "#eef2ee", *g2 = "#e0ffe0";
	else if (!strcmp(bg, "grey")) *g1 = "#f8f8f8", *g2 = "#e8e8e8";
	return bg;
}

/* Everything before the frames: the SVG element, style, background, titles
 * and the texts the script fills in. */
static void write_preamble(FILE *f, const struct layout *L)
{
	double W = L->W, H = L->H, fs = L->fs, xpad = L->xpad;
	const char *title = opt.title ? opt.title
				      : opt.flamechart ? "Flame Chart" : opt.inverted ? "Icicle Graph" : "Flame Graph";
	const char *g1, *g2, *bg = background(&g1, &g2);

	fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		   "<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		   "xmlns=\"http://www.w3.org/2000/svg\" font-size=\"%g\" font-family=\"",
		W, H, W, H, fs);
	xml_escape_cstr(f, opt.fonttype);
	if (!strchr(opt.fonttype, ','))
		fputs(",sans-serif", f);
	fputs("\">\n", f);
	if (opt.notes) {
		fputs("<desc>", f);
		xml_escape_cstr(f, opt.notes);
		fputs("</desc>\n", f);
	}
	fputs("<style>\n"
	      "#frames rect{rx:2px;ry:2px;cursor:pointer}\n"
	      "#frames rect:hover{stroke:#000;stroke-width:.5}\n"
	      "#frames text{pointer-events:none}\n"
	      ".h{display:none}\n"
	      ".p{opacity:.5}\n"
	      "#title{text-anchor:middle;font-size:1.4em}\n"
	      "#subtitle{text-anchor:middle;fill:#a0a0a0}\n"
	      "#unzoom,#search,#ic{cursor:pointer}\n"
	      "#search,#matched{text-anchor:end}\n"
	      "#ic.on{fill:#000}#ic{fill:#aaa}\n"
	      "</style>\n", f);
	if (g1)
		fprintf(f, "<defs><linearGradient id=\"bg\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\"><stop stop-color=\"%s\" offset=\"5%%\"/>"
			   "<stop stop-color=\"%s\" offset=\"95%%\"/></linearGradient></defs>\n"
			   "<rect width=\"100%%\" height=\"100%%\" fill=\"url(#bg)\"/>\n", g1, g2);
	else {
		fputs("<rect width=\"100%\" height=\"100%\" fill=\"", f);
		xml_escape_cstr(f, bg);
		fputs("\"/>\n", f);
	}
	fprintf(f, "<text id=\"title\" x=\"%.1f\" y=\"%.0f\">", W / 2, fs * 2);
	xml_escape_cstr(f, title);
	fputs("</text>\n", f);
	if (opt.subtitle) {
		fprintf(f, "<text id=\"subtitle\" x=\"%.1f\" y=\"%.0f\">", W / 2, fs * 4);
		xml_escape_cstr(f, opt.subtitle);
		fputs("</text>\n", f);
	}
	fprintf(f, "<text id=\"details\" x=\"%.0f\" y=\"%.0f\"> </text>\n", xpad, H - L->ypad2 / 2);
	fprintf(f, "<text id=\"unzoom\" class=\"h\" x=\"%.0f\" y=\"%.0f\">Reset Zoom</text>\n", xpad, fs * 2);
	fprintf(f, "<text id=\"search\" x=\"%.0f\" y=\"%.0f\">Search</text>\n", W - xpad - 30, fs * 2);
	fprintf(f, "<text id=\"ic\" x=\"%.0f\" y=\"%.0f\">ic</text>\n", W - xpad - 16, fs * 2);
	fprintf(f, "<text id=\"matched\" x=\"%.0f\" y=\"%.0f\"> </text>\n", W - xpad, H - L->ypad2 / 2);
}

/* The script's name table (only names drawn, in first-drawn order) and, for
 * a differential, the largest change (the colour scale). */
static void name_table(struct layout *L)
{
	size_t nn = stacktree_names(L->t);
	L->out_id = marple_malloc((nn ? nn : 1) * sizeof(uint32_t));
	memset(L->out_id, 0xff, (nn ? nn : 1) * sizeof(uint32_t));
	L->order = marple_malloc((L->nfr + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < L->nfr; i++) {
		const struct stacktree_node *nd = stacktree_node(L->t, L->fr[i].node);
		if (L->out_id[nd->name] == STREE_NONE) {
			L->order[L->nout] = nd->name;
			L->out_id[nd->name] = L->nout++;
		}
		if (L->diff && i > 0) {
			double d = fabs(stacktree_weight2(L->t, L->fr[i].node) - nd->v);
			if (d > L->maxdelta)
				L->maxdelta = d;
		}
	}
}

static int waker_hues;	/* no --colors: a waker's frames (above "--") aqua */

/* Is node id above a "--" frame: the waker's part of an off-wake stack
 * (marple-offcpu --wakers: blocked frames;--;waker frames)? */
static int above_waker_separator(const struct stree *t, uint32_t id)
{
	for (uint32_t p = stacktree_node(t, id)->parent; p != STREE_NONE; p = stacktree_node(t, p)->parent) {
		struct mstr n = stacktree_name(t, stacktree_node(t, p)->name);
		if (n.len == 2 && n.s[0] == '-' && n.s[1] == '-')
			return 1;
	}
	return 0;
}

/* The fill of frame i: the root, the delimiters, the differential's red and
 * blue, a --cp palette entry, or the colour scheme (then remembered for --cp). */
static void frame_colour(const struct layout *L, size_t i, struct mstr name, int rgb[3])
{
	const struct stacktree_node *nd = stacktree_node(L->t, L->fr[i].node);
	if (i == 0) {
		rgb[0] = 250, rgb[1] = 250, rgb[2] = 250;
	} else if (name.len == 1 && name.s[0] == '-') {	/* user/kernel delimiter */
		rgb[0] = 200, rgb[1] = 200, rgb[2] = 200;
	} else if (name.len == 2 && name.s[0] == '-' && name.s[1] == '-') {
		rgb[0] = 160, rgb[1] = 160, rgb[2] = 160;
	} else if (!L->diff && waker_hues && above_waker_separator(L->t, L->fr[i].node)) {
		const char *keep = opt.colors;	/* the waker's frames: aqua, as the "wakeup" palette */
		opt.colors = "wakeup";
		color_of(name.s, name.len, rgb);
		opt.colors = keep;
	} else if (L->diff) {
		double delta = stacktree_weight2(L->t, L->fr[i].node) - nd->v, maxdelta = L->maxdelta;
		if (opt.negate)
			delta = -delta;
		int v = maxdelta > 0 ? (int)(210 * (maxdelta - fabs(delta)) / maxdelta) : 210;
		if (delta > 0)
			rgb[0] = 255, rgb[1] = rgb[2] = v;
		else if (delta < 0)
			rgb[2] = 255, rgb[0] = rgb[1] = v;
		else
			rgb[0] = rgb[1] = rgb[2] = 250;
	} else if (L->both) {
		/* a frame mostly off the CPU (weight of off-CPU sections) in the io
		 * palette, one mostly on it in the hot one */
		const char *keep = opt.colors;
		opt.colors = stacktree_weight2(L->t, L->fr[i].node) * 2 >= nd->v ? "io" : "hot";
		color_of(name.s, name.len, rgb);
		opt.colors = keep;
	} else if (opt.cp && pal_find(name.s, name.len, rgb)) {
	} else {
		color_of(name.s, name.len, rgb);
		if (opt.cp) {
			pal = marple_grow(pal, &palcap, npal + 1, sizeof(*pal));
			pal[npal++] = (struct palent){ marple_strndup(name.s, name.len), name.len, { rgb[0], rgb[1], rgb[2] } };
		}
	}
}

/* Frame i: its <rect>, and its <text> label when one fits. */
static void write_frame(FILE *f, const struct layout *L, size_t i)
{
	const struct frame *fr = &L->fr[i];
	struct mstr name = stacktree_name(L->t, stacktree_node(L->t, fr->node)->name);
	double fh = L->fh, fs = L->fs;
	double x1 = L->xpad + fr->start * L->widthper, w = width_of(L->t, fr->node, L->diff) * L->widthper;
	double y = opt.inverted ? L->ypad1 + L->ypad3 + fr->depth * fh : L->H - L->ypad2 - (fr->depth + 1) * fh;
	int rgb[3];
	frame_colour(L, i, name, rgb);
	/* what fprintf(f, "<rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%.0f\"
	 * fill=\"#%02x%02x%02x\"/>", ...) writes, a few times faster */
	static const char hex[] = "0123456789abcdef";
	char fill[16];
	if ((rgb[0] | rgb[1] | rgb[2]) & ~255)
		snprintf(fill, sizeof(fill), "%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
	else {
		for (int c = 0; c < 3; c++) {
			fill[2 * c] = hex[rgb[c] >> 4];
			fill[2 * c + 1] = hex[rgb[c] & 15];
		}
		fill[6] = 0;
	}
	/* the markup around the name in one buffer, one fwrite (each stdio
	 * call costs ~100 instructions; a frame took 14) */
	char b[384], *o = b;
	o = stpcpy(o, "<rect x=\"");
	o = cat_fixed(o, x1, 1);
	o = stpcpy(o, "\" y=\"");
	o = cat_fixed(o, y, 0);
	o = stpcpy(o, "\" width=\"");
	o = cat_fixed(o, w, 1);
	o = stpcpy(o, "\" height=\"");
	o = cat_fixed(o, fh - 1, 0);
	o = stpcpy(o, "\" fill=\"#");
	o = stpcpy(o, fill);
	o = stpcpy(o, "\"/>");
	int dots;
	size_t sl = shown_len(name.s, name.len);
	size_t k = fit(name.s, sl, w, &dots);
	if (!k && !dots) {
		*o++ = '\n';
		fwrite(b, 1, (size_t)(o - b), f);
		return;
	}
	o = stpcpy(o, "<text x=\"");
	o = cat_fixed(o, x1 + 3, 1);
	o = stpcpy(o, "\" y=\"");
	o = cat_fixed(o, y + fh / 2 + fs * 0.35, 1);
	o = stpcpy(o, "\">");
	fwrite(b, 1, (size_t)(o - b), f);
	xml_escape_write(f, name.s, k);
	fputs(dots ? "..</text>\n" : "</text>\n", f);
}

/* The source lines of the names the trailers place in source (inlined and
 * native functions: framedesc_source; "FILE:LINE", "" for others): the
 * tooltip says them, search finds them; null when there are none. */
static void write_source_lines(FILE *f, const struct layout *L)
{
	int any = 0;
	for (uint32_t i = 0; i < L->nout; i++) {
		struct mstr name = stacktree_name(L->t, L->order[i]);
		const struct framedesc_frame *d = framedesc_get(frames, name.s, name.len);
		const char *file;
		size_t file_len;
		int64_t lineno;
		if (framedesc_is_script(d) || !framedesc_source(d, &file, &file_len, &lineno))
			continue;	/* a script's frame names its line already */
		fputs(any ? "" : "var S=[", f);
		for (; any < (int)i; any++)
			fputs("\"\",", f);
		char line[32];
		snprintf(line, sizeof(line), lineno > 0 ? ":%lld" : "", (long long)lineno);
		size_t n = file_len + strlen(line);
		char *s = marple_malloc(n + 1);
		memcpy(s, file, file_len);
		memcpy(s + file_len, line, strlen(line) + 1);
		xml_js_string_write(f, s, n);
		free(s);
		fputc(',', f);
		any = (int)i + 1;
	}
	fputs(any ? "\"\"];\n" : "var S=null;\n", f);
}

/* Data for the script: names, their source lines, then per frame name,
 * depth, start, count[, delta], then the layout constants. */
static void write_script_data(FILE *f, const struct layout *L, const char *countname)
{
	fputs("var N=[", f);
	for (uint32_t i = 0; i < L->nout; i++) {
		struct mstr name = stacktree_name(L->t, L->order[i]);
		if (i)
			fputc(',', f);
		xml_js_string_write(f, name.s, shown_len(name.s, name.len));
	}
	fputs("];\n", f);
	write_source_lines(f, L);
	fputs("var D=[", f);
	for (size_t i = 0; i < L->nfr; i++) {
		const struct stacktree_node *nd = stacktree_node(L->t, L->fr[i].node);
		if (i)
			fputc(',', f);
		put_uint(f, L->out_id[nd->name]);
		fputc(',', f);
		put_uint(f, L->fr[i].depth);
		fputc(',', f);
		put_num(f, L->fr[i].start);
		fputc(',', f);
		put_num(f, width_of(L->t, L->fr[i].node, L->diff));
		if (L->diff) {
			double d = stacktree_weight2(L->t, L->fr[i].node) - nd->v;
			fputc(',', f);
			put_num(f, opt.negate ? -d : d);
		}
		if (i % 16 == 15)
			fputc('\n', f);
	}
	fputs("];\nvar C={", f);
	fprintf(f, "W:%.0f,XP:%.0f,FS:%g,FW:%g,FH:%g,T:", L->W, L->xpad, L->fs, opt.fontwidth, L->fh);
	put_num(f, L->timemax);
	fprintf(f, ",K:%d,countname:", L->diff ? 5 : 4);
	xml_js_string_cstr(f, countname);
	fputs(",nametype:", f);
	xml_js_string_cstr(f, opt.nametype);
	fputs("};\n", f);
}

static int both_hues;	/* offcpu --both with no --colors: see struct layout's both */

/* A share in percent as a person reads it: "99.9", "0.4", "0.00031". */
static const char *percent(char *buf, size_t size, double part, double all)
{
	double p = all > 0 ? 100 * part / all : 0;
	snprintf(buf, size, p >= 0.1 ? "%.1f" : "%.2g", p);
	return buf;
}

/* What the picture left out, said once it is written (a closed pipe ends
 * quietly): frames narrower than --minwidth when they stood for 1% or more of
 * the weight (a few hairlines are every big graph's, and no news), and
 * stacks cut at --maxdepth. */
static void say_left_out(const struct layout *L, const char *countname)
{
	double all = width_of(L->t, 0, L->diff);
	char pct[32];

	if (L->narrow && all > 0 && L->narrow_w / all >= 0.01) {
		char w[64];
		if (opt.minwidth_pct)
			snprintf(w, sizeof(w), "%g%% of the total", opt.minwidth);
		else
			snprintf(w, sizeof(w), "%g px", opt.minwidth);
		marple_warn("%llu frame%s narrower than %s left out, with what is above them (%s%% of the %s); "
			    "--minwidth 0 draws them", (unsigned long long)L->narrow, L->narrow == 1 ? "" : "s", w,
			    percent(pct, sizeof(pct), L->narrow_w, all), countname);
	}
	if (L->deep)
		marple_warn("%llu stack%s taller than %llu frames cut there (%s%% of the %s); --maxdepth N draws more",
			    (unsigned long long)L->deep, L->deep == 1 ? "" : "s", (unsigned long long)opt.maxdepth,
			    percent(pct, sizeof(pct), L->deep_w, all), countname);
}

static void draw(FILE *f, struct layout *Lout, struct stree *t, int diff, const char *countname)
{
	struct layout L = { .t = t, .diff = diff, .both = both_hues && !diff };

	layout_frames(&L);
	write_preamble(f, &L);
	name_table(&L);
	if (opt.random)
		rng_state ^= (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	if (opt.cp)
		pal_load();
	fputs("<g id=\"frames\">\n", f);
	for (size_t i = 0; i < L.nfr; i++)
		write_frame(f, &L, i);
	fputs("</g>\n<script><![CDATA[\n", f);
	write_script_data(f, &L, countname);
	fputs(flamegraph_js, f);
	fputs("]]></script>\n</svg>\n", f);
	*Lout = L;
	Lout->fr = NULL, Lout->out_id = NULL, Lout->order = NULL;	/* freed here */
	free(L.fr);
	free(L.out_id);
	free(L.order);
	if (opt.cp)
		pal_save();
}

static const char *check_choice(const char *opt_name, const char *v, const char *const *choices)
{
	for (size_t i = 0; choices[i]; i++)
		if (strcmp(v, choices[i]) == 0)
			return v;
	marple_usage_error("%s: unknown value '%s'", opt_name, v);
}

/* Defaults from what the stream says it holds, as Gregg's tools have them:
 * off-CPU time blue ("io") titled "Off-CPU Time", memory (bytes) green, and
 * the interface and unit under the title.  Options given win. */
static void interface_defaults(const struct stacktree_input *in)
{
	int offcpu = in->measure && strcmp(in->measure, "off_cpu") == 0;
	int bytes = in->unit && strcmp(in->unit, "bytes") == 0 && !opt.countname;

	both_hues = offcpu && in->on_cpu && !opt.colors;
	waker_hues = !opt.colors;
	if (!opt.colors)
		opt.colors = offcpu && !in->on_cpu ? "io" : bytes ? "mem" : "hot";
	if (!opt.title && offcpu && !opt.flamechart && !opt.inverted)
		opt.title = in->on_cpu ? "Off- and On-CPU Time" : "Off-CPU Time";
	if (!opt.subtitle && in->interface) {
		static char sub[160];
		snprintf(sub, sizeof(sub), "%s%s, weights in %s", in->interface, in->on_cpu ? " --both (blue: off the CPU, warm: on it)" : "",
			 opt.countname ? opt.countname : in->unit ? in->unit : "samples");
		opt.subtitle = sub;
	}
}

int main(int argc, char **argv)
{
	static const char *const bgs[] = { "yellow", "blue", "green", "grey", NULL };
	int ch;

	marple_init(argc, argv);
	while ((ch = options_getopt(options, argc, argv)) != -1) {
		switch (ch) {
		case O_TITLE: opt.title = optarg; break;
		case O_SUBTITLE: opt.subtitle = optarg; break;
		case O_WIDTH: opt.width = marple_opt_double("--width", optarg, 100, 1e6); break;
		case O_HEIGHT: opt.frameheight = marple_opt_double("--height", optarg, 2, 1000); break;
		case O_MINWIDTH: {
			size_t l = strlen(optarg);
			char buf[64];
			opt.minwidth_pct = l > 0 && optarg[l - 1] == '%';
			snprintf(buf, sizeof(buf), "%.*s", (int)(l - (size_t)opt.minwidth_pct), optarg);
			opt.minwidth = marple_opt_double("--minwidth", buf, 0, opt.minwidth_pct ? 100 : 1e6);
			break;
		}
		case O_FONTTYPE: opt.fonttype = optarg; break;
		case O_FONTSIZE: opt.fontsize = marple_opt_double("--fontsize", optarg, 1, 200); break;
		case O_FONTWIDTH: opt.fontwidth = marple_opt_double("--fontwidth", optarg, 0.05, 5); break;
		case O_COUNTNAME: opt.countname = optarg; break;
		case O_NAMETYPE: opt.nametype = optarg; break;
		case O_COLORS: opt.colors = check_choice("--colors", optarg, palettes); break;
		case O_BGCOLORS:
			if (optarg[0] == '#') {
				size_t l = strlen(optarg);
				if ((l != 4 && l != 7) || strspn(optarg + 1, "0123456789abcdefABCDEF") != l - 1)
					marple_usage_error("--bgcolors: '%s' is not #rgb or #rrggbb", optarg);
				opt.bgcolors = optarg;
			} else
				opt.bgcolors = check_choice("--bgcolors", optarg, bgs);
			break;
		case O_HASH: opt.hash = 1; break;
		case O_RANDOM: opt.random = 1; break;
		case O_CP: opt.cp = 1; break;
		case O_PALFILE: opt.palfile = optarg; break;
		case O_REVERSE: opt.reverse = 1; break;
		case O_INVERTED: opt.inverted = 1; break;
		case O_FLAMECHART: opt.flamechart = 1; break;
		case O_NEGATE: opt.negate = 1; break;
		case O_NOTES: opt.notes = optarg; break;
		case O_TOTAL: opt.total = marple_opt_double("--total", optarg, 0, 1e300); break;
		case O_MAXDEPTH: opt.maxdepth = marple_opt_u64("--maxdepth", optarg, 1, UINT32_MAX); break;
		case O_FACTOR: opt.factor = marple_opt_double("--factor", optarg, 1e-300, 1e300); break;
		case 'u': opt.user_threads = 1; break;
		case O_NOLINENO: opt.nolineno = 1; break;
		case 'o': opt.out = optarg; break;
		case 'h': options_help(stdout, options, &help); marple_close_stdout(); return EXIT_OK;
		default: marple_usage_try();
		}
	}

	struct stree *t = stacktree_new(opt.flamechart);
	stacktree_lazy_tails(t);	/* frames below --minwidth are mostly never made */
	stacktree_max_frames(t, opt.maxdepth + 1);	/* one more: where a stack was cut shows */
	frames = framedesc_new();
	struct stacktree_input in = { .reverse = opt.reverse, .factor = opt.factor, .split_offcpu = 1,
				      .frames = frames, .user_threads = opt.user_threads, .nolineno = opt.nolineno };
	int rc = EXIT_OK;
	if (stacktree_read_operands(t, argc - optind, argv + optind, &in) < 0) {
		rc = EXIT_DATA;
		goto cleanup;
	}

	struct outfile *o = marple_outfile_open(opt.out);
	FILE *f = marple_outfile_stream(o);
	int diff = in.two_counts;
	interface_defaults(&in);
	if (in.stacks == 0 || width_of(t, 0, diff) <= 0) {
		/* a data error: exit 1 and no picture (flamegraph.pl writes an
		 * error SVG and exits 2, which a pipeline took for a picture) */
		marple_warn_at(marple_operands_name(argc - optind, argv + optind), 0,
			"no valid input: no stack with a count above zero");
		marple_outfile_abort(o);
		rc = EXIT_DATA;
		goto cleanup;
	}
	const char *countname = opt.countname ? opt.countname : in.unit ? in.unit : "samples";
	struct layout drawn;
	draw(f, &drawn, t, diff, countname);
	if (marple_outfile_commit(o) < 0)
		rc = EXIT_DATA;
	else
		say_left_out(&drawn, countname);
cleanup:
	stacktree_free(t);
	framedesc_free(frames);
	free(in.unit);
	free(in.measure);
	free(in.interface);
	free(in.host);
	for (size_t i = 0; i < npal; i++)
		free(pal[i].name);
	free(pal);
	return rc;
}
