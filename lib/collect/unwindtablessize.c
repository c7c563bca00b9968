/* unwindtablessize.c — how much table room a process's files need, judged
 * from their CFI before any row is built (see unwindtablessize.h). */
#include "unwindtablessize.h"

#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "mappedfiles.h"
#include "procmaps.h"
#include "stacks.h"
#include "util.h"

/* The bytes of .eh_frame and .debug_frame of elf (NULL: 0). */
static uint64_t elf_cfi_bytes(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;
	uint64_t n = 0;

	if (elf && elf_getshdrstrndx(elf, &shstrndx) == 0)
		while ((scn = elf_nextscn(elf, scn))) {
			const char *name;
			if (gelf_getshdr(scn, &sh) && (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
			    (strcmp(name, ".eh_frame") == 0 || strcmp(name, ".debug_frame") == 0))
				n += sh.sh_size;
		}
	return n;
}

/* The CFI bytes (.eh_frame and .debug_frame) of a mapped ELF file. */
static uint64_t cfi_bytes(struct mappedfiles *model, pid_t pid, const struct procmaps_line *m)
{
	struct mappedfile *f = mappedfiles_open_line(model, pid, m);
	Elf *elf = f && f->data ? elf_memory((char *)f->data, f->size) : NULL;
	uint64_t n = elf_cfi_bytes(elf);

	elf_end(elf);
	mappedfile_put(f);
	return n;
}

uint64_t unwindtablessize_rows_estimate(Elf *elf)
{
	return elf_cfi_bytes(elf) * 10 / 54;
}


/* Words for one process's tables: a row takes 5 to 6 bytes of CFI in what
 * gcc and clang write (python3 6.4, libc 5.4, LLVM 5.3), so a quarter of its
 * files' CFI bytes and half as much again, each file's page index (a word
 * a page of the span of its executable mappings), and 2^19 words (2 MiB,
 * what 2^17 rows of 16 bytes took) for what it maps later (dlopen, exec: a
 * program linked with code far apart, a section at 0x10000000, has an index
 * of 256 K words for a few rows); the caller caps it at --unwind-memory. */
uint32_t unwindtablessize_words_for(pid_t pid)
{
	size_t cap = 0;
	struct procmaps pm;
	struct procmaps_line pl;
	struct hashtab *seen = hashtab_new();	/* by file identity: its span */
	struct mappedfiles *model = mappedfiles_shared();
	struct span { uint64_t lo, hi; } *span = NULL;
	uint64_t bytes = 0, words;

	elf_version(EV_CURRENT);
	procmaps_open(&pm, pid);
	while (procmaps_next(&pm, &pl)) {
		size_t before = hashtab_size(seen);
		if (!procmaps_is_exec(&pl) || !pl.inode)
			continue;	/* anonymous code (a JIT), the vdso: no table to size */
		struct mappedfile_id id = mappedfile_id_of_line(&pl);
		size_t k = hashtab_index(seen, hashtab_add(seen, &id, sizeof(id), 0, 0));
		if (k >= before) {
			span = marple_grow(span, &cap, k + 1, sizeof(*span));
			span[k] = (struct span){ pl.start, pl.end };
		} else {
			span[k].lo = pl.start < span[k].lo ? pl.start : span[k].lo;
			span[k].hi = pl.end > span[k].hi ? pl.end : span[k].hi;
			continue;
		}
		bytes += cfi_bytes(model, pid, &pl);
	}
	procmaps_close(&pm);
	words = bytes / 4;
	words += words / 2 + (1u << 19);
	for (size_t k = 0; k < hashtab_size(seen); k++)
		words += ((span[k].hi - span[k].lo) >> UNWIND_PAGE_SHIFT) + UNWIND_TABLE_HEADER + 2;
	hashtab_free(seen);
	mappedfiles_release(model);
	free(span);
	return words > UINT32_MAX / 2 ? UINT32_MAX / 2 : (uint32_t)words;
}
