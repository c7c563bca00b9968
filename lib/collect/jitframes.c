/* jitframes.c — JIT frames named after the fact (see jitframes.h). */
#include "jitframes.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "util.h"

/* A placeholder is this prefix (no symbol starts with a control character)
 * then the entry's index in hex. */
#define JITFRAMES_PREFIX "\001jit:"
#define JITFRAMES_MAX 1000000

struct jitframe_key {			/* what a placeholder stands for */
	struct syms_cache *syms;
	uint64_t exec_id, addr;
	int64_t pid;
};

struct jitframe {
	struct jitframe_key k;
	const char *fallback;		/* in registry.strings */
	const char *name;		/* once named; lives as long as the cache (or in strings) */
	uint64_t leaf_weight;
};

static struct {
	struct hashtab *keys;		/* jitframe_key -> index in v */
	struct hashtab *strings;	/* placeholders and fallbacks */
	struct jitframe *v;
	size_t n, cap;
	struct hashtab *weights;	/* pid -> weight of its stacks; count[1]: advised */
} reg;

const char *jitframes_pending(struct syms_cache *syms, pid_t pid, uint64_t exec_id, uint64_t addr,
			      const char *fallback)
{
	struct jitframe_key k;
	char buf[32];

	memset(&k, 0, sizeof(k));	/* the padding is hashed too */
	k.syms = syms;
	k.exec_id = exec_id;
	k.addr = addr;
	k.pid = pid;
	if (!reg.keys) {
		reg.keys = hashtab_new();
		reg.strings = hashtab_new();
	}
	if (reg.n >= JITFRAMES_MAX)
		return fallback;
	const struct hashtab_entry *e = hashtab_add(reg.keys, &k, sizeof(k), 0, 0);
	size_t i = hashtab_index(reg.keys, e);
	if (i == reg.n) {	/* a new one */
		reg.v = marple_grow(reg.v, &reg.cap, reg.n + 1, sizeof(*reg.v));
		reg.v[reg.n++] = (struct jitframe){ k, hashtab_add(reg.strings, fallback, strlen(fallback), 0, 0)->key,
						     NULL, 0 };
	}
	snprintf(buf, sizeof(buf), JITFRAMES_PREFIX "%zx", i);
	return hashtab_add(reg.strings, buf, strlen(buf), 0, 0)->key;
}

int jitframes_is_pending(const char *frame)
{
	return strncmp(frame, JITFRAMES_PREFIX, sizeof(JITFRAMES_PREFIX) - 1) == 0;
}

int jitframes_any(void)
{
	return reg.n > 0;
}

/* The entry of a placeholder, or NULL. */
static struct jitframe *entry_of(const char *frame)
{
	if (!frame || !jitframes_is_pending(frame))
		return NULL;
	size_t i = (size_t)strtoull(frame + sizeof(JITFRAMES_PREFIX) - 1, NULL, 16);
	return i < reg.n ? &reg.v[i] : NULL;
}

void jitframes_weigh(pid_t pid, const char *leaf, uint64_t weight)
{
	struct jitframe *f = entry_of(leaf);
	int64_t k = pid;

	if (f)
		f->leaf_weight += weight;
	if (pid <= 0)
		return;
	if (!reg.weights)
		reg.weights = hashtab_new();
	hashtab_add(reg.weights, &k, sizeof(k), weight, 0);
}

/* Once for each node or java process whose weight is mostly in JIT code
 * still unnamed: the flag or command that makes the runtime write its map. */
