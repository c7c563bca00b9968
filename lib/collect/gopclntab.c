/* gopclntab.c — Go's function table (see gopclntab.h).
 *
 * The header: magic (4 bytes), two zero bytes, the instruction size
 * quantum, the pointer size, then pointer-sized words: the function count,
 * the file count, (1.18+) the text start, and the offsets of the function
 * name table, the compile unit table, the file table, the pc-value tables
 * and the function table.  The function table holds count+1 pairs (entry,
 * offset of the function's _func record), entries sorted; 1.18+ writes both
 * as 4 bytes with the entry relative to the text start, 1.16 as pointers.
 * A _func record starts with the entry, then 4-byte fields: name offset,
 * args, deferreturn, pcsp, pcfile, pcln, npcdata, cu offset.  pcfile and
 * pcln are pc-value tables: pairs of varints (zig-zag value delta, pc delta
 * in quanta) from value -1 at the entry; a file number indexes the unit's
 * slice of the compile unit table, which gives an offset into the file
 * table. */
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gopclntab.h"

struct gopclntab {
	unsigned char *data;	/* the section */
	uint64_t size;
	int new_layout;		/* 1.18+: 4-byte function table, entries from text */
	unsigned quantum, ptrsize;
	uint64_t nfunc, text;
	uint64_t funcnames, cutab, filetab, pctab, functab;	/* offsets in data */
};

static int in_table(const struct gopclntab *g, uint64_t off, uint64_t len)
{
	return off <= g->size && len <= g->size - off;
}

static uint64_t read_word(const struct gopclntab *g, uint64_t off, unsigned size)
{
	uint64_t v = 0;
	if (!in_table(g, off, size))
		return UINT64_MAX;
	memcpy(&v, g->data + off, size);	/* little-endian hosts only, as marple */
	return v;
}

/* A NUL-terminated string at off, or NULL. */
static const char *string_at(const struct gopclntab *g, uint64_t off)
{
	if (off >= g->size || !memchr(g->data + off, 0, g->size - off))
		return NULL;
	return (const char *)g->data + off;
}

static int parse_header(struct gopclntab *g)
{
	uint32_t magic = (uint32_t)read_word(g, 0, 4);
	if (g->size < 8 || g->data[4] || g->data[5])
		return -1;
	g->quantum = g->data[6];
	g->ptrsize = g->data[7];
	if ((g->ptrsize != 4 && g->ptrsize != 8) || !g->quantum)
		return -1;
	if (magic == 0xfffffff0 || magic == 0xfffffff1)
		g->new_layout = 1;
	else if (magic != 0xfffffffa)
		return -1;
	uint64_t w[8];
	int words = g->new_layout ? 8 : 7;
	for (int i = 0; i < words; i++)
		w[i] = read_word(g, 8 + (uint64_t)i * g->ptrsize, g->ptrsize);
	int k = 2;
	g->nfunc = w[0];
	g->text = g->new_layout ? w[k++] : 0;
	g->funcnames = w[k++], g->cutab = w[k++], g->filetab = w[k++];
	g->pctab = w[k++], g->functab = w[k++];
	uint64_t entry_size = g->new_layout ? 8 : 2ULL * g->ptrsize;
	if (g->nfunc == UINT64_MAX || g->nfunc > g->size / entry_size || !in_table(g, g->functab, (g->nfunc + 1) * entry_size))
		return -1;
	return 0;
}

static uint64_t func_entry(const struct gopclntab *g, uint64_t i)
{
	if (g->new_layout)
		return g->text + read_word(g, g->functab + i * 8, 4);
	return read_word(g, g->functab + i * 2 * g->ptrsize, g->ptrsize);
}

static uint64_t func_record(const struct gopclntab *g, uint64_t i)
{
	if (g->new_layout)
		return g->functab + read_word(g, g->functab + i * 8 + 4, 4);
	return g->functab + read_word(g, g->functab + (i * 2 + 1) * g->ptrsize, g->ptrsize);
}

