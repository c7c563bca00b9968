/* test_eventread.c — the event renderers' input loop: the time origin from
 * start_ns or the first event, the end from events and trailers, the event
 * index seen by the callback, bad lines counted, other datatypes refused;
 * cpuN tracks. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "eventread.h"
#include "test.h"

static char *write_tmp(const char *text)
{
	char *path = marple_strdup("/tmp/test_eventread.XXXXXX");
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	return path;
}

static uint64_t seen_index[8], seen_t0[8];
static int nseen;

static void on_event(struct eventread *er, const struct event_rec *e)
{
	(void)e;
	if (nseen < 8) {
		seen_index[nseen] = er->events;
		seen_t0[nseen] = er->t0;
	}
	nseen++;
	(*(int *)er->ctx)++;
}

int main(void)
{
	test_plan(11);
	char *paths[2];
	int calls = 0;

	paths[0] = write_tmp("{\"marple\":1,\"interface\":\"x\",\"datatype\":\"event\"}\n"
			     "500,a,cpu0,comm=x\nbad\n700,b,cpu1\n{\"trailer\":1,\"end_ns\":600}\n");
	paths[1] = write_tmp("{\"marple\":1,\"interface\":\"y\",\"datatype\":\"event\",\"start_ns\":100}\n"
			     "800,c,7\n{\"trailer\":1,\"end_ns\":9000}\n");
	struct eventread er = { .on_event = on_event, .ctx = &calls };
	test_cond("eventread: two files read", eventread_files(&er, 2, paths) == 0);
	test_cond("eventread: every event handed on", calls == 3 && er.events == 3);
	test_cond("eventread: the callback sees the event's index", seen_index[0] == 0 && seen_index[2] == 2);
	test_cond("eventread: origin from the first event without start_ns", er.have_t0 && er.t0 == 500 &&
		  seen_t0[0] == 500);
	test_cond("eventread: end from the latest trailer", er.end == 9000);
	test_cond("eventread: sections and bad lines counted", er.sections == 2 && er.bad == 1);

	unlink(paths[0]);
	free(paths[0]);
	paths[0] = write_tmp("{\"marple\":1,\"interface\":\"x\",\"datatype\":\"event\",\"start_ns\":50}\n"
			     "900,a,cpu0\n{\"marple\":1,\"interface\":\"s\",\"datatype\":\"stack\"}\n1#a\n");
	struct eventread er2 = { .on_event = on_event, .ctx = &calls };
	calls = 0;
	test_cond("eventread: a stack section ends reading", eventread_files(&er2, 2, paths) < 0);
	test_cond("eventread: origin from start_ns, end from the event", er2.t0 == 50 && er2.end == 900);
	test_cond("eventread: nothing read after the stack section", calls == 1 && er2.sections == 1);
	unlink(paths[0]);
	unlink(paths[1]);
	free(paths[0]);
	free(paths[1]);

	uint64_t cpu = 99;
	test_cond("eventread: cpu12 is CPU 12", eventread_track_cpu(MSTR("cpu12"), &cpu) == 0 && cpu == 12);
	test_cond("eventread: cpu, cpux, cpu-1 and 4711 are not CPUs",
		  eventread_track_cpu(MSTR("cpu"), &cpu) < 0 && eventread_track_cpu(MSTR("cpux"), &cpu) < 0 &&
		  eventread_track_cpu(MSTR("cpu-1"), &cpu) < 0 && eventread_track_cpu(MSTR("4711"), &cpu) < 0);
	return test_report();
}
