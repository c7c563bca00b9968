/* pyframes.c — Python functions in the stacks (see pyframes.h). */
#include "pyframes.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "bpfmap.h"
#include "hashtab.h"
#include "mappedfiles.h"
#include "phplayout.h"
#include "procmaps.h"
#include "procnewsring.h"
#include "pylayout.h"
#include "stackframes.h"
#include "stacks.h"
#include "util.h"

#include <linux/types.h>
#include "python.h"

/* Objects' common heads (stable across 3.x): ob_type at 8, ob_size at 16;
 * str: length 16, state 32 (its text's place is the version's: struct
 * pylayout); bytes: data at 32.  PyTypeObject.tp_members at 240. */
enum { OB_TYPE = 8, OB_SIZE = 16, STR_LENGTH = 16, STR_STATE = 32, BYTES_DATA = 32, TYPE_MEMBERS = 240 };

/* A name read from a traced process is cut to this many characters (a
 * hostile one is as long as it likes) */
#define PY_NAME_MAX 256

/* What an ELF file tells: is it a CPython (python 1, or 2 for a Python 2),
 * where its symbols are (file addresses; runtime: _PyRuntime, 3.6's
 * _PyThreadState_Current), where _PyEval_EvalFrameDefault's code is, and
 * which of the symbols that tell a version before Py_Version it exports. */
struct pyelf {
	int python;
	int php;			/* a PHP: runtime is executor_globals, eval
					 * execute_ex; its API number and version */
	unsigned php_api;
	char php_version[24];
	unsigned syms;			/* 1 << enum pylayout_symbol */
	uint64_t version, runtime, code_type, unicode_type, bytes_type;
	uint64_t eval_lo, eval_hi, cold_lo, cold_hi;	/* cold: 0, 0 when not found */
	struct { uint64_t vaddr, offset, filesz; } load[8];
	int nload;
	uint64_t text_vaddr, text_offset;	/* its lowest executable PT_LOAD's (struct py_file) */
	uint64_t launch_slot;		/* a program that calls a libpython's Py_BytesMain or
					 * Py_Main: its GOT slot's address, else 0 */
};

/* A process walked. */
struct pyproc {
	uint32_t pid, exec_id;
	int walked;
	struct pylayout lay;
	char version[24];		/* "3.12.1"; "3.9" when only its symbols say */
	int by_table;			/* its layout is the built-in table's */
	int is_php;			/* a PHP (not a CPython) */
	const struct phplayout *php;	/* its layout, once chosen */
	uint64_t runtime, code_type, unicode_type, bytes_type;	/* run-time addresses */
	uint64_t eval_lo, eval_hi, cold_lo, cold_hi;
};

/* A code object as read: its line table only as far as the lines asked
 * for needed (linetable_len of linetable_size bytes). */
struct pycode {
	int ok;
	uint64_t qualname_ptr, filename_ptr, linetable_ptr;	/* as read: a change is a reuse */
	char *qualname, *filename;
	int firstlineno;
	unsigned char *linetable;
	size_t linetable_len, linetable_size;
	uint64_t used;			/* pf->code_clock when last named with */
	int evicted;			/* let go over the budget: read again if asked */
};

/* The code-object cache's byte budget: over it, the least recently used
 * half is let go (a process remaking code objects with 1 MiB line tables
 * took the collector to 5.56 GB) */
#define PY_CODE_BUDGET (32u << 20)

struct pyframes {
	struct syms_cache *syms;
	int procs_fd, counters_fd, stacks_fd, files_fd, codes_fd;
	uint32_t tsd_block;
	/* what a file tells about Python: pyframes' slot in the model
	 * (mappedfiles.h), each such file held */
	struct mappedfiles *model;
	struct mappedfile **held;
	size_t nheld, held_cap;
	struct hashtab *procs;		/* pid -> index in proc[] */
	struct pyproc *proc;
	size_t nproc, proc_cap;
	struct hashtab *codes;		/* pid, code address -> index in code[] */
	struct pycode *code;
	size_t ncode, code_cap;
	size_t code_bytes;
	struct hashtab *names;		/* interned frame names */
	struct hashtab *files;		/* their files, interned */
	struct pyname { const char *file; int line; } *name_of;	/* by names' index */
	size_t name_cap;
	struct hashtab *refused;	/* "pid version" said once */
	json_t *interpreters;		/* "3.12.1 table" -> processes (the trailer's) */
	uint64_t code_clock;		/* code objects named so far: their LRU's clock */
	uint64_t code_evicted;		/* cached code objects let go over the budget */
	uint64_t asked, walked, not_python, refused_n;
	uint64_t merged, mismatched, unpaired_activations, dropped_frames, unnamed_code, code_reread;
	uint64_t placed_outside;	/* samples with Python frames put before a cut native stack */
	uint64_t trampolines;		/* -X perf trampoline frames left out (the Python frames say them) */
	/* new stacks the BPF side told of; those whose code objects it knew
	 * named (PY_REQUEST_KNOWN); those that were new */
	uint64_t stacks_told, stacks_told_known, stacks_named;
	uint64_t cpu_ns;		/* this side's CPU: looking, naming, merging */
	uint64_t from_file;		/* Python processes walked from their first sample */
	uint64_t before_known;		/* user stacks of Python processes stored native only,
					 * before they were looked at */
	/* what the last stack merged gave, per sample: weighed by on_weigh */
	struct { uint64_t merged, mismatched, unpaired, dropped, outside, trampolines; } last;
	/* the counts the last trailer showed, and those the next subtracts
	 * (pyframes_next_section: continuous mode) */
	struct pycounts {
		uint64_t bpf[PY_NCOUNTERS];
		uint64_t walked, refused_n, merged, mismatched, unpaired_activations, dropped_frames,
			placed_outside, trampolines, code_reread, from_file, before_known, cpu_ns, stacks_told, stacks_told_known,
			stacks_named;
	} reported, before;
	struct hashtab *stacks;		/* pid and Python words -> index in stack_names[] */
	struct stack_names { size_t first, n; } *stack_names;
	size_t nstack_names, stack_names_cap;
	const char **name_pool;		/* the names of each stack told, leaf first */
	size_t npool, pool_cap;
};

/* glibc keeps a thread's first 32 pthread keys in its struct pthread, which
 * the thread pointer (fsbase) points at: find where, here, with a key of our
 * own and a value no one else has, instead of trusting one glibc's layout.
 * Python's process maps the same glibc as ours when both come from the
 * system; the BPF side checks each thread state it finds by its thread id. */
static int derive_tsd_block(uint32_t *out)
{
	static char marker;
	pthread_key_t key;
	int rc = -1;

	if (pthread_key_create(&key, NULL) != 0)
		return -1;
	if (key < 32 && pthread_setspecific(key, &marker) == 0) {
		const unsigned char *self = (const unsigned char *)pthread_self();
		for (size_t off = 0; off + 8 <= 4096; off += 8) {
			void *v;
			memcpy(&v, self + off, sizeof(v));
			if (v == &marker && off >= 8 + 16 * (size_t)key) {
				*out = (uint32_t)(off - 8 - 16 * key);
				rc = 0;
				break;
			}
		}
	}
	pthread_key_delete(key);
	return rc;
}

struct pyframes *pyframes_new(struct bpf_object *obj, struct syms_cache *syms)
{
	struct bpf_map *procs = bpf_object__find_map_by_name(obj, "py_procs");
	struct bpf_map *ctr = bpf_object__find_map_by_name(obj, "py_counters");
	uint32_t tsd;

