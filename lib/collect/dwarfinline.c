/* dwarfinline.c — an address to its inline chain and lines, from DWARF
 * (see dwarfinline.h).  dwfl finds the DWARF (the file's, or its debug file
 * by build-id or debug link); dwarf_getscopes gives the nested DIEs that
 * cover the address, innermost first: each DW_TAG_inlined_subroutine is a
 * frame whose line is where the frame inside it was called from
 * (DW_AT_call_file/call_line), and the first DW_TAG_subprogram ends the
 * chain; the innermost frame's line comes from the line table. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dwarfinline.h"
#include "hashtab.h"

struct dwarfinline {
	Dwfl_Callbacks callbacks;	/* dwfl keeps a pointer to it */
	char *debugpath;		/* dwfl's debuginfo_path: "-:.debug:ROOT" */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf *dwarf;			/* NULL: no DWARF (or too big) */
	uint64_t elf_bias;		/* file vaddr + elf_bias = dwfl's address */
	const char *debugfile;
	struct hashtab *paths;		/* source paths made absolute, kept */
	struct dwarfinline_stats stats;
};

/* The size of the .debug_* sections libdw will hold, decompressed. */
static uint64_t debug_section_bytes(Elf *elf)
{
	size_t shstrndx;
	uint64_t total = 0;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || (strncmp(name, ".debug_", 7) != 0 && strncmp(name, ".zdebug_", 8) != 0))
			continue;
		uint64_t size = sh.sh_size;
		GElf_Chdr ch;
		if ((sh.sh_flags & SHF_COMPRESSED) && gelf_getchdr(scn, &ch))
			size += ch.ch_size;	/* the compressed and the inflated copy */
		total += size;
	}
	return total;
}

static int report_file(struct dwarfinline *d, const char *path)
{
	d->callbacks = (Dwfl_Callbacks){
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &d->debugpath,
	};
	d->dwfl = dwfl_begin(&d->callbacks);
	if (!d->dwfl)
		return -1;
	d->mod = dwfl_report_offline(d->dwfl, "", path, -1);
	if (dwfl_report_end(d->dwfl, NULL, NULL) != 0 || !d->mod)
		return -1;
	return 0;
}

/* Find the DWARF, unless its sections are over the bound. */
static void load_dwarf(struct dwarfinline *d, uint64_t max_bytes)
{
	GElf_Addr elf_bias, dwarf_bias;
	if (!dwfl_module_getelf(d->mod, &elf_bias))
		return;
	Dwarf *dw = dwfl_module_getdwarf(d->mod, &dwarf_bias);
	if (!dw)
		return;
	d->stats.dwarf_bytes = debug_section_bytes(dwarf_getelf(dw));
	if (d->stats.dwarf_bytes > max_bytes) {
		d->stats.too_big = 1;
		return;
	}
	d->dwarf = dw;
	d->elf_bias = elf_bias;
	const char *mainfile = NULL, *debugfile = NULL;
	dwfl_module_info(d->mod, NULL, NULL, NULL, NULL, NULL, &mainfile, &debugfile);
	d->debugfile = debugfile ? debugfile : mainfile;
}

struct dwarfinline *dwarfinline_open(const char *path, const char *debugroot, uint64_t max_bytes)
{
	struct dwarfinline *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	const char *root = debugroot ? debugroot : "/usr/lib/debug";
	size_t len = strlen(root) + sizeof("-:.debug:");
	d->debugpath = malloc(len);
	if (d->debugpath)
		snprintf(d->debugpath, len, "-:.debug:%s", root);
	if (!d->debugpath || report_file(d, path) != 0) {
		dwarfinline_close(d);
		return NULL;
	}
	load_dwarf(d, max_bytes ? max_bytes : DWARFINLINE_DEFAULT_MAX_BYTES);
	return d;
}

/* A function DIE's name as addr2line -f prints it: the linkage name if it
 * has one (through its abstract origin or specification), else its name. */
static const char *die_function_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
	return name ? name : "??";
}

/* Where an inlined instance was called from: its DW_AT_call_file/line. */
static void call_site(Dwarf_Die *inlined, Dwarf_Files *files, size_t nfiles, const char **file,
		      unsigned *line)
{
	Dwarf_Attribute attr;
	Dwarf_Word fileno = 0, lineno = 0;
	*file = "??";
	*line = 0;
	if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file, &attr), &fileno) == 0 && files &&
	    fileno < nfiles) {
		const char *f = dwarf_filesrc(files, fileno, NULL, NULL);
		if (f)
			*file = f;
	}
	if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_line, &attr), &lineno) == 0 && lineno <= UINT32_MAX)
		*line = (unsigned)lineno;
}

