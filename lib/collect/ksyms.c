/* ksyms.c — kernel symbols (see ksyms.h), with the BPF program that names
 * them: the one part of the symbolizer that needs the BPF toolchain. */
#include "ksyms.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ksymname.h"
#include "ksymname.skel.h"
#include "util.h"

/* Two ways to name kernel addresses.  The cheap one asks the kernel, a batch
 * of addresses per BPF program run (bpf/ksymname.bpf.c): it costs nothing up
 * front and ~1 us per distinct address.  The fallback reads all of
 * /proc/kallsyms (~37 ms of kernel CPU for 120,000 symbols) into a sorted
 * table: used where that program cannot load (kernels before 5.14, no
 * bpf_snprintf %pB), for names too long for the program's buffer, and when
 * MARPLE_KSYMS=kallsyms asks for it (tests compare the two). */

struct ksym {
	uint64_t addr;
	uint32_t name;		/* offset in names */
};

struct ktable {
	struct ksym *syms;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
};

struct kname {			/* one address named by the kernel */
	uint64_t addr;		/* 0: free slot */
	uint64_t offset;
	const char *name;	/* owned; NULL: no symbol there */
};

struct ksyms {
	struct ksymname_bpf *skel;	/* NULL: table only */
	int prog_fd;
	struct kname *cache;		/* open addressing on addr, power-of-two size */
	size_t cache_n, cache_cap;
	struct ktable *table;		/* /proc/kallsyms, loaded when first needed */
	int table_failed;
};

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void ktable_free(struct ktable *t)
{
	if (!t)
		return;
	free(t->syms);
	free(t->names);
	free(t);
}

static struct ktable *ktable_load(void)
{
	int fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	struct ktable *t;
	size_t bufsz = 1 << 20, have = 0;
	char *buf;

	if (fd < 0) {
		marple_warn("/proc/kallsyms: %s", strerror(errno));
		return NULL;
	}
	t = marple_calloc(1, sizeof(*t));
	buf = marple_malloc(bufsz);
	for (;;) {
		/* big reads: stdio would read a /proc file 1 KB at a time */
		ssize_t r = read(fd, buf + have, bufsz - have - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			marple_warn("/proc/kallsyms: %s", strerror(errno));
			break;
		}
		have += (size_t)r;
		buf[have] = 0;
		char *line = buf, *nl;
		while ((nl = memchr(line, '\n', (size_t)(buf + have - line))) || (r == 0 && line < buf + have)) {
			if (nl)
				*nl = 0;
			char *end, *name;
			uint64_t addr = strtoull(line, &end, 16);
			char *next = nl ? nl + 1 : buf + have;
			if (end[0] == ' ' && end[1] && end[2] == ' ' && addr != 0 &&
			    (end[1] == 't' || end[1] == 'T' || end[1] == 'w' || end[1] == 'W')) {
				name = end + 3;
				size_t len = strcspn(name, "\t");
				t->syms = marple_grow(t->syms, &t->cap, t->n + 1, sizeof(*t->syms));
				t->names = marple_grow(t->names, &t->names_cap, t->names_len + len + 1, 1);
				memcpy(t->names + t->names_len, name, len);
				t->names[t->names_len + len] = 0;
				t->syms[t->n].addr = addr;
				t->syms[t->n].name = (uint32_t)t->names_len;
				t->n++;
				t->names_len += len + 1;
			}
			line = next;
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (r == 0)
			break;
		if (have + 1 >= bufsz)		/* a 1 MB line: not kallsyms */
			have = 0;
	}
	free(buf);
	close(fd);
	if (t->n == 0) {
		marple_warn("/proc/kallsyms: no readable kernel symbols (all addresses 0: not root, or kptr_restrict)");
		ktable_free(t);
		return NULL;
	}
	qsort(t->syms, t->n, sizeof(*t->syms), ksym_cmp);
	return t;
}

static const char *ktable_lookup(const struct ktable *t, uint64_t addr, uint64_t *offset)
{
	size_t lo = 0, hi;

	if (!t || t->n == 0 || addr < t->syms[0].addr)
		return NULL;
	hi = t->n;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	if (offset)
		*offset = addr - t->syms[lo].addr;
	return t->names + t->syms[lo].name;
}

static int quiet_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level, (void)fmt, (void)ap;
	return 0;
}

/* The BPF namer, or NULL where this kernel cannot run it (said nowhere: the
 * table serves instead, only slower). */
static struct ksymname_bpf *namer_open(void)
{
	libbpf_print_fn_t old = libbpf_set_print(quiet_libbpf);
	struct ksymname_bpf *skel = ksymname_bpf__open_and_load();
	libbpf_set_print(old);
	if (skel && !skel->bss) {	/* no mmappable global data */
		ksymname_bpf__destroy(skel);
		skel = NULL;
	}
	if (skel) {
		LIBBPF_OPTS(bpf_test_run_opts, run);
		skel->bss->count = 0;
		if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.name_addrs), &run) != 0) {
			ksymname_bpf__destroy(skel);
			skel = NULL;
		}
	}
	return skel;
}

