/* procnewsring.c — one reader for the proc_news ring buffer (see procnewsring.h). */
#include "procnewsring.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

struct procnewsring {
	struct ring_buffer *rb;
	struct {
		procnewsring_fn fn;
		void *ctx;
	} client[PROCNEWS_NTYPES];
};

/* The one callback of the ring: the record's type says whose it is. */
static int dispatch(void *ctx, void *data, size_t len)
{
	struct procnewsring *pn = ctx;
	struct procnews_head h;

	if (len < sizeof(h))
		return 0;
	memcpy(&h, data, sizeof(h));
	if (h.type == 0 || h.type >= PROCNEWS_NTYPES || !pn->client[h.type].fn)
		return 0;
	return pn->client[h.type].fn(pn->client[h.type].ctx, (char *)data + sizeof(h), len - sizeof(h));
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
	if (type > 0 && type < PROCNEWS_NTYPES) {
		pn->client[type].fn = fn;
		pn->client[type].ctx = ctx;
	}
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
