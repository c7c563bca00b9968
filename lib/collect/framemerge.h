/* framemerge.h — an interpreter's frames put into the native stack that
 * ran them: each native activation of its eval loop (CPython's
 * _PyEval_EvalFrameDefault, PHP's execute_ex, Perl's runops, Ruby's
 * rb_vm_exec) replaced by the frames it ran, a Ruby C method (Array#sort)
 * put where its C function's native frame is.  pyframes.c gives it one
 * stack's two halves and names what it answers; nothing here reads a
 * process or names a frame.
 *
 *   struct framemerge_stack s = { .ips = ips, .n = n, .native = names, .words = words, .m = m,
 *                                 .eval_lo = ..., .native_whole = 1 };
 *   struct framemerge_result r;
 *   framemerge_run(&s, &r);        // r.out[0..r.nout): root first, each a native name or a word
 *   ...
 *   free(r.out);
 */
#ifndef MARPLE_FRAMEMERGE_H
#define MARPLE_FRAMEMERGE_H

#include <stddef.h>
#include <stdint.h>

/* A Ruby C method's word: its C function's extent (0, 0: not known) */
struct framemerge_cmethod {
	int is;				/* the word is a C method's */
	uint64_t lo, hi;
};

struct framemerge_stack {
	const uint64_t *ips;		/* the native user stack, leaf first (return
					 * addresses but the leaf's) */
	int n;
	const char *const *native;	/* their names, root first */
	const uint64_t *words;		/* the interpreter's frames, leaf first (PY_FRAME_*) */
	int m;
	const struct framemerge_cmethod *cmethod;	/* by word; NULL: none is */
	uint64_t eval_lo, eval_hi, cold_lo, cold_hi;	/* the eval loop (and its cold part) */
	uint64_t loop_lo, loop_hi;	/* Ruby's VM loop, said by the Ruby frames */
	int native_whole;		/* the native stack reaches its root */
};

/* One frame of the merged stack: a native frame's name (or the marker of
 * frames not unwound), else word (its index in words) */
struct framemerge_frame {
	const char *native;
	int word;
};

struct framemerge_result {
	struct framemerge_frame *out;	/* root first; malloc'ed */
	size_t nout;
	/* as pyframes' trailer counts them: paired one to one, or not; the
	 * activations left native, words left out, words put before a cut
	 * native stack, -X perf trampolines left out */
	int merged, mismatched, unpaired, dropped, outside, trampolines;
};

/* Merge s into r. */
void framemerge_run(const struct framemerge_stack *s, struct framemerge_result *r);

#endif
