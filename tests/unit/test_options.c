/* test_options.c — one option table gives getopt_long in both modes (options
 * anywhere; options only before the first operand, for marple-collect whose
 * collectors' options follow their names), the usage lines and the whole -h. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "util.h"
#include "test.h"

enum { OPT_LONGONLY = 256 };
static const struct options_entry table[] = {
	{ 't', "time", "DURATION", "how long" },
	{ 'f', "force", NULL, "replace FILE\nif it exists" },
	{ OPT_LONGONLY, "long-only", "N", "no letter" },
	{ 'q', "", NULL, "a letter only" },
	{ 'x', "old", NULL, NULL },
	OPTIONS_HELP,
	{ 0 }
};

/* The keys an argv gives (one letter each, 'L' for the long-only one, '?' for
 * an error), optarg after '=' for those that take one; *first: optind at the end. */
static void parse(int inorder, char **argv, char *keys, size_t size, int *first)
{
	int argc = 0, c;
	size_t n = 0;

	while (argv[argc])
		argc++;
	optind = 0;	/* start over: glibc reads the mode ('+') then */
	opterr = 0;
	keys[0] = 0;
	while ((c = inorder ? options_getopt_inorder(table, argc, argv) : options_getopt(table, argc, argv)) != -1) {
		int k = c == OPT_LONGONLY ? 'L' : c;
		n += (size_t)snprintf(keys + n, size - n, "%c%s%s", k, optarg ? "=" : "", optarg ? optarg : "");
	}
	*first = optind;
}

int main(void)
{
	test_plan(10);
	char keys[128];
	int first;

	{
		char *argv[] = { "p", "NAME", "PROG", "-t", "5", "-f", NULL };
		parse(0, argv, keys, sizeof keys, &first);
		test_cond("options_getopt: options after an operand are ours", strcmp(keys, "t=5f") == 0);
		test_cond("options_getopt: operands moved to the end", first == 4 && strcmp(argv[4], "NAME") == 0);
	}
	{
		char *argv[] = { "p", "-t", "5", "--force", "NAME", "PROG", "-t", "9", "-f", NULL };
		parse(1, argv, keys, sizeof keys, &first);
		test_cond("options_getopt_inorder: stops at the first operand", strcmp(keys, "t=5f") == 0);
		test_cond("options_getopt_inorder: what follows is left as it was",
			  first == 4 && strcmp(argv[4], "NAME") == 0 && strcmp(argv[6], "-t") == 0 &&
				  strcmp(argv[7], "9") == 0);
	}
	{
		char *argv[] = { "p", "--time=2m", "-q", "--", "NAME", "-f", NULL };
		parse(1, argv, keys, sizeof keys, &first);
		test_cond("options_getopt_inorder: '--' ends the options, --opt=ARG and a letter-only option",
			  strcmp(keys, "t=2mq") == 0 && first == 4);
	}
	{
		char *argv[] = { "p", "--long-only", "3", "-x", "-z", NULL };
		parse(1, argv, keys, sizeof keys, &first);
		test_cond("options_getopt_inorder: long-only key, an unlisted spelling, '?' for an unknown",
			  strcmp(keys, "L=3x?") == 0);
	}
	{
		/* the same table in the other mode right after: rebuilt, not the cached '+' */
		char *argv[] = { "p", "NAME", "-f", NULL };
		parse(0, argv, keys, sizeof keys, &first);
		test_cond("options_getopt after options_getopt_inorder: permutes again", strcmp(keys, "f") == 0 && first == 2);
		char *argv2[] = { "p", "-f", "-t", NULL };
		parse(0, argv2, keys, sizeof keys, &first);
		test_cond("options_getopt: a missing argument is '?'", strcmp(keys, "f?") == 0);
	}
	{
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		options_usage(f, table);
		fclose(f);
		const char *want = "  -t, --time DURATION     how long\n"
				   "  -f, --force             replace FILE\n"
				   "                          if it exists\n"
				   "      --long-only N       no letter\n"
				   "  -q                      a letter only\n"
				   "  -h, --help              this help\n";
		test_cond("options_usage: the table's lines, an unlisted spelling left out", strcmp(buf, want) == 0);
		free(buf);
	}
	{
		static const struct options_help help = {
			.synopsis = "[OPTION]... [FILE]...\n--diff A B",
			.about = "Do a thing.\n",
			.after = "See p(1).\n",
		};
		static const struct options_entry one[] = { OPTIONS_HELP, { 0 } };
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		marple_progname = "p";
		options_help(f, one, &help);
		fclose(f);
		const char *want = "Usage: p [OPTION]... [FILE]...\n"
				   "       p --diff A B\n"
				   "Do a thing.\n"
				   "\n"
				   "  -h, --help              this help\n"
				   "\n"
				   "See p(1).\n";
		test_cond("options_help: synopsis lines, about, options, after", strcmp(buf, want) == 0);
		free(buf);
	}
	return test_report();
}
