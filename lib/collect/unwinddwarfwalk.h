/* unwinddwarfwalk.h — user-space DWARF unwinding of copied user stacks (--dwarf).
 *
 * The BPF side copies the user registers and the top of the user stack at a
 * sample (struct user_stack, bpf/stacks.h: stacks_copy_user()); this walks it
 * with libunwind, reading the .eh_frame_hdr/.eh_frame of the mapped ELF files
 * through lib/collect/syms.h (the approach of perf --call-graph dwarf):
 *
 *   struct unwinder *u = unwind_new(syms);
 *   uint64_t ips[MARPLE_STACK_DEPTH];
 *   int n = unwind_stack(u, pid, exec_id, &sample->user, ips, MARPLE_STACK_DEPTH);
 *   stackframes_user_ips_exec(sf, pid, exec_id, ips, n);   // leaf first, like a stack map
 *
 * One libunwind address space (and cache) per image of a process (pid, exec
 * id: see lib/collect/syms.h).
 */
#ifndef MARPLE_UNWIND_H
#define MARPLE_UNWIND_H

#include <linux/types.h>
#include <stdint.h>
#include <sys/types.h>

#include "stacks.h"
#include "syms.h"

struct unwinder;
struct unwinder *unwind_new(struct syms_cache *syms);
void unwind_free(struct unwinder *u);
/* Return addresses of the copied stack, leaf (the sampled ip) first; the
 * count (0 if there is no user stack): a walk that cannot go on stops there
 * (counted in unwind_stats).  -1 with a message said when libunwind has no
 * memory for the process (the collector exits 1). */
int unwind_stack(struct unwinder *u, pid_t pid, uint64_t exec_id, const struct user_stack *us, uint64_t *ips,
		 int max);
/* The same from a caller's frame (a walk that stopped partway: struct
 * cut_sample), where regs[UREG_IP] is a return address: its rules are those
 * of the call before it; ips[0] is still regs[UREG_IP]. */
int unwind_stack_caller(struct unwinder *u, pid_t pid, uint64_t exec_id, const struct user_stack *us,
			uint64_t *ips, int max);

struct unwind_stats {
	uint64_t stacks, frames;
	uint64_t stopped_no_info;	/* walks that ended at an address without unwind info */
	uint64_t stopped_stack_end;	/* walks that ran past the copied stack */
	uint64_t ns;			/* time spent unwinding */
};
void unwind_stats(const struct unwinder *u, struct unwind_stats *out);

#endif
