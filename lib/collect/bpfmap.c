/* bpfmap.c — walking hash maps and summing per-CPU counters (see bpfmap.h). */
#include "bpfmap.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* One element at a time: two bpf() calls each (kernels without batches). */
static uint64_t each_by_key(int fd, size_t key_size, size_t value_size,
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

uint64_t bpfmap_each(int fd, size_t key_size, size_t value_size,
		     void (*fn)(const void *key, const void *value, void *arg), void *arg)
{
	enum { CHUNK = 4096 };
	char *keys = marple_malloc(CHUNK * key_size), *values = marple_malloc(CHUNK * value_size);
	uint32_t token = 0;	/* where the kernel left off: a bucket (hash) or index (array) */
	uint64_t n = 0;
	int first = 1, done = 0;

	/* in batches of CHUNK elements: two bpf() calls per element otherwise */
	while (!done) {
		LIBBPF_OPTS(bpf_map_batch_opts, opts);
		uint32_t count = CHUNK;
		int rc = bpf_map_lookup_batch(fd, first ? NULL : &token, &token, keys, values, &count, &opts);
		if (rc < 0 && errno != ENOENT) {
			if (first)	/* a kernel without batch operations */
				break;
			marple_warn("reading a BPF map stopped after %" PRIu64 " elements: %s", n, strerror(errno));
			count = 0;
		}
		done = rc < 0;
		first = 0;
		for (uint32_t i = 0; i < count; i++)
			fn(keys + i * key_size, values + i * value_size, arg);
		n += count;
	}
	free(keys);
	free(values);
	return first ? each_by_key(fd, key_size, value_size, fn, arg) : n;
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
