/* ldhold — an rtld-audit library that holds a process in ld.so with a
 * library mapped but not yet relocated, as a loaded machine's processes
 * are held for a moment (the window python-versions.t's "library mapped
 * late" case looks into).
 * Usage: LD_AUDIT=build/workloads/ldhold LDHOLD_MATCH=NAME LDHOLD_UNTIL=FILE prog...
 * When ld.so has mapped an object whose path contains NAME, it burns CPU
 * (to be sampled) until FILE exists or 60 s have passed, then lets ld.so
 * go on to relocate it.
 * WORKLOAD_CFLAGS: -O1 -g -shared -fPIC
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

unsigned int la_version(unsigned int version)
{
	return version < LAV_CURRENT ? version : LAV_CURRENT;
}

/* Burn about a millisecond of CPU. */
static void burn(void)
{
	for (unsigned long i = 0; i < 300000; i++)
		sink += i ^ (sink >> 3);
}

unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
	const char *match = getenv("LDHOLD_MATCH"), *until = getenv("LDHOLD_UNTIL");
	time_t end = time(NULL) + 60;

	(void)lmid;
	(void)cookie;
	if (!match || !until || !map->l_name || !strstr(map->l_name, match))
		return 0;
	while (access(until, F_OK) != 0 && time(NULL) < end)
		burn();
	return 0;
}
