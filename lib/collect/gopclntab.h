/* gopclntab.h — a Go binary's own function table (.gopclntab), which Go
 * keeps even in a stripped build (`go build -ldflags="-s -w"`): an address
 * to its function's name, file and line.  Layouts of Go 1.16-1.17 (magic
 * 0xfffffffa), 1.18-1.19 (0xfffffff0) and 1.20+ (0xfffffff1); every offset
 * read is checked against the section, so a hostile table gives "not
 * found", never a read outside it.
 *
 *   struct gopclntab *g = gopclntab_open("/usr/bin/prog");	// NULL: no table
 *   struct gopclntab_frame f;
 *   if (gopclntab_lookup(g, vaddr, &f))
 *           printf("%s %s:%u\n", f.function, f.file, f.line);
 *   gopclntab_close(g);
 *
 * Go's own inlining tables give an address's chain of inlined calls, the
 * way DWARF's do for C (dwarfinline.h): gopclntab_chain, innermost first,
 * the function itself last, each at its file:line.  A function's
 * PCDATA_InlTreeIndex (pc-value table 2) gives, per address, an entry of
 * its FUNCDATA_InlTree (funcdata 3): the inlined function's name and
 * parentPc, an instruction of the call in the caller's code, whose own
 * entry (or none: the function itself) is the next link; the file:line of
 * each link is the function's pcfile/pcln at that instruction.  The tree
 * lives outside .gopclntab, among the funcdata (go.func.* in .rodata):
 * Go 1.18+ count funcdata from moduledata's gofunc (found by the words
 * starting moduledata: the table's address and its name table's), 1.16-1.17
 * point at it.  An entry is 20 bytes up to 1.19 (parent, funcID, the call's
 * file and line, the name, parentPc), 16 from 1.20 (funcID, the name,
 * parentPc, startLine): both give the name and parentPc, all this reader
 * uses.  A PIE's moduledata words are zero in the file, written by
 * relative relocations at load: read from those.  Go 1.19 (Debian 12's
 * golang-go) is tested on real binaries, PIE or not; the 1.16 and 1.20
 * layouts on the fuzz seeds only.  Not read: 32-bit binaries' trees (their
 * chains stop at the function; funcdata_bytes 0).  Go's development tree
 * packs the entries into 13 bytes (funcID, then the name offset, parentPc
 * and startLine unaligned); a release writing them so under magic
 * 0xfffffff1 would be misread (every read still bounded and checked).
 *
 * Addresses are the file's virtual addresses; the strings live as long as
 * the handle.
 */
#ifndef MARPLE_GOPCLNTAB_H
#define MARPLE_GOPCLNTAB_H

#include <stddef.h>
#include <stdint.h>

struct gopclntab_frame {
	const char *function;
	const char *file;	/* "?" when the file table does not say */
	unsigned line;		/* 0 when the line table does not say */
	uint64_t entry;		/* the function's first address */
};

struct gopclntab;

/* path's .gopclntab, or NULL (not ELF, no table, a layout not known). */
struct gopclntab *gopclntab_open(const char *path);

/* The .gopclntab of the ELF file whose bytes are data[0..size) (a mapped
 * file of the model: the table is copied), or NULL. */
struct gopclntab *gopclntab_from_memory(const void *data, size_t size);

/* A table already in memory (size bytes; copied), whose binary's .text
 * starts at text_addr; NULL if its header is not one of the layouts. */
struct gopclntab *gopclntab_parse(const void *table, uint64_t size, uint64_t text_addr);

/* The function at vaddr: 1 and *out, or 0 (outside every function). */
int gopclntab_lookup(const struct gopclntab *g, uint64_t vaddr, struct gopclntab_frame *out);

/* The chain of inlined calls at vaddr into out[0..max): innermost first,
 * the function itself last (a chain deeper than max keeps the innermost
 * max-1 and the function, counted as cut); its length, 0 outside every
 * function.  A tree entry that is out of bounds or points outside the
 * function ends the chain there (counted as bad_inline): a hostile table
 * gives at most max frames. */
int gopclntab_chain(struct gopclntab *g, uint64_t vaddr, struct gopclntab_frame *out, int max);

/* Take data[0..size) as the part of the binary at vaddr that holds the
 * funcdata (copied), and gofunc as what 1.18+ funcdata offsets count from
 * (parse_elf finds both; gopclntab_parse alone reads no inlining). */
void gopclntab_set_funcdata(struct gopclntab *g, const void *data, uint64_t size, uint64_t vaddr,
			    uint64_t gofunc);

struct gopclntab_stats {
	uint64_t cut;			/* chains cut at max */
	uint64_t bad_inline;		/* tree entries out of bounds or nonsense */
	uint64_t funcdata_bytes;	/* the funcdata copy; 0: no inlining tables read */
	uint64_t table_bytes;		/* the table's copy */
};

void gopclntab_stats(const struct gopclntab *g, struct gopclntab_stats *out);

/* The number of functions in the table. */
uint64_t gopclntab_functions(const struct gopclntab *g);

void gopclntab_close(struct gopclntab *g);

#endif
