/* pylayout.h — how each CPython lays out what the Python frame walker reads
 * (bpf/python.bpf.h, lib/collect/pyframes.c): the version an interpreter's
 * ELF file is, the struct offsets of that version (a built-in table for
 * 3.6-3.13, else the _Py_DebugOffsets 3.13+ keeps at the start of
 * _PyRuntime, read from the process itself), and a code object's line
 * table read as that version writes it.
 *
 *   unsigned minor = pylayout_minor_of(symbols_mask);  // < 3.11: no Py_Version
 *   const struct pylayout *t = pylayout_table(3, minor);       // NULL: none
 *   struct pylayout d;
 *   if (pylayout_from_debug_offsets(bytes_at_PyRuntime, n, &d, &why) == 0) ...
 *   pylayout_differ(t, &d, what, sizeof(what));               // 0: agree
 *   pylayout_to_proc(t, &py_proc);                              // for py_procs
 *   int line = pylayout_line(t, table, len, whole, firstlineno, lasti);  // -1: read more
 */
#ifndef MARPLE_PYLAYOUT_H
#define MARPLE_PYLAYOUT_H

#include <stddef.h>
#include <stdint.h>

struct py_proc;

/* How a version writes a code object's lines: 3.6-3.9's co_lnotab (by byte
 * offset), 3.10's co_linetable (by byte offset, f_lasti in code units),
 * 3.11+'s location table (by code unit). */
enum pylayout_lines { PYLAYOUT_LNOTAB, PYLAYOUT_LINETABLE_310, PYLAYOUT_LOCATIONS };

struct pylayout {
	unsigned major, minor;
	uint16_t flags;			/* enum py_flags (bpf/python.h) */
	uint32_t tss_key, tstate_current, interp_head;
	uint16_t interp_threads, tstate_next, tstate_frame, tstate_tid, cframe_current;
	uint16_t frame_code, frame_previous, frame_instr, frame_entry;
	uint16_t code_adaptive, code_filename, code_qualname, code_linetable, code_firstlineno;
	uint16_t str_ascii_data, str_compact_data;	/* a compact str's text */
	uint16_t lines;			/* enum pylayout_lines */
};

/* Symbols an interpreter's ELF exports that tell its version before 3.11
 * (Py_Version's first): bits of the mask pylayout_minor_of reads. */
enum pylayout_symbol {
	PYSYM_EVAL_DEFAULT,		/* _PyEval_EvalFrameDefault: 3.6+ */
	PYSYM_RUNTIME,			/* _PyRuntime: 3.7+ */
	PYSYM_POSONLY,			/* PyCode_NewWithPosOnlyArgs: 3.8+ */
	PYSYM_FRAME_GETCODE,		/* PyFrame_GetCode: 3.9+ */
	PYSYM_PY_IS,			/* Py_Is: 3.10+ */
	PYSYM_EVAL_EX,			/* PyEval_EvalFrameEx: every version, 2.x's eval loop */
	PYSYM_COUNT
};
extern const char *const pylayout_symbol_names[PYSYM_COUNT];

/* The 3.x minor version the symbols in mask (1 << enum pylayout_symbol)
 * say, 6..10; 0 for a Python 2 (its eval loop only); -1 for no Python. */
int pylayout_minor_of(unsigned mask);

/* The built-in table of 3.minor, NULL when there is none (or when the
 * test-only environment variable MARPLE_TEST_PYTHON_NO_TABLE is set and a
 * version that has _Py_DebugOffsets is asked for). */
const struct pylayout *pylayout_table(unsigned major, unsigned minor);

/* Bytes of _PyRuntime read for its _Py_DebugOffsets */
#define PYLAYOUT_DEBUG_BYTES 584

/* The layout _Py_DebugOffsets (3.13's form) describes, from the first len
 * bytes of _PyRuntime: 0, or -1 with why (cookie missing, a form not read
 * here), -2 for a free-threaded build.  *version is its PY_VERSION_HEX either way
 * (0 when no cookie). */
int pylayout_from_debug_offsets(const unsigned char *buf, size_t len, struct pylayout *out, uint64_t *version,
				const char **why);

/* Do a and b place the walked members differently?  0 if not; else 1 with
 * the first difference in what ("frame_code 0 against 8"). */
int pylayout_differ(const struct pylayout *a, const struct pylayout *b, char *what, size_t len);

/* The offsets the BPF side walks with, into v. */
void pylayout_to_proc(const struct pylayout *l, struct py_proc *v);

/* The line a frame at lasti (PY_FRAME_LASTI: code units from 3.10, bytes
 * before) is running, from the first len bytes of its code object's line
 * table (whole: all of it) and co_firstlineno: 0 when unknown, -1 when a
 * part ends before lasti's entry (a cache that keeps only the start of a
 * big table reads more of it then). */
int pylayout_line(const struct pylayout *l, const unsigned char *t, size_t len, int whole, int firstlineno,
		  unsigned lasti);

#endif
