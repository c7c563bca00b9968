/* test_intern.c — the string table: ids in order of first appearance, the
 * same id for the same bytes (NUL bytes included), stable across rehashing;
 * the arena of all strings as a string table. */
#include <stdio.h>
#include <string.h>

#include "intern.h"
#include "test.h"

int main(void)
{
	test_plan(13);
	struct intern *t = intern_new();
	char buf[32];
	size_t len;
	int ok = 1;

	test_cond("intern: first id is 0", intern_get(t, "bash", 4) == 0);
	test_cond("intern: same bytes, same id", intern_get(t, "bash", 4) == 0);
	test_cond("intern: next name, next id", intern_get(t, "python3", 7) == 1);
	test_cond("intern: NUL bytes count", intern_get(t, "a\0b", 3) == 2 && intern_get(t, "a\0c", 3) == 3);
	test_cond("intern: empty string", intern_get(t, "", 0) == 4 && intern_get(t, "", 0) == 4);
	for (int i = 0; i < 100000; i++) {
		int n = snprintf(buf, sizeof(buf), "name%d", i);
		ok &= intern_get(t, buf, (size_t)n) == (uint32_t)(5 + i);
	}
	test_cond("intern: 100000 names through rehashing", ok);
	ok = 1;
	for (int i = 0; i < 100000; i += 997) {
		int n = snprintf(buf, sizeof(buf), "name%d", i);
		const char *s = intern_str(t, (uint32_t)(5 + i), &len);
		ok &= len == (size_t)n && !memcmp(s, buf, len) && s[len] == 0 &&
		      intern_get(t, buf, (size_t)n) == (uint32_t)(5 + i);
	}
	test_cond("intern: strings and ids kept", ok);
	test_cond("intern: count", intern_count(t) == 100005);
	const char *s = intern_str(t, 2, &len);
	test_cond("intern: string with NUL returned whole", len == 3 && !memcmp(s, "a\0b", 3));
	ok = 1;
	for (int i = 0; i < 100000; i += 991) {	/* the batch interface: the same ids */
		int n = snprintf(buf, sizeof(buf), "name%d", i);
		uint32_t h = intern_hash(buf, (size_t)n);
		intern_prefetch(t, h, 0);
		intern_prefetch(t, h, 1);
		ok &= intern_get_hashed(t, buf, (size_t)n, h) == (uint32_t)(5 + i);
	}
	test_cond("intern: lookups by hash find the same ids", ok && intern_get_hashed(t, "new", 3, intern_hash("new", 3)) == 100005);
	test_cond("intern: early ids still found", intern_get(t, "bash", 4) == 0 && intern_get(t, "python3", 7) == 1);
	intern_free(t);

	t = intern_new();
	intern_get(t, "ab", 2);
	intern_get(t, "", 0);
	intern_get(t, "cde", 3);
	intern_get(t, "ab", 2);
	s = intern_arena(t, &len);
	test_cond("intern: the arena holds each string once, NUL-terminated, in id order",
		  len == 8 && !memcmp(s, "ab\0\0cde\0", 8));
	test_cond("intern: offsets into the arena",
		  intern_offset(t, 0) == 0 && intern_offset(t, 1) == 3 && intern_offset(t, 2) == 4);
	intern_free(t);
	return test_report();
}
