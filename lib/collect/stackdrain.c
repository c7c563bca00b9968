/* stackdrain.c — draining a stack collector's kernel maps while it runs (see
 * stackdrain.h). */
#include "stackdrain.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bpfmap.h"
#include "counttable.h"
#include "collector.h"
#include "hashtab.h"
#include "stackframes.h"
#include "stacks.h"
#include "util.h"

/* The stacks of one set as they were when it was last cleared: slot -> its
 * addresses (pos[slot] - 1 indexes copy; 0: the slot was free). */
struct set_copy {
	uint32_t *pos;
	uint64_t *copy;			/* MARPLE_STACK_DEPTH addresses a stack */
	size_t n, cap;
	int valid;			/* cleared at least once */
};

struct stackdrain {
	volatile struct stacks_ctl *ctl;	/* stacks_ctl, mmapped */
	size_t ctl_len;
	int stacks_fd;
	struct counttable counts;	/* key_size: mapped in place */
	volatile uint64_t *owners;	/* stack_slots, mmapped: a slot's owner, 0 free */
	size_t owners_len;
	const unsigned char *stacks;	/* the stacks map, mmapped */
	size_t stacks_len, stack_size;
	uint32_t half;			/* stacks of one set */
	size_t key_size, value_size, stack_key_offset;
	size_t second_key_offset;	/* stackdrain_set_second_key; 0: none */
	struct seen *seen;		/* every stack drained since the last fold, by its addresses */
	/* the stacks of the fold before, kept while ring buffers carry
	 * ids (--timed): a stack drained again keeps its id, so a sample
	 * read before a fold and counted after it finds its record */
	struct seen *seen_before;
	struct folding *folding;	/* a fold being named, a slice a turn */
	int32_t last_id;		/* the last stable id given */
	int keys_numbered;		/* stackdrain_number_key was called */
	uint64_t folds, folds_before;	/* stackdrain_fold's; at the last restart */
	struct hashtab *keys_seen;	/* every key drained, its ids those of seen */
	uint64_t *sums;			/* keys_seen entry i's value: value_size bytes of u64 sums */
	size_t sums_cap;
	void (*add)(const struct stackdrain_entry *e, void *arg);
	void *arg;
	void (*pin)(struct stackdrain *d, void *arg);
	void *pin_arg;
	void (*settled)(void *arg);	/* stackdrain_set_settled */
	void *settled_arg;
	unsigned char *pinned;		/* slots of the set being cleared still named */
	/* stackdrain_set_kept: every stack of a cleared set moves here */
	void (*still_named)(struct stackdrain *d, void *arg);
	void *still_named_arg;
	int keeping;			/* stackdrain_set_kept was called */
	/* the stacks moved out, by (id, generation), in two layers: */
	struct kept_store *kept;	/* moved before the last sweep began, and named then */
	struct kept_store *kept_new;	/* moved since (a drain only adds here) */
	/* moved by the last drain, not yet in kept_new: (kept_key, depth,
	 * addresses) one after another.  The next drain puts them there while
	 * the programs settle after its flip: hashed in the walk, with a
	 * table's growth among them (5 ms at 16,384 stacks), they kept the
	 * other set from being flipped, and a store of 1024 a set filled to
	 * 789 and lost stacks (drain.t at load 4) */
	unsigned char *pending;
	size_t pending_len, pending_cap;
	/* the sweep runs in a thread of its own, walk and filtering both, so
	 * that a drain never waits for it: the kernel walks memleak's million
	 * buckets in ~300 ms, and filtering 133,387 outstanding allocations on
	 * the drain's path once took 3.6 s, while the set being filled went
	 * from a quarter to 97% full and 2,680 stacks were lost in 90 s.  It
	 * reads sweep_in (kept and kept_new as they were when it began), and
	 * makes sweep_out, which the first drain after it is done takes as kept */
	pthread_t sweeper;
	int sweeping;			/* a sweep began, and was not applied */
	int threaded;			/* its thread was started, not joined */
	int swept;			/* it is done (atomic) */
	struct kept_store *sweep_in[2], *sweep_out;
	/* kept mode drains in a thread of its own, real-time where allowed:
	 * the collector's thread, even at nice -10, waited up to 1.1 s for
	 * the CPU at load 16 (drain_set: 2.6 s of CPU in 18.4 s of drains)
	 * while the set being filled went from a quarter full to full */
	pthread_t drainer;
	int drainer_running;
	int drainer_stop;		/* atomic */
	int drainer_realtime;		/* it got SCHED_FIFO */
	int requests_fd;		/* drain_requests, where a program's request wakes it */
	struct kept_key *named;
	size_t nnamed, named_cap;
	uint64_t sweeps;
	int clearing;			/* the set being cleared */
	int draining;			/* the set being read; -1: read every id where it is */
	struct set_copy copies[2];
	uint64_t period_ms, last_ms, drains;
	uint64_t drains_before;		/* drains at the last stackdrain_restart */
	uint64_t drain_us, drain_us_max;	/* time spent draining: all, and the longest */
	uint64_t asked, wait_us_max;	/* drains a program asked for; the longest it waited */
	uint64_t drain_cpu_us;		/* the CPU time of drain_set */
	uint64_t fill_max;		/* the most stacks a set held when it was flipped */
};

