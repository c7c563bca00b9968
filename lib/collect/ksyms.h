/* ksyms.h — kernel symbols: each distinct kernel address named when first
 * asked, through a BPF program (bpf_snprintf "%pB", bpf/ksymname.bpf.c):
 * reading all of /proc/kallsyms would cost ~37 ms of CPU per run.  Where
 * that program cannot run, /proc/kallsyms (text symbols) is read once
 * instead.  Split from the user-space symbolizer (syms.h) so that naming a
 * user frame needs no BPF skeleton.
 *
 *   struct ksyms *k = syms_kernel_load();      // once; NULL if unreadable
 *   syms_kernel_resolve(k, addrs, n);          // a batch, ahead of lookups
 *   name = syms_kernel_lookup(k, addr, &off);
 */
#ifndef MARPLE_KSYMS_H
#define MARPLE_KSYMS_H

#include <stddef.h>
#include <stdint.h>

struct ksyms;
/* NULL + message if kernel symbols cannot be read (not root, kptr_restrict). */
struct ksyms *syms_kernel_load(void);
void syms_kernel_free(struct ksyms *k);
/* Name of the kernel function holding addr, or NULL.  The string lives as
 * long as k. */
const char *syms_kernel_lookup(struct ksyms *k, uint64_t addr, uint64_t *offset);
/* 1 when names come from the kernel one address at a time (BPF), 0 when
 * from /proc/kallsyms read whole. */
int syms_kernel_by_address(const struct ksyms *k);
/* Name addrs[0..n) in as few kernel calls as possible, ahead of lookups. */
void syms_kernel_resolve(struct ksyms *k, const uint64_t *addrs, size_t n);

#endif
