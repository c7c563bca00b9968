/* test_framedescriber.c — lib/collect/framedescriber.c: a native or inline
 * frame's line is its address's, and part of its identity: one function at
 * two lines is two frames of one name (the first the run met untagged, the
 * other tagged), each described at its own line; the same line again is the
 * same frame, whether told by the same pointers or by equal strings; a new
 * section keeps the run's first line as the untagged one. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "framedescriber.h"
#include "sourceframes.h"
#include "syms.h"
#include "test.h"

/* The trailer's description of key in fd (a new reference), or NULL. */
static json_t *described(const struct framedescriber *fd, const char *key)
{
	json_t *trailer = json_object();
	framedescriber_trailer_add(fd, trailer);
	json_t *d = json_object_get(json_object_get(trailer, "frames"), key);
	json_incref(d);
	json_decref(trailer);
	return d;
}

/* key's description's integer member, or -1. */
static json_int_t member(const struct framedescriber *fd, const char *key, const char *name)
{
	json_t *d = described(fd, key);
	json_int_t v = json_is_integer(json_object_get(d, name)) ? json_integer_value(json_object_get(d, name)) : -1;
	json_decref(d);
	return v;
}

static const char *tagged(char *buf, size_t len, const char *name, uint32_t tag)
{
	snprintf(buf, len, "%s#%08" PRIx32, name, tag);
	return buf;
}

int main(void)
{
	static const char spin[] = "spin", mix[] = "mix", src[] = "twolines.c";
	char copy[] = "twolines.c", key[64];
	struct syms_frame fr = { .name = spin, .kind = SYMS_KIND_NATIVE, .module = "twolines",
				 .path = "/bin/twolines", .build_id = "ab", .file_offset = 0x1190, .sym_offset = 0x10 };
	struct sourceframes_frame at28 = { spin, src, 28 }, at29 = { spin, src, 29 }, at29_copy = { spin, copy, 29 };

	test_plan(14);
	struct framedescriber *fd = framedescriber_new(0);
	uint32_t first = framedescriber_user(fd, spin, &fr, &at28);
	uint32_t other = framedescriber_user(fd, spin, &fr, &at29);
	test_cond("native: the first line met is the name", first == 0);
	test_cond("native: another line is the name tagged", other != 0);
	test_cond("native: that line again, by pointers: the same tag", framedescriber_user(fd, spin, &fr, &at29) == other);
	framedescriber_forget_names(fd);
	test_cond("native: that line again, by equal strings: the same tag",
		  framedescriber_user(fd, spin, &fr, &at29_copy) == other);
	test_cond("native: the first line again: untagged", framedescriber_user(fd, spin, &fr, &at28) == 0);
	test_cond("trailer: spin at 28", member(fd, "spin", "source_line") == 28);
	test_cond("trailer: spin#tag at 29", member(fd, tagged(key, sizeof(key), spin, other), "source_line") == 29);

	uint32_t mix2 = framedescriber_inline(fd, mix, src, 2), mix3 = framedescriber_inline(fd, mix, src, 3);
	test_cond("inline: the first line untagged, another tagged", mix2 == 0 && mix3 != 0);
	test_cond("inline: each described at its line",
		  member(fd, "mix", "line") == 2 && member(fd, tagged(key, sizeof(key), mix, mix3), "line") == 3);
	test_cond("inline: a line again: its tag", framedescriber_inline(fd, mix, copy, 3) == mix3);
	struct syms_frame out_of_line = fr;
	struct sourceframes_frame mix_at2 = { mix, src, 2 };
	out_of_line.name = mix;
	test_cond("inline and out of line at one file:line: two frames",
		  framedescriber_user(fd, mix, &out_of_line, &mix_at2) != 0);

	framedescriber_next_section(fd);
	test_cond("next section: a line met later in the run keeps its tag",
		  framedescriber_user(fd, spin, &fr, &at29) == other);
	json_t *untagged = described(fd, "spin");
	test_cond("next section: the name is not described as the tagged line's", untagged == NULL);
	json_decref(untagged);
	test_cond("next section: the run's first line is the name again", framedescriber_user(fd, spin, &fr, &at28) == 0);
	framedescriber_free(fd);
	return test_report();
}
