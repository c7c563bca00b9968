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

enum go_layout { GO116 = 1, GO118, GO120 };

struct gopclntab {
	unsigned char *data;	/* the section */
	uint64_t size;
	enum go_layout layout;
	int new_layout;		/* 1.18+: 4-byte function table, entries from text */
	unsigned quantum, ptrsize;
	uint64_t nfunc, text;
	uint64_t funcnames, cutab, filetab, pctab, functab;	/* offsets in data */
	uint64_t vaddr;		/* the section's address (1.16's funcdata alignment) */
	unsigned char *funcdata;	/* a copy of the funcdata's part of the file */
	uint64_t funcdata_size, funcdata_vaddr;
	uint64_t gofunc;	/* 1.18+: what funcdata offsets count from */
	uint64_t cut;		/* inline chains cut at the caller's max */
	uint64_t bad_inline;	/* inline tree entries outside the copy or nonsense */
};

/* The fields of one _func record this reader uses. */
struct go_func {
	uint64_t entry;
	const char *name;
	uint64_t end;		/* the next function's entry */
	uint32_t pcfile, pcln, npcdata;
	uint32_t inl_index;	/* its PCDATA_InlTreeIndex table, 0 none */
	uint64_t cu;
	uint64_t inltree;	/* the vaddr of its inlining tree, 0 none */
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
	if (magic == 0xfffffffa)
		g->layout = GO116;
	else if (magic == 0xfffffff0)
		g->layout = GO118;
	else if (magic == 0xfffffff1)
		g->layout = GO120;
	else
		return -1;
	g->new_layout = g->layout != GO116;
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

/* The funcdata word of size bytes at vaddr, or UINT64_MAX outside the copy. */
static uint64_t funcdata_word(const struct gopclntab *g, uint64_t vaddr, unsigned size)
{
	uint64_t v = 0, off = vaddr - g->funcdata_vaddr;
	if (!g->funcdata || vaddr < g->funcdata_vaddr || off > g->funcdata_size || size > g->funcdata_size - off)
		return UINT64_MAX;
	memcpy(&v, g->funcdata + off, size);
	return v;
}

/* Where function's funcdata[FUNCDATA_InlTree] is (0: none), the record's
 * flags and tables read at fields.  1.16-1.19 end the fixed fields with
 * funcID, flag, a pad and nfuncdata at 32..35; 1.20+ put startLine first,
 * so nfuncdata is at 39.  The pcdata offsets (4 bytes each) follow, then
 * the funcdata: 1.18+ 4-byte offsets from gofunc (all ones: none), 1.16
 * pointers aligned to 8 bytes of address on 64-bit. */
static uint64_t inline_tree(const struct gopclntab *g, uint64_t fields, uint32_t npcdata)
{
	const unsigned inltree = 3;	/* FUNCDATA_InlTree since Go 1.16 */
	uint64_t pcdata = fields + (g->layout == GO120 ? 40 : 36);
	uint64_t nfuncdata = read_word(g, pcdata - 1, 1);
	if (!g->funcdata || nfuncdata == UINT64_MAX || inltree >= nfuncdata || npcdata > g->size / 4)
		return 0;
	uint64_t at = pcdata + (uint64_t)npcdata * 4;
	if (!g->new_layout) {
		if (g->ptrsize == 8 && ((g->vaddr + at) & 4))
			at += 4;
		uint64_t p = read_word(g, at + inltree * g->ptrsize, g->ptrsize);
		return p == UINT64_MAX ? 0 : p;
	}
	uint64_t off = read_word(g, at + inltree * 4, 4);
	return off == UINT32_MAX || off == UINT64_MAX ? 0 : g->gofunc + off;
}

/* The function at vaddr, read into *fn: 0, or -1 (none, or its record is
 * outside the table). */
static int read_func(const struct gopclntab *g, uint64_t vaddr, struct go_func *fn)
{
	int64_t i = find_function(g, vaddr);
	if (i < 0)
		return -1;
	fn->entry = func_entry(g, (uint64_t)i);
	fn->end = func_entry(g, (uint64_t)i + 1);
	uint64_t fields = func_record(g, (uint64_t)i) + (g->new_layout ? 4 : g->ptrsize);
	if (!in_table(g, fields, 32))
		return -1;
	fn->name = string_at(g, g->funcnames + read_word(g, fields, 4));
	if (!fn->name)
		return -1;
	fn->pcfile = (uint32_t)read_word(g, fields + 16, 4);
	fn->pcln = (uint32_t)read_word(g, fields + 20, 4);
	fn->npcdata = (uint32_t)read_word(g, fields + 24, 4);
	fn->cu = read_word(g, fields + 28, 4);
	fn->inltree = inline_tree(g, fields, fn->npcdata);
	/* PCDATA_InlTreeIndex is pc-value table 2 */
	uint64_t index_table = fn->npcdata > 2 ? read_word(g, fields + (g->layout == GO120 ? 40 : 36) + 8, 4) : 0;
	fn->inl_index = index_table == UINT64_MAX ? 0 : (uint32_t)index_table;
	return 0;
}

/* The file and line of pc in fn: "?" and 0 where the tables do not say. */
static void file_line(const struct gopclntab *g, const struct go_func *fn, uint64_t pc, const char **file,
		      unsigned *line)
{
	int64_t fileno = pc_value(g, fn->pcfile, fn->entry, pc);
	int64_t l = pc_value(g, fn->pcln, fn->entry, pc);
	*file = NULL;
	if (fileno >= 0) {
		uint64_t fileoff = read_word(g, g->cutab + (fn->cu + (uint64_t)fileno) * 4, 4);
		if (fileoff != UINT32_MAX && fileoff != UINT64_MAX)
			*file = string_at(g, g->filetab + fileoff);
	}
	if (!*file)
		*file = "?";
	*line = l > 0 && l <= UINT32_MAX ? (unsigned)l : 0;
}

int gopclntab_lookup(const struct gopclntab *g, uint64_t vaddr, struct gopclntab_frame *out)
{
	struct go_func fn;
	if (read_func(g, vaddr, &fn) != 0)
		return 0;
	*out = (struct gopclntab_frame){ fn.name, "?", 0, fn.entry };
	file_line(g, &fn, vaddr, &out->file, &out->line);
	return 1;
}

/* Entry ix of fn's inlining tree: the inlined function's name and the
 * offset from fn's entry of an instruction at its call; -1 if the entry is
 * outside the copy or says nonsense.  1.16-1.19 write 20 bytes (parent,
 * funcID, a pad, the call's file and line, the name offset, parentPc),
 * 1.20+ 16 (funcID and pads, the name offset, parentPc, startLine). */
static int inlined_call(const struct gopclntab *g, const struct go_func *fn, int64_t ix, const char **name,
			uint64_t *parent_pc)
{
	unsigned size = g->layout == GO120 ? 16 : 20, name_at = g->layout == GO120 ? 4 : 12;
	uint64_t at = fn->inltree + (uint64_t)ix * size;
	uint64_t nameoff = funcdata_word(g, at + name_at, 4), pc = funcdata_word(g, at + name_at + 4, 4);
	if (nameoff == UINT64_MAX || pc == UINT64_MAX || pc >= fn->end - fn->entry)
		return -1;	/* a negative parentPc is past the end as unsigned */
	*name = string_at(g, g->funcnames + nameoff);
	*parent_pc = pc;
	return *name ? 0 : -1;
}

int gopclntab_chain(struct gopclntab *g, uint64_t vaddr, struct gopclntab_frame *out, int max)
{
	struct go_func fn;
	if (max < 1 || read_func(g, vaddr, &fn) != 0)
		return 0;
	int n = 0;
	for (uint64_t pc = vaddr;;) {
		struct gopclntab_frame *f = &out[n++];
		*f = (struct gopclntab_frame){ fn.name, "?", 0, fn.entry };
		file_line(g, &fn, pc, &f->file, &f->line);
		int64_t ix = fn.inltree && fn.inl_index ? pc_value(g, fn.inl_index, fn.entry, pc) : -1;
		uint64_t parent_pc;
		if (ix < 0 || inlined_call(g, &fn, ix, &f->function, &parent_pc) != 0) {
			g->bad_inline += ix >= 0;
			f->function = fn.name;	/* the function itself */
			return n;
		}
		if (n == max) {	/* no room for the function itself: it ends the chain */
			g->cut++;
			f->function = fn.name;
			return n;
		}
		pc = fn.entry + parent_pc;	/* the call, in the caller's code */
	}
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

void gopclntab_set_funcdata(struct gopclntab *g, const void *data, uint64_t size, uint64_t vaddr, uint64_t gofunc)
{
	free(g->funcdata);
	g->funcdata = size ? malloc(size) : NULL;
	g->funcdata_size = g->funcdata ? size : 0;
	if (g->funcdata)
		memcpy(g->funcdata, data, size);
	g->funcdata_vaddr = vaddr;
	g->gofunc = gofunc;
}

/* The bytes of the allocated section holding vaddr, from vaddr on; NULL if
 * none of elf's sections with contents holds it. */
static const unsigned char *section_from(Elf *elf, uint64_t vaddr, uint64_t *size)
{
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) || sh.sh_type == SHT_NOBITS ||
		    vaddr < sh.sh_addr || vaddr - sh.sh_addr >= sh.sh_size || !(d = elf_getdata(scn, NULL)) ||
		    !d->d_buf || d->d_size != sh.sh_size)
			continue;
		*size = sh.sh_size - (vaddr - sh.sh_addr);
		return (const unsigned char *)d->d_buf + (vaddr - sh.sh_addr);
	}
	return NULL;
}

