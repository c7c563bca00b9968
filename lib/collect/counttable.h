/* counttable.h — a stack collector's count table (bpf/stacks.bpf.h's
 * STACKS_COUNT_MAPS: an array of { owner, key, value } entries, a half a
 * set, an entry claimed by its key's hash) from user space: mapped in
 * place, a set's entries read (and cleared, once the set is idle), sums
 * added where the programs add theirs.
 *
 *   struct counttable t;
 *   if (counttable_open(&t, bpf_map__fd(skel->maps.counts), sizeof(key), sizeof(value)) == 0) {
 *           counttable_add(&t, 0, &key, &value);          // claimed if new
 *           counttable_each(&t, 0, 0, one, arg);          // one(key, value, arg)
 *           counttable_close(&t);
 *   }
 */
#ifndef MARPLE_COUNTTABLE_H
#define MARPLE_COUNTTABLE_H

#include <stddef.h>
#include <stdint.h>

#include "bpfmap.h"

struct counttable {
	struct bpfmap_view view;	/* the whole table, mapped */
	size_t key_size, value_size, entry_size;
	uint32_t half;			/* entries of one set */
};

/* Map the count table fd, whose entries hold keys of key_size bytes and
 * values of value_size (u64 sums): 0, or -1 (errno; EINVAL when the
 * entries are not of that size). */
int counttable_open(struct counttable *t, int fd, size_t key_size, size_t value_size);
/* fn(key, value, arg) for each entry of set s (0 or 1); clear: each entry
 * freed after (the set idle: no program writes into it).  How many. */
uint64_t counttable_each(struct counttable *t, int s, int clear,
			 void (*fn)(const void *key, const void *value, void *arg), void *arg);
/* value (value_size / 8 sums) added to key's entry in set s, claimed as a
 * program claims it if new: 0, or -1 when the set is full there. */
int counttable_add(struct counttable *t, int s, const void *key, const uint64_t *value);
void counttable_close(struct counttable *t);

#endif
