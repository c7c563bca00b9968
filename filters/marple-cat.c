/* marple-cat — validate, select, list and pretty-print marple streams.
 *
 * Reads marple streams (files or stdin), checks every line, and writes the
 * chosen sections back out unchanged; -l lists the sections instead, -p shows
 * records decoded for people, -q only validates; --split DIR writes each
 * chosen section to DIR/INDEX, all in one pass (marple display's cut).
 *
 *   $ marple-cat -l capture.marple
 *   #  interface  datatype  start                 seconds  records  lost  dropped  ended
 *   0  callstack  stack     2026-11-21 12:00:01   10.00    1832     0     0        duration
 *
 * Exit status: 0 valid, 1 malformed input (first bad line named) or I/O error,
 * 2 usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "options.h"
#include "stream.h"
#include "timed.h"
#include "util.h"

static struct {
	int list;
	int pretty;
	int quiet;
	char **interfaces;
	size_t ninterfaces;
	long *sections;
	size_t nsections;
	const char *host;
	const char *split;	/* --split DIR: each section to DIR/INDEX */
	int split_fd;		/* DIR, open */
	struct timed_range range;
} opt = { .range.to_s = INFINITY, .split_fd = -1 };

enum { OPT_FROM = 256, OPT_TO, OPT_HOST, OPT_SPLIT };
static const struct options_entry options[] = {
	{ 'l', "list", NULL, "list sections: index, interface, datatype, start,\n"
			     "seconds, records, lost, dropped, how it ended" },
	{ 'p', "pretty", NULL, "show records decoded, one per line, for people\n"
			       "(stacks heaviest first, events at wall-clock times)" },
	{ 'q', "quiet", NULL, "only validate; the exit status says the result" },
	{ 's', "section", "LIST", "only these sections (0-based, counted across files)" },
	{ 'i', "interface", "NAME", "only sections of this interface (repeatable)" },
	{ OPT_FROM, "from", "S", "cut to [--from, --to) seconds from each section's\n"
				 "start: events and the samples of timed stack sections" },
	{ OPT_TO, "to", "S", "(see --from)" },
	{ OPT_HOST, "host", "NAME", "write NAME as every section header's \"host\"\n"
				   "(two machines that call themselves the same)" },
	{ OPT_SPLIT, "split", "DIR", "write each chosen section to DIR/INDEX (new files),\n"
				    "all in one pass, instead of stdout" },
	OPTIONS_DESCRIBE("kind=filter"),
	OPTIONS_HELP,
	{ 0 }
};

static const struct options_help help = {
	.synopsis = "[-l | -p | -q] [-s INDEX[,INDEX...]] [-i INTERFACE] [FILE...]",
	.about = "Validate marple streams and write the chosen sections to stdout.\n",
	.after = "With no FILE, or FILE '-', read stdin.  Exit: 0 valid, 1 bad input, 2 usage.\n"
	         "See marple-cat(1) and marple-format(5).\n",
};

static void parse_sections(const char *arg)
{
	char *copy = marple_strdup(arg), *save = NULL;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v = marple_opt_u64("-s", tok, 0, 1u << 30);
		opt.sections = realloc(opt.sections, (opt.nsections + 1) * sizeof(long));
		if (!opt.sections)
			marple_fatal(EXIT_DATA, "out of memory");
		opt.sections[opt.nsections++] = (long)v;
	}
	free(copy);
}

static int selected(long index, json_t *hdr)
{
	int ok = opt.nsections == 0;
	for (size_t i = 0; i < opt.nsections; i++)
		if (opt.sections[i] == index)
			ok = 1;
	if (!ok)
		return 0;
	if (opt.ninterfaces == 0)
		return 1;
	const char *iface = stream_header_str(hdr, "interface", "");
	for (size_t i = 0; i < opt.ninterfaces; i++)
		if (strcmp(opt.interfaces[i], iface) == 0)
			return 1;
	return 0;
}

/* What the input held, to name when -s or -i selected nothing of it. */
struct seen {
	long sections;		/* counted across files, as -s counts */
	long selected;
	char **interfaces;	/* distinct, in order of appearance */
	size_t ninterfaces, cap;
};

static struct seen seen;

static void seen_section(struct seen *s, json_t *hdr, int want)
{
	const char *iface = stream_header_str(hdr, "interface", "?");
	s->sections++;
	s->selected += want;
	for (size_t i = 0; i < s->ninterfaces; i++)
		if (strcmp(s->interfaces[i], iface) == 0)
			return;
	s->interfaces = marple_grow(s->interfaces, &s->cap, s->ninterfaces + 1, sizeof(*s->interfaces));
	s->interfaces[s->ninterfaces++] = marple_strdup(iface);
}

