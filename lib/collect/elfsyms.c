/* elfsyms.c — an ELF file's symbols, PLT stubs and debug file (see
 * elfsyms.h).  Read with libelf in place from the model's mapping: symbol
 * names point into it, nothing is copied. */
#include "elfsyms.h"

#include <fcntl.h>
#include <libelf.h>
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

#include "syms.h"
#include "util.h"

/* Free what c learned about a file, and let go of the file. */
void elfsyms_file_free(struct elfsyms *es, struct elfsyms_file *d)
{
	for (size_t i = 0; i < d->nsyms; i++)
		free(d->syms[i].pretty);
	free(d->syms);
	free(d->segs);
	free(d->name);
	free(d->path);
	if (d->elf)
		elf_end(d->elf);
	if (d->dbg_elf)
		elf_end(d->dbg_elf);
	mappedfile_set_slot(d->file, es, NULL, NULL);
	mappedfile_put(d->file);
	mappedfile_put(d->dbg_file);
	free(d);
}

static int usym_cmp(const void *a, const void *b)
{
	const struct elfsyms_sym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return y->rank - x->rank;	/* preferred first */
}

Elf_Scn *elfsyms_section(Elf *e, const char *want, GElf_Shdr *out)
{
	size_t shstrndx;
	Elf_Scn *s = NULL;

	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return NULL;
	while ((s = elf_nextscn(e, s))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(s, &sh))
			continue;
		const char *n = elf_strptr(e, shstrndx, sh.sh_name);
		if (n && strcmp(n, want) == 0) {
			if (out)
				*out = sh;
			return s;
		}
	}
	return NULL;
}

/* The end address of section index shndx of e, or 0 if it is no real section. */
static uint64_t section_end(Elf *e, size_t shndx)
{
	GElf_Shdr sh;
	Elf_Scn *scn = shndx && shndx < SHN_LORESERVE ? elf_getscn(e, shndx) : NULL;

	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_size == 0)
		return 0;
	return sh.sh_addr + sh.sh_size;
}

/* Append the function symbols of one symbol table to d->syms. */
static void add_symtab(struct elfsyms_file *d, size_t *cap, Elf *e, Elf_Scn *scn, int rank_base)
{
	GElf_Shdr sh;
	Elf_Data *data;

	if (!gelf_getshdr(scn, &sh) || sh.sh_entsize == 0)
		return;
	data = elf_getdata(scn, NULL);
	if (!data)
		return;
	size_t n = sh.sh_size / sh.sh_entsize;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(data, (int)i, &sym))
			continue;
		int type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		if (sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
			continue;
		const char *name = elf_strptr(e, sh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		d->syms = marple_grow(d->syms, cap, d->nsyms + 1, sizeof(*d->syms));
		struct elfsyms_sym *u = &d->syms[d->nsyms++];
		int bind = GELF_ST_BIND(sym.st_info);
		u->addr = sym.st_value;
		u->size = sym.st_size;
		u->section_end = sym.st_size ? 0 : section_end(e, sym.st_shndx);
		u->name = name;
		u->pretty = NULL;
		/* globals before weak before locals; a sized symbol before an unsized one */
		u->rank = rank_base + (bind == STB_GLOBAL ? 4 : bind == STB_WEAK ? 2 : 0) + (sym.st_size > 0);
	}
}

/* The debug file of d at path, through the model (opened without
 * blocking, a regular file only: a FIFO at a debug link is refused): 1 when
 * it is an ELF file, kept as d's. */
static int open_debug_at(struct elfsyms *es, struct elfsyms_file *d, const char *path)
{
	struct mappedfile *f = mappedfiles_open_path(es->files, path);
	Elf *e = f && f->data ? elf_memory((char *)f->data, f->size) : NULL;

	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		mappedfile_put(f);
		return 0;
	}
	d->dbg_file = f;
	d->dbg_map = f->data;
	d->dbg_size = f->size;
	d->dbg_elf = e;
	return 1;
}

int elfsyms_debuglink(const void *data, size_t size, const char **name)
{
	const char *link = data, *end;

	/* NAME, NUL, padding to 4, CRC-32: the name a file name, nothing more */
	if (!data || size < 2 || !(end = memchr(link, 0, size)) || end == link || end - link > 255 ||
	    memchr(link, '/', (size_t)(end - link)) || strcmp(link, ".") == 0 || strcmp(link, "..") == 0)
		return -1;
	*name = link;
	return 0;
}

