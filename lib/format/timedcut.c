/* timedcut.c — cut a stream to a time range (timed.h): the samples of timed
 * stack sections and the records of event sections that lie in [from, to). */
#include <math.h>
#include <string.h>

#include "timed.h"
#include "util.h"

enum { CUT_IDLE, CUT_STACKS, CUT_SAMPLES, CUT_EVENTS, CUT_WHOLE };

/* Byte strings one after the other: string i is s[off[i]..off[i+1]). */
struct strings {
	char *s;
	size_t cap, n;
	size_t *off, offcap;
};

struct timedcut {
	struct timed_range range;
	const char *name;
	FILE *out;
	int state;
	uint64_t from, to, ns_per_weight, events_kept;
	json_t *stack_hdr, *stack_trailer, *samples_hdr;
	struct strings stacks;		/* the frames text of each stack record */
	uint64_t *sum;			/* by stack: what lies in the range */
	size_t sumcap;
	struct strings kept;		/* raw lines of the samples in the range */
	uint32_t *kept_stack;		/* the stack each names */
	size_t kept_cap;
};

static void strings_add(struct strings *t, const char *s, size_t len)
{
	if (!t->off) {
		t->off = marple_grow(t->off, &t->offcap, 1, sizeof(*t->off));
		t->off[0] = 0;
	}
	t->s = marple_grow(t->s, &t->cap, t->off[t->n] + len + 1, 1);
	memcpy(t->s + t->off[t->n], s, len);
	t->off = marple_grow(t->off, &t->offcap, t->n + 2, sizeof(*t->off));
	t->off[t->n + 1] = t->off[t->n] + len;
	t->n++;
}

static void strings_clear(struct strings *t)
{
	t->n = 0;
}

static void strings_free(struct strings *t)
{
	free(t->s);
	free(t->off);
}

struct timedcut *timedcut_new(const struct timed_range *range, FILE *out, const char *name)
{
	struct timedcut *c = marple_calloc(1, sizeof(*c));
	c->name = name;
	c->range = *range;
	c->out = out;
	return c;
}

static void write_raw(struct timedcut *c, struct stream_reader *r)
{
	struct mstr raw = stream_reader_raw(r);
	fwrite(raw.s, 1, raw.len, c->out);
	putc('\n', c->out);
}

/* A copy of hdr saying which range it was cut to. */
static json_t *cut_header(struct timedcut *c, json_t *hdr)
{
	json_t *h = json_deep_copy(hdr);
	json_object_set_new(h, "cut", json_pack("[f,o]", c->range.from_s,
						 isinf(c->range.to_s) ? json_null() : json_real(c->range.to_s)));
	return h;
}

static void write_json(struct timedcut *c, json_t *obj, uint64_t records)
{
	if (records != UINT64_MAX)
		json_object_set_new(obj, "records", json_integer((json_int_t)records));
	stream_write_json(c->out, obj);
	json_decref(obj);
}

/* A sample's line with its stack= field (after the three fixed columns) set to id. */
static void write_sample(struct timedcut *c, const char *s, size_t len, uint32_t id)
{
	const char *e = s + len, *p = s;
	int col = 0;

	while (p < e) {
		const char *comma = memchr(p, ',', (size_t)(e - p));
		const char *fe = comma ? comma : e;
		if (col >= 3 && fe - p > 6 && memcmp(p, "stack=", 6) == 0)
			fprintf(c->out, "stack=%u", id);
		else
			fwrite(p, 1, (size_t)(fe - p), c->out);
		if (comma)
			putc(',', c->out);
		p = comma ? comma + 1 : e;
		col++;
	}
	putc('\n', c->out);
}

/* The timed pair, cut: stacks that have samples in the range, renumbered. */
static void write_pair(struct timedcut *c, json_t *samples_trailer)
{
	uint32_t *newid = marple_calloc(c->stacks.n + 1, sizeof(*newid));
	uint64_t nstacks = 0;

	write_json(c, cut_header(c, c->stack_hdr), UINT64_MAX);
	for (size_t i = 0; i < c->stacks.n; i++) {
		uint64_t w = timed_weight(c->sum[i], c->ns_per_weight);
		if (!c->sum[i])
			continue;
		newid[i] = (uint32_t)nstacks++;
		fprintf(c->out, "%llu#", (unsigned long long)w);
		fwrite(c->stacks.s + c->stacks.off[i], 1, c->stacks.off[i + 1] - c->stacks.off[i], c->out);
		putc('\n', c->out);
	}
	if (c->stack_trailer)
		write_json(c, json_deep_copy(c->stack_trailer), nstacks);
	write_json(c, cut_header(c, c->samples_hdr), UINT64_MAX);
	for (size_t i = 0; i < c->kept.n; i++)
		write_sample(c, c->kept.s + c->kept.off[i], c->kept.off[i + 1] - c->kept.off[i],
			     newid[c->kept_stack[i]]);
	if (samples_trailer)
		write_json(c, json_deep_copy(samples_trailer), c->kept.n);
	free(newid);
}

static void drop_pair(struct timedcut *c)
{
	json_decref(c->stack_hdr);
	json_decref(c->stack_trailer);
	json_decref(c->samples_hdr);
	c->stack_hdr = c->stack_trailer = c->samples_hdr = NULL;
	strings_clear(&c->stacks);
	strings_clear(&c->kept);
}

