/* marple-config — marple's configuration as lib/format/config.c reads it for
 * every program that uses it: the built-in defaults (the original MARPLE's, and each collector's
 * pictures from the registry), then /etc/marple/config, then the user's
 * ($XDG_CONFIG_HOME/marple/config or ~/.config/marple/config), or only
 * $MARPLE_CONFIG.  Every line is checked against what the programs are (the
 * registry: interfaces, displays, renderers' keys); the first bad one is named
 * with its file and line, exit 2.  What the driver reads:
 *
 *   $ marple-config --registry build/marple-registry
 *   General	time	10
 *   DisplayInterfaces	callstack	flamegraph
 *   ...
 *
 * one "SECTION<TAB>KEY<TAB>VALUE" line a setting, later ones winning; with
 * --print, the effective configuration for people, as `marple config` shows it.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "options.h"
#include "util.h"

enum { OPT_REGISTRY = 256, OPT_PRINT };
static const struct options_entry options[] = {
	{ OPT_REGISTRY, "registry", "FILE", "what the programs are (make's marple-registry)" },
	{ OPT_PRINT, "print", NULL, "the effective configuration for people (marple config)" },
	{ 'n', "name", "NAME", "call this program NAME in messages" },
	OPTIONS_DESCRIBE("kind=helper"),
	OPTIONS_HELP,
	{ 0 }
};

static const struct options_help help = {
	.synopsis = "--registry FILE [--print] [-n NAME]",
	.about = "Read marple's configuration (built-in defaults, /etc/marple/config, the user's;\n"
		 "or $MARPLE_CONFIG only), check it against the registry of programs, and print\n"
		 "one SECTION<TAB>KEY<TAB>VALUE line a setting (later lines win).\n",
	.after = "Exit: 0 ok, 1 a file cannot be read, 2 a bad line (named with file and line)\n"
		 "or usage.  See marple-config(1) and marple(1), CONFIGURATION.\n",
};

int main(int argc, char **argv)
{
	const char *registry = NULL;
	int print = 0, c;

	marple_init(argc, argv);
	while ((c = options_getopt(options, argc, argv)) != -1) {
		switch (c) {
		case OPT_REGISTRY: registry = optarg; break;
		case OPT_PRINT: print = 1; break;
		case 'n': marple_progname = optarg; break;
		case 'h': options_help(stdout, options, &help); marple_close_stdout(); return EXIT_OK;
		default: marple_usage_try();
		}
	}
	if (!registry || optind < argc)
		marple_usage_error(registry ? "unexpected operand '%s'" : "--registry FILE is needed", argv[optind]);
	int status = config_load(registry, 0);
	if (status)
		return status;
	if (print)
		config_print(stdout);
	else
		fputs(config_settings(), stdout);
	marple_close_stdout();
	return EXIT_OK;
}
