/* marple-speedscope — marple stack sections (or folded text) as one
 * speedscope file (its JSON file format,
 * https://www.speedscope.app/file-format-schema.json).
 *
 * Frames are shared by every profile; each stack section is one sampled
 * profile (one per process with --per-process) whose weights and unit are the
 * section's.  A timed stack section with its samples section becomes its
 * samples in time order, so speedscope's "Time Order" view is a timeline;
 * the intervals of a collector's --every go on in one profile.
 *
 *   $ marple-speedscope cpu.marple > cpu.speedscope.json
 *   {"$schema":"https://www.speedscope.app/file-format-schema.json","profiles":[{"type":"sampled",...
 *
 * Untimed sections are written as they are read: memory holds the frame
 * names and one weight a record, not the stacks.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"
#include "intern.h"
#include "framedesc.h"
#include "lines.h"
#include "options.h"
#include "stream.h"
#include "timed.h"
#include "util.h"
#include "xml.h"


static struct {
	const char *out;
	int per_process;
} opt;

static const struct options_entry options[] = {
	{ 'p', "per-process", NULL, "one profile per process (the root frame) of each section" },
	OPTIONS_OUTPUT,
	OPTIONS_DESCRIBE("kind=renderer\treads=stack\text=json"),
	OPTIONS_HELP,
	{ 0 }
};

static const struct options_help help = {
	.synopsis = "[OPTION]... [FILE]...",
	.about = "Write marple stack sections as one speedscope file (JSON) for\n"
	         "https://www.speedscope.app or the speedscope command: one sampled profile\n"
	         "per section, its weights and unit the section's; a timed section (marple-\n"
	         "callstack --timed) as its samples in time order.  Folded text (\"stack\n"
	         "count\", as marple-fold writes it) is one profile named after its file.\n",
	.after = "With no FILE, or FILE '-', read stdin.  Exit: 0 ok (malformed lines are\n"
	         "reported and skipped), 1 no stacks, a section of another datatype,\n"
	         "or an I/O error, 2 usage error.  See marple-speedscope(1).\n",
};

static FILE *out;
static struct intern *frames;		/* shared frames, in order of first use */
static struct framedesc *described;	/* the stack trailers' "frames" */
static uint64_t nbad, nprofiles;

/* ---- profiles ---- */

/* One profile being written: straight to the output, or (--per-process)
 * into memory until its section ends. */
struct profile {
	uint32_t process;		/* root frame id (--per-process) */
	FILE *f;
	char *buf;
	size_t buflen;
	double *w, total;
	size_t nw, wcap;
	int timing;			/* time order: until is set */
	uint64_t until;			/* ns: where its last sample ended */
};

static struct profile *profs;
static size_t nprofs, profcap;
static char *prof_name;			/* "interface on host" of the section */
static const char *prof_unit;

static const char *speedscope_unit(json_t *hdr)
{
	const char *u = json_string_value(json_object_get(json_object_get(hdr, "units"), "weight")), *name;
	if (stream_time_unit_ns(u, &name))
		return name;
	return u && strcmp(u, "bytes") == 0 ? "bytes" : "none";	/* counts: samples, requests, faults */
}

/* A JSON string of any bytes: UTF-8 as it is (a name decoded from the
 * stream, '%' and all, as every renderer shows it; control bytes as JSON's
 * \u escapes), a name that is not UTF-8 %XX-escaped as a whole, as in
 * marple's headers. */
static void json_name(FILE *f, const char *s, size_t len)
{
	if (escape_is_utf8(s, len)) {
		xml_js_string_write(f, s, len);
		return;
	}
	char *e = escape_dup(s, len);
	xml_js_string_cstr(f, e);
	free(e);
}

static const char *doc_name;		/* the operands, for the file's name */

/* The file's head comes with the first profile, so an input that fails
 * before it leaves no output at all. */