/* The stacks drained, each with an id that is never given to another
 * stack (until 2^31 have been): a fold or a section lets go of the stacks,
 * and the ids that samples kept stay theirs. */
struct seen {
	struct hashtab *by_ips;		/* addresses -> count[0]: id */
	struct hashtab *by_id;		/* int32_t id -> count[0]: 1 + its index in by_ips */
};

static struct seen *seen_new(void)
{
	struct seen *s = marple_calloc(1, sizeof(*s));
	s->by_ips = hashtab_new();
	s->by_id = hashtab_new();
	return s;
}

static void seen_free(struct seen *s)
{
	if (!s)
		return;
	hashtab_free(s->by_ips);
	hashtab_free(s->by_id);
	free(s);
}

/* What a fold names, a slice at a time between drains (naming a minute's
 * keys in one go kept the drains waiting: a small store filled meanwhile). */
struct folding {
	struct seen *seen;
	struct hashtab *keys;
	uint64_t *sums;
	size_t next;			/* the next key to name */
};

/* The stacks moved out of the store, named by their (id, generation):
 * memleak's allocations keep those of the time they were made. */
struct kept_key {
	int32_t id;
	uint32_t gen;
};
struct kept_store {
	struct hashtab *keys;		/* kept_key -> count[0]: 1 + its index in stacks */
	struct hashtab *stacks;		/* the addresses, each distinct stack once */
};

/* A sweep (the collector's state walked: memleak's whole allocation table,
 * ~300 ms for its million buckets) every so many drains lets go of the
 * stacks nothing names any more; in between, moved stacks are only added. */
#define STACKDRAIN_SWEEP_EVERY 16

static uint64_t now_ms(void)
{
	return marple_now_monotonic_ns() / 1000000;
}

static uint64_t now_us(void)
{
	return marple_now_monotonic_ns() / 1000;
}

static void *map_mmap(int fd, size_t *len, uint32_t *entries, size_t *value_size, int prot)
{
	struct bpf_map_info info = { 0 };
	uint32_t ilen = sizeof(info);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &ilen) != 0)
		return NULL;
	*value_size = (info.value_size + 7) & ~7u;
	*entries = info.max_entries;
	*len = (*value_size * info.max_entries + page - 1) / page * page;
	void *m = mmap(NULL, *len, prot, MAP_SHARED, fd, 0);
	return m == MAP_FAILED ? NULL : m;
}

static int depth(const uint64_t *ips)
{
	int n = 0;
	while (n < MARPLE_STACK_DEPTH && ips[n])
		n++;
	return n;
}

/* Copy the stack of a slot (bytes of the stacks map) to ips: its depth.
 * Only its addresses and the zero after them, not the slot's 2 KiB: whole
 * slots were 60% of a drain's CPU (perf, memleak at 1,200 drains a second). */
static int copy_stack(const struct stackdrain *d, uint64_t *ips, const unsigned char *slot)
{
	const uint64_t *src = (const uint64_t *)(const void *)slot;
	size_t max = d->stack_size / sizeof(uint64_t), n = 0;

	if (max > MARPLE_STACK_DEPTH)
		max = MARPLE_STACK_DEPTH;
	while (n < max && src[n])
		n++;
	memcpy(ips, src, n * sizeof(uint64_t));
	if (n < MARPLE_STACK_DEPTH)
		ips[n] = 0;
	return (int)n;
}

/* The addresses of kernel stack id: in the stacks map where they are, but
 * when set draining is being read (-1: none), ids of the other come from its
 * copy once it was cleared (the slot may hold another stack since).  Depth,
 * or -1. */
static int read_kernel_id(struct stackdrain *d, int id, uint64_t *ips, int draining)
{
	uint32_t set = (uint32_t)id / d->half;

	if (id < 0 || set > 1)
		return -1;
	if (draining < 0 || set == (uint32_t)draining || !d->copies[set].valid)
		return copy_stack(d, ips, d->stacks + (size_t)id * d->stack_size);
	const struct set_copy *c = &d->copies[set];
	uint32_t p = c->pos[(uint32_t)id - set * d->half];
	if (p == 0)
		return -1;
	const uint64_t *copy = c->copy + (size_t)(p - 1) * MARPLE_STACK_DEPTH;
	int n = depth(copy);
	memcpy(ips, copy, (size_t)n * sizeof(uint64_t));
	return n;
}

/* The id of the stack ips[0..n), interned in d->seen: the one it had
 * before the last fold if it was drained then too, else a new one. */