struct ksyms *syms_kernel_load(void)
{
	struct ksyms *k = marple_calloc(1, sizeof(*k));
	const char *how = getenv("MARPLE_KSYMS");

	if (getuid() == 0 && !(how && strcmp(how, "kallsyms") == 0) && (k->skel = namer_open())) {
		k->prog_fd = bpf_program__fd(k->skel->progs.name_addrs);
		return k;
	}
	if (!(k->table = ktable_load())) {
		free(k);
		return NULL;
	}
	return k;
}

int syms_kernel_by_address(const struct ksyms *k)
{
	return k && k->skel;
}

void syms_kernel_free(struct ksyms *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->cache_cap; i++)
		free((char *)k->cache[i].name);
	free(k->cache);
	ktable_free(k->table);
	if (k->skel)
		ksymname_bpf__destroy(k->skel);
	free(k);
}

static size_t kname_slot(const struct ksyms *k, uint64_t addr)
{
	size_t mask = k->cache_cap - 1, i = (size_t)((addr * 0x9E3779B97F4A7C15ull) >> 20) & mask;
	while (k->cache[i].addr && k->cache[i].addr != addr)
		i = (i + 1) & mask;
	return i;
}

static struct kname *kname_find(const struct ksyms *k, uint64_t addr)
{
	if (!k->cache_cap)
		return NULL;
	struct kname *e = &k->cache[kname_slot(k, addr)];
	return e->addr ? e : NULL;
}

static struct kname *kname_add(struct ksyms *k, uint64_t addr)
{
	if (2 * (k->cache_n + 1) > k->cache_cap) {
		struct kname *old = k->cache;
		size_t oldcap = k->cache_cap;
		k->cache_cap = oldcap ? 2 * oldcap : 1024;
		k->cache = marple_calloc(k->cache_cap, sizeof(*k->cache));
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].addr)
				k->cache[kname_slot(k, old[i].addr)] = old[i];
		free(old);
	}
	struct kname *e = &k->cache[kname_slot(k, addr)];
	e->addr = addr;
	k->cache_n++;
	return e;
}

/* The table's answer, for what the BPF namer could not say. */
static const char *from_table(struct ksyms *k, uint64_t addr, uint64_t *offset)
{
	if (!k->table && !k->table_failed && !(k->table = ktable_load()))
		k->table_failed = 1;
	return ktable_lookup(k->table, addr, offset);
}

/* The cached answer for addr, from the table when the namer failed. */
static void name_from_table(struct ksyms *k, uint64_t addr)
{
	struct kname *e = kname_find(k, addr);
	uint64_t o = 0;
	const char *nm = from_table(k, addr, &o);
	e->name = nm ? marple_strdup(nm) : NULL;
	e->offset = o;
}

/* "func+0x1c/0x80 [module]" from %pB of addr+1 -> func, offset. */
static void parse_pb(struct ksyms *k, struct kname *e, const char *s)
{
	const char *plus = strstr(s, "+0x");
	char *end;

	if (strncmp(s, "0x", 2) == 0) {		/* no symbol there */
		e->name = NULL;
		return;
	}
	unsigned long long off = plus ? strtoull(plus + 3, &end, 16) : 0;
	if (!plus || *end != '/' || off == 0) {	/* cut short: name too long */
		name_from_table(k, e->addr);
		return;
	}
	e->name = marple_strndup(s, (size_t)(plus - s));
	e->offset = off - 1;		/* we asked about addr+1 */
}

void syms_kernel_resolve(struct ksyms *k, const uint64_t *addrs, size_t n)
{
	if (!k || !k->skel)
		return;
	size_t batch = 0;
	uint64_t pending[KSYMNAME_BATCH];
	for (size_t i = 0; i <= n; i++) {
		if (i < n && addrs[i] && addrs[i] != UINT64_MAX && !kname_find(k, addrs[i])) {
			kname_add(k, addrs[i]);		/* a repeat in this batch is found now */
			k->skel->bss->addrs[batch] = addrs[i] + 1;
			pending[batch++] = addrs[i];
		}
		if (batch == KSYMNAME_BATCH || (i == n && batch)) {
			LIBBPF_OPTS(bpf_test_run_opts, run);
			k->skel->bss->count = (uint32_t)batch;
			int failed = bpf_prog_test_run_opts(k->prog_fd, &run) != 0;
			for (size_t j = 0; j < batch; j++) {
				char *s = k->skel->bss->names[j];
				s[KSYMNAME_LEN - 1] = 0;
				if (failed)
					name_from_table(k, pending[j]);
				else
					parse_pb(k, kname_find(k, pending[j]), s);
			}
			batch = 0;
		}
	}
}

const char *syms_kernel_lookup(struct ksyms *k, uint64_t addr, uint64_t *offset)
{
	if (!k)
		return NULL;
	if (!k->skel)
		return ktable_lookup(k->table, addr, offset);
	struct kname *e = kname_find(k, addr);
	if (!e) {
		syms_kernel_resolve(k, &addr, 1);
		if (!(e = kname_find(k, addr)))		/* 0 or ~0: never a symbol */
			return NULL;
	}
	if (offset && e->name)
		*offset = e->offset;
	return e->name;
}