/* A selection that names what the input does not have is a usage error (exit
 * 2, as marple display -e says it): empty output would only make the next
 * program of a pipe fail vaguely. */
static void check_selection(struct seen *s, const char *input)
{
	for (size_t i = 0; i < opt.nsections; i++)
		if (opt.sections[i] >= s->sections) {
			marple_warn("-s %ld: %s has %ld section%s (0 to %ld; -l lists them)", opt.sections[i], input,
				    s->sections, s->sections == 1 ? "" : "s", s->sections - 1);
			exit(EXIT_USAGE);
		}
	for (size_t i = 0; i < opt.ninterfaces; i++) {
		size_t j = 0;
		while (j < s->ninterfaces && strcmp(s->interfaces[j], opt.interfaces[i]))
			j++;
		if (j == s->ninterfaces) {
			char *names = NULL;
			size_t len = 0;
			FILE *m = open_memstream(&names, &len);
			for (j = 0; m && j < s->ninterfaces; j++)
				fprintf(m, "%s%s", j ? ", " : "", s->interfaces[j]);
			if (!m || fclose(m))
				marple_fatal(EXIT_DATA, "out of memory");
			marple_warn("-i %s: %s has no section of that interface (it has: %s)", opt.interfaces[i],
				    input, names);
			exit(EXIT_USAGE);
		}
	}
	if (!s->selected) {
		marple_warn("-s and -i together select none of the %ld sections of %s (-l lists them)", s->sections,
			    input);
		exit(EXIT_USAGE);
	}
}

static void show_fields(FILE *out, const struct field *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		putc(' ', out);
		escape_show(out, f[i].key);
		putc('=', out);
		escape_show(out, f[i].value);
	}
}

/* -p: a stack section's records, shown heaviest first when it ends */
struct shown_stack {
	uint64_t weight;
	size_t order;
	char *text;
};
static struct shown_stack *stacks_shown;
static size_t nstacks_shown, capstacks_shown;

