/* options.c — getopt_long and usage lines from one table (see options.h). */
#include "options.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define HELP_COLUMN 26		/* where the help text of an option starts */

int options_getopt(const struct options_entry *table, int argc, char **argv)
{
	/* a program parses one table (or a few, once each): keep the last built */
	static const struct options_entry *built;
	static struct option *longopts;
	static char *shortopts;

	if (table != built) {
		size_t n = 0;
		while (table[n].name)
			n++;
		free(longopts);
		free(shortopts);
		longopts = marple_calloc(n + 1, sizeof(*longopts));
		shortopts = marple_calloc(2 * n + 1, 1);
		char *s = shortopts;
		for (size_t i = 0, l = 0; i < n; i++) {
			const struct options_entry *o = &table[i];
			if (o->name[0])
				longopts[l++] = (struct option){ o->name, o->arg ? required_argument : no_argument, NULL,
								 o->key };
			if (o->key > 0 && o->key < 256) {
				*s++ = (char)o->key;
				if (o->arg)
					*s++ = ':';
			}
		}
		built = table;
	}
	return getopt_long(argc, argv, shortopts, longopts, NULL);
}

void options_usage(FILE *f, const struct options_entry *table)
{
	for (const struct options_entry *o = table; o->name; o++) {
		int n;
		if (!o->help)
			continue;
		if (!o->name[0])
			n = fprintf(f, "  -%c", o->key);
		else if (o->key > 0 && o->key < 256)
			n = fprintf(f, "  -%c, --%s", o->key, o->name);
		else
			n = fprintf(f, "      --%s", o->name);
		if (o->arg)
			n += fprintf(f, " %s", o->arg);
		if (n > HELP_COLUMN - 2)	/* no room: the help on the next line */
			fprintf(f, "\n%*s", HELP_COLUMN, "");
		else
			fprintf(f, "%*s", HELP_COLUMN - n, "");
		for (const char *h = o->help, *nl; *h; h = nl + 1) {
			nl = strchr(h, '\n');
			if (!nl) {
				fprintf(f, "%s\n", h);
				break;
			}
			fprintf(f, "%.*s\n%*s", (int)(nl - h), h, HELP_COLUMN, "");
		}
	}
}
