/* marple-dummy — a collector that exists only in tests/driver/registry.t: it
 * is copied into a temporary copy of the tree to show that a new collector
 * needs its own files and nothing else.  Writes one stack section. */
#include <stdlib.h>

#include "options.h"
#include "stream.h"
#include "util.h"

static const struct options_entry options[] = {
	OPTIONS_DESCRIBE("kind=collector\tsections=dummy:stack:dummyview"),
	OPTIONS_HELP,
	{ 0 }
};

static const struct options_help help = {
	.synopsis = "[DURATION]",
	.about = "Write one stack section of two stacks (a test collector).\n",
	.after = "Exit: 0 ok, 1 write error, 2 usage.\n",
};

int main(int argc, char **argv)
{
	static const char *const a[] = { "dummy", "main", "work" }, *const b[] = { "dummy", "main", "rest" };
	int c;

	marple_init(argc, argv);
	while ((c = options_getopt(options, argc, argv)) != -1) {
		if (c != 'h')
			marple_usage_try();
		options_help(stdout, options, &help);
		marple_close_stdout();
		return EXIT_OK;
	}
	json_t *h = stream_section_header_new("dummy", DATATYPE_STACK);
	stream_write_json(stdout, h);
	json_decref(h);
	stream_write_stack_cstr(stdout, 7, a, 3);
	stream_write_stack_cstr(stdout, 3, b, 3);
	json_t *t = stream_section_trailer_new(2, 0, 0, "duration");
	stream_write_json(stdout, t);
	json_decref(t);
	marple_close_stdout();
	return EXIT_OK;
}
