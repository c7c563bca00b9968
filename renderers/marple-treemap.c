/* marple-treemap — a squarified tree map of stack data, as one HTML file.
 *
 * Reads marple stack sections or folded text (files or stdin) — CPU samples,
 * allocated bytes, anything with a weight — and writes one self-contained HTML
 * page: the children of one frame at a time as rectangles with areas
 * proportional to their weight; click to go down, the breadcrumb to go up,
 * hover for name, weight and share of the parent and of the total.
 *
 *   $ marple-mallocstacks 10 | marple-treemap --title "Allocations" > mem.html
 *   var D=[0,-1,4196,1,0,4196,...];   (name, parent, weight per node)
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "stacktree.h"
#include "stream.h"
#include "util.h"
#include "xml.h"
#include "treemap.js.h"	/* renderers/treemap.js, made a C string by the Makefile */

static struct {
	const char *title, *countname, *out;
	uint64_t depth;
	double minshare;	/* percent of the total below which nodes are left out */
	int reverse, user_threads, nolineno;
} opt = { .depth = UINT32_MAX, .minshare = 0.001 };

enum { O_TITLE = 256, O_MINSHARE, O_COUNTNAME, O_REVERSE, O_DEPTH, O_NOLINENO };
static const struct options_entry options[] = {
	{ O_TITLE, "title", "TEXT", "page title (default: the first section's \"INTERFACE on\n"
				      "HOST\", else \"Tree Map\")" },
	{ O_DEPTH, "depth", "N", "keep N levels below the root (default: all)" },
	{ 'd', "", "N", NULL },	/* the old spelling: -d is --delimited's */
	{ O_MINSHARE, "min-share", "PCT", "leave out frames below PCT % of the total\n"
					  "(default 0.001; their weight stays in the parent)" },
	{ O_COUNTNAME, "countname", "NAME", "unit of the weights (default: the stream's, or samples)" },
	{ O_REVERSE, "reverse", NULL, "reverse each stack (leaf first)" },
	{ O_NOLINENO, "nolineno", NULL, "frames \"NAME (FILE:LINE)\" (Python's) as \"NAME (FILE)\":\n"
				    "a function's lines merge (marple display draws so)" },
	OPTIONS_USER_THREADS_ONLY,
	OPTIONS_OUTPUT,
	OPTIONS_DESCRIBE("kind=renderer\tdisplay=treemap,tm\treads=stack\text=html\tconfig=depth:--depth"),
	OPTIONS_HELP,
	{ 0 }
};

static const struct options_help help = {
	.synopsis = "[OPTION]... [FILE]...",
	.about = "Draw stack data (marple stack sections or folded text) as a squarified tree\n"
	         "map in one self-contained HTML page: one level at a time, click to drill\n"
	         "down (through chains of single children at once), breadcrumb to go back\n"
	         "up, a search box (regular expression) to find frames.\n",
	.after = "With no FILE, or FILE '-', read stdin.  Exit: 0 ok, 1 bad or unusable input,\n"
	         "2 usage.  See marple-treemap(1).\n",
};

static void put_num(FILE *f, double v)
{
	if (v == floor(v) && fabs(v) < 9e15)
		fprintf(f, "%.0f", v);
	else
		stream_write_double(f, v);
}

