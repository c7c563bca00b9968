/* weight.c — a stack section's weight: what it measures, how it adds up,
 * and the sample type exporters give it (weight.h). */
#include <string.h>

#include "stream.h"
#include "weight.h"

/* Captures from before "measure": what the interface and unit meant then
 * (marple-pprof(1) listed it), in this one place. */
static const char *legacy_measure(const char *iface, const char *unit, int *average)
{
	*average = 0;
	if (stream_time_unit_ns(unit, NULL))
		return strcmp(iface, "offcpu") == 0 ? "off_cpu" : "time";
	if (strcmp(unit, "bytes") == 0) {
		if (strcmp(iface, "memleak") == 0) {
			*average = 1;
			return "inuse_space";
		}
		return strcmp(iface, "mallocstacks") == 0 ? "alloc_space" : "space";
	}
	if (strcmp(unit, "samples") == 0 && strcmp(iface, "callstack") == 0)
		return "on_cpu";
	return unit;
}

void weight_meaning_of(json_t *hdr, struct weight_meaning *m)
{
	json_t *units = json_object_get(hdr, "units");
	const char *unit = json_string_value(json_object_get(units, "weight"));
	const char *measure = json_string_value(json_object_get(units, "measure"));
	const char *over = json_string_value(json_object_get(units, "over_time"));
	const char *tname;

	m->unit = unit ? unit : "samples";
	if (measure) {
		m->measure = measure;
		m->average = over && strcmp(over, "average") == 0;
	} else {
		m->measure = legacy_measure(stream_header_str(hdr, "interface", ""), m->unit, &m->average);
	}
	if (strcmp(m->unit, "samples") == 0) {
		m->type = "samples", m->type_unit = "count";
	} else if (stream_time_unit_ns(m->unit, &tname)) {
		m->type = m->measure, m->type_unit = tname;
	} else if (strcmp(m->unit, "bytes") == 0) {
		m->type = m->measure, m->type_unit = "bytes";
	} else {
		m->type = m->measure, m->type_unit = "count";
	}
}

void weight_meaning_set(json_t *hdr, const char *unit, const char *measure, int average)
{
	json_t *units = json_object_get(hdr, "units");

	if (!json_is_object(units)) {
		units = json_object();
		json_object_set_new(hdr, "units", units);
	}
	json_object_set_new(units, "weight", json_string(unit));
	json_object_set_new(units, "measure", json_string(measure));
	json_object_set_new(units, "over_time", json_string(average ? "average" : "sum"));
}
