/* framedesc — libFuzzer target for the frame descriptions of stack
 * trailers (lib/format/framedesc.c, marple-format(5) "frames").
 *
 * Input: any bytes, parsed as a trailer's JSON; whatever jansson accepts is
 * given to framedesc_add twice (the second must change nothing: the first
 * description wins), then every key is looked up.  A description must have
 * a kind, no empty file (none instead), and a Python name's
 * function never longer than the name.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "framedesc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t err;
	json_t *tr = json_loadb((const char *)data, size, JSON_DECODE_ANY, &err);
	struct framedesc *fd = framedesc_new();

	if (tr) {
		framedesc_add(fd, tr);
		size_t n = framedesc_count(fd);
		framedesc_add(fd, tr);
		if (framedesc_count(fd) != n)
			abort();
		json_t *frames = json_object_get(tr, "frames"), *v;
		const char *key;
		json_object_foreach(frames, key, v) {
			const struct framedesc_frame *f = framedesc_get(fd, key, strlen(key));
			if (!f)
				continue;
			if (!f->kind || (f->file && !f->file_len))
				abort();
			if (framedesc_function_len(f, key, strlen(key)) > strlen(key))
				abort();
		}
		json_decref(tr);
	}
	/* a name never described, and raw bytes as a name */
	if (framedesc_get(fd, (const char *)data, size) && !framedesc_count(fd))
		abort();
	framedesc_free(fd);
	return 0;
}
