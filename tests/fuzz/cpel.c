/* cpel — libFuzzer target for the CPEL writer's input side (lib/render/cpel.c):
 * marple event sections fed in pieces, sorted in small runs (spilled to a
 * temporary file), merged and written as CPEL.
 *
 * Input: one byte of options (track mode, datum keys, run size, piece size),
 * then stream text.  Beyond no crash/leak/UB: feeding the same text in
 * pieces and in one buffer must give the same CPEL bytes, and a successful
 * conversion starts with the CPEL file header.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpel.h"

static char *convert(const struct cpel_opts *o, const char *buf, size_t len, size_t piece,
		     size_t *outlen, int *rc)
{
	char *out = NULL;
	FILE *f = open_memstream(&out, outlen);
	struct cpel_conv *c = cpel_conv_new(o);
	char *scratch = malloc(len ? len : 1);	/* feed uses its buffer as scratch */
	memcpy(scratch, buf, len);
	*rc = 0;
	for (size_t off = 0; off < len && *rc == 0; off += piece) {
		size_t n = len - off < piece ? len - off : piece;
		*rc = cpel_conv_feed(c, scratch + off, n);
	}
	if (*rc == 0)
		*rc = cpel_conv_finish(c);
	if (*rc == 0 && cpel_conv_events(c) > 0)
		*rc = cpel_conv_write(c, f);
	else if (*rc == 0)
		*rc = 1;	/* nothing to write */
	cpel_conv_free(c);
	free(scratch);
	fclose(f);
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const datums[] = { NULL, "comm", "next_comm,next_pid", "pid,comm,x" };
	struct cpel_opts o = { 0 };

	if (size < 1)
		return 0;
	o.track = (data[0] & 1) ? CPEL_TRACK_PID : CPEL_TRACK_EVENT;
	o.datum = datums[(data[0] >> 1) & 3];
	o.run_events = (data[0] & 8) ? 2 : 64;
	o.name = "fuzz";
	o.quiet = 1;
	size_t piece = (data[0] & 0x30) ? (size_t)((data[0] >> 4) & 3) * 7 : (size_t)-1;
	const char *buf = (const char *)data + 1;
	size_t len = size - 1;

	size_t l1, l2;
	int rc1, rc2;
	char *a = convert(&o, buf, len, (size_t)-1, &l1, &rc1);
	char *b = convert(&o, buf, len, piece, &l2, &rc2);
	/* Bytes 4-7 of the file header are the time of writing. */
	if (rc1 != rc2 || l1 != l2 || (l1 >= 8 && (memcmp(a, b, 4) != 0 || memcmp(a + 8, b + 8, l1 - 8) != 0))) {
		fprintf(stderr, "cpel fuzz: whole-buffer and piecewise feeding differ (rc %d/%d, %zu/%zu bytes)\n",
			rc1, rc2, l1, l2);
		abort();
	}
	if (rc1 == 0 && (l1 < 8 || a[0] != 0x01))
		abort();
	free(a);
	free(b);

	/* The library's own one-call entry point. */
	FILE *null = fopen("/dev/null", "w");
	(void)cpel_convert_buffer(buf, len, &o, null);
	fclose(null);
	return 0;
}
