/* marple-report — one HTML page showing every section of a capture.
 *
 * Reads a marple stream (the capture) and a list of files already made from
 * its sections (pictures, CPEL files, ...), and writes index.html: the
 * capture's metadata, a table of its sections, and for each section its
 * details, its pictures inline (iframes, so interactive SVG and HTML keep
 * working) and links to the other files.  Every name from the data is escaped;
 * the page uses no network.  The `marple display` driver calls it.
 *
 *   $ marple-report -o out/index.html cap.marple 0:picture:00-callstack-flamegraph.svg \
 *         1:link:01-cpusched-g2.cpel 1:picture:01-cpusched-plot.html
 *   $ marple-report --list cap.marple
 *   0	stack	callstack
 *   1	event	cpusched
 *
 * Exit status: 0 ok, 1 bad input or write error, 2 usage error.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "options.h"
#include "stream.h"
#include "util.h"
#include "xml.h"

struct section {
	char *interface, *datatype, *host, *kernel, *units, *ended;
	int64_t start_ns, wall_ns, end_ns;
	uint64_t records;
	int64_t lost, dropped;
	int trailer;
};

struct artifact {
	long index;
	char kind;		/* 'p'icture, 'l'ink, 'e'rror, 'n'ote */
	const char *text;	/* file name relative to the page, or the message */
};

static struct {
	const char *out, *title, *source;
	int list;
} opt;

static struct section *secs;
static size_t nsecs, capsecs;
static unsigned long bad_lines;

enum { OPT_SOURCE = 256 };
static const struct options_entry options[] = {
	{ 'o', "output", "FILE", "write the page to FILE (default stdout); the files\n"
				 "named by the operands are relative to its folder" },
	{ 't', "title", "TITLE", "the page's title (default: marple report: NAME)" },
	{ OPT_SOURCE, "source", "NAME", "the capture's name to show (default: CAPTURE)" },
	{ 'l', "list", NULL, "print 'index<TAB>datatype<TAB>interface<TAB>records<TAB>\n"
			     "title' per section (the interface reduced to\n"
			     "[A-Za-z0-9_.-], the title 'INTERFACE on HOST'), and stop" },
	OPTIONS_HELP,
	{ 0 }
};

static const struct options_help help = {
	.synopsis = "[-o FILE] [-t TITLE] [--source NAME] CAPTURE [INDEX:KIND:FILE]...\n"
	            "--list CAPTURE",
	.about = "Write one self-contained HTML report of a capture's sections.\n",
	.after = "Operands after CAPTURE: INDEX:picture:FILE (shown inline), INDEX:link:FILE\n"
	         "(linked), INDEX:error:MESSAGE (shown as a failure of that section),\n"
	         "INDEX:note:TEXT (a remark).  INDEX all: of the whole capture, shown first\n"
	         "(marple display of several hosts: the merged flame graphs).\n"
	         "See marple-report(1).\n",
};

static char *dup_str(json_t *obj, const char *key)
{
	const char *s = obj ? stream_header_str(obj, key, NULL) : NULL;
	return s ? marple_strdup(s) : NULL;
}

static void read_capture(const char *path)
{
	FILE *f = marple_open_input(path);
	struct stream_reader *r = stream_reader_new(f, marple_input_name(path));
	enum stream_item it;
	struct section *cur = NULL;

	while ((it = stream_reader_next(r)) != STREAM_EOF) {
		if (it == STREAM_ERROR) {
			if (bad_lines++ < 5)
				stream_reader_warn(r);
			continue;
		}
		if (it == STREAM_HEADER) {
			json_t *h = stream_reader_header(r);
			secs = marple_grow(secs, &capsecs, nsecs + 1, sizeof(*secs));
			cur = &secs[nsecs++];
			memset(cur, 0, sizeof(*cur));
			cur->interface = dup_str(h, "interface");
			cur->datatype = marple_strdup(stream_datatype_name(stream_reader_datatype(r)));
			cur->host = dup_str(h, "host");
			cur->kernel = dup_str(h, "kernel");
			cur->start_ns = stream_header_int(h, "start_ns", -1);
			cur->wall_ns = stream_header_int(h, "wall_ns", -1);
			cur->end_ns = -1;
			json_t *u = json_object_get(h, "units");
			if (json_is_object(u) && json_object_size(u))
				cur->units = json_dumps(u, JSON_COMPACT | JSON_PRESERVE_ORDER);
		} else if (it == STREAM_TRAILER && cur) {
			json_t *t = stream_reader_trailer(r);
			cur->trailer = 1;
			cur->end_ns = stream_header_int(t, "end_ns", -1);
			cur->lost = stream_header_int(t, "lost", 0);
			cur->dropped = stream_header_int(t, "dropped", 0);
			cur->ended = dup_str(t, "ended");
		}
		if (cur)
			cur->records = stream_reader_records(r);
	}
	if (bad_lines > 5)
		marple_warn_at(marple_input_name(path), 0, "%lu malformed lines in all (first five shown)", bad_lines);
	const char *why = stream_reader_unusable(r);	/* marple-format(5): no report of it */
	if (why) {
		marple_warn_at(marple_input_name(path), 0, "%s", why);
		exit(EXIT_DATA);
	}
	stream_reader_free(r);
	if (f != stdin)
		fclose(f);
	if (nsecs == 0)
		marple_fatal(EXIT_DATA, "%s: no marple section in input", marple_input_name(path));
}

