/* framedesc.h — what stack sections' frames are (marple-format(5), the
 * trailer's "frames"): each frame name's kind (native, kernel, python, jit,
 * marker), file, build id, offset and line, gathered from every stack
 * section's trailer read.  Readers that draw or export frames ask it by the
 * frame's key (stream_frame_key: the decoded name, and the tag of a frame
 * written with one); a frame no trailer described has no description (NULL).
 *
 *   struct framedesc *fd = framedesc_new();
 *   on each stack section's trailer: framedesc_add(fd, stream_reader_trailer(r));
 *   struct mstr k = stream_frame_key(stack, i);
 *   const struct framedesc_frame *f = framedesc_get(fd, k.s, k.len);  // NULL: not described
 *   framedesc_free(fd);
 */
#ifndef MARPLE_FRAMEDESC_H
#define MARPLE_FRAMEDESC_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct framedesc_frame {
	const char *kind;		/* never NULL: "native" when the trailer named none */
	const char *file;		/* NULL: none (decoded, as in records) */
	size_t file_len;
	const char *build_id;		/* NULL: none */
	uint64_t offset;		/* where the function starts in file, if has_offset */
	int has_offset;
	int64_t line;			/* 0: none */
	const char *source;		/* a native frame's source file; NULL: none */
	size_t source_len;
	int64_t source_line;		/* its line there; 0: none */
};

struct framedesc;
struct framedesc *framedesc_new(void);
void framedesc_free(struct framedesc *fd);
/* Take the "frames" of a stack section's trailer (if any); the first
 * description of a name wins.  Members of the wrong type are ignored. */
void framedesc_add(struct framedesc *fd, json_t *trailer);
/* The description of the frame whose key is s[0..len) (stream_frame_key:
 * its decoded name, and its tag if it has one), or NULL (fd may be NULL).
 * Valid until the next framedesc_add or framedesc_get. */
const struct framedesc_frame *framedesc_get(struct framedesc *fd, const char *s, size_t len);
/* Names described so far. */
size_t framedesc_count(const struct framedesc *fd);
/* The length of the function's name in frame name s[0..len) described by f:
 * a script's frame's name (framedesc_is_script) without the " (file:line)" it was written with
 * ("fib (/app/x.py:3)" -> "fib"), any other the whole. */
size_t framedesc_function_len(const struct framedesc_frame *f, const char *s, size_t len);
/* Where frame f is in source, if a trailer said: a script's or an inlined
 * function's file and line, a native frame's source and source_line.  1 and
 * *file, *len, *line (0: none) set, else 0 (f may be NULL). */
int framedesc_source(const struct framedesc_frame *f, const char **file, size_t *len, int64_t *line);
/* 1 if kind is k (f may be NULL: 0). */
int framedesc_is(const struct framedesc_frame *f, const char *k);
/* 1 if f is a function of a script an interpreter runs ("python", "php", "perl", "ruby"):
 * named "function (file:line)", its file a source file, not a mapping. */
int framedesc_is_script(const struct framedesc_frame *f);

#endif
