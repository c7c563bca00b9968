/* bpfmap.c — walking hash maps and summing per-CPU counters (see bpfmap.h). */
#include "bpfmap.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdlib.h>

#include "util.h"

uint64_t bpfmap_each(int fd, size_t key_size, size_t value_size,
		     void (*fn)(const void *key, const void *value, void *arg), void *arg)
{
	char *key = marple_malloc(key_size), *next = marple_malloc(key_size), *value = marple_malloc(value_size);
	void *prev = NULL;
	uint64_t n = 0;

	while (bpf_map_get_next_key(fd, prev, next) == 0) {
		char *t = key;
		key = next;
		next = t;
		prev = key;
		if (bpf_map_lookup_elem(fd, key, value) != 0)
			continue;
		fn(key, value, arg);
		n++;
	}
	free(key);
	free(next);
	free(value);
	return n;
}

uint64_t bpfmap_percpu_sum(int fd, uint32_t key)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t sum = 0;

	if (ncpu <= 0)
		return 0;
	uint64_t *v = marple_calloc((size_t)ncpu, sizeof(uint64_t));
	if (bpf_map_lookup_elem(fd, &key, v) == 0)
		for (int i = 0; i < ncpu; i++)
			sum += v[i];
	free(v);
	return sum;
}