static int32_t intern_ips(struct stackdrain *d, const uint64_t *ips, int n)
{
	size_t len = (size_t)n * sizeof(uint64_t);
	const struct hashtab_entry *e = hashtab_find(d->seen->by_ips, ips, len), *b;

	if (e)
		return (int32_t)e->count[0];
	int32_t id;
	const struct seen *before = d->folding ? d->folding->seen : d->seen_before;
	if (before && (b = hashtab_find(before->by_ips, ips, len)))
		id = (int32_t)b->count[0];
	else
		id = d->last_id = d->last_id == INT32_MAX ? 1 : d->last_id + 1;
	e = hashtab_add(d->seen->by_ips, ips, len, (uint64_t)id, 0);
	hashtab_add(d->seen->by_id, &id, sizeof(id), hashtab_index(d->seen->by_ips, e) + 1, 0);
	return id;
}

/* Kernel stack id as an id of d->seen (interned), or an id that reads
 * as missing (draining: as read_kernel_id's). */
static int32_t intern_id(struct stackdrain *d, int32_t id, int draining)
{
	uint64_t ips[MARPLE_STACK_DEPTH];
	int n;

	if (id < 0)	/* none, or an error: kept as it is */
		return id;
	if ((n = read_kernel_id(d, id, ips, draining)) < 0)
		return -ENOENT;
	return intern_ips(d, ips, n);
}

/* The addresses of the stack numbered id in seen, copied into
 * ips[MARPLE_STACK_DEPTH] (the table packs its keys: UBSan caught a
 * misaligned read), or why there are none: an error id kept as it is, or
 * missing. */
static struct stack_ips seen_stack(const struct seen *seen, int32_t id, uint64_t *ips)
{
	const struct hashtab_entry *i;

	if (id < 0)
		return (struct stack_ips){ NULL, id };
	if (!(i = hashtab_find(seen->by_id, &id, sizeof(id))))
		return (struct stack_ips){ NULL, -ENOENT };
	const struct hashtab_entry *e = hashtab_at(seen->by_ips, (size_t)(i->count[0] - 1));
	memcpy(ips, e->key, e->len);
	return (struct stack_ips){ ips, (int)(e->len / sizeof(uint64_t)) };
}

/* Hand add() key i of keys (numbered in seen) with its stacks' addresses
 * and its sums. */
static void hand_key(struct stackdrain *d, const struct seen *seen, const struct hashtab *keys,
		     const uint64_t *sums, size_t i)
{
	/* the table packs its keys: add() gets an aligned copy (its struct
	 * stack_key has 4-byte members; UBSan caught it) */
	union { unsigned char b[256]; uint64_t align; } k;
	struct stack_key sk;
	uint64_t user[MARPLE_STACK_DEPTH], kern[MARPLE_STACK_DEPTH];

	memcpy(k.b, hashtab_at(keys, i)->key, d->key_size);
	memcpy(&sk, k.b + d->stack_key_offset, sizeof(sk));
	struct stackdrain_entry e = { .key = k.b, .user = seen_stack(seen, sk.user_stack_id, user),
				      .kern = seen_stack(seen, sk.kern_stack_id, kern),
				      .user2 = { NULL, STACK_ID_NONE }, .kern2 = { NULL, STACK_ID_NONE },
				      .value = sums + i * (d->value_size / sizeof(uint64_t)) };
	uint64_t user2[MARPLE_STACK_DEPTH], kern2[MARPLE_STACK_DEPTH];
	if (d->second_key_offset) {
		memcpy(&sk, k.b + d->second_key_offset, sizeof(sk));
		e.user2 = seen_stack(seen, sk.user_stack_id, user2);
		e.kern2 = seen_stack(seen, sk.kern_stack_id, kern2);
	}
	d->add(&e, d->arg);
}

/* The stack ids of the struct stack_key at p interned (p: in a key, unaligned). */
static void intern_key_at(struct stackdrain *d, unsigned char *p)
{
	struct stack_key sk;

	memcpy(&sk, p, sizeof(sk));
	sk.user_stack_id = intern_id(d, sk.user_stack_id, d->draining);
	sk.kern_stack_id = intern_id(d, sk.kern_stack_id, d->draining);
	memcpy(p, &sk, sizeof(sk));
}

/* Add value (u64 sums) to those of key k, its stack ids interned. */
static void add_sums(struct stackdrain *d, const unsigned char *k, const void *value)
{
	size_t i = hashtab_index(d->keys_seen, hashtab_add(d->keys_seen, k, d->key_size, 0, 0));
	size_t nv = d->value_size / sizeof(uint64_t);
	if ((i + 1) * nv > d->sums_cap / sizeof(uint64_t)) {
		size_t old = d->sums_cap;
		d->sums = marple_grow(d->sums, &d->sums_cap, (i + 1) * nv * sizeof(uint64_t) * 2, 1);
		memset((char *)d->sums + old, 0, d->sums_cap - old);
	}
	uint64_t v[32];
	memcpy(v, value, d->value_size);
	for (size_t j = 0; j < nv; j++)
		d->sums[i * nv + j] += v[j];
}

/* Add value (u64 sums) to key's, its stack ids interned first. */
static void keep(struct stackdrain *d, const void *key, const void *value)
{
	unsigned char k[256];

	memcpy(k, key, d->key_size);
	intern_key_at(d, k + d->stack_key_offset);
	if (d->second_key_offset)
		intern_key_at(d, k + d->second_key_offset);
	add_sums(d, k, value);
}