/* The innermost frame's file:line, from the unit's line table. */
static void table_line(Dwarf_Die *cu, Dwarf_Addr addr, const char **file, unsigned *line)
{
	Dwarf_Line *l = dwarf_getsrc_die(cu, addr);
	int lineno = 0;
	const char *f = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
	*file = f ? f : "??";
	*line = l && dwarf_lineno(l, &lineno) == 0 && lineno > 0 ? (unsigned)lineno : 0;
}

/* scopes[0..n) innermost first to out: one frame per inlined instance up to
 * and including the first subprogram.  The frame count; 0 if no subprogram. */
static int scopes_to_frames(struct dwarfinline *d, Dwarf_Die *cu, Dwarf_Addr addr, Dwarf_Die *scopes,
			    int n, struct dwarfinline_frame *out, int max)
{
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0)
		files = NULL;
	int depth = 0;
	const char *file;
	unsigned line;
	table_line(cu, addr, &file, &line);
	for (int i = 0; i < n; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		if (depth == max || depth == DWARFINLINE_MAX_DEPTH) {
			d->stats.cut++;
			return depth;
		}
		out[depth++] = (struct dwarfinline_frame){ die_function_name(&scopes[i]), file, line };
		if (tag == DW_TAG_subprogram)
			return depth;
		call_site(&scopes[i], files, nfiles, &file, &line);
	}
	return 0;
}

/* The DIEs nesting the innermost function DIE at addr, innermost first.
 * dwarf_getscopes leaves an inlined instance's callers out (it goes on with
 * the abstract origin's scopes); dwarf_getscopes_die from that DIE gives
 * the DIE tree's own nesting: the instances it is inlined in, then the
 * subprogram. */
static int nesting_scopes(Dwarf_Die *cu, Dwarf_Addr addr, Dwarf_Die **scopes)
{
	int n = dwarf_getscopes(cu, addr, scopes);
	for (int i = 0; i < n; i++) {
		int tag = dwarf_tag(&(*scopes)[i]);
		if (tag == DW_TAG_subprogram)
			return n;
		if (tag == DW_TAG_inlined_subroutine) {
			Dwarf_Die inner = (*scopes)[i];
			free(*scopes);
			*scopes = NULL;
			return dwarf_getscopes_die(&inner, scopes);
		}
	}
	return n;
}

/* file as an absolute path: relative ones are the unit's DW_AT_comp_dir's. */
static const char *absolute(struct dwarfinline *d, Dwarf_Die *cu, const char *file)
{
	Dwarf_Attribute attr;
	const char *dir = file[0] == '/' || !strcmp(file, "??") ? NULL :
			  dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
	if (!dir)
		return file;
	char path[4096];
	int len = snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (len < 0 || (size_t)len >= sizeof(path))
		return file;
	if (!d->paths)
		d->paths = hashtab_new();
	return hashtab_add(d->paths, path, (size_t)len, 0, 0)->key;
}

int dwarfinline_lookup(struct dwarfinline *d, uint64_t vaddr, struct dwarfinline_frame *out, int max)
{
	d->stats.lookups++;
	if (!d->dwarf) {
		d->stats.no_dwarf++;
		return 0;
	}
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(d->mod, vaddr + d->elf_bias, &bias);
	if (!cu) {
		d->stats.no_unit++;
		return 0;
	}
	Dwarf_Die *scopes = NULL;
	Dwarf_Addr daddr = vaddr + d->elf_bias - bias;
	int n = nesting_scopes(cu, daddr, &scopes);
	int depth = n > 0 ? scopes_to_frames(d, cu, daddr, scopes, n, out, max) : 0;
	free(scopes);
	if (n < 0) {
		/* libdw 0.188 leaks a little on a broken DIE tree's error path:
		 * one error and the file's DWARF is not asked again */
		d->stats.bad_dwarf++;
		d->dwarf = NULL;
		return 0;
	}
	for (int i = 0; i < depth; i++)
		out[i].file = absolute(d, cu, out[i].file);
	if (depth == 0)
		d->stats.no_function++;
	else
		d->stats.resolved++;
	return depth;
}

const char *dwarfinline_debugfile(const struct dwarfinline *d)
{
	return d->debugfile;
}

const struct dwarfinline_stats *dwarfinline_stats(const struct dwarfinline *d)
{
	return &d->stats;
}

void dwarfinline_close(struct dwarfinline *d)
{
	if (!d)
		return;
	if (d->dwfl)
		dwfl_end(d->dwfl);
	free(d->debugpath);
	hashtab_free(d->paths);
	free(d);
}