/* The addend of the x86-64 relative relocation at vaddr (a PIE's words
 * are written at load time: zero in the file) whose addend is want, or any
 * addend if want is 0; 0 if none.  If at is 0, the first relocation whose
 * addend is want: *found its place. */
static uint64_t relocation(Elf *elf, uint64_t at, uint64_t want, uint64_t *found)
{
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !(d = elf_getdata(scn, NULL)) ||
		    !sh.sh_entsize)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela r;
			if (!gelf_getrela(d, (int)i, &r) || GELF_R_TYPE(r.r_info) != R_X86_64_RELATIVE ||
			    (at && r.r_offset != at) || (want && (uint64_t)r.r_addend != want))
				continue;
			if (found)
				*found = r.r_offset;
			return (uint64_t)r.r_addend;
		}
	}
	return 0;
}

/* A PIE's gofunc: moduledata found by the relocations that write its
 * first two words (the table's address and its name table's). */
static uint64_t find_gofunc_relocated(Elf *elf, const struct gopclntab *g, unsigned word)
{
	uint64_t moduledata = 0;
	if (!relocation(elf, 0, g->vaddr, &moduledata) ||
	    !relocation(elf, moduledata + 8, g->vaddr + g->funcnames, NULL))
		return 0;	/* the first match only: the runtime has one */
	return relocation(elf, moduledata + word * 8, 0, NULL);
}