static void list_sections(void)
{
	for (size_t i = 0; i < nsecs; i++) {
		const char *s = secs[i].interface ? secs[i].interface : "";
		size_t n = 0;
		printf("%zu\t%s\t", i, secs[i].datatype);
		for (; s[n] && n < 40; n++) {
			char c = s[n];
			int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
				 c == '_' || c == '-' || c == '.';
			putchar(ok && !(n == 0 && c == '.') ? c : '_');
		}
		if (n == 0)
			fputs("section", stdout);
		printf("\t%llu", (unsigned long long)secs[i].records);
		/* a title for the picture: "INTERFACE on HOST", control bytes as '?' */
		putchar('\t');
		for (const char *t = secs[i].interface ? secs[i].interface : "section"; *t; t++)
			putchar((unsigned char)*t < 0x20 || *t == 0x7f ? '?' : *t);
		if (secs[i].host) {
			fputs(" on ", stdout);
			for (const char *t = secs[i].host; *t; t++)
				putchar((unsigned char)*t < 0x20 || *t == 0x7f ? '?' : *t);
		}
		putchar('\n');
	}
}

/* A relative file name as a URL path: unreserved bytes as they are, others %XX. */
static void url_write(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
		    c == '_' || c == '.' || c == '~' || c == '/')
			fputc(c, f);
		else
			fprintf(f, "%%%02X", c);
	}
}

/* The height an SVG asks for (its root's height attribute), 0 if unknown;
 * file is relative to the page's folder. */
static long svg_height(const char *file)
{
	char buf[4096], *path;
	const char *slash = opt.out ? strrchr(opt.out, '/') : NULL;
	size_t dirlen = slash ? (size_t)(slash - opt.out + 1) : 0;
	long h = 0;
	FILE *f;

	path = marple_malloc(dirlen + strlen(file) + 1);
	memcpy(path, opt.out ? opt.out : "", dirlen);
	strcpy(path + dirlen, file);
	f = fopen(path, "r");
	free(path);
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	char *svg = strstr(buf, "<svg");
	char *end = svg ? strchr(svg, '>') : NULL;
	if (!end)
		return 0;
	*end = 0;
	for (char *a = svg; (a = strstr(a, "height=")); a += 7)
		if (a[-1] == ' ' || a[-1] == '\n' || a[-1] == '\t') {
			h = strtol(a + 8, NULL, 10);
			break;
		}
	return h > 0 && h < 100000 ? h : 0;
}

static void esc(FILE *f, const char *s)
{
	xml_escape_cstr(f, s ? s : "-");
}

static void wall_time(char *buf, size_t n, int64_t wall_ns)
{
	time_t t = (time_t)(wall_ns / 1000000000);
	struct tm tm;
	if (wall_ns <= 0 || !localtime_r(&t, &tm) || !strftime(buf, n, "%Y-%m-%d %H:%M:%S %Z", &tm))
		snprintf(buf, n, "-");
}

static void seconds(char *buf, size_t n, const struct section *s)
{
	if (s->end_ns >= 0 && s->start_ns >= 0 && s->end_ns >= s->start_ns)
		snprintf(buf, n, "%.2f s", (double)(s->end_ns - s->start_ns) / 1e9);
	else
		snprintf(buf, n, "-");
}

