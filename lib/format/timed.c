/* timed.c — the samples of timed stack sections, and time ranges over them. */
#include "timed.h"

#include <math.h>
#include <string.h>

#include "util.h"

enum timed_role timed_role(json_t *hdr)
{
	const char *role = stream_header_str(hdr, "timed", NULL);
	const char *dt = stream_header_str(hdr, "datatype", "");

	if (!role)
		return TIMED_NONE;
	if (strcmp(role, "stacks") == 0 && strcmp(dt, "stack") == 0)
		return TIMED_STACKS;
	if (strcmp(role, "samples") == 0 && strcmp(dt, "event") == 0)
		return TIMED_SAMPLES;
	return TIMED_NONE;
}

/* The fields a sample may have: one pass over them (this runs for every
 * sample of a capture). */
enum { F_STACK, F_DUR, F_PID, F_TID, F_N };

static inline int sample_field(const struct mstr *k)
{
	if (k->len == 5 && memcmp(k->s, "stack", 5) == 0)
		return F_STACK;
	if (k->len != 3)
		return -1;
	if (memcmp(k->s, "dur", 3) == 0)
		return F_DUR;
	if (memcmp(k->s, "pid", 3) == 0)
		return F_PID;
	return memcmp(k->s, "tid", 3) == 0 ? F_TID : -1;
}

int timed_sample_parse(const struct event_rec *e, struct timed_sample *s, const char **why)
{
	static const char *const bad[F_N] = {
		"sample's stack= is not a whole number", "sample's dur= is not a whole number of nanoseconds",
		"sample's pid= is not a whole number", "sample's tid= is not a whole number",
	};
	const uint64_t max[F_N] = { UINT32_MAX, UINT64_MAX - e->time, UINT32_MAX, UINT32_MAX };
	uint64_t v[F_N] = { 0 };
	int seen = 0;

	for (size_t i = 0; i < e->nfields; i++) {
		int f = sample_field(&e->fields[i].key);
		if (f < 0 || seen & (1 << f))	/* the first of a key counts, as stream_fields_get() */
			continue;
		seen |= 1 << f;
		if (marple_parse_u64_span(e->fields[i].value.s, e->fields[i].value.len, &v[f]) < 0 || v[f] > max[f]) {
			*why = bad[f];
			return -1;
		}
	}
	if (!(seen & (1 << F_STACK))) {
		*why = "sample without stack=";
		return -1;
	}
	*s = (struct timed_sample){ .time = e->time, .dur = v[F_DUR], .stack = v[F_STACK],
				    .pid = (uint32_t)v[F_PID], .tid = (uint32_t)v[F_TID] };
	return 0;
}

/* The end of a column: the next ',' or e; NULL if the column holds a byte
 * that needs the full parser ('%' escapes, NUL). */
static const char *plain_column(const char *p, const char *e)
{
	for (; p < e; p++) {
		unsigned char ch = (unsigned char)*p;
		if (ch > ',')		/* letters and digits: one test ('%' and NUL are below ',') */
			continue;
		if (ch == ',')
			return p;
		if (ch == '%' || ch == 0)
			return NULL;
	}
	return p;
}

/* A whole number at p, as marple_parse_u64_span takes it (1 to 20 digits, no
 * overflow), ending at e or a ','; returns that end, or NULL.  Inline digits:
 * this runs for every number of every sample. */
static inline const char *column_u64(const char *p, const char *e, uint64_t *out)
{
	const char *s = p;
	uint64_t v = 0;
	while (p < e && (unsigned)(*p - '0') <= 9 && p - s < 19)
		v = v * 10 + (unsigned)(*p++ - '0');
	if (p < e && (unsigned)(*p - '0') <= 9) {	/* a 20th digit may overflow */
		unsigned d = (unsigned)(*p++ - '0');
		if (v > (UINT64_MAX - d) / 10)
			return NULL;
		v = v * 10 + d;
	}
	if (p == s || (p < e && *p != ','))
		return NULL;
	*out = v;
	return p;
}

