/* unwindtablescompact.c — rows into the compact table the BPF walker reads
 * (see unwindtablescompact.h and bpf/stacks.h). */
#include "unwindtablescompact.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

#define PAGE_MASK ((1u << UNWIND_PAGE_SHIFT) - 1)
#define RULE_MASK (UNWIND_MAX_RULES - 1)

void unwindtablescompact_rules_init(struct unwindtables_rules *r, struct unwind_rule *v, uint32_t cap)
{
	memset(r, 0, sizeof(*r));
	r->v = v;
	r->cap = cap > UNWIND_MAX_RULES ? UNWIND_MAX_RULES : cap;
	r->nslots = 1024;
	r->slots = marple_calloc(r->nslots, sizeof(*r->slots));
	/* the reserved ones: every table may name them without a lookup */
	v[UNWIND_RULE_NONE] = (struct unwind_rule){ .cfa = UNWIND_NONE };
	v[UNWIND_RULE_UNSUPPORTED] = (struct unwind_rule){ .cfa = UNWIND_UNSUPPORTED };
	r->n = UNWIND_RULES_RESERVED;
}

void unwindtablescompact_rules_free(struct unwindtables_rules *r)
{
	free(r->slots);
	memset(r, 0, sizeof(*r));
}

static uint64_t rule_bits(const struct unwind_rule *u)
{
	return (uint64_t)(uint32_t)u->cfa_off << 32 | (uint64_t)u->cfa << 24 | (uint64_t)u->rbp << 16 |
	       (uint16_t)u->rbp_off;
}

/* The slot of bits: its own, or the free one where it goes */
static struct unwindtables_rule_slot *rule_slot(struct unwindtables_rule_slot *slots, size_t nslots, uint64_t bits)
{
	/* a multiplicative hash of the 64 bits: offsets differ in their low bits */
	size_t mask = nslots - 1, h = (size_t)((bits * 0x9e3779b97f4a7c15ull) >> 40) & mask;
	while (slots[h].index && slots[h].bits != bits)
		h = (h + 1) & mask;
	return &slots[h];
}

static uint32_t rule_index_of(struct unwindtables_rules *r, struct unwind_rule u);
static uint32_t rule_keep(struct unwindtables_rules *r, struct unwindtables_rule_slot *s, uint64_t bits);

void unwindtablescompact_rules_adopt(struct unwindtables_rules *r, uint32_t n)
{
	while (r->n < n && r->n < r->cap) {
		uint64_t bits = rule_bits(&r->v[r->n]);
		struct unwindtables_rule_slot *s = rule_slot(r->slots, r->nslots, bits);
		if (s->index)
			r->n++;	/* a rule twice: found at its first */
		else
			rule_keep(r, s, bits);
	}
}

uint32_t unwindtablescompact_rule_index(struct unwindtables_rules *r, const struct unwind_row *row)
{
	struct unwind_rule u = { .cfa_off = row->cfa_off, .cfa = row->cfa, .rbp = row->rbp, .rbp_off = row->rbp_off };

	return rule_index_of(r, u);
}

static uint32_t rule_index_of(struct unwindtables_rules *r, struct unwind_rule u)
{
	uint64_t bits = rule_bits(&u);

	if (u.cfa == UNWIND_NONE && bits == rule_bits(&r->v[UNWIND_RULE_NONE]))
		return UNWIND_RULE_NONE;
	struct unwindtables_rule_slot *s = rule_slot(r->slots, r->nslots, bits);
	if (s->index)
		return s->index - 1;
	if (r->n >= r->cap) {
		r->rows_without_room++;
		return UNWIND_RULE_UNSUPPORTED;
	}
	r->v[r->n] = u;
	return rule_keep(r, s, bits);
}

/* r->v[r->n], just written, counted in and found by its bits from now on
 * (s: its free slot). */
static uint32_t rule_keep(struct unwindtables_rules *r, struct unwindtables_rule_slot *s, uint64_t bits)
{
	*s = (struct unwindtables_rule_slot){ bits, r->n + 1 };
	if (2 * (size_t)(r->n + 1) > r->nslots) {
		/* half full: twice as many slots */
		size_t n2 = 2 * r->nslots;
		struct unwindtables_rule_slot *s2 = marple_calloc(n2, sizeof(*s2));
		for (size_t i = 0; i < r->nslots; i++)
			if (r->slots[i].index)
				*rule_slot(s2, n2, r->slots[i].bits) = r->slots[i];
		free(r->slots);
		r->slots = s2;
		r->nslots = n2;
	}
	return r->n++;
}

uint64_t unwindtablescompact_words(const struct unwind_row *rows, size_t n)
{
	if (n == 0)
		return 0;
	for (size_t i = 1; i < n; i++)
		if (rows[i].pc <= rows[i - 1].pc)
			return 0;
	uint64_t npages = (rows[n - 1].pc >> UNWIND_PAGE_SHIFT) - (rows[0].pc >> UNWIND_PAGE_SHIFT) + 1;
	return UNWIND_TABLE_HEADER + npages + 1 + n;
}

