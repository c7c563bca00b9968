/* import — libFuzzer target for marple-import (filters/marple-import.c), the
 * converter of the original Python MARPLE's files.
 *
 * Input: any bytes, read as a Python MARPLE data file.  Besides "no crash, no
 * leak, no undefined behaviour", whatever it writes must be a valid marple
 * stream: the stream reader reads it back with no error.
 *
 *   build/fuzz/import -max_total_time=60 build/fuzz/corpus/import tests/fuzz/corpus/import
 */
#define main marple_import_main
#include "../../filters/marple-import.c"
#undef main

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	char *text = NULL;
	size_t text_len = 0;

	if (!init) {
		marple_progname = "marple-import";
		init = 1;
	}
	if (size == 0)
		return 0;
	FILE *in = fmemopen((void *)data, size, "r");
	out = open_memstream(&text, &text_len);
	if (!in || !out)
		abort();
	memset(&cur, 0, sizeof(cur));
	nsections = bad = lineno = 0;
	FILE *saved = stderr;
	stderr = fopen("/dev/null", "w");
	import_stream(in, "fuzz");
	fclose(stderr);
	stderr = saved;
	fclose(in);
	fclose(out);

	/* the output must read back as a valid stream */
	FILE *back = fmemopen(text, text_len ? text_len : 1, "r");
	if (text_len && back) {
		struct stream_reader *r = stream_reader_new(back, "import-output");
		enum stream_item it;
		while ((it = stream_reader_next(r)) != STREAM_EOF)
			if (it == STREAM_ERROR) {
				fprintf(stderr, "invalid output: %s\n--\n%.*s\n", stream_reader_error(r), (int)text_len, text);
				abort();
			}
		stream_reader_free(r);
	}
	if (back)
		fclose(back);
	free(text);
	return 0;
}