/* The separate debug file of d, by build id then by .gnu_debuglink; root is
 * the process's root directory prefix ("" or "/proc/PID/root").  Opened
 * through the model: a FIFO or device there is refused, never waited on. */
static void open_debug_file(struct elfsyms *es, struct elfsyms_file *d, const char *root, const char *path)
{
	char buf[4096];
	GElf_Shdr sh;
	Elf_Scn *s;

	/* by build id (build_id_of: hex, read once) */
	const char *id = elfsyms_build_id(d);
	if (strlen(id) >= 4) {
		snprintf(buf, sizeof(buf), "%s/usr/lib/debug/.build-id/%.2s/%s.debug", root, id, id + 2);
		if (open_debug_at(es, d, buf))
			return;
	}
	/* .gnu_debuglink: NAME, then CRC; look beside the file, in .debug/, under /usr/lib/debug */
	if ((s = elfsyms_section(d->elf, ".gnu_debuglink", &sh))) {
		Elf_Data *data = elf_getdata(s, NULL);
		const char *link;
		if (!data || elfsyms_debuglink(data->d_buf, data->d_size, &link) != 0)
			return;
		const char *slash = strrchr(path, '/');
		int dirlen = slash ? (int)(slash - path) : 0;
		const char *fmts[] = { "%s%.*s/%s", "%s%.*s/.debug/%s", "%s/usr/lib/debug%.*s/%s" };
		for (size_t i = 0; i < 3; i++) {
			snprintf(buf, sizeof(buf), fmts[i], root, dirlen, path, link);
			if (strcmp(buf + strlen(root), path) == 0)
				continue;	/* the file itself */
			if (open_debug_at(es, d, buf))
				return;
		}
	}
}

/* Read segments and .eh_frame_hdr of an opened ELF file, and open its debug
 * file if it has no .symtab (now: the path may be under /proc/PID/root, gone
 * once the process exits).  The symbols wait for the first lookup (load_syms):
 * a process maps dozens of libraries, samples fall in a few. */
static void load_dso(struct elfsyms *es, struct elfsyms_file *d, const char *root, const char *path)
{
	size_t phnum = 0, cap = 0;
	GElf_Shdr sh;
	Elf_Scn *s;

	if (elf_getphdrnum(d->elf, &phnum) == 0) {
		for (size_t i = 0; i < phnum; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(d->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			d->segs = marple_grow(d->segs, &cap, d->nsegs + 1, sizeof(*d->segs));
			d->segs[d->nsegs++] = (struct elfsyms_seg){ ph.p_vaddr, ph.p_memsz, ph.p_offset, ph.p_filesz };
		}
	}
	if ((s = elfsyms_section(d->elf, ".eh_frame_hdr", &sh))) {
		d->eh_frame_hdr = sh.sh_addr;
		d->eh_frame_hdr_size = sh.sh_size;
	}
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(d->elf, scn))) {
		GElf_Shdr h;
		if (gelf_getshdr(scn, &h) && h.sh_type == SHT_SYMTAB)
			d->has_symtab = 1;
	}
	if (!d->has_symtab)
		open_debug_file(es, d, root, path);
}

/* A GOT slot and the function whose address the dynamic linker puts there. */
struct got_slot {
	uint64_t addr;
	const char *name;
};

static int got_slot_cmp(const void *a, const void *b)
{
	const struct got_slot *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The GOT slots of e's function relocations (.rela.plt's JUMP_SLOT,
 * .rela.dyn's GLOB_DAT), sorted; *n of them. */
static struct got_slot *got_slots(Elf *e, size_t *n)
{
	struct got_slot *v = NULL;
	size_t cap = 0;
	Elf_Scn *scn = NULL;

	*n = 0;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh, symh;
		Elf_Data *data, *symdata;
		Elf_Scn *symscn;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || sh.sh_entsize == 0 ||
		    !(symscn = elf_getscn(e, sh.sh_link)) || !gelf_getshdr(symscn, &symh) ||
		    !(data = elf_getdata(scn, NULL)) || !(symdata = elf_getdata(symscn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela r;
			GElf_Sym sym;
			size_t type, si;
			if (!gelf_getrela(data, (int)i, &r))
				continue;
			type = GELF_R_TYPE(r.r_info);
			si = GELF_R_SYM(r.r_info);
			if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) || si == 0 ||
			    !gelf_getsym(symdata, (int)si, &sym))
				continue;
			const char *name = elf_strptr(e, symh.sh_link, sym.st_name);
			if (!name || !*name)
				continue;
			v = marple_grow(v, &cap, *n + 1, sizeof(*v));
			v[(*n)++] = (struct got_slot){ r.r_offset, name };
		}
	}
	if (*n)
		qsort(v, *n, sizeof(*v), got_slot_cmp);
	return v;
}

