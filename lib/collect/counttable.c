/* counttable.c — a stack collector's count table from user space (counttable.h). */
#include "counttable.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <linux/types.h>
#include <string.h>
#include <sys/mman.h>

#include "stacks.h"

int counttable_open(struct counttable *t, int fd, size_t key_size, size_t value_size)
{
	struct bpf_map_info info = { 0 };
	uint32_t info_len = sizeof(info);

	memset(t, 0, sizeof(*t));
	t->key_size = key_size;
	t->value_size = value_size;
	t->entry_size = sizeof(uint64_t) + key_size + value_size;
	if (bpf_obj_get_info_by_fd(fd, &info, &info_len) != 0)
		return -1;
	/* two sets of whole entries, each as the programs lay it out */
	if (key_size % sizeof(uint64_t) || value_size % sizeof(uint64_t) || info.value_size != t->entry_size ||
	    info.max_entries < 2 || info.max_entries % 2) {
		errno = EINVAL;
		return -1;
	}
	t->half = info.max_entries / 2;
	if (bpfmap_view_open(&t->view, fd, PROT_READ | PROT_WRITE) != 0)
		return -1;
	if (bpfmap_view_reach(&t->view, (size_t)info.max_entries * t->entry_size) != 0) {
		counttable_close(t);
		return -1;
	}
	return 0;
}

static unsigned char *entry(const struct counttable *t, uint32_t i)
{
	return (unsigned char *)t->view.base + (size_t)i * t->entry_size;
}

uint64_t counttable_each(struct counttable *t, int s, int clear,
			 void (*fn)(const void *key, const void *value, void *arg), void *arg)
{
	uint64_t n = 0;

	for (uint32_t i = (uint32_t)s * t->half; i < ((uint32_t)s + 1) * t->half; i++) {
		unsigned char *e = entry(t, i);
		if (__atomic_load_n((uint64_t *)e, __ATOMIC_ACQUIRE) == 0)
			continue;
		fn(e + sizeof(uint64_t), e + sizeof(uint64_t) + t->key_size, arg);
		n++;
		if (clear)
			memset(e, 0, t->entry_size);
	}
	return n;
}

int counttable_add(struct counttable *t, int s, const void *key, const uint64_t *value)
{
	__u32 words[64];

	if (t->key_size > sizeof(words))
		return -1;
	memcpy(words, key, t->key_size);
	__u64 h = stacks_hash_key(words, (__u32)(t->key_size / sizeof(__u32)));
	for (__u32 p = 0; p < STACKS_PROBES; p++) {
		unsigned char *e = entry(t, stacks_probe_at(h, p, (__u32)s * t->half, t->half));
		uint64_t owner = 0;
		int claimed = __atomic_compare_exchange_n((uint64_t *)e, &owner, h, 0, __ATOMIC_ACQ_REL,
							  __ATOMIC_ACQUIRE);
		if (!claimed && owner != h)
			continue;
		if (claimed)
			memcpy(e + sizeof(uint64_t), key, t->key_size);
		uint64_t *sums = (uint64_t *)(e + sizeof(uint64_t) + t->key_size);
		for (size_t i = 0; i < t->value_size / sizeof(uint64_t); i++)
			__atomic_fetch_add(&sums[i], value[i], __ATOMIC_RELAXED);
		return 0;
	}
	return -1;
}

void counttable_close(struct counttable *t)
{
	bpfmap_view_close(&t->view);
}
