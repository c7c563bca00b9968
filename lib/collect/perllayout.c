/* perllayout.c — Perl's struct offsets by version (see perllayout.h). */
#include "perllayout.h"

#include <stdlib.h>

#include <linux/types.h>
#include "python.h"

/* From Debian's perl 5.36 headers (its CORE directory, x86-64, ithreads: offsetof
 * in a program built with `perl -MExtUtils::Embed -e ccopts`) */
static const struct perllayout tables[] = {
	{ .revision = 5, .version = 36, .interp_op = 8, .interp_curcop = 208, .interp_curstackinfo = 224, .interp_main_cv = 1800,
	  .interp_origfilename = 1472, .si_cxstack = 8, .si_cxix = 32, .si_prev = 16, .cx_size = 104,
	  .cx_oldcop = 16, .cx_retop = 48, .cx_sub_cv = 72, .cx_eval_cv = 88, .cop_line = 36, .cv_stash = 32,
	  .cv_gv = 56, .cv_file = 64, .cv_flags = 92, .gv_name = 32, .gv_stash = 40, .hv_max = 24, .hv_aux = 32,
	  .aux_name = 0, .aux_name_count = 28 },
};

/* Does l fit the BPF walk's reads (PERL_CX_BYTES: PL_op, PL_curcop and
 * PL_curstackinfo in one, contexts of at most PERL_CX_MAX bytes)? */
static int fits_walk(const struct perllayout *l)
{
	return l->interp_op <= l->interp_curcop && l->interp_curcop <= l->interp_curstackinfo &&
	       l->interp_curstackinfo + 8 - l->interp_op <= PERL_CX_BYTES && l->cx_size >= 8 &&
	       l->cx_size <= PERL_CX_MAX;
}

const struct perllayout *perllayout_table(unsigned revision, unsigned version)
{
	const char *no_table = getenv("MARPLE_TEST_PERL_NO_TABLE");

	if (no_table && *no_table)
		return NULL;
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		if (tables[i].revision == revision && tables[i].version == version && fits_walk(&tables[i]))
			return &tables[i];
	return NULL;
}

void perllayout_to_proc(const struct perllayout *l, struct py_proc *v)
{
	v->flags = PY_F_PERL;
	v->tstate_frame = 0;		/* runtime is &PL_curinterp */
	/* what identifies a CV user space named (py_codes): its body, the
	 * pointer at its offset 0 (py_tell knows a Perl's 0 is one) */
	v->code_qualname = v->code_linetable = 0;
	v->perl = (struct perl_offsets){ .interp_op = l->interp_op,
					 .interp_curcop = l->interp_curcop,
					 .interp_curstackinfo = l->interp_curstackinfo,
					 .interp_main_cv = l->interp_main_cv,
					 .si_cxstack = l->si_cxstack,
					 .si_cxix = l->si_cxix,
					 .si_prev = l->si_prev,
					 .cx_size = l->cx_size,
					 .cx_oldcop = l->cx_oldcop,
					 .cx_retop = l->cx_retop,
					 .cx_sub_cv = l->cx_sub_cv,
					 .cx_eval_cv = l->cx_eval_cv,
					 .cop_line = l->cop_line };
}