static const char *kind_label(const char *file)
{
	const char *dot = strrchr(file, '.');
	if (!dot)
		return "file";
	if (!strcmp(dot, ".cpel"))
		return "CPEL event log (open with G2)";
	if (!strcmp(dot, ".json"))
		return "trace JSON (open in ui.perfetto.dev)";
	if (!strcmp(dot, ".svg"))
		return "SVG";
	if (!strcmp(dot, ".html"))
		return "HTML page";
	if (!strcmp(dot, ".gz") && dot - file >= 3 && !strncmp(dot - 3, ".pb", 3))
		return "pprof profile (go tool pprof, Parca, Pyroscope)";
	if (!strcmp(dot, ".pftrace"))
		return "Perfetto trace (open in ui.perfetto.dev)";
	return "file";
}

static const char CSS[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:0 auto;max-width:1500px;padding:0 16px 40px;color:#222}"
	"h1{font-size:22px;margin:18px 0 6px}h2{font-size:18px;margin:28px 0 6px;border-bottom:1px solid #ccc}"
	"table{border-collapse:collapse;margin:8px 0}td,th{padding:2px 10px 2px 0;text-align:left;vertical-align:top}"
	"th{color:#555;font-weight:600}table.secs td,table.secs th{border-bottom:1px solid #eee;padding-right:14px}"
	".num{text-align:right}.bad{color:#b00020;font-weight:600}.ok{color:#1b5e20}"
	"iframe.pic{width:100%;height:620px;border:1px solid #ccc;resize:vertical;overflow:auto;display:block;margin:6px 0}"
	".meta{color:#444}.links a{margin-right:14px}code{background:#f4f4f4;padding:0 3px}";

/* The pictures, links and remarks of one section (index -1: of the whole
 * capture); how many there were. */
static int write_artifacts(FILE *f, long index, const struct artifact *a, size_t na)
{
	int shown = 0;

	for (size_t k = 0; k < na; k++) {
		if (a[k].index != index)
			continue;
		shown++;
		if (a[k].kind == 'n') {
			fputs("<p class=\"meta note\">", f);
			esc(f, a[k].text);
			fputs("</p>\n", f);
		} else if (a[k].kind == 'e') {
			fputs("<p class=\"bad err\">could not draw this section: ", f);
			esc(f, a[k].text);
			fputs("</p>\n", f);
		} else if (a[k].kind == 'p') {
			long h = strlen(a[k].text) > 4 && !strcmp(a[k].text + strlen(a[k].text) - 4, ".svg")
					 ? svg_height(a[k].text) : 0;
			/* an SVG gets its own height (flame graphs grow upwards: show their base) */
			fputs("<iframe class=\"pic\" loading=\"lazy\"", f);
			if (h)
				fprintf(f, " style=\"height:%ldpx\"", (h > 3000 ? 3000 : h) + 24);
			fputs(" src=\"", f);
			url_write(f, a[k].text);
			fputs("\" title=\"", f);
			esc(f, a[k].text);
			fputs("\"></iframe>\n<p class=\"links\"><a href=\"", f);
			url_write(f, a[k].text);
			fputs("\" target=\"_blank\">open ", f);
			esc(f, a[k].text);
			fputs(" on its own</a></p>\n", f);
		} else {
			fputs("<p class=\"links\"><a class=\"file\" href=\"", f);
			url_write(f, a[k].text);
			fputs("\" download>", f);
			esc(f, a[k].text);
			fputs("</a> &mdash; ", f);
			esc(f, kind_label(a[k].text));
			fputs("</p>\n", f);
		}
	}
	return shown;
}

static void write_section(FILE *f, size_t i, const struct section *s, const struct artifact *a, size_t na)
{
	char when[64], secs_buf[32];
	int shown = 0;

	wall_time(when, sizeof(when), s->wall_ns);
	seconds(secs_buf, sizeof(secs_buf), s);
	fprintf(f, "<section class=\"sec\" id=\"s%zu\" data-index=\"%zu\" data-datatype=\"", i, i);
	esc(f, s->datatype);
	fputs("\" data-interface=\"", f);
	esc(f, s->interface);
	fprintf(f, "\">\n<h2>%zu. ", i);
	esc(f, s->interface);
	fputs(" <small>(", f);
	esc(f, s->datatype);
	fputs(")</small></h2>\n<p class=\"meta\">started ", f);
	esc(f, when);
	fprintf(f, ", %s, %llu records", secs_buf, (unsigned long long)s->records);
	if (s->trailer) {
		fprintf(f, ", lost %lld, dropped %lld, ended: ", (long long)s->lost, (long long)s->dropped);
		esc(f, s->ended);
	} else {
		fputs(", <span class=\"bad\">no trailer (the collector was cut off)</span>", f);
	}
	if (s->host) {
		fputs("; host ", f);
		esc(f, s->host);
	}
	if (s->units) {
		fputs("; units <code>", f);
		esc(f, s->units);
		fputs("</code>", f);
	}
	fputs("</p>\n", f);
	shown = write_artifacts(f, (long)i, a, na);
	if (!shown)
		fputs("<p class=\"meta\">not drawn (not selected)</p>\n", f);
	fputs("</section>\n", f);
}

static void write_report(FILE *f, const char *capture, const struct artifact *a, size_t na)
{
	const char *name = opt.source ? opt.source : capture;
	const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
	int64_t first_wall = -1;
	double longest = 0;
	uint64_t records = 0;
	int problems = 0;
	char when[64], buf[32];

	for (size_t i = 0; i < nsecs; i++) {
		const struct section *s = &secs[i];
		if (s->wall_ns > 0 && (first_wall < 0 || s->wall_ns < first_wall))
			first_wall = s->wall_ns;
		if (s->end_ns >= 0 && s->start_ns >= 0 && s->end_ns > s->start_ns &&
		    (double)(s->end_ns - s->start_ns) / 1e9 > longest)
			longest = (double)(s->end_ns - s->start_ns) / 1e9;
		records += s->records;
		if (!s->trailer || s->lost || s->dropped)
			problems++;
	}
	wall_time(when, sizeof(when), first_wall);

	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'self' 'unsafe-inline' data: file:\">\n<title>", f);
	if (opt.title)
		esc(f, opt.title);
	else {
		fputs("marple report: ", f);
		esc(f, base);
	}
	fprintf(f, "</title>\n<style>%s</style></head>\n<body>\n<h1>", CSS);
	if (opt.title)
		esc(f, opt.title);
	else {
		fputs("marple report: ", f);
		esc(f, base);
	}
	fputs("</h1>\n<table class=\"capture\">\n<tr><th>capture</th><td id=\"capture-file\">", f);
	esc(f, name);
	fputs("</td></tr>\n<tr><th>host</th><td id=\"capture-host\">", f);
	/* distinct hosts and kernels, in order of appearance */
	for (int pass = 0; pass < 2; pass++) {
		int any = 0;
		for (size_t i = 0; i < nsecs; i++) {
			const char *v = pass ? secs[i].kernel : secs[i].host;
			int seen = 0;
			if (!v)
				continue;
			for (size_t j = 0; j < i; j++) {
				const char *w = pass ? secs[j].kernel : secs[j].host;
				if (w && !strcmp(v, w))
					seen = 1;
			}
			if (seen)
				continue;
			if (any++)
				fputs(", ", f);
			esc(f, v);
		}
		if (!any)
			fputs("-", f);
		if (!pass)
			fputs("</td></tr>\n<tr><th>kernel</th><td>", f);
	}
	fputs("</td></tr>\n<tr><th>started</th><td>", f);
	esc(f, when);
	snprintf(buf, sizeof(buf), "%.2f s", longest);
	fprintf(f, "</td></tr>\n<tr><th>longest section</th><td>%s</td></tr>\n"
		   "<tr><th>sections</th><td id=\"capture-sections\">%zu</td></tr>\n"
		   "<tr><th>records</th><td>%llu</td></tr>\n",
		longest > 0 ? buf : "-", nsecs, (unsigned long long)records);
	if (bad_lines)
		fprintf(f, "<tr><th>malformed lines</th><td class=\"bad\">%lu (skipped)</td></tr>\n", bad_lines);
	fprintf(f, "<tr><th>status</th><td class=\"%s\">%s</td></tr>\n</table>\n", problems ? "bad" : "ok",
		problems ? "some sections lost data or were cut off (see below)" : "every section complete");

	fputs("<table class=\"secs\"><tr><th>#</th><th>interface</th><th>datatype</th><th class=\"num\">records</th>"
	      "<th class=\"num\">lost</th><th class=\"num\">dropped</th><th>ended</th><th>seconds</th></tr>\n", f);
	for (size_t i = 0; i < nsecs; i++) {
		const struct section *s = &secs[i];
		seconds(buf, sizeof(buf), s);
		fprintf(f, "<tr><td>%zu</td><td><a href=\"#s%zu\">", i, i);
		esc(f, s->interface);
		fputs("</a></td><td>", f);
		esc(f, s->datatype);
		fprintf(f, "</td><td class=\"num\">%llu</td>", (unsigned long long)s->records);
		if (s->trailer) {
			fprintf(f, "<td class=\"num\">%lld</td><td class=\"num\">%lld</td><td>", (long long)s->lost,
				(long long)s->dropped);
			esc(f, s->ended);
		} else {
			fputs("<td class=\"num\">-</td><td class=\"num\">-</td><td class=\"bad\">no trailer", f);
		}
		fprintf(f, "</td><td>%s</td></tr>\n", buf);
	}
	fputs("</table>\n", f);
	for (size_t k = 0; k < na; k++)
		if (a[k].index < 0) {	/* pictures of all the sections together: before each one's */
			fputs("<section class=\"sec\" id=\"all\">\n<h2>All sections together</h2>\n", f);
			write_artifacts(f, -1, a, na);
			fputs("</section>\n", f);
			break;
		}
	for (size_t i = 0; i < nsecs; i++)
		write_section(f, i, &secs[i], a, na);
	fputs("<p class=\"meta\">Written by marple-report. Pictures are the files beside this page; "
	      "CPEL files open in G2, trace JSON in the Perfetto UI.</p>\n"
	      /* a page that knows its height (the event timeline) says so: its
	       * frame takes it instead of 620 px with a blank under the tracks */
	      "<script>window.addEventListener(\"message\",function(e){"
	      "var h=e.data&&e.data.marple_height,f=document.querySelectorAll(\"iframe.pic\");"
	      "if(typeof h!==\"number\"||!(h>0))return;"
	      "for(var i=0;i<f.length;i++)if(f[i].contentWindow===e.source)f[i].style.height=Math.min(h,3000)+4+\"px\";});"
	      "</script>\n</body></html>\n", f);
}