	struct bpf_map *stacks = bpf_object__find_map_by_name(obj, "stacks");
	struct bpf_map *files = bpf_object__find_map_by_name(obj, "py_files");
	struct bpf_map *codes = bpf_object__find_map_by_name(obj, "py_codes");
	if (!procs || !ctr || !stacks || !files || !codes)
		return NULL;
	if (derive_tsd_block(&tsd) != 0) {
		marple_warn("cannot find glibc's thread-specific data: Python processes are profiled natively");
		return NULL;
	}
	elf_version(EV_CURRENT);
	struct pyframes *pf = marple_calloc(1, sizeof(*pf));
	pf->syms = syms;
	pf->procs_fd = bpf_map__fd(procs);
	pf->counters_fd = bpf_map__fd(ctr);
	pf->stacks_fd = bpf_map__fd(stacks);
	pf->files_fd = bpf_map__fd(files);
	pf->codes_fd = bpf_map__fd(codes);
	pf->tsd_block = tsd;
	pf->model = mappedfiles_shared();
	pf->procs = hashtab_new();
	pf->codes = hashtab_new();
	pf->names = hashtab_new();
	pf->refused = hashtab_new();
	pf->stacks = hashtab_new();
	pf->interpreters = json_object();
	return pf;
}

void pyframes_free(struct pyframes *pf)
{
	if (!pf)
		return;
	for (size_t i = 0; i < pf->ncode; i++) {
		free(pf->code[i].qualname);
		free(pf->code[i].filename);
		free(pf->code[i].linetable);
	}
	free(pf->code);
	for (size_t i = 0; i < pf->nheld; i++) {
		mappedfile_set_slot(pf->held[i], pf, NULL, NULL);	/* frees its pyelf */
		mappedfile_put(pf->held[i]);
	}
	free(pf->held);
	if (pf->model)
		mappedfiles_release(pf->model);
	free(pf->proc);
	hashtab_free(pf->procs);
	hashtab_free(pf->codes);
	hashtab_free(pf->names);
	hashtab_free(pf->files);
	free(pf->name_of);
	hashtab_free(pf->refused);
	json_decref(pf->interpreters);
	hashtab_free(pf->stacks);
	free(pf->stack_names);
	free(pf->name_pool);
	free(pf);
}

static int read_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

static int read_u64(pid_t pid, uint64_t addr, uint64_t *v)
{
	return read_mem(pid, addr, v, sizeof(*v));
}

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

/* GCC moves a function's unlikely paths to a ".cold" part far from it,
 * named only in .symtab (which Debian strips); that part has its own FDE,
 * and the function jumps into it.  Find the FDE most of the function's
 * rel32 jumps outside itself land in (.eh_frame_hdr's sorted table): the
 * cold part of python3.11's _PyEval_EvalFrameDefault gets all 314 of them. */
static void find_cold_part(struct pyelf *e, Elf *elf, const unsigned char *raw, size_t rawlen)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	uint64_t hdr = 0, hdr_size = 0;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    strcmp(name, ".eh_frame_hdr") == 0) {
			hdr = sh.sh_addr;
			hdr_size = sh.sh_size;
		}
	}
	const unsigned char *h = hdr ? file_at(e, raw, rawlen, hdr, hdr_size) : NULL;
	/* version 1; eh_frame_ptr pcrel sdata4, count udata4, table datarel sdata4 */
	if (!h || hdr_size < 12 || h[0] != 1 || h[2] != 0x03 || h[3] != 0x3b)
		return;
	uint32_t count;
	memcpy(&count, h + 8, 4);
	if (12 + (uint64_t)count * 8 > hdr_size)
		return;
	const unsigned char *table = h + 12;
	const unsigned char *code = file_at(e, raw, rawlen, e->eval_lo, e->eval_hi - e->eval_lo);
	if (!code)
		return;
	uint64_t best_pc = 0, best_end = 0, seen_pc = 0, seen_end = 0;
	uint32_t best_hits = 0, hits = 0;
	/* targets, one FDE at a time: most of them are in one part, found in
	 * turn; a byte pattern that only looks like a jump lands anywhere */
	for (uint64_t i = 0; i + 5 <= e->eval_hi - e->eval_lo; i++) {
		uint64_t next, target;
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
		/* the FDE whose start is the last at or before target */
		uint32_t lo = 0, hi = count;
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			if ((int64_t)hdr + rd_s32(table + mid * 8) <= (int64_t)target)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == 0)
			continue;
		uint64_t fde = hdr + (int64_t)rd_s32(table + (lo - 1) * 8 + 4);
		const unsigned char *f = file_at(e, raw, rawlen, fde, 16);
		if (!f)
			continue;
		uint64_t pc = fde + 8 + (int64_t)rd_s32(f + 8);
		uint32_t range;
		memcpy(&range, f + 12, 4);
		if (target < pc || target >= pc + range || (pc <= e->eval_lo && e->eval_lo < pc + range))
			continue;
		if (pc != seen_pc) {
			seen_pc = pc, seen_end = pc + range;
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

/* Where a program's GOT slot for its dynamic symbol sym is (a jump slot
 * or a GLOB_DAT relocation of it): its file address, or 0. */
static uint64_t launch_slot_of(Elf *elf, size_t sym)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela r;
			if (gelf_getrela(d, (int)i, &r) && GELF_R_SYM(r.r_info) == sym &&
			    (GELF_R_TYPE(r.r_info) == R_X86_64_JUMP_SLOT || GELF_R_TYPE(r.r_info) == R_X86_64_GLOB_DAT))
				return r.r_offset;
		}
	}
	return 0;
}

/* Read what a Python ELF tells (e->python 0 for any other; a launcher of
 * one: its launch_slot). */
static void read_elf(struct pyelf *e, const struct mappedfile *f)
{
	if (!f->data)
		return;
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
	uint64_t php_globals = 0;
	size_t launch_sym = 0;
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
			if (s.st_shndx == SHN_UNDEF && (strcmp(name, "Py_BytesMain") == 0 || strcmp(name, "Py_Main") == 0))
				launch_sym = i;
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
			else if ((strcmp(name, "_PyEval_EvalFrameDefault") == 0 || strcmp(name, "execute_ex") == 0) &&
				 s.st_size)
				e->eval_lo = s.st_value, e->eval_hi = s.st_value + s.st_size;
			else if (strcmp(name, "executor_globals") == 0)
				php_globals = s.st_value;
		}
	}
	/* a PHP (non-ZTS: its globals are one struct) */
	if (php_globals && e->eval_lo && !e->code_type) {
		e->php = 1;
		e->runtime = php_globals;
		phplayout_version_of((const char *)raw, rawlen, &e->php_api, e->php_version, sizeof(e->php_version));
	}
	/* 3.6+: the eval loop and what names a code object; Python 2 (its
	 * loop PyEval_EvalFrameEx only) to be refused by name */
	if (e->code_type && e->unicode_type && pylayout_minor_of(e->syms) == 0)
		e->python = 2;
	else if (e->runtime && e->code_type && e->unicode_type && e->bytes_type && e->eval_lo)
		e->python = 1;
	if (e->python == 1 || e->php)
		find_cold_part(e, elf, raw, rawlen);
	else if (launch_sym)
		e->launch_slot = launch_slot_of(elf, launch_sym);
out:
	if (elf)
		elf_end(elf);
}

/* What the file pid maps at l tells about Python, read the first time
 * (a file that cannot be opened tells nothing). */
