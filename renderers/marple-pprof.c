/* marple-pprof — marple stack sections (or folded text) as one gzipped pprof
 * profile (profile.proto), the format go tool pprof, Parca and Pyroscope read.
 *
 * Each stack record becomes one sample: its frames one location each (leaf
 * first, as pprof wants), its weight the values of the sample types the
 * section's unit names, and labels host, comm (the root frame) and, where the
 * section has them, pid, tid and cpu.  Several inputs merge into one profile
 * when their sample types match (a fleet's captures), host telling them apart.
 *
 *   $ marple-pprof cpu.marple > cpu.pb.gz && go tool pprof -top cpu.pb.gz
 *   $ marple-pprof db1/cpu.marple db2/cpu.marple > fleet.pb.gz
 *
 * Samples are encoded and compressed as they are read (lib/render/pprof.h), so
 * memory holds the distinct names and the compressed output, not the stacks.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"
#include "lines.h"
#include "options.h"
#include "pprof.h"
#include "stream.h"
#include "timed.h"
#include "util.h"

static struct {
	const char *out;
	int level;
} opt = { .level = 1 };

static const struct options_entry options[] = {
	OPTIONS_OUTPUT,
	{ '1', "", NULL, "gzip level -1 (the default: fastest) to -9 (smallest)" },
	{ '2', "", NULL, NULL }, { '3', "", NULL, NULL }, { '4', "", NULL, NULL }, { '5', "", NULL, NULL },
	{ '6', "", NULL, NULL }, { '7', "", NULL, NULL }, { '8', "", NULL, NULL }, { '9', "", NULL, NULL },
	OPTIONS_DESCRIBE("kind=renderer\treads=stack\text=pb.gz"),
	OPTIONS_HELP,
	{ 0 }
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [OPTION]... [FILE]...\n"
		"Write marple stack sections, or folded text (\"stack count\", as marple-fold\n"
		"writes it), as one gzipped pprof profile (profile.proto) for go tool pprof,\n"
		"Parca, Pyroscope.  Several files or sections merge into one profile when\n"
		"their sample types match; the label host tells them apart.\n"
		"\n",
		marple_progname);
	options_usage(f, options);
	fputs("\n"
	      "Sample types from the header's units.measure (marple-format(5)): samples ->\n"
	      "samples/count and cpu/nanoseconds (the period from the header's frequency);\n"
	      "us/ns -> off_cpu or time; bytes -> alloc_space, inuse_space or space; any\n"
	      "other unit U -> U/count.  Kernel frames (\"_[k]\", after a \"-\" frame, or\n"
	      "kernel-only stacks) go in the [kernel.kallsyms] mapping.  Frames the stack\n"
	      "trailers describe (\"frames\") get their file's mapping, build id and\n"
	      "offset, and Python frames their function, file and line.  Folded text is\n"
	      "samples/count (whole counts; a line with two is skipped).\n"
	      "\n"
	      "With no FILE, or FILE '-', read stdin.  Exit: 0 ok (malformed lines are\n"
	      "reported and skipped), 1 no stacks, a section of another datatype,\n"
	      "sample types that differ between inputs, or an I/O error, 2 usage error.\n"
	      "See marple-pprof(1).\n",
	      f);
}

static struct pprof *prof;
static uint64_t nbad;

/* Folded text (marple-fold's output, "comm;main;f 12"): one section of
 * sample counts, its root frames the processes.  Returns 0, or -1 when its
 * sample types differ from an earlier input's or it cannot be read (message
 * printed). */
static int read_folded(struct lines *l, const char *file)
{
	static struct mstr *frames;
	static size_t cap;
	struct pprof_section sec;
	struct folded_line fl;
	struct folded_profile p = { .file = file, .what = "pprof", .integral = 1 };
	int r, begun = 0;

	while ((r = folded_next_sample(l, &p, &fl, &nbad)) > 0) {
		if (!begun++) {	/* at the first stack: a file of bad lines has none */
			json_t *hdr = json_pack("{s:s}", "interface", "folded text");
			int ok = pprof_section_begin(prof, hdr, 0, lines_lineno(l), file, &sec);
			json_decref(hdr);
			if (ok < 0)
				return -1;
		}
		struct stack_rec s = { fl.icount[0], folded_split_frames(fl.stack, fl.len, &frames, &cap), frames };
		pprof_add_sample(prof, &s, &sec, file, lines_lineno(l));
	}
	return r;
}