static void profile_head(FILE *f, const struct profile *p)
{
	if (!nprofiles) {
		fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"exporter\":\"marple-speedscope\",\"name\":", out);
		json_name(out, doc_name, strlen(doc_name));
		fputs(",\"activeProfileIndex\":0,\"profiles\":[", out);
	}
	fputs(nprofiles++ ? ",\n{" : "\n{", f);
	fputs("\"type\":\"sampled\",\"name\":", f);
	if (opt.per_process) {
		size_t len;
		const char *proc = intern_str(frames, p->process, &len);
		char *both = marple_malloc(len + strlen(prof_name) + 8);
		memcpy(both, proc, len);
		sprintf(both + len, " \xe2\x80\x94 %s", prof_name);	/* an em dash */
		json_name(f, both, len + strlen(both + len));
		free(both);
	} else {
		json_name(f, prof_name, strlen(prof_name));
	}
	fprintf(f, ",\"unit\":\"%s\",\"startValue\":0,\"samples\":[", prof_unit);
}

static struct profile *profile_of(uint32_t process)
{
	for (size_t i = 0; i < nprofs; i++)
		if (!opt.per_process || profs[i].process == process)
			return &profs[i];
	profs = marple_grow(profs, &profcap, nprofs + 1, sizeof(*profs));
	struct profile *p = &profs[nprofs++];
	*p = (struct profile){ .process = process };
	if (opt.per_process) {
		if (!(p->f = open_memstream(&p->buf, &p->buflen)))
			marple_fatal(EXIT_DATA, "out of memory");
	} else {
		p->f = out;
		profile_head(out, p);
	}
	return p;
}

static void put_uint(FILE *f, uint64_t v)
{
	char b[24];
	int n = 0;
	do
		b[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n)
		putc_unlocked(b[--n], f);
}

/* One sample of p: frame ids from..n root first (speedscope's order); none
 * for a stretch of time without a sample. */
static void profile_put(struct profile *p, const uint32_t *ids, size_t from, size_t n, double weight)
{
	FILE *f = p->f;
	putc_unlocked(p->nw ? ',' : '[', f);
	if (p->nw)
		putc_unlocked('[', f);
	for (size_t i = from; i < n; i++) {
		if (i > from)
			putc_unlocked(',', f);
		put_uint(f, ids[i]);
	}
	putc_unlocked(']', f);
	p->w = marple_grow(p->w, &p->wcap, p->nw + 1, sizeof(*p->w));
	p->w[p->nw++] = weight;
	p->total += weight;
}

/* One sample: in the profile of its process with --per-process, which is
 * then left out of the stack. */
static void profile_add(const uint32_t *ids, size_t n, double weight)
{
	profile_put(profile_of(n ? ids[0] : 0), ids, opt.per_process && n > 0, n, weight);
}

static void profile_tail(FILE *f, const struct profile *p)
{
	fputs("],\"weights\":[", f);
	for (size_t i = 0; i < p->nw; i++) {
		if (i)
			putc_unlocked(',', f);
		stream_write_double(f, p->w[i]);
	}
	fputs("],\"endValue\":", f);
	stream_write_double(f, p->total);
	putc('}', f);
}

/* The section ended: its profiles are complete. */
static void profiles_end(void)
{
	for (size_t i = 0; i < nprofs; i++) {
		struct profile *p = &profs[i];
		if (opt.per_process) {
			fclose(p->f);
			profile_head(out, p);
			fwrite(p->buf, 1, p->buflen, out);
			free(p->buf);
		}
		profile_tail(out, p);
		free(p->w);
	}
	nprofs = 0;
	free(prof_name);
	prof_name = NULL;
}

/* Profiles are named "interface on host", "(time order)" after a timed one's;
 * a timed one with a sample's time (period_ns) weighs nanoseconds. */
static void profiles_begin(json_t *hdr, int timed, uint64_t period_ns)
{
	const char *iface = stream_header_str(hdr, "interface", "stacks"), *host = stream_header_str(hdr, "host", NULL);
	size_t n = strlen(iface) + (host ? strlen(host) : 0) + 32;
	prof_name = marple_malloc(n);
	snprintf(prof_name, n, "%s%s%s%s", iface, host ? " on " : "", host ? host : "", timed ? " (time order)" : "");
	prof_unit = timed && period_ns ? "nanoseconds" : speedscope_unit(hdr);
}

/* ---- frames of records ---- */

static uint32_t *ids;
static size_t idcap;

static const uint32_t *frame_ids(const struct stack_rec *s)
{
	ids = marple_grow(ids, &idcap, s->nframes + 1, sizeof(*ids));
	for (size_t i = 0; i < s->nframes; i++) {	/* by key: a tagged frame is other code */
		struct mstr k = stream_frame_key(s, i);
		ids[i] = intern_get(frames, k.s, k.len);
	}
	return ids;
}

