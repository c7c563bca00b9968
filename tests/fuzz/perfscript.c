/* perfscript — libFuzzer target for the perf-script parser (lib/format/perfscript.c)
 * and the line reader (lib/format/lines.c).
 *
 * Input: one byte of options (pid, tid, kernel, jit, addrs, event filter),
 * then `perf script` text.  Beyond no crash/leak/UB: the whole-buffer parse
 * (line by line) and marple-fold's through lib/lines (whole samples at once
 * where they can be) must give the same samples and bad lines, every
 * sample has a weight, and samples + bad lines never exceed what the input
 * could hold.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lines.h"
#include "perfscript.h"

static void on_sample(void *ctx, const char *stack, size_t len, uint64_t weight)
{
	FILE *d = ctx;
	if (len && !stack)
		abort();
	fprintf(d, "%llu %zu:", (unsigned long long)weight, len);
	fwrite(stack, 1, len, d);
	fputc('\n', d);
}

static void on_bad(void *ctx, unsigned long lineno, const char *reason)
{
	if (lineno == 0 || !reason || !*reason)
		abort();
	fprintf(ctx, "bad %lu %s\n", lineno, reason);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfscript_opts o = { 0 };
	char *d1 = NULL, *d2 = NULL;
	size_t l1 = 0, l2 = 0;

	if (size < 1)
		return 0;
	o.pid = data[0] & 1;
	o.tid = data[0] & 2;
	o.kernel = data[0] & 4;
	o.jit = data[0] & 8;
	o.addrs = data[0] & 16;
	o.event_filter = (data[0] & 32) ? "cycles" : (data[0] & 64) ? "cpu-clock:" : NULL;
	const char *buf = (const char *)data + 1;
	size_t len = size - 1;

	FILE *dig1 = open_memstream(&d1, &l1);
	struct perfscript *p = perfscript_new(&o, on_sample, on_bad, dig1);
	uint64_t n1 = perfscript_parse_buffer(p, buf, len);
	if (n1 != perfscript_samples(p) || n1 > len / 2 + 1)
		abort();
	if (!perfscript_event(p) || !perfscript_other_event(p))
		abort();
	perfscript_free(p);
	fclose(dig1);

	/* The same text through lib/lines as marple-fold reads it: whole
	 * samples at once where they can be, other lines one by one. */
	FILE *in = len ? fmemopen((void *)buf, len, "r") : fopen("/dev/null", "r");
	FILE *dig2 = open_memstream(&d2, &l2);
	struct lines *ln = lines_new(in, "fuzz");
	p = perfscript_new(&o, on_sample, on_bad, dig2);
	const char *s;
	size_t sl;
	int rc;
	for (;;) {
		unsigned long nl;
		s = lines_buffered(ln, &sl);
		sl = perfscript_whole_samples(p, s, sl, lines_lineno(ln) + 1, &nl);
		lines_skip(ln, sl, nl);
		if ((rc = lines_next(ln, &s, &sl)) != 1)
			break;
		perfscript_line(p, s, sl, lines_lineno(ln));
	}
	if (rc < 0)
		abort();
	perfscript_finish(p);
	uint64_t n2 = perfscript_samples(p);
	perfscript_free(p);
	lines_free(ln);
	fclose(in);
	fclose(dig2);
	if (n1 != n2 || l1 != l2 || memcmp(d1, d2, l1) != 0) {
		fprintf(stderr, "perfscript fuzz: buffer parse and line parse differ (%llu vs %llu samples)\n",
			(unsigned long long)n1, (unsigned long long)n2);
		abort();
	}
	free(d1);
	free(d2);
	return 0;
}
