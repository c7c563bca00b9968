/* test_timed.c — samples of timed stack sections: parsing, what of a sample
 * lies in a range (instants and durations), weights in the section's unit. */
#include <math.h>
#include <string.h>

#include "test.h"
#include "timed.h"

/* The long way: the stream reader's record, then timed_sample_parse; 0 or -1. */
static int parse_long(const char *line, struct timed_sample *s)
{
	char buf[512];
	const char *why;
	int n = snprintf(buf, sizeof(buf), "{\"marple\":1,\"interface\":\"t\",\"datatype\":\"event\"}\n%s\n", line);
	FILE *f = fmemopen(buf, (size_t)n, "r");
	struct stream_reader *r = stream_reader_new(f, "t");
	int rc = stream_reader_next(r) == STREAM_HEADER && stream_reader_next(r) == STREAM_RECORD &&
		 timed_sample_parse(stream_reader_event(r), s, &why) == 0 ? 0 : -1;
	stream_reader_free(r);
	fclose(f);
	return rc;
}

/* The fast parser agrees with the long way: what it parses, the long way parses
 * the same; what the long way refuses, it refuses; fast says whether it took the line. */
static int agrees(const char *line, int fast)
{
	struct timed_sample a = { 0 }, b = { 0 };
	int ra = timed_sample_parse_text(line, strlen(line), &a), rb = parse_long(line, &b);
	if (ra == 0 && (rb != 0 || memcmp(&a, &b, sizeof(a)) != 0))
		return 0;
	return (ra == 0) == fast && (rb == 0 || ra != 0);
}

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

	test_plan(16);

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

	static const struct { const char *line; int fast; } lines[] = {
		{ "1000000000000,sample,cpu12,stack=1234,pid=1012,tid=1262", 1 },
		{ "5,block,cpu1,stack=1,pid=42,tid=43,dur=2500000", 1 },
		{ "5,sample,,stack=0", 1 },
		{ "5,sample,cpu0,comm=a=b,stack=3,stack=9", 1 },
		{ "18446744073709551615,sample,cpu0,stack=1", 1 },
		{ "18446744073709551616,sample,cpu0,stack=1", 0 },
		{ "5,s%41mple,cpu0,stack=1", 0 },
		{ "5,sample,cpu0,st%61ck=7", 0 },
		{ "5,sample,cpu0,stack=7%30", 0 },
		{ "5,,cpu0,stack=1", 0 },
		{ "5,sample,cpu0,stack=", 0 },
		{ "5,sample,cpu0,stack=1,", 0 },
		{ "5,sample,cpu0,stack=1,pid", 0 },
		{ "5,sample,cpu0,stack=4294967296", 0 },
		{ "5,sample,cpu0,stack=1,dur=18446744073709551611", 0 },
		{ "5,sample,cpu0,stack=12x", 0 },
		{ "5,sample,cpu0,pid=3", 0 },
		{ "x5,sample,cpu0,stack=1", 0 },
		{ "5,sample", 0 },
		{ "5,sample,cpu0,stack=1,pid=1=2", 0 },
	};
	int all = 1;
	for (size_t i = 0; i < sizeof(lines) / sizeof(*lines); i++)
		if (!agrees(lines[i].line, lines[i].fast)) {
			printf("# timed_sample_parse_text disagrees on: %s\n", lines[i].line);
			all = 0;
		}
	test_cond("timed: the fast sample parser agrees with the stream reader's on 20 lines", all);
	return test_report();
}
