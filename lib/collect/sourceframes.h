/* sourceframes.h — what a native address says about its source, per mapped
 * file: the chain of inlined functions with file:line from the file's DWARF
 * (dwarfinline), or when a Go binary is stripped of it, the same chain from
 * its .gopclntab and Go's own inlining tables (gopclntab).  The namer (stackframes) asks
 * with the file and offset the symbolizer found; each file's readers are
 * made once and kept as sourceframes' slot in the file's entry of the model
 * (mappedfiles.h: opened, identified by device and inode, guarded there):
 * segments and the Go table from the model's mapping, DWARF (libdw reads a
 * descriptor) from the file opened again without blocking and only if it is
 * the same file.  At most SOURCEFRAMES_MAX_FILES files, and their DWARF
 * kept open under SOURCEFRAMES_MAX_DWARF_BYTES; more are not read, and
 * counted.
 *
 *   struct sourceframes *s = sourceframes_new();
 *   struct sourceframes_frame f[DWARFINLINE_MAX_DEPTH];
 *   int n = sourceframes_lookup(s, pid, "/usr/bin/prog", file_id, file_offset, f, DWARFINLINE_MAX_DEPTH);
 *   // f[0] innermost ... f[n-1] the real function
 *   sourceframes_free(s);
 */
#ifndef MARPLE_SOURCEFRAMES_H
#define MARPLE_SOURCEFRAMES_H

#include <stdint.h>
#include <sys/types.h>

#include "dwarfinline.h"
#include "mappedfiles.h"

#define SOURCEFRAMES_MAX_FILES 256
/* The debug sections of the files whose DWARF is kept open (dwarfinline
 * reads a unit when first asked) stay under this in all; a file past it is
 * not read, and counted. */
#define SOURCEFRAMES_MAX_DWARF_BYTES (2048ULL << 20)

struct sourceframes_frame {
	const char *function;	/* as the DWARF or Go table says (C++: mangled) */
	const char *file;
	unsigned line;
};

struct sourceframes_stats {
	uint64_t files;			/* files opened */
	uint64_t files_refused;		/* over SOURCEFRAMES_MAX_FILES */
	uint64_t dwarf_refused;		/* DWARF not kept: over SOURCEFRAMES_MAX_DWARF_BYTES */
	uint64_t lookups, dwarf_resolved, go_resolved, unresolved;
	uint64_t dwarf_bytes;		/* debug sections of the files read */
	uint64_t table_bytes;		/* their address tables, kept */
	uint64_t units, units_read;	/* compile units indexed, read (dwarfinline.h) */
	uint64_t build_ns;		/* CPU spent indexing and reading them */
	/* Go tables (gopclntab.h): inline chains cut, tree entries not read,
	 * files whose inlining tables were not found (32-bit) */
	uint64_t go_cut, go_bad_inline, go_no_inline_tables;
	uint64_t go_bytes;		/* the Go tables and funcdata copied */
};

struct sourceframes;

struct sourceframes *sourceframes_new(void);

/* The source frames at file_offset of the file id (mappedfiles.h: the
 * symbolizer opened it) that pid maps as path: n > 0 frames innermost
 * first, the last the function itself; 0 if neither DWARF nor a Go table
 * says. */
int sourceframes_lookup(struct sourceframes *s, pid_t pid, const char *path, struct mappedfile_id id,
			uint64_t file_offset, struct sourceframes_frame *out, int max);

void sourceframes_stats(const struct sourceframes *s, struct sourceframes_stats *out);

void sourceframes_free(struct sourceframes *s);

#endif
