/* dwarfinline.h — one ELF file's DWARF: an address to its chain of inlined
 * functions, innermost first, each with the file:line it was at, ending with
 * the real (out-of-line) function — what `addr2line -f -i` prints.
 *
 * The DWARF is the file's own (.debug_info/.debug_line, DWARF 4 or 5,
 * compressed sections or not) or a separate debug file found by build-id
 * (DEBUGROOT/.build-id/xx/yyyy.debug) or .gnu_debuglink (next to the file,
 * in its .debug/, under DEBUGROOT); libdw (dwfl) indexes its compile units
 * at open and reads a unit into sorted address tables (table_bytes) the
 * first time an address in it is looked up (its CPU in build_ns): a lookup
 * is three binary searches.  The file stays open meanwhile (a copy of its
 * descriptor); libdw's reader is let go after the index and after each MiB
 * of units read (what it keeps of a unit, until its end, held 13 MB of a
 * second's capture), opened again for the next unit asked.  A file whose debug sections exceed the
 * memory bound is refused, not read; every lookup that found nothing is
 * counted by its reason, never guessed.  Code with lines but no function DIE (assembler)
 * gives one frame named "??" with its file:line, as addr2line does.
 *
 *   struct dwarfinline *d = dwarfinline_open("/usr/bin/prog", NULL);
 *   struct dwarfinline_frame f[DWARFINLINE_MAX_DEPTH];
 *   int n = dwarfinline_lookup(d, vaddr, f, DWARFINLINE_MAX_DEPTH);
 *   for (int i = 0; i < n; i++)	// f[0] innermost, f[n-1] the real function
 *           printf("%s %s:%u\n", f[i].function, f[i].file, f[i].line);
 *   dwarfinline_close(d);
 *
 * Addresses are the file's own virtual addresses (p_vaddr space, as
 * addr2line takes them).  The strings live as long as the handle.
 */
#ifndef MARPLE_DWARFINLINE_H
#define MARPLE_DWARFINLINE_H

#include <stdint.h>

/* deeper chains are cut here (and counted): hostile DWARF cannot loop */
#define DWARFINLINE_MAX_DEPTH 64
/* a file whose .debug_* sections are bigger than this is not read */
#define DWARFINLINE_DEFAULT_MAX_BYTES (1024ULL << 20)

struct dwarfinline_frame {
	const char *function;	/* linkage name if any (C++ mangled), else name; "??" unknown */
	const char *file;	/* source path as the DWARF says it; "??" unknown */
	unsigned line;		/* 0 unknown */
};

struct dwarfinline_stats {
	uint64_t lookups;
	uint64_t resolved;	/* lookups that gave at least the real function */
	uint64_t no_dwarf;	/* the file (and its debug file) has no DWARF */
	uint64_t no_unit;	/* neither a line nor a function covers the address */
	uint64_t no_function;	/* a line, but no function DIE covers it ("??") */
	uint64_t bad_dwarf;	/* in a unit whose DIEs libdw failed to read */
	uint64_t cut;		/* chains cut at DWARFINLINE_MAX_DEPTH, DIE trees
				 * nested deeper than the reader goes */
	uint64_t dwarf_bytes;	/* size of the debug sections read (memory bound) */
	uint64_t table_bytes;	/* the unit index and the units' tables, kept */
	uint64_t units;		/* compile units indexed */
	uint64_t units_read;	/* read into tables (an address in them was asked) */
	uint64_t units_bad;	/* libdw failed on them (or on the index past them) */
	uint64_t build_ns;	/* thread CPU spent opening the DWARF (libdw inflating
				 * compressed sections), indexing and reading units */
	int too_big;		/* refused: debug sections over the bound */
};

struct dwarfinline;

/* Open path's DWARF (debugroot NULL: /usr/lib/debug; max_bytes 0: the
 * default bound).  NULL only when path cannot be read as ELF; a file with no
 * DWARF gives a handle whose lookups all count no_dwarf. */
struct dwarfinline *dwarfinline_open(const char *path, const char *debugroot, uint64_t max_bytes);
/* Same, the file read from fd (opened safely by the caller; always taken:
 * closed with the handle, or at once on failure); path names it and is
 * where its debug link is looked for. */
struct dwarfinline *dwarfinline_open_fd(const char *path, int fd, const char *debugroot, uint64_t max_bytes);

/* The chain at vaddr into out[0..max), innermost first; its length, 0 when
 * the DWARF does not say (counted in the stats). */
int dwarfinline_lookup(struct dwarfinline *d, uint64_t vaddr, struct dwarfinline_frame *out, int max);

/* The file the DWARF came from (path itself or its separate debug file), or NULL. */
const char *dwarfinline_debugfile(const struct dwarfinline *d);

const struct dwarfinline_stats *dwarfinline_stats(const struct dwarfinline *d);

void dwarfinline_close(struct dwarfinline *d);

#endif
