/* unwindtablescfi.c — .eh_frame and .debug_frame → unwind rows (see
 * unwindtablescfi.h).
 *
 * Why our own reader: libdw answers "what is the frame state at this
 * address", so building every row through it re-runs the CIE's and the
 * FDE's instructions once a row (python3 and 73 libraries: 331,000 rows in
 * ~90 ms, most of a short capture's cost).  A table builder wants the
 * opposite walk — each FDE's instructions once, a row at each advance — and
 * only three things out of each state: the CFA rule, the return address's
 * and rbp's.  What that walk cannot decide the way libdw would (an unknown
 * opcode, an expression we do not recognise, a rule libdw's ABI defaults
 * decide) goes to libdw, one FDE at a time, and is counted.  The unit test
 * (tests/unit/test_unwindtablescfi.c) holds the two to the same rows. */
#include "unwindtablescfi.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <zlib.h>

#include "elfsyms.h"
#include "util.h"

#define DWREG_RBP 6
#define DWREG_RSP 7
#define DWREG_RA 16
#define STATE_DEPTH 16		/* DW_CFA_remember_state nesting we keep */

struct rowvec {
	struct unwind_row *v;
	size_t n, cap;
	uint64_t unsupported;
	int fixed;			/* v is the caller's, cap rows: n = cap + 1 once full */
};

/* The rows and FDEs grow in whole pages of their own, populated by one
 * madvise as they grow: faulting them in a page at a time was half of a
 * build on a virtual machine (~25 us a page fault). */
