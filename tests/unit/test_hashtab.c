/* test_hashtab.c — the line hash: found as a line's end is searched
 * (hashtab_hash_to_nl) it is the hash of the bytes before the end
 * (hashtab_hash_line), at every length and alignment, wherever the read
 * stops; it tells lines apart by every byte and by length. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "hashtab.h"
#include "test.h"

/* buf[at, at + len) random but no '\n', then '\n' and more bytes. */
static void line_at(unsigned char *buf, size_t size, size_t at, size_t len, uint64_t *seed)
{
	for (size_t i = 0; i < size; i++) {
		*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
		buf[i] = (unsigned char)(*seed >> 56);
		if (i >= at && i < at + len && buf[i] == '\n')
			buf[i] = 0x8a;	/* high bit: a borrow test must not take it for '\n' */
	}
	buf[at + len] = '\n';
}

int main(void)
{
	test_plan(6);
	unsigned char buf[512];
	uint64_t seed = 1;
	int same = 1, lens = 1, tight = 1, none = 1;

	for (size_t len = 0; len <= 300; len++)
		for (size_t at = 0; at < 16; at++) {
			size_t n = 0;
			line_at(buf, sizeof(buf), at, len, &seed);
			uint64_t h = hashtab_hash_to_nl(buf + at, sizeof(buf) - at, &n);
			same &= h == hashtab_hash_line(buf + at, len);
			lens &= n == len;
			/* the read ending just after the '\n': the tail found by memchr */
			tight &= hashtab_hash_to_nl(buf + at, len + 1, &n) == h && n == len;
			none &= (hashtab_hash_to_nl(buf + at, len, &n), n == SIZE_MAX);
		}
	test_cond("hash_to_nl: hash_line of the bytes before '\\n', lengths 0-300, 16 alignments", same);
	test_cond("hash_to_nl: the length up to '\\n'", lens);
	test_cond("hash_to_nl: the same when the read ends at the '\\n'", tight);
	test_cond("hash_to_nl: no '\\n' read: length SIZE_MAX", none);

	int differ = 1;
	for (size_t len = 1; len <= 64; len++) {
		memset(buf, 'a', len);
		uint64_t h = hashtab_hash_line(buf, len);
		for (size_t i = 0; i < len; i++) {
			buf[i] = 'b';
			differ &= hashtab_hash_line(buf, len) != h;
			buf[i] = 'a';
		}
	}
	test_cond("hash_line: one byte changed, another hash (lengths 1-64)", differ);
	memset(buf, 0, 64);
	int by_len = 1;
	for (size_t len = 1; len <= 64; len++)
		by_len &= hashtab_hash_line(buf, len) != hashtab_hash_line(buf, len - 1);
	test_cond("hash_line: NUL bytes count: lengths 0-64 of zeros differ", by_len);
	return test_report();
}