static void write_page(FILE *f, struct stree *t, const char *unit)
{
	size_t nn = stacktree_names(t), cap = 0, sp = 0, nout = 0;
	uint32_t *out_name = marple_malloc((nn ? nn : 1) * sizeof(uint32_t));
	uint32_t *order = marple_malloc((nn ? nn : 1) * sizeof(uint32_t));
	uint32_t nnames = 0;
	double minw = stacktree_weight2(t, 0) * opt.minshare / 100;
	struct item { uint32_t node, depth; long parent; } *stack = NULL;

	memset(out_name, 0xff, (nn ? nn : 1) * sizeof(uint32_t));
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n<title>", f);
	xml_escape_cstr(f, opt.title);
	fputs("</title>\n<style>\n"
	      "html,body{margin:0;height:100%;font:13px Verdana,sans-serif;background:#f4f4f0}\n"
	      "body{display:flex;flex-direction:column}\n"
	      "h1{font-size:17px;margin:8px 10px 2px}\n"
	      "#crumbs{margin:2px 10px;min-height:18px}\n"
	      "#crumbs .up{color:#0645ad;cursor:pointer;text-decoration:underline}\n"
	      "#crumbs .here{font-weight:bold}\n"
	      "#sum{margin:0 10px 6px;color:#555}\n"
	      "#map{position:relative;flex:1;margin:0 10px 10px;overflow:hidden}\n"
	      ".box{position:absolute;box-sizing:border-box;overflow:hidden;padding:2px 3px;"
	      "font-size:11px;white-space:nowrap;text-overflow:ellipsis;border:1px solid #fff;background:#ccc}\n"
	      ".box.more{cursor:pointer}\n"
	      ".box.more:hover,.box:hover{outline:2px solid #333;z-index:1}\n"
	      ".box.self{background:repeating-linear-gradient(45deg,#ddd,#ddd 4px,#e8e8e8 4px,#e8e8e8 8px)}\n"
	      ".box[data-chain]::after{content:attr(data-chain);color:#555}\n"
	      ".box.dim{opacity:.3}.box.hit{box-shadow:inset 0 0 0 3px #c0f}\n"
	      "#find{margin:0 10px 4px}#search{width:260px}#search.bad{background:#fcc}#found{margin-left:8px;color:#555}\n"
	      "#tip{position:fixed;display:none;white-space:pre;background:#ffffe0;border:1px solid #888;"
	      "padding:4px 6px;font-size:12px;pointer-events:none;z-index:2}\n"
	      "</style></head>\n<body>\n<h1>", f);
	xml_escape_cstr(f, opt.title);
	fputs("</h1>\n<div id=\"find\"><input id=\"search\" placeholder=\"search frames (regular expression)\">"
	      "<span id=\"found\"></span></div>\n"
	      "<div id=\"crumbs\"></div>\n<div id=\"sum\"></div>\n<div id=\"map\"></div>\n"
	      "<div id=\"tip\"></div>\n<script>\nvar D=[", f);

	/* Pre-order walk: node, depth limit and share threshold. */
	stack = marple_grow(stack, &cap, 1, sizeof(*stack));
	stack[sp++] = (struct item){ 0, 0, -1 };
	while (sp) {
		struct item it = stack[--sp];
		const struct stacktree_node *nd = stacktree_node(t, it.node);
		double v = stacktree_weight2(t, it.node);	/* the "after" count of a differential input */
		if (it.node != 0 && (v < minw || v <= 0))
			continue;
		if (out_name[nd->name] == STREE_NONE) {
			order[nnames] = nd->name;
			out_name[nd->name] = nnames++;
		}
		long me = (long)nout++;
		if (me)
			fputc(',', f);
		if (me % 16 == 15)
			fputc('\n', f);
		fprintf(f, "%u,%ld,", out_name[nd->name], it.parent);
		put_num(f, v);
		if (it.depth >= opt.depth)
			continue;
		size_t k = 0;
		for (uint32_t c = nd->first; c != STREE_NONE; c = stacktree_node(t, c)->next)
			k++;
		stack = marple_grow(stack, &cap, sp + k, sizeof(*stack));
		size_t i = 0;
		for (uint32_t c = nd->first; c != STREE_NONE; c = stacktree_node(t, c)->next)
			stack[sp + k - 1 - i++] = (struct item){ c, it.depth + 1, me };
		sp += k;
	}
	fputs("];\nvar N=[", f);
	for (uint32_t i = 0; i < nnames; i++) {
		struct mstr s = stacktree_name(t, order[i]);
		if (i)
			fputc(',', f);
		xml_js_string_write(f, s.s, s.len);
	}
	fputs("];\nvar C={unit:", f);
	xml_js_string_cstr(f, unit);
	fputs("};\n", f);
	fputs(treemap_js, f);
	fputs("</script>\n</body></html>\n", f);
	free(stack);
	free(out_name);
	free(order);
}

int main(int argc, char **argv)
{
	int ch;

	marple_init(argc, argv);
	while ((ch = options_getopt(options, argc, argv)) != -1) {
		switch (ch) {
		case O_TITLE: opt.title = optarg; break;
		case 'd':
		case O_DEPTH: opt.depth = marple_opt_u64("--depth", optarg, 1, UINT32_MAX); break;
		case O_MINSHARE: opt.minshare = marple_opt_double("--min-share", optarg, 0, 100); break;
		case O_COUNTNAME: opt.countname = optarg; break;
		case O_REVERSE: opt.reverse = 1; break;
		case 'u': opt.user_threads = 1; break;
		case O_NOLINENO: opt.nolineno = 1; break;
		case 'o': opt.out = optarg; break;
		case 'h': options_help(stdout, options, &help); marple_close_stdout(); return EXIT_OK;
		default: marple_usage_try();
		}
	}

	struct stree *t = stacktree_new(0);
	struct stacktree_input in = { .reverse = opt.reverse, .user_threads = opt.user_threads,
				      .nolineno = opt.nolineno };
	int rc = EXIT_OK;
	if (stacktree_read_operands(t, argc - optind, argv + optind, &in) < 0) {
		rc = EXIT_DATA;
		goto cleanup;
	}
	if (in.two_counts)
		marple_warn("differential input: drawing the second count of each line");
	if (in.stacks == 0 || stacktree_weight2(t, 0) <= 0) {
		marple_warn_at(marple_operands_name(argc - optind, argv + optind), 0, "no usable stacks in the input");
		rc = EXIT_DATA;
		goto cleanup;
	}
	/* titled as marple display titles it: what the section is, from where */
	char title[512];
	if (!opt.title && in.interface) {
		snprintf(title, sizeof(title), "%s%s%s", in.interface, in.host ? " on " : "", in.host ? in.host : "");
		opt.title = title;
	} else if (!opt.title) {
		opt.title = "Tree Map";
	}
	struct outfile *o = marple_outfile_open(opt.out);
	write_page(marple_outfile_stream(o), t, opt.countname ? opt.countname : in.unit ? in.unit : "samples");
	if (marple_outfile_commit(o) < 0)
		rc = EXIT_DATA;
cleanup:
	stacktree_free(t);
	free(in.unit);
	free(in.measure);
	free(in.interface);
	free(in.host);
	return rc;
}
