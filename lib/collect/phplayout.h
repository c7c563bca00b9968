/* phplayout.h — how each PHP (the Zend engine, non-ZTS) lays out what the
 * frame walker reads (bpf/python.bpf.h with PY_F_PHP, lib/collect/pyframes.c):
 * its module API number (ZEND_MODULE_API_NO, which changes with every minor
 * version and so with its structs), read from the build id the engine
 * checks extensions against ("API20220829,NTS", in its ELF file), and the
 * struct offsets of that version.
 *
 *   phplayout_version_of(elf_bytes, n, &api, version, sizeof(version));
 *   const struct phplayout *t = phplayout_table(api);       // NULL: none known
 *   phplayout_to_proc(t, &py_proc);                         // for py_procs
 */
#ifndef MARPLE_PHPLAYOUT_H
#define MARPLE_PHPLAYOUT_H

#include <stddef.h>
#include <stdint.h>

struct py_proc;

/* Stable since PHP 7.0: zend_string's len at 16, its bytes at 24 */
enum { PHP_STR_LEN = 16, PHP_STR_VAL = 24 };

struct phplayout {
	unsigned api;			/* ZEND_MODULE_API_NO */
	const char *minor;		/* "8.2" */
	uint16_t eg_current;		/* executor_globals.current_execute_data */
	uint16_t ex_opline, ex_func, ex_prev, ex_call_top_bit;	/* zend_execute_data's; ZEND_CALL_TOP's bit */
	uint16_t op_lineno;		/* zend_op.lineno */
	uint16_t fn_name, fn_scope;	/* zend_function.common's function_name, scope */
	uint16_t fn_filename;		/* zend_op_array.filename (a user function's) */
	uint16_t ce_name;		/* zend_class_entry.name */
};

/* The module API number of a PHP's ELF file (its bytes, n of them) from
 * its non-ZTS module build id, and its version ("8.2.36") from its
 * X-Powered-By header: 0 and "?" when not found (a ZTS build has no such
 * id). */
void phplayout_version_of(const char *elf, size_t n, unsigned *api, char *version, size_t len);
/* The built-in table's layout of api, NULL when there is none (or the
 * test-only environment variable MARPLE_TEST_PHP_NO_TABLE is set). */
const struct phplayout *phplayout_table(unsigned api);
/* The members of struct py_proc the BPF walk reads (PY_F_PHP). */
void phplayout_to_proc(const struct phplayout *l, struct py_proc *v);

#endif