struct stackdrain *stackdrain_new(struct bpf_object *obj, size_t key_size, size_t value_size,
				  size_t stack_key_offset, void (*add)(const struct stackdrain_entry *e, void *arg),
				  void *arg)
{
	struct stackdrain *d = marple_calloc(1, sizeof(*d));
	uint32_t n, entries;
	size_t vs;

	d->key_size = key_size;
	d->value_size = value_size;
	d->stack_key_offset = stack_key_offset;
	if (key_size > 256 || value_size > 32 * sizeof(uint64_t) || value_size % sizeof(uint64_t) ||
	    (key_size && stack_key_offset + sizeof(struct stack_key) > key_size)) {
		marple_warn("stackdrain: keys of %zu bytes, values of %zu: not supported", key_size, value_size);
		free(d);
		return NULL;
	}
	d->seen = seen_new();
	d->keys_seen = hashtab_new();
	d->add = add;
	d->arg = arg;
	d->stacks_fd = bpfmap_fd(obj, "stacks");
	d->requests_fd = bpfmap_fd(obj, "drain_requests");
	d->ctl = map_mmap(bpfmap_fd(obj, "stacks_ctl"), &d->ctl_len, &n, &vs, PROT_READ | PROT_WRITE);
	d->stacks = map_mmap(d->stacks_fd, &d->stacks_len, &entries, &d->stack_size, PROT_READ);
	d->owners = map_mmap(bpfmap_fd(obj, "stack_slots"), &d->owners_len, &n, &vs, PROT_READ | PROT_WRITE);
	if (!d->ctl || !d->stacks || !d->owners || n != entries || vs != sizeof(uint64_t) ||
	    (key_size && counttable_open(&d->counts, bpfmap_fd(obj, "counts"), key_size, value_size) != 0)) {
		marple_warn("cannot drain the BPF maps while capturing: %s", strerror(errno));
		stackdrain_free(d);
		return NULL;
	}
	d->half = entries / 2;
	d->pinned = marple_calloc(d->half, 1);
	for (int s = 0; s < 2; s++)
		d->copies[s].pos = marple_calloc(d->half, sizeof(uint32_t));
	d->draining = -1;
	d->period_ms = STACKDRAIN_PERIOD_MS;
	/* a drain takes milliseconds of CPU, but on a busy machine the scheduler
	 * let it wait 50 to 230 ms while the active set filled (mallocstacks,
	 * 2048 stacks a set, two tar|gzip loops on 2 CPUs: 1-6% of the stacks
	 * lost): ahead of ordinary processes, it drains in time */
	setpriority(PRIO_PROCESS, 0, COLLECTOR_NICE);	/* best effort */
	d->last_ms = now_ms();
	return d;
}

void stackdrain_set_period(struct stackdrain *d, uint64_t ms)
{
	d->period_ms = ms;
}

void stackdrain_set_pin(struct stackdrain *d, void (*pin)(struct stackdrain *d, void *arg), void *arg)
{
	d->pin = pin;
	d->pin_arg = arg;
}

void stackdrain_set_second_key(struct stackdrain *d, size_t offset)
{
	if (offset && offset + sizeof(struct stack_key) <= d->key_size)
		d->second_key_offset = offset;
}

void stackdrain_set_settled(struct stackdrain *d, void (*settled)(void *arg), void *arg)
{
	d->settled = settled;
	d->settled_arg = arg;
}

void stackdrain_number_key(struct stackdrain *d, struct stack_key *k)
{
	/* read where they are: their set is not cleared yet */
	d->keys_numbered = 1;
	k->user_stack_id = intern_id(d, k->user_stack_id, -1);
	k->kern_stack_id = intern_id(d, k->kern_stack_id, -1);
}

int stackdrain_read_id(struct stackdrain *d, int id, uint64_t *ips)
{
	return read_kernel_id(d, id, ips, -1);	/* where it is: its set is not cleared yet */
}

void stackdrain_add_walked(struct stackdrain *d, const void *key, struct stack_ips user, const void *value,
			   struct stack_key *numbered)
{
	unsigned char k[256];
	struct stack_key sk;

	memcpy(k, key, d->key_size);
	memcpy(&sk, k + d->stack_key_offset, sizeof(sk));
	sk.user_stack_id = user.n >= 0 ? intern_ips(d, user.ips, user.n) : user.n;
	sk.kern_stack_id = intern_id(d, sk.kern_stack_id, -1);	/* where it is */
	memcpy(k + d->stack_key_offset, &sk, sizeof(sk));
	if (numbered)
		*numbered = sk;
	add_sums(d, k, value);
}

void stackdrain_pin(struct stackdrain *d, int id)
{
	if (id >= 0 && (uint32_t)id / d->half == (uint32_t)d->clearing)
		d->pinned[(uint32_t)id % d->half] = 1;
}

static struct kept_store *kept_new(void)
{
	struct kept_store *k = marple_calloc(1, sizeof(*k));
	k->keys = hashtab_new();
	k->stacks = hashtab_new();
	return k;
}

