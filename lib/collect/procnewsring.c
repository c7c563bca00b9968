/* procnewsring.c — one reader for the proc_news ring buffer (see procnewsring.h). */
#include "procnewsring.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* clients a type: a file VMA the unwinder found is the symbolizer's news
 * and the interpreters' (a library dlopen'ed by a native process) */
#define PROCNEWS_CLIENTS 2

struct procnewsring {
	struct ring_buffer *rb;
	struct {
		procnewsring_fn fn;
		void *ctx;
	} client[PROCNEWS_NTYPES][PROCNEWS_CLIENTS];
};

/* The one callback of the ring: the record's type says whose it is. */
static int dispatch(void *ctx, void *data, size_t len)
{
	struct procnewsring *pn = ctx;
	struct procnews_head h;

	if (len < sizeof(h))
		return 0;
	memcpy(&h, data, sizeof(h));
	if (h.type == 0 || h.type >= PROCNEWS_NTYPES)
		return 0;
	for (int i = 0; i < PROCNEWS_CLIENTS && pn->client[h.type][i].fn; i++) {
		int rc = pn->client[h.type][i].fn(pn->client[h.type][i].ctx, (char *)data + sizeof(h), len - sizeof(h));
		if (rc != 0)
			return rc;
	}
	return 0;
}

struct procnewsring *procnewsring_open(struct bpf_object *obj)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, "proc_news");
	struct procnewsring *pn;

	if (!m) {
		marple_warn("no proc_news map in the BPF program");
		return NULL;
	}
	pn = marple_calloc(1, sizeof(*pn));
	if (!(pn->rb = ring_buffer__new(bpf_map__fd(m), dispatch, pn, NULL))) {
		marple_warn("cannot read the proc_news ring buffer: %s", strerror(errno));
		free(pn);
		return NULL;
	}
	return pn;
}

void procnewsring_on(struct procnewsring *pn, enum procnews_type type, procnewsring_fn fn, void *ctx)
{
	if (type <= 0 || type >= PROCNEWS_NTYPES)
		return;
	int i = 0;
	while (i < PROCNEWS_CLIENTS - 1 && pn->client[type][i].fn)
		i++;
	pn->client[type][i].fn = fn;
	pn->client[type][i].ctx = ctx;
}

struct ring_buffer *procnewsring_ring(struct procnewsring *pn)
{
	return pn->rb;
}

void procnewsring_free(struct procnewsring *pn)
{
	if (!pn)
		return;
	ring_buffer__free(pn->rb);
	free(pn);
}