/* A timed stack section's stacks, held until its samples section says when
 * each was sampled. */
static struct {
	int active;
	json_t *hdr;
	uint32_t *ids;
	size_t nids, idscap;
	size_t *start;			/* by stack: where its ids begin; one more at the end */
	uint64_t *weight;
	size_t n, startcap, wcap;
	uint64_t ns_per_weight;
	uint64_t period_ns;		/* a sample's time when weights count samples */
} held;

static void hold_stack(const struct stack_rec *s)
{
	const uint32_t *fr = frame_ids(s);
	held.ids = marple_grow(held.ids, &held.idscap, held.nids + s->nframes, sizeof(*held.ids));
	memcpy(held.ids + held.nids, fr, s->nframes * sizeof(*fr));
	held.start = marple_grow(held.start, &held.startcap, held.n + 2, sizeof(*held.start));
	held.weight = marple_grow(held.weight, &held.wcap, held.n + 1, sizeof(*held.weight));
	held.start[held.n] = held.nids;
	held.weight[held.n++] = s->weight;
	held.nids += s->nframes;
	held.start[held.n] = held.nids;
}

static void run_end(void);

/* The held stacks as an ordinary profile: their samples section never came. */
static void held_write_aggregated(void)
{
	if (!held.active)
		return;
	run_end();	/* an interval without its samples ends the run before it */
	profiles_begin(held.hdr, 0, 0);
	for (size_t i = 0; i < held.n; i++)
		profile_add(held.ids + held.start[i], held.start[i + 1] - held.start[i], (double)held.weight[i]);
	profiles_end();
	json_decref(held.hdr);
	held.active = 0;
	held.n = held.nids = 0;
}

/* A collector's continuous mode (--every) writes a timed section an
 * interval, each ending "interval": the next interval's samples go on in the
 * same profile, so that one Time Order view is the whole capture.  The
 * profile stays open while run.hdr is set (the first interval's header). */
static struct {
	json_t *hdr;
} run;

/* Does a timed stack section go on where the open run's left off: the same
 * interface, host and weight unit? */
static int run_continues(json_t *hdr)
{
	static const char *const keys[] = { "interface", "host" };
	if (!run.hdr)
		return 0;
	for (size_t k = 0; k < sizeof(keys) / sizeof(*keys); k++)
		if (strcmp(stream_header_str(run.hdr, keys[k], ""), stream_header_str(hdr, keys[k], "")))
			return 0;
	return !strcmp(speedscope_unit(run.hdr), speedscope_unit(hdr));
}

/* The open run's profile is complete. */
static void run_end(void)
{
	if (!run.hdr)
		return;
	profiles_end();
	json_decref(run.hdr);
	run.hdr = NULL;
}

/* One sample of a samples section: its stack, weighing one sample, or its
 * duration in the stack section's unit. */
static void timed_add(struct stream_reader *r, const char *file)
{
	struct timed_sample ts;
	const char *why;
	if (timed_sample_parse(stream_reader_event(r), &ts, &why) < 0 || ts.stack >= held.n) {
		if (nbad++ < MARPLE_REPORT_FIRST)
			marple_warn_at(file, stream_reader_line(r), "%s",
				ts.stack >= held.n ? "sample names a stack that is not in its stack section" : why);
		return;
	}
	const uint32_t *fr = held.ids + held.start[ts.stack];
	size_t n = held.start[ts.stack + 1] - held.start[ts.stack];
	struct profile *p = profile_of(n ? fr[0] : 0);
	uint64_t span = ts.dur ? ts.dur : held.period_ns, per = held.ns_per_weight ? held.ns_per_weight : 1;
	double w = !span || (held.ns_per_weight && !ts.dur) ? 1 : (double)span / (double)per;
	if (span && p->timing && ts.time > p->until)
		profile_put(p, NULL, 0, 0, (double)(ts.time - p->until) / (double)per);
	profile_put(p, fr, opt.per_process && n > 0, n, w);
	if (span && (!p->timing || ts.time + span > p->until)) {
		p->until = ts.time + span;
		p->timing = 1;
	}
}

/* A sample's time from the sampling frequency the collector wrote
 * (options.frequency), when weights count samples: time order then has time
 * on its axis (a 2 s sleep between samples is 2 s of nothing, not gone).
 * 0: not known, the samples weigh one each, side by side. */