/* The section being cut ends (another begins, or the input ends). */
static void finish(struct timedcut *c, const char *where, unsigned long line)
{
	if (c->state == CUT_SAMPLES)
		write_pair(c, NULL);
	else if (c->state == CUT_STACKS) {
		marple_warn_at(where, line, "timed stacks without their samples section: written whole");
		write_json(c, json_deep_copy(c->stack_hdr), UINT64_MAX);
		for (size_t i = 0; i < c->stacks.n; i++)
			fprintf(c->out, "%llu#%.*s\n", (unsigned long long)c->sum[i],
				(int)(c->stacks.off[i + 1] - c->stacks.off[i]), c->stacks.s + c->stacks.off[i]);
		if (c->stack_trailer)
			write_json(c, json_deep_copy(c->stack_trailer), UINT64_MAX);
	}
	drop_pair(c);
	c->state = CUT_IDLE;
}

static void cut_header_item(struct timedcut *c, struct stream_reader *r)
{
	json_t *hdr = stream_reader_header(r);
	enum timed_role role = timed_role(hdr);

	if (role == TIMED_SAMPLES && c->state == CUT_STACKS) {
		c->state = CUT_SAMPLES;
		c->samples_hdr = json_deep_copy(hdr);
		if (c->stacks.n)	/* weights now come from the samples in the range */
			memset(c->sum, 0, c->stacks.n * sizeof(*c->sum));
		timed_range_ns(&c->range, hdr, &c->from, &c->to);
		return;
	}
	finish(c, stream_reader_name(r), stream_reader_line(r));
	if (role == TIMED_STACKS) {
		c->state = CUT_STACKS;
		c->stack_hdr = json_deep_copy(hdr);
		c->ns_per_weight = timed_ns_per_weight(hdr);
	} else if (stream_reader_datatype(r) == DATATYPE_EVENT) {
		c->state = CUT_EVENTS;
		c->events_kept = 0;
		timed_range_ns(&c->range, hdr, &c->from, &c->to);
		write_json(c, cut_header(c, hdr), UINT64_MAX);
	} else {
		c->state = CUT_WHOLE;
		marple_warn_at(stream_reader_name(r), stream_reader_line(r), "section %ld (%s) has no times: written whole",
			stream_reader_section(r), stream_datatype_name(stream_reader_datatype(r)));
		write_raw(c, r);
	}
}

static void cut_record(struct timedcut *c, struct stream_reader *r)
{
	struct mstr raw = stream_reader_raw(r);
	struct timed_sample s;
	const char *why;

	switch (c->state) {
	case CUT_STACKS: {
		const char *hash = memchr(raw.s, '#', raw.len);
		strings_add(&c->stacks, hash + 1, raw.len - (size_t)(hash + 1 - raw.s));
		c->sum = marple_grow(c->sum, &c->sumcap, c->stacks.n, sizeof(*c->sum));
		c->sum[c->stacks.n - 1] = stream_reader_stack(r)->weight;
		break;
	}
	case CUT_SAMPLES:
		if (timed_sample_parse(stream_reader_event(r), &s, &why) < 0 || s.stack >= c->stacks.n) {
			marple_warn_at(stream_reader_name(r), stream_reader_line(r), "%s: sample left out",
				s.stack >= c->stacks.n ? "names a stack its stack section does not have" : why);
			break;
		}
		uint64_t in = timed_in_range(&s, c->from, c->to, c->ns_per_weight);
		if (!in)
			break;
		c->sum[s.stack] += in;
		strings_add(&c->kept, raw.s, raw.len);
		c->kept_stack = marple_grow(c->kept_stack, &c->kept_cap, c->kept.n, sizeof(*c->kept_stack));
		c->kept_stack[c->kept.n - 1] = (uint32_t)s.stack;
		break;
	case CUT_EVENTS:
		if (stream_reader_event(r)->time >= c->from && stream_reader_event(r)->time < c->to) {
			write_raw(c, r);
			c->events_kept++;
		}
		break;
	case CUT_WHOLE:
		write_raw(c, r);
		break;
	}
}

void timedcut_item(struct timedcut *c, struct stream_reader *r, enum stream_item it)
{
	if (it == STREAM_HEADER)
		cut_header_item(c, r);
	else if (it == STREAM_RECORD)
		cut_record(c, r);
	else if (it == STREAM_TRAILER && c->state == CUT_STACKS)
		c->stack_trailer = json_deep_copy(stream_reader_trailer(r));
	else if (it == STREAM_TRAILER && c->state == CUT_SAMPLES) {
		write_pair(c, stream_reader_trailer(r));
		drop_pair(c);
		c->state = CUT_IDLE;
	} else if (it == STREAM_TRAILER && c->state == CUT_EVENTS) {
		write_json(c, json_deep_copy(stream_reader_trailer(r)), c->events_kept);
		c->state = CUT_IDLE;
	} else if (it == STREAM_TRAILER && c->state == CUT_WHOLE) {
		write_raw(c, r);
		c->state = CUT_IDLE;
	}
}

void timedcut_free(struct timedcut *c)
{
	if (!c)
		return;
	finish(c, c->name, 0);
	strings_free(&c->stacks);
	strings_free(&c->kept);
	free(c->sum);
	free(c->kept_stack);
	free(c);
}
