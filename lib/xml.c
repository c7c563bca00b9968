/* xml.c — escaping for SVG/HTML text, attributes and inline script data. */
#include "xml.h"

#include <string.h>

#include "escape.h"

static const char replacement[] = "\xef\xbf\xbd";	/* U+FFFD */

void xml_escape_write(FILE *f, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, start = 0;

	while (i < len) {
		unsigned char c = s[i];
		const char *rep = NULL;
		size_t n = 1;

		if (c >= 0x80) {
			n = utf8_seq_len(s + i, len - i);
			if (n) {
				/* U+FFFE/U+FFFF are not XML characters either. */
				if (n == 3 && c == 0xef && s[i + 1] == 0xbf && s[i + 2] >= 0xbe)
					rep = replacement;
				else {
					i += n;
					continue;
				}
			} else {
				rep = replacement;
				n = 1;
			}
		} else if (c == '&')
			rep = "&amp;";
		else if (c == '<')
			rep = "&lt;";
		else if (c == '>')
			rep = "&gt;";
		else if (c == '"')
			rep = "&quot;";
		else if (c == '\'')
			rep = "&#39;";
		else if (c < 0x20 || c == 0x7f)
			rep = replacement;
		if (!rep) {
			i++;
			continue;
		}
		if (i > start)
			fwrite(s + start, 1, i - start, f);
		fputs(rep, f);
		i += n;
		start = i;
	}
	if (len > start)
		fwrite(s + start, 1, len - start, f);
}

void xml_escape_cstr(FILE *f, const char *s)
{
	xml_escape_write(f, s, strlen(s));
}

void js_string_write(FILE *f, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, start = 0;

	fputc('"', f);
	while (i < len) {
		unsigned char c = s[i];
		char buf[8];
		const char *rep = NULL;
		size_t n = 1;

		if (c >= 0x80) {
			n = utf8_seq_len(s + i, len - i);
			if (!n) {
				rep = "\\ufffd";
				n = 1;
			} else if (n == 3 && c == 0xe2 && s[i + 1] == 0x80 && (s[i + 2] == 0xa8 || s[i + 2] == 0xa9)) {
				rep = s[i + 2] == 0xa8 ? "\\u2028" : "\\u2029";
			} else {
				i += n;
				continue;
			}
		} else if (c == '"')
			rep = "\\\"";
		else if (c == '\\')
			rep = "\\\\";
		else if (c == '<' || c == '>' || c == '&' || c < 0x20 || c == 0x7f) {
			snprintf(buf, sizeof(buf), "\\u%04x", c);
			rep = buf;
		}
		if (!rep) {
			i++;
			continue;
		}
		if (i > start)
			fwrite(s + start, 1, i - start, f);
		fputs(rep, f);
		i += n;
		start = i;
	}
	if (len > start)
		fwrite(s + start, 1, len - start, f);
	fputc('"', f);
}

void js_string_cstr(FILE *f, const char *s)
{
	js_string_write(f, s, strlen(s));
}
