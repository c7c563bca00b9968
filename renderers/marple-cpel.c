/* marple-cpel — marple event sections -> CPEL for VPP's G2 viewer and cpeldump.
 *
 * Reads event sections (files or stdin) and writes one CPEL file: one track
 * per CPU (the records' track) or per process (--track pid), one event
 * definition per event type, each event's datum the process it is about
 * ("comm (pid)") or the fields chosen with --datum.  Times are nanoseconds
 * (1e9 ticks per second) on the stream's clock.
 *
 *   $ sudo marple-cpusched 10 | marple-cpel > out.cpel
 *   81723361230,sched_switch,cpu1,comm=bash,pid=311,...
 *   -> track "cpu1", event "sched_switch", datum "bash (311)"
 *
 * Memory stays bounded for any number of events (sorted runs spilled to a
 * temporary file in $TMPDIR); time-ordered input is streamed.
 */
#include <getopt.h>
#include <string.h>
#include <unistd.h>

#include "cpel.h"
#include "options.h"
#include "stream.h"
#include "util.h"

enum { O_RUN_EVENTS = 256, O_TRACK, O_DATUM };
static const struct options_entry options[] = {
	{ O_TRACK, "track", "MODE", "cpu: one track per record track (cpuN; default)\n"
				"pid: one track per process (\"comm (pid)\")" },
	{ 't', "", "MODE", NULL },	/* old spellings: -t is a thread's, -d a disk's */
	{ O_DATUM, "datum", "KEYS", "show these fields as each event's datum\n"
				"(default: \"comm (pid)\"; with --track pid: the CPU)" },
	{ 'd', "", "KEYS", NULL },
	OPTIONS_OUTPUT,
	{ O_RUN_EVENTS, "run-events", "N", NULL },	/* for tests: events per sorted run */
	OPTIONS_DESCRIBE("kind=renderer\tdisplay=g2,cpel\treads=event\text=cpel\tdefault-for=event\tconfig=track:--track"),
	OPTIONS_HELP,
	{ 0 }
};

static const struct options_help help = {
	.synopsis = "[--track cpu|pid] [--datum KEY[,KEY...]] [-o FILE] [FILE...]",
	.about = "Convert marple event sections to a CPEL file (VPP's G2 viewer, cpeldump).\n",
	.after = "With no FILE, or FILE '-', read stdin.  Exit: 0 ok, 1 bad or no input, 2 usage.\n"
	         "See marple-cpel(1).\n",
};

int main(int argc, char **argv)
{
	struct cpel_opts o = { 0 };
	const char *outpath = NULL;
	int c;

	marple_init(argc, argv);
	while ((c = options_getopt(options, argc, argv)) != -1) {
		switch (c) {
		case 't':
		case O_TRACK:
			if (strcmp(optarg, "cpu") == 0)
				o.track = CPEL_TRACK_EVENT;
			else if (strcmp(optarg, "pid") == 0)
				o.track = CPEL_TRACK_PID;
			else
				marple_usage_error("--track: '%s' is not cpu or pid", optarg);
			break;
		case 'd':
		case O_DATUM: o.datum = optarg; break;
		case 'o': outpath = optarg; break;
		case O_RUN_EVENTS: o.run_events = (size_t)marple_opt_u64("--run-events", optarg, 1, 1u << 28); break;
		case 'h': options_help(stdout, options, &help); return EXIT_OK;
		default: marple_usage_try();
		}
	}
	if (isatty(1) && !outpath)
		marple_usage_error("CPEL is binary: redirect stdout or use -o FILE");

	struct cpel_conv *conv = cpel_conv_new(&o);
	int nin = argc - optind;
	for (int i = 0; i < (nin ? nin : 1); i++) {
		const char *path = nin ? argv[optind + i] : "-";
		FILE *f = marple_open_input(path);
		uint64_t events_before = cpel_conv_events(conv), bad_before = cpel_conv_bad_lines(conv);
		cpel_conv_set_name(conv, marple_input_name(path));
		int r = cpel_conv_feed_file(conv, f);
		if (f != stdin)
			fclose(f);
		/* marple-format(5): an unusable input makes no file */
		const char *why = r < 0 ? NULL : stream_unusable_why(cpel_conv_events(conv) - events_before,
			cpel_conv_bad_lines(conv) - bad_before, cpel_conv_nul_line(conv));
		if (why)
			marple_warn_at(marple_input_name(path), 0, "%s", why);
		if (r < 0 || why) {
			cpel_conv_free(conv);
			return EXIT_DATA;
		}
	}
	if (cpel_conv_bad_lines(conv)) {
		/* as the other event renderers (eventread_finish): no file */
		marple_warn("%llu bad lines: nothing written", (unsigned long long)cpel_conv_bad_lines(conv));
		cpel_conv_free(conv);
		return EXIT_DATA;
	}
	if (cpel_conv_sections(conv) == 0) {
		marple_warn_at(marple_operands_name(nin, argv + optind), 0, "no marple event section in the input");
		cpel_conv_free(conv);
		return EXIT_DATA;
	}
	if (cpel_conv_events(conv) == 0) {
		marple_warn("no events in the input");
		cpel_conv_free(conv);
		return EXIT_DATA;
	}
	struct outfile *of = marple_outfile_open(outpath);
	if (!of) {
		cpel_conv_free(conv);
		return EXIT_DATA;
	}
	if (cpel_conv_write(conv, marple_outfile_stream(of)) < 0) {
		cpel_conv_free(conv);
		if (ferror(marple_outfile_stream(of)))
			marple_outfile_commit(of);	/* says "write error"; leaves no file */
		else
			marple_outfile_abort(of);
		return EXIT_DATA;
	}
	cpel_conv_free(conv);
	if (marple_outfile_commit(of) < 0)
		return EXIT_DATA;
	return EXIT_OK;
}
