/* pylayout.c — CPython versions and their layouts (see pylayout.h). */
#include "pylayout.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>
#include "python.h"

const char *const pylayout_symbol_names[PYSYM_COUNT] = {
	[PYSYM_EVAL_DEFAULT] = "_PyEval_EvalFrameDefault", [PYSYM_RUNTIME] = "_PyRuntime",
	[PYSYM_POSONLY] = "PyCode_NewWithPosOnlyArgs",	   [PYSYM_FRAME_GETCODE] = "PyFrame_GetCode",
	[PYSYM_PY_IS] = "Py_Is",			   [PYSYM_EVAL_EX] = "PyEval_EvalFrameEx",
};

int pylayout_minor_of(unsigned mask)
{
	static const struct { int sym, minor; } ladder[] = {
		{ PYSYM_PY_IS, 10 }, { PYSYM_FRAME_GETCODE, 9 }, { PYSYM_POSONLY, 8 }, { PYSYM_RUNTIME, 7 },
		{ PYSYM_EVAL_DEFAULT, 6 },
	};
	for (size_t i = 0; i < sizeof(ladder) / sizeof(ladder[0]); i++)
		if (mask & 1u << ladder[i].sym)
			return ladder[i].minor;
	return mask & 1u << PYSYM_EVAL_EX ? 0 : -1;
}

/* The layouts of x86-64 CPythons (no Py_DEBUG), offsetof() under
 * Py_BUILD_CORE with each version's own headers (pyenv's 3.6.15 ... 3.13.0;
 * Debian's 3.11.2 agrees with 3.11.7); scripts/pyoffsets.c prints them.
 * 3.6 has no _PyRuntime: its "runtime" is _PyThreadState_Current, the GIL
 * holder.  Before 3.11 a code object has no co_qualname: co_name stands in. */
enum {
	OLD = PY_F_PTHREAD_ID | PY_F_FRAME_OBJECTS,	/* 3.6-3.10 */
	FOUND = PY_F_TSS | PY_F_GIL | PY_F_THREAD_LIST,	/* 3.7-3.11 */
};
static const struct pylayout tables[] = {
	{ 3, 6, PY_F_GIL | OLD, 0, 0, 0, 8, 8, 24, 152, 0, 32, 24, 120, 0, 0, 96, 104, 112, 36, 48, 72,
	  PYLAYOUT_LNOTAB },
	{ 3, 7, FOUND | OLD, 1504, 1480, 24, 8, 8, 24, 176, 0, 32, 24, 104, 0, 0, 96, 104, 112, 36, 48, 72,
	  PYLAYOUT_LNOTAB },
	{ 3, 8, FOUND | OLD, 1392, 1368, 32, 8, 8, 24, 176, 0, 32, 24, 104, 0, 0, 104, 112, 120, 40, 48, 72,
	  PYLAYOUT_LNOTAB },
	{ 3, 9, FOUND | OLD, 584, 568, 32, 8, 8, 24, 176, 0, 32, 24, 104, 0, 0, 104, 112, 120, 40, 48, 72,
	  PYLAYOUT_LNOTAB },
	{ 3, 10, FOUND | OLD, 584, 568, 32, 8, 8, 24, 176, 0, 32, 24, 96, 0, 0, 104, 112, 120, 40, 48, 72,
	  PYLAYOUT_LINETABLE_310 },
	{ 3, 11, FOUND | PY_F_CFRAME, 592, 576, 40, 16, 8, 56, 160, 8, 32, 48, 56, 68, 184, 112, 128, 136, 72, 48,
	  72, PYLAYOUT_LOCATIONS },
	{ 3, 12, PY_F_TSS | PY_F_THREAD_LIST | PY_F_CFRAME | PY_F_OWNER, 1544, 0, 40, 72, 8, 56, 144, 0, 0, 8, 56,
	  70, 192, 112, 128, 136, 68, 40, 56, PYLAYOUT_LOCATIONS },
	{ 3, 13, PY_F_TSS | PY_F_THREAD_LIST | PY_F_OWNER, 2160, 0, 632, 7344, 8, 72, 160, 0, 0, 8, 56, 70, 200, 112,
	  128, 136, 68, 40, 56, PYLAYOUT_LOCATIONS },
};

