/* pycodes.h — the frame walker's cache of code objects (pyframes.c): a
 * Python code object (or a PHP function, a Perl sub, a Ruby iseq or C
 * method entry) of a traced process read on first sight (its qualname and
 * file name as UTF-8, cut at PY_NAME_MAX characters; a code object's line
 * table only as far as the lines asked for need),
 * checked again when asked to (its memory may hold another since), told to
 * the BPF side as known (py_codes), and let go least recently used first
 * over a byte budget.
 *
 *   struct pycodes *cc = pycodes_new(codes_fd);            // py_codes' fd
 *   struct pycode *c = pycodes_get(cc, p, addr, recheck);  // never NULL; c->ok: named
 *   int line = pycodes_line(cc, p, c, lasti);              // 0: unknown
 *   pycodes_free(cc);
 */
#ifndef MARPLE_PYCODES_H
#define MARPLE_PYCODES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pylayout.h"

struct phplayout;
struct perllayout;
struct rubylayout;
struct pyelf;

/* Objects' common heads (stable across 3.x): ob_type at 8, ob_size at 16;
 * str: length 16, state 32 (its text's place is the version's: struct
 * pylayout); bytes: data at 32.  PyTypeObject.tp_members at 240. */
enum { OB_TYPE = 8, OB_SIZE = 16, STR_LENGTH = 16, STR_STATE = 32, BYTES_DATA = 32, TYPE_MEMBERS = 240 };

/* A name read from a traced process is cut to this many characters (a
 * hostile one is as long as it likes) */
#define PY_NAME_MAX 256

/* Which interpreter a walked process runs */
enum pyproc_lang { PYPROC_PYTHON, PYPROC_PHP, PYPROC_PERL, PYPROC_RUBY };

/* A process walked. */
struct pyproc {
	uint32_t pid, exec_id;
	int walked;
	uint32_t merge_looked;		/* 1 + the image a merge looked at, its request
					 * not read (pyframes.c's merge_stack) */
	int request_owed;		/* ... whose request, if it comes, is not looked at */
	struct pylayout lay;
	char version[24];		/* "3.12.1"; "3.9" when only its symbols say */
	int by_table;			/* its layout is the built-in table's */
	int refused_early;		/* refused on what its memory said, which may have
					 * been read before ld.so relocated it: looked at again */
	enum pyproc_lang lang;
	const struct phplayout *php;	/* a PHP's layout, once chosen */
	const struct perllayout *perl;	/* a Perl's */
	const struct rubylayout *ruby;	/* a Ruby's */
	const struct pyelf *ruby_elf;	/* its libruby's facts (classes, FDEs), and */
	uint64_t ruby_bias;		/* ... that file's load bias */
	uint64_t ruby_symbols;		/* its global_symbols (run-time address), or 0 */
	int ruby_threads;		/* each thread's ec found by its ruby_current_ec */
	uint64_t runtime, code_type, unicode_type, bytes_type;	/* run-time addresses */
	uint64_t eval_lo, eval_hi, cold_lo, cold_hi;
	uint64_t loop_lo, loop_hi;	/* Ruby's vm_exec_core: part of the activation */
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
	uint64_t used;			/* the cache's clock when last named with */
	/* a Ruby C method's C function: its extent in the process (its FDE's);
	 * 0, 0: not known (a function of an extension's file) */
	uint64_t native_lo, native_hi;
	int evicted;			/* let go over the budget: read again if asked */
};

/* The code-object cache's byte budget: over it, the least recently used
 * half is let go (a process remaking code objects with 1 MiB line tables
 * took the collector to 5.56 GB) */
#define PY_CODE_BUDGET (32u << 20)

/* The cache: by (pid, code object address) */
struct pycodes {
	int codes_fd;			/* py_codes: the BPF side's known code objects */
	struct hashtab *index;		/* pid, code address -> index in code[] */
	struct hashtab *ruby_methods;	/* pid, a Ruby method's iseq -> */
	size_t *ruby_method_code, ruby_method_cap;	/* ... its entry's index in code[] */
	struct pycode *code;
	size_t n, cap;
	size_t bytes;			/* what the cache holds, against PY_CODE_BUDGET */
	uint64_t clock;			/* code objects named so far: the LRU's clock */
	uint64_t evicted;		/* let go over the budget */
	uint64_t reread;		/* found reused for another code object */
};

struct pycodes *pycodes_new(int codes_fd);
void pycodes_free(struct pycodes *cc);
/* Code object (or PHP function) addr of p, read on first sight; with
 * recheck, read again if what it points at changed.  Over the budget, the
 * least recently used half is let go first. */
struct pycode *pycodes_get(struct pycodes *cc, const struct pyproc *p, uint64_t addr, int recheck);
/* The line c runs at lasti, reading as much of its line table as that
 * takes: 0 when unknown. */
int pycodes_line(struct pycodes *cc, const struct pyproc *p, struct pycode *c, unsigned lasti);
/* len bytes (or one word) at addr of pid's memory: 0, or -1 when not all
 * could be read */
int pycodes_read_mem(pid_t pid, uint64_t addr, void *buf, size_t len);
int pycodes_read_u64(pid_t pid, uint64_t addr, uint64_t *v);

#endif