static const struct pyelf *elf_of(struct pyframes *pf, pid_t pid, const struct procmaps_line *l)
{
	static const struct pyelf nothing;
	struct mappedfile *f = mappedfiles_open_line(pf->model, pid, l);
	struct pyelf *e = f ? mappedfile_slot(f, pf) : NULL;

	if (!f || e) {
		mappedfile_put(f);
		return e ? e : &nothing;
	}
	e = marple_calloc(1, sizeof(*e));
	read_elf(e, f);
	mappedfile_release_pages(f);
	mappedfile_set_slot(f, pf, e, free);
	pf->held = marple_grow(pf->held, &pf->held_cap, pf->nheld + 1, sizeof(*pf->held));
	pf->held[pf->nheld++] = f;
	return e;
}

static void set_proc(struct pyframes *pf, uint32_t pid, const struct py_proc *v)
{
	bpf_map_update_elem(pf->procs_fd, &pid, v, BPF_ANY);
}

static struct pyproc *proc_of(struct pyframes *pf, uint32_t pid)
{
	size_t before = hashtab_size(pf->procs);
	const struct hashtab_entry *he = hashtab_add(pf->procs, &pid, sizeof(pid), 0, 0);
	size_t idx = hashtab_index(pf->procs, he);
	if (idx >= before) {
		pf->proc = marple_grow(pf->proc, &pf->proc_cap, pf->nproc + 1, sizeof(*pf->proc));
		memset(&pf->proc[pf->nproc++], 0, sizeof(*pf->proc));
	}
	return &pf->proc[idx];
}

static int read_cstr(pid_t pid, uint64_t addr, char *buf, size_t len)
{
	if (read_mem(pid, addr, buf, len) != 0)
		return -1;
	buf[len - 1] = 0;
	return 0;
}

/* Does PyCode_Type's member table put the members we read where the
 * layout does?  (The process's own word on the code object, whichever way
 * the layout was found; before 3.11 co_name stands for co_qualname.) */
static int layout_checks(pid_t pid, const struct pyproc *p)
{
	const char *const names[] = { "co_filename", p->lay.minor >= 11 ? "co_qualname" : "co_name",
				      p->lay.lines == PYLAYOUT_LNOTAB ? "co_lnotab" : "co_linetable",
				      "co_firstlineno" };
	const uint16_t want[] = { p->lay.code_filename, p->lay.code_qualname, p->lay.code_linetable,
				  p->lay.code_firstlineno };
	int found = 0;
	uint64_t members;

	if (read_u64(pid, p->code_type + TYPE_MEMBERS, &members) != 0 || !members)
		return -1;
	for (int i = 0; i < 64; i++) {
		uint64_t m[5];		/* PyMemberDef: name, type, offset, flags, doc */
		char name[32];
		if (read_mem(pid, members + i * 40, m, sizeof(m)) != 0 || !m[0])
			break;
		if (read_cstr(pid, m[0], name, sizeof(name)) != 0)
			continue;
		for (int k = 0; k < 4; k++) {
			if (strcmp(name, names[k]) == 0) {
				if (m[2] != want[k])
					return -1;
				found++;
			}
		}
	}
	return found == 4 ? 0 : -1;
}

static void comm_of(pid_t pid, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	FILE *f = fopen(path, "r");
	buf[0] = 0;
	if (f) {
		if (fgets(buf, (int)len, f))
			buf[strcspn(buf, "\n")] = 0;
		fclose(f);
	}
}

/* Say once per process and version what about its Python (why it is
 * profiled natively, or a table the interpreter contradicts). */
static void say_once(struct pyframes *pf, const struct pyproc *p, const char *what)
{
	char key[64], comm[32];
	snprintf(key, sizeof(key), "%u %s", p->pid, p->version);
	size_t before = hashtab_size(pf->refused);
	if (hashtab_index(pf->refused, hashtab_add(pf->refused, key, strlen(key), 0, 0)) < before)
		return;
	comm_of((pid_t)p->pid, comm, sizeof(comm));
	marple_warn("process %u (%s) runs %s %s: %s", p->pid, comm, p->is_php ? "PHP" : "Python", p->version, what);
}

/* Count a process in the trailer's "interpreters": version and how its
 * layout was found (or "refused"). */
static void count_interpreter(struct pyframes *pf, const struct pyproc *p, const char *how)
{
	char key[96];
	snprintf(key, sizeof(key), "%s%s %s", p->is_php ? "php " : "", p->version, how);
	json_t *n = json_object_get(pf->interpreters, key);
	json_object_set_new(pf->interpreters, key, json_integer(n ? json_integer_value(n) + 1 : 1));
}

/* p's version (Py_Version from 3.11, else what its symbols say): its major
 * and minor, or NULL with why not. */
static const char *version_of(struct pyproc *p, const struct pyelf *py, uint64_t bias, unsigned *major,
			      unsigned *minor)
{
	uint64_t hex = 0;
	int by_symbols = pylayout_minor_of(py->syms);

	if (py->version) {
		if (read_u64((pid_t)p->pid, py->version + bias, &hex) != 0) {
			snprintf(p->version, sizeof(p->version), "3");
			return "its Py_Version cannot be read";
		}
		*major = (unsigned)(hex >> 24) & 0xff, *minor = (unsigned)(hex >> 16) & 0xff;
		snprintf(p->version, sizeof(p->version), "%u.%u.%u", *major, *minor, (unsigned)(hex >> 8) & 0xff);
		return NULL;
	}
	if (by_symbols <= 0) {
		snprintf(p->version, sizeof(p->version), "2");
		return "Python 2 is not walked";
	}
	*major = 3, *minor = (unsigned)by_symbols;
	snprintf(p->version, sizeof(p->version), "3.%d", by_symbols);
	return NULL;
}

/* p's layout: the built-in table of its version, the _Py_DebugOffsets the
 * interpreter keeps (3.13+) when there is none, both checked one against
 * the other when there are both (the interpreter's own word wins).  NULL,
 * or why it is not walked. */
static const char *choose_layout(struct pyframes *pf, struct pyproc *p, unsigned major, unsigned minor,
				 const char **how)
{
	const struct pylayout *table = pylayout_table(major, minor);
	struct pylayout own;
	const char *own_why = NULL;
	int own_rc = -1;

	if (major == 3 && minor >= 13) {
		unsigned char buf[PYLAYOUT_DEBUG_BYTES];
		uint64_t hex;
		if (read_mem((pid_t)p->pid, p->runtime, buf, sizeof(buf)) != 0)
			own_why = "its _PyRuntime cannot be read";
		else
			own_rc = pylayout_from_debug_offsets(buf, sizeof(buf), &own, &hex, &own_why);
	}
	if (own_rc == -2)
		return own_why;		/* free-threaded: no table is right either */
	if (own_rc == 0 && table) {
		char what[96], msg[224];
		if (!pylayout_differ(table, &own, what, sizeof(what))) {
			p->lay = *table;
			p->by_table = 1;
			*how = "table+debug_offsets";
			return NULL;
		}
		snprintf(msg, sizeof(msg), "its _Py_DebugOffsets disagree with marple's table (%s); walked with its own",
			 what);
		say_once(pf, p, msg);
		p->lay = own;
		*how = "debug_offsets(disagreeing)";
		return NULL;
	}
	if (own_rc == 0) {
		p->lay = own;
		*how = "debug_offsets";
		return NULL;
	}
	if (table) {
		p->lay = *table;
		p->by_table = 1;
		*how = "table";
		return NULL;
	}
	return own_why ? own_why : "no frame layout is known for that version";
}

