/* test_timed.c — samples of timed stack sections: parsing, what of a sample
 * lies in a range (instants and durations), weights in the section's unit. */
#include <math.h>
#include <string.h>

#include "test.h"
#include "timed.h"

static struct event_rec event(uint64_t time, struct field *f, size_t n)
{
	return (struct event_rec){ .time = time, .type = MSTR("sample"), .track = MSTR("cpu0"),
				   .nfields = n, .fields = f };
}

int main(void)
{
	struct field f[3] = { { MSTR("stack"), MSTR("17") }, { MSTR("tid"), MSTR("9") }, { MSTR("dur"), MSTR("500") } };
	struct event_rec e = event(1000, f, 3);
	struct timed_sample s;
	const char *why = NULL;

	test_plan(15);

	test_cond("timed: a sample parses", timed_sample_parse(&e, &s, &why) == 0 && s.stack == 17 &&
		  s.tid == 9 && s.pid == 0 && s.dur == 500 && s.time == 1000);
	e = event(1000, f + 1, 1);
	test_cond("timed: a sample needs stack=", timed_sample_parse(&e, &s, &why) < 0 && strstr(why, "stack="));
	f[0].value = MSTR("-1");
	e = event(1000, f, 1);
	test_cond("timed: stack= must be a whole number", timed_sample_parse(&e, &s, &why) < 0);
	f[0].value = MSTR("1");
	f[2].value = MSTR("18446744073709551615");
	e = event(1000, f, 3);
	test_cond("timed: time + dur may not pass 2^64", timed_sample_parse(&e, &s, &why) < 0 && strstr(why, "dur="));

	struct timed_sample inst = { .time = 100 }, blk = { .time = 100, .dur = 50 };
	test_cond("timed: an instant at from is in", timed_in_range(&inst, 100, 200, 0) == 1);
	test_cond("timed: an instant at to is out", timed_in_range(&inst, 0, 100, 0) == 0);
	test_cond("timed: a block counts its overlap", timed_in_range(&blk, 120, 200, 1000) == 30);
	test_cond("timed: a block inside counts whole", timed_in_range(&blk, 0, 1000, 1000) == 50);
	test_cond("timed: a block outside counts 0", timed_in_range(&blk, 150, 1000, 1000) == 0);
	test_cond("timed: a block in a section of samples counts by its start", timed_in_range(&blk, 120, 200, 0) == 0 &&
		  timed_in_range(&blk, 100, 101, 0) == 1);

	json_t *h = json_pack("{s:i,s:s,s:s,s:{s:s}}", "start_ns", 1000000000, "datatype", "stack", "timed", "stacks",
			      "units", "weight", "us");
	test_cond("timed: role of a timed stack section", timed_role(h) == TIMED_STACKS);
	test_cond("timed: ns per weight from units", timed_ns_per_weight(h) == 1000);
	test_cond("timed: weights round to nearest", timed_weight(1499, 1000) == 1 && timed_weight(1500, 1000) == 2 &&
		  timed_weight(7, 0) == 7);
	struct timed_range r = { .set = 1, .from_s = 0.5, .to_s = INFINITY };
	uint64_t from, to;
	timed_range_ns(&r, h, &from, &to);
	test_cond("timed: range counts from start_ns", from == 1500000000u && to == UINT64_MAX);
	json_object_set_new(h, "datatype", json_string("event"));
	test_cond("timed: a stacks role on an event section is no role", timed_role(h) == TIMED_NONE);
	json_decref(h);
	return test_report();
}
