/* bpfmap.h — reading BPF maps from user space the way the collectors do at
 * the end of a capture: every element of a hash map, or one per-CPU counter
 * summed over the CPUs.
 *
 *   static void one(const void *key, const void *value, void *arg) { ... }
 *   uint64_t n = bpfmap_each(bpf_map__fd(skel->maps.counts), sizeof(struct stack_key),
 *                            sizeof(uint64_t), one, NULL);
 *   uint64_t lost = bpfmap_percpu_sum(bpf_map__fd(skel->maps.counts), 0);
 */
#ifndef MARPLE_BPFMAP_H
#define MARPLE_BPFMAP_H

#include <stddef.h>
#include <stdint.h>

/* Call fn for each element of the map (keys of key_size bytes, values of
 * value_size): the one walker of BPF maps, in batches of elements where the
 * kernel can (one at a time where not); an element deleted meanwhile is
 * passed over.  Returns how many fn was called for. */
uint64_t bpfmap_each(int fd, size_t key_size, size_t value_size,
		     void (*fn)(const void *key, const void *value, void *arg), void *arg);

/* The sum over the CPUs of the u64 at key of a per-CPU array; 0 if unreadable. */
uint64_t bpfmap_percpu_sum(int fd, uint32_t key);

#endif