static uint64_t sample_period_ns(json_t *stack_hdr, uint64_t ns_per_weight)
{
	json_int_t hz = stream_header_int(json_object_get(stack_hdr, "options"), "frequency", 0);
	return ns_per_weight || hz <= 0 ? 0 : (uint64_t)(1000000000 / hz);
}

/* ---- input ---- */

enum mode { MODE_STACKS, MODE_HOLD, MODE_TIMED, MODE_SKIP };

/* A section begins: what to do with its records.  -1: not stack data. */
static int section_begin(struct stream_reader *r, const char *file, enum mode *mode)
{
	json_t *hdr = stream_reader_header(r);
	enum timed_role role = timed_role(hdr);

	if (role == TIMED_SAMPLES && held.active) {
		json_t *stack_hdr = held.hdr;
		held.ns_per_weight = timed_ns_per_weight(stack_hdr);
		held.period_ns = sample_period_ns(stack_hdr, held.ns_per_weight);
		if (!run.hdr)
			profiles_begin(stack_hdr, 1, held.period_ns);
		*mode = MODE_TIMED;
		return 0;
	}
	held_write_aggregated();
	if (!(role == TIMED_STACKS && run_continues(hdr)))
		run_end();
	if (role == TIMED_SAMPLES) {
		marple_warn_at(file, stream_reader_line(r), "samples section %ld without its stack section: skipped",
			stream_reader_section(r));
		*mode = MODE_SKIP;
		return 0;
	}
	if (stream_reader_datatype(r) != DATATYPE_STACK) {
		marple_warn_at(file, stream_reader_line(r),
			"section %ld holds %s data, not stacks (select stack sections with marple-cat -s)",
			stream_reader_section(r), stream_datatype_name(stream_reader_datatype(r)));
		return -1;
	}
	if (role == TIMED_STACKS) {
		held.active = 1;
		held.hdr = json_incref(hdr);
		*mode = MODE_HOLD;
		return 0;
	}
	profiles_begin(hdr, 0, 0);
	*mode = MODE_STACKS;
	return 0;
}

/* A section ended (its trailer, the next header or the end of input): its
 * profiles are complete, unless it is a timed section's held stacks, or an
 * interval whose next one goes on in its profile (trailer: its trailer). */
static void section_end(enum mode *mode, json_t *trailer)
{
	if (*mode == MODE_TIMED && trailer && !strcmp(stream_header_str(trailer, "ended", ""), "interval")) {
		if (!run.hdr)
			run.hdr = json_incref(held.hdr);
	} else if (*mode == MODE_STACKS || *mode == MODE_TIMED) {
		if (run.hdr && *mode == MODE_TIMED)
			run_end();
		else
			profiles_end();
	}
	if (*mode == MODE_TIMED) {
		json_decref(held.hdr);
		held.active = 0;
		held.n = held.nids = 0;
	}
	if (*mode != MODE_HOLD)
		*mode = MODE_SKIP;
}

/* Folded text (marple-fold's output, "comm;main;f 12"): one profile of its
 * lines' counts, named after the file.  Read whole before any of it is
 * written: -1 when it is unusable (marple-format(5)) or cannot be read, and
 * then nothing of it is written. */
static int read_folded(struct lines *l, const char *file)
{
	static struct mstr *fr;
	static size_t cap;
	struct folded_line fl;
	struct folded_profile p = { .file = file, .what = "speedscope" };
	struct { char *stack; size_t len; double count; } *good = NULL;
	size_t ngood = 0, goodcap = 0;
	int r;

	while ((r = folded_next_sample(l, &p, &fl, &nbad)) > 0) {
		good = marple_grow(good, &goodcap, ngood + 1, sizeof(*good));
		good[ngood].stack = marple_malloc(fl.len + 1);
		memcpy(good[ngood].stack, fl.stack, fl.len);
		good[ngood].len = fl.len;
		good[ngood++].count = fl.count[0];
	}
	for (size_t i = 0; i < ngood; i++) {
		if (r == 0) {	/* usable: its samples, none of them written before */
			if (i == 0) {
				prof_name = marple_strdup(file);
				prof_unit = "none";
			}
			struct stack_rec s = { 0, folded_split_frames(good[i].stack, good[i].len, &fr, &cap), fr };
			profile_add(frame_ids(&s), s.nframes, good[i].count);
		}
		free(good[i].stack);
	}
	free(good);
	if (r < 0)
		return -1;
	if (ngood)
		profiles_end();
	return 0;
}

