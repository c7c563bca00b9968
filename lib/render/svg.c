/* svg.c — the SVG frame, text, colours and tooltip shared by the renderers. */
#include "svg.h"

#include <math.h>
#include <string.h>

#include "xml.h"
#include "svgtip.js.h"

void svg_begin(FILE *f, double width, double height, const char *title)
{
	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style type=\"text/css\">\n"
		"text { font-family: Verdana, Helvetica, sans-serif; font-size: 12px; fill: #000; }\n"
		".title { font-size: 17px; }\n"
		".sub { fill: #555; }\n"
		".axis { font-size: 11px; fill: #333; }\n"
		".grid { stroke: #ccc; stroke-width: 0.5; }\n"
		".tipbox { fill: #ffffe8; stroke: #888; stroke-width: 0.7; }\n"
		".tiptext { font-size: 11px; }\n"
		".box { fill: #f6f6f6; stroke: #999; stroke-width: 0.7; }\n"
		".boxtext { font-size: 11px; }\n"
		"</style>\n"
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n",
		width, height, width, height);
	svg_text(f, width / 2, 24, "middle", "title", title);
}

void svg_end(FILE *f)
{
	fputs("</svg>\n", f);
}

void svg_text_n(FILE *f, double x, double y, const char *anchor, const char *cls,
		const char *text, size_t len)
{
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" class=\"%s\">", x, y, anchor, cls);
	xml_escape_write(f, text, len);
	fputs("</text>\n", f);
}

void svg_text(FILE *f, double x, double y, const char *anchor, const char *cls, const char *text)
{
	svg_text_n(f, x, y, anchor, cls, text, strlen(text));
}

static int lerp(int a, int b, double t)
{
	return (int)lround(a + (b - a) * t);
}

void svg_heat_color(double t, int hue, char buf[8])
{
	/* pale end, middle, dark end of each ramp */
	static const int ramps[4][3][3] = {
		{ { 255, 236, 200 }, { 250, 140, 40 }, { 170, 20, 10 } },	/* heat */
		{ { 210, 228, 255 }, { 70, 130, 230 }, { 10, 30, 140 } },	/* blue */
		{ { 210, 245, 200 }, { 70, 180, 70 }, { 10, 90, 20 } },	/* green */
		{ { 235, 215, 250 }, { 160, 90, 210 }, { 80, 10, 120 } },	/* purple */
	};
	const int (*r)[3] = ramps[hue & 3];
	int c[3];

	if (!(t >= 0))
		t = 0;
	if (t > 1)
		t = 1;
	for (int i = 0; i < 3; i++)
		c[i] = t < 0.5 ? lerp(r[0][i], r[1][i], t * 2) : lerp(r[1][i], r[2][i], (t - 0.5) * 2);
	snprintf(buf, 8, "#%02x%02x%02x", c[0] & 255, c[1] & 255, c[2] & 255);
}

void svg_palette_color(size_t i, char buf[8])
{
	static const char *const pal[] = {
		"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
		"#ff9da7", "#9c755f", "#86bcb6", "#d37295", "#a0cbe8", "#ffbe7d", "#8cd17d",
		"#b6992d", "#f1ce63", "#499894", "#fabfd2", "#79706e", "#d4a6c8",
	};
	snprintf(buf, 8, "%s", pal[i % (sizeof(pal) / sizeof(pal[0]))]);
}

void svg_num(char *buf, size_t size, double v, int prec)
{
	if (v == 0)
		v = 0;	/* no "-0" */
	snprintf(buf, size, "%.*g", prec, v);
}

void svg_tooltip(FILE *f)
{
	fputs("<g id=\"marple-tip\" visibility=\"hidden\" pointer-events=\"none\">"
	      "<rect class=\"tipbox\" rx=\"3\"/><text class=\"tiptext\"/></g>\n"
	      "<script type=\"text/ecmascript\"><![CDATA[\n",
	      f);
	fputs(svgtip_js, f);
	fputs("]]></script>\n", f);
}
