/* elfsyms.h — what the symbolizer learns about one ELF file: its function
 * symbols (.symtab, .dynsym, those of its separate debug file, found by
 * build-id or .gnu_debuglink), names for its PLT stubs (strlen@plt, from
 * their relocations, as perf does), its PT_LOAD segments.  Each
 * elfsyms_file is the symbolizer's slot in the file's entry of the model
 * (mappedfiles.h): the file is opened and mapped there, once, and names
 * point into that mapping.  The process images that map the files are
 * syms.c's.
 *
 *   struct elfsyms es = { .files = mappedfiles_shared(), .flags = SYMS_DEMANGLE };
 *   struct elfsyms_file *d = elfsyms_of_file(&es, f, path, root);
 *   elfsyms_load(&es, d);                                 // on first lookup
 *   const struct elfsyms_sym *u = elfsyms_find(d->syms, d->nsyms, vaddr);
 *   name = elfsyms_name(&es, (struct elfsyms_sym *)u);   // demangled, capped
 */
#ifndef MARPLE_ELFSYMS_H
#define MARPLE_ELFSYMS_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

#include "mappedfiles.h"

/* A name longer than this is cut (a traced program's 70 MB symbol name
 * would make its frame, and the stack's line, that long): Python's strings
 * and perf maps' names have the same limit. */
#define ELFSYMS_NAME_MAX 4096

struct elfsyms_sym {
	uint64_t addr, size;
	uint64_t section_end;	/* an unsized symbol ends at its section's end at the latest
				 * (0: unknown), so an address past .fini is not "_fini" */
	const char *name;	/* in the mmapped file, or owned (perf map) */
	char *pretty;		/* demangled, made on first use */
	int rank;		/* preference among symbols at one address */
};

struct elfsyms_seg {
	uint64_t vaddr, memsz, off, filesz;
};

/* What the symbolizer learned about one mapped file: its slot in the
 * file's entry of the model (mappedfiles.h), which has its identity, its
 * mapping and its build-id. */
struct elfsyms_file {
	struct mappedfile *file;	/* a reference held */
	struct mappedfile *dbg_file;	/* its separate debug file, if any (held) */
	char *name;			/* basename */
	char *path;			/* as the maps line names it (frame descriptions) */
	const unsigned char *map;	/* file->data: the whole file, mapped */
	size_t size;
	Elf *elf;
	const unsigned char *dbg_map;	/* dbg_file->data */
	size_t dbg_size;
	Elf *dbg_elf;
	struct elfsyms_seg *segs;
	size_t nsegs;
	int has_symtab;			/* else symbols from the debug file */
	int syms_loaded;		/* syms: read on first lookup */
	struct elfsyms_sym *syms;
	size_t nsyms;
	uint64_t eh_frame_hdr, eh_frame_hdr_size;
	struct elfsyms_file *next;		/* all the cache's files */
	int used;			/* forget_unused_dsos: a process maps it */
	int touched;			/* looked up since its pages were last let go */
	int released;			/* its pages let go (release_file_pages) */
	const char *build_id;		/* elfsyms_build_id's, once asked */
};

/* The symbolizer's files: its slots in the model. */
struct elfsyms {
	struct mappedfiles *files;
	int flags;			/* SYMS_DEMANGLE, SYMS_DEMANGLE_PARAMS */
	struct elfsyms_file *list;	/* every file it holds */
	uint64_t opened, symbols;	/* files read, symbols loaded: since the start */
	uint64_t names_cut;		/* names cut to ELFSYMS_NAME_MAX */
};
/* e's first section named want (its header into *out if out), or NULL. */
Elf_Scn *elfsyms_section(Elf *e, const char *want, GElf_Shdr *out);

/* What es learned about file f (a reference, kept by a new elfsyms_file,
 * else let go), read now if nothing yet (segments, .eh_frame_hdr, the debug
 * file when there is no .symtab); root is the prefix of the root of the
 * process that maps it, for its debug files. */
struct elfsyms_file *elfsyms_of_file(struct elfsyms *es, struct mappedfile *f, const char *path, const char *root);
/* Free what es learned about a file (taken off es->list by the caller), and let go of the file. */
void elfsyms_file_free(struct elfsyms *es, struct elfsyms_file *d);
/* The function symbols of d, sorted, on first use. */
void elfsyms_load(struct elfsyms *es, struct elfsyms_file *d);
/* The symbol of s[0..n) holding vaddr, or NULL. */
const struct elfsyms_sym *elfsyms_find(const struct elfsyms_sym *s, size_t n, uint64_t vaddr);
/* u's name as shown: symbol version left out, demangled, at most ELFSYMS_NAME_MAX bytes. */
const char *elfsyms_name(struct elfsyms *es, struct elfsyms_sym *u);
/* The PT_LOAD segment of d holding file offset pgoff, or NULL. */
const struct elfsyms_seg *elfsyms_seg_of(const struct elfsyms_file *d, uint64_t pgoff);
/* The program interpreter prog names (PT_INTERP) into buf: 0, or -1. */
int elfsyms_interp(const struct elfsyms_file *prog, char *buf, size_t size);
/* The file name a .gnu_debuglink section (data[0..size)) names: 0 and
 * *name (inside data), or -1 if it names none (no NUL, empty, longer than
 * 255, a '/', "." or ".."). */
int elfsyms_debuglink(const void *data, size_t size, const char **name);
/* The file offset of function name in d (its .symtab, .dynsym, else its
 * debug file's), where a uprobe goes: 0 and *off, or -1 when d defines no
 * such function or two of that name at different addresses. */
int elfsyms_func_offset(const struct elfsyms_file *d, const char *name, uint64_t *off);
/* d's GNU build-id in hex ("" if none). */
const char *elfsyms_build_id(struct elfsyms_file *d);

#endif