const struct pylayout *pylayout_table(unsigned major, unsigned minor)
{
	const char *no_table = getenv("MARPLE_TEST_PYTHON_NO_TABLE");

	if (major == 3 && minor >= 13 && no_table && *no_table)
		return NULL;
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		if (tables[i].major == major && tables[i].minor == minor)
			return &tables[i];
	return NULL;
}

/* _Py_DebugOffsets, 3.13's form: 8-byte words, by index (cookie, version,
 * free_threaded, then each section's size and offsets). */
enum {
	DO_VERSION = 1, DO_FREE_THREADED = 2, DO_RUNTIME_SIZE = 3, DO_INTERP_HEAD = 5, DO_INTERP_SIZE = 6,
	DO_THREADS_HEAD = 9, DO_TSTATE_SIZE = 19, DO_TSTATE_NEXT = 21, DO_TSTATE_FRAME = 23, DO_NATIVE_TID = 25,
	DO_FRAME_SIZE = 28, DO_FRAME_PREVIOUS = 29, DO_FRAME_EXECUTABLE = 30, DO_FRAME_INSTR = 31,
	DO_FRAME_OWNER = 33, DO_CODE_SIZE = 34, DO_CODE_FILENAME = 35, DO_CODE_QUALNAME = 37,
	DO_CODE_LINETABLE = 38, DO_CODE_FIRSTLINENO = 39, DO_CODE_ADAPTIVE = 43, DO_STR_ASCII_SIZE = 70,
	DO_WORDS = 73
};

static uint64_t word(const unsigned char *buf, int i)
{
	uint64_t v;
	memcpy(&v, buf + 8 * i, 8);
	return v;
}

/* Each offset read lies inside its section's size and fits its field (16
 * bits; the interpreters' head in _PyRuntime 32): a form other than 3.13's
 * fails this, most likely */
static int sections_consistent(const unsigned char *buf)
{
	static const int member_of[][2] = {
		{ DO_INTERP_HEAD, DO_RUNTIME_SIZE },	{ DO_THREADS_HEAD, DO_INTERP_SIZE },
		{ DO_TSTATE_NEXT, DO_TSTATE_SIZE },	{ DO_TSTATE_FRAME, DO_TSTATE_SIZE },
		{ DO_NATIVE_TID, DO_TSTATE_SIZE },	{ DO_FRAME_PREVIOUS, DO_FRAME_SIZE },
		{ DO_FRAME_EXECUTABLE, DO_FRAME_SIZE }, { DO_FRAME_INSTR, DO_FRAME_SIZE },
		{ DO_FRAME_OWNER, DO_FRAME_SIZE },	{ DO_CODE_FILENAME, DO_CODE_SIZE },
		{ DO_CODE_QUALNAME, DO_CODE_SIZE },	{ DO_CODE_LINETABLE, DO_CODE_SIZE },
		{ DO_CODE_FIRSTLINENO, DO_CODE_SIZE },	{ DO_CODE_ADAPTIVE, DO_CODE_SIZE },
	};
	for (size_t i = 0; i < sizeof(member_of) / sizeof(member_of[0]); i++) {
		uint64_t off = word(buf, member_of[i][0]), size = word(buf, member_of[i][1]);
		uint64_t max = member_of[i][0] == DO_INTERP_HEAD ? 0xffffffffu : 0xffff;
		/* co_code_adaptive is the object's tail: at its size */
		if (off > size || (off == size && member_of[i][0] != DO_CODE_ADAPTIVE) || off > max)
			return 0;
	}
	return word(buf, DO_STR_ASCII_SIZE) > 0 && word(buf, DO_STR_ASCII_SIZE) < 64;
}