/* A program that runs a shared libpython (struct py_file.launch_slot): its
 * facts and identity. */
struct pylauncher {
	const struct pyelf *elf;
	struct mappedfile_id id;
};

/* Is l the program pid runs (its /proc/PID/exe)? */
static int is_program(pid_t pid, const struct procmaps_line *l)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	return stat(path, &st) == 0 &&
	       mappedfile_id_equal(mappedfile_id_of_stat(&st), mappedfile_id_of_line(l));
}

/* The ELF mapped by pid that is a CPython, and its load bias there (the
 * device and inode it was mapped from in *l); NULL if none.  A program
 * seen before it that launches a shared libpython: into *launcher. */
static const struct pyelf *python_elf(struct pyframes *pf, uint32_t pid, uint64_t *bias, struct procmaps_line *l,
				      struct pylauncher *launcher)
{
	struct procmaps pm;
	const struct pyelf *py = NULL;

	launcher->elf = NULL;
	procmaps_open(&pm, (pid_t)pid);
	while (!py && procmaps_next(&pm, l)) {
		if (!procmaps_is_exec(l) || !procmaps_is_file(l))
			continue;
		const struct pyelf *e = elf_of(pf, (pid_t)pid, l);
		if (!e->python && !e->php && e->launch_slot && !launcher->elf && is_program((pid_t)pid, l)) {
			launcher->elf = e;
			launcher->id = mappedfile_id_of_line(l);
		}
		if (!e->python && !e->php)
			continue;
		for (int i = 0; i < e->nload; i++) {
			if (l->pgoff >= e->load[i].offset && l->pgoff < e->load[i].offset + e->load[i].filesz) {
				*bias = l->start - (e->load[i].vaddr + (l->pgoff - e->load[i].offset));
				py = e;
				break;
			}
		}
	}
	procmaps_close(&pm);
	return py;
}

/* The facts of p's Python file (and of its launcher, if it has one) into
 * py_files, for the next process whose program it is or launches it (the
 * kernel's s_dev: major << 20 | minor, as the maps print them); only a
 * layout of the built-in table: debug offsets are in the process's own
 * writable memory, a word on itself, not on other processes */
static void publish_file(struct pyframes *pf, const struct pyproc *p, const struct py_proc *v,
			 const struct pyelf *py, const struct procmaps_line *l, const struct pylauncher *launcher)
{
	if (!l->inode || !py->text_vaddr || !p->by_table)
		return;
	struct unwind_file_key k = { .dev = mappedfile_id_kernel_dev(mappedfile_id_of_line(l)), .ino = l->inode };
	struct py_file f = { .proc = *v, .text_vaddr = py->text_vaddr, .text_offset = py->text_offset };
	f.proc.runtime = py->runtime;
	f.proc.pidns_dev = f.proc.pidns_ino = 0;
	bpf_map_update_elem(pf->files_fd, &k, &f, BPF_ANY);
	if (!launcher->elf || !launcher->elf->text_vaddr)
		return;
	struct unwind_file_key lk = { .dev = mappedfile_id_kernel_dev(launcher->id), .ino = launcher->id.ino };
	struct py_file lf = { .text_vaddr = launcher->elf->text_vaddr, .text_offset = launcher->elf->text_offset,
			      .launch_slot = launcher->elf->launch_slot };
	bpf_map_update_elem(pf->files_fd, &lk, &lf, BPF_ANY);
}

/* p, whose layout is chosen, is walked: its offsets into py_procs, and its
 * file's into py_files */
static void walk_proc(struct pyframes *pf, struct pyproc *p, const struct py_proc *seen, const struct pyelf *py,
		      const struct procmaps_line *l, const struct pylauncher *launcher)
{
	struct py_proc v = { .exec_id = p->exec_id, .state = PY_WALK, .runtime = p->runtime,
			     .tsd_block = pf->tsd_block };

	p->walked = 1;
	pf->walked++;
	if (seen->state == PY_WALK)
		pf->from_file++;
	pf->before_known += seen->unknown_samples;
	if (p->php)
		phplayout_to_proc(p->php, &v);
	else
		pylayout_to_proc(&p->lay, &v);
	/* in another pid namespace than ours, its thread ids are that one's */
	char ns[64];
	struct stat theirs, ours;
	snprintf(ns, sizeof(ns), "/proc/%u/ns/pid", p->pid);
	if (stat(ns, &theirs) == 0 && stat("/proc/self/ns/pid", &ours) == 0 &&
	    (theirs.st_ino != ours.st_ino || theirs.st_dev != ours.st_dev)) {
		v.pidns_dev = theirs.st_dev;
		v.pidns_ino = theirs.st_ino;
	}
	set_proc(pf, p->pid, &v);
	publish_file(pf, p, &v, py, l, launcher);
}

/* A PHP's version and layout, its file's: the built-in table's for its
 * module API number.  NULL, or why it is not walked. */
static const char *php_choose(struct pyproc *p, const struct pyelf *py)
{
	snprintf(p->version, sizeof(p->version), "%s", py->php_version);
	if (!py->php_api)
		return "its module API number cannot be found (a thread-safe build?)";
	p->php = phplayout_table(py->php_api);
	p->by_table = 1;
	return p->php ? NULL : "no frame layout is known for its module API";
}

/* The BPF side asks about image exec_id of pid. */
static void look_at(struct pyframes *pf, uint32_t pid, uint32_t exec_id)
{
	struct py_proc v = { .exec_id = exec_id, .state = PY_NATIVE }, seen;
	struct procmaps_line l;
	uint64_t bias = 0;
	unsigned major = 0, minor = 0;
	const char *how = NULL;

	pf->asked++;
	/* what the BPF side made of it meanwhile: walked from its first sample
	 * (its program a Python file known), or its stacks native so far; or
	 * it has moved on to another image (exec'ed since: asked again), and
	 * this answer would be about the wrong one */
	if (bpf_map_lookup_elem(pf->procs_fd, &pid, &seen) != 0)
		memset(&seen, 0, sizeof(seen));
	else if (seen.exec_id != exec_id)
		return;
	struct pylauncher launcher = { 0 };
	const struct pyelf *py = python_elf(pf, pid, &bias, &l, &launcher);
	if (!py && launcher.elf) {
		/* a launcher looked at before ld.so mapped its libpython: asked
		 * about again at its next sample */
		bpf_map_delete_elem(pf->procs_fd, &pid);
		return;
	}
	if (!py) {
		pf->not_python++;
		set_proc(pf, pid, &v);
		return;
	}
	struct pyproc *p = proc_of(pf, pid);
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->exec_id = exec_id;
	p->runtime = py->runtime + bias;
	p->code_type = py->code_type + bias;
	p->unicode_type = py->unicode_type + bias;
	p->bytes_type = py->bytes_type + bias;
	p->eval_lo = py->eval_lo + bias;
	p->eval_hi = py->eval_hi + bias;
	if (py->cold_hi)
		p->cold_lo = py->cold_lo + bias, p->cold_hi = py->cold_hi + bias;
	const char *why;
	p->is_php = py->php;
	if (py->php) {
		why = php_choose(p, py);
		how = "table";
	} else {
		why = version_of(p, py, bias, &major, &minor);
		if (!why)
			why = choose_layout(pf, p, major, minor, &how);
		if (!why && layout_checks((pid_t)pid, p) != 0)
			why = "its code objects are not laid out as expected";
	}
	if (why) {
		char msg[160];
		pf->refused_n++;
		snprintf(msg, sizeof(msg), "%s; profiled natively", why);
		say_once(pf, p, msg);
		count_interpreter(pf, p, "refused");
		set_proc(pf, pid, &v);
		return;
	}
	count_interpreter(pf, p, how);
	walk_proc(pf, p, &seen, py, &l, &launcher);
}

