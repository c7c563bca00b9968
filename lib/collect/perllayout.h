/* perllayout.h — how each Perl 5 (a build with ithreads, its interpreter's
 * variables in a struct interpreter, as Debian's) lays out what the frame
 * walker reads (bpf/python.bpf.h with PY_F_PERL, lib/collect/pyframes.c
 * and pycodes.c): its version, from the bytes PL_revision, PL_version and
 * PL_subversion its ELF exports, and the struct offsets of that version.
 *
 *   const struct perllayout *t = perllayout_table(5, 36);   // NULL: none known
 *   perllayout_to_proc(t, &py_proc);                        // for py_procs
 */
#ifndef MARPLE_PERLLAYOUT_H
#define MARPLE_PERLLAYOUT_H

#include <stdint.h>

struct py_proc;

struct perllayout {
	unsigned revision, version;	/* 5, 36 */
	uint16_t interp_op, interp_curcop, interp_curstackinfo, interp_main_cv, interp_origfilename;
	uint16_t si_cxstack, si_cxix, si_prev;
	uint16_t cx_size, cx_oldcop, cx_retop, cx_sub_cv, cx_eval_cv;
	uint16_t cop_line;
	uint16_t cv_stash, cv_gv, cv_file, cv_flags;	/* XPVCV's: xcv_stash, xcv_gv_u, ... */
	uint16_t gv_name, gv_stash;	/* XPVGV's: xiv_u (its name's HEK), xnv_u (its stash) */
	uint16_t hv_max, hv_aux;	/* XPVHV's xhv_max; where struct xpvhv_aux is in the body */
	uint16_t aux_name, aux_name_count;	/* xpvhv_aux's xhv_name_u, xhv_name_count */
};

/* Stable in Perl 5: an SV head is any (8 bytes), refcnt (4), flags (4),
 * sv_u; a HEK is hash (4), len (4), key; a CV named without a GV has
 * CVf_NAMED, its xcv_gv_u a HEK; a hash with an aux part has SVf_OOK */
enum { PERL_SV_FLAGS = 12, PERL_HV_ARRAY = 16, PERL_HEK_LEN = 4, PERL_HEK_KEY = 8 };
#define PERL_CVF_NAMED 0x8000u
#define PERL_SVF_OOK 0x2000000u

/* The built-in table's layout of Perl revision.version, NULL when there is
 * none (or the test-only environment variable MARPLE_TEST_PERL_NO_TABLE is
 * set). */
const struct perllayout *perllayout_table(unsigned revision, unsigned version);
/* The members of struct py_proc the BPF walk reads (PY_F_PERL). */
void perllayout_to_proc(const struct perllayout *l, struct py_proc *v);

#endif
