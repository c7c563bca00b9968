/* taskcast.h — whether this kernel lets a BPF program read kernel memory
 * through bpf_rdonly_cast to void (Linux 6.17), for bpf/task.bpf.h's
 * task_cast_ok: the current task's mm and utask read that way spare the
 * verifier ~5 ms of BTF searches at each load of a stack collector.
 *
 * bpf/taskcast.bpf.c loaded once a boot (it parses the kernel's BTF: a few
 * ms); the answer is kept in the unwind cache's kernel facts.
 */
#ifndef MARPLE_TASKCAST_H
#define MARPLE_TASKCAST_H

#include <bpf/libbpf.h>
#include <jansson.h>

#include "unwindtablescache.h"

/* Set obj's task_cast_ok (if it has one) to whether the kernel takes the
 * cast; never with MARPLE_TASK_CAST=off. */
void taskcast_configure(struct bpf_object *obj, struct unwindtablescache *cache);
/* The trailer's task_fields: "cast", or "trusted" (the verifier's searches) */
void taskcast_trailer(json_t *trailer);

#endif
