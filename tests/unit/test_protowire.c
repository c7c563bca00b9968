/* test_protowire.c — the protobuf wire writer: varints at their byte
 * boundaries, negative int64 as ten bytes, tags, strings, and nested messages
 * whose length needs one, two or three bytes (content moved up intact). */
#include <string.h>

#include "protowire.h"
#include "test.h"

static int bytes_are(const struct pbuf *p, const char *want, size_t n)
{
	return p->n == n && memcmp(p->b, want, n) == 0;
}

int main(void)
{
	struct pbuf b = { 0 };

	test_plan(8);

	protowire_varint(&b, 0), protowire_varint(&b, 127), protowire_varint(&b, 128), protowire_varint(&b, 300);
	test_cond("protowire: varints 0 127 128 300", bytes_are(&b, "\x00\x7f\x80\x01\xac\x02", 6));
	b.n = 0;
	protowire_varint(&b, UINT64_MAX);
	test_cond("protowire: 2^64-1 in ten bytes",
		  bytes_are(&b, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10));
	b.n = 0;
	protowire_int(&b, 1, -1);
	test_cond("protowire: int64 -1 is a ten-byte varint after tag 08",
		  bytes_are(&b, "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11));
	b.n = 0;
	protowire_uint(&b, 150, 1);
	test_cond("protowire: field 150 varint tag b0 09", bytes_are(&b, "\xb0\x09\x01", 3));
	b.n = 0;
	protowire_bytes(&b, 6, "cpu", 3);
	test_cond("protowire: string field", bytes_are(&b, "\x32\x03" "cpu", 5));

	b.n = 0;
	size_t m = protowire_begin(&b, 2);
	protowire_uint(&b, 1, 42);
	protowire_end(&b, m);
	test_cond("protowire: nested message, one length byte", bytes_are(&b, "\x12\x02\x08\x2a", 4));

	int ok = 1;
	size_t sizes[] = { 0, 127, 128, 16383, 16384, 70000 };
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		b.n = 0;
		protowire_raw(&b, "\x01", 1);
		m = protowire_begin(&b, 1);
		for (size_t i = 0; i < sizes[k]; i++)
			protowire_raw(&b, &(unsigned char){ (unsigned char)(i * 7) }, 1);
		protowire_end(&b, m);
		size_t hdr = sizes[k] < 128 ? 1 : sizes[k] < 16384 ? 2 : 3;
		ok &= b.n == 2 + hdr + sizes[k] && b.b[1] == 0x0a;
		size_t len = 0;
		for (size_t i = 0, shift = 0; i < hdr; i++, shift += 7)
			len |= (size_t)(b.b[2 + i] & 0x7f) << shift;
		ok &= len == sizes[k] && (b.b[2 + hdr - 1] & 0x80) == 0;
		for (size_t i = 0; i < sizes[k]; i++)
			ok &= b.b[2 + hdr + i] == (unsigned char)(i * 7);
	}
	test_cond("protowire: nested lengths of 1, 2 and 3 bytes, content intact", ok);

	b.n = 0;
	size_t outer = protowire_begin(&b, 4);
	size_t inner = protowire_begin(&b, 4);
	protowire_uint(&b, 1, 5);
	protowire_end(&b, inner);
	protowire_uint(&b, 2, 7);
	protowire_end(&b, outer);
	test_cond("protowire: messages nest", bytes_are(&b, "\x22\x06\x22\x02\x08\x05\x10\x07", 8));
	protowire_free(&b);
	return test_report();
}