static void *grow(void *v, size_t *cap, size_t need, size_t sz)
{
	size_t c = *cap ? *cap : 65536 / sz, old = *cap * sz;
	void *p;

	if (need <= *cap)
		return v;
	while (c < need) {
		if (c > SIZE_MAX / 2 / sz)
			marple_fatal(EXIT_DATA, "out of memory");
		c *= 2;
	}
	p = v ? mremap(v, old, c * sz, MREMAP_MAYMOVE) : mmap(NULL, c * sz, PROT_READ | PROT_WRITE,
							       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		marple_fatal(EXIT_DATA, "out of memory");
	madvise((char *)p + old, c * sz - old, MADV_POPULATE_WRITE);	/* (before 5.14: faulted as used) */
	*cap = c;
	return p;
}

static void grow_free(void *v, size_t cap, size_t sz)
{
	if (v)
		munmap(v, cap * sz);
}

static void push_row(struct rowvec *r, const struct unwind_row *row)
{
	if (r->fixed && r->n > r->cap)
		return;		/* full */
	if (r->n) {
		struct unwind_row *last = &r->v[r->n - 1];
		if (last->cfa == row->cfa && last->cfa_off == row->cfa_off && last->rbp == row->rbp &&
		    last->rbp_off == row->rbp_off)
			return;		/* the same rule goes on */
		if (last->pc == row->pc) {
			*last = *row;
			return;
		}
	}
	if (r->fixed && r->n == r->cap) {
		r->n++;
		return;
	}
	r->v = grow(r->v, &r->cap, r->n + 1, sizeof(*r->v));
	r->v[r->n++] = *row;
}

/* ---- libdw: the reference, and the fallback ---- */

/* The PLT's CFA: rsp + 8, and 8 more once its jump pushed the relocation
 * index (from byte 11 of each 16-byte entry): DW_OP_breg7 8; DW_OP_breg16 0;
 * DW_OP_lit15; DW_OP_and; DW_OP_lit11; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus */
static const uint8_t plt_expr[] = { DW_OP_breg7, 8, DW_OP_breg16, 0, DW_OP_lit15, DW_OP_and,
				    DW_OP_lit11, DW_OP_ge, DW_OP_lit3, DW_OP_shl, DW_OP_plus };
/* The signal trampoline (__restore_rt): CFA = *(rsp + 160), the interrupted
 * registers in the ucontext at rsp (x86-64 Linux): DW_OP_breg7 160; DW_OP_deref */
static const uint8_t sigreturn_expr[] = { DW_OP_breg7, 0xa0, 0x01, DW_OP_deref };

static int is_plt_expression(const Dwarf_Op *ops, size_t n)
{
	static const uint8_t atoms[] = { DW_OP_breg7, DW_OP_breg16, DW_OP_lit15, DW_OP_and, DW_OP_lit11,
					 DW_OP_ge,    DW_OP_lit3,   DW_OP_shl,   DW_OP_plus };
	if (n != sizeof(atoms) || ops[0].number != 8 || ops[1].number != 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (ops[i].atom != atoms[i])
			return 0;
	return 1;
}

/* A register saved at CFA + off: DW_OP_call_frame_cfa [DW_OP_plus_uconst off]. */
static int at_cfa(const Dwarf_Op *ops, size_t n, int64_t *off)
{
	if (n < 1 || n > 2 || ops[0].atom != DW_OP_call_frame_cfa)
		return 0;
	*off = n == 2 && ops[1].atom == DW_OP_plus_uconst ? (int64_t)ops[1].number : 0;
	return n == 1 || ops[1].atom == DW_OP_plus_uconst;
}

static int is_sigreturn(const Dwarf_Op *ops, size_t n, bool signal)
{
	return signal && n == 2 && ops[0].atom == DW_OP_breg7 && ops[0].number == 160 && ops[1].atom == DW_OP_deref;
}

/* One libdw frame state → a row; 0, or -1 when its rules are not ones we walk. */
static int dw_classify(Dwarf_Frame *f, bool signal, struct unwind_row *row)
{
	Dwarf_Op *ops, mem[3];
	size_t n;
	int64_t off;

	if (dwarf_frame_cfa(f, &ops, &n) != 0 || n == 0)
		return -1;
	if (is_sigreturn(ops, n, signal)) {
		row->cfa = UNWIND_SIGNAL;
		return 0;
	}
	if (n == 1 && ops[0].atom == DW_OP_bregx && (ops[0].number == DWREG_RSP || ops[0].number == DWREG_RBP)) {
		row->cfa = ops[0].number == DWREG_RSP ? UNWIND_RSP : UNWIND_RBP;
		if ((int64_t)ops[0].number2 != (int32_t)ops[0].number2)
			return -1;
		row->cfa_off = (int32_t)ops[0].number2;
	} else if (is_plt_expression(ops, n)) {
		row->cfa = UNWIND_PLT;
	} else {
		return -1;
	}
	if (dwarf_frame_register(f, DWREG_RA, mem, &ops, &n) != 0)
		return -1;
	if (n == 0 && ops) {		/* undefined: nothing called this */
		row->cfa = UNWIND_END;
		row->cfa_off = 0;
		return 0;
	}
	if (!at_cfa(ops, n, &off) || off != -8)
		return -1;
	if (dwarf_frame_register(f, DWREG_RBP, mem, &ops, &n) != 0)
		return -1;
	if (n == 0)
		return 0;		/* same value, or undefined: left as it is */
	if (!at_cfa(ops, n, &off) || off != (int16_t)off)
		return -1;
	row->rbp = UNWIND_RBP_SAVED;
	row->rbp_off = (int16_t)off;
	return 0;
}

/* The rows libdw gives for [pc, limit), one address range at a time; the
 * address it got to (limit, or where its FDE ended or failed). */
static uint64_t dw_fde_rows(Dwarf_CFI *cfi, uint64_t pc, uint64_t limit, struct rowvec *r)
{
	while (pc < limit) {
		Dwarf_Frame *f;
		Dwarf_Addr start, end;
		bool signal = false;
		struct unwind_row row = { .pc = (uint32_t)pc };

		if (dwarf_cfi_addrframe(cfi, pc, &f) != 0)
			break;
		dwarf_frame_info(f, &start, &end, &signal);
		if (dw_classify(f, signal, &row) != 0) {
			row = (struct unwind_row){ .pc = (uint32_t)pc, .cfa = UNWIND_UNSUPPORTED };
			r->unsupported++;
		}
		free(f);
		push_row(r, &row);
		if (end <= pc)
			break;
		pc = end;
	}
	return pc;
}

/* ---- reading the sections ---- */

struct cur {
	const uint8_t *p, *end;
	int bad;			/* read past the end */
};

static uint64_t rd_uleb(struct cur *c)
{
	uint64_t v = 0;
	for (unsigned shift = 0; c->p < c->end; shift += 7) {
		uint8_t b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	c->bad = 1;
	return 0;
}

static int64_t rd_sleb(struct cur *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	while (c->p < c->end) {
		uint8_t b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				v |= ~0ull << shift;
			return (int64_t)v;
		}
	}
	c->bad = 1;
	return 0;
}

/* n little-endian bytes (n ≤ 8) */
static uint64_t rd_u(struct cur *c, unsigned n)
{
	uint64_t v = 0;
	if ((size_t)(c->end - c->p) < n) {
		c->bad = 1;
		c->p = c->end;
		return 0;
	}
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	return v;
}

static uint64_t sign_extend(uint64_t v, unsigned bytes)
{
	unsigned bits = 8 * bytes;
	return bits < 64 && (v >> (bits - 1)) & 1 ? v | (~0ull << bits) : v;
}

/* One section of CFI: its bytes and its address (for pc-relative pointers). */
struct cfisec {
	const uint8_t *buf;
	size_t size;
	uint64_t addr;
	int debug;			/* .debug_frame: CIE ids, absolute pointers */
	uint8_t *inflated;		/* buf, when the section was compressed: ours to free */
};

/* A pointer encoded as enc (DW_EH_PE_*): 0, or -1 for an encoding we do
 * not read (text-, data- or function-relative: not in x86-64 FDEs). */
static int rd_encoded(struct cur *c, const struct cfisec *s, uint8_t enc, int range, uint64_t *out)
{
	uint64_t base = 0, v;

	if (enc == DW_EH_PE_omit)
		return -1;
	if (!range) {
		switch (enc & 0x70) {
		case DW_EH_PE_absptr:
			break;
		case DW_EH_PE_pcrel:
			base = s->addr + (uint64_t)(c->p - s->buf);
			break;
		default:
			return -1;
		}
	}
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: v = rd_u(c, 8); break;
	case DW_EH_PE_uleb128: v = rd_uleb(c); break;
	case DW_EH_PE_udata2: v = rd_u(c, 2); break;
	case DW_EH_PE_udata4: v = rd_u(c, 4); break;
	case DW_EH_PE_udata8: v = rd_u(c, 8); break;
	case DW_EH_PE_sleb128: v = (uint64_t)rd_sleb(c); break;
	case DW_EH_PE_sdata2: v = sign_extend(rd_u(c, 2), 2); break;
	case DW_EH_PE_sdata4: v = sign_extend(rd_u(c, 4), 4); break;
	case DW_EH_PE_sdata8: v = rd_u(c, 8); break;
	default: return -1;
	}
	*out = base + v;
	return c->bad ? -1 : 0;
}

struct unwindtables_cie {
	uint64_t off;			/* in its section */
	const uint8_t *ins, *ins_end;	/* initial instructions */
	uint64_t code_align, ra;
	int64_t data_align;
	uint8_t fde_enc, addr_size, ok, signal, has_aug_data;
};

struct unwindtables_fde {
	uint64_t pc, end;
	const uint8_t *ins, *ins_end;
	uint32_t cie;			/* index in cies */
	uint32_t order;			/* in its section, for a stable sort */
	uint8_t debug;
};

/* One entry's header: its length, its CIE id or pointer, where its body
 * starts and the next entry does.  0, 1 at the end, -1 if malformed. */
struct entry {
	uint64_t off, id, id_off;
	const uint8_t *body, *next;
	int is_cie;
};

static int next_entry(const struct cfisec *s, const uint8_t *at, struct entry *e)
{
	struct cur c = { at, s->buf + s->size, 0 };
	uint64_t len;
	int dw64 = 0;

	if (at >= c.end)
		return 1;
	len = rd_u(&c, 4);
	if (len == 0xffffffffu) {
		len = rd_u(&c, 8);
		dw64 = 1;
	}
	if (c.bad || (len == 0 && !s->debug))
		return 1;	/* .eh_frame's terminator */
	if (len > (uint64_t)(c.end - c.p))
		return -1;
	e->off = (uint64_t)(at - s->buf);
	e->next = c.p + len;
	c.end = e->next;
	e->id_off = (uint64_t)(c.p - s->buf);
	e->id = rd_u(&c, dw64 ? 8 : 4);
	if (c.bad)
		return -1;
	e->body = c.p;
	if (s->debug)
		e->is_cie = e->id == (dw64 ? ~0ull : 0xffffffffu);
	else
		e->is_cie = e->id == 0;
	return 0;
}

static void parse_cie(const struct cfisec *s, const struct entry *e, struct unwindtables_cie *ci)
{
	struct cur c = { e->body, e->next, 0 };
	uint8_t version = (uint8_t)rd_u(&c, 1);
	const char *aug = (const char *)c.p;
	size_t auglen = strnlen(aug, (size_t)(c.end - c.p));

	memset(ci, 0, sizeof(*ci));
	ci->off = e->off;
	ci->addr_size = 8;
	ci->fde_enc = DW_EH_PE_absptr;
	if (c.p + auglen >= c.end || (version != 1 && version != 3 && version != 4))
		return;
	c.p += auglen + 1;
	if (auglen && aug[0] != 'z')
		return;		/* an augmentation whose data we cannot skip */
	if (version == 4) {
		ci->addr_size = (uint8_t)rd_u(&c, 1);
		if (rd_u(&c, 1) != 0 || ci->addr_size != 8)
			return;	/* segment selectors, or not 64-bit */
	}
	ci->code_align = rd_uleb(&c);
	ci->data_align = rd_sleb(&c);
	ci->ra = version == 1 ? rd_u(&c, 1) : rd_uleb(&c);
	if (auglen) {
		uint64_t dlen = rd_uleb(&c);
		if (c.bad || dlen > (uint64_t)(c.end - c.p))
			return;
		struct cur a = { c.p, c.p + dlen, 0 };
		c.p += dlen;
		ci->has_aug_data = 1;
		for (size_t i = 1; i < auglen; i++) {
			uint64_t ignored;
			switch (aug[i]) {
			case 'R': ci->fde_enc = (uint8_t)rd_u(&a, 1); break;
			case 'L': rd_u(&a, 1); break;
			case 'S': ci->signal = 1; break;
			case 'P': {
				uint8_t enc = (uint8_t)rd_u(&a, 1);
				if (rd_encoded(&a, s, enc & 0x7f, 0, &ignored) != 0 && enc != DW_EH_PE_omit)
					return;
				break;
			}
			default:
				return;	/* what follows cannot be placed */
			}
		}
		if (a.bad)
			return;
	}
	ci->ins = c.p;
	ci->ins_end = c.end;
	ci->ok = !c.bad && ci->code_align != 0;
}

struct cies {
	struct unwindtables_cie *v;
	size_t n, cap;
};

/* The index of the CIE at off among cs->v[first, cs->n), or SIZE_MAX. */
static size_t find_cie(const struct cies *cs, size_t first, uint64_t off)
{
	size_t lo = first, hi = cs->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cs->v[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < cs->n && cs->v[lo].off == off ? lo : SIZE_MAX;
}

struct fdes {
	struct unwindtables_fde *v;
	size_t n, cap;
	uint64_t skipped;		/* malformed, or with a CIE we cannot read */
};

/* Every CIE, then every FDE of section s. */
static void read_section(const struct cfisec *s, struct cies *cs, struct fdes *fs)
{
	struct entry e;
	size_t first_cie = cs->n;
	const uint8_t *at;

	for (at = s->buf; next_entry(s, at, &e) == 0; at = e.next)
		if (e.is_cie) {
			cs->v = grow(cs->v, &cs->cap, cs->n + 1, sizeof(*cs->v));
			parse_cie(s, &e, &cs->v[cs->n++]);
		}
	for (at = s->buf; next_entry(s, at, &e) == 0; at = e.next) {
		if (e.is_cie)
			continue;
		size_t k = find_cie(cs, first_cie, s->debug ? e.id : e.id_off - e.id);
		const struct unwindtables_cie *ci = k != SIZE_MAX ? &cs->v[k] : NULL;
		struct cur c = { e.body, e.next, 0 };
		struct unwindtables_fde f = { .cie = (uint32_t)k, .debug = (uint8_t)s->debug, .order = (uint32_t)fs->n };
		uint64_t range;
		if (!ci || !ci->ok || rd_encoded(&c, s, s->debug ? DW_EH_PE_absptr : ci->fde_enc, 0, &f.pc) != 0 ||
		    rd_encoded(&c, s, s->debug ? DW_EH_PE_absptr : ci->fde_enc, 1, &range) != 0) {
			fs->skipped++;
			continue;
		}
		if (ci->has_aug_data) {
			uint64_t dlen = rd_uleb(&c);
			if (c.bad || dlen > (uint64_t)(c.end - c.p)) {
				fs->skipped++;
				continue;
			}
			c.p += dlen;
		}
		if (range == 0)
			continue;	/* covers nothing (a discarded function's) */
		f.end = f.pc + range;
		f.ins = c.p;
		f.ins_end = c.end;
		fs->v = grow(fs->v, &fs->cap, fs->n + 1, sizeof(*fs->v));
		fs->v[fs->n++] = f;
	}
}

/* ---- running the instructions ---- */

enum { CFA_REG, CFA_PLT, CFA_SIGRETURN, CFA_EXPR };
enum { RULE_UNSPEC, RULE_UNDEF, RULE_SAME, RULE_OFFSET, RULE_OTHER, RULE_EXPR };
enum { R_RBP, R_RA };

/* What a frame state says of the three things a row keeps. */
struct cfstate {
	uint8_t cfa;			/* CFA_* */
	uint8_t rule[2];		/* RULE_* of rbp and the return address */
	uint64_t cfa_reg;
	int64_t cfa_off, off[2];
};

enum { ROW_OK, ROW_UNSUPPORTED, ROW_ASK_LIBDW };

/* A state → a row, the way dw_classify would make it from libdw's view of
 * the same state; ROW_ASK_LIBDW where that depends on what we do not model
 * (libdw's ABI defaults for an unspecified return address, expressions). */
static int classify(const struct cfstate *s, bool signal, struct unwind_row *row)
{
	if (s->cfa == CFA_SIGRETURN && signal) {
		row->cfa = UNWIND_SIGNAL;
		return ROW_OK;
	}
	if (s->cfa == CFA_EXPR)
		return ROW_ASK_LIBDW;
	if (s->cfa == CFA_SIGRETURN)
		return ROW_UNSUPPORTED;
	if (s->cfa == CFA_PLT) {
		row->cfa = UNWIND_PLT;
	} else {
		if ((s->cfa_reg != DWREG_RSP && s->cfa_reg != DWREG_RBP) || s->cfa_off != (int32_t)s->cfa_off)
			return ROW_UNSUPPORTED;
		row->cfa = s->cfa_reg == DWREG_RSP ? UNWIND_RSP : UNWIND_RBP;
		row->cfa_off = (int32_t)s->cfa_off;
	}
	switch (s->rule[R_RA]) {
	case RULE_UNDEF:
		row->cfa = UNWIND_END;
		row->cfa_off = 0;
		return ROW_OK;
	case RULE_OFFSET:
		if (s->off[R_RA] != -8)
			return ROW_UNSUPPORTED;
		break;
	case RULE_SAME:
	case RULE_OTHER:
		return ROW_UNSUPPORTED;
	default:
		return ROW_ASK_LIBDW;
	}
	switch (s->rule[R_RBP]) {
	case RULE_UNSPEC:	/* x86-64's default for rbp, a callee-saved register: same value */
	case RULE_UNDEF:
	case RULE_SAME:
		return ROW_OK;
	case RULE_OFFSET:
		if (s->off[R_RBP] != (int16_t)s->off[R_RBP])
			return ROW_UNSUPPORTED;
		row->rbp = UNWIND_RBP_SAVED;
		row->rbp_off = (int16_t)s->off[R_RBP];
		return ROW_OK;
	case RULE_OTHER:
		return ROW_UNSUPPORTED;
	default:
		return ROW_ASK_LIBDW;
	}
}

/* One FDE (or CIE: r NULL) being run. */
struct run {
	const struct unwindtables_cie *cie;
	const struct cfisec *sec;
	struct cfstate s, init, stack[STATE_DEPTH];
	int depth;
	uint64_t loc, limit;
	struct rowvec *r;
};

static int emit(struct run *x)
{
	struct unwind_row row = { .pc = (uint32_t)x->loc };
	int rc = classify(&x->s, x->cie->signal, &row);

	if (rc == ROW_ASK_LIBDW)
		return -1;
	if (rc == ROW_UNSUPPORTED) {
		row = (struct unwind_row){ .pc = (uint32_t)x->loc, .cfa = UNWIND_UNSUPPORTED };
		x->r->unsupported++;
	}
	push_row(x->r, &row);
	return 0;
}

/* The state holds from loc up to to: its row, then on. */
static int advance(struct run *x, uint64_t to)
{
	if (!x->r)
		return to == x->loc ? 0 : -1;	/* a CIE has no addresses */
	if (to < x->loc)
		return -1;
	if (to > x->loc && x->loc < x->limit) {
		if (emit(x) != 0)
			return -1;
		x->loc = to;
	}
	return 0;
}

static void set_rule(struct run *x, uint64_t reg, uint8_t rule, int64_t off)
{
	int k = reg == DWREG_RBP ? R_RBP : reg == x->cie->ra ? R_RA : -1;
	if (k >= 0) {
		x->s.rule[k] = rule;
		x->s.off[k] = off;
	}
}

static void restore_rule(struct run *x, uint64_t reg)
{
	int k = reg == DWREG_RBP ? R_RBP : reg == x->cie->ra ? R_RA : -1;
	if (k >= 0) {
		x->s.rule[k] = x->init.rule[k];
		x->s.off[k] = x->init.off[k];
	}
}

/* A DW_CFA_def_cfa_expression's block: one of the two we walk, or another. */
static void cfa_expression(struct run *x, const uint8_t *p, uint64_t len)
{
	x->s.cfa = len == sizeof(plt_expr) && memcmp(p, plt_expr, len) == 0		  ? CFA_PLT
		   : len == sizeof(sigreturn_expr) && memcmp(p, sigreturn_expr, len) == 0 ? CFA_SIGRETURN
											  : CFA_EXPR;
}

/* One extended (high bits 0) instruction; 0, or -1 for libdw. */
static int run_extended(struct run *x, struct cur *c, uint8_t op)
{
	const struct unwindtables_cie *ci = x->cie;
	uint64_t reg, v;

	switch (op) {
	case DW_CFA_nop:
		return 0;
	case DW_CFA_set_loc:
		return rd_encoded(c, x->sec, x->sec->debug ? DW_EH_PE_absptr : ci->fde_enc, 0, &v) ? -1 : advance(x, v);
	case DW_CFA_advance_loc1: return advance(x, x->loc + rd_u(c, 1) * ci->code_align);
	case DW_CFA_advance_loc2: return advance(x, x->loc + rd_u(c, 2) * ci->code_align);
	case DW_CFA_advance_loc4: return advance(x, x->loc + rd_u(c, 4) * ci->code_align);
	case DW_CFA_offset_extended:
		reg = rd_uleb(c);
		set_rule(x, reg, RULE_OFFSET, (int64_t)rd_uleb(c) * ci->data_align);
		return 0;
	case DW_CFA_offset_extended_sf:
		reg = rd_uleb(c);
		set_rule(x, reg, RULE_OFFSET, rd_sleb(c) * ci->data_align);
		return 0;
	case DW_CFA_GNU_negative_offset_extended:
		reg = rd_uleb(c);
		set_rule(x, reg, RULE_OFFSET, -(int64_t)rd_uleb(c) * ci->data_align);
		return 0;
	case DW_CFA_restore_extended: restore_rule(x, rd_uleb(c)); return 0;
	case DW_CFA_undefined: set_rule(x, rd_uleb(c), RULE_UNDEF, 0); return 0;
	case DW_CFA_same_value: set_rule(x, rd_uleb(c), RULE_SAME, 0); return 0;
	case DW_CFA_register:
		reg = rd_uleb(c);
		rd_uleb(c);
		set_rule(x, reg, RULE_OTHER, 0);
		return 0;
	case DW_CFA_val_offset:
	case DW_CFA_val_offset_sf:
		reg = rd_uleb(c);
		op == DW_CFA_val_offset ? (void)rd_uleb(c) : (void)rd_sleb(c);
		set_rule(x, reg, RULE_OTHER, 0);
		return 0;
	case DW_CFA_remember_state:
		if (x->depth == STATE_DEPTH)
			return -1;
		x->stack[x->depth++] = x->s;
		return 0;
	case DW_CFA_restore_state:
		if (x->depth == 0)
			return -1;
		x->s = x->stack[--x->depth];
		return 0;
	case DW_CFA_def_cfa:
		x->s.cfa = CFA_REG;
		x->s.cfa_reg = rd_uleb(c);
		x->s.cfa_off = (int64_t)rd_uleb(c);
		return 0;
	case DW_CFA_def_cfa_sf:
		x->s.cfa = CFA_REG;
		x->s.cfa_reg = rd_uleb(c);
		x->s.cfa_off = rd_sleb(c) * ci->data_align;
		return 0;
	case DW_CFA_def_cfa_register:
		if (x->s.cfa != CFA_REG)
			return -1;
		x->s.cfa_reg = rd_uleb(c);
		return 0;
	case DW_CFA_def_cfa_offset:
		if (x->s.cfa != CFA_REG)
			return -1;
		x->s.cfa_off = (int64_t)rd_uleb(c);
		return 0;
	case DW_CFA_def_cfa_offset_sf:
		if (x->s.cfa != CFA_REG)
			return -1;
		x->s.cfa_off = rd_sleb(c) * ci->data_align;
		return 0;
	case DW_CFA_def_cfa_expression:
		v = rd_uleb(c);
		if (c->bad || v > (uint64_t)(c->end - c->p))
			return -1;
		cfa_expression(x, c->p, v);
		c->p += v;
		return 0;
	case DW_CFA_expression:
	case DW_CFA_val_expression:
		reg = rd_uleb(c);
		v = rd_uleb(c);
		if (c->bad || v > (uint64_t)(c->end - c->p))
			return -1;
		c->p += v;
		set_rule(x, reg, RULE_EXPR, 0);
		return 0;
	case DW_CFA_GNU_args_size:
		rd_uleb(c);
		return 0;
	default:
		return -1;	/* DW_CFA_GNU_window_save, vendor opcodes: libdw's */
	}
}

/* Run instructions [p, end); 0, or -1 when libdw must do it. */
static int run_ins(struct run *x, const uint8_t *p, const uint8_t *end)
{
	struct cur c = { p, end, 0 };

	while (c.p < c.end && !c.bad && (!x->r || x->loc < x->limit)) {
		uint8_t op = *c.p++;
		int rc = 0;
		switch (op & 0xc0) {
		case DW_CFA_advance_loc:
			rc = advance(x, x->loc + (op & 0x3f) * x->cie->code_align);
			break;
		case DW_CFA_offset:
			set_rule(x, op & 0x3f, RULE_OFFSET, (int64_t)rd_uleb(&c) * x->cie->data_align);
			break;
		case DW_CFA_restore:
			restore_rule(x, op & 0x3f);
			break;
		default:
			rc = run_extended(x, &c, op);
		}
		if (rc != 0)
			return -1;
	}
	return c.bad ? -1 : 0;
}

/* The rows of one FDE over [f->pc, limit) by our reader; 0, or -1 (rows
 * pushed meanwhile taken back) when libdw must do it. */
static int our_fde_rows(const struct unwindtables_fde *f, const struct unwindtables_cie *cie, const struct cfisec *sec,
			uint64_t limit, struct rowvec *r)
{
	struct run x = { .cie = cie, .sec = sec };
	size_t n0 = r->n;
	uint64_t unsupported0 = r->unsupported;
	struct unwind_row last0 = n0 ? r->v[n0 - 1] : (struct unwind_row){ 0 };

	x.s.cfa = CFA_REG;
	x.s.cfa_reg = ~0ull;	/* no rule yet */
	if (run_ins(&x, cie->ins, cie->ins_end) != 0)
		goto libdw;
	x.init = x.s;
	x.depth = 0;
	x.r = r;
	x.loc = f->pc;
	x.limit = limit;
	if (run_ins(&x, f->ins, f->ins_end) != 0 || (x.loc < limit && emit(&x) != 0))
		goto libdw;
	return 0;
libdw:
	r->n = n0;
	r->unsupported = unsupported0;
	if (n0)
		r->v[n0 - 1] = last0;
	return -1;
}

/* ---- the whole image ---- */

/* A debug file's compressed section (zlib) inflated into memory of our own.
 * elf_compress would inflate it in place: write its section header into
 * the file's one read-only mapping, shared by every analyzer (a SIGSEGV,
 * seen on a system-wide capture; and another thread's handle on the same
 * image would read the compressed bytes at the inflated size). */
#define CFI_INFLATED_MAX (256u << 20)
static int inflate_section(Elf *elf, Elf_Scn *scn, struct cfisec *s)
{
	GElf_Chdr ch;
	Elf_Data *raw = elf_rawdata(scn, NULL);
	size_t hdr = gelf_getclass(elf) == ELFCLASS64 ? sizeof(Elf64_Chdr) : sizeof(Elf32_Chdr);

	if (!raw || !raw->d_buf || raw->d_size <= hdr || !gelf_getchdr(scn, &ch) || ch.ch_type != ELFCOMPRESS_ZLIB ||
	    !ch.ch_size || ch.ch_size > CFI_INFLATED_MAX)
		return -1;
	uLongf n = (uLongf)ch.ch_size;
	uint8_t *buf = malloc(n);
	if (!buf)
		return -1;
	if (uncompress(buf, &n, (const Bytef *)raw->d_buf + hdr, (uLong)(raw->d_size - hdr)) != Z_OK ||
	    n != ch.ch_size) {
		free(buf);
		return -1;
	}
	s->buf = s->inflated = buf;
	s->size = n;
	return 0;
}

/* Section name's bytes (inflated if compressed) into *s: 0, or -1 when
 * there is none with bytes in the file. */
static int find_section(Elf *elf, const char *name, struct cfisec *s)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elfsyms_section(elf, name, &sh);

	if (!scn || sh.sh_type == SHT_NOBITS)
		return -1;
	*s = (struct cfisec){ .addr = sh.sh_addr, .debug = strcmp(name, ".debug_frame") == 0 };
	if (sh.sh_flags & SHF_COMPRESSED)
		return inflate_section(elf, scn, s);
	Elf_Data *d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || !d->d_size)
		return -1;
	s->buf = d->d_buf;
	s->size = d->d_size;
	return 0;
}