int pylayout_from_debug_offsets(const unsigned char *buf, size_t len, struct pylayout *out, uint64_t *version,
				const char **why)
{
	*version = 0;
	if (len < DO_WORDS * 8 || memcmp(buf, "xdebugpy", 8) != 0) {
		*why = "no _Py_DebugOffsets at the start of _PyRuntime";
		return -1;
	}
	*version = word(buf, DO_VERSION);
	unsigned major = (unsigned)(*version >> 24) & 0xff, minor = (unsigned)(*version >> 16) & 0xff;
	if (word(buf, DO_FREE_THREADED)) {
		*why = "a free-threaded build (its frames are not walked yet)";
		return -2;
	}
	if (major != 3 || minor < 13 || !sections_consistent(buf)) {
		*why = "its _Py_DebugOffsets are in a form marple does not read";
		return -1;
	}
	uint64_t ascii = word(buf, DO_STR_ASCII_SIZE);
	*out = (struct pylayout){
		.major = major, .minor = minor, .flags = PY_F_THREAD_LIST | PY_F_OWNER,
		.interp_head = (uint32_t)word(buf, DO_INTERP_HEAD),
		.interp_threads = (uint16_t)word(buf, DO_THREADS_HEAD),
		.tstate_next = (uint16_t)word(buf, DO_TSTATE_NEXT), .tstate_frame = (uint16_t)word(buf, DO_TSTATE_FRAME),
		.tstate_tid = (uint16_t)word(buf, DO_NATIVE_TID), .frame_code = (uint16_t)word(buf, DO_FRAME_EXECUTABLE),
		.frame_previous = (uint16_t)word(buf, DO_FRAME_PREVIOUS),
		.frame_instr = (uint16_t)word(buf, DO_FRAME_INSTR), .frame_entry = (uint16_t)word(buf, DO_FRAME_OWNER),
		.code_adaptive = (uint16_t)word(buf, DO_CODE_ADAPTIVE),
		.code_filename = (uint16_t)word(buf, DO_CODE_FILENAME),
		.code_qualname = (uint16_t)word(buf, DO_CODE_QUALNAME),
		.code_linetable = (uint16_t)word(buf, DO_CODE_LINETABLE),
		.code_firstlineno = (uint16_t)word(buf, DO_CODE_FIRSTLINENO), .str_ascii_data = (uint16_t)ascii,
		/* PyCompactUnicodeObject: the ASCII head, utf8_length, utf8 */
		.str_compact_data = (uint16_t)(ascii + 16), .lines = PYLAYOUT_LOCATIONS,
	};
	return 0;
}

