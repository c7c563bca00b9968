/* rubylayout.c — CRuby's struct offsets by version (see rubylayout.h). */
#include "rubylayout.h"

#include <stdlib.h>
#include <string.h>

#include <linux/types.h>
#include "python.h"

/* From ruby3.1-dev's rb_mjit_min_header-3.1.2.h (offsetof, x86-64): the
 * internal headers as the interpreter was built with them */
static const struct rubylayout tables[] = {
	{ .major = 3, .minor = 1, .vm_main_thread = 40, .thread_ec = 40, .thread_id = 80, .ec_thread = 48, .ec_vm_stack = 0, .ec_vm_stack_size = 8,
	  .ec_cfp = 16, .cfp_pc = 0, .cfp_iseq = 16, .cfp_ep = 32, .cfp_size = 64, .iseq_body = 16, .body_iseq_size = 4,
	  .body_encoded = 8, .body_pathobj = 64, .body_label = 80, .body_insns = 120, .body_positions = 128,
	  .body_insns_size = 136, .body_succ = 144, .insn_entry_size = 12, .me_def = 16, .me_owner = 32,
	  .def_original_id = 32, .def_iseq = 8, .body_local_iseq = 176, .class_ext = 24, .ext_iv_tbl = 8 },
};

const struct rubylayout *rubylayout_table(unsigned major, unsigned minor)
{
	const char *no_table = getenv("MARPLE_TEST_RUBY_NO_TABLE");

	if (no_table && *no_table)
		return NULL;
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		if (tables[i].major == major && tables[i].minor == minor)
			return &tables[i];
	return NULL;
}

void rubylayout_to_proc(const struct rubylayout *l, int32_t tls_slot, uint32_t tls_offset, struct py_proc *v)
{
	v->flags = PY_F_RUBY;
	v->tstate_frame = l->vm_main_thread;
	v->tstate_tid = l->thread_ec;
	v->interp_head = l->ec_vm_stack;
	v->interp_threads = l->ec_vm_stack_size;
	v->cframe_current = l->ec_cfp;
	v->frame_instr = l->cfp_pc;
	v->frame_code = l->cfp_iseq;
	v->frame_entry = l->cfp_ep;
	v->frame_previous = l->cfp_size;
	v->code_adaptive = l->iseq_body;
	v->tstate_next = l->body_encoded;
	/* what identifies an iseq (its body, its wrapper) and a method
	 * entry (its definition, its defined class) alike */
	v->code_qualname = 16;
	v->code_linetable = 8;
	v->ruby_tls_slot = tls_slot;
	v->ruby_tls_offset = tls_offset;
	v->ruby_ec_thread = l->ec_thread;
	v->ruby_thread_id = l->thread_id;
	v->ruby_iseq_size = l->body_iseq_size;
}

size_t rubylayout_succ_at(unsigned pos, size_t *len)
{
	if (pos < RUBY_SUCC_IMM_POSITIONS) {
		*len = RUBY_SUCC_IMM;
		return 0;
	}
	*len = RUBY_SUCC_BLOCK;
	return RUBY_SUCC_IMM + (size_t)(pos - RUBY_SUCC_IMM_POSITIONS) / RUBY_SUCC_BLOCK_POSITIONS * RUBY_SUCC_BLOCK;
}

unsigned rubylayout_succ_rank(const unsigned char *b, size_t len, unsigned pos)
{
	uint64_t w;
	if (pos < RUBY_SUCC_IMM_POSITIONS) {
		if (len < RUBY_SUCC_IMM)
			return 0;
		memcpy(&w, b + pos / 9 * 8, 8);
		return (unsigned)(w >> (pos % 9 * 7)) & 0x7f;
	}
	if (len < RUBY_SUCC_BLOCK)
		return 0;
	unsigned off = (pos - RUBY_SUCC_IMM_POSITIONS) % RUBY_SUCC_BLOCK_POSITIONS, part = off / 64, bit = off % 64;
	uint32_t rank;
	uint64_t small, bits;
	memcpy(&rank, b, 4);
	memcpy(&small, b + 8, 8);
	memcpy(&bits, b + 16 + part * 8, 8);
	unsigned in_small = part ? (unsigned)(small >> ((part - 1) * 9)) & 0x1ff : 0;
	return rank + in_small + (unsigned)__builtin_popcountll(bits << (63 - bit));
}
