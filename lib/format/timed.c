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

static int sample_field(const struct mstr *k)
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

double timed_parse_seconds(const char *opt, const char *arg)
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
