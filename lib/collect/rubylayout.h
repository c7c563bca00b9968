/* rubylayout.h — how each CRuby lays out what the frame walker reads
 * (bpf/python.bpf.h with PY_F_RUBY, lib/collect/pyframes.c, pycodes.c):
 * its version, read from the interpreter's own exported data (the ints of
 * ruby_api_version and the string ruby_version in libruby's ELF file), and
 * the struct offsets of that version.
 *
 *   const struct rubylayout *t = rubylayout_table(major, minor);  // NULL: none known
 *   rubylayout_to_proc(t, &py_proc);                              // for py_procs
 *   int line = rubylayout_line(succ, nsucc, entries, n, pos);     // see below
 */
#ifndef MARPLE_RUBYLAYOUT_H
#define MARPLE_RUBYLAYOUT_H

#include <stddef.h>
#include <stdint.h>

struct py_proc;

/* Stable in 3.x (include/ruby/internal/core/rstring.h, rarray.h, value_type.h,
 * x86-64, without variable width allocation): a String's embedded bytes or
 * its heap length and pointer, an Array's embedded elements or its heap
 * length and pointer; an object's type in its flags' low 5 bits, an imemo's
 * kind in bits 12-15 (bpf/python.h's RUBY_FLAGS_TYPE, RUBY_T_IMEMO,
 * RUBY_IMEMO_*: the BPF walk reads them too). */
enum {
	RUBY_T_STRING = 5, RUBY_T_ARRAY = 7,
	RUBY_STR_NOEMBED = 1 << 13, RUBY_STR_EMBED_SHIFT = 14, RUBY_STR_EMBED_MASK = 0x1f,
	RUBY_STR_EMBED = 16, RUBY_STR_EMBED_MAX = 24, RUBY_STR_LEN = 16, RUBY_STR_PTR = 24,
	RUBY_ARY_EMBED = 1 << 13, RUBY_ARY_EMBED_SHIFT = 15, RUBY_ARY_EMBED_MASK = 3,
	RUBY_ARY_ELEMS = 16, RUBY_ARY_LEN = 16, RUBY_ARY_PTR = 32,
	/* an ID: its serial number above its scope bits, an operator's its
	 * own (up to tLAST_OP_ID) */
	RUBY_ID_SCOPE_SHIFT = 4, RUBY_LAST_OP_ID = 169,
	/* a class: its superclass (a singleton's: its object's class); a
	 * singleton class flagged; a method defined in Ruby (its definition's
	 * type in the low 4 bits) */
	RUBY_T_CLASS = 2, RUBY_T_MODULE = 3, RUBY_CLASS_SUPER = 16,
	RUBY_FL_SINGLETON = 1 << 12, RUBY_METHOD_TYPE_MASK = 0xf, RUBY_METHOD_TYPE_ISEQ = 0,
	RUBY_METHOD_TYPE_CFUNC = 1,	/* a C method: its function first in the body */
	/* st.h's st_table (a class's instance variables, by ID): its entries
	 * from start to bound, each a hash, a key and a value */
	RUBY_ST_START = 32, RUBY_ST_BOUND = 40, RUBY_ST_ENTRIES = 48, RUBY_ST_ENTRY = 24,
	/* a code's kind (pycode.firstlineno) beside the imemo kinds: a method
	 * entry of a method defined in Ruby, named by its iseq and its class */
	RUBY_CODE_METHOD = 0x10,
};

struct rubylayout {
	unsigned major, minor;
	uint16_t vm_main_thread;	/* rb_vm_t.ractor.main_thread */
	uint16_t thread_ec;		/* rb_thread_t.ec */
	uint16_t thread_id;		/* rb_thread_t.thread_id (its pthread_t) */
	uint16_t ec_thread;		/* rb_execution_context_t.thread_ptr */
	uint16_t ec_vm_stack, ec_vm_stack_size, ec_cfp;	/* rb_execution_context_t's */
	uint16_t cfp_pc, cfp_iseq, cfp_ep, cfp_size;	/* rb_control_frame_t's, its size */
	uint16_t iseq_body;		/* rb_iseq_t.body */
	uint16_t body_iseq_size, body_encoded;	/* rb_iseq_constant_body's */
	uint16_t body_pathobj, body_label;	/* .location's */
	uint16_t body_insns, body_positions, body_insns_size, body_succ;	/* .insns_info's */
	uint16_t insn_entry_size;	/* sizeof(struct iseq_insn_info_entry), line_no first */
	uint16_t me_def, me_owner;	/* rb_callable_method_entry_t's */
	uint16_t def_original_id, def_iseq;	/* rb_method_definition_t.original_id, .body.iseq.iseqptr */
	uint16_t body_local_iseq;	/* rb_iseq_constant_body's: a block's method's iseq */
	uint16_t class_ext, ext_iv_tbl;	/* RClass.ptr, rb_classext_t.iv_tbl */
};

/* The built-in table's layout of major.minor, NULL when there is none (or
 * the test-only environment variable MARPLE_TEST_RUBY_NO_TABLE is set). */
const struct rubylayout *rubylayout_table(unsigned major, unsigned minor);
/* The members of struct py_proc the BPF walk reads (PY_F_RUBY); tls_slot
 * and tls_offset: where its libruby's ruby_current_ec is (its TLS module
 * id's GOT slot from ruby_current_vm_ptr, and its offset in the module's
 * block), tls_slot 0 when not known. */
void rubylayout_to_proc(const struct rubylayout *l, int32_t tls_slot, uint32_t tls_offset, struct py_proc *v);

/* 3.1's succinct index of an iseq's instruction positions (iseq.c's
 * succ_index_table: 54 ranks of 7 bits packed 9 to a word, then blocks of
 * 512 positions, each a 32-bit rank, eight 9-bit ranks of its 64-position
 * parts and their bits): the block (or the immediate part) that holds pos,
 * and the rank of pos in it, i.e. how many entries of the line table begin
 * at or before it.  RUBY_SUCC_IMM bytes first, RUBY_SUCC_BLOCK each block. */
enum { RUBY_SUCC_IMM_POSITIONS = 54, RUBY_SUCC_IMM = 48, RUBY_SUCC_BLOCK = 80, RUBY_SUCC_BLOCK_POSITIONS = 512 };
/* Where in the table the bytes for pos begin, and how many to read */
size_t rubylayout_succ_at(unsigned pos, size_t *len);
/* pos's rank from those bytes (read from rubylayout_succ_at's place) */
unsigned rubylayout_succ_rank(const unsigned char *bytes, size_t len, unsigned pos);

#endif
