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
/* Many lookups at once (a stack's frames): each one's slot, then its bytes,
 * are a cache miss when the table is bigger than the cache, and asking for
 * them all before the first lookup waits for them together, not one by one.
 *   for each i: h[i] = intern_hash(s[i], len[i]); intern_prefetch(t, h[i], 0);
 *   for each i: intern_prefetch(t, h[i], 1);
 *   for each i: id[i] = intern_get_hashed(t, s[i], len[i], h[i]); */
uint32_t intern_hash(const char *s, size_t len);
/* stage 0: the slot of h; stage 1: the bytes of the name in it */
void intern_prefetch(const struct intern *t, uint32_t h, int stage);
uint32_t intern_get_hashed(struct intern *t, const char *s, size_t len, uint32_t h);
/* The string of an id (NUL-terminated copy; len may be NULL). */
const char *intern_str(const struct intern *t, uint32_t id, size_t *len);
size_t intern_count(const struct intern *t);
/* All strings one after the other in id order, each NUL-terminated (a string
 * table as file formats want it); *len its length.  Valid until the next add. */
const char *intern_arena(const struct intern *t, size_t *len);
/* Where the string of an id starts in the arena. */
size_t intern_offset(const struct intern *t, uint32_t id);

#endif
