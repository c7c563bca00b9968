/* pyelf.h — what an interpreter's ELF file (a CPython's, a PHP's or a Perl's, or a
 * program launching a shared libpython) tells the frame walker
 * (pyframes.c), or a CRuby's: its symbols, its eval loop and that loop's cold part, its
 * PT_LOAD segments.  pyframes keeps one per mapped file, as its slot in the
 * model (mappedfiles.h); this reads it from the file's bytes the model
 * mapped and never opens a file itself.
 *
 *   struct pyelf *e = marple_calloc(1, sizeof(*e));
 *   pyelf_read(e, f);          // e->python: 1 a CPython 3, 2 a Python 2; e->php: a PHP; e->perl: a Perl
 */
#ifndef MARPLE_PYELF_H
#define MARPLE_PYELF_H

#include <stdint.h>

struct mappedfile;

#define PYELF_RUBY_CLASSES 64

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
	int perl;			/* a Perl 5: runtime is &PL_curinterp, eval
					 * Perl_runops_standard */
	int perl_threads;		/* built with ithreads (no PL_curcop exported) */
	unsigned perl_version[3];	/* PL_revision, PL_version, PL_subversion */
	int ruby;			/* a CRuby: runtime is &ruby_current_vm_ptr, eval
					 * rb_vm_exec, loop vm_exec_core (its largest
					 * callee); its ruby_api_version and ruby_version */
	unsigned ruby_major, ruby_minor;
	char ruby_version[24];
	uint64_t ruby_symbols;		/* its global_symbols (what names an ID), 0: not found */
	/* its thread-local ruby_current_ec (each thread's own ec): the GOT
	 * slot where ld.so puts its TLS module id (R_X86_64_DTPMOD64), and
	 * the variable's offset in the module's TLS block; 0, 0: not found
	 * (or the test-only environment variable MARPLE_TEST_RUBY_NO_TLS set) */
	uint64_t ruby_tls_slot, ruby_tls_offset;
	/* the classes and modules it exports (rb_cArray: "Array"), to name a
	 * C method's owner */
	struct { uint64_t addr; char name[24]; } ruby_class[PYELF_RUBY_CLASSES];
	int nruby_class;
	/* its .eh_frame_hdr's sorted FDE table (file address) and how many
	 * FDEs it sorts (0, 0: none; fde_looked once sought), in file: what
	 * pyelf_fde_extent searches */
	uint64_t fde_hdr;
	uint32_t fde_count;
	int fde_looked;
	const struct mappedfile *file;	/* the file read: its slot holds this */
	unsigned syms;			/* 1 << enum pylayout_symbol */
	uint64_t version, runtime, code_type, unicode_type, bytes_type;
	uint64_t eval_lo, eval_hi, cold_lo, cold_hi;	/* cold: 0, 0 when not found */
	uint64_t loop_lo, loop_hi;	/* Ruby: the VM loop each eval activation calls */
	struct { uint64_t vaddr, offset, filesz; } load[8];
	int nload;
	uint64_t text_vaddr, text_offset;	/* its lowest executable PT_LOAD's (struct py_file) */
	uint64_t launch_slot;		/* a program that calls a libpython's Py_BytesMain or
					 * Py_Main (a libruby's ruby_init): its GOT slot's
					 * address, else 0 */
};

/* Fill e (zeroed) from f's mapped bytes: e->python, e->php and e->perl stay 0 for
 * any other file (a launcher of one: its launch_slot). */
void pyelf_read(struct pyelf *e, const struct mappedfile *f);

/* The extent [*lo, *hi) (file addresses) of the function whose FDE in e's
 * .eh_frame_hdr holds file address vaddr, read from the file's mapped
 * bytes (a Ruby C method's C function, a GCC cold part, a callee): 0, or
 * -1 when no FDE holds it. */
int pyelf_fde_extent(const struct pyelf *e, uint64_t vaddr, uint64_t *lo, uint64_t *hi);

#endif
