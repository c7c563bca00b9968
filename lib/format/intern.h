/* intern.h — a table of distinct byte strings, each given a small id (0, 1, 2,
 * ... in order of first appearance): process names in the renderers.
 *
 *   struct intern *t = intern_new();
 *   uint32_t id = intern_get(t, "bash", 4);       -- 0, and 0 again next time
 *   size_t len; const char *s = intern_str(t, id, &len);
 */
#ifndef MARPLE_INTERN_H
#define MARPLE_INTERN_H

#include <stddef.h>
#include <stdint.h>

struct intern;

struct intern *intern_new(void);
void intern_free(struct intern *t);
/* The id of s[0..len) (may hold NUL bytes), adding it if new. */
uint32_t intern_get(struct intern *t, const char *s, size_t len);
/* The string of an id (NUL-terminated copy; len may be NULL). */
const char *intern_str(const struct intern *t, uint32_t id, size_t *len);
size_t intern_count(const struct intern *t);
/* All strings one after the other in id order, each NUL-terminated (a string
 * table as file formats want it); *len its length.  Valid until the next add. */
const char *intern_arena(const struct intern *t, size_t *len);
/* Where the string of an id starts in the arena. */
size_t intern_offset(const struct intern *t, uint32_t id);

#endif
