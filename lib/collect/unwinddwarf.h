/* unwinddwarf.h — the user side of --dwarf (marple-callstack, marple-offcpu):
 * copies of user stacks (struct dwarf_sample, bpf/stacks.h) unwound with
 * lib/collect/unwinddwarfwalk.h as they come, weights summed per (process image, comm, kernel
 * stack id, user addresses), symbolized and written at the end.
 *
 *   struct unwinddwarf *d = unwinddwarf_new(syms);
 *   unwinddwarf_add(d, sample, 1);                    // for each ring buffer record
 *   ...
 *   records = unwinddwarf_write(d, sf, counts_fd, stdout);  // + kernel threads' counts
 *   unwinddwarf_trailer_add(d, trailer, verbose);     // "unwind": {..., "us": N}
 *   unwinddwarf_free(d);
 */
#ifndef MARPLE_DWARFSTACKS_H
#define MARPLE_DWARFSTACKS_H

#include <jansson.h>
#include <linux/types.h>
#include <stdint.h>
#include <stdio.h>

#include "stacks.h"

struct unwinddwarf;
struct syms_cache;
struct stackframes;

struct unwinddwarf *unwinddwarf_new(struct syms_cache *syms);
void unwinddwarf_free(struct unwinddwarf *d);
/* Unwind s's user stack (only s->user.len bytes of it are read) and add
 * weight to the stack found. */
int unwinddwarf_add(struct unwinddwarf *d, const struct dwarf_sample *s, uint64_t weight);	/* 0, -1 (said) */
/* Symbolize and write one record per distinct frame list, merged with those
 * of the BPF counts map counts_fd (-1: none) where the tasks without a user
 * stack (kernel threads) are counted; how many records. */
uint64_t unwinddwarf_write(const struct unwinddwarf *d, struct stackframes *sf, int counts_fd, FILE *f);
/* The trailer's "unwind": {"stacks", "frames", "stopped_no_info", "us"} (the
 * time spent unwinding); with verbose, the same on stderr. */
void unwinddwarf_trailer_add(const struct unwinddwarf *d, json_t *trailer, int verbose);

#endif