/* One input: every stack section's records become samples, or folded text's
 * lines.  Returns 0, or -1 for a section of another datatype (message printed). */
static int read_input(const char *path)
{
	FILE *f = marple_open_input(path);
	const char *file = marple_input_name(path);
	struct lines *l = lines_new(f, file);
	if (!folded_input_is_stream(l)) {
		int rc = read_folded(l, file);
		lines_free(l);
		if (f != stdin)
			fclose(f);
		return rc;
	}
	struct stream_reader *r = stream_reader_new_lines(l, file);
	struct pprof_section sec = { 0 };
	enum stream_item it;
	int rc = 0, skip = 0;

	while ((it = stream_reader_next(r)) != STREAM_EOF) {
		if (it == STREAM_ERROR) {
			if (nbad++ < MARPLE_REPORT_FIRST)
				stream_reader_warn(r);
		} else if (it == STREAM_HEADER) {
			/* the times of a timed stack section's samples: its stacks
			 * already hold their weights */
			if ((skip = timed_role(stream_reader_header(r)) == TIMED_SAMPLES))
				continue;
			if (stream_reader_datatype(r) != DATATYPE_STACK) {
				marple_warn_at(file, stream_reader_line(r),
					"section %ld holds %s data, not stacks (select stack sections with marple-cat -s)",
					stream_reader_section(r), stream_datatype_name(stream_reader_datatype(r)));
				rc = -1;
				break;
			}
			if (pprof_section_begin(prof, stream_reader_header(r), stream_reader_section(r),
						stream_reader_line(r), file, &sec) < 0) {
				rc = -1;
				break;
			}
		} else if (skip) {
			continue;
		} else if (it == STREAM_RECORD) {
			pprof_add_sample(prof, stream_reader_stack(r), &sec, file, stream_reader_line(r));
		} else if (it == STREAM_TRAILER) {
			pprof_section_end(prof, stream_reader_header(r), stream_reader_trailer(r), stream_reader_section(r),
					  file);
		}
	}
	const char *why = stream_reader_unusable(r);	/* marple-format(5) */
	if (why && rc == 0) {
		marple_warn_at(file, 0, "%s", why);
		rc = -1;
	}
	stream_reader_free(r);
	lines_free(l);
	if (f != stdin)
		fclose(f);
	return rc;
}

int main(int argc, char **argv)
{
	int ch;

	marple_init(argc, argv);
	while ((ch = options_getopt(options, argc, argv)) != -1) {
		if (ch >= '1' && ch <= '9') {
			opt.level = ch - '0';
			continue;
		}
		switch (ch) {
		case 'o': opt.out = optarg; break;
		case 'h': usage(stdout); marple_close_stdout(); return EXIT_OK;
		default: marple_usage_try();
		}
	}

	prof = pprof_new(opt.level);
	char *stdin_only[] = { "-" };
	int n = argc - optind;
	char **paths = n > 0 ? argv + optind : stdin_only;
	for (int i = 0; i < (n > 0 ? n : 1); i++)
		if (read_input(paths[i]) < 0)
			return EXIT_DATA;
	marple_warn_skipped_lines(nbad);
	if (!pprof_has_section(prof) || !pprof_samples(prof)) {
		marple_warn_at(marple_operands_name(n, argv + optind), 0, "%s",
			pprof_has_section(prof) ? "no stacks in the input" : "no stack sections or folded stacks in the input");
		return EXIT_DATA;
	}
	size_t zlen;
	const unsigned char *z = pprof_finish(prof, &zlen);

	struct outfile *o = marple_outfile_open(opt.out);
	/* a short write sets the stream's error, which marple_outfile_commit reports */
	size_t written = fwrite(z, 1, zlen, marple_outfile_stream(o));
	if (marple_outfile_commit(o) < 0 || written != zlen)
		return EXIT_DATA;
	pprof_free(prof);
	return EXIT_OK;
}