/* The sample field a key=value field at k starts with (its value at *val), or -1. */
static int known_field(const char *k, const char *e, const char **val)
{
	if (e - k >= 6 && memcmp(k, "stack=", 6) == 0) {
		*val = k + 6;
		return F_STACK;
	}
	if (e - k < 4 || k[3] != '=')
		return -1;
	*val = k + 4;
	struct mstr key = { k, 3 };
	return sample_field(&key);
}

int timed_sample_parse_text(const char *p, size_t len, struct timed_sample *s)
{
	const char *e = p + len, *c, *val;
	uint64_t v[F_N] = { 0 }, time;
	int seen = 0;

	/* time,type,track: a number, a non-empty type, any track */
	if (!(c = column_u64(p, e, &time)) || c == e)
		return -1;
	p = c + 1;
	if (!(c = plain_column(p, e)) || c == e || c == p)
		return -1;
	if (!(c = plain_column(c + 1, e)))
		return -1;
	const uint64_t max[F_N] = { UINT32_MAX, UINT64_MAX - time, UINT32_MAX, UINT32_MAX };
	while (c < e) {			/* c is the comma before a key=value field */
		const char *k = c + 1, *eq = NULL;
		int f = known_field(k, e, &val);
		if (f >= 0 && !(seen & (1 << f))) {	/* the first of a key counts */
			seen |= 1 << f;
			if (!(c = column_u64(val, e, &v[f])) || v[f] > max[f])
				return -1;
			continue;
		}
		for (p = k; p < e && *p != ','; p++) {
			if (*p == '%' || *p == 0)
				return -1;
			if (*p == '=' && !eq)
				eq = p;
		}
		if (!eq)
			return -1;	/* empty or not key=value: the full parser says so */
		c = p;
	}
	if (!(seen & (1 << F_STACK)))
		return -1;
	*s = (struct timed_sample){ .time = time, .dur = v[F_DUR], .stack = v[F_STACK],
				    .pid = (uint32_t)v[F_PID], .tid = (uint32_t)v[F_TID] };
	return 0;
}

/* The value of --from/--to; exits 2 naming the option when it is not a number. */
static double timed_parse_seconds(const char *opt, const char *arg)
{
	return marple_opt_double(opt, arg, 0, 1e9);
}

void timed_range_option(struct timed_range *r, int is_from, const char *arg)
{
	if (is_from)
		r->from_s = timed_parse_seconds("--from", arg);
	else
		r->to_s = timed_parse_seconds("--to", arg);
	r->set = 1;
}

void timed_range_check(const struct timed_range *r)
{
	if (r->set && !(r->from_s < r->to_s))
		marple_usage_error("--from %g is not before --to %g: the range [from, to) is empty", r->from_s, r->to_s);
}

static uint64_t seconds_to_ns(double s)
{
	double ns = s * 1e9;
	return ns >= 1.8e19 ? UINT64_MAX : (uint64_t)llround(ns);
}

void timed_range_ns(const struct timed_range *r, json_t *hdr, uint64_t *from, uint64_t *to)
{
	int64_t start = stream_header_int(hdr, "start_ns", 0);
	uint64_t base = start > 0 ? (uint64_t)start : 0;
	uint64_t f = seconds_to_ns(r->from_s), t = isinf(r->to_s) ? UINT64_MAX : seconds_to_ns(r->to_s);

	*from = f > UINT64_MAX - base ? UINT64_MAX : base + f;
	*to = t > UINT64_MAX - base ? UINT64_MAX : base + t;
}

uint64_t timed_in_range(const struct timed_sample *s, uint64_t from, uint64_t to, uint64_t ns_per_weight)
{
	if (s->dur == 0 || ns_per_weight == 0)
		return s->time >= from && s->time < to;
	uint64_t b = s->time > from ? s->time : from;
	uint64_t end = s->time + s->dur;
	uint64_t e = end < to ? end : to;
	return e > b ? e - b : 0;
}

uint64_t timed_ns_per_weight(json_t *stack_hdr)
{
	return stream_time_unit_ns(json_string_value(json_object_get(json_object_get(stack_hdr, "units"), "weight")), NULL);
}

uint64_t timed_weight(uint64_t summed, uint64_t ns_per_weight)
{
	if (ns_per_weight <= 1)
		return summed;
	return summed / ns_per_weight + (summed % ns_per_weight >= (ns_per_weight + 1) / 2);
}
