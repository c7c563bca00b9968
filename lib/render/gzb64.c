/* gzb64.c — gzip + base64 into a JS string literal (see gzb64.h). */
#include "gzb64.h"

#include <stdint.h>
#include <zlib.h>

#include "util.h"

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

struct b64out {
	FILE *f;
	unsigned char carry[3];
	int ncarry;
};

static void put3(FILE *f, const unsigned char *p, int n)
{
	uint32_t v = (uint32_t)p[0] << 16 | (n > 1 ? (uint32_t)p[1] << 8 : 0) | (n > 2 ? p[2] : 0);
	putc(b64[v >> 18 & 63], f);
	putc(b64[v >> 12 & 63], f);
	putc(n > 1 ? b64[v >> 6 & 63] : '=', f);
	putc(n > 2 ? b64[v & 63] : '=', f);
}

static void b64_bytes(struct b64out *o, const unsigned char *p, size_t n)
{
	while (n && o->ncarry) {	/* finish a group begun by the last chunk */
		o->carry[o->ncarry++] = *p++;
		n--;
		if (o->ncarry == 3) {
			put3(o->f, o->carry, 3);
			o->ncarry = 0;
		}
	}
	for (; n >= 3; p += 3, n -= 3)
		put3(o->f, p, 3);
	while (n--)
		o->carry[o->ncarry++] = *p++;
}

void gzb64_write(FILE *f, const void *data, size_t len, int level)
{
	unsigned char out[1 << 16];
	struct b64out o = { .f = f };
	z_stream zs = { 0 };
	int rc;

	if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		marple_fatal(EXIT_DATA, "cannot start gzip compression");
	putc('"', f);
	zs.next_in = (unsigned char *)data;
	do {
		/* zlib counts input in uInt: feed a huge buffer in pieces */
		size_t done = (size_t)(zs.next_in - (const unsigned char *)data);
		size_t left = len - done;
		zs.avail_in = left > (1u << 30) ? (1u << 30) : (uInt)left;
		int flush = left == zs.avail_in ? Z_FINISH : Z_NO_FLUSH;
		do {
			zs.next_out = out;
			zs.avail_out = sizeof(out);
			rc = deflate(&zs, flush);
			if (rc == Z_STREAM_ERROR)
				marple_fatal(EXIT_DATA, "gzip compression failed");
			b64_bytes(&o, out, sizeof(out) - zs.avail_out);
		} while (zs.avail_out == 0);
	} while (rc != Z_STREAM_END);
	if (o.ncarry)
		put3(f, o.carry, o.ncarry);
	putc('"', f);
	deflateEnd(&zs);
}