void unwindtablescompact_pack(const struct unwind_row *rows, size_t n, struct unwindtables_rules *r, uint32_t *out,
		       uint32_t base)
{
	uint32_t page0 = rows[0].pc >> UNWIND_PAGE_SHIFT;
	uint32_t npages = (rows[n - 1].pc >> UNWIND_PAGE_SHIFT) - page0 + 1;
	uint32_t *index = out + UNWIND_TABLE_HEADER, *words = index + npages + 1;
	uint32_t rows_at = base + UNWIND_TABLE_HEADER + npages + 1;
	size_t i = 0;

	out[0] = page0;
	out[1] = npages;
	for (uint32_t k = 0; k <= npages; k++) {
		uint64_t page_start = (uint64_t)(page0 + k) << UNWIND_PAGE_SHIFT;
		while (i < n && rows[i].pc < page_start)
			i++;
		index[k] = rows_at + (uint32_t)i;
	}
	for (i = 0; i < n; i++)
		words[i] = (rows[i].pc & PAGE_MASK) << UNWIND_ROW_RULE_BITS | unwindtablescompact_rule_index(r, &rows[i]);
}

int unwindtablescompact_find(const uint32_t *words, uint32_t off, uint64_t pc)
{
	uint32_t page0 = words[off], npages = words[off + 1], index = off + UNWIND_TABLE_HEADER;
	uint32_t rows_at = index + npages + 1;
	uint64_t page = pc >> UNWIND_PAGE_SHIFT;

	if (page < page0)
		return -1;
	if (page - page0 >= npages)
		return (int)(words[words[index + npages] - 1] & RULE_MASK);	/* past the last row's page */
	uint32_t k = (uint32_t)(page - page0), lo = words[index + k], hi = words[index + k + 1];
	uint32_t at = (uint32_t)pc & PAGE_MASK;
	for (int step = 0; step < UNWIND_PAGE_SEARCH_STEPS && lo < hi; step++) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (words[mid] >> UNWIND_ROW_RULE_BITS <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* none at or below pc in its page: the row before, from an earlier
	 * page, unless there is none */
	if (lo == rows_at)
		return -1;
	return (int)(words[lo - 1] & RULE_MASK);
}

/* An exported table ends with this: its rules come before it, its words
 * before them. */
struct export_footer {
	uint32_t nrules, nwords;
};

size_t unwindtablescompact_export(const uint32_t *words, uint32_t off, uint32_t nwords, const struct unwindtables_rules *r,
			       void *out)
{
	uint32_t *w = out, *local = marple_malloc(sizeof(*local) * UNWIND_MAX_RULES);
	uint32_t npages = words[off + 1], rows_at = UNWIND_TABLE_HEADER + npages + 1, nrules = UNWIND_RULES_RESERVED;
	struct unwind_rule *rules = (struct unwind_rule *)(w + nwords);

	memset(local, 0xff, sizeof(*local) * UNWIND_MAX_RULES);
	for (uint32_t i = 0; i < UNWIND_RULES_RESERVED; i++) {
		local[i] = i;	/* the reserved rules keep their numbers */
		rules[i] = r->v[i];
	}
	memcpy(w, words + off, (size_t)nwords * sizeof(*w));
	for (uint32_t k = UNWIND_TABLE_HEADER; k < rows_at; k++)
		w[k] -= off;
	for (uint32_t i = rows_at; i < nwords; i++) {
		uint32_t g = w[i] & RULE_MASK;
		if (local[g] == UINT32_MAX) {
			local[g] = nrules;
			rules[nrules++] = r->v[g];
		}
		w[i] = (w[i] & ~RULE_MASK) | local[g];
	}
	free(local);
	struct export_footer f = { nrules, nwords };
	memcpy(rules + nrules, &f, sizeof(f));
	return (size_t)nwords * sizeof(*w) + (size_t)nrules * sizeof(*rules) + sizeof(f);
}

uint32_t unwindtablescompact_import(uint32_t *words, uint32_t off, size_t len, struct unwindtables_rules *r,
				 uint32_t *nrows)
{
	struct export_footer f;
	uint32_t *w = words + off;

	if (len < sizeof(f) || len % 4)
		return 0;
	memcpy(&f, (const char *)w + len - sizeof(f), sizeof(f));
	if (f.nrules < UNWIND_RULES_RESERVED || f.nrules > UNWIND_MAX_RULES || f.nwords < UNWIND_TABLE_HEADER + 2 ||
	    len != (size_t)f.nwords * 4 + (size_t)f.nrules * sizeof(struct unwind_rule) + sizeof(f))
		return 0;
	uint32_t npages = w[1], rows_at = UNWIND_TABLE_HEADER + npages + 1;
	if (npages == 0 || npages >= f.nwords || rows_at > f.nwords || w[UNWIND_TABLE_HEADER] != rows_at ||
	    w[rows_at - 1] != f.nwords)
		return 0;
	for (uint32_t k = UNWIND_TABLE_HEADER + 1; k < rows_at; k++)
		if (w[k] < w[k - 1] || w[k] > f.nwords)
			return 0;
	for (uint32_t i = rows_at; i < f.nwords; i++)
		if ((w[i] & RULE_MASK) >= f.nrules)
			return 0;
	/* the rules sit where the next table goes: theirs first */
	const struct unwind_rule *rules = (const struct unwind_rule *)(w + f.nwords);
	uint32_t *global = marple_malloc(sizeof(*global) * f.nrules);
	for (uint32_t i = 0; i < f.nrules; i++) {
		struct unwind_rule u;
		memcpy(&u, &rules[i], sizeof(u));
		global[i] = i < UNWIND_RULES_RESERVED ? i : rule_index_of(r, u);
	}
	for (uint32_t k = UNWIND_TABLE_HEADER; k < rows_at; k++)
		w[k] += off;
	for (uint32_t i = rows_at; i < f.nwords; i++)
		w[i] = (w[i] & ~RULE_MASK) | global[w[i] & RULE_MASK];
	free(global);
	*nrows = f.nwords - rows_at;
	return f.nwords;
}
