/* pyelf.c — what an interpreter's ELF file tells (see pyelf.h). */
#include "pyelf.h"

#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfsyms.h"
#include "mappedfiles.h"
#include "phplayout.h"
#include "pylayout.h"

/* The file bytes at file address vaddr (len of them), or NULL. */
static const unsigned char *file_at(const struct pyelf *e, const unsigned char *raw, size_t rawlen, uint64_t vaddr,
				    size_t len)
{
	for (int i = 0; i < e->nload; i++) {
		if (vaddr >= e->load[i].vaddr && vaddr + len <= e->load[i].vaddr + e->load[i].filesz) {
			uint64_t off = e->load[i].offset + (vaddr - e->load[i].vaddr);
			return off + len <= rawlen ? raw + off : NULL;
		}
	}
	return NULL;
}

static int32_t rd_s32(const unsigned char *p)
{
	int32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* The bytes of section name, its file address into *addr and size into
 * *size; NULL when there is none in the file. */
static const unsigned char *section_named(const struct pyelf *e, Elf *elf, const unsigned char *raw, size_t rawlen,
					  const char *name, uint64_t *addr, uint64_t *size)
{
	GElf_Shdr sh;

	*addr = *size = 0;
	if (!elfsyms_section(elf, name, &sh))
		return NULL;
	*addr = sh.sh_addr;
	*size = sh.sh_size;
	return *addr ? file_at(e, raw, rawlen, *addr, *size) : NULL;
}

/* e's .eh_frame_hdr's sorted FDE table (version 1; eh_frame_ptr pcrel
 * sdata4, count udata4, table datarel sdata4), found once: its file address
 * and count into e->fde_hdr and e->fde_count (0, 0: none).  1 if it has one. */
static int fde_table(struct pyelf *e, Elf *elf)
{
	uint64_t hdr = 0, hdr_size = 0;
	uint32_t count;

	if (e->fde_hdr || e->fde_looked)
		return e->fde_hdr != 0;
	e->fde_looked = 1;
	const unsigned char *h = section_named(e, elf, e->file->data, e->file->size, ".eh_frame_hdr", &hdr, &hdr_size);
	if (!h || hdr_size < 12 || h[0] != 1 || h[2] != 0x03 || h[3] != 0x3b)
		return 0;
	memcpy(&count, h + 8, 4);
	if (12 + (uint64_t)count * 8 > hdr_size)
		return 0;
	e->fde_hdr = hdr;
	e->fde_count = count;
	return 1;
}

int pyelf_fde_extent(const struct pyelf *e, uint64_t vaddr, uint64_t *lo, uint64_t *hi)
{
	const unsigned char *raw = e->file ? e->file->data : NULL, *table, *f;
	size_t rawlen = e->file ? e->file->size : 0;
	uint32_t low = 0, high = e->fde_count, range;

	table = raw && e->fde_hdr ? file_at(e, raw, rawlen, e->fde_hdr + 12, (size_t)high * 8) : NULL;
	if (!table)
		return -1;
	while (low < high) {
		uint32_t mid = low + (high - low) / 2;
		if ((int64_t)e->fde_hdr + rd_s32(table + (size_t)mid * 8) <= (int64_t)vaddr)
			low = mid + 1;
		else
			high = mid;
	}
	if (low == 0)
		return -1;
	uint64_t fde = e->fde_hdr + (int64_t)rd_s32(table + (size_t)(low - 1) * 8 + 4);
	if (!(f = file_at(e, raw, rawlen, fde, 16)))
		return -1;
	*lo = fde + 8 + (int64_t)rd_s32(f + 8);
	memcpy(&range, f + 12, 4);
	*hi = *lo + range;
	return vaddr >= *lo && vaddr < *hi ? 0 : -1;
}

/* GCC moves a function's unlikely paths to a ".cold" part far from it,
 * named only in .symtab (which Debian strips); that part has its own FDE,
 * and the function jumps into it.  Find the FDE most of the function's
 * rel32 jumps outside itself land in (.eh_frame_hdr's sorted table): the
 * cold part of python3.11's _PyEval_EvalFrameDefault gets all 314 of them. */
static void find_cold_part(struct pyelf *e, Elf *elf, const unsigned char *raw, size_t rawlen)
{
	const unsigned char *code = fde_table(e, elf) ? file_at(e, raw, rawlen, e->eval_lo, e->eval_hi - e->eval_lo)
						      : NULL;
	if (!code)
		return;
	uint64_t best_pc = 0, best_end = 0, seen_pc = 0, seen_end = 0;
	uint32_t best_hits = 0, hits = 0;
	/* targets, one FDE at a time: most of them are in one part, found in
	 * turn; a byte pattern that only looks like a jump lands anywhere */
	for (uint64_t i = 0; i + 5 <= e->eval_hi - e->eval_lo; i++) {
		uint64_t next, target, pc, end;
		if (code[i] == 0xe9)
			next = i + 5, target = e->eval_lo + next + (int64_t)rd_s32(code + i + 1);
		else if (code[i] == 0x0f && (code[i + 1] & 0xf0) == 0x80 && i + 6 <= e->eval_hi - e->eval_lo)
			next = i + 6, target = e->eval_lo + next + (int64_t)rd_s32(code + i + 2);
		else
			continue;
		if (target >= e->eval_lo && target < e->eval_hi)
			continue;
		if (target >= seen_pc && target < seen_end) {
			if (++hits > best_hits)
				best_hits = hits, best_pc = seen_pc, best_end = seen_end;
			continue;
		}
		if (pyelf_fde_extent(e, target, &pc, &end) != 0 || (pc <= e->eval_lo && e->eval_lo < end))
			continue;
		if (pc != seen_pc) {
			seen_pc = pc, seen_end = end;
			hits = pc == best_pc ? best_hits : 0;
		}
		if (++hits > best_hits)
			best_hits = hits, best_pc = seen_pc, best_end = seen_end;
	}
	if (best_hits >= 4) {
		e->cold_lo = best_pc;
		e->cold_hi = best_end;
	}
}

/* CRuby's VM loop, vm_exec_core, is static (named in .symtab only): it is
 * the largest function exported rb_vm_exec (e's eval range) calls directly
 * (rel32 calls, sized by their FDEs): 17527 bytes in Debian's 3.1, the
 * next 1446.  Into e's loop range; a callee under 4 KiB is not taken. */
static void find_ruby_loop(struct pyelf *e, Elf *elf, const unsigned char *raw, size_t rawlen)
{
	uint64_t lo = e->eval_lo, hi = e->eval_hi;
	const unsigned char *code = fde_table(e, elf) && hi > lo ? file_at(e, raw, rawlen, lo, hi - lo) : NULL;
	for (uint64_t i = 0; code && i + 5 <= hi - lo; i++) {
		uint64_t pc, end, target = lo + i + 5 + (int64_t)rd_s32(code + i + 1);
		if (code[i] != 0xe8 || pyelf_fde_extent(e, target, &pc, &end) != 0 ||
		    pc != target || end - pc < 4096 || end - pc <= e->loop_hi - e->loop_lo)
			continue;
		e->loop_lo = pc;
		e->loop_hi = end;
	}
}

/* CRuby's global_symbols (symbol.c's, static) is where an ID's name is:
 * exported rb_id2str jumps (or calls) first to the function that reads it,
 * whose first compare of a register with a RIP-relative word compares the
 * ID's serial number with its last_id, the struct's first member.  Its
 * address (the file's), or 0; checked in each process before it is used. */
static uint64_t find_ruby_symbols(struct pyelf *e, Elf *elf, const unsigned char *raw, size_t rawlen,
				  uint64_t id2str)
{
	uint64_t callee = 0, pc, end;
	const unsigned char *c = fde_table(e, elf) && id2str ? file_at(e, raw, rawlen, id2str, 64) : NULL;
	/* a byte that only looks like a jump (in shr's ModRM) lands at no
	 * function's start */
	for (int i = 0; c && i + 5 <= 64 && !callee; i++) {
		uint64_t target = id2str + i + 5 + (int64_t)rd_s32(c + i + 1);
		if ((c[i] == 0xe9 || c[i] == 0xe8) && pyelf_fde_extent(e, target, &pc, &end) == 0 && pc == target)
			callee = target;
	}
	c = callee ? file_at(e, raw, rawlen, callee, 128) : NULL;
	/* cmp r32, disp32(%rip): 39 /r, mod 00, r/m 101 */
	for (int i = 0; c && i + 6 <= 128; i++)
		if (c[i] == 0x39 && (c[i + 1] & 0xc7) == 0x05)
			return callee + i + 6 + (int64_t)rd_s32(c + i + 2);
	return 0;
}

/* An exported class or module of a CRuby (rb_cArray, rb_mKernel: an 8-byte
 * object named rb_c or rb_m and a capital) kept by its name in Ruby */
static void ruby_class_of(struct pyelf *e, const char *name, const GElf_Sym *s)
{
	if (strncmp(name, "rb_", 3) != 0 || (name[3] != 'c' && name[3] != 'm') || name[4] < 'A' || name[4] > 'Z' ||
	    s->st_size != 8 || GELF_ST_TYPE(s->st_info) != STT_OBJECT || e->nruby_class >= PYELF_RUBY_CLASSES ||
	    strlen(name + 4) >= sizeof(e->ruby_class[0].name))
		return;
	e->ruby_class[e->nruby_class].addr = s->st_value;
	strcpy(e->ruby_class[e->nruby_class++].name, name + 4);
}

/* A CRuby's version from its exported data: ruby_api_version's ints (at
 * api) and the string ruby_version (at version) */
static void ruby_version_of(struct pyelf *e, const unsigned char *raw, size_t rawlen, uint64_t api, uint64_t version)
{
	const unsigned char *a = api ? file_at(e, raw, rawlen, api, 8) : NULL;
	const unsigned char *v = version ? file_at(e, raw, rawlen, version, 1) : NULL;
	snprintf(e->ruby_version, sizeof(e->ruby_version), "?");
	if (a) {
		uint32_t major, minor;
		memcpy(&major, a, 4);
		memcpy(&minor, a + 4, 4);
		e->ruby_major = major, e->ruby_minor = minor;
		snprintf(e->ruby_version, sizeof(e->ruby_version), "%u.%u", major, minor);
	}
	size_t k = 0;
	while (v && v + k < raw + rawlen && k + 1 < sizeof(e->ruby_version) &&
	       ((v[k] >= '0' && v[k] <= '9') || v[k] == '.'))
		k++;
	if (k)
		snprintf(e->ruby_version, sizeof(e->ruby_version), "%.*s", (int)k, (const char *)v);
}

/* The first relocation of type type against dynamic symbol sym into *r:
 * 1, or 0 when there is none. */
static int rela_of(Elf *elf, size_t sym, unsigned type, GElf_Rela *r)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++)
			if (gelf_getrela(d, (int)i, r) && GELF_R_SYM(r->r_info) == sym && GELF_R_TYPE(r->r_info) == type)
				return 1;
	}
	return 0;
}