static const char *frame_name(struct pyframes *pf, const struct pyproc *p, uint64_t word, int recheck);

/* The Python words of a stored stack (those after PY_STACK_MARK), into
 * words: how many. */
static int python_words(const uint64_t *stack, uint64_t *words)
{
	int i = 0, m = 0;
	while (i < MARPLE_STACK_DEPTH && stack[i] && !PY_IS_STACK_MARK(stack[i]))
		i++;
	for (i++; i < MARPLE_STACK_DEPTH && stack[i]; i++)
		words[m++] = stack[i];
	return m;
}

/* The names given to the Python words of pid when first seen (n 0: not
 * yet), by content: the same stack id names other stacks after a drain. */
static struct stack_names *names_of(struct pyframes *pf, uint32_t pid, const uint64_t *words, int m)
{
	uint64_t key[MARPLE_STACK_DEPTH + 1];
	key[0] = pid;
	memcpy(key + 1, words, (size_t)m * sizeof(*words));
	size_t before = hashtab_size(pf->stacks);
	size_t i = hashtab_index(pf->stacks, hashtab_add(pf->stacks, key, (size_t)(m + 1) * 8, 0, 0));
	if (i >= before) {
		pf->stack_names = marple_grow(pf->stack_names, &pf->stack_names_cap, i + 1, sizeof(*pf->stack_names));
		pf->nstack_names = i + 1;
		pf->stack_names[i].first = pf->npool;
		pf->stack_names[i].n = 0;
	}
	return &pf->stack_names[i];
}

/* Name the code objects of a new stack now, while its process lives; known:
 * the BPF side found them all named, as they still are (PY_REQUEST_KNOWN),
 * so the cache names them as they were then. */
static void name_stack(struct pyframes *pf, uint32_t pid, uint32_t exec_id, int32_t id, int known)
{
	uint64_t stack[MARPLE_STACK_DEPTH], words[MARPLE_STACK_DEPTH];
	size_t before = hashtab_size(pf->procs);
	size_t idx = hashtab_index(pf->procs, hashtab_add(pf->procs, &pid, sizeof(pid), 0, 0));

	if (idx >= before) {	/* never looked at: nothing to name with */
		pf->proc = marple_grow(pf->proc, &pf->proc_cap, pf->nproc + 1, sizeof(*pf->proc));
		memset(&pf->proc[pf->nproc++], 0, sizeof(*pf->proc));
		return;
	}
	const struct pyproc *p = &pf->proc[idx];
	if (!p->walked || p->exec_id != exec_id || bpf_map_lookup_elem(pf->stacks_fd, &id, stack) != 0)
		return;
	int m = python_words(stack, words);
	struct stack_names *sn = m ? names_of(pf, pid, words, m) : NULL;
	if (!sn || sn->n)
		return;		/* named before */
	pf->stacks_named++;
	sn->first = pf->npool;
	for (int i = 0; i < m; i++) {
		const char *name = frame_name(pf, p, words[i], !known);
		pf->name_pool = marple_grow(pf->name_pool, &pf->pool_cap, pf->npool + 1, sizeof(*pf->name_pool));
		pf->name_pool[pf->npool++] = name;
		sn->n++;
	}
}

static int on_request(void *ctx, void *data, size_t len)
{
	const struct py_request *r = data;
	struct pyframes *pf = ctx;
	if (len < sizeof(*r))
		return 0;
	uint64_t start = marple_thread_cpu_ns();
	if (r->stack_id >= 0) {
		pf->stacks_told++;
		pf->stacks_told_known += (r->flags & PY_REQUEST_KNOWN) != 0;
		name_stack(pf, r->pid, r->exec_id, r->stack_id, (r->flags & PY_REQUEST_KNOWN) != 0);
	} else {
		look_at(pf, r->pid, r->exec_id);
	}
	pf->cpu_ns += marple_thread_cpu_ns() - start;
	return 0;
}

void pyframes_listen(struct pyframes *pf, struct procnewsring *news)
{
	procnewsring_on(news, PROCNEWS_PYTHON, on_request, pf);
}

/* A str object's text as UTF-8 (malloc'ed), cut after PY_NAME_MAX
 * characters ("[...]" then), or NULL. */
static char *read_str(pid_t pid, const struct pyproc *p, uint64_t addr)
{
	unsigned char h[80];
	uint64_t type, length;
	uint32_t state;

	if (!addr || p->lay.str_compact_data > sizeof(h) || read_mem(pid, addr, h, p->lay.str_compact_data) != 0)
		return NULL;
	memcpy(&type, h + OB_TYPE, 8);
	memcpy(&length, h + STR_LENGTH, 8);
	memcpy(&state, h + STR_STATE, 4);
	unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
	if (type != p->unicode_type || !compact || (kind != 1 && kind != 2 && kind != 4))
		return NULL;
	int cut = length > PY_NAME_MAX;
	if (cut)
		length = PY_NAME_MAX;
	unsigned char *raw = marple_malloc(length * kind + 1);
	if (read_mem(pid, addr + (ascii ? p->lay.str_ascii_data : p->lay.str_compact_data), raw, length * kind) != 0) {
		free(raw);
		return NULL;
	}
	char *out = marple_malloc(length * 4 + sizeof("[...]")), *o = out;
	for (uint64_t i = 0; i < length; i++) {
		uint32_t c = kind == 1 ? raw[i] : kind == 2 ? ((uint16_t *)raw)[i] : ((uint32_t *)raw)[i];
		if (c < 0x80) {
			*o++ = (char)c;
		} else if (c < 0x800) {
			*o++ = (char)(0xc0 | c >> 6), *o++ = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			*o++ = (char)(0xe0 | c >> 12), *o++ = (char)(0x80 | ((c >> 6) & 0x3f));
			*o++ = (char)(0x80 | (c & 0x3f));
		} else {
			*o++ = (char)(0xf0 | (c >> 18 & 7)), *o++ = (char)(0x80 | ((c >> 12) & 0x3f));
			*o++ = (char)(0x80 | ((c >> 6) & 0x3f)), *o++ = (char)(0x80 | (c & 0x3f));
		}
	}
	strcpy(o, cut ? "[...]" : "");
	free(raw);
	return out;
}

/* Tell the BPF side that code object addr of pid is named, as it is now: its
 * stacks need not wake us (py_codes).  A full map leaves it unknown. */
static void tell_known(struct pyframes *pf, uint32_t pid, uint64_t addr, const struct pycode *c)
{
	struct py_code_key k = { .tgid = pid, .code = addr };
	struct py_code_id v = { .qualname = c->qualname_ptr, .linetable = c->linetable_ptr };

	if (c->ok)
		bpf_map_update_elem(pf->codes_fd, &k, &v, BPF_ANY);
}