static void advise(void)
{
	struct hashtab *unnamed = hashtab_new();	/* pid -> unnamed leaf weight */
	size_t *first = NULL, cap = 0;			/* an entry of each pid */

	for (size_t i = 0; i < reg.n; i++) {
		if (reg.v[i].name || !reg.v[i].k.syms || !reg.v[i].leaf_weight)
			continue;
		size_t before = hashtab_size(unnamed);
		hashtab_add(unnamed, &reg.v[i].k.pid, sizeof(int64_t), reg.v[i].leaf_weight, 0);
		if (hashtab_size(unnamed) > before) {
			first = marple_grow(first, &cap, before + 1, sizeof(*first));
			first[before] = i;
		}
	}
	for (size_t u = 0; u < hashtab_size(unnamed) && reg.weights; u++) {
		const struct hashtab_entry *e = hashtab_at(unnamed, u);
		const struct hashtab_entry *w = hashtab_add(reg.weights, e->key, e->len, 0, 0);
		if (w->count[1] || e->count[0] * 2 <= w->count[0])
			continue;
		const struct jitframe *f = &reg.v[first[u]];
		const char *rt = syms_cache_jit_runtime(f->k.syms, (pid_t)f->k.pid, f->k.exec_id);
		int pct = (int)(100.0 * (double)e->count[0] / (double)w->count[0] + 0.5);
		hashtab_add(reg.weights, e->key, e->len, 0, 1);	/* said once */
		if (rt && strcmp(rt, "node") == 0)
			marple_warn("pid %" PRId64 " (node): %d%% of its samples are in JIT code without names: "
				    "start node with --perf-basic-prof to name them",
				    f->k.pid, pct);
		else if (rt)
			marple_warn("pid %" PRId64 " (java): %d%% of its samples are in JIT code without names: "
				    "run 'jcmd %" PRId64 " Compiler.perfmap' (JDK 17+) before the capture ends, or "
				    "start java with -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit; "
				    "add -XX:+PreserveFramePointer, or its compiled frames hide their callers "
				    "(main among them)",
				    f->k.pid, pct, f->k.pid);
	}
	free(first);
	hashtab_free(unnamed);
}

void jitframes_resolve(void)
{
	struct hashtab *read = hashtab_new();	/* the processes whose map was read */

	for (size_t i = 0; i < reg.n; i++) {
		struct jitframe *f = &reg.v[i];
		if (f->name || !f->k.syms)
			continue;
		struct jitframe_key proc = f->k;	/* padding included: a copy of a zeroed key */
		proc.addr = 0;
		size_t before = hashtab_size(read);
		hashtab_add(read, &proc, sizeof(proc), 0, 0);
		if (hashtab_size(read) > before)	/* once a process */
			syms_cache_jit_reload(f->k.syms, (pid_t)f->k.pid, f->k.exec_id);
		f->name = syms_cache_lookup_exec(f->k.syms, (pid_t)f->k.pid, f->k.exec_id, f->k.addr, NULL, NULL);
	}
	hashtab_free(read);
	advise();
}

const char *jitframes_name(const char *frame)
{
	struct jitframe *f = entry_of(frame);

	if (!f)
		return frame;
	return f->name ? f->name : f->fallback;
}

const char *jitframes_name_now(const char *frame)
{
	struct jitframe *f = entry_of(frame);

	if (!f)
		return frame;
	if (!f->name && f->k.syms)	/* the lookup reads a changed map (once a second) */
		f->name = syms_cache_lookup_exec(f->k.syms, (pid_t)f->k.pid, f->k.exec_id, f->k.addr, NULL, NULL);
	return f->name ? f->name : f->fallback;
}

static void jitframes_stats(struct jitframes_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->frames = reg.n;
	for (size_t i = 0; i < reg.n; i++) {
		out->leaf_weight += reg.v[i].leaf_weight;
		if (reg.v[i].name) {
			out->named_later++;
			out->leaf_weight_named += reg.v[i].leaf_weight;
		}
	}
}

void jitframes_trailer_add(json_t *trailer)
{
	struct jitframes_stats st;

	if (!reg.n)
		return;
	jitframes_stats(&st);
	json_t *o = json_object();
	json_object_set_new(o, "unnamed_when_sampled", json_integer((json_int_t)st.frames));
	json_object_set_new(o, "named_later", json_integer((json_int_t)st.named_later));
	json_object_set_new(o, "unnamed", json_integer((json_int_t)(st.frames - st.named_later)));
	json_object_set_new(o, "leaf_weight", json_integer((json_int_t)st.leaf_weight));
	json_object_set_new(o, "leaf_weight_named_later", json_integer((json_int_t)st.leaf_weight_named));
	json_object_set_new(trailer, "jit_frames", o);
}

void jitframes_forget(struct syms_cache *syms)
{
	for (size_t i = 0; i < reg.n; i++)
		if (reg.v[i].k.syms == syms) {
			/* a name of the cache dies with it: keep a copy */
			if (reg.v[i].name)
				reg.v[i].name = hashtab_add(reg.strings, reg.v[i].name, strlen(reg.v[i].name), 0, 0)->key;
			reg.v[i].k.syms = NULL;
		}
}
