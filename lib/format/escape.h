/* escape.h — the %XX escaping of names in marple records, and counted strings.
 *
 * Escaped: '%' ',' ';' '#', control bytes (0x00-0x1f, 0x7f) and every byte
 * that is not part of valid UTF-8.  Everything else, spaces and valid UTF-8
 * included, is written as is, so ordinary names stay readable and greppable.
 */
#ifndef MARPLE_ESCAPE_H
#define MARPLE_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* A counted byte string; may contain NUL. */
struct mstr {
	const char *s;
	size_t len;
};

#define MSTR(cstr) ((struct mstr){ (cstr), sizeof(cstr) - 1 })
struct mstr escape_mstr_c(const char *s);
int escape_mstr_eq(struct mstr a, const char *cstr);

/* Write s escaped to f. */
void escape_write(FILE *f, const char *s, size_t len);
/* Escape into a malloc'd NUL-terminated string. */
char *escape_dup(const char *s, size_t len);
/* Decode in place; returns the decoded length, or -1 on a bad %XX (*bad_at set
 * to the offset of the '%'). */
long escape_decode_inplace(char *s, size_t len, size_t *bad_at);
/* The value (0-15) of the hex digit c, or -1. */
int escape_hex_digit(int c);
/* A decoded name for people at a terminal: printable bytes as they are,
 * control bytes and backslashes as \xNN (a traced program's name cannot
 * move the cursor or clear the screen). */
void escape_show(FILE *f, struct mstr m);
/* 1 if s[0..len) is not plain text as headers and other formats want it
 * (invalid UTF-8, a control byte, or '%', which would make escaping ambiguous):
 * such a name is written escape_dup()'d there. */
int escape_needed(const char *s, size_t len);
/* 1 if s[0..len) is valid UTF-8 throughout (control bytes and '%' included):
 * text that formats wanting UTF-8 strings (JSON, protobuf) take as it is,
 * where a name that is not is written escape_dup()'d. */
int escape_is_utf8(const char *s, size_t len);
/* Length of the valid UTF-8 sequence starting at s (1-4), or 0 if invalid. */
size_t escape_utf8_len(const unsigned char *s, size_t avail);

#endif
