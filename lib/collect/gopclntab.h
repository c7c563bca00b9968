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
 * Addresses are the file's virtual addresses; the strings live as long as
 * the handle.  Go's inlining tables (FUNCDATA_InlTree) are not read: an
 * inlined call's address is named by the function it was inlined into.
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

/* The number of functions in the table. */
uint64_t gopclntab_functions(const struct gopclntab *g);

void gopclntab_close(struct gopclntab *g);

#endif
