/* procnewsring.h — the user side of bpf/procnews.bpf.h: one reader of the
 * proc_news ring buffer, on which a stack collector's programs tell what is
 * new about a process (a new image, a drain to do, mappings to read, a file
 * VMA found, a Python question), that hands each record to the client that
 * registered for its type (each of them, in the order they registered), in
 * the order the records were made.
 *
 *   struct procnewsring *pn = procnewsring_open(skel->obj);          // after load
 *   procnewsring_on(pn, PROCNEWS_IMAGE, on_image, syms);          // each client its type
 *   struct ring_buffer *rb = procnewsring_ring(pn);   // poll it; other rings may be added
 *   ... capture: ring_buffer__poll(rb, ms) ...
 *   procnewsring_free(pn);                    // and the ring buffer
 *
 * A handler gets the record's body (after its struct procnews_head) and the
 * body's length, as a libbpf ring buffer callback gets a record.  Records of
 * a type nobody registered for (a drain request is only a wake-up: it has
 * done its work once the poll returns) are skipped.
 */
#ifndef MARPLE_PROCNEWSRING_H
#define MARPLE_PROCNEWSRING_H

#include <linux/types.h>
#include <stddef.h>

#include "procnews.h"

struct procnewsring;
struct bpf_object;
struct ring_buffer;

typedef int (*procnewsring_fn)(void *ctx, void *body, size_t len);

/* The reader of obj's proc_news; NULL (with a warning) if it has none or
 * it cannot be read. */
struct procnewsring *procnewsring_open(struct bpf_object *obj);
/* Records of type go to fn(ctx, ...) from now on, after the clients
 * registered before (two a type; a third takes the second's place).  A
 * client's nonzero answer ends the poll, as a ring buffer callback's does. */
void procnewsring_on(struct procnewsring *pn, enum procnews_type type, procnewsring_fn fn, void *ctx);
/* The ring buffer to poll (libbpf's; procnewsring_free frees it). */
struct ring_buffer *procnewsring_ring(struct procnewsring *pn);
void procnewsring_free(struct procnewsring *pn);

#endif
