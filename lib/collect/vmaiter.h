/* vmaiter.h — whether this kernel lets a perf-event program walk a task's
 * VMAs with the open-coded iterator (Linux 6.7's bpf_iter_task_vma), for
 * the unwind tables' walker (bpf/unwindtables.bpf.h's unwind_file_lookup).
 *
 * bpf/vmaiter.bpf.c really loaded and attached to a task-clock event of
 * this thread (a sample every 100 us of its CPU) for four samples, once a
 * boot: the answer is kept in the unwind cache's kernel facts.  The probe
 * cost 5 ms of CPU on an idle machine, 12-31 ms on a busy one (loading it
 * parses the kernel's BTF, which loading the collector's program parses
 * again).
 */
#ifndef MARPLE_VMAITER_H
#define MARPLE_VMAITER_H

#include "unwindtablescache.h"

/* 1 if it does, 0 if not (or not known: a probe cut short). */
int vmaiter_works(struct unwindtablescache *cache);

#endif