static void parse_artifact(const char *arg, struct artifact *a)
{
	const char *c1 = strchr(arg, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	uint64_t idx;
	char *num;

	if (!c1 || !c2)
		marple_usage_error("'%s': want INDEX:KIND:FILE", arg);
	num = marple_strndup(arg, (size_t)(c1 - arg));
	if (!strcmp(num, "all"))
		idx = (uint64_t)-1;
	else if (marple_parse_u64(num, 0, 1u << 30, &idx) != 0)
		marple_usage_error("'%s': bad section index", arg);
	free(num);
	a->index = (long)idx;
	if (!strncmp(c1 + 1, "picture:", 8))
		a->kind = 'p';
	else if (!strncmp(c1 + 1, "link:", 5))
		a->kind = 'l';
	else if (!strncmp(c1 + 1, "error:", 6))
		a->kind = 'e';
	else if (!strncmp(c1 + 1, "note:", 5))
		a->kind = 'n';
	else
		marple_usage_error("'%s': KIND must be picture, link, error or note", arg);
	a->text = c2 + 1;
	if (a->kind != 'e' && a->kind != 'n' && (!*a->text || a->text[0] == '/' || strstr(a->text, "..")))
		marple_usage_error("'%s': FILE must be a name relative to the report's folder", arg);
}

int main(int argc, char **argv)
{
	int c;

	marple_init(argc, argv);
	while ((c = options_getopt(options, argc, argv)) != -1) {
		switch (c) {
		case 'o': opt.out = optarg; break;
		case 't': opt.title = optarg; break;
		case OPT_SOURCE: opt.source = optarg; break;
		case 'l': opt.list = 1; break;
		case 'h': options_help(stdout, options, &help); marple_close_stdout(); return EXIT_OK;
		default: marple_usage_try();
		}
	}
	if (optind >= argc)
		marple_usage_error("name the capture");
	const char *capture = argv[optind++];
	size_t na = (size_t)(argc - optind);
	struct artifact *arts = marple_calloc(na ? na : 1, sizeof(*arts));
	if (opt.list && na)
		marple_usage_error("--list takes only the capture");
	for (size_t i = 0; i < na; i++)
		parse_artifact(argv[optind + i], &arts[i]);

	read_capture(capture);
	if (opt.list) {
		list_sections();
		marple_close_stdout();
		free(arts);
		return EXIT_OK;
	}
	for (size_t i = 0; i < na; i++)
		if (arts[i].index >= 0 && (size_t)arts[i].index >= nsecs)
			marple_fatal(EXIT_USAGE, "section %ld named, but the capture has %zu", arts[i].index, nsecs);

	struct outfile *o = marple_outfile_open(opt.out);
	int rc = EXIT_OK;
	if (!o)
		rc = EXIT_DATA;
	else {
		write_report(marple_outfile_stream(o), capture, arts, na);
		if (marple_outfile_commit(o) != 0)
			rc = EXIT_DATA;
	}
	free(arts);
	return rc;
}
