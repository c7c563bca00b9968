/* unwinddwarf.c — unwinding and counting --dwarf stack copies (see unwinddwarf.h). */
#include "unwinddwarf.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "stackframes.h"
#include "stacksbpf.h"
#include "unwinddwarfwalk.h"
#include "util.h"

struct unwinddwarf {
	struct unwinder *unw;
	struct hashtab *tab;
};

/* a key of tab: cut after the addresses found */
struct dwarf_key {
	uint32_t pid;
	int32_t kid;
	uint32_t exec_id;
	char comm[MARPLE_COMM_LEN];
	uint64_t ips[MARPLE_STACK_DEPTH];
};

struct unwinddwarf *unwinddwarf_new(struct syms_cache *syms)
{
	struct unwinddwarf *d = marple_calloc(1, sizeof(*d));

	d->unw = unwind_new(syms);
	d->tab = hashtab_new();
	return d;
}

void unwinddwarf_free(struct unwinddwarf *d)
{
	if (!d)
		return;
	hashtab_free(d->tab);
	unwind_free(d->unw);
	free(d);
}

int unwinddwarf_add(struct unwinddwarf *d, const struct dwarf_sample *s, uint64_t weight)
{
	struct dwarf_key k;

	memset(&k, 0, sizeof(k));
	k.pid = s->pid;
	k.kid = s->kern_stack_id;
	k.exec_id = s->exec_id;
	memcpy(k.comm, s->comm, MARPLE_COMM_LEN);
	int n = unwind_stack(d->unw, (pid_t)s->pid, s->exec_id, &s->user, k.ips, MARPLE_STACK_DEPTH);
	if (n < 0)
		return -1;
	hashtab_add(d->tab, &k, offsetof(struct dwarf_key, ips) + (size_t)n * sizeof(uint64_t), weight, 0);
	return 0;
}

static void collect(const struct unwinddwarf *d, struct stackframes *sf, struct hashtab *t)
{
	for (size_t i = 0; i < hashtab_size(d->tab); i++) {
		const struct hashtab_entry *e = hashtab_at(d->tab, i);
		struct dwarf_key k;
		memset(&k, 0, sizeof(k));
		memcpy(&k, e->key, e->len);
		size_t n = (e->len - offsetof(struct dwarf_key, ips)) / sizeof(uint64_t);
		stackframes_begin(sf, k.comm);
		stackframes_user_ips_exec(sf, (pid_t)k.pid, k.exec_id, k.ips, n);
		stackframes_kernel_id(sf, k.kid);
		stackframes_collect(sf, t, e->count[0]);
	}
}

uint64_t unwinddwarf_write(const struct unwinddwarf *d, struct stackframes *sf, int counts_fd, FILE *f)
{
	struct hashtab *out = hashtab_new();

	if (counts_fd >= 0)
		stacksbpf_collect_counts(sf, counts_fd, out);
	collect(d, sf, out);
	uint64_t records = stackframes_write_table(sf, out, f);
	hashtab_free(out);
	return records;
}

void unwinddwarf_trailer_add(const struct unwinddwarf *d, json_t *tr, int verbose)
{
	struct unwind_stats us;

	unwind_stats(d->unw, &us);
	json_object_set_new(tr, "unwind", json_pack("{s:I,s:I,s:I,s:I}", "stacks", (json_int_t)us.stacks, "frames",
						    (json_int_t)us.frames, "stopped_no_info",
						    (json_int_t)us.stopped_no_info, "us", (json_int_t)(us.ns / 1000)));
	if (verbose)
		marple_warn("unwound %llu stacks, %llu frames, in %.1f ms (%.1f us a stack)",
			(unsigned long long)us.stacks, (unsigned long long)us.frames, us.ns / 1e6,
			us.stacks ? us.ns / 1e3 / us.stacks : 0.0);
}
