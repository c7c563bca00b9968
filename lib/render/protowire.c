/* protowire.c — protocol buffers wire format writer (see protowire.h). */
#include "protowire.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

void protowire_grow(struct pbuf *p, size_t more)
{
	p->b = marple_grow(p->b, &p->cap, p->n + more, 1);
}

static inline void reserve(struct pbuf *p, size_t more)
{
	if (p->n + more > p->cap)
		protowire_grow(p, more);
}

void protowire_raw(struct pbuf *p, const void *s, size_t len)
{
	reserve(p, len);
	if (len)
		memcpy(p->b + p->n, s, len);
	p->n += len;
}

void protowire_bytes(struct pbuf *p, uint32_t field, const void *s, size_t len)
{
	protowire_tag(p, field, PB_LEN);
	protowire_varint(p, len);
	protowire_raw(p, s, len);
}

/* One byte is kept for the length: most nested messages are shorter than 128
 * bytes; longer ones move their content up once. */
size_t protowire_begin(struct pbuf *p, uint32_t field)
{
	protowire_tag(p, field, PB_LEN);
	reserve(p, 1);
	return p->n++;
}

void protowire_end(struct pbuf *p, size_t mark)
{
	size_t len = p->n - mark - 1, extra = 0;
	for (uint64_t v = len >> 7; v; v >>= 7)
		extra++;
	if (extra) {
		reserve(p, extra);
		memmove(p->b + mark + 1 + extra, p->b + mark + 1, len);
		p->n += extra;
	}
	uint64_t v = len;
	for (size_t i = 0; i < extra; i++, v >>= 7)
		p->b[mark + i] = (unsigned char)(v | 0x80);
	p->b[mark + extra] = (unsigned char)v;
}

void protowire_free(struct pbuf *p)
{
	free(p->b);
	*p = (struct pbuf){ 0 };
}