/* Where a program's GOT slot for its dynamic symbol sym is (a jump slot
 * or a GLOB_DAT relocation of it): its file address, or 0. */
static uint64_t launch_slot_of(Elf *elf, size_t sym)
{
	GElf_Rela r;
	return rela_of(elf, sym, R_X86_64_JUMP_SLOT, &r) || rela_of(elf, sym, R_X86_64_GLOB_DAT, &r) ? r.r_offset : 0;
}

/* Where a library's GOT slot for the TLS module id of its dynamic
 * symbol sym is (the general dynamic model's R_X86_64_DTPMOD64, which
 * ld.so fills in): its file address, or 0; and the variable's offset in
 * the module's block into *offset, its symbol's value plus the addend of
 * the R_X86_64_DTPOFF64 beside it. */
static uint64_t tls_slot_of(Elf *elf, size_t sym, uint64_t value, uint64_t *offset)
{
	GElf_Rela r;
	*offset = value + (rela_of(elf, sym, R_X86_64_DTPOFF64, &r) ? (uint64_t)r.r_addend : 0);
	return rela_of(elf, sym, R_X86_64_DTPMOD64, &r) ? r.r_offset : 0;
}

/* PL_revision, PL_version, PL_subversion: where each is, into at[] */
static void perl_version_symbol(const char *name, uint64_t value, uint64_t at[3])
{
	static const char *const names[3] = { "revision", "version", "subversion" };
	for (int k = 0; k < 3; k++)
		if (strcmp(name, names[k]) == 0)
			at[k] = value;
}

