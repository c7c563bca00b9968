/* marple-dummyview — a renderer that exists only in tests/driver/registry.t:
 * copied into a temporary copy of the tree to show that a new renderer needs
 * its own files and nothing else.  An HTML page with the weight of the stack
 * sections it reads. */
#include <getopt.h>
#include <stdlib.h>

#include "options.h"
#include "stream.h"
#include "util.h"

static const struct options_entry options[] = {
	{ 't', "title", "TEXT", "the page's title" },
	OPTIONS_OUTPUT,
	OPTIONS_DESCRIBE("kind=renderer\tdisplay=dummyview,dv\treads=stack\text=html"),
	OPTIONS_HELP,
	{ 0 }
};

static const struct options_help help = {
	.synopsis = "[-o FILE] [FILE]",
	.about = "Write the total weight of stack sections as a page (a test renderer).\n",
	.after = "Exit: 0 ok, 1 bad input, 2 usage.\n",
};

int main(int argc, char **argv)
{
	const char *out = NULL, *title = "dummyview";
	unsigned long long records = 0;
	int c;

	marple_init(argc, argv);
	while ((c = options_getopt(options, argc, argv)) != -1) {
		switch (c) {
		case 't': title = optarg; break;
		case 'o': out = optarg; break;
		case 'h': options_help(stdout, options, &help); marple_close_stdout(); return EXIT_OK;
		default: marple_usage_try();
		}
	}
	const char *path = optind < argc ? argv[optind] : "-";
	FILE *f = marple_open_input(path);
	struct stream_reader *r = stream_reader_new(f, marple_input_name(path));
	enum stream_item it;
	while ((it = stream_reader_next(r)) != STREAM_EOF)
		if (it == STREAM_RECORD)
			records++;
	stream_reader_free(r);
	struct outfile *o = marple_outfile_open(out);
	fprintf(marple_outfile_stream(o), "<!doctype html><title>dummy</title><p>dummyview of %llu stacks (%s)</p>\n",
		records, title[0] == '<' ? "?" : "titled");
	return marple_outfile_commit(o) < 0 ? EXIT_DATA : EXIT_OK;
}
