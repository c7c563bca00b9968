/* weight.h — what a stack section's weight measures and how it adds up.
 *
 * A collector says it in its header, beside the unit:
 *
 *   "units":{"weight":"us","measure":"off_cpu","over_time":"sum"}
 *   "units":{"weight":"bytes","measure":"inuse_space","over_time":"average"}
 *
 * (measure: on_cpu, off_cpu, time, alloc_space, inuse_space, or another
 * word; over_time: "sum" when two intervals' weights add, "average" when
 * the weight is a level, as bytes in use are).  A capture from before these
 * members is read the same: weight_meaning_of derives them here, once,
 * from what such files carry (the interface and the unit).  The exporters
 * (pprof, OTLP, Pyroscope) and the pictures take the meaning from here and
 * never from a collector's name.
 */
#ifndef MARPLE_WEIGHT_H
#define MARPLE_WEIGHT_H

#include <jansson.h>

struct weight_meaning {
	const char *unit;	/* units.weight ("samples" when not said) */
	const char *measure;	/* what it measures (see above) */
	int average;		/* over_time "average": intervals average, never add */
	/* pprof's and OTLP's sample type and its unit (samples/count,
	 * off_cpu/microseconds, inuse_space/bytes, ...) */
	const char *type, *type_unit;
};

/* The meaning of hdr's weight; the strings live as long as hdr. */
void weight_meaning_of(json_t *hdr, struct weight_meaning *m);

/* For a collector: hdr's "units" (made if missing) says its weight is unit,
 * measures measure and adds up over time (average: 0) or averages (1). */
void weight_meaning_set(json_t *hdr, const char *unit, const char *measure, int average);

#endif