/* The GOT slot an x86-64 PLT entry jumps through: "jmp *disp(%rip)"
 * (ff 25), maybe after endbr64 (f3 0f 1e fa) and with a bnd prefix (f2),
 * as in .plt (lazy binding), .plt.sec (IBT) and .plt.got.  0 if it is no
 * such entry (.plt's first, or the push-and-jump halves beside .plt.sec). */
static uint64_t plt_entry_slot(const unsigned char *b, size_t len, uint64_t vaddr)
{
	size_t o = 0;

	if (len >= 4 && b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
		o = 4;
	if (o < len && b[o] == 0xf2)
		o++;
	if (o + 6 > len || b[o] != 0xff || b[o + 1] != 0x25)
		return 0;
	int32_t disp = (int32_t)((uint32_t)b[o + 2] | (uint32_t)b[o + 3] << 8 | (uint32_t)b[o + 4] << 16 |
				 (uint32_t)b[o + 5] << 24);
	return vaddr + o + 6 + (uint64_t)(int64_t)disp;
}

/* Symbols for PLT stubs, which no symbol table has: "strlen@plt" for each
 * entry of .plt, .plt.sec and .plt.got, named after the function its GOT
 * slot is relocated to (x86-64; as perf and objdump name them).  The names
 * are owned by the symbols (their pretty). */
static void add_plt_syms(struct elfsyms *es, struct elfsyms_file *d, size_t *cap)
{
	static const char *const sections[] = { ".plt", ".plt.sec", ".plt.got" };
	GElf_Ehdr eh;
	size_t nslots;

	if (!gelf_getehdr(d->elf, &eh) || eh.e_machine != EM_X86_64)
		return;
	struct got_slot *slots = got_slots(d->elf, &nslots);
	for (size_t s = 0; s < 3 && nslots; s++) {
		GElf_Shdr sh;
		if (!elfsyms_section(d->elf, sections[s], &sh) || sh.sh_type != SHT_PROGBITS ||
		    sh.sh_offset + sh.sh_size > d->size)
			continue;
		uint64_t step = sh.sh_entsize >= 8 ? sh.sh_entsize : 16;
		for (uint64_t at = 0; at + step <= sh.sh_size; at += step) {
			uint64_t slot = plt_entry_slot(d->map + sh.sh_offset + at, step, sh.sh_addr + at);
			struct got_slot key = { slot, NULL }, *g;
			if (!slot || !(g = bsearch(&key, slots, nslots, sizeof(*slots), got_slot_cmp)))
				continue;
			char *d_name = NULL;
			if ((es->flags & SYMS_DEMANGLE) && g->name[0] == '_' && g->name[1] == 'Z')
				d_name = cplus_demangle(g->name, DMGL_ANSI | (es->flags & SYMS_DEMANGLE_PARAMS ? DMGL_PARAMS : 0));
			size_t len = strlen(d_name ? d_name : g->name);
			char *name = marple_malloc(len + 5);
			memcpy(name, d_name ? d_name : g->name, len);
			memcpy(name + len, "@plt", 5);
			free(d_name);
			d->syms = marple_grow(d->syms, cap, d->nsyms + 1, sizeof(*d->syms));
			/* the lowest rank: a real symbol at the same address keeps its name */
			d->syms[d->nsyms++] = (struct elfsyms_sym){ sh.sh_addr + at, step, 0, name, name, -1 };
		}
	}
	free(slots);
}

/* The function symbols of d, sorted, on first use. */
void elfsyms_load(struct elfsyms *es, struct elfsyms_file *d)
{
	size_t cap = 0;
	Elf_Scn *scn = NULL;

	if (d->syms_loaded || !d->elf)
		return;
	d->syms_loaded = 1;
	while ((scn = elf_nextscn(d->elf, scn))) {
		GElf_Shdr h;
		if (!gelf_getshdr(scn, &h))
			continue;
		if (h.sh_type == SHT_SYMTAB)
			add_symtab(d, &cap, d->elf, scn, 8);
		else if (h.sh_type == SHT_DYNSYM)
			add_symtab(d, &cap, d->elf, scn, 0);
	}
	scn = NULL;
	while (d->dbg_elf && (scn = elf_nextscn(d->dbg_elf, scn))) {
		GElf_Shdr h;
		if (gelf_getshdr(scn, &h) && h.sh_type == SHT_SYMTAB)
			add_symtab(d, &cap, d->dbg_elf, scn, 8);
	}
	add_plt_syms(es, d, &cap);
	if (d->nsyms) {
		qsort(d->syms, d->nsyms, sizeof(*d->syms), usym_cmp);
		/* one symbol an address: the preferred one's extent, under the
		 * public name of all those there (a PLT stub's made-up name, which
		 * comes last, only where there is no other) */
		size_t w = 0;
		for (size_t i = 0; i < d->nsyms; i++) {
			if (w == 0 || d->syms[w - 1].addr != d->syms[i].addr)
				d->syms[w++] = d->syms[i];
			else if (d->syms[i].pretty)
				free(d->syms[i].pretty);
			else if (syms_name_preferred(d->syms[i].name, d->syms[w - 1].name))
				d->syms[w - 1].name = d->syms[i].name;
		}
		d->nsyms = w;
	}
	es->symbols += d->nsyms;
	/* that faulted in the whole .symtab and .strtab (libLLVM's: 12 MB),
	 * and the lookups read a few names of them: the pages go now, not at
	 * the next fold (syms.c, release_file_pages: the names stay valid) */
	if (d->file)
		mappedfile_release_pages(d->file);
	if (d->dbg_file)
		mappedfile_release_pages(d->dbg_file);
}

/* What c learned about file f (a reference, kept by a new dso, else let
 * go), read now if nothing yet; root is the prefix of the root of the
 * process that maps it, for its debug files. */
struct elfsyms_file *elfsyms_of_file(struct elfsyms *es, struct mappedfile *f, const char *path, const char *root)
{
	struct elfsyms_file *d = mappedfile_slot(f, es);

	if (d) {
		mappedfile_put(f);
		return d;
	}
	d = marple_calloc(1, sizeof(*d));
	d->file = f;
	const char *base = strrchr(path, '/');
	d->name = marple_strdup(base ? base + 1 : path);
	d->path = marple_strdup(path);
	d->map = f->data;
	d->size = f->size;
	if (d->map && !mappedfile_truncated(f)) {
		d->elf = elf_memory((char *)d->map, d->size);
		if (d->elf && elf_kind(d->elf) == ELF_K_ELF) {
			load_dso(es, d, root, path);
		} else if (d->elf) {
			elf_end(d->elf);
			d->elf = NULL;
		}
	}
	mappedfile_set_slot(f, es, d, NULL);
	d->next = es->list;
	es->list = d;
	es->opened++;
	return d;
}

const struct elfsyms_seg *elfsyms_seg_of(const struct elfsyms_file *d, uint64_t pgoff)
{
	for (size_t i = 0; i < d->nsegs; i++) {
		uint64_t o = d->segs[i].off & ~4095ull;
		if (pgoff >= o && pgoff < d->segs[i].off + d->segs[i].filesz)
			return &d->segs[i];
	}
	return d->nsegs ? &d->segs[0] : NULL;
}

const struct elfsyms_sym *elfsyms_find(const struct elfsyms_sym *s, size_t n, uint64_t a)
{
	size_t lo = 0, hi = n;

	if (n == 0 || a < s[0].addr)
		return NULL;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (s[mid].addr <= a)
			lo = mid;
		else
			hi = mid;
	}
	/* a sized symbol covers [addr, addr+size); an unsized one (an asm label
	 * such as _init or _fini) up to the next symbol within its own section */
	if (s[lo].size && a >= s[lo].addr + s[lo].size)
		return NULL;
	if (!s[lo].size && s[lo].section_end && a >= s[lo].section_end)
		return NULL;
	return &s[lo];
}