/* Has the image a compressed section?  Then libdw, which inflates them in
 * place as it opens the DWARF, is not let near it (find_section says why). */
static int has_compressed_section(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED))
			return 1;
	return 0;
}

static int fde_cmp(const void *a, const void *b)
{
	const struct unwindtables_fde *x = a, *y = b;
	if (x->pc != y->pc)
		return x->pc < y->pc ? -1 : 1;
	if (x->debug != y->debug)
		return x->debug - y->debug;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* .debug_frame's FDEs where .eh_frame has none (fs sorted up to neh). */
static void drop_covered(struct fdes *fs, size_t neh)
{
	size_t out = neh;
	for (size_t i = neh; i < fs->n; i++) {
		const struct unwindtables_fde *d = &fs->v[i];
		size_t lo = 0, hi = neh;	/* the first eh FDE ending after d's start */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (fs->v[mid].end <= d->pc)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < neh && fs->v[lo].pc < d->end)
			continue;	/* .eh_frame says it (the same, from the same compiler) */
		fs->v[out++] = *d;
	}
	fs->n = out;
}

/* libdw's CFI for one section, opened the first time it is needed. */
struct dwcfi {
	Elf *elf;
	Dwarf_CFI *eh;
	Dwarf *dw;
	int eh_tried, dw_tried;
	int compressed;			/* has_compressed_section: no libdw */
};

