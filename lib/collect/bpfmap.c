/* bpfmap.c — walking hash maps, summing per-CPU counters, mapping arrays
 * as far as they are used, and an object's .rodata by name (see bpfmap.h). */
#include "bpfmap.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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
	/* a batch is one stretch in the kernel that nothing preempts here
	 * (preempt=none): memleak's sweep read its 500,000 allocations 4096 at
	 * a time, ~2.5 ms each, and the real-time drainer on that CPU woke
	 * 1.5 ms late from a 2 ms sleep; 256 at a time it wakes on time */
	enum { CHUNK = 256 };
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

int bpfmap_view_open(struct bpfmap_view *v, int fd, int prot)
{
	struct bpf_map_info info = { 0 };
	uint32_t info_len = sizeof(info);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	*v = (struct bpfmap_view){ .fd = fd, .prot = prot };
	if (bpf_obj_get_info_by_fd(fd, &info, &info_len) != 0)
		return -1;
	if (info.type != BPF_MAP_TYPE_ARRAY || !(info.map_flags & BPF_F_MMAPABLE)) {
		errno = EINVAL;
		return -1;
	}
	/* the kernel's element: the value rounded up to 8 bytes */
	v->len = ((size_t)info.max_entries * ((info.value_size + 7) & ~7u) + page - 1) & ~(page - 1);
	void *p = mmap(NULL, v->len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	v->base = p;
	return 0;
}

int bpfmap_view_window(struct bpfmap_view *v, size_t start, size_t end)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (!v->base || start >= end || end > v->len) {
		errno = ENOSPC;
		return -1;
	}
	start &= ~(page - 1);
	end = (end + page - 1) & ~(page - 1);
	/* over the reservation, at the same offset of the array */
	if (mmap(v->base + start, end - start, v->prot, MAP_SHARED | MAP_FIXED, v->fd, (off_t)start) == MAP_FAILED)
		return -1;
	return 0;
}

int bpfmap_view_reach(struct bpfmap_view *v, size_t end)
{
	if (end <= v->mapped)
		return 0;
	if (!v->base || end > v->len) {
		errno = ENOSPC;
		return -1;
	}
	size_t to = (end + BPFMAP_VIEW_STEP - 1) / BPFMAP_VIEW_STEP * BPFMAP_VIEW_STEP;
	if (to > v->len)
		to = v->len;
	if (bpfmap_view_window(v, v->mapped, to) != 0)
		return -1;
	v->mapped = to;
	return 0;
}

void bpfmap_view_let_go(struct bpfmap_view *v)
{
	if (v->base &&
	    mmap(v->base, v->len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) != MAP_FAILED)
		v->mapped = 0;
}

void bpfmap_view_close(struct bpfmap_view *v)
{
	if (v->base)
		munmap(v->base, v->len);
	*v = (struct bpfmap_view){ .fd = -1 };
}

/* Where rodata variable name of obj is in its .rodata (its offset), with
 * the map; -1 if it has none. */
static long rodata_var(struct bpf_object *obj, const char *name, struct bpf_map **map, size_t *size)
{
	struct btf *btf = bpf_object__btf(obj);
	int sec = btf ? btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC) : -1;

	*map = bpf_object__find_map_by_name(obj, ".rodata");
	if (sec < 0 || !*map || !bpf_map__initial_value(*map, size))
		return -1;
	const struct btf_type *t = btf__type_by_id(btf, (__u32)sec);
	const struct btf_var_secinfo *v = btf_var_secinfos(t);
	for (unsigned i = 0; i < btf_vlen(t); i++, v++) {
		const struct btf_type *var = btf__type_by_id(btf, v->type);
		if (strcmp(btf__name_by_offset(btf, var->name_off), name) == 0 && v->offset + v->size <= *size &&
		    v->size == sizeof(uint32_t))
			return (long)v->offset;
	}
	return -1;
}

int bpfmap_fd(struct bpf_object *obj, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, name);
	return m ? bpf_map__fd(m) : -1;
}

/* The value of obj's rodata uint32_t name (set before load), or dflt. */
uint32_t bpfmap_rodata_get(struct bpf_object *obj, const char *name, uint32_t dflt)
{
	struct bpf_map *map;
	size_t size;
	long off = rodata_var(obj, name, &map, &size);
	uint32_t v = dflt;

	if (off >= 0)
		memcpy(&v, (const char *)bpf_map__initial_value(map, &size) + off, sizeof(v));
	return v;
}

/* Set obj's rodata uint32_t name, before load (as a skeleton's rodata does). */
void bpfmap_rodata_set(struct bpf_object *obj, const char *name, uint32_t value)
{
	struct bpf_map *map;
	size_t size;
	long off = rodata_var(obj, name, &map, &size);

	if (off < 0)
		return;
	char *copy = marple_malloc(size);
	memcpy(copy, bpf_map__initial_value(map, &size), size);
	memcpy(copy + off, &value, sizeof(value));
	bpf_map__set_initial_value(map, copy, size);
	free(copy);
}
