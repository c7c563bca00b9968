/* escape.c — %XX escaping that round-trips any byte string (marple-format(5)). */
#include "escape.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

static const char hexdigits[] = "0123456789ABCDEF";

struct mstr escape_mstr_c(const char *s)
{
	return (struct mstr){ s, s ? strlen(s) : 0 };
}

int escape_mstr_eq(struct mstr a, const char *cstr)
{
	size_t n = strlen(cstr);
	return a.len == n && memcmp(a.s, cstr, n) == 0;
}

/* 1: ASCII byte that must be escaped; 0: written as is (>= 0x80 checked as UTF-8). */
static unsigned char needs_escape[256];

static void init_table(void)
{
	static int done;
	if (done)
		return;
	for (int c = 0; c < 0x20; c++)
		needs_escape[c] = 1;
	needs_escape[0x7f] = 1;
	needs_escape['%'] = needs_escape[','] = needs_escape[';'] = needs_escape['#'] = 1;
	for (int c = 0x80; c < 0x100; c++)
		needs_escape[c] = 2;
	done = 1;
}

size_t escape_utf8_len(const unsigned char *s, size_t avail)
{
	unsigned c = s[0];
	size_t n;
	unsigned min;
	unsigned cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07, min = 0x10000;
	else
		return 0;
	if (avail < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

int escape_needed(const char *s, size_t len)
{
	size_t i = 0;
	while (i < len) {
		size_t n = escape_utf8_len((const unsigned char *)s + i, len - i);
		if (!n || (unsigned char)s[i] < 0x20 || s[i] == 0x7f || s[i] == '%')
			return 1;
		i += n;
	}
	return 0;
}

int escape_is_utf8(const char *s, size_t len)
{
	size_t i = 0;
	while (i < len && (unsigned char)s[i] < 0x80)	/* ASCII: the common case */
		i++;
	while (i < len) {
		size_t n = escape_utf8_len((const unsigned char *)s + i, len - i);
		if (!n)
			return 0;
		i += n;
	}
	return 1;
}

void escape_write(FILE *f, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t start = 0, i = 0;

	init_table();
	while (i < len) {
		unsigned char k = needs_escape[s[i]];
		if (!k) {
			i++;
			continue;
		}
		if (k == 2) {
			size_t n = escape_utf8_len(s + i, len - i);
			if (n) {
				i += n;
				continue;
			}
		}
		if (i > start)
			fwrite(s + start, 1, i - start, f);
		char esc[3] = { '%', hexdigits[s[i] >> 4], hexdigits[s[i] & 15] };
		fwrite(esc, 1, 3, f);
		start = ++i;
	}
	if (len > start)
		fwrite(s + start, 1, len - start, f);
}

char *escape_dup(const char *s, size_t len)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *m = open_memstream(&buf, &size);

	if (!m)
		marple_fatal(EXIT_DATA, "out of memory");
	escape_write(m, s, len);
	if (fclose(m) != 0)
		marple_fatal(EXIT_DATA, "out of memory");
	return buf;
}

int escape_hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

long escape_decode_inplace(char *s, size_t len, size_t *bad_at)
{
	char *p = memchr(s, '%', len);
	size_t out, i;

	if (!p)
		return (long)len;
	out = i = (size_t)(p - s);
	while (i < len) {
		if (s[i] != '%') {
			s[out++] = s[i++];
			continue;
		}
		int hi = i + 1 < len ? escape_hex_digit((unsigned char)s[i + 1]) : -1;
		int lo = i + 2 < len ? escape_hex_digit((unsigned char)s[i + 2]) : -1;
		if (hi < 0 || lo < 0) {
			if (bad_at)
				*bad_at = i;
			return -1;
		}
		s[out++] = (char)(hi << 4 | lo);
		i += 3;
	}
	return (long)out;
}

void escape_show(FILE *f, struct mstr m)
{
	for (size_t i = 0; i < m.len; i++) {
		unsigned char c = (unsigned char)m.s[i];
		if (c < 0x20 || c == 0x7f || c == '\\')
			fprintf(f, "\\x%02x", c);
		else
			putc(c, f);
	}
}
