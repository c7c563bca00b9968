/* pprof.h — stack records as one gzipped pprof profile (profile.proto): what
 * marple-pprof writes to a file and marple-push sends to Pyroscope.
 *
 *   struct pprof *p = pprof_new(1);                 -- gzip level 1..9
 *   struct pprof_section sec;
 *   if (pprof_section_begin(p, hdr, section, line, file, &sec) < 0) ...  -- other sample types: said
 *   pprof_add_sample(p, stack, &sec, file, line);   -- each record
 *   pprof_section_end(p, hdr, trailer, section, file);
 *   size_t len; const unsigned char *gz = pprof_finish(p, &len);
 *   pprof_free(p);
 *
 * Samples are encoded and compressed as they come (protowire.h), so memory
 * holds the distinct names and the compressed output, not the stacks.  The
 * first section sets the profile's sample types (marple-pprof(1)); a later
 * one with others is refused, naming both.
 */
#ifndef MARPLE_PPROF_H
#define MARPLE_PPROF_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "stream.h"

struct pprof;

/* What every sample of a section shares. */
struct pprof_section {
	uint32_t host;			/* string id, 0: none */
	int64_t pid, tid, cpu;		/* from the header's options, -1: none */
	int root_pid, root_tid;		/* the root frame is "comm-PID" or "comm-PID/TID" */
	int kernel_only;		/* every frame but the root is a kernel frame */
	uint64_t freq;			/* CPU samples a second, 0: not CPU */
};

struct pprof *pprof_new(int gzip_level);
void pprof_free(struct pprof *p);
/* A section's header: 0, or -1 after a message when its sample types differ
 * from the first section's. */
int pprof_section_begin(struct pprof *p, json_t *hdr, long section, unsigned long line, const char *file,
			struct pprof_section *sec);
void pprof_add_sample(struct pprof *p, const struct stack_rec *s, const struct pprof_section *sec, const char *file,
		      unsigned long line);
/* The trailer (NULL: none) extends the time covered; the section's summary
 * becomes a comment. */
void pprof_section_end(struct pprof *p, json_t *hdr, json_t *trailer, long section, const char *file);
uint64_t pprof_samples(const struct pprof *p);
int pprof_has_section(const struct pprof *p);
/* The gzipped profile, owned by p; says how many weights were clamped. */
const unsigned char *pprof_finish(struct pprof *p, size_t *len);

#endif
