/* unwindcut.c — stacks the table walk cut, walked on in user space (see unwindcut.h). */
#include "unwindcut.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stackdrain.h"
#include "stacks.h"
#include "syms.h"
#include "timedsamples.h"
#include "unwinddwarfwalk.h"
#include "util.h"

struct unwindcut {
	struct unwinder *unw;
	struct syms_cache *syms;
	struct stackdrain *drain;	/* reads the stored stacks, counts the walked */
	struct timedsamples *timed;	/* --timed: each sample's time, or NULL */
	uint64_t finished, left, ns;	/* this section's */
};

struct unwindcut *unwindcut_new(struct syms_cache *syms, struct stackdrain *d)
{
	struct unwindcut *c = marple_calloc(1, sizeof(*c));

	c->unw = unwind_new(syms);
	c->syms = syms;
	c->drain = d;
	return c;
}

void unwindcut_free(struct unwindcut *c)
{
	if (!c)
		return;
	unwind_free(c->unw);
	free(c);
}

/* The rest of s's walk into tail[room], from where it stopped: how many
 * frames, that one first.  A walk that met an address in no mapping known
 * goes again once the process's maps are read again (its libraries are
 * mapped after its exec's snapshot, which its first samples follow). */
static int walk(struct unwindcut *c, const struct cut_sample *s, uint64_t *tail, int room)
{
	pid_t pid = (pid_t)s->stack.pid;
	struct unwind_stats before, after;
	int t;

	for (int again = 0;; again++) {
		unwind_stats(c->unw, &before);
		t = s->exact ? unwind_stack(c->unw, pid, s->stack.exec_id, &s->user, tail, room)
			     : unwind_stack_caller(c->unw, pid, s->stack.exec_id, &s->user, tail, room);
		unwind_stats(c->unw, &after);
		if (again || t < 0 || after.stopped_no_info == before.stopped_no_info ||
		    syms_cache_reread_exec(c->syms, pid, s->stack.exec_id) < 0)
			return t;
	}
}

/* The user stack of s with the rest of its walk in place of its marker:
 * into out[MARPLE_STACK_DEPTH], how many (< 0: why there are none; the
 * stack as stored when it cannot be walked on); -ENOMEM from libunwind. */
static int finish(struct unwindcut *c, const struct cut_sample *s, uint64_t *out)
{
	uint64_t tail[MARPLE_STACK_DEPTH];
	int n = stackdrain_read_id(c->drain, s->stack.user_stack_id, out);

	if (n <= 0)
		return -ENOENT;	/* not in the store: "[missing user stack]" */
	/* the stopped frame, then the marker; after them, the runtime's words */
	int cut = (int)s->frames - 2;
	if (cut < 0 || cut + 2 > n || out[cut] != s->user.regs[UREG_IP] || out[cut + 1] != UNWIND_MARK_NO_TABLE) {
		c->left++;
		return n;
	}
	int after = n - (cut + 2), room = MARPLE_STACK_DEPTH - cut - after;
	int t = walk(c, s, tail, room);
	if (t < 0)
		return -ENOMEM;
	if (t <= 1) {
		c->left++;
		return n;
	}
	c->finished++;
	if (t == room)
		tail[t - 1] = UNWIND_MARK_TRUNCATED;	/* there may be more */
	memmove(out + cut + t, out + cut + 2, (size_t)after * sizeof(*out));
	memcpy(out + cut, tail, (size_t)t * sizeof(*out));
	return cut + t + after;
}

int unwindcut_on_sample(void *arg, void *data, size_t len)
{
	struct unwindcut *c = arg;
	const struct cut_sample *s = data;
	uint64_t ips[MARPLE_STACK_DEPTH];
	uint64_t t0 = marple_now_monotonic_ns();

	if (len < sizeof(*s))
		return 0;
	int n = finish(c, s, ips);
	if (n == -ENOMEM)
		return n;
	struct stack_key numbered;
	stackdrain_add_walked(c->drain, s->key, (struct stack_ips){ ips, n }, s->value, &numbered);
	if (c->timed)
		timedsamples_add_keyed(c->timed, &numbered, sizeof(numbered), s->stack.pid, s->tid, s->cpu, s->time, 0);
	c->ns += marple_now_monotonic_ns() - t0;
	return 0;
}

void unwindcut_set_timed(struct unwindcut *c, struct timedsamples *ts)
{
	c->timed = ts;
}

void unwindcut_trailer_add(struct unwindcut *c, json_t *unwind)
{
	json_object_set_new(unwind, "cuts_finished", json_integer((json_int_t)c->finished));
	json_object_set_new(unwind, "cuts_left", json_integer((json_int_t)c->left));
	json_object_set_new(unwind, "cuts_us", json_integer((json_int_t)(c->ns / 1000)));
	c->finished = c->left = c->ns = 0;
}