static Dwarf_CFI *dwcfi_get(struct dwcfi *d, int debug)
{
	if (!debug) {
		if (!d->eh_tried)
			d->eh = dwarf_getcfi_elf(d->elf);
		d->eh_tried = 1;
		return d->eh;
	}
	if (!d->dw_tried && !d->compressed)
		d->dw = dwarf_begin_elf(d->elf, DWARF_C_READ, NULL);
	d->dw_tried = 1;
	return d->dw ? dwarf_getcfi(d->dw) : NULL;
}

static void dwcfi_end(struct dwcfi *d)
{
	if (d->eh)
		dwarf_cfi_end(d->eh);
	if (d->dw)
		dwarf_end(d->dw);
}

static int fdes_sorted(const struct fdes *fs)
{
	for (size_t i = 1; i < fs->n; i++)
		if (fde_cmp(&fs->v[i - 1], &fs->v[i]) > 0)
			return 0;
	return 1;
}

int unwindtablescfi_read(Elf *elf, int engine, uint32_t max_rows, struct unwindtables_rowbuf *b,
		       struct unwindtables_rowstats *st)
{
	struct cfisec eh = { 0 }, dbg = { 0 };
	struct cies cs = { b->cies, 0, b->cies_cap };
	struct fdes fs = { b->fdes, 0, b->fdes_cap, 0 };
	struct rowvec r = { b->rows, 0, b->rows_cap, 0, b->fixed };
	struct dwcfi dw = { .elf = elf };
	int have_eh = find_section(elf, ".eh_frame", &eh) == 0;
	int have_dbg = find_section(elf, ".debug_frame", &dbg) == 0;
	int rc = -1;