static int heavier_first(const void *a, const void *b)
{
	const struct shown_stack *x = a, *y = b;
	if (x->weight != y->weight)
		return x->weight < y->weight ? 1 : -1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static void flush_stacks(void)
{
	if (nstacks_shown)
		qsort(stacks_shown, nstacks_shown, sizeof(*stacks_shown), heavier_first);
	for (size_t i = 0; i < nstacks_shown; i++) {
		printf("%12llu  %s\n", (unsigned long long)stacks_shown[i].weight, stacks_shown[i].text);
		free(stacks_shown[i].text);
	}
	nstacks_shown = 0;
}

static void keep_stack(const struct stack_rec *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	if (!m)
		marple_fatal(EXIT_DATA, "out of memory");
	for (size_t i = 0; i < s->nframes; i++) {
		if (i)
			fputs(" > ", m);
		escape_show(m, s->frames[i]);
	}
	if (fclose(m) != 0)
		marple_fatal(EXIT_DATA, "out of memory");
	stacks_shown = marple_grow(stacks_shown, &capstacks_shown, nstacks_shown + 1, sizeof(*stacks_shown));
	stacks_shown[nstacks_shown] = (struct shown_stack){ s->weight, nstacks_shown, text };
	nstacks_shown++;
}

/* An event's time as the wall clock read then, from the header's pair of
 * clocks (start_ns and wall_ns taken at the same moment), in local time to
 * the nanosecond; seconds on the section's clock when the header has no pair. */
static void show_event_time(struct stream_reader *r, uint64_t t)
{
	json_t *h = stream_reader_header(r);
	int64_t start = stream_header_int(h, "start_ns", -1), wall = stream_header_int(h, "wall_ns", -1);
	struct tm tm;
	char day[32];

	if (start >= 0 && wall > 0) {
		int64_t w = wall + ((int64_t)t - start);
		time_t sec = (time_t)(w / 1000000000);
		if (w >= 0 && localtime_r(&sec, &tm) && strftime(day, sizeof(day), "%Y-%m-%d %H:%M:%S", &tm)) {
			printf("%s.%09lld  ", day, (long long)(w % 1000000000));
			return;
		}
	}
	printf("%llu.%09llu  ", (unsigned long long)(t / 1000000000ull), (unsigned long long)(t % 1000000000ull));
}

static void pretty_record(struct stream_reader *r)
{
	switch (stream_reader_datatype(r)) {
	case DATATYPE_STACK:
		keep_stack(stream_reader_stack(r));
		return;
	case DATATYPE_EVENT: {
		const struct event_rec *e = stream_reader_event(r);
		show_event_time(r, e->time);
		escape_show(stdout, e->type);
		fputs("  [", stdout);
		escape_show(stdout, e->track);
		putchar(']');
		show_fields(stdout, e->fields, e->nfields);
		break;
	}
	case DATATYPE_POINT: {
		const struct point_rec *p = stream_reader_point(r);
		printf("x=%g y=%g  ", p->x, p->y);
		escape_show(stdout, p->info);
		show_fields(stdout, p->fields, p->nfields);
		break;
	}
	default:
		break;
	}
	putchar('\n');
}

struct listing {
	long index;
	char interface[64];
	const char *datatype;
	char start[32];
	int64_t start_ns, wall_ns;
	int active;
};

static void list_print(struct listing *l, struct stream_reader *r, json_t *trailer)
{
	char secs[32] = "-", lost[24] = "-", dropped[24] = "-";
	const char *ended = "(no trailer)";

	if (trailer) {
		int64_t end = stream_header_int(trailer, "end_ns", -1);
		if (end >= 0 && l->start_ns >= 0 && end >= l->start_ns)
			snprintf(secs, sizeof(secs), "%.2f", (double)(end - l->start_ns) / 1e9);
		snprintf(lost, sizeof(lost), "%lld", (long long)stream_header_int(trailer, "lost", 0));
		snprintf(dropped, sizeof(dropped), "%lld", (long long)stream_header_int(trailer, "dropped", 0));
		ended = stream_header_str(trailer, "ended", "-");
	}
	printf("%-3ld %-14s %-9s %-20s %8s %10llu %6s %8s %s\n", l->index, l->interface, l->datatype,
	       l->start, secs, (unsigned long long)stream_reader_records(r), lost, dropped, ended);
	l->active = 0;
}

static void list_begin(struct listing *l, long index, json_t *hdr)
{
	l->index = index;
	snprintf(l->interface, sizeof(l->interface), "%s", stream_header_str(hdr, "interface", "?"));
	l->datatype = stream_datatype_name(stream_datatype_from_name(stream_header_str(hdr, "datatype", "")));
	l->start_ns = stream_header_int(hdr, "start_ns", -1);
	l->wall_ns = stream_header_int(hdr, "wall_ns", -1);
	strcpy(l->start, "-");
	if (l->wall_ns > 0) {
		time_t t = (time_t)(l->wall_ns / 1000000000);
		struct tm tm;
		if (localtime_r(&t, &tm))
			strftime(l->start, sizeof(l->start), "%Y-%m-%d %H:%M:%S", &tm);
	}
	l->active = 1;
}

/* Where a section's lines go: stdout, or with --split its own new file
 * (DIR/INDEX, not following a symlink); the one before is closed. */
static FILE *section_sink(FILE *sink, long index)
{
	char name[32];

	if (opt.split_fd < 0)
		return stdout;
	if (sink && sink != stdout && marple_close_output(sink, opt.split) != 0)
		exit(EXIT_DATA);
	if (index < 0)
		return NULL;
	snprintf(name, sizeof(name), "%ld", index);
	int fd = openat(opt.split_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f)
		marple_fatal(EXIT_DATA, "%s/%s: cannot create: %s", opt.split, name, strerror(errno));
	return f;
}

/* One input: its chosen sections out (or listed, shown, checked).  0, or
 * EXIT_DATA after a message. */
static int cat_one(const char *file, long *global_section, struct listing *l)
{
	FILE *f = marple_open_input(file), *sink = NULL;
	struct stream_reader *r = stream_reader_new(f, marple_input_name(file));
	struct timedcut *cut = opt.range.set ? timedcut_new(&opt.range, stdout, marple_input_name(file)) : NULL;
	int want = 0, any = 0;
	enum stream_item it;

	while ((it = stream_reader_next(r)) != STREAM_EOF) {
		if (it == STREAM_ERROR) {
			stream_reader_warn(r);
			stream_reader_free(r);
			return EXIT_DATA;
		}
		if (it == STREAM_HEADER) {
			if (l->active)
				list_print(l, r, NULL);
			++*global_section;
			any = 1;
			want = selected(*global_section, stream_reader_header(r));
			seen_section(&seen, stream_reader_header(r), want);
			if (want && opt.list)
				list_begin(l, *global_section, stream_reader_header(r));
			if (want && !opt.list && !opt.quiet && !opt.pretty && !cut)
				sink = section_sink(sink, *global_section);
		}
		if (!want || opt.quiet)
			continue;
		if (cut) {
			timedcut_item(cut, r, it);
			continue;
		}
		if (opt.list) {
			if (it == STREAM_TRAILER)
				list_print(l, r, stream_reader_trailer(r));
			continue;
		}
		if (opt.pretty && it == STREAM_RECORD) {
			pretty_record(r);
			continue;
		}
		if (opt.pretty) {
			flush_stacks();
			fputs(it == STREAM_HEADER ? "== section " : "== end ", stdout);
			if (it == STREAM_HEADER)
				printf("%ld: ", *global_section);
			sink = stdout;
		}
		if (opt.host && it == STREAM_HEADER) {
			json_t *h = stream_reader_header(r);
			json_object_set_new(h, "host", json_string(opt.host));
			if (stream_write_json(sink, h))
				return EXIT_DATA;
			continue;
		}
		struct mstr raw = stream_reader_raw(r);
		fwrite(raw.s, 1, raw.len, sink);
		putc('\n', sink);
	}
	section_sink(sink, -1);
	if (l->active)
		list_print(l, r, NULL);
	flush_stacks();
	timedcut_free(cut);
	if (!any) {
		marple_warn_at(stream_reader_name(r), 0, "no marple section in input (empty?)");
		stream_reader_free(r);
		return EXIT_DATA;
	}
	stream_reader_free(r);
	if (f != stdin)
		fclose(f);
	return 0;
}

static void check_options(void)
{
	if (opt.list + opt.pretty + opt.quiet > 1)
		marple_usage_error("-l, -p and -q exclude each other");
	if (opt.host && (opt.list + opt.pretty + opt.quiet || opt.range.set))
		marple_usage_error("--host rewrites the stream it writes: not with -l, -p, -q or --from/--to");
	json_t *host_utf8 = opt.host ? json_string(opt.host) : NULL;
	if (opt.host && !host_utf8)
		marple_usage_error("--host: '%s' is not UTF-8", opt.host);
	json_decref(host_utf8);
	if (opt.range.set && opt.list + opt.pretty + opt.quiet)
		marple_usage_error("--from/--to write the cut stream: not with -l, -p or -q");
	if (opt.split && (opt.list + opt.pretty + opt.quiet || opt.range.set))
		marple_usage_error("--split writes the sections: not with -l, -p, -q or --from/--to");
	timed_range_check(&opt.range);
	if (opt.split && (opt.split_fd = open(opt.split, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		marple_fatal(EXIT_DATA, "--split: %s: %s", opt.split, strerror(errno));
}

int main(int argc, char **argv)
{
	long global_section = -1;
	int c;

	marple_init(argc, argv);
	while ((c = options_getopt(options, argc, argv)) != -1) {
		switch (c) {
		case 'l': opt.list = 1; break;
		case 'p': opt.pretty = 1; break;
		case 'q': opt.quiet = 1; break;
		case 's': parse_sections(optarg); break;
		case 'i':
			opt.interfaces = realloc(opt.interfaces, (opt.ninterfaces + 1) * sizeof(char *));
			if (!opt.interfaces)
				marple_fatal(EXIT_DATA, "out of memory");
			opt.interfaces[opt.ninterfaces++] = optarg;
			break;
		case OPT_FROM: timed_range_option(&opt.range, 1, optarg); break;
		case OPT_TO: timed_range_option(&opt.range, 0, optarg); break;
		case OPT_HOST: opt.host = optarg; break;
		case OPT_SPLIT: opt.split = optarg; break;
		case 'h': options_help(stdout, options, &help); marple_close_stdout(); return EXIT_OK;
		default: marple_usage_try();
		}
	}
	check_options();

	char *stdin_only[] = { "-" };
	char **files = optind < argc ? argv + optind : stdin_only;
	int nfiles = optind < argc ? argc - optind : 1;
	struct listing l = { 0 };

	if (opt.list)
		printf("%-3s %-14s %-9s %-20s %8s %10s %6s %8s %s\n", "#", "interface", "datatype", "start",
		       "seconds", "records", "lost", "dropped", "ended");
	for (int i = 0; i < nfiles; i++)
		if (cat_one(files[i], &global_section, &l) != 0)
			return EXIT_DATA;
	free(stacks_shown);
	check_selection(&seen, marple_operands_name(nfiles, files));
	marple_close_stdout();
	return EXIT_OK;
}
