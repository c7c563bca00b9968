/* kernelids.h — the ids in the kernel's BTF that loading our BPF objects
 * needs: each kfunc a program calls (bpf/kfuncs.h) and the tracepoint each
 * tp_btf program attaches to.  libbpf finds them by reading and indexing
 * the kernel's whole BTF (5.5 MB here: 3-4 ms of every collector's start,
 * 7.7 ms in a process of its own, and ~11 MB more resident at the peak).  Here they are found once a boot,
 * every tracepoint's and every kfunc of ours, and kept in /run/marple
 * (rundir.h) as kernel-btf-ids; a start reads that file (~60 KB).
 *
 * kernelids_use() registers libbpf program handlers for the sections our
 * objects use (tp_btf/, perf_event, uprobe, uretprobe, tracepoint/,
 * raw_tp/): before each program's load they turn its kfunc calls into
 * calls of the kernel's, and give a tp_btf program its tracepoint's id, so
 * that libbpf needs no BTF of the kernel but the object's minimal copy for
 * CO-RE (corebtf.h).  Call it before an object is opened (corebtf_opts
 * does).  A program in another section (uprobe.s, syscall, ...) that
 * calls a kfunc of kfuncs.h is not turned, and fails to load.
 * MARPLE_KERNEL_IDS=off: the kernel's BTF read at every start.
 *
 *   kernelids_use();                  // once, before *_bpf__open
 *   ... kernelids_trailer(trailer);   // "kernel_btf_ids": "kept", "read", "none"
 */
#ifndef MARPLE_KERNELIDS_H
#define MARPLE_KERNELIDS_H

#include <jansson.h>

/* The program handlers registered (once a process). */
void kernelids_use(void);
/* "kernel_btf_ids": whether this start read them from the kept file
 * ("kept"), from the kernel's BTF ("read"), or needed none ("none"). */
void kernelids_trailer(json_t *trailer);

#endif