	memset(st, 0, sizeof(*st));
	b->nrows = 0;
	if (b->fixed && max_rows > b->rows_cap)
		max_rows = (uint32_t)b->rows_cap;
	if (!have_eh && !have_dbg)
		return -1;
	dw.compressed = have_dbg && has_compressed_section(elf);
	if (have_eh)
		read_section(&eh, &cs, &fs);
	if (!fdes_sorted(&fs))	/* a linker writes them in address order, mostly */
		qsort(fs.v, fs.n, sizeof(*fs.v), fde_cmp);
	size_t neh = fs.n;
	if (have_dbg) {
		read_section(&dbg, &cs, &fs);
		drop_covered(&fs, neh);
		qsort(fs.v, fs.n, sizeof(*fs.v), fde_cmp);
	}
	for (size_t i = 0; i < fs.n && r.n <= max_rows; i++) {
		const struct unwindtables_fde *f = &fs.v[i];
		uint64_t next = i + 1 < fs.n ? fs.v[i + 1].pc : UINT64_MAX;
		uint64_t limit = f->end < next ? f->end : next, got = limit;
		if (f->pc >= limit)
			continue;	/* a second FDE for the same address */
		st->fdes++;
		st->fdes_debug_frame += f->debug;
		if (engine != UNWINDTABLES_CFI_OURS || our_fde_rows(f, &cs.v[f->cie], f->debug ? &dbg : &eh, limit, &r) != 0) {
			Dwarf_CFI *cfi = dwcfi_get(&dw, f->debug);
			st->fdes_libdw += engine == UNWINDTABLES_CFI_OURS;
			got = cfi ? dw_fde_rows(cfi, f->pc, limit, &r) : f->pc;
		}
		if (got < next)		/* no CFI from here to the next FDE: frame pointers */
			push_row(&r, &(struct unwind_row){ .pc = (uint32_t)got, .cfa = UNWIND_NONE });
	}
	dwcfi_end(&dw);
	free(eh.inflated);
	free(dbg.inflated);
	st->unsupported = r.unsupported;
	if (r.n <= max_rows) {
		b->nrows = r.n;
		rc = 0;
	} else {
		rc = 1;
	}
	if (!b->fixed) {
		b->rows = r.v;
		b->rows_cap = r.cap;
	}
	b->cies = cs.v;
	b->cies_cap = cs.cap;
	b->fdes = fs.v;
	b->fdes_cap = fs.cap;
	return rc;
}

void unwindtablescfi_buf_free(struct unwindtables_rowbuf *b)
{
	if (!b->fixed)
		grow_free(b->rows, b->rows_cap, sizeof(*b->rows));
	grow_free(b->cies, b->cies_cap, sizeof(*b->cies));
	grow_free(b->fdes, b->fdes_cap, sizeof(*b->fdes));
	memset(b, 0, sizeof(*b));
}
