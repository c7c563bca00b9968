/* cpel.h — marple event sections -> CPEL, the binary event log of VPP's G2
 * viewer and cpeldump.
 *
 * Input is marple stream text (marple-format(5)) fed in any pieces; output is
 * one CPEL file: big-endian, file header (version byte 0x01), then STRTAB,
 * EVTDEF, TRACKDEF and one EVENT section, events sorted by time, ticks in ns
 * (1e9 ticks per second).  Memory is bounded: events are kept in sorted runs of
 * a fixed size, spilled to an unlinked temporary file, and merged at the end
 * (time-ordered input, as marple-cpusched writes, is simply streamed).  Only
 * the string table (distinct track labels and data) stays in memory.
 *
 *   struct cpel_conv *c = cpel_conv_new(&opts);
 *   cpel_conv_feed(c, buf, len);   ... as often as needed
 *   cpel_conv_finish(c);           // a last line without newline
 *   cpel_conv_write(c, stdout);
 *   cpel_conv_free(c);
 */
#ifndef MARPLE_CPEL_H
#define MARPLE_CPEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum cpel_track { CPEL_TRACK_EVENT = 0, CPEL_TRACK_PID };

struct cpel_opts {
	enum cpel_track track;	/* the record's own track (cpuN) or one per process */
	const char *datum;	/* comma-separated field keys shown as the datum, or NULL:
				   "comm (pid)" (in pid mode: the record's track) */
	size_t run_events;	/* events per sorted run in memory (0: 1M) */
	const char *name;	/* input name for messages */
	int quiet;		/* no messages on stderr (fuzzing) */
};

struct cpel_conv;

struct cpel_conv *cpel_conv_new(const struct cpel_opts *o);
void cpel_conv_free(struct cpel_conv *c);
/* Set the name used in messages from now on (a new input file). */
void cpel_conv_set_name(struct cpel_conv *c, const char *name);
/* Feed stream text; lines may be split across calls.  The buffer is used as
 * scratch space (escapes are decoded in place).  Returns 0, or -1 on a
 * fatal error (a section of another datatype, out of memory/disk, too many
 * events): a message has been printed unless quiet. */
int cpel_conv_feed(struct cpel_conv *c, char *buf, size_t len);
/* End of one input: a last line without newline is taken as is. */
int cpel_conv_finish(struct cpel_conv *c);
/* Read a whole FILE through cpel_conv_feed/finish. */
int cpel_conv_feed_file(struct cpel_conv *c, FILE *f);

uint64_t cpel_conv_events(const struct cpel_conv *c);
uint64_t cpel_conv_bad_lines(const struct cpel_conv *c);
uint64_t cpel_conv_sections(const struct cpel_conv *c);
/* The first line of the current input (since cpel_conv_set_name) holding a NUL byte, 0 if none. */
unsigned long cpel_conv_nul_line(const struct cpel_conv *c);

/* Write the CPEL file.  Returns 0, or -1 (message printed unless quiet). */
int cpel_conv_write(struct cpel_conv *c, FILE *out);

/* One call for fuzzers and tests: convert a buffer, write to out (may be a
 * /dev/null stream).  Returns 0 when at least one event was converted. */
int cpel_convert_buffer(const char *buf, size_t len, const struct cpel_opts *o, FILE *out);

#endif