static const char *shown_name(struct elfsyms *es, struct elfsyms_sym *u)
{
	if (u->pretty)
		return u->pretty;
	/* symbol versions (memcpy@@GLIBC_2.14) are left out */
	const char *at = strchr(u->name, '@');
	if (at && at > u->name) {
		u->pretty = marple_strndup(u->name, (size_t)(at - u->name));
		struct elfsyms_sym tmp = { .name = u->pretty };
		if ((es->flags & SYMS_DEMANGLE) && shown_name(es, &tmp) != u->pretty) {
			free(u->pretty);
			u->pretty = tmp.pretty;
		}
		return u->pretty;
	}
	if (!(es->flags & SYMS_DEMANGLE))
		return u->name;
	if (u->name[0] == '_' && (u->name[1] == 'Z' || u->name[1] == 'R')) {
		int opts = DMGL_ANSI | (es->flags & SYMS_DEMANGLE_PARAMS ? DMGL_PARAMS : 0);
		char *d = cplus_demangle(u->name, opts);
		if (d) {
			u->pretty = d;
			return d;
		}
	}
	return u->name;
}

/* The program interpreter pid's program names (PT_INTERP), as a path in
 * buf; 0, or -1 if it names none (static, or not known). */
int elfsyms_interp(const struct elfsyms_file *prog, char *buf, size_t size)
{
	size_t nph;
	GElf_Phdr ph;

	if (!prog->elf || elf_getphdrnum(prog->elf, &nph) != 0)
		return -1;
	for (size_t i = 0; i < nph; i++)
		if (gelf_getphdr(prog->elf, (int)i, &ph) && ph.p_type == PT_INTERP) {
			if (ph.p_offset >= prog->size || ph.p_filesz == 0 || ph.p_filesz > prog->size - ph.p_offset ||
			    ph.p_filesz >= size)
				return -1;
			memcpy(buf, prog->map + ph.p_offset, ph.p_filesz);
			buf[ph.p_filesz] = 0;
			return buf[0] == '/' ? 0 : -1;
		}
	return -1;
}

