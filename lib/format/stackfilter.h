/* stackfilter.h — what a stack is, from its frames alone, for the views
 * that leave some out.
 *
 * A kernel thread (kworker, ksoftirqd, migration, rcu_*) has no user part:
 * below its comm its stack starts where every kernel thread starts,
 *
 *   kworker/u8:1;ret_from_fork_asm;ret_from_fork;kthread;worker_thread;schedule
 *
 * (frames may end in "_[k]").  System-wide off-CPU time is mostly theirs,
 * asleep for the whole capture: bcc offcputime -u leaves them out.
 */
#ifndef MARPLE_STACKFILTER_H
#define MARPLE_STACKFILTER_H

#include <stddef.h>
#include <stdint.h>

#include "escape.h"

/* frames root first, frames[0] the comm: 1 for a kernel thread's stack. */
int stackfilter_kernel_thread(const struct mstr *frames, size_t n);

/* A frame written with its line, "NAME (FILE:LINE)" (Python's, as the
 * collectors name them): where ":LINE" starts, else 0.  Without it the
 * frame is "NAME (FILE)" (py-spy --nolineno): main (app.py:62) and
 * main (app.py:63) are one function, a recursion one tower. */
size_t stackfilter_line_at(const char *s, size_t len);
/* The frames of folded text stack[0..len) (';' between them) without their
 * lines, into *out (grown, *cap its room).  Returns the new length. */
size_t stackfilter_strip_lines(const char *stack, size_t len, char **out, size_t *cap);

/* What a view left out: stacks, their weight, and a few of their comms. */
struct stackfilter_count {
	uint64_t stacks;
	double weight;
	char comms[160];	/* "kworker/u8:1, migration/1, ..." */
	int more;		/* comms had no room for all */
};
void stackfilter_count_add(struct stackfilter_count *c, struct mstr comm, double weight);
/* "prog: left out N stacks of kernel threads (W UNIT: comms); HOW" on
 * stderr, when any were (how: what keeps them). */
void stackfilter_count_say(const struct stackfilter_count *c, const char *unit, const char *how);

#endif
