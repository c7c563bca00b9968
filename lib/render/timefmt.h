/* timefmt.h — one way to print times and durations on every page: the unit
 * by magnitude (ns, µs, ms, s), a few significant digits, trailing zeros
 * dropped: "850 ns", "12.3 µs", "4.5 ms", "1.23 s", "1560 s", "0 s".
 * lib/render/timefmt.js is the same for the pages' scripts (tooltips), so an
 * axis and a tooltip never disagree about how a time looks.
 *
 *   char b[32];
 *   timefmt_ns(b, sizeof(b), 12345678, 3);	// "12.3 ms"
 */
#ifndef MARPLE_TIMEFMT_H
#define MARPLE_TIMEFMT_H

#include <stddef.h>


/* ns as "<value> <unit>" with sig significant digits (1 to 15; whole seconds
 * of 1000 s or more keep all their digits); returns the length. */
size_t timefmt_ns(char *buf, size_t size, double ns, int sig);

#endif
