/* unwindtablescfi.h — one ELF image's call frame information (.eh_frame, and
 * .debug_frame for the addresses .eh_frame does not cover) turned into the
 * sorted rows the BPF unwinder walks (struct unwind_row, bpf/stacks.h).
 *
 * Our own reader parses the CIEs and FDEs and runs their DW_CFA_
 * instructions in one pass (the rows of python3 and its 73 libraries in a
 * few milliseconds); an FDE it cannot express (an unknown opcode, a CFA
 * expression other than the PLT's and the signal trampoline's, a register
 * rule it does not model) is handed to libdw, which evaluates it address
 * range by address range (dwarf_cfi_addrframe: exact, but ~50 times
 * slower), and counted.
 *
 *   struct unwindtables_rowbuf b = { 0 };
 *   struct unwindtables_rowstats st;
 *   int rc = unwindtablescfi_read(elf, UNWINDTABLES_CFI_OURS, max_rows, &b, &st);
 *   ... b.rows[0..b.nrows), then the next file's ...
 *   unwindtablescfi_buf_free(&b);
 */
#ifndef MARPLE_UNWINDTABROWS_H
#define MARPLE_UNWINDTABROWS_H

#include <gelf.h>
#include <linux/types.h>
#include <stdint.h>

#include "stacks.h"

struct unwindtables_rowstats {
	uint64_t fdes;			/* FDEs turned into rows */
	uint64_t fdes_libdw;		/* of which libdw evaluated (ours could not) */
	uint64_t fdes_debug_frame;	/* of which from .debug_frame */
	uint64_t unsupported;		/* row ranges whose rules the BPF side does not walk
					 * (UNWIND_UNSUPPORTED there: the walk stops) */
};

enum {
	UNWINDTABLES_CFI_OURS,		/* our reader, libdw for what it cannot express */
	UNWINDTABLES_CFI_LIBDW,		/* every FDE through libdw: the reference for tests */
};

/* Where the rows are built, reused from one file to the next (a fresh
 * buffer's every page is a page fault: on a virtual machine those were half
 * the build time). */
struct unwindtables_cie;
struct unwindtables_fde;
struct unwindtables_rowbuf {
	struct unwind_row *rows;	/* the last file's rows[0..nrows) */
	size_t nrows, rows_cap;
	int fixed;			/* rows is the caller's, rows_cap long (the BPF map's
					 * free part: no copy, no page of our own) */
	struct unwindtables_cie *cies;	/* scratch */
	struct unwindtables_fde *fdes;
	size_t cies_cap, fdes_cap;
};

/* The rows of elf into b: sorted by pc, adjacent equal rules merged, a
 * UNWIND_NONE row where an FDE ends before the next begins.  0; 1 (none
 * kept) when there are more than max_rows; -1 when the image has neither
 * .eh_frame nor .debug_frame. */
int unwindtablescfi_read(Elf *elf, int engine, uint32_t max_rows, struct unwindtables_rowbuf *b,
		       struct unwindtables_rowstats *st);
void unwindtablescfi_buf_free(struct unwindtables_rowbuf *b);

#endif
