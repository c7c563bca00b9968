/* unwindcut.c — stacks the table walk cut, walked on in user space (see unwindcut.h). */
#include "unwindcut.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "stackframes.h"
#include "unwinddwarfwalk.h"
#include "util.h"

struct unwindcut {
	struct unwinder *unw;
	struct stackframes *sf;		/* reads the kernel's store */
	struct hashtab *kept;		/* struct cut_key -> weight */
	uint64_t finished, left, ns;	/* this section's */
};

/* A stack kept: its user addresses then its kernel ones (a count < 0: why
 * there are none, as struct stack_ips says) */
struct cut_key {
	uint32_t pid, exec_id;
	char comm[MARPLE_COMM_LEN];
	int32_t nuser, nkern;
	uint64_t ips[2 * MARPLE_STACK_DEPTH];
};

struct unwindcut *unwindcut_new(struct syms_cache *syms, struct stackframes *sf)
{
	struct unwindcut *c = marple_calloc(1, sizeof(*c));

	c->unw = unwind_new(syms);
	c->sf = sf;
	c->kept = hashtab_new();
	return c;
}

void unwindcut_free(struct unwindcut *c)
{
	if (!c)
		return;
	hashtab_free(c->kept);
	unwind_free(c->unw);
	free(c);
}

/* The user stack of s with the rest of its walk in place of its marker:
 * into out[MARPLE_STACK_DEPTH], how many (< 0: why there are none; the
 * stack as stored when it cannot be walked on). */
static int finish(struct unwindcut *c, const struct cut_sample *s, uint64_t *out)
{
	uint64_t stored[MARPLE_STACK_DEPTH], tail[MARPLE_STACK_DEPTH];
	int n = stackframes_read_id(c->sf, s->key.user_stack_id, stored);

	if (n <= 0)
		return -2;	/* not in the store: "[missing user stack]" */
	memcpy(out, stored, (size_t)n * sizeof(*out));
	/* the stopped frame, then the marker; after them, the runtime's words */
	int cut = (int)s->frames - 2;
	if (cut < 0 || cut + 2 > n || stored[cut] != s->user.regs[UREG_IP] ||
	    stored[cut + 1] != UNWIND_MARK_NO_TABLE)
		return n;
	int after = n - (cut + 2), room = MARPLE_STACK_DEPTH - cut - after;
	int t = s->exact ? unwind_stack(c->unw, (pid_t)s->key.pid, s->key.exec_id, &s->user, tail, room)
			 : unwind_stack_caller(c->unw, (pid_t)s->key.pid, s->key.exec_id, &s->user, tail, room);
	if (t < 0)
		return -1 - MARPLE_STACK_DEPTH;
	if (t <= 1) {
		c->left++;
		return n;
	}
	c->finished++;
	if (t == room)
		tail[t - 1] = UNWIND_MARK_TRUNCATED;	/* there may be more */
	memcpy(out + cut, tail, (size_t)t * sizeof(*out));
	memcpy(out + cut + t, stored + cut + 2, (size_t)after * sizeof(*out));
	return cut + t + after;
}

int unwindcut_add(struct unwindcut *c, const struct cut_sample *s)
{
	struct cut_key k;
	uint64_t t0 = marple_now_monotonic_ns();

	memset(&k, 0, offsetof(struct cut_key, ips));
	k.pid = s->key.pid;
	k.exec_id = s->key.exec_id;
	memcpy(k.comm, s->key.comm, MARPLE_COMM_LEN);
	k.nuser = finish(c, s, k.ips);
	if (k.nuser == -1 - MARPLE_STACK_DEPTH)
		return -1;
	size_t nu = k.nuser > 0 ? (size_t)k.nuser : 0;
	int kid = s->key.kern_stack_id;
	k.nkern = kid == STACK_ID_NONE || kid == STACK_ID_LOST ? kid : stackframes_read_id(c->sf, kid, k.ips + nu);
	size_t nk = k.nkern > 0 ? (size_t)k.nkern : 0;
	hashtab_add(c->kept, &k, offsetof(struct cut_key, ips) + (nu + nk) * sizeof(uint64_t), 1, 0);
	c->ns += marple_now_monotonic_ns() - t0;
	return 0;
}

void unwindcut_collect(struct unwindcut *c, struct stackframes *sf, struct hashtab *t)
{
	for (size_t i = 0; i < hashtab_size(c->kept); i++) {
		const struct hashtab_entry *e = hashtab_at(c->kept, i);
		struct cut_key k;
		memcpy(&k, e->key, e->len);	/* a key is not aligned */
		size_t nu = k.nuser > 0 ? (size_t)k.nuser : 0;
		stackframes_begin(sf, k.comm);
		stackframes_user_stack(sf, (pid_t)k.pid, k.exec_id, (struct stack_ips){ k.ips, k.nuser });
		stackframes_kernel_stack(sf, (struct stack_ips){ k.ips + nu, k.nkern });
		stackframes_collect(sf, t, e->count[0]);
	}
	hashtab_free(c->kept);
	c->kept = hashtab_new();
}

void unwindcut_trailer_add(struct unwindcut *c, json_t *unwind)
{
	json_object_set_new(unwind, "cuts_finished", json_integer((json_int_t)c->finished));
	json_object_set_new(unwind, "cuts_left", json_integer((json_int_t)c->left));
	json_object_set_new(unwind, "cuts_us", json_integer((json_int_t)(c->ns / 1000)));
	c->finished = c->left = c->ns = 0;
}