/* What k holds in memory: its keys, its stacks' addresses, their indexes. */
static size_t kept_bytes(const struct kept_store *k)
{
	return k ? sizeof(*k) + hashtab_bytes(k->keys) + hashtab_bytes(k->stacks) : 0;
}

static void kept_free(struct kept_store *k)
{
	if (!k)
		return;
	hashtab_free(k->keys);
	hashtab_free(k->stacks);
	free(k);
}

/* The addresses of (id, gen) in k: their count (*ips points into k), or -1. */
static int kept_find(const struct kept_store *k, int id, uint32_t gen, const uint64_t **ips)
{
	struct kept_key key = { id, gen };
	const struct hashtab_entry *e;

	if (!k || !(e = hashtab_find(k->keys, &key, sizeof(key))) || e->count[0] == 0)
		return -1;
	e = hashtab_at(k->stacks, (size_t)(e->count[0] - 1));
	*ips = (const uint64_t *)(const void *)e->key;
	return (int)(e->len / sizeof(uint64_t));
}

static void kept_put(struct kept_store *k, int id, uint32_t gen, const uint64_t *ips, int n)
{
	struct kept_key key = { id, gen };

	if (hashtab_add(k->keys, &key, sizeof(key), 0, 0)->count[0])
		return;
	size_t i = hashtab_index(k->stacks, hashtab_add(k->stacks, ips, (size_t)n * sizeof(uint64_t), 0, 0));
	hashtab_add(k->keys, &key, sizeof(key), (uint64_t)i + 1, 0);
}

/* A pending stack: its key, its depth, then its addresses. */
struct pending_head {
	struct kept_key key;
	uint32_t n, pad;
};

static void pending_add(struct stackdrain *d, struct kept_key key, const unsigned char *stack)
{
	size_t most = sizeof(struct pending_head) + MARPLE_STACK_DEPTH * sizeof(uint64_t);
	d->pending = marple_grow(d->pending, &d->pending_cap, d->pending_len + most, 1);
	struct pending_head *h = (struct pending_head *)(void *)(d->pending + d->pending_len);
	int n = copy_stack(d, (uint64_t *)(void *)(h + 1), stack);
	*h = (struct pending_head){ key, (uint32_t)n, 0 };
	d->pending_len += sizeof(*h) + (size_t)n * sizeof(uint64_t);
}

/* The stacks the last drain moved, put in kept_new. */
static void pending_flush(struct stackdrain *d)
{
	for (size_t at = 0; at < d->pending_len;) {
		const struct pending_head *h = (const struct pending_head *)(const void *)(d->pending + at);
		kept_put(d->kept_new, h->key.id, h->key.gen, (const uint64_t *)(const void *)(h + 1), (int)h->n);
		at += sizeof(*h) + h->n * sizeof(uint64_t);
	}
	d->pending_len = 0;
}

static void drainer_start(struct stackdrain *d);

void stackdrain_set_kept(struct stackdrain *d, void (*still_named)(struct stackdrain *d, void *arg), void *arg)
{
	d->still_named = still_named;
	d->still_named_arg = arg;
	d->keeping = 1;
	d->kept = kept_new();
	d->kept_new = kept_new();
	drainer_start(d);
}

void stackdrain_keep(struct stackdrain *d, int id, uint32_t gen)
{
	if (id < 0)
		return;
	d->named = marple_grow(d->named, &d->named_cap, d->nnamed + 1, sizeof(*d->named));
	d->named[d->nnamed++] = (struct kept_key){ id, gen };
}

/* The sweep's thread: the state walked, then what of sweep_in it names
 * copied to sweep_out (a stack named but in neither is still in the kernel
 * store, or was moved to kept_new since), and sweep_in let go.  Nothing
 * else touches sweep_in, sweep_out or named until it is done. */