/* 1.18+: the gofunc address of the runtime's moduledata (funcdata counts
 * from it), found in a writable section as the words that start it: the
 * table's address and its function name table's (runtime/symtab.go), or in
 * a PIE by the relocations that write them; 0 if not found.  gofunc is
 * word 38 in 1.18-1.19, 40 from 1.20 (coverage counters' two words before
 * it). */
static uint64_t find_gofunc(Elf *elf, const struct gopclntab *g)
{
	unsigned word = g->layout == GO120 ? 40 : 38;
	uint64_t size, relocated = find_gofunc_relocated(elf, g, word);
	if (relocated && section_from(elf, relocated, &size))
		return relocated;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_WRITE) || sh.sh_type != SHT_PROGBITS ||
		    !(d = elf_getdata(scn, NULL)) || !d->d_buf)
			continue;
		const unsigned char *b = d->d_buf;
		for (uint64_t at = 0; at + (word + 1) * 8 <= d->d_size; at += 8) {
			uint64_t w[2], gofunc, size;
			memcpy(w, b + at, sizeof(w));
			if (w[0] != g->vaddr || w[1] != g->vaddr + g->funcnames)
				continue;
			memcpy(&gofunc, b + at + word * 8, 8);
			if (section_from(elf, gofunc, &size))
				return gofunc;
		}
	}
	return 0;
}

/* The funcdata: 1.18+ from gofunc to the end of its section, 1.16's (whose
 * funcdata are pointers) all of .rodata. */
static void read_funcdata(Elf *elf, struct gopclntab *g, uint64_t rodata)
{
	if (g->ptrsize != 8)
		return;	/* moduledata's words are read as 8 bytes */
	uint64_t from = g->new_layout ? find_gofunc(elf, g) : rodata, size = 0;
	const unsigned char *bytes = from ? section_from(elf, from, &size) : NULL;
	if (bytes)
		gopclntab_set_funcdata(g, bytes, size, from, g->new_layout ? from : 0);
}

/* The table of an ELF's .gopclntab section, with the address of its .text
 * and its funcdata. */
static struct gopclntab *parse_elf(Elf *elf)
{
	size_t shstrndx;
	Elf_Data *data = NULL;
	uint64_t text = 0, rodata = 0, vaddr = 0;
	if (elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		/* a PIE's table is relocated data: .data.rel.ro.gopclntab */
		if (name && (!strcmp(name, ".gopclntab") || !strcmp(name, ".data.rel.ro.gopclntab")) &&
		    sh.sh_type != SHT_NOBITS)
			data = elf_getdata(scn, NULL), vaddr = sh.sh_addr;
		else if (name && !strcmp(name, ".text"))
			text = sh.sh_addr;
		else if (name && !strcmp(name, ".rodata"))
			rodata = sh.sh_addr;
	}
	if (!data || !data->d_buf)
		return NULL;
	struct gopclntab *g = gopclntab_parse(data->d_buf, data->d_size, text);
	if (g) {
		g->vaddr = vaddr;
		read_funcdata(elf, g, rodata);
	}
	return g;
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

void gopclntab_stats(const struct gopclntab *g, struct gopclntab_stats *out)
{
	*out = (struct gopclntab_stats){ g->cut, g->bad_inline, g->funcdata_size, g->size };
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
	free(g->funcdata);
	free(g);
}
