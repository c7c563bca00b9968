/* framedescriber.h — what each frame name of a section stands for: its
 * kind (native, inline, kernel, python, jit, marker), file, build id,
 * offset and line; the trailer's "frames" and "build_ids" (marple-format(5),
 * read back by lib/format/framedesc.h).  A name
 * stands for the first code of that name the run met; other code of the
 * same name is told apart by an identity tag (a hash of all its
 * description says), written after the name in the records.  A native or
 * inline frame's source line is its address's, and part of what it is: a
 * function sampled at two lines is two frames of one name (one of them
 * tagged), each described at its line.
 *
 *   struct framedescriber *fd = framedescriber_new(with_addresses);
 *   uint32_t tag = framedescriber_user(fd, name, &syms_frame, source_or_NULL);
 *   framedescriber_describe(fd, "qualname (f.py:3)", "python", "f.py", 3);
 *   framedescriber_marker(fd, "[unknown]");     // unless described otherwise
 *   key = framedescriber_key(fd, name, tag, &len);  // the frame's key
 *   framedescriber_trailer_add(fd, trailer);
 *   framedescriber_next_section(fd);            // a new section: all told again
 */
#ifndef MARPLE_FRAMEDESCRIBER_H
#define MARPLE_FRAMEDESCRIBER_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct framedescriber;
struct syms_frame;
struct sourceframes_frame;

/* with_addresses: unnamed native frames keep their offset (--addresses) */
struct framedescriber *framedescriber_new(int with_addresses);
void framedescriber_free(struct framedescriber *fd);

/* name is kind code of file (NULL none) at line (0 none), unless the name
 * was described before (the first description of a name wins). */
void framedescriber_describe(struct framedescriber *fd, const char *name, const char *kind, const char *file,
			     int line);
/* name is a marker ("[unknown]", "[no unwind table]") unless described. */
void framedescriber_marker(struct framedescriber *fd, const char *name);
/* name is a kernel function unless described. */
void framedescriber_kernel(struct framedescriber *fd, const char *name);
/* A user frame named name: what the symbolizer answered for its address
 * (fr) and where its source says it is (at, or NULL).  Its identity tag: 0
 * when the name stands for it.  A symbol's name is its file's string: seen
 * again by pointer, it is the same code (until framedescriber_forget_names). */
uint32_t framedescriber_user(struct framedescriber *fd, const char *name, const struct syms_frame *fr,
			 const struct sourceframes_frame *at);
/* An inline frame named name at file:line (a function the compiler
 * inlined there, as the DWARF or Go table says): its identity tag, 0 when
 * the name stands for it.  name and file seen again by pointer, with the
 * same line, are the same code (until framedescriber_forget_names). */
uint32_t framedescriber_inline(struct framedescriber *fd, const char *name, const char *file, unsigned line);
/* The symbolizer let go of names: pointers seen may be reused. */
void framedescriber_forget_names(struct framedescriber *fd);

/* A frame's key: its name, or for a tagged frame the name, a NUL and the
 * tag (stream.h's stream_frame_key); valid until the next call. */
const char *framedescriber_key(struct framedescriber *fd, const char *name, uint32_t tag, size_t *len);

/* The section's "frames" and "build_ids" into trailer. */
void framedescriber_trailer_add(const struct framedescriber *fd, json_t *trailer);
void framedescriber_next_section(struct framedescriber *fd);

#endif