/* One input: its stack sections, or its folded text.  -1: a section of
 * another datatype (message printed). */
static int read_input(const char *path)
{
	FILE *f = marple_open_input(path);
	const char *file = marple_input_name(path);
	struct lines *l = lines_new(f, file);
	if (!folded_input_is_stream(l)) {
		held_write_aggregated();	/* a timed section before it, in an earlier input */
		run_end();
		int rc = read_folded(l, file);
		lines_free(l);
		if (f != stdin)
			fclose(f);
		return rc;
	}
	struct stream_reader *r = stream_reader_new_lines(l, file);
	enum stream_item it;
	enum mode mode = MODE_SKIP;
	int rc = 0;

	while ((it = stream_reader_next(r)) != STREAM_EOF) {
		if (it == STREAM_ERROR) {
			if (nbad++ < MARPLE_REPORT_FIRST)
				stream_reader_warn(r);
		} else if (it == STREAM_HEADER) {
			section_end(&mode, NULL);
			if ((rc = section_begin(r, file, &mode)) < 0)
				break;
		} else if (it == STREAM_TRAILER) {
			framedesc_add(described, stream_reader_trailer(r));
			section_end(&mode, stream_reader_trailer(r));
		} else if (mode == MODE_STACKS) {
			const struct stack_rec *s = stream_reader_stack(r);
			profile_add(frame_ids(s), s->nframes, (double)s->weight);
		} else if (mode == MODE_HOLD) {
			hold_stack(stream_reader_stack(r));
		} else if (mode == MODE_TIMED) {
			timed_add(r, file);
		}
	}
	if (rc == 0)
		section_end(&mode, NULL);
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

static void write_frames(void)
{
	fputs("\n],\"shared\":{\"frames\":[", out);
	for (size_t i = 0; i < intern_count(frames); i++) {
		size_t key_len, len;
		const char *s = intern_str(frames, (uint32_t)i, &key_len);
		const struct framedesc_frame *d = framedesc_get(described, s, key_len);
		stream_frame_key_split(s, key_len, &len);
		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", out);
		/* a frame the trailers describe: its function, file and line (a
		 * Python frame's name loses the " (file:line)" they repeat).  A
		 * native frame keeps its mapped file, not its source: speedscope
		 * merges frames of one name, file and line, and two programs'
		 * spin() built from one source are two functions (issue 33) */
		json_name(out, s, framedesc_function_len(d, s, len));
		if (d && d->file && d->file[0] != '[') {
			fputs(",\"file\":", out);
			json_name(out, d->file, d->file_len);
		}
		if (d && d->line > 0)
			fprintf(out, ",\"line\":%lld", (long long)d->line);
		putc('}', out);
	}
	fputs("\n]}}\n", out);
}

int main(int argc, char **argv)
{
	int ch;

	marple_init(argc, argv);
	while ((ch = options_getopt(options, argc, argv)) != -1) {
		switch (ch) {
		case 'p': opt.per_process = 1; break;
		case 'o': opt.out = optarg; break;
		case 'h': options_help(stdout, options, &help); marple_close_stdout(); return EXIT_OK;
		default: marple_usage_try();
		}
	}

	struct outfile *o = marple_outfile_open_whole(opt.out);	/* an input found unusable at its end leaves nothing */
	out = marple_outfile_stream(o);
	frames = intern_new();
	described = framedesc_new();
	int n = argc - optind;
	doc_name = marple_strdup(marple_operands_name(n, argv + optind));
	char *stdin_only[] = { "-" };
	char **paths = n > 0 ? argv + optind : stdin_only;
	for (int i = 0; i < (n > 0 ? n : 1); i++)
		if (read_input(paths[i]) < 0) {
			marple_outfile_abort(o);
			return EXIT_DATA;
		}
	held_write_aggregated();
	run_end();
	marple_warn_skipped_lines(nbad);
	if (!nprofiles) {
		marple_warn_at(marple_operands_name(n, argv + optind), 0, "no stacks in the input");
		marple_outfile_abort(o);
		return EXIT_DATA;
	}
	write_frames();
	return marple_outfile_commit(o) < 0 ? EXIT_DATA : EXIT_OK;
}