static void *sweep_walk(void *arg)
{
	struct stackdrain *d = arg;
	const uint64_t *ips;
	int n;
	struct sched_param normal = { 0 };

	/* started by the real-time drainer: the long walk is not real-time */
	pthread_setschedparam(pthread_self(), SCHED_OTHER, &normal);
	d->still_named(d, d->still_named_arg);
	d->sweep_out = kept_new();
	for (size_t i = 0; i < d->nnamed; i++) {
		struct kept_key k = d->named[i];
		if ((n = kept_find(d->sweep_in[1], k.id, k.gen, &ips)) < 0 &&
		    (n = kept_find(d->sweep_in[0], k.id, k.gen, &ips)) < 0)
			continue;
		kept_put(d->sweep_out, k.id, k.gen, ips, n);
	}
	for (int i = 0; i < 2; i++) {
		kept_free(d->sweep_in[i]);
		d->sweep_in[i] = NULL;
	}
	__atomic_store_n(&d->swept, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Start a sweep: what was moved so far is its input, and stacks moved from
 * now on go to a new kept_new.  An allocation made meanwhile names a stack
 * in the kernel store (moved to kept_new when its set is cleared), never one
 * of the input. */
static void sweep_start(struct stackdrain *d)
{
	d->nnamed = 0;
	d->swept = 0;
	d->sweep_in[0] = d->kept;
	d->sweep_in[1] = d->kept_new;
	d->kept = NULL;
	d->kept_new = kept_new();
	d->sweeping = 1;
	d->threaded = collector_thread_start(&d->sweeper, sweep_walk, d) == 0;
	if (!d->threaded)
		sweep_walk(d);	/* no thread: swept here */
}

/* Take a finished sweep's output as kept (wait for it when wait). */
static void sweep_apply(struct stackdrain *d, int wait)
{
	if (!d->sweeping || (!wait && !__atomic_load_n(&d->swept, __ATOMIC_ACQUIRE)))
		return;
	if (d->threaded)
		pthread_join(d->sweeper, NULL);
	d->threaded = 0;
	d->sweeping = 0;
	d->kept = d->sweep_out;
	d->sweep_out = NULL;
	d->sweeps++;
}

/* The drainer waits for a request on drain_requests at most this long (it
 * also drains every period, and looks at the flag in case a request could
 * not be submitted). */
#define STACKDRAIN_TICK_MS 20

static int drain_request(void *ctx, void *data, size_t len)
{
	(void)ctx, (void)data, (void)len;
	return 0;	/* the flag in stacks_ctl is what counts */
}

static void *drainer_main(void *arg)
{
	struct stackdrain *d = arg;
	struct sched_param rt = { .sched_priority = 1 };
	struct ring_buffer *requests = ring_buffer__new(d->requests_fd, drain_request, NULL, NULL);

	d->drainer_realtime = pthread_setschedparam(pthread_self(), SCHED_FIFO, &rt) == 0;
	while (!__atomic_load_n(&d->drainer_stop, __ATOMIC_ACQUIRE)) {
		if (d->ctl->drain_asked || now_ms() - d->last_ms >= d->period_ms)
			stackdrain_now(d);
		else if (!requests || ring_buffer__poll(requests, STACKDRAIN_TICK_MS) < 0)
			usleep(STACKDRAIN_TICK_MS * 1000);
	}
	ring_buffer__free(requests);
	return NULL;
}

static void drainer_start(struct stackdrain *d)
{
	if (d->period_ms == 0 || d->requests_fd < 0)	/* no draining while capturing */
		return;
	__atomic_store_n(&d->ctl->drain_thread, 1, __ATOMIC_SEQ_CST);
	d->drainer_running = collector_thread_start(&d->drainer, drainer_main, d) == 0;
	if (!d->drainer_running)
		__atomic_store_n(&d->ctl->drain_thread, 0, __ATOMIC_SEQ_CST);
}

/* The drainer stopped: what follows reads the sets as they are. */
static void drainer_end(struct stackdrain *d)
{
	if (!d->drainer_running)
		return;
	__atomic_store_n(&d->drainer_stop, 1, __ATOMIC_RELEASE);
	pthread_join(d->drainer, NULL);
	d->drainer_running = 0;
	__atomic_store_n(&d->ctl->drain_thread, 0, __ATOMIC_SEQ_CST);
}

int stackdrain_number_kept(struct stackdrain *d, int id, uint32_t gen)
{
	uint32_t set = (uint32_t)id / d->half;
	const uint64_t *ips;
	int n;

	drainer_end(d);
	if (id < 0)
		return id;
	if (set > 1)
		return -ENOENT;
	pending_flush(d);
	sweep_apply(d, 1);
	if (gen == d->ctl->gen[set]) {
		return intern_id(d, id, -1);	/* in the store */
	}
	if ((n = kept_find(d->kept_new, id, gen, &ips)) < 0 && (n = kept_find(d->kept, id, gen, &ips)) < 0)
		return -ENOENT;
	return intern_ips(d, ips, n);
}

struct stack_ips stackdrain_stack(const struct stackdrain *d, int number, uint64_t *ips)
{
	return seen_stack(d->seen, number, ips);
}

static void keep_entry(const void *key, const void *value, void *arg)
{
	keep(arg, key, value);
}

struct slot_walk {
	struct stackdrain *d;
	uint32_t set;
	struct set_copy *c;
	uint64_t kept;
};

/* One claimed slot id of the set being cleared: copied; 1 if it is to be
 * freed (not pinned). */
static int clear_slot(struct slot_walk *w, uint32_t id)
{
	struct stackdrain *d = w->d;
	uint32_t slot = id % d->half;
	struct set_copy *c = w->c;
	const unsigned char *stack = d->stacks + (size_t)id * d->stack_size;

	if (!d->key_size)	/* no counts to read these ids later: only what is pinned stays */
		goto clear;
	c->copy = marple_grow(c->copy, &c->cap, (c->n + 1) * MARPLE_STACK_DEPTH, sizeof(uint64_t));
	copy_stack(d, c->copy + c->n * MARPLE_STACK_DEPTH, stack);
	c->pos[slot] = (uint32_t)++c->n;
clear:
	if (d->keeping) {	/* its name moves to user space; the slot is freed */
		pending_add(d, (struct kept_key){ (int32_t)id, d->ctl->gen[w->set] }, stack);
		return 1;
	}
	if (d->pinned[slot]) {
		w->kept++;
		return 0;
	}
	return 1;
}

/* Read and clear set s, idle (no program writes into it). */
static void drain_set(struct stackdrain *d, int s)
{
	/* the counts: added up in user space with their stacks, then cleared
	 * (named at the end: symbols here would keep the set flipped long) */
	if (d->key_size) {
		d->draining = s;
		counttable_each(&d->counts, s, 1, keep_entry, d);
		__atomic_store_n(&d->ctl->counts_used[s], 0, __ATOMIC_RELAXED);
		d->draining = -1;
	}

	/* the stacks: copied (counts of the other set may still name them),
	 * then freed but for those the collector's state still names */
	memset(d->pinned, 0, d->half);
	d->clearing = s;
	if (d->pin)
		d->pin(d, d->pin_arg);
	if (d->still_named) {
		sweep_apply(d, 0);
		if (!d->sweeping && d->drains % STACKDRAIN_SWEEP_EVERY == 0)
			sweep_start(d);
	}
	struct set_copy *c = &d->copies[s];
	memset(c->pos, 0, d->half * sizeof(uint32_t));
	c->n = 0;
	struct slot_walk w = { d, (uint32_t)s, c, 0 };
	for (uint32_t id = (uint32_t)s * d->half; id < ((uint32_t)s + 1) * d->half; id++)
		if (d->owners[id] && clear_slot(&w, id))
			d->owners[id] = 0;
	c->valid = 1;
	/* what is stored in s from now on is another generation's */
	__atomic_store_n(&d->ctl->gen[s], d->ctl->gen[s] + 1, __ATOMIC_SEQ_CST);
	/* counted from 0 again, the pinned slots left out: a set full of stacks
	 * still named (memleak's outstanding allocations) would otherwise ask
	 * for a drain at every new stack */
	__atomic_store_n(&d->ctl->stacks_used[s], 0, __ATOMIC_RELAXED);
	d->drains++;
}

/* Programs run for microseconds; one that read the old set just before the
 * flip has finished well within this. */
#define STACKDRAIN_SETTLE_US 2000

void stackdrain_now(struct stackdrain *d)
{
	int idle = (int)(d->ctl->set & 1);

	if (d->ctl->drain_asked) {
		uint64_t asked = d->ctl->asked_ns, now = marple_now_monotonic_ns();
		d->asked++;
		if (asked && now > asked && (now - asked) / 1000 > d->wait_us_max)
			d->wait_us_max = (now - asked) / 1000;
	}
	if (d->ctl->stacks_used[idle] > d->fill_max)
		d->fill_max = d->ctl->stacks_used[idle];
	__atomic_store_n(&d->ctl->set, (uint32_t)!idle, __ATOMIC_SEQ_CST);
	__atomic_store_n(&d->ctl->drain_asked, 0, __ATOMIC_SEQ_CST);
	uint64_t flipped = now_us(), c0 = marple_thread_cpu_ns();
	pending_flush(d);	/* while they settle */
	uint64_t spent = now_us() - flipped;
	if (spent < STACKDRAIN_SETTLE_US)
		usleep((useconds_t)(STACKDRAIN_SETTLE_US - spent));
	if (d->settled)
		d->settled(d->settled_arg);
	drain_set(d, idle);
	d->drain_cpu_us += (marple_thread_cpu_ns() - c0) / 1000;
	uint64_t us = now_us() - flipped;
	d->drain_us += us;
	if (us > d->drain_us_max)
		d->drain_us_max = us;
	d->last_ms = now_ms();
}

int stackdrain_wait_ms(const struct stackdrain *d, int max_ms)
{
	if (!d || d->period_ms == 0 || d->drainer_running)
		return max_ms;
	uint64_t since = now_ms() - d->last_ms;
	if (d->ctl->drain_asked || since >= d->period_ms)
		return 0;
	return d->period_ms - since < (uint64_t)max_ms ? (int)(d->period_ms - since) : max_ms;
}

int stackdrain_poll(struct stackdrain *d)
{
	if (stackdrain_wait_ms(d, 1) > 0)	/* none due, or drained elsewhere */
		return 0;
	stackdrain_now(d);
	return 1;
}

void stackdrain_finish(struct stackdrain *d)
{
	drainer_end(d);
	stackdrain_now(d);
	stackdrain_now(d);
}

void stackdrain_add(struct stackdrain *d, const void *key, const void *value)
{
	d->draining = -1;
	keep(d, key, value);
}

uint64_t stackdrain_emit(struct stackdrain *d)
{
	stackdrain_fold_step(d, 0);	/* the fold before, whole */
	for (size_t i = 0; i < hashtab_size(d->keys_seen); i++)
		hand_key(d, d->seen, d->keys_seen, d->sums, i);
	return hashtab_size(d->keys_seen);
}

void stackdrain_restart(struct stackdrain *d)
{
	if (!d)
		return;
	stackdrain_fold_step(d, 0);
	seen_free(d->seen_before);
	d->seen_before = NULL;
	seen_free(d->seen);
	d->seen = seen_new();
	hashtab_free(d->keys_seen);
	d->keys_seen = hashtab_new();
	if (d->sums)	/* none yet: nothing drained with counts */
		memset(d->sums, 0, d->sums_cap);
	d->drains_before = d->drains;
	d->folds_before = d->folds;
}

void stackdrain_fold_start(struct stackdrain *d)
{
	stackdrain_fold_step(d, 0);
	struct folding *f = marple_calloc(1, sizeof(*f));
	f->seen = d->seen;
	f->keys = d->keys_seen;
	f->sums = d->sums;
	d->folding = f;
	/* the new keys' stacks take the ids they had in the fold */
	seen_free(d->seen_before);
	d->seen_before = NULL;
	d->seen = seen_new();
	d->keys_seen = hashtab_new();
	d->sums = NULL;
	d->sums_cap = 0;
}

int stackdrain_fold_step(struct stackdrain *d, uint64_t budget_us)
{
	struct folding *f = d ? d->folding : NULL;
	size_t n;
	uint64_t until = budget_us ? now_us() + budget_us : 0;

	if (!f)
		return 1;
	n = hashtab_size(f->keys);
	while (f->next < n) {
		hand_key(d, f->seen, f->keys, f->sums, f->next);
		/* the clock read every 64 keys: a key is named in microseconds */
		if (++f->next % 64 == 0 && until && now_us() >= until)
			break;
	}
	if (f->next < n)
		return 0;
	/* done: its stacks' ids are kept for one more fold while samples
	 * carry ids (a sample read before this fold's flip may be counted
	 * after it) */
	if (d->keys_numbered)
		d->seen_before = f->seen;
	else
		seen_free(f->seen);
	hashtab_free(f->keys);
	free(f->sums);
	free(f);
	d->folding = NULL;
	d->folds++;
	return 1;
}

void stackdrain_trailer_add(struct stackdrain *d, json_t *tr)
{
	if (!d)
		return;
	drainer_end(d);
	pending_flush(d);
	sweep_apply(d, 1);	/* kept_stacks: what a sweep under way keeps counted */
	/* this section's (--every: since the last stackdrain_restart) */
	json_object_set_new(tr, "drains", json_integer((json_int_t)(d->drains - d->drains_before)));
	json_object_set_new(tr, "drain_ms", json_real((double)d->drain_us / 1000));
	json_object_set_new(tr, "drain_ms_max", json_real((double)d->drain_us_max / 1000));
	json_object_set_new(tr, "drains_asked", json_integer((json_int_t)d->asked));
	json_object_set_new(tr, "drain_wait_ms_max", json_real((double)d->wait_us_max / 1000));
	json_object_set_new(tr, "drain_cpu_ms", json_real((double)d->drain_cpu_us / 1000));
	json_object_set_new(tr, "set_fill_max", json_integer((json_int_t)d->fill_max));
	if (d->folds > d->folds_before)
		json_object_set_new(tr, "folds", json_integer((json_int_t)(d->folds - d->folds_before)));
	if (d->keeping) {
		json_object_set_new(tr, "drain_realtime", json_boolean(d->drainer_realtime));
		json_object_set_new(tr, "kept_stacks", json_integer((json_int_t)(hashtab_size(d->kept->stacks) +
										   hashtab_size(d->kept_new->stacks))));
		json_object_set_new(tr, "kept_keys", json_integer((json_int_t)(hashtab_size(d->kept->keys) +
										 hashtab_size(d->kept_new->keys))));
		json_object_set_new(tr, "kept_bytes", json_integer((json_int_t)(kept_bytes(d->kept) +
										  kept_bytes(d->kept_new))));
		json_object_set_new(tr, "kept_sweeps", json_integer((json_int_t)d->sweeps));
	}
}

void stackdrain_free(struct stackdrain *d)
{
	if (!d)
		return;
	drainer_end(d);
	seen_free(d->seen);
	seen_free(d->seen_before);
	if (d->folding) {
		seen_free(d->folding->seen);
		hashtab_free(d->folding->keys);
		free(d->folding->sums);
		free(d->folding);
	}
	hashtab_free(d->keys_seen);
	if (d->threaded)
		pthread_join(d->sweeper, NULL);
	kept_free(d->kept);
	kept_free(d->kept_new);
	kept_free(d->sweep_out);
	for (int i = 0; i < 2; i++)
		kept_free(d->sweep_in[i]);
	free(d->named);
	free(d->pending);
	free(d->sums);
	if (d->ctl)
		munmap((void *)d->ctl, d->ctl_len);
	if (d->stacks)
		munmap((void *)d->stacks, d->stacks_len);
	if (d->owners)
		munmap((void *)d->owners, d->owners_len);
	if (d->key_size)
		counttable_close(&d->counts);
	for (int s = 0; s < 2; s++) {
		free(d->copies[s].pos);
		free(d->copies[s].copy);
	}
	free(d->pinned);
	free(d);
}
