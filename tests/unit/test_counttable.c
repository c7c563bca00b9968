/* test_counttable — a count table (bpf/stacks.bpf.h's STACKS_COUNT_MAPS)
 * from user space (lib/collect/counttable.h), on a real BPF array laid out
 * as the programs lay it out: sums added to a key's one entry wherever it
 * is first claimed, the two sets apart, each set's entries read back with
 * their keys and cleared, a full set refused (not overwritten), and a table
 * of another entry size not opened. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/types.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "counttable.h"
#include "stacks.h"
#include "test.h"

#define HALF 64u

struct key {
	uint64_t a, b;
};
struct sums {
	uint64_t n, total;
};

struct seen {
	uint64_t entries, keys_bad, n, total;
	uint64_t by_key[256];
};

static void add_up(const void *key, const void *value, void *arg)
{
	struct seen *s = arg;
	struct key k;
	struct sums v;

	memcpy(&k, key, sizeof(k));
	memcpy(&v, value, sizeof(v));
	s->entries++;
	if (k.a >= 256 || k.b != k.a * 7)
		s->keys_bad++;
	else
		s->by_key[k.a] += v.n;
	s->n += v.n;
	s->total += v.total;
}

static int create(size_t value_size)
{
	LIBBPF_OPTS(bpf_map_create_opts, mmapable, .map_flags = BPF_F_MMAPABLE);
	return bpf_map_create(BPF_MAP_TYPE_ARRAY, "test_counts", 4, (uint32_t)value_size, 2 * HALF, &mmapable);
}

int main(void)
{
	test_plan(9);
	if (geteuid() != 0) {
		printf("SKIP: counttable: BPF maps need root\n");
		printf("PLAN: skip the rest\n");
		return 0;
	}
	int fd = create(sizeof(uint64_t) + sizeof(struct key) + sizeof(struct sums));
	int other = create(sizeof(uint64_t) + sizeof(struct key) + sizeof(uint64_t));
	if (fd < 0 || other < 0) {
		printf("FAIL: counttable: cannot create the test maps: %s\n", strerror(errno));
		return 1;
	}
	struct counttable t;
	test_cond("counttable: a table of {owner, key, value} entries opens", counttable_open(&t, fd, sizeof(struct key), sizeof(struct sums)) == 0);

	/* 20 keys into set 0, the odd ones added twice: one entry a key */
	int refused = 0;
	for (int round = 0; round < 2; round++)
		for (uint64_t k = round; k < 20; k += 1 + (uint64_t)round) {
			struct key key = { k, k * 7 };
			uint64_t v[2] = { 1, 100 + k };
			refused += counttable_add(&t, 0, &key, v) != 0;
		}
	struct seen s0 = { 0 }, s1 = { 0 };
	counttable_each(&t, 0, 0, add_up, &s0);
	counttable_each(&t, 1, 0, add_up, &s1);
	int counts_right = 1;
	for (uint64_t k = 0; k < 20; k++) {
		uint64_t want = 1 + k % 2;
		counts_right &= s0.by_key[k] == want;
	}
	test_cond("counttable: each key has one entry, its sums all it was given", refused == 0 && s0.entries == 20 &&
		  s0.keys_bad == 0 && counts_right);
	test_cond("counttable: the other set holds none of them", s1.entries == 0);

	/* the entry is where a program probing for the key's hash finds it */
	struct key k5 = { 5, 35 };
	__u32 words[4];
	memcpy(words, &k5, sizeof(k5));
	__u64 h = stacks_hash_key(words, 4);
	uint64_t owner_found = 0;
	for (__u32 p = 0; p < STACKS_PROBES && owner_found != h; p++) {
		const unsigned char *e = (const unsigned char *)t.view.base +
					 (size_t)stacks_probe_at(h, p, 0, HALF) * t.entry_size;
		memcpy(&owner_found, e, sizeof(owner_found));
	}
	test_cond("counttable: a key's entry lies on its hash's probe sequence, owned by the hash", owner_found == h);

	/* set 1 filled past what it holds: refused, never overwriting */
	int added = 0, full = 0;
	for (uint64_t k = 100; k < 100 + 2 * HALF; k++) {
		struct key key = { k & 0xff, (k & 0xff) * 7 };
		uint64_t v[2] = { 1, 1 };
		if (counttable_add(&t, 1, &key, v) == 0)
			added++;
		else
			full++;
	}
	memset(&s1, 0, sizeof(s1));
	counttable_each(&t, 1, 0, add_up, &s1);
	test_cond("counttable: a full set refuses what it has no room for", full > 0 && added <= (int)HALF &&
		  s1.entries == (uint64_t)added && s1.n == (uint64_t)added);

	/* read and cleared: set 0 empty after, set 1 untouched */
	struct seen again = { 0 };
	counttable_each(&t, 0, 1, add_up, &again);
	struct seen after0 = { 0 }, after1 = { 0 };
	counttable_each(&t, 0, 0, add_up, &after0);
	counttable_each(&t, 1, 0, add_up, &after1);
	test_cond("counttable: a set read with clear is empty after", again.entries == 20 && after0.entries == 0);
	test_cond("counttable: clearing one set leaves the other", after1.entries == s1.entries);

	/* the kernel's copy is the one mapped: a cleared entry reads zero there */
	uint32_t key0 = stacks_probe_at(h, 0, 0, HALF);
	unsigned char elem[sizeof(uint64_t) + sizeof(struct key) + sizeof(struct sums)];
	int zero = bpf_map_lookup_elem(fd, &key0, elem) == 0;
	for (size_t i = 0; zero && i < sizeof(elem); i++)
		zero = elem[i] == 0;
	test_cond("counttable: the kernel's array is what was cleared", zero);
	counttable_close(&t);

	struct counttable o;
	errno = 0;
	test_cond("counttable: a table of another entry size is not opened",
		  counttable_open(&o, other, sizeof(struct key), sizeof(struct sums)) != 0 && errno == EINVAL);
	close(fd);
	close(other);
	return test_report();
}