static size_t code_bytes(const struct pycode *c)
{
	return sizeof(*c) + (c->qualname ? strlen(c->qualname) + 1 : 0) + (c->filename ? strlen(c->filename) + 1 : 0) +
	       c->linetable_len;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Over PY_CODE_BUDGET: the least recently used half of the code objects
 * cached let go (their entries stay, read again if asked; a process gone
 * meanwhile names them "code object gone") */
static void evict_codes(struct pyframes *pf)
{
	uint64_t *used = marple_malloc(sizeof(*used) * (pf->ncode + 1));
	size_t n = 0;
	for (size_t i = 0; i < pf->ncode; i++)
		if (!pf->code[i].evicted)
			used[n++] = pf->code[i].used;
	qsort(used, n, sizeof(*used), cmp_u64);
	uint64_t cut = n ? used[n / 2] : 0;
	free(used);
	for (size_t i = 0; i < pf->ncode; i++) {
		struct pycode *c = &pf->code[i];
		if (c->evicted || c->used > cut)
			continue;
		pf->code_bytes -= code_bytes(c) - sizeof(*c);
		free(c->qualname);
		free(c->filename);
		free(c->linetable);
		c->qualname = c->filename = NULL;
		c->linetable = NULL;
		c->linetable_len = 0;
		c->ok = 0;
		c->evicted = 1;
		pf->code_evicted++;
	}
}

/* What identifies code object addr of p as it is now: ids the objects it
 * points at (qualname, filename, line table), first its first line.  A PHP
 * function (zend_function) likewise: its function_name, op_array filename
 * (a user function's) and scope, first its type.  -1: unreadable (gone);
 * 0: not one (freed, its memory reused); 1: one. */
static int code_ids(const struct pyproc *p, uint64_t addr, uint64_t ids[3], int32_t *first)
{
	pid_t pid = (pid_t)p->pid;
	unsigned char o[256];
	uint64_t type = 0;

	ids[0] = ids[1] = ids[2] = 0;
	*first = 0;
	if (p->is_php) {
		const struct phplayout *l = p->php;
		if (l->fn_name > 16 || l->fn_scope > 16 || read_mem(pid, addr, o, 24) != 0)
			return -1;
		*first = o[0];
		memcpy(&ids[0], o + l->fn_name, 8);
		memcpy(&ids[2], o + l->fn_scope, 8);
		if (o[0] != PHP_INTERNAL_FUNCTION && read_u64(pid, addr + l->fn_filename, &ids[1]) != 0)
			return -1;
		return o[0] == PHP_INTERNAL_FUNCTION || o[0] == PHP_USER_FUNCTION || o[0] == PHP_EVAL_CODE;
	}
	if (read_mem(pid, addr, o, sizeof(o)) != 0)
		return -1;
	memcpy(&type, o + OB_TYPE, 8);
	memcpy(&ids[0], o + p->lay.code_qualname, 8);
	memcpy(&ids[1], o + p->lay.code_filename, 8);
	memcpy(&ids[2], o + p->lay.code_linetable, 8);
	memcpy(first, o + p->lay.code_firstlineno, 4);
	return type == p->code_type;
}

/* A PHP string (zend_string) as its bytes, cut after PY_NAME_MAX ("[...]"
 * then), or NULL; a NUL in it ends it. */
static char *php_str(pid_t pid, uint64_t addr)
{
	uint64_t len;
	if (!addr || read_u64(pid, addr + PHP_STR_LEN, &len) != 0)
		return NULL;
	int cut = len > PY_NAME_MAX;
	if (cut)
		len = PY_NAME_MAX;
	char *out = marple_malloc(len + sizeof("[...]"));
	if (read_mem(pid, addr + PHP_STR_VAL, out, len) != 0) {
		free(out);
		return NULL;
	}
	strcpy(out + strnlen(out, len), cut ? "[...]" : "");
	return out;
}

/* A PHP function's names: "Class::function" (or the function's own; a
 * script's or an included file's code is "{main}") and its file (none
 * for an internal function) */
static void php_names(const struct pyproc *p, struct pycode *c)
{
	pid_t pid = (pid_t)p->pid;
	uint64_t class_name = 0;
	char *fn = c->qualname_ptr ? php_str(pid, c->qualname_ptr) : marple_strdup("{main}");
	char *cls = c->linetable_ptr && read_u64(pid, c->linetable_ptr + p->php->ce_name, &class_name) == 0
			    ? php_str(pid, class_name)
			    : NULL;
	if (fn && cls) {
		c->qualname = marple_malloc(strlen(cls) + strlen(fn) + 3);
		sprintf(c->qualname, "%s::%s", cls, fn);
		free(fn);
	} else {
		c->qualname = fn;
	}
	free(cls);
	c->filename = php_str(pid, c->filename_ptr);
}

/* A Python code object's names and its line table's size */
static void py_names(const struct pyproc *p, struct pycode *c)
{
	unsigned char b[BYTES_DATA];
	uint64_t btype, blen;

	c->qualname = read_str((pid_t)p->pid, p, c->qualname_ptr);
	c->filename = read_str((pid_t)p->pid, p, c->filename_ptr);
	if (c->linetable_ptr && read_mem((pid_t)p->pid, c->linetable_ptr, b, sizeof(b)) == 0) {
		memcpy(&btype, b + OB_TYPE, 8);
		memcpy(&blen, b + OB_SIZE, 8);
		if (btype == p->bytes_type && blen <= 1 << 20)
			c->linetable_size = blen;
	}
}

/* Code object (or PHP function) addr of p, read on first sight; with
 * recheck, read again if what it points at changed (the object was freed
 * and its memory given to another: the cache would name it wrongly). */
static struct pycode *code_of(struct pyframes *pf, const struct pyproc *p, uint64_t addr, int recheck)
{
	uint64_t key[2] = { p->pid, addr };
	size_t before = hashtab_size(pf->codes);
	size_t idx = hashtab_index(pf->codes, hashtab_add(pf->codes, key, sizeof(key), 0, 0));
	if (idx < before && !recheck && !pf->code[idx].evicted) {
		pf->code[idx].used = ++pf->code_clock;
		return &pf->code[idx];
	}
	uint64_t ids[3];
	int32_t firstline;
	int is = code_ids(p, addr, ids, &firstline);
	struct pycode *c;
	if (idx < before) {
		c = &pf->code[idx];
		/* unreadable now (exited): keep what was read while it lived */
		if (!c->evicted && (is < 0 || (c->ok && c->qualname_ptr == ids[0] && c->filename_ptr == ids[1] &&
					       c->linetable_ptr == ids[2] && c->firstlineno == firstline && is == 1)))
			return c;
		pf->code_reread += !c->evicted;
		struct py_code_key gone = { .tgid = p->pid, .code = addr };
		bpf_map_delete_elem(pf->codes_fd, &gone);
		pf->code_bytes -= code_bytes(c);
		free(c->qualname);
		free(c->filename);
		free(c->linetable);
	} else {
		pf->code = marple_grow(pf->code, &pf->code_cap, pf->ncode + 1, sizeof(*pf->code));
		c = &pf->code[pf->ncode++];
	}
	memset(c, 0, sizeof(*c));
	c->used = ++pf->code_clock;
	/* a code object freed and its memory reused is no longer of PyCode_Type,
	 * or points at other names */
	if (is != 1)
		return c;
	c->qualname_ptr = ids[0];
	c->filename_ptr = ids[1];
	c->linetable_ptr = ids[2];
	c->firstlineno = firstline;
	if (p->is_php)
		php_names(p, c);
	else
		py_names(p, c);
	c->ok = c->qualname != NULL;
	tell_known(pf, p->pid, addr, c);
	pf->code_bytes += code_bytes(c);
	return c;
}

/* More of c's line table read (twice as much, 256 bytes at least): 0, or
 * -1 when there is no more or it cannot be read (the process is gone). */
static int more_linetable(struct pyframes *pf, const struct pyproc *p, struct pycode *c)
{
	size_t want = c->linetable_len * 2 > 256 ? c->linetable_len * 2 : 256;
	if (want > c->linetable_size)
		want = c->linetable_size;
	if (want <= c->linetable_len)
		return -1;
	unsigned char *t = marple_malloc(want);
	if (read_mem((pid_t)p->pid, c->linetable_ptr + BYTES_DATA, t, want) != 0) {
		free(t);
		return -1;
	}
	pf->code_bytes += want - c->linetable_len;
	free(c->linetable);
	c->linetable = t;
	c->linetable_len = want;
	return 0;
}

/* The line code object c runs at lasti, reading as much of its line table
 * as that takes: 0 when unknown. */
static int line_of(struct pyframes *pf, const struct pyproc *p, struct pycode *c, unsigned lasti)
{
	int line;
	if (lasti == PY_LASTI_UNKNOWN || (!c->linetable && more_linetable(pf, p, c) != 0))
		return 0;
	while ((line = pylayout_line(&p->lay, c->linetable, c->linetable_len, c->linetable_len == c->linetable_size,
				     c->firstlineno, lasti)) < 0)
		if (more_linetable(pf, p, c) != 0)
			return 0;
	return line;
}

#define GONE "[python: code object gone]"
#define PHP_GONE "[php: function gone]"

static const char *intern(struct pyframes *pf, const char *s)
{
	return hashtab_add(pf->names, s, strlen(s), 0, 0)->key;
}

/* A frame name interned with the file and line it stands for (told to
 * stackframes_describe when the name goes into a stack). */
static const char *intern_frame(struct pyframes *pf, const char *s, const char *file, int line)
{
	size_t before = hashtab_size(pf->names);
	const char *name = intern(pf, s);
	size_t i = hashtab_size(pf->names) - 1;
	if (i >= before) {
		pf->name_of = marple_grow(pf->name_of, &pf->name_cap, i + 1, sizeof(*pf->name_of));
		if (file && !pf->files)
			pf->files = hashtab_new();
		pf->name_of[i].file = file ? hashtab_add(pf->files, file, strlen(file), 0, 0)->key : NULL;
		pf->name_of[i].line = line;
	}
	return name;
}

/* Describe to sf the Python frame name: one intern_frame made, or the
 * literal for a code object gone (no file). */
static const char *described(struct pyframes *pf, struct stackframes *sf, const struct pyproc *p, const char *name)
{
	const char *kind = p->is_php ? "php" : "python";
	if (strcmp(name, GONE) == 0 || strcmp(name, PHP_GONE) == 0) {
		stackframes_describe(sf, name, kind, NULL, 0);
		return name;
	}
	size_t i = hashtab_index(pf->names, hashtab_add(pf->names, name, strlen(name), 0, 0));
	stackframes_describe(sf, name, kind, pf->name_of[i].file, pf->name_of[i].line);
	return name;
}

static const char *frame_name(struct pyframes *pf, const struct pyproc *p, uint64_t word, int recheck)
{
	if (pf->code_bytes > PY_CODE_BUDGET)
		evict_codes(pf);
	struct pycode *c = code_of(pf, p, PY_FRAME_CODE(word), recheck);
	char buf[1024];
	if (!c->ok) {
		pf->unnamed_code++;
		return p->is_php ? PHP_GONE : GONE;
	}
	unsigned lasti = (unsigned)PY_FRAME_LASTI(word);
	/* a PHP frame's word holds its line; an internal function has none */
	int line = !p->is_php ? line_of(pf, p, c, lasti) : lasti == PY_LASTI_UNKNOWN || !c->filename ? 0 : (int)lasti;
	if (p->is_php && !c->filename)
		snprintf(buf, sizeof(buf), "%s", c->qualname);
	else if (line > 0)
		snprintf(buf, sizeof(buf), "%s (%s:%d)", c->qualname, c->filename ? c->filename : "?", line);
	else
		snprintf(buf, sizeof(buf), "%s (%s)", c->qualname, c->filename ? c->filename : "?");
	return intern_frame(pf, buf, c->filename, line);
}

static int in_eval(const struct pyproc *p, uint64_t pc)
{
	return (pc >= p->eval_lo && pc < p->eval_hi) || (pc >= p->cold_lo && pc < p->cold_hi);
}

struct collect_walk {
	struct pyframes *pf;
	struct stackframes *sf;
	struct hashtab *t;
};

int pyframes_from_root(int na, int ns, int complete, int native_whole)
{
	return native_whole && complete && na > ns;
}

int pyframes_pair(int na, int ns, int complete, int native_whole, int *pair)
{
	int pairs = na < ns ? na : ns;
	for (int a = 0; a < na; a++)
		pair[a] = -1;
	if (na == ns && complete)
		for (int a = 0; a < na; a++)
			pair[a] = a;
	else if (pyframes_from_root(na, ns, complete, native_whole))
		for (int r = 0; r < pairs; r++)
			pair[na - 1 - r] = ns - 1 - r;
	else
		for (int r = 0; r < pairs; r++)
			pair[r] = r;
	return pairs;
}

/* Replace each native activation of the eval loop with the Python frames it
 * ran.  Python frames, leaf first, split at each is_entry frame into one
 * segment per activation; the activations, leaf first, are the native
 * frames in _PyEval_EvalFrameDefault.  Equal counts pair one to one.
 * Otherwise (a sample while an activation starts or ends, a stack cut) the
 * pairs that are certain are kept: from the root when the native stack is
 * whole, else from the leaf; the rest stays native, or is left out. */
static void merge(struct pyframes *pf, struct stackframes *sf, const struct pyproc *p, size_t first,
		  const uint64_t *ips, int n, const uint64_t *words, int m, const char *const *pynames)
{
	size_t nf;
	const char *const *frames = stackframes_frames(sf, &nf);
	int act[MARPLE_STACK_DEPTH], na = 0;
	int seg_start[PY_MAX_FRAMES + 1], seg_end[PY_MAX_FRAMES + 1], ns = 0, complete = 1;
	int pair_of_act[MARPLE_STACK_DEPTH];

	if (nf - first != (size_t)n)
		return;
	for (int i = 0; i < n; i++)
		if (in_eval(p, ips[i] - (i > 0)))
			act[na++] = i;
	for (int j = 0; j < m;) {
		seg_start[ns] = j;
		while (j < m && !PY_FRAME_ENTRY(words[j]))
			j++;
		if (j == m) {
			complete = 0;	/* cut before its entry frame: its activation is unknown */
			break;
		}
		seg_end[ns++] = ++j;
	}
	int whole = stackframes_user_whole(sf);
	int pairs = pyframes_pair(na, ns, complete, whole, pair_of_act);
	/* Paired from the leaf, the native stack seen holds the innermost
	 * activations: the Python frames left over ran in activations further
	 * out, beyond where the native stack was cut, so they go first, whole,
	 * then a frame saying native frames are missing there */
	int outer_from = m;
	if (!pyframes_from_root(na, ns, complete, whole) && na < ns + !complete)
		outer_from = pairs ? seg_end[pairs - 1] : 0;
	if (na == ns && complete) {
		pf->last.merged = 1;
	} else {
		pf->last.mismatched = 1;
		pf->last.unpaired = (uint64_t)(na - pairs);
		int kept = m - outer_from;
		for (int a = 0; a < na; a++)
			if (pair_of_act[a] >= 0)
				kept += seg_end[pair_of_act[a]] - seg_start[pair_of_act[a]];
		pf->last.dropped = (uint64_t)(m - kept);
		pf->last.outside = outer_from < m;
	}
	const char **names = marple_malloc(sizeof(*names) * (size_t)(n + m + 2));
	int k = 0, a = na - 1;
	if (outer_from < m) {
		for (int j = m - 1; j >= outer_from; j--)
			names[k++] = described(pf, sf, p, pynames ? pynames[j] : frame_name(pf, p, words[j], 0));
		names[k++] = "[native frames not unwound]";
	}
	for (int i = n - 1; i >= 0; i--) {
		if (a >= 0 && act[a] == i) {
			int s = pair_of_act[a--];
			if (s >= 0) {
				for (int j = seg_end[s] - 1; j >= seg_start[s]; j--)
					names[k++] = described(pf, sf, p, pynames ? pynames[j] : frame_name(pf, p, words[j], 0));
				continue;
			}
		}
		const char *native = frames[first + (size_t)(n - 1 - i)];
		/* 3.12+'s -X perf trampoline (its perf map's "py::qualname:file"):
		 * the walked frames say the same, with the line */
		if (strncmp(native, "py::", 4) == 0) {
			pf->last.trampolines++;
			continue;
		}
		names[k++] = native;
	}
	stackframes_user_splice(sf, first, names, (size_t)k);
	free(names);
}

/* One stack's merge: its native frames are in sf from first on; its Python
 * words go in their place. */
static void merge_stack(struct pyframes *pf, struct stackframes *sf, pid_t pid, uint64_t exec_id, size_t first,
			const uint64_t *ips, size_t n, const uint64_t *words, size_t m)
{
	uint32_t upid = (uint32_t)pid;
	size_t before = hashtab_size(pf->procs);
	size_t idx = hashtab_index(pf->procs, hashtab_add(pf->procs, &upid, sizeof(upid), 0, 0));

	memset(&pf->last, 0, sizeof(pf->last));
	if (idx >= before) {	/* not one we walked: cannot be, keep it native */
		pf->proc = marple_grow(pf->proc, &pf->proc_cap, pf->nproc + 1, sizeof(*pf->proc));
		memset(&pf->proc[pf->nproc++], 0, sizeof(*pf->proc));
	}
	const struct pyproc *p = &pf->proc[idx];
	if (!p->walked || p->exec_id != (uint32_t)exec_id || n == 0 || m == 0 || m > PY_MAX_FRAMES) {
		pf->last.mismatched = 1;
		return;
	}
	/* the names given when the stack was first seen, if it was told */
	const struct stack_names *sn = names_of(pf, upid, words, (int)m);
	const char *const *pynames = sn && sn->n == m ? pf->name_pool + sn->first : NULL;
	merge(pf, sf, p, first, ips, (int)n, words, (int)m, pynames);
}

/* stackframes' merge (stackframes_set_python), its CPU counted: the native
 * part costs as much without Python, so only this is Python's */
static void on_merge(void *arg, struct stackframes *sf, pid_t pid, uint64_t exec_id, size_t first,
		     const uint64_t *ips, size_t n, const uint64_t *words, size_t m)
{
	struct pyframes *pf = arg;
	uint64_t start = marple_thread_cpu_ns();

	merge_stack(pf, sf, pid, exec_id, first, ips, n, words, m);
	pf->cpu_ns += marple_thread_cpu_ns() - start;
}

/* stackframes' weigh: what the last merge gave, times the samples (or
 * microseconds, bytes) its stack is counted with. */
static void on_weigh(void *arg, uint64_t weight)
{
	struct pyframes *pf = arg;
	pf->merged += pf->last.merged * weight;
	pf->mismatched += pf->last.mismatched * weight;
	pf->unpaired_activations += pf->last.unpaired * weight;
	pf->dropped_frames += pf->last.dropped * weight;
	pf->placed_outside += pf->last.outside * weight;
	pf->trampolines += pf->last.trampolines * weight;
}

void pyframes_merge_into(struct pyframes *pf, struct stackframes *sf)
{
	stackframes_set_python(sf, on_merge, on_weigh, pf);
}

void pyframes_trailer_add(struct pyframes *pf, json_t *tr)
{
	static const char *const names[] = PY_COUNTER_NAMES;
	json_t *o = json_object();
	json_t *c = json_object();
	struct pycounts *r = &pf->reported;
	const struct pycounts *b = &pf->before;

	*r = (struct pycounts){ .walked = pf->walked, .refused_n = pf->refused_n, .merged = pf->merged,
				.mismatched = pf->mismatched, .unpaired_activations = pf->unpaired_activations,
				.dropped_frames = pf->dropped_frames, .placed_outside = pf->placed_outside, .trampolines = pf->trampolines,
				.code_reread = pf->code_reread, .from_file = pf->from_file,
				.before_known = pf->before_known, .cpu_ns = pf->cpu_ns,
				.stacks_told = pf->stacks_told, .stacks_told_known = pf->stacks_told_known,
				.stacks_named = pf->stacks_named };
	for (uint32_t i = 0; i < PY_NCOUNTERS; i++) {
		r->bpf[i] = bpfmap_percpu_sum(pf->counters_fd, i);
		uint64_t v = r->bpf[i] >= b->bpf[i] ? r->bpf[i] - b->bpf[i] : 0;
		json_object_set_new(c, names[i], json_integer((json_int_t)v));
	}
#define SECTION_COUNT(m) json_integer((json_int_t)(r->m - b->m))
	json_object_set_new(o, "processes_walked", SECTION_COUNT(walked));
	json_object_set_new(o, "processes_refused", SECTION_COUNT(refused_n));
	json_object_set_new(o, "bpf", c);
	json_object_set_new(o, "processes_walked_from_first_sample", SECTION_COUNT(from_file));
	json_object_set_new(o, "samples_native_before_known", SECTION_COUNT(before_known));
	json_object_set_new(o, "samples_merged", SECTION_COUNT(merged));
	json_object_set_new(o, "samples_mismatched", SECTION_COUNT(mismatched));
	json_object_set_new(o, "activations_left_native", SECTION_COUNT(unpaired_activations));
	json_object_set_new(o, "python_frames_left_out", SECTION_COUNT(dropped_frames));
	json_object_set_new(o, "samples_python_before_cut_stack", SECTION_COUNT(placed_outside));
	json_object_set_new(o, "perf_trampolines_left_out", SECTION_COUNT(trampolines));
	json_object_set_new(o, "stacks_told", SECTION_COUNT(stacks_told));
	json_object_set_new(o, "stacks_told_known", SECTION_COUNT(stacks_told_known));
	json_object_set_new(o, "stacks_named", SECTION_COUNT(stacks_named));
	json_object_set_new(o, "code_objects", json_integer((json_int_t)pf->ncode));
	json_object_set_new(o, "code_objects_unnamed", json_integer((json_int_t)pf->unnamed_code));
	json_object_set_new(o, "code_objects_reused", json_integer((json_int_t)(r->code_reread - b->code_reread)));
	json_object_set_new(o, "code_cache_bytes", json_integer((json_int_t)pf->code_bytes));
	json_object_set_new(o, "code_objects_evicted", json_integer((json_int_t)pf->code_evicted));
	json_object_set_new(o, "interpreters", json_deep_copy(pf->interpreters));
	json_object_set_new(o, "collector_cpu_ns", SECTION_COUNT(cpu_ns));
#undef SECTION_COUNT
	json_object_set_new(tr, "python", o);
}

void pyframes_next_section(struct pyframes *pf)
{
	pf->before = pf->reported;
}