static int read_varint(const struct gopclntab *g, uint64_t *off, uint32_t *out)
{
	uint32_t v = 0;
	for (unsigned shift = 0; shift < 35; shift += 7) {
		if (*off >= g->size)
			return -1;
		unsigned char b = g->data[(*off)++];
		v |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return -1;
}

/* The value a pc-value table at off gives target, in the function at
 * entry; -1 if the table ends first or is broken.  Every step reads at
 * least two bytes, so the walk ends within the section. */
static int64_t pc_value(const struct gopclntab *g, uint32_t off, uint64_t entry, uint64_t target)
{
	uint64_t p = g->pctab + off, pc = entry;
	int64_t value = -1;
	for (int first = 1;; first = 0) {
		uint32_t delta, pcdelta;
		if (read_varint(g, &p, &delta) != 0 || (delta == 0 && !first))
			return -1;
		value += (delta & 1) ? -(int64_t)(delta >> 1) - 1 : (int64_t)(delta >> 1);
		if (read_varint(g, &p, &pcdelta) != 0)
			return -1;
		pc += (uint64_t)pcdelta * g->quantum;
		if (target < pc)
			return value;
	}
}

/* The index of the function holding vaddr, or -1. */
static int64_t find_function(const struct gopclntab *g, uint64_t vaddr)
{
	if (!g->nfunc || vaddr < func_entry(g, 0) || vaddr >= func_entry(g, g->nfunc))
		return -1;
	uint64_t lo = 0, hi = g->nfunc;	/* entry(lo) <= vaddr < entry(hi) */
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (func_entry(g, mid) <= vaddr)
			lo = mid;
		else
			hi = mid;
	}
	return (int64_t)lo;
}

int gopclntab_lookup(const struct gopclntab *g, uint64_t vaddr, struct gopclntab_frame *out)
{
	int64_t i = find_function(g, vaddr);
	if (i < 0)
		return 0;
	uint64_t entry = func_entry(g, (uint64_t)i);
	uint64_t fields = func_record(g, (uint64_t)i) + (g->new_layout ? 4 : g->ptrsize);
	if (!in_table(g, fields, 32))
		return 0;
	const char *name = string_at(g, g->funcnames + read_word(g, fields, 4));
	if (!name)
		return 0;
	uint32_t pcfile = (uint32_t)read_word(g, fields + 16, 4);
	uint32_t pcln = (uint32_t)read_word(g, fields + 20, 4);
	uint64_t cu = read_word(g, fields + 28, 4);
	int64_t fileno = pc_value(g, pcfile, entry, vaddr);
	int64_t line = pc_value(g, pcln, entry, vaddr);
	const char *file = NULL;
	if (fileno >= 0) {
		uint64_t fileoff = read_word(g, g->cutab + (cu + (uint64_t)fileno) * 4, 4);
		if (fileoff != UINT32_MAX && fileoff != UINT64_MAX)
			file = string_at(g, g->filetab + fileoff);
	}
	*out = (struct gopclntab_frame){ name, file ? file : "?", line > 0 && line <= UINT32_MAX ? (unsigned)line : 0,
					 entry };
	return 1;
}

struct gopclntab *gopclntab_parse(const void *table, uint64_t size, uint64_t text_addr)
{
	struct gopclntab *g = calloc(1, sizeof(*g));
	if (!g || !size || !(g->data = malloc(size))) {
		gopclntab_close(g);
		return NULL;
	}
	memcpy(g->data, table, size);
	g->size = size;
	if (parse_header(g) != 0) {
		gopclntab_close(g);
		return NULL;
	}
	if (g->new_layout && !g->text)
		g->text = text_addr;	/* a PIE's table has its text start relocated at run time */
	return g;
}

/* The table of an ELF's .gopclntab section, with the address of its .text. */
static struct gopclntab *parse_elf(Elf *elf)
{
	size_t shstrndx;
	Elf_Data *data = NULL;
	uint64_t text = 0;
	if (elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (name && !strcmp(name, ".gopclntab") && sh.sh_type != SHT_NOBITS)
			data = elf_getdata(scn, NULL);
		else if (name && !strcmp(name, ".text"))
			text = sh.sh_addr;
	}
	if (!data || !data->d_buf)
		return NULL;
	return gopclntab_parse(data->d_buf, data->d_size, text);
}

struct gopclntab *gopclntab_open(const char *path)
{
	struct gopclntab *g = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || elf_version(EV_CURRENT) == EV_NONE) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf)
		g = parse_elf(elf);
	elf_end(elf);
	close(fd);
	return g;
}

struct gopclntab *gopclntab_from_memory(const void *data, size_t size)
{
	struct gopclntab *g = NULL;
	Elf *elf = elf_version(EV_CURRENT) != EV_NONE ? elf_memory((char *)data, size) : NULL;

	if (elf)
		g = parse_elf(elf);
	elf_end(elf);
	return g;
}

uint64_t gopclntab_functions(const struct gopclntab *g)
{
	return g->nfunc;
}

void gopclntab_close(struct gopclntab *g)
{
	if (!g)
		return;
	free(g->data);
	free(g);
}
