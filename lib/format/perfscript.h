/* perfscript.h — folding `perf script` text into stacks, byte for byte as
 * FlameGraph's stackcollapse-perf.pl does (same options, same rules for
 * period weighting, event filtering, [unknown] frames, `->` inlines, _[k]/_[j]/_[i]
 * annotations and comm names with spaces), except that the last sample is
 * kept when the input lacks a final blank line.
 *
 *   input:  ab 23927 [000] 184694.229089: cycles:
 *           \t ffffffff8104f45a native_write_msr_safe ([kernel.kallsyms])
 *           \t     7f26dc479340 __write_nocancel (/lib/x86_64-linux-gnu/libpthread-2.19.so)
 *   sample: "ab;__write_nocancel;native_write_msr_safe", weight 1
 *
 * The parser takes lines (or a whole buffer) and calls back once per sample
 * with the folded stack text; it allocates nothing per line.
 */
#ifndef MARPLE_PERFSCRIPT_H
#define MARPLE_PERFSCRIPT_H

#include <stddef.h>
#include <stdint.h>

struct perfscript_opts {
	int pid;		/* comm-PID as the first frame */
	int tid;		/* comm-PID/TID */
	int kernel;		/* _[k] after kernel frames */
	int jit;		/* _[j] after JIT frames (perf-PID.map, jitted-*.so) */
	int addrs;		/* [module <addr>] instead of [module] for unknown symbols */
	const char *event_filter;	/* keep only this event; NULL: the first one seen */
};

/* One folded sample: "comm;root;...;leaf" (not NUL-terminated) and its weight. */
typedef void (*perfscript_sample_fn)(void *ctx, const char *stack, size_t len, uint64_t weight);
/* A line that is neither a comment, a sample header, a frame nor blank. */
typedef void (*perfscript_bad_fn)(void *ctx, unsigned long lineno, const char *reason);

struct perfscript;

struct perfscript *perfscript_new(const struct perfscript_opts *o, perfscript_sample_fn fn,
				    perfscript_bad_fn bad, void *ctx);
void perfscript_free(struct perfscript *p);

/* Feed one line without its newline; lineno is used in bad-line reports. */
void perfscript_line(struct perfscript *p, const char *s, size_t len, unsigned long lineno);
/* The whole samples at the start of s[0, n) (what a reader holds:
 * lines_buffered), each through the blank line after it, folded as their
 * lines one by one would be (the first line numbered lineno), without a
 * call for each: returns the bytes taken and sets *lines to their lines.
 * Stops before anything else (a comment, a line ending in "\r", a sample
 * not whole in s), which is left for perfscript_line. */
size_t perfscript_whole_samples(struct perfscript *p, const char *s, size_t n, unsigned long lineno,
				unsigned long *lines);
/* In a sample's callback: a word the caller may write about this sample's
 * stack (0 at first), the same word each time the same sample comes again
 * from the memo of whole samples (so the caller need not look its stack up
 * again); NULL for a sample not memoized. */
uint64_t *perfscript_sample_note(struct perfscript *p);
/* End of one input: count the pending sample, if any. */
void perfscript_finish(struct perfscript *p);
/* A whole buffer of perf script text (any bytes), then perfscript_finish().
 * Returns the number of samples counted.  Fuzzing entry point. */
uint64_t perfscript_parse_buffer(struct perfscript *p, const char *buf, size_t len);

uint64_t perfscript_samples(const struct perfscript *p);	/* counted */
uint64_t perfscript_filtered(const struct perfscript *p);	/* other events, skipped */
/* The event kept (the filter, or the first event seen); "" if none yet. */
const char *perfscript_event(const struct perfscript *p);
/* First event seen that the filter skipped; "" if none. */
const char *perfscript_other_event(const struct perfscript *p);
/* What a weight counts: "samples" when no sample had a period, else the
 * period's unit: "ns" for cpu-clock and task-clock, else the event's name
 * (cycles, instructions, ...). */
const char *perfscript_weight_unit(const struct perfscript *p);

#endif
