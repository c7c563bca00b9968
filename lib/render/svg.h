/* svg.h — what marple's SVG renderers share: the document frame, escaped text,
 * colour ramps and palettes, and a floating tooltip driven by inline script.
 * Every string from the data goes through xml.h; pages are self-contained.
 *
 *   svg_begin(f, 1200, 600, "Latency Heat Map");
 *   svg_text(f, 10, 40, "start", "axis", "0 s");
 *   ... shapes ...
 *   svg_tooltip(f);           -- script + tooltip element, last so it is on top
 *   svg_end(f);
 */
#ifndef MARPLE_SVG_H
#define MARPLE_SVG_H

#include <stddef.h>
#include <stdio.h>

/* XML declaration, <svg> element with viewBox, a shared style sheet (classes
 * "title", "sub", "axis", "grid", "tipbox", "tiptext", "box", "boxtext"), a
 * white background and the centred title (escaped). */
void svg_begin(FILE *f, double width, double height, const char *title);
void svg_end(FILE *f);

/* <text> at x,y with text-anchor and class (both plain words), escaped text. */
void svg_text(FILE *f, double x, double y, const char *anchor, const char *cls, const char *text);
void svg_text_n(FILE *f, double x, double y, const char *anchor, const char *cls,
		const char *text, size_t len);

/* Heat colour for intensity t in [0,1] (0 = palest lit colour, 1 = darkest)
 * in hue 0 (white-orange-red heat), 1 (blue), 2 (green), 3 (purple).  Writes
 * "#rrggbb" into buf (8 bytes). */
void svg_heat_color(double t, int hue, char buf[8]);
/* Distinct colour i of a categorical palette (stack plot bands). */
void svg_palette_color(size_t i, char buf[8]);

/* A number as short text: "12", "0.25", "1.5e+09" (%.*g with prec digits). */
void svg_num(char *buf, size_t size, double v, int prec);

/* The tooltip: writes an inline script defining
 *   marpleTip(evt, lines)  -- show lines (array of strings) near the pointer
 *   marpleTipHide()
 *   marpleSvgPoint(evt)    -- the pointer in the SVG's own coordinates
 * and the hidden <g id="marple-tip"> it draws into.  Call once, after the
 * shapes, so the tooltip is drawn on top. */
void svg_tooltip(FILE *f);

#endif
