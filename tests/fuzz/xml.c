/* xml — libFuzzer target for SVG/HTML escaping (lib/render/xml.c).
 *
 * Input: any bytes, taken as one hostile name.  xml_escape_write must give
 * text an XML parser accepts anywhere in text or a quoted attribute: valid
 * UTF-8, no XML-forbidden character, no < > " ' and & only as an entity.
 * xml_js_string_write must give one JSON string literal that is safe inside
 * <script> and CDATA (no < > &, no U+2028/2029, no raw control) and decodes
 * to the input with invalid UTF-8 replaced by U+FFFD.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "xml.h"

static char *capture(void (*fn)(FILE *, const char *, size_t), const char *s, size_t n, size_t *len)
{
	char *buf = NULL;
	FILE *m = open_memstream(&buf, len);
	fn(m, s, n);
	fclose(m);
	return buf;
}

static void check_xml(const char *x, size_t len)
{
	static const char *const entities[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&#39;" };
	for (size_t i = 0; i < len;) {
		unsigned char c = (unsigned char)x[i];
		if (c == '&') {
			size_t k;
			for (k = 0; k < 5; k++)
				if (strncmp(x + i, entities[k], strlen(entities[k])) == 0)
					break;
			if (k == 5)
				abort();
			i += strlen(entities[k]);
			continue;
		}
		if (c == '<' || c == '>' || c == '"' || c == '\'' || c < 0x20 || c == 0x7f)
			abort();
		size_t n = escape_utf8_len((const unsigned char *)x + i, len - i);
		if (n == 0)
			abort();
		/* U+FFFE and U+FFFF are not XML characters. */
		if (n == 3 && c == 0xef && (unsigned char)x[i + 1] == 0xbf && (unsigned char)x[i + 2] >= 0xbe)
			abort();
		i += n;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *)data;
	size_t xlen, jlen;
	char *x = capture(xml_escape_write, in, size, &xlen);
	check_xml(x, xlen);
	free(x);

	char *j = capture(xml_js_string_write, in, size, &jlen);
	if (jlen < 2 || j[0] != '"' || j[jlen - 1] != '"')
		abort();
	for (size_t i = 0; i < jlen; i++) {
		unsigned char c = (unsigned char)j[i];
		if (c == '<' || c == '>' || c == '&' || c < 0x20 || c == 0x7f)
			abort();
		if (c == 0xe2 && i + 2 < jlen && (unsigned char)j[i + 1] == 0x80 &&
		    ((unsigned char)j[i + 2] == 0xa8 || (unsigned char)j[i + 2] == 0xa9))
			abort();
	}
	json_error_t err;
	json_t *v = json_loadb(j, jlen, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
	if (!json_is_string(v)) {
		fprintf(stderr, "xml fuzz: xml_js_string_write gave invalid JSON: %s\n", err.text);
		abort();
	}
	/* Expected: the input with each invalid byte as U+FFFD. */
	char *want = malloc(size * 3 + 1);
	size_t wl = 0;
	for (size_t i = 0; i < size;) {
		size_t n = escape_utf8_len((const unsigned char *)in + i, size - i);
		if (n == 0) {
			memcpy(want + wl, "\xef\xbf\xbd", 3);
			wl += 3;
			i++;
		} else {
			memcpy(want + wl, in + i, n);
			wl += n;
			i += n;
		}
	}
	if (json_string_length(v) != wl || memcmp(json_string_value(v), want, wl) != 0)
		abort();
	free(want);
	json_decref(v);
	free(j);
	return 0;
}
