/* test_cpuclock — samples asked for against samples delivered: like with
 * like.  The cpu-clock timer fires on idle CPUs too and the program runs
 * there (to return at once), so its runs are no measure of the busy time's
 * samples: a 1 s capture of 2 CPUs, one idle, asked for 99 and ran 195
 * times ("got 195 (+97%)"). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpuclock.h"
#include "test.h"
#include "util.h"

static char said[1024];	/* what the last sampling() printed on stderr */

/* The trailer's sampling object for a, and whether stderr got a line. */
static json_t *sampling(const struct cpuclock_account *a, uint64_t counted, int *warned)
{
	char path[] = "/tmp/test_cpuclock.XXXXXX";
	int fd = mkstemp(path), saved = dup(2);
	json_t *tr = json_object();

	fflush(stderr);
	dup2(fd, 2);
	cpuclock_trailer_add(tr, a, counted, 0);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	*warned = lseek(fd, 0, SEEK_END) > 0;
	ssize_t n = pread(fd, said, sizeof(said) - 1, 0);
	said[n > 0 ? n : 0] = 0;
	close(fd);
	unlink(path);
	json_t *s = json_incref(json_object_get(tr, "sampling"));
	json_decref(tr);
	return s;
}

int main(int argc, char **argv)
{
	test_plan(7);
	marple_init(argc, argv);
	int warned;

	/* 2 CPUs for 1 s, one idle: 99 asked of the busy second, 99 counted,
	 * 195 runs (96 of them the idle task's) */
	struct cpuclock_account half = { .freq = 99, .clock_ns = 2000000000, .idle_ns = 1000000000,
					 .asked = 99, .have_runs = 1, .runs = 195 };
	json_t *s = sampling(&half, 99, &warned);
	test_cond("half idle: delivered is the samples counted, not the runs",
		  json_integer_value(json_object_get(s, "delivered")) == 99);
	test_cond("half idle: no line on stderr", !warned);
	json_decref(s);

	/* a real shortfall is still said */
	s = sampling(&half, 80, &warned);
	test_cond("20% short: said", warned && json_integer_value(json_object_get(s, "delivered")) == 80);
	json_decref(s);

	/* -I: all the time asked for, all the samples counted */
	struct cpuclock_account all = { .freq = 99, .clock_ns = 2000000000, .idle_ns = 1000000000,
					.asked = 198, .have_runs = 1, .runs = 198, .include_idle = 1 };
	s = sampling(&all, 198, &warned);
	test_cond("-I: 198 of 198, no line", !warned && json_integer_value(json_object_get(s, "delivered")) == 198);
	json_decref(s);

	/* issue 39: a 4% surplus on a machine with steal time was "explained"
	 * by the steal time, which can only lose samples */
	struct cpuclock_account stolen = { .freq = 99, .clock_ns = 20000000000ull, .idle_ns = 0,
					   .asked = 1980, .steal_ns = 2000000000 };
	s = sampling(&stolen, 2060, &warned);
	test_cond("surplus: said, without steal time as its cause",
		  warned && strstr(said, "(+4.0%)") && !strstr(said, "steal time)") && strstr(said, "can only lose"));
	json_decref(s);
	s = sampling(&stolen, 1700, &warned);
	test_cond("shortfall: steal time still named as a cause", warned && strstr(said, "(steal time)"));
	json_decref(s);

	/* marple's own samples, left out of the stacks, are said to be among
	 * those got (they count against the busy time that includes them) */
	stolen.self_excluded = 604;
	s = sampling(&stolen, 1700, &warned);
	test_cond("self-excluded samples named in 'got N'",
		  warned && strstr(said, "got 1700 (-14.1%, 604 of them marple's own, left out of the stacks)"));
	json_decref(s);
	return test_report();
}
