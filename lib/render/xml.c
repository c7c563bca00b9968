/* xml.c — escaping for SVG/HTML text, attributes and inline script data. */
#include "xml.h"

#include <string.h>

#include "escape.h"

static const char replacement[] = "\xef\xbf\xbd";	/* U+FFFD */

/* What replaces the character at s[i] (*n: its length in bytes, 1 unless set),
 * or NULL to keep it; buf is room for a replacement built on the spot. */
typedef const char *replace_fn(const unsigned char *s, size_t len, size_t i, size_t *n, char *buf);

/* Write s with the characters rep replaces replaced, the runs between them
 * written whole.  Inlined with each rep, so no call per character. */
static inline __attribute__((always_inline)) void write_replacing(FILE *f, const char *str, size_t len,
								   replace_fn *rep_at)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, start = 0;
	char buf[8];

	while (i < len) {
		size_t n = 1;
		const char *rep = rep_at(s, len, i, &n, buf);
		if (rep) {
			if (i > start)
				fwrite(s + start, 1, i - start, f);
			fputs(rep, f);
			start = i + n;
		}
		i += n;
	}
	if (len > start)
		fwrite(s + start, 1, len - start, f);
}

static inline __attribute__((always_inline)) const char *xml_rep(const unsigned char *s, size_t len, size_t i,
								  size_t *n, char *buf)
{
	unsigned char c = s[i];

	(void)buf;
	if (c >= 0x80) {
		*n = escape_utf8_len(s + i, len - i);
		if (!*n) {
			*n = 1;
			return replacement;
		}
		/* U+FFFE/U+FFFF are not XML characters either. */
		if (*n == 3 && c == 0xef && s[i + 1] == 0xbf && s[i + 2] >= 0xbe)
			return replacement;
		return NULL;
	}
	if (c == '&')
		return "&amp;";
	if (c == '<')
		return "&lt;";
	if (c == '>')
		return "&gt;";
	if (c == '"')
		return "&quot;";
	if (c == '\'')
		return "&#39;";
	if (c < 0x20 || c == 0x7f)
		return replacement;
	return NULL;
}

void xml_escape_write(FILE *f, const char *s, size_t len)
{
	write_replacing(f, s, len, xml_rep);
}

void xml_escape_cstr(FILE *f, const char *s)
{
	xml_escape_write(f, s, strlen(s));
}

static inline __attribute__((always_inline)) const char *js_rep(const unsigned char *s, size_t len, size_t i,
								 size_t *n, char *buf)
{
	unsigned char c = s[i];

	if (c >= 0x80) {
		*n = escape_utf8_len(s + i, len - i);
		if (!*n) {
			*n = 1;
			return "\\ufffd";
		}
		if (*n == 3 && c == 0xe2 && s[i + 1] == 0x80 && (s[i + 2] == 0xa8 || s[i + 2] == 0xa9))
			return s[i + 2] == 0xa8 ? "\\u2028" : "\\u2029";
		return NULL;
	}
	if (c == '"')
		return "\\\"";
	if (c == '\\')
		return "\\\\";
	if (c == '<' || c == '>' || c == '&' || c < 0x20 || c == 0x7f) {
		snprintf(buf, 8, "\\u%04x", c);
		return buf;
	}
	return NULL;
}

void xml_js_string_write(FILE *f, const char *s, size_t len)
{
	fputc('"', f);
	write_replacing(f, s, len, js_rep);
	fputc('"', f);
}

void xml_js_string_cstr(FILE *f, const char *s)
{
	xml_js_string_write(f, s, strlen(s));
}