/* A Perl: its version's three bytes from the file, each 0 when it cannot
 * be read (refused then); with ithreads, its interpreter's variables are
 * in one struct, found through PL_curinterp (refused without) */
static void perl_found(struct pyelf *e, const unsigned char *raw, size_t rawlen, uint64_t interp,
		       const uint64_t version_at[3], int threads)
{
	e->perl = 1;
	e->perl_threads = threads;
	e->runtime = interp;
	for (int k = 0; k < 3; k++) {
		const unsigned char *b = version_at[k] ? file_at(e, raw, rawlen, version_at[k], 1) : NULL;
		e->perl_version[k] = b ? *b : 0;
	}
}

void pyelf_read(struct pyelf *e, const struct mappedfile *f)
{
	if (!f->data)
		return;
	e->file = f;
	Elf *elf = elf_memory((char *)f->data, f->size);
	size_t rawlen = 0, nph = 0;
	const unsigned char *raw = elf ? (const unsigned char *)elf_rawfile(elf, &rawlen) : NULL;
	if (!raw || elf_getphdrnum(elf, &nph) != 0)
		goto out;
	for (size_t i = 0; i < nph && e->nload < 8; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
			if ((ph.p_flags & PF_X) && (!e->text_vaddr || ph.p_vaddr < e->text_vaddr))
				e->text_vaddr = ph.p_vaddr, e->text_offset = ph.p_offset;
			e->load[e->nload].vaddr = ph.p_vaddr;
			e->load[e->nload].offset = ph.p_offset;
			e->load[e->nload].filesz = ph.p_filesz;
			e->nload++;
		}
	}
	Elf_Scn *scn = NULL;
	uint64_t php_globals = 0, perl_interp = 0, perl_version[3] = { 0 };
	int perl_globals = 0;		/* exports PL_curcop: no struct interpreter */
	uint64_t ruby_vm = 0, ruby_api = 0, ruby_version = 0, ruby_exec_lo = 0, ruby_exec_hi = 0;
	uint64_t ruby_id2str = 0, ruby_ec_value = 0;
	size_t launch_sym = 0, ruby_ec_sym = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		/* .dynsym only: an interpreter exports these for its extension
		 * modules; a big unstripped .symtab is not worth reading for each
		 * library of each process */
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		for (size_t i = 0; d && i < n; i++) {
			GElf_Sym s;
			const char *name;
			if (!gelf_getsym(d, (int)i, &s) || !(name = elf_strptr(elf, sh.sh_link, s.st_name)) ||
			    name[0] == 0)
				continue;
			if (s.st_shndx == SHN_UNDEF && (strcmp(name, "Py_BytesMain") == 0 || strcmp(name, "Py_Main") == 0 ||
							 strcmp(name, "ruby_init") == 0))
				launch_sym = i;
			/* a TLS variable's value is its offset in its block: 0 too */
			if (s.st_shndx != SHN_UNDEF && GELF_ST_TYPE(s.st_info) == STT_TLS &&
			    strcmp(name, "ruby_current_ec") == 0)
				ruby_ec_sym = i, ruby_ec_value = s.st_value;
			if (s.st_shndx == SHN_UNDEF || !s.st_value)
				continue;
			for (int k = 0; k < PYSYM_COUNT; k++)
				if (strcmp(name, pylayout_symbol_names[k]) == 0)
					e->syms |= 1u << k;
			if (strcmp(name, "Py_Version") == 0)
				e->version = s.st_value;
			else if (strcmp(name, "_PyRuntime") == 0 || strcmp(name, "_PyThreadState_Current") == 0)
				e->runtime = s.st_value;
			else if (strcmp(name, "PyCode_Type") == 0)
				e->code_type = s.st_value;
			else if (strcmp(name, "PyUnicode_Type") == 0)
				e->unicode_type = s.st_value;
			else if (strcmp(name, "PyBytes_Type") == 0)
				e->bytes_type = s.st_value;
			else if ((strcmp(name, "_PyEval_EvalFrameDefault") == 0 || strcmp(name, "execute_ex") == 0 ||
				  strcmp(name, "Perl_runops_standard") == 0) &&
				 s.st_size)
				e->eval_lo = s.st_value, e->eval_hi = s.st_value + s.st_size;
			else if (strcmp(name, "executor_globals") == 0)
				php_globals = s.st_value;
			else if (strcmp(name, "PL_curinterp") == 0)
				perl_interp = s.st_value;
			else if (strcmp(name, "PL_curcop") == 0)
				perl_globals = 1;
			else if (strncmp(name, "PL_", 3) == 0)
				perl_version_symbol(name + 3, s.st_value, perl_version);
			else if (strcmp(name, "ruby_current_vm_ptr") == 0)
				ruby_vm = s.st_value;
			else if (strcmp(name, "ruby_api_version") == 0)
				ruby_api = s.st_value;
			else if (strcmp(name, "ruby_version") == 0)
				ruby_version = s.st_value;
			else if (strcmp(name, "rb_vm_exec") == 0)
				ruby_exec_lo = s.st_value, ruby_exec_hi = s.st_value + s.st_size;
			else if (strcmp(name, "rb_id2str") == 0)
				ruby_id2str = s.st_value;
			else
				ruby_class_of(e, name, &s);
		}
	}
	/* a PHP (non-ZTS: its globals are one struct) */
	if (php_globals && e->eval_lo && !e->code_type) {
		e->php = 1;
		e->runtime = php_globals;
		/* its version strings are constants: .rodata, a tenth of the
		 * file (php8.2's 5.6 MB searched took 1.9 ms) */
		uint64_t at, size;
		const unsigned char *rodata = section_named(e, elf, raw, rawlen, ".rodata", &at, &size);
		phplayout_version_of((const char *)(rodata ? rodata : raw), rodata ? size : rawlen, &e->php_api,
				     e->php_version, sizeof(e->php_version));
	}
	if (perl_interp && e->eval_lo && !e->code_type)
		perl_found(e, raw, rawlen, perl_interp, perl_version, !perl_globals);
	/* a CRuby: its VM, its version, its VM loop */
	if (ruby_vm && ruby_exec_hi > ruby_exec_lo && !e->code_type && !e->php && !e->perl) {
		e->eval_lo = ruby_exec_lo, e->eval_hi = ruby_exec_hi;
		find_ruby_loop(e, elf, raw, rawlen);
		e->ruby = e->loop_lo != 0;
		e->runtime = ruby_vm;
		ruby_version_of(e, raw, rawlen, ruby_api, ruby_version);
		e->ruby_symbols = find_ruby_symbols(e, elf, raw, rawlen, ruby_id2str);
		/* the test-only MARPLE_TEST_RUBY_NO_TLS: as a libruby without it */
		const char *no_tls = getenv("MARPLE_TEST_RUBY_NO_TLS");
		if (ruby_ec_sym && !(no_tls && *no_tls))
			e->ruby_tls_slot = tls_slot_of(elf, ruby_ec_sym, ruby_ec_value, &e->ruby_tls_offset);
	}
	if (!e->ruby)
		e->nruby_class = 0;
	/* 3.6+: the eval loop and what names a code object; Python 2 (its
	 * loop PyEval_EvalFrameEx only) to be refused by name */
	if (e->code_type && e->unicode_type && pylayout_minor_of(e->syms) == 0)
		e->python = 2;
	else if (e->runtime && e->code_type && e->unicode_type && e->bytes_type && e->eval_lo)
		e->python = 1;
	if (e->python == 1 || e->php || e->perl || e->ruby)
		find_cold_part(e, elf, raw, rawlen);
	else if (launch_sym)
		e->launch_slot = launch_slot_of(elf, launch_sym);
out:
	if (elf)
		elf_end(elf);
}