int pylayout_differ(const struct pylayout *a, const struct pylayout *b, char *what, size_t len)
{
#define SAME(m)                                                                                              \
	if (a->m != b->m) {                                                                                  \
		snprintf(what, len, #m " %u against %u", (unsigned)a->m, (unsigned)b->m);                    \
		return 1;                                                                                    \
	}
	SAME(interp_threads) SAME(tstate_next) SAME(tstate_frame) SAME(tstate_tid) SAME(frame_code)
	SAME(frame_previous) SAME(frame_instr) SAME(frame_entry) SAME(code_adaptive) SAME(code_filename)
	SAME(code_qualname) SAME(code_linetable) SAME(code_firstlineno) SAME(str_ascii_data)
	SAME(str_compact_data)
#undef SAME
	/* the interpreters' head is in _PyRuntime: 3.13's table finds threads by
	 * the TSS key first, the list second */
	if ((a->flags & PY_F_THREAD_LIST) && (b->flags & PY_F_THREAD_LIST) && a->interp_head != b->interp_head) {
		snprintf(what, len, "interp_head %u against %u", a->interp_head, b->interp_head);
		return 1;
	}
	return 0;
}

void pylayout_to_proc(const struct pylayout *l, struct py_proc *v)
{
	v->flags = l->flags;
	v->tss_key = l->tss_key;
	v->tstate_current = l->tstate_current;
	v->interp_head = l->interp_head;
	v->interp_threads = l->interp_threads;
	v->tstate_next = l->tstate_next;
	v->tstate_frame = l->tstate_frame;
	v->tstate_tid = l->tstate_tid;
	v->cframe_current = l->cframe_current;
	v->frame_code = l->frame_code;
	v->frame_previous = l->frame_previous;
	v->frame_instr = l->frame_instr;
	v->frame_entry = l->frame_entry;
	v->code_adaptive = l->code_adaptive;
	v->code_qualname = l->code_qualname;
	v->code_linetable = l->code_linetable;
}

/* A line counted in 64 bits from a hostile table and co_firstlineno, as an
 * int: 0 when it is none a source file could have. */
static int line_or_zero(long long line)
{
	return line > 0 && line <= INT_MAX ? (int)line : 0;
}

/* 3.6-3.9's co_lnotab: (byte offset increment, signed line increment)
 * pairs; the line of the last pair starting at or before the byte offset */
static int lnotab_line(const unsigned char *t, size_t len, int whole, long long line, unsigned offset)
{
	unsigned addr = 0;
	for (size_t i = 0; i + 1 < len; i += 2) {
		addr += t[i];
		if (addr > offset)
			return line_or_zero(line);
		line += (signed char)t[i + 1];
	}
	return whole ? line_or_zero(line) : -1;
}

/* 3.10's co_linetable: (byte length, signed line increment, -128: none)
 * pairs, each a range of byte offsets */
static int linetable310_line(const unsigned char *t, size_t len, int whole, long long line, unsigned offset)
{
	unsigned start, end = 0;
	for (size_t i = 0; i + 1 < len; i += 2) {
		start = end;
		end += t[i];
		long long here = -1;
		if ((signed char)t[i + 1] != -128)
			here = line += (signed char)t[i + 1];
		if (offset >= start && offset < end)
			return line_or_zero(here);
	}
	return whole ? 0 : -1;
}

static unsigned read_varint(const unsigned char *t, size_t len, size_t *i)
{
	unsigned v = 0, shift = 0;
	while (*i < len) {
		unsigned char b = t[(*i)++];
		v |= (unsigned)(b & 63) << shift;
		shift += 6;
		if (!(b & 64) || shift > 24)
			break;
	}
	return v;
}

static int read_svarint(const unsigned char *t, size_t len, size_t *i)
{
	unsigned v = read_varint(t, len, i);
	return v & 1 ? -(int)(v >> 1) : (int)(v >> 1);
}

/* 3.11+'s location table (Objects/locations.md): entries of a first byte
 * 1cccclll (code c, l+1 code units), then per code: 15 no location, 14 long
 * form (line delta svarint and three varints), 13 line delta svarint only,
 * 10-12 line delta c-10 and two column bytes, 0-9 same line and one column
 * byte.  An entry takes at most 21 bytes: a part of the table is read up
 * to where one might not be whole. */
static int locations_line(const unsigned char *t, size_t len, int whole, long long line, unsigned lasti)
{
	size_t i = 0;
	unsigned addr = 0;

	while (i < len) {
		if (!whole && i + 21 > len)
			return -1;
		unsigned char first = t[i++];
		if (!(first & 0x80))
			return 0;	/* lost our place */
		unsigned code = (first >> 3) & 15, units = (first & 7) + 1;
		long long here = line;
		switch (code) {
		case 15: here = -1; break;
		case 14:
			line += read_svarint(t, len, &i);
			here = line;
			read_varint(t, len, &i), read_varint(t, len, &i), read_varint(t, len, &i);
			break;
		case 13: line += read_svarint(t, len, &i); here = line; break;
		case 10: case 11: case 12: line += (int)code - 10; here = line; i += 2; break;
		default: i += 1; break;
		}
		if (lasti < addr + units)
			return line_or_zero(here);
		addr += units;
	}
	return whole ? 0 : -1;
}

int pylayout_line(const struct pylayout *l, const unsigned char *t, size_t len, int whole, int firstlineno,
		  unsigned lasti)
{
	if (!t)
		return 0;
	switch (l->lines) {
	case PYLAYOUT_LNOTAB: return lnotab_line(t, len, whole, firstlineno, lasti);
	case PYLAYOUT_LINETABLE_310: return linetable310_line(t, len, whole, firstlineno, lasti * 2);
	default: return locations_line(t, len, whole, firstlineno, lasti);
	}
}
