/* protowire.h — the protocol buffers wire format, written without a schema
 * compiler.  The renderers that write pprof profiles and Perfetto traces have
 * few messages and many records: they encode one top-level message at a time
 * into a reused buffer and pass it on, so output streams and memory stays
 * flat (protobuf-c would build the whole message tree first).
 *
 *   struct pbuf b = { 0 };
 *   size_t m = protowire_begin(&b, 2);       -- field 2: a nested message (or packed list)
 *   protowire_uint(&b, 1, 42);               --   its field 1 = 42
 *   protowire_end(&b, m);                    -- 12 02 08 2a: the length filled in
 */
#ifndef MARPLE_PROTOWIRE_H
#define MARPLE_PROTOWIRE_H

#include <stddef.h>
#include <stdint.h>

struct pbuf {
	unsigned char *b;
	size_t n, cap;
};

enum protowire_wiretype { PB_VARINT = 0, PB_FIXED64 = 1, PB_LEN = 2, PB_FIXED32 = 5 };

/* Room for more bytes (the slow path out of line). */
void protowire_grow(struct pbuf *p, size_t more);

/* Inline: a trace writes several varints per event, millions of events. */
static inline void protowire_varint(struct pbuf *p, uint64_t v)
{
	if (p->n + 10 > p->cap)
		protowire_grow(p, 10);
	while (v >= 0x80) {
		p->b[p->n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p->b[p->n++] = (unsigned char)v;
}

static inline void protowire_tag(struct pbuf *p, uint32_t field, enum protowire_wiretype wire)
{
	protowire_varint(p, (uint64_t)field << 3 | (uint64_t)wire);
}

/* A varint field: uint32/uint64/bool, and int32/int64 (negative: ten bytes). */
static inline void protowire_uint(struct pbuf *p, uint32_t field, uint64_t v)
{
	protowire_tag(p, field, PB_VARINT);
	protowire_varint(p, v);
}

static inline void protowire_int(struct pbuf *p, uint32_t field, int64_t v)
{
	protowire_uint(p, field, (uint64_t)v);
}
/* A length-delimited field of raw bytes: string, bytes, a message encoded elsewhere. */
void protowire_bytes(struct pbuf *p, uint32_t field, const void *s, size_t len);
/* A nested message or a packed repeated field: protowire_begin returns a mark, the
 * content follows, protowire_end fills in its length. */
size_t protowire_begin(struct pbuf *p, uint32_t field);
void protowire_end(struct pbuf *p, size_t mark);
/* Raw bytes appended as they are. */
void protowire_raw(struct pbuf *p, const void *s, size_t len);
void protowire_free(struct pbuf *p);

#endif
