/* timed.h — stack sections with the time of every sample (marple-format(5),
 * "Timed stack sections").
 *
 * A timed capture is two sections one after the other: a stack section whose
 * header says "timed":"stacks" (the aggregated stacks, as any stack section,
 * so every reader folds it), then an event section whose header says
 * "timed":"samples", one record per sample naming its stack by its 0-based
 * position in the stack section:
 *
 *   {"marple":1,"interface":"callstack","datatype":"stack","timed":"stacks",...}
 *   3#burn;main;phase_a
 *   1#burn;main;phase_b
 *   {"trailer":1,"records":2,...}
 *   {"marple":1,"interface":"callstack","datatype":"event","timed":"samples",...}
 *   8123000100,sample,cpu0,stack=0,pid=42,tid=42
 *   8133000100,block,cpu1,stack=1,pid=42,tid=43,dur=2500000
 *   {"trailer":1,"records":2,"lost":0,...}
 *
 * This module reads those records and cuts them to a time range; marple-fold
 * and marple-cat keep the stacks themselves.
 */
#ifndef MARPLE_TIMED_H
#define MARPLE_TIMED_H

#include <jansson.h>
#include <stdint.h>

#include "stream.h"

enum timed_role {
	TIMED_NONE = 0,		/* an ordinary section */
	TIMED_STACKS,		/* stack section; its samples section follows */
	TIMED_SAMPLES,		/* event section: the samples of the stack section before */
};

/* The role a section header gives its section (datatype checked too). */
enum timed_role timed_role(json_t *hdr);

struct timed_sample {
	uint64_t time;		/* ns on the header's clock */
	uint64_t dur;		/* ns; 0 for an instant (a cpu-clock sample) */
	uint64_t stack;		/* position of its stack record */
	uint32_t pid, tid;	/* 0 when absent */
};

/* Read a record of a samples section.  Returns 0, or -1 with *why set. */
int timed_sample_parse(const struct event_rec *e, struct timed_sample *s, const char **why);

/* The same from a record's text as read (stream_reader_defer_records), for the
 * usual case: 0 when the line is a well-formed sample without %XX escapes or
 * NUL bytes (then s is what timed_sample_parse would give); -1 otherwise, and
 * the caller parses the record the long way (which may say what is wrong). */
int timed_sample_parse_text(const char *p, size_t len, struct timed_sample *s);

/* A time range [from, to) given in seconds from a section's start. */
struct timed_range {
	int set;		/* --from or --to given */
	double from_s, to_s;	/* to_s is +inf when only --from was given */
};

/* --from (is_from) or --to ARG into r (seconds, fractions allowed, >= 0;
 * exits 2 naming the option when it is not a number) and r->set. */
void timed_range_option(struct timed_range *r, int is_from, const char *arg);
/* Check from < to after parsing; exits 2 otherwise. */
void timed_range_check(const struct timed_range *r);

/* The range in ns on the clock of a section whose header is hdr (its start_ns
 * is second 0; a header without start_ns counts from 0). */
void timed_range_ns(const struct timed_range *r, json_t *hdr, uint64_t *from, uint64_t *to);

/* How much of sample s lies in [from, to): 1 or 0 for an instant (or when
 * weights count samples: ns_per_weight 0, its start decides), the nanoseconds
 * of overlap for a duration. */
uint64_t timed_in_range(const struct timed_sample *s, uint64_t from, uint64_t to, uint64_t ns_per_weight);

/* Nanoseconds per unit of weight of a stack section ("ns", "us", "ms", "s"),
 * or 0 when weights count samples (the stack section's units.weight). */
uint64_t timed_ns_per_weight(json_t *stack_hdr);

/* The weight of a stack from what timed_in_range() summed for it. */
uint64_t timed_weight(uint64_t summed, uint64_t ns_per_weight);

/* ---- cutting a stream to a time range (marple-cat --from/--to) ----
 *
 * Feed every item of the sections to write; the cut writes to out:
 *   - a timed stack section and its samples: the samples in the range, and the
 *     stacks they name with their weights summed from them (renumbered);
 *   - other event sections: the events in the range;
 *   - anything else whole, with a warning (it has no times).
 * Trailers get the new record counts; headers a "cut":[from,to] member
 * (to null when open).
 */
struct timedcut;
/* name: the input, for messages (kept, not copied). */
struct timedcut *timedcut_new(const struct timed_range *range, FILE *out, const char *name);
void timedcut_item(struct timedcut *c, struct stream_reader *r, enum stream_item it);
/* The stream (or one input) ended: write what is held back.  Frees c. */
void timedcut_free(struct timedcut *c);
#endif
