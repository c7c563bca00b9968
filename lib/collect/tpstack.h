/* tpstack.h — kernel stacks taken in tracepoint programs (tp_btf, raw_tp) end
 * with the BPF machinery that took them (bpf_trace_run1;bpf_prog_..._name);
 * tpstack_write() writes a stack record without those leaf frames. */
#ifndef MARPLE_TPSTACK_H
#define MARPLE_TPSTACK_H

#include <stdint.h>
#include <stdio.h>

#include "stackframes.h"

/* Write sf's current frames (see stackframes_write) minus the trailing BPF frames. */
void tpstack_write(struct stackframes *sf, FILE *f, uint64_t weight);

#endif
