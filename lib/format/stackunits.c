/* stackunits.c — stacks of different weight units never add (stackunits.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stackunits.h"
#include "stream.h"
#include "util.h"

const char *stackunits_of(json_t *hdr)
{
	const char *w = json_string_value(json_object_get(json_object_get(hdr, "units"), "weight"));
	return w && *w ? w : "samples";
}

int stackunits_admit(struct stackunits *u, json_t *hdr, const char *file, unsigned long line, long section)
{
	const char *unit = stackunits_of(hdr);
	const char *iface = stream_header_str(hdr, "interface", "?");

	if (!u->unit) {
		char where[512];
		snprintf(where, sizeof(where), "%s section %ld (%s)", file, section, iface);
		u->unit = marple_strdup(unit);
		u->first = marple_strdup(where);
		return 1;
	}
	if (strcmp(u->unit, unit) == 0)
		return 1;
	u->skipped++;
	marple_warn_at(file, line, "section %ld (%s) weighs %s, not %s as %s: skipped (stacks of different "
		       "units never add; select it with marple-cat -s %ld)", section, iface, unit, u->unit,
		       u->first, section);
	return 0;
}

void stackunits_free(struct stackunits *u)
{
	free(u->unit);
	free(u->first);
	*u = (struct stackunits){ 0 };
}
