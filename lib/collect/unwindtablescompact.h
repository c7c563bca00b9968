/* unwindtablescompact.h — a file's rows (struct unwind_row, as
 * unwindtablescfi_read builds them: 16 bytes each) turned into the compact
 * table the BPF walker reads (bpf/stacks.h: a page index, then one 32-bit
 * word a row naming a rule kept once in a shared rule table), and the
 * lookup of a PC in it, as bpf/unwindtables.bpf.h does it (for the tests, and
 * for anything in user space that wants the kernel's answer).
 *
 * The rules are few (a few thousand distinct ones for a whole build's
 * worth of libraries), the rows many (1.2 M for libLLVM): a row is 4 bytes
 * and the page index ~0.1 byte a row, against 16 bytes a row before.
 *
 *   struct unwindtables_rules rules;
 *   unwindtablescompact_rules_init(&rules, rule_array, UNWIND_MAX_RULES);
 *   uint64_t need = unwindtablescompact_words(rows, n);  // room check
 *   unwindtablescompact_pack(rows, n, &rules, words + off, off);
 *   int rule = unwindtablescompact_find(words, off, pc);  // -1: no row
 *   unwindtablescompact_rules_free(&rules);
 */
#ifndef MARPLE_UNWINDTABCOMPACT_H
#define MARPLE_UNWINDTABCOMPACT_H

#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>

#include "stacks.h"

/* The distinct rules, in an array the caller owns (the BPF map unwind_rules,
 * mmapped), with a hash to find one already there. */
struct unwindtables_rule_slot {
	uint64_t bits;			/* the rule, packed */
	uint32_t index;			/* + 1; 0: a free slot */
};
struct unwindtables_rules {
	struct unwind_rule *v;		/* v[0..n), v[0] UNWIND_NONE's, v[1] UNWIND_UNSUPPORTED's */
	uint32_t n, cap;
	struct unwindtables_rule_slot *slots;	/* open addressing, at most half full,
						 * grown with the rules (a few thousand:
						 * tens of KB, not 1 MB for all 65,536) */
	size_t nslots;
	uint64_t rows_without_room;	/* rows whose rule found the array full: made
					 * UNWIND_RULE_UNSUPPORTED (the walk stops there) */
};

/* v holds cap rules (at least UNWIND_RULES_RESERVED, at most
 * UNWIND_MAX_RULES); it is written from v[0]. */
void unwindtablescompact_rules_init(struct unwindtables_rules *r, struct unwind_rule *v, uint32_t cap);
void unwindtablescompact_rules_free(struct unwindtables_rules *r);
/* v[r->n..n), written there by another collector sharing the array
 * (unwindtablesshared.h), counted in and found from now on. */
void unwindtablescompact_rules_adopt(struct unwindtables_rules *r, uint32_t n);
/* The index of the rule of row, added if new. */
uint32_t unwindtablescompact_rule_index(struct unwindtables_rules *r, const struct unwind_row *row);

/* Words the compact table of rows[0..n) takes (header, page index, rows);
 * 0 when it cannot be made: no rows, pcs not strictly increasing. */
uint64_t unwindtablescompact_words(const struct unwind_row *rows, size_t n);
/* Write that table to out[0..words), positions in it counted from the word
 * base (where out is in the whole array); the rows' rules go into r. */
void unwindtablescompact_pack(const struct unwind_row *rows, size_t n, struct unwindtables_rules *r, uint32_t *out,
		       uint32_t base);
/* The table packed at words[off..off+nwords) (positions from off, rules
 * r's) as a file's own, to keep on disk (unwindtablescache.h): into out, its
 * words with positions from 0 and rules numbered its own, then those
 * rules, then their count and the words'; out holds
 * UNWINDTABLESCOMPACT_EXPORT_MAX(nwords) bytes.  Its size in bytes. */
#define UNWINDTABLESCOMPACT_EXPORT_MAX(nwords) \
	((size_t)(nwords) * 4 + (size_t)UNWIND_MAX_RULES * sizeof(struct unwind_rule) + 8)
size_t unwindtablescompact_export(const uint32_t *words, uint32_t off, uint32_t nwords, const struct unwindtables_rules *r,
			       void *out);
/* An exported table of len bytes, read at words + off, made the table at
 * off: positions moved to off, its rules found or added in r (what follows
 * its words is free again).  Its words (and rows in *nrows), or 0 when
 * the bytes are not such a table (then words + off is garbage).  No
 * compaction: a cached table costs one pass over its words. */
uint32_t unwindtablescompact_import(uint32_t *words, uint32_t off, size_t len, struct unwindtables_rules *r,
				 uint32_t *nrows);
/* The rule index of file address pc in the table at words[off...], as the
 * BPF walker finds it; -1 before the first row. */
int unwindtablescompact_find(const uint32_t *words, uint32_t off, uint64_t pc);

#endif
