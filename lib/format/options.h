/* options.h — one table per program gives both getopt_long and the option
 * lines of its usage, so what -h says and what is parsed cannot drift apart.
 *
 *   enum { OPT_TITLE = 256 };                 // long-only options: keys >= 256
 *   static const struct options_entry options[] = {
 *           { OPT_TITLE, "title", "TEXT", "page title" },
 *           { 'd', "depth", "N", "keep N levels below the root\n(default: all)" },
 *           OPTIONS_HELP,                     // { 'h', "help", NULL, "this help" }
 *           { 0 }
 *   };
 *   while ((c = options_getopt(options, argc, argv)) != -1)
 *           switch (c) { case 'd': ...; default: marple_usage_try(); }
 *   ...
 *   options_usage(stdout, options);     // "  -d, --depth N           keep N ..."
 *   options_help(stdout, options, &help); // -h: usage line, about, the above, after
 *
 * The table must stay valid while options_getopt is called with it.
 */
#ifndef MARPLE_OPTIONS_H
#define MARPLE_OPTIONS_H

#include <stdio.h>

/* What a program is, for the registry (make collects every program's
 * --describe into $(O)/marple-registry; the driver reads it): one line of
 * tab-separated KEY=VALUE fields, "program=marple-X" first, then the FIELDS
 * given here, then "options=" with the table's options, space-separated:
 * "-o|--output=FILE" (a letter and a long name), "--title=TEXT" (long only),
 * "-1" (a letter only), "~--annotate" (accepted, not listed: help NULL, an
 * old spelling or an option for tests).
 * FIELDS are tab-separated KEY=VALUE too, the keys (marple(1), REGISTRY):
 *   kind=collector|filter|renderer|supervisor|helper
 *   sections=INTERFACE:DATATYPE:DISPLAY,...   a collector's sections and the
 *                                             display each gets by default
 *   measures=TEXT             what a collector measures, in a line (marple list)
 *   display=NAME,ALIAS,...    the display a renderer is in the driver (-fg ...)
 *   reads=DATATYPE,...        the datatypes it draws
 *   ext=EXT                   its output file's extension
 *   default-for=DATATYPE      the display of a datatype nobody chose one for
 *   config=KEY:OPTION,...     config [DISPLAY] KEY passed as OPTION VALUE
 *                             (OPTION "--": as --VALUE); a collector's
 *                             [INTERFACE] KEY the same, and for a flag
 *                             yes|no|auto (lib/format/plan.h)
 * The entry is hidden from the usage; options_getopt answers it and exits 0. */
#define OPTIONS_KEY_DESCRIBE 0x7ffe
#define OPTIONS_DESCRIBE(fields) { OPTIONS_KEY_DESCRIBE, "describe", fields, NULL }

/* The two entries nearly every program has. */
#define OPTIONS_OUTPUT { 'o', "output", "FILE", "write to FILE (complete or not at all) instead of stdout" }
#define OPTIONS_HELP { 'h', "help", NULL, "this help" }
/* -u of every reader of stacks (stackfilter.h's kernel threads left out) */
#define OPTIONS_USER_THREADS_ONLY                                                          \
	{ 'u', "user-threads-only", NULL, "leave kernel threads' stacks out (kworker, ksoftirqd,\n" \
					   "rcu_*...: counted and named on stderr)" }

struct options_entry {
	int key;		/* its letter, or a value >= 256 for a long-only option */
	const char *name;	/* the long option ("": a short option only); NULL ends the table */
	const char *arg;	/* the argument's name in the usage ("N"); NULL: takes none
				 * (OPTIONS_DESCRIBE: the program's fields) */
	const char *help;	/* usage text, a '\n' continues it on an indented line;
				 * NULL: accepted but not listed, an old spelling
				 * kept for scripts (lib/format/options.md) */
};

/* getopt_long over the table (built once per table): the next option's key,
 * '?' after getopt's message for an unknown one or a missing argument, or -1
 * at the first operand (then optind is its index). */
int options_getopt(const struct options_entry *table, int argc, char **argv);
/* The same, but nothing after the first operand is an option of ours (getopt's
 * '+'): there a command line of its own begins, as marple-collect's
 * NAME PROGRAM [ARG...] whose ARGs are the collector's options.  Switching a
 * parse between the two modes needs optind = 0 first (glibc reads the mode
 * when it starts over). */
int options_getopt_inorder(const struct options_entry *table, int argc, char **argv);

/* The table's usage lines, in table order, the help text in one column. */
void options_usage(FILE *f, const struct options_entry *table);

/* The rest of a program's -h, around the table's lines. */
struct options_help {
	const char *synopsis;	/* "[OPTION]... [FILE]..."; more lines after '\n' */
	const char *about;	/* what the program does, each line ending in '\n' */
	const char *after;	/* operands, exit statuses, the man page; the same */
};

/* "Usage: PROG SYNOPSIS" (a further synopsis line under it, PROG repeated),
 * ABOUT, a blank line, the option lines, a blank line, AFTER. */
void options_help(FILE *f, const struct options_entry *table, const struct options_help *help);

#endif
