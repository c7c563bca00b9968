/* options.c — getopt_long and usage lines from one table (see options.h). */
#include "options.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define HELP_COLUMN 26		/* where the help text of an option starts */

/* The getopt_long arguments of a table, built once per table and mode: a
 * program parses one table (or a few, once each), so the last is kept. */
static const char *build(const struct options_entry *table, int inorder, struct option **longopts_out)
{
	static const struct options_entry *built;
	static int built_inorder;
	static struct option *longopts;
	static char *shortopts;

	if (table != built || inorder != built_inorder) {
		size_t n = 0;
		while (table[n].name)
			n++;
		free(longopts);
		free(shortopts);
		longopts = marple_calloc(n + 1, sizeof(*longopts));
		shortopts = marple_calloc(2 * n + 2, 1);
		char *s = shortopts;
		if (inorder)
			*s++ = '+';
		for (size_t i = 0, l = 0; i < n; i++) {
			const struct options_entry *o = &table[i];
			int arg = o->arg && o->key != OPTIONS_KEY_DESCRIBE ? required_argument : no_argument;
			if (o->name[0])
				longopts[l++] = (struct option){ o->name, arg, NULL, o->key };
			if (o->key > 0 && o->key < 256) {
				*s++ = (char)o->key;
				if (o->arg)
					*s++ = ':';
			}
		}
		built = table;
		built_inorder = inorder;
	}
	*longopts_out = longopts;
	return shortopts;
}

/* --describe: the registry's line (see OPTIONS_DESCRIBE), then exit 0. */
static noreturn void describe(const struct options_entry *table)
{
	const char *fields = "";

	for (const struct options_entry *o = table; o->name; o++)
		if (o->key == OPTIONS_KEY_DESCRIBE)
			fields = o->arg;
	printf("program=%s\t%s\toptions=", marple_progname, fields);
	int first = 1;
	for (const struct options_entry *o = table; o->name; o++) {
		if (o->key == OPTIONS_KEY_DESCRIBE)
			continue;
		if (!first)
			putchar(' ');
		first = 0;
		int letter = o->key > 0 && o->key < 256;
		if (!o->help && o->name[0])	/* an old spelling: "~--name", "~-x" */
			printf("~--%s", o->name);
		else if (!o->help)
			printf("~-%c", o->key);
		else if (o->name[0] && letter)
			printf("-%c|--%s", o->key, o->name);
		else if (o->name[0])
			printf("--%s", o->name);
		else
			printf("-%c", o->key);
		if (o->arg && o->help)
			printf("=%s", o->arg);
	}
	putchar('\n');
	marple_close_stdout();
	exit(EXIT_OK);
}

static int next_option(const struct options_entry *table, int inorder, int argc, char **argv)
{
	struct option *longopts;
	const char *shortopts = build(table, inorder, &longopts);
	int c = getopt_long(argc, argv, shortopts, longopts, NULL);

	if (c == OPTIONS_KEY_DESCRIBE)
		describe(table);
	return c;
}

int options_getopt(const struct options_entry *table, int argc, char **argv)
{
	return next_option(table, 0, argc, argv);
}

int options_getopt_inorder(const struct options_entry *table, int argc, char **argv)
{
	return next_option(table, 1, argc, argv);
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

void options_help(FILE *f, const struct options_entry *table, const struct options_help *help)
{
	const char *line = help->synopsis, *nl;

	fprintf(f, "Usage: ");
	while ((nl = strchr(line, '\n'))) {
		fprintf(f, "%s %.*s\n       ", marple_progname, (int)(nl - line), line);
		line = nl + 1;
	}
	fprintf(f, "%s %s\n%s\n", marple_progname, line, help->about);
	options_usage(f, table);
	fprintf(f, "\n%s", help->after);
}