/* The GNU build id of d in hex ("" if it has none), read once. */
const char *elfsyms_build_id(struct elfsyms_file *d)
{
	if (!d->build_id)
		d->build_id = mappedfile_build_id(d->file);	/* the model's: lives while d holds the file */
	return d->build_id;
}


const char *elfsyms_name(struct elfsyms *es, struct elfsyms_sym *u)
{
	const char *name = shown_name(es, u);
	size_t n = strnlen(name, ELFSYMS_NAME_MAX + 1);

	if (n <= ELFSYMS_NAME_MAX)
		return name;
	/* cut, not inside a UTF-8 sequence */
	for (n = ELFSYMS_NAME_MAX; n > 0 && ((unsigned char)name[n] & 0xc0) == 0x80;)
		n--;
	char *cut = marple_strndup(name, n);
	if (u->name == u->pretty)
		u->name = cut;	/* a PLT stub's made-up name is its pretty one */
	free(u->pretty);
	u->pretty = cut;
	es->names_cut++;
	return cut;
}

/* The address of function name in e's symbol tables into *addr (0: none
 * yet): 1 found, 0 not there, -1 two of that name at different addresses.
 * "malloc@@GLIBC_2.2.5" is malloc. */
static int func_addr(Elf *e, const char *name, uint64_t *addr)
{
	Elf_Scn *scn = NULL;
	size_t len = strlen(name);
	int found = 0;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *s;
			int type;
			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value ||
			    ((type = GELF_ST_TYPE(sym.st_info)) != STT_FUNC && type != STT_GNU_IFUNC) ||
			    !(s = elf_strptr(e, sh.sh_link, sym.st_name)) || strncmp(s, name, len) != 0 ||
			    (s[len] != 0 && s[len] != '@'))
				continue;
			if (found && *addr != sym.st_value)
				return -1;
			*addr = sym.st_value;
			found = 1;
		}
	}
	return found;
}

int elfsyms_func_offset(const struct elfsyms_file *d, const char *name, uint64_t *off)
{
	uint64_t addr = 0;
	int found = d->elf ? func_addr(d->elf, name, &addr) : 0;

	if (found == 0 && d->dbg_elf)
		found = func_addr(d->dbg_elf, name, &addr);
	for (size_t i = 0; found == 1 && i < d->nsegs; i++) {
		const struct elfsyms_seg *g = &d->segs[i];
		if (addr >= g->vaddr && addr < g->vaddr + g->filesz) {
			*off = addr - g->vaddr + g->off;
			return 0;
		}
	}
	return -1;
}
