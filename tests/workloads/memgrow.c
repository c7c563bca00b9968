/* memgrow — a process whose memory grows by a known amount, for memtime's test.
 * Sleeps BEFORE seconds, then allocates MIB MiB and writes every page, then
 * sleeps AFTER seconds and exits.
 *
 *   memgrow [BEFORE [AFTER [MIB]]]     (defaults 1 3 100)
 *
 * WORKLOAD_CFLAGS: -O2 -g
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	double before = argc > 1 ? atof(argv[1]) : 1, after = argc > 2 ? atof(argv[2]) : 3;
	size_t mib = argc > 3 ? (size_t)atol(argv[3]) : 100;
	long page = sysconf(_SC_PAGESIZE);

	usleep((useconds_t)(before * 1e6));
	volatile char *p = malloc(mib << 20);
	if (!p)
		return 1;
	for (size_t i = 0; i < mib << 20; i += (size_t)page)
		p[i] = (char)i;	/* touch: now resident and private */
	usleep((useconds_t)(after * 1e6));
	return p[page] == 0 ? 0 : 0;
}
