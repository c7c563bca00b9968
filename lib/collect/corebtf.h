/* corebtf.h — the BTF libbpf relocates a BPF object's CO-RE accesses
 * against: a minimal copy of the kernel's, with only the types and members
 * the object's programs use (`bpftool gen min_core_btf`, a few KB), not the
 * kernel's whole BTF (5.5 MB here, whose every type libbpf searches by name
 * for each type the object names: 20 ms of a collector's start, a third of
 * `--unwind fp`'s).  Made once a boot for each object, in the background
 * while the first collector that wants it starts with the kernel's, and
 * kept in /run/marple (rundir.h) as core-btf-<the object's hash>; where
 * bpftool is missing or fails, every start uses the kernel's as before.
 * MARPLE_CORE_BTF=off: the kernel's always.
 *
 *   struct callstack_bpf *skel = callstack_bpf__open_opts(corebtf_opts(callstack_bpf__elf_bytes));
 *   ... corebtf_trailer(trailer);   // "core_btf": "minimal" or "kernel"
 */
#ifndef MARPLE_COREBTF_H
#define MARPLE_COREBTF_H

#include <bpf/libbpf.h>
#include <jansson.h>
#include <stddef.h>

/* The path of the minimal BTF of the object elf[0..size) if it was made
 * (then used), else NULL, and it is made for the next start. */
const char *corebtf_path(const void *elf, size_t size);
/* The minimal BTF of elf[0..size) made now (bpftool): 0, or -1. */
int corebtf_make(const void *elf, size_t size);
/* Open options with corebtf_path of a skeleton's object (its
 * <name>__elf_bytes): valid until the next call. */
const struct bpf_object_open_opts *corebtf_opts(const void *(*elf_bytes)(size_t *size));
/* "core_btf": which BTF the last object opened was relocated against. */
void corebtf_trailer(json_t *trailer);

#endif
