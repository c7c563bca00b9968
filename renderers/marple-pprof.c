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
 * Samples are encoded and compressed as they are read (protowire.h), so
 * memory holds the distinct names and the compressed output, not the stacks.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <libdeflate.h>

#include "folded.h"
#include "framedesc.h"
#include "intern.h"
#include "lines.h"
#include "options.h"
#include "protowire.h"
#include "stream.h"
#include "timed.h"
#include "util.h"

/* profile.proto's field numbers (github.com/google/pprof, proto/profile.proto) */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12, PROFILE_COMMENT = 13,
	VALUETYPE_TYPE = 1, VALUETYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,
	LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3,
	MAPPING_ID = 1, MAPPING_MEMORY_START = 2, MAPPING_MEMORY_LIMIT = 3, MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5, MAPPING_BUILD_ID = 6, MAPPING_HAS_FUNCTIONS = 7, MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9,
	LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1, LINE_LINE = 2,
	FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4,
};

enum { MAPPING_USER = 1, MAPPING_KERNEL = 2 };
#define KERNEL_SUFFIX "_[k]"

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
	      "Sample types from the unit: samples -> samples/count and cpu/nanoseconds (the\n"
	      "period from the header's frequency); us/ns -> off_cpu (offcpu) or time;\n"
	      "bytes -> alloc_space (mallocstacks), inuse_space (memleak) or space; any\n"
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

/* ---- the profile being built ---- */

/* The sample types of a section, and where they were first seen (for the message
 * when another input differs). */
struct kind {
	int n;
	uint32_t type[2], unit[2];	/* string ids */
	uint64_t period;		/* ns a CPU sample stands for; 0: not CPU */
	char *where;			/* "file section N (interface)" */
};

static struct intern *strs;		/* the string table; id 0 is "" */
static struct pbuf pb;			/* one top-level message at a time */
static struct intern *frames;		/* frames as read */
static uint32_t *loc_of;		/* by frame id * 2 + kernel: location id, 0 none */
static size_t loc_of_len;
static uint32_t *loc_name;		/* by location id - 1: name id */
static uint32_t *loc_frame;		/* by location id - 1: its frame's id in frames */
static size_t loc_fcap;
static struct framedesc *described;	/* the stack trailers' "frames" */
static unsigned char *loc_kernel;
static size_t nloc, loc_cap, loc_kcap;
static struct kind kind;		/* of the first section */
static uint64_t time_first, time_last;	/* wall-clock ns covered by the sections */
static uint64_t nsamples, nbad, nclamped;
static uint32_t key_host, key_comm, key_pid, key_tid, key_cpu;

/* The output, compressed in memory: written only when complete, so a failure
 * leaves no half profile behind.  Messages gather in pb; each MiB becomes one
 * gzip member (a gzip file may hold several; every gzip reader, Go's among
 * them, reads them as one stream), compressed by libdeflate, which does a
 * whole buffer at a time two to four times faster than zlib. */
#define CHUNK (1u << 20)
static struct libdeflate_compressor *gz;
static unsigned char *zout;
static size_t zout_len, zout_cap;

static void compress_pending(void)
{
	if (!pb.n)
		return;
	size_t bound = libdeflate_gzip_compress_bound(gz, pb.n);
	zout = marple_grow(zout, &zout_cap, zout_len + bound, 1);
	size_t k = libdeflate_gzip_compress(gz, pb.b, pb.n, zout + zout_len, bound);
	if (!k)
		marple_fatal(EXIT_DATA, "gzip compression failed");
	zout_len += k;
	pb.n = 0;
}

/* A top-level message is complete in pb. */
static void flush_message(void)
{
	if (pb.n >= CHUNK)
		compress_pending();
}

/* The string id of a name: its bytes when they are UTF-8 (a name decoded
 * from the stream, '%' and all, as every renderer shows it); a name that is
 * not %XX-escaped as a whole, as in marple's headers, so that pprof gets
 * valid strings. */
static uint32_t string_id(const char *s, size_t len)
{
	if (escape_is_utf8(s, len))
		return intern_get(strs, s, len);
	char *e = escape_dup(s, len);
	uint32_t id = intern_get(strs, e, strlen(e));
	free(e);
	return id;
}

static uint32_t cstr_id(const char *s)
{
	return string_id(s, strlen(s));
}

/* Frames are looked up by their bytes as read (one hash lookup a frame, the
 * common case); only a frame seen the first time is stripped of "_[k]",
 * escaped and put in the string table. */
static uint32_t location_of(struct mstr f, uint32_t frame, int kernel)
{
	size_t slot = (size_t)frame * 2 + (size_t)kernel;
	if (slot < loc_of_len && loc_of[slot])
		return loc_of[slot];
	if (slot >= loc_of_len) {
		size_t old = loc_of_len;
		loc_of = marple_grow(loc_of, &loc_of_len, slot + 2, sizeof(*loc_of));
		memset(loc_of + old, 0, (loc_of_len - old) * sizeof(*loc_of));
	}
	size_t k = sizeof(KERNEL_SUFFIX) - 1;
	if (f.len > k && memcmp(f.s + f.len - k, KERNEL_SUFFIX, k) == 0) {
		f.len -= k;
		kernel = 1;
	}
	loc_name = marple_grow(loc_name, &loc_cap, nloc + 1, sizeof(*loc_name));
	loc_kernel = marple_grow(loc_kernel, &loc_kcap, nloc + 1, 1);
	loc_frame = marple_grow(loc_frame, &loc_fcap, nloc + 1, sizeof(*loc_frame));
	loc_frame[nloc] = frame;
	loc_name[nloc] = string_id(f.s, f.len);
	loc_kernel[nloc] = (unsigned char)kernel;
	return loc_of[slot] = (uint32_t)++nloc;
}

/* ---- sections ---- */

/* What every sample of a section shares. */
struct section {
	uint32_t host;			/* string id, 0: none */
	int64_t pid, tid, cpu;		/* from the header's options, -1: none */
	int root_pid, root_tid;		/* the root frame is "comm-PID" or "comm-PID/TID" */
	int kernel_only;		/* every frame but the root is a kernel frame */
	uint64_t freq;			/* CPU samples a second, 0: not CPU */
};

/* The sample types a section's unit and interface stand for (marple-pprof(1)). */
static void kind_of(json_t *hdr, uint64_t freq, struct kind *k)
{
	const char *iface = stream_header_str(hdr, "interface", "");
	const char *unit = json_string_value(json_object_get(json_object_get(hdr, "units"), "weight"));
	const char *tname;

	if (!unit)
		unit = "samples";
	k->n = 1;
	k->period = 0;
	if (strcmp(unit, "samples") == 0) {
		k->type[0] = cstr_id("samples"), k->unit[0] = cstr_id("count");
		if (freq) {
			k->n = 2;
			k->type[1] = cstr_id("cpu"), k->unit[1] = cstr_id("nanoseconds");
			k->period = 1000000000 / freq;
		}
	} else if (stream_time_unit_ns(unit, &tname)) {
		k->type[0] = cstr_id(strcmp(iface, "offcpu") == 0 ? "off_cpu" : "time");
		k->unit[0] = cstr_id(tname);
	} else if (strcmp(unit, "bytes") == 0) {
		k->type[0] = cstr_id(strcmp(iface, "mallocstacks") == 0 ? "alloc_space"
				     : strcmp(iface, "memleak") == 0     ? "inuse_space"
									 : "space");
		k->unit[0] = cstr_id("bytes");
	} else {
		k->type[0] = cstr_id(unit), k->unit[0] = cstr_id("count");
	}
}

static void kind_describe(const struct kind *k, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = 0;
	for (int i = 0; i < k->n && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s/%s", i ? "," : "", intern_str(strs, k->type[i], NULL),
				       intern_str(strs, k->unit[i], NULL));
}

/* The first section sets the profile's sample types; later ones must match.
 * Returns 0, or -1 after a message naming both. */
static int kind_check(json_t *hdr, long section, unsigned long line, const struct section *sec, const char *file)
{
	struct kind k;
	char here[256];
	kind_of(hdr, sec->freq, &k);
	snprintf(here, sizeof(here), "%s section %ld (%s)", file, section, stream_header_str(hdr, "interface", "?"));
	if (!kind.n) {
		kind = k;
		kind.where = marple_strdup(here);
		return 0;
	}
	if (k.n == kind.n && !memcmp(k.type, kind.type, sizeof(k.type[0]) * (size_t)k.n) &&
	    !memcmp(k.unit, kind.unit, sizeof(k.unit[0]) * (size_t)k.n))
		return 0;
	char a[200], b[200];
	kind_describe(&k, a, sizeof(a));
	kind_describe(&kind, b, sizeof(b));
	marple_warn_at(file, line,
		"section %ld (%s) has sample types %s, but %s has %s: one profile holds one kind of data "
		"(convert them separately)", section, stream_header_str(hdr, "interface", "?"), a, kind.where, b);
	return -1;
}

static int64_t option_int(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_integer(v) ? (int64_t)json_integer_value(v) : -1;
}

static int section_begin(json_t *hdr, long section, unsigned long line, const char *file, struct section *sec)
{
	json_t *o = json_object_get(hdr, "options");
	const char *host = stream_header_str(hdr, "host", NULL);

	*sec = (struct section){ .host = host ? cstr_id(host) : 0 };
	sec->pid = option_int(o, "pid");
	sec->tid = option_int(o, "tid");
	sec->cpu = option_int(o, "cpu");
	/* marple-fold --pid/--tid names the process "comm-PID[/TID]" */
	sec->root_pid = json_is_true(json_object_get(o, "pid"));
	sec->root_tid = json_is_true(json_object_get(o, "tid"));
	sec->kernel_only = strcmp(stream_header_str(o, "stacks", ""), "kernel") == 0;
	int64_t freq = option_int(o, "frequency");
	sec->freq = freq > 0 ? (uint64_t)freq : 0;
	if (kind_check(hdr, section, line, sec, file) < 0)
		return -1;

	int64_t wall = stream_header_int(hdr, "wall_ns", -1);
	if (wall > 0 && (!time_first || (uint64_t)wall < time_first))
		time_first = (uint64_t)wall;
	if (wall > 0 && (uint64_t)wall > time_last)
		time_last = (uint64_t)wall;
	return 0;
}

/* The trailer's end time extends the time the profile covers. */
static void section_end(struct stream_reader *r, const char *file)
{
	json_t *hdr = stream_reader_header(r), *tr = stream_reader_trailer(r);
	int64_t wall = stream_header_int(hdr, "wall_ns", -1), start = stream_header_int(hdr, "start_ns", -1);
	int64_t end = stream_header_int(tr, "end_ns", -1);
	if (wall > 0 && start >= 0 && end >= start && (uint64_t)(wall + (end - start)) > time_last)
		time_last = (uint64_t)(wall + (end - start));
	char c[300];
	snprintf(c, sizeof(c), "%s section %ld: %s on %s, %lld records, %lld lost, %lld dropped", file,
		 stream_reader_section(r), stream_header_str(hdr, "interface", "?"), stream_header_str(hdr, "host", "?"),
		 (long long)stream_header_int(tr, "records", -1), (long long)stream_header_int(tr, "lost", 0),
		 (long long)stream_header_int(tr, "dropped", 0));
	protowire_uint(&pb, PROFILE_COMMENT, cstr_id(c));
	flush_message();
}

/* ---- samples ---- */

static void label_str(uint32_t key, uint32_t value)
{
	size_t m = protowire_begin(&pb, SAMPLE_LABEL);
	protowire_uint(&pb, LABEL_KEY, key);
	protowire_uint(&pb, LABEL_STR, value);
	protowire_end(&pb, m);
}

static void label_num(uint32_t key, int64_t value)
{
	size_t m = protowire_begin(&pb, SAMPLE_LABEL);
	protowire_uint(&pb, LABEL_KEY, key);
	protowire_int(&pb, LABEL_NUM, value);
	protowire_end(&pb, m);
}

/* comm, pid and tid from a root frame "comm-PID" or "comm-PID/TID". */
static void root_labels(struct mstr root, const struct section *sec)
{
	int64_t pid = sec->pid, tid = sec->tid;
	size_t comm_len = root.len;
	if (sec->root_pid || sec->root_tid) {
		const char *dash = memrchr(root.s, '-', root.len);
		const char *slash = dash ? memchr(dash, '/', root.len - (size_t)(dash - root.s)) : NULL;
		const char *end = root.s + root.len;
		uint64_t v;
		if (dash && marple_parse_u64_span(dash + 1, (size_t)((slash ? slash : end) - dash - 1), &v) == 0) {
			pid = (int64_t)v;
			comm_len = (size_t)(dash - root.s);
		}
		if (slash && marple_parse_u64_span(slash + 1, (size_t)(end - slash - 1), &v) == 0)
			tid = (int64_t)v;
	}
	label_str(key_comm, string_id(root.s, comm_len));
	if (pid >= 0)
		label_num(key_pid, pid);
	if (tid >= 0)
		label_num(key_tid, tid);
}

static int64_t value_of(uint64_t v, const char *file, unsigned long line)
{
	if (v <= INT64_MAX)
		return (int64_t)v;
	if (nclamped++ < MARPLE_REPORT_FIRST)
		marple_warn_at(file, line, "weight %llu does not fit pprof's int64: written as 2^63-1",
			(unsigned long long)v);
	return INT64_MAX;
}

static void add_sample(const struct stack_rec *s, const struct section *sec, const char *file,
		       unsigned long line)
{
	size_t delim = s->nframes;	/* frames after a "-" frame are the kernel's */
	for (size_t i = 1; i < s->nframes; i++)
		if (s->frames[i].len == 1 && s->frames[i].s[0] == '-') {
			delim = i;
			break;
		}
	/* Each frame's hash, then its id, then its location, every step asked
	 * for the whole stack before the next (intern.h): the tables are bigger
	 * than the cache, and the misses are waited for together. */
	static uint32_t *id;
	static size_t id_cap;
	id = marple_grow(id, &id_cap, s->nframes, sizeof(*id));
	for (size_t i = 0; i < s->nframes; i++) {
		id[i] = intern_hash(s->frames[i].s, s->frames[i].len);
		intern_prefetch(frames, id[i], 0);
	}
	for (size_t i = 0; i < s->nframes; i++)
		intern_prefetch(frames, id[i], 1);
	for (size_t i = 0; i < s->nframes; i++) {
		id[i] = intern_get_hashed(frames, s->frames[i].s, s->frames[i].len, id[i]);
		if ((size_t)id[i] * 2 < loc_of_len)
			__builtin_prefetch(&loc_of[(size_t)id[i] * 2]);
	}
	size_t m = protowire_begin(&pb, PROFILE_SAMPLE);
	size_t l = protowire_begin(&pb, SAMPLE_LOCATION_ID);
	for (size_t i = s->nframes; i-- > 0;)
		if (i != delim)
			protowire_varint(&pb, location_of(s->frames[i], id[i], i > delim || (sec->kernel_only && i > 0)));
	protowire_end(&pb, l);
	size_t v = protowire_begin(&pb, SAMPLE_VALUE);
	int64_t w = value_of(s->weight, file, line);
	protowire_varint(&pb, (uint64_t)w);
	if (kind.n == 2) {
		unsigned __int128 ns = (unsigned __int128)(uint64_t)w * 1000000000u / (sec->freq ? sec->freq : 1);
		protowire_varint(&pb, ns > INT64_MAX ? (uint64_t)INT64_MAX : (uint64_t)ns);
	}
	protowire_end(&pb, v);
	if (sec->host)
		label_str(key_host, sec->host);
	if (s->nframes > 0)
		root_labels(s->frames[0], sec);
	if (sec->cpu >= 0)
		label_num(key_cpu, sec->cpu);
	protowire_end(&pb, m);
	flush_message();
	nsamples++;
}

/* Folded text (marple-fold's output, "comm;main;f 12"): one section of
 * sample counts, its root frames the processes.  Returns 0, or -1 when its
 * sample types differ from an earlier input's or it cannot be read (message
 * printed). */
static int read_folded(struct lines *l, const char *file)
{
	static struct mstr *frames;
	static size_t cap;
	struct section sec;
	struct folded_line fl;
	struct folded_profile p = { .file = file, .what = "pprof", .integral = 1 };
	int r, begun = 0;

	while ((r = folded_next_sample(l, &p, &fl, &nbad)) > 0) {
		if (!begun++) {	/* at the first stack: a file of bad lines has none */
			json_t *hdr = json_pack("{s:s}", "interface", "folded text");
			int ok = section_begin(hdr, 0, lines_lineno(l), file, &sec);
			json_decref(hdr);
			if (ok < 0)
				return -1;
		}
		struct stack_rec s = { fl.icount[0], folded_split_frames(fl.stack, fl.len, &frames, &cap), frames };
		add_sample(&s, &sec, file, lines_lineno(l));
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
	struct section sec = { 0 };
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
			if (section_begin(stream_reader_header(r), stream_reader_section(r), stream_reader_line(r), file,
					  &sec) < 0) {
				rc = -1;
				break;
			}
		} else if (skip) {
			continue;
		} else if (it == STREAM_RECORD) {
			add_sample(stream_reader_stack(r), &sec, file, stream_reader_line(r));
		} else if (it == STREAM_TRAILER) {
			framedesc_add(described, stream_reader_trailer(r));
			section_end(r, file);
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

/* ---- the rest of the profile, after the samples ---- */

static void value_type(uint32_t field, uint32_t type, uint32_t unit)
{
	size_t m = protowire_begin(&pb, field);
	protowire_uint(&pb, VALUETYPE_TYPE, type);
	protowire_uint(&pb, VALUETYPE_UNIT, unit);
	protowire_end(&pb, m);
}

/* What the trailers told about each location, worked out before any is
 * written: the mapping of each file (with its build id) and one function per
 * Python function (all its lines), one per name otherwise. */
struct file_mapping {
	uint32_t file, build_id;	/* string ids */
	uint64_t limit;			/* past the largest offset of its locations */
};
static struct file_mapping *maps;	/* mapping id MAPPING_FIRST_FILE + i */
static size_t nmaps, maps_cap;
enum { MAPPING_FIRST_FILE = 3 };

struct located {
	uint32_t mapping, function, fname;	/* function: id; fname: its name's string id */
	uint32_t file;				/* the function's file (string id), 0 none */
	uint64_t address;
	int64_t line;
};

static struct located *locate_all(void)
{
	struct located *at = marple_calloc(nloc ? nloc : 1, sizeof(*at));
	struct intern *map_keys = intern_new(), *func_keys = intern_new();
	uint32_t nfunc = 0;

	for (size_t i = 0; i < nloc; i++) {
		size_t len;
		const char *name = intern_str(frames, loc_frame[i], &len);
		const struct framedesc_frame *d = framedesc_get(described, name, len);
		struct located *a = &at[i];
		if (framedesc_is(d, "kernel"))	/* told so, with no "_[k]" nor "-" */
			loc_kernel[i] = 1;
		a->mapping = loc_kernel[i] ? MAPPING_KERNEL : MAPPING_USER;
		a->fname = loc_name[i];
		if (d && !loc_kernel[i] && d->file && d->file[0] != '[' &&
		    !framedesc_is(d, "python") && !framedesc_is(d, "marker") && !framedesc_is(d, "kernel")) {
			/* the file (and build id) is the mapping: one per file */
			size_t bl = d->build_id ? strlen(d->build_id) : 0;
			char *key = marple_malloc(d->file_len + bl + 2);
			memcpy(key, d->file, d->file_len);
			key[d->file_len] = 0;
			memcpy(key + d->file_len + 1, d->build_id ? d->build_id : "", bl + 1);
			uint32_t m = intern_get(map_keys, key, d->file_len + bl + 1);
			free(key);
			if (m == nmaps) {
				maps = marple_grow(maps, &maps_cap, nmaps + 1, sizeof(*maps));
				maps[nmaps++] = (struct file_mapping){ string_id(d->file, d->file_len),
								       bl ? cstr_id(d->build_id) : 0, 1 };
			}
			a->mapping = MAPPING_FIRST_FILE + m;
			if (d->has_offset) {
				a->address = d->offset;
				if (d->offset >= maps[m].limit)
					maps[m].limit = d->offset + 1;
			}
		}
		if (d && framedesc_is(d, "python")) {
			/* one function per (qualname, file), its lines on the locations */
			size_t nl = framedesc_function_len(d, name, len);
			a->fname = string_id(name, nl);
			a->file = d->file ? string_id(d->file, d->file_len) : 0;
			a->line = d->line;
			char key[2 * sizeof(uint32_t)];
			memcpy(key, &a->fname, sizeof(uint32_t));
			memcpy(key + sizeof(uint32_t), &a->file, sizeof(uint32_t));
			uint32_t f = intern_get(func_keys, key, sizeof(key));
			if (f == nfunc)
				nfunc++;
			a->function = f + 1;
		} else {
			char key[1 + sizeof(size_t)];	/* a function of its own */
			key[0] = 1;
			memcpy(key + 1, &i, sizeof(size_t));
			uint32_t f = intern_get(func_keys, key, sizeof(key));
			if (f == nfunc)
				nfunc++;
			a->function = f + 1;
		}
	}
	intern_free(map_keys);
	intern_free(func_keys);
	return at;
}

static void write_mappings(void)	/* after locate_all */
{
	int used[3] = { 0 };
	for (size_t i = 0; i < nloc; i++)
		used[loc_kernel[i] ? MAPPING_KERNEL : MAPPING_USER] = 1;
	for (int id = MAPPING_USER; id <= MAPPING_KERNEL; id++) {
		if (!used[id])
			continue;
		size_t m = protowire_begin(&pb, PROFILE_MAPPING);
		protowire_uint(&pb, MAPPING_ID, (uint64_t)id);
		/* frames whose file no trailer told: no file name */
		protowire_uint(&pb, MAPPING_FILENAME, id == MAPPING_KERNEL ? cstr_id("[kernel.kallsyms]") : 0);
		protowire_uint(&pb, MAPPING_HAS_FUNCTIONS, 1);
		protowire_end(&pb, m);
		flush_message();
	}
	/* a file's locations are at their functions' offsets in it: the mapping
	 * runs from 0 (file offset 0) past the largest */
	for (size_t i = 0; i < nmaps; i++) {
		size_t m = protowire_begin(&pb, PROFILE_MAPPING);
		protowire_uint(&pb, MAPPING_ID, MAPPING_FIRST_FILE + i);
		protowire_uint(&pb, MAPPING_MEMORY_START, 0);
		protowire_uint(&pb, MAPPING_MEMORY_LIMIT, maps[i].limit);
		protowire_uint(&pb, MAPPING_FILE_OFFSET, 0);
		protowire_uint(&pb, MAPPING_FILENAME, maps[i].file);
		if (maps[i].build_id)
			protowire_uint(&pb, MAPPING_BUILD_ID, maps[i].build_id);
		protowire_uint(&pb, MAPPING_HAS_FUNCTIONS, 1);
		protowire_end(&pb, m);
		flush_message();
	}
}

/* A location per frame name (in the user or kernel mapping, or its file's);
 * a function per name, but one per Python function, each location's Line
 * giving its line. */
static void write_locations(void)
{
	struct located *at = locate_all();
	uint32_t written = 0;

	write_mappings();
	for (size_t i = 0; i < nloc; i++) {
		const struct located *a = &at[i];
		size_t m = protowire_begin(&pb, PROFILE_LOCATION);
		protowire_uint(&pb, LOCATION_ID, i + 1);
		protowire_uint(&pb, LOCATION_MAPPING_ID, a->mapping);
		if (a->address)
			protowire_uint(&pb, LOCATION_ADDRESS, a->address);
		size_t l = protowire_begin(&pb, LOCATION_LINE);
		protowire_uint(&pb, LINE_FUNCTION_ID, a->function);
		if (a->line > 0)
			protowire_int(&pb, LINE_LINE, a->line);
		protowire_end(&pb, l);
		protowire_end(&pb, m);
		if (a->function > written) {	/* functions are numbered in order of first use */
			written = a->function;
			m = protowire_begin(&pb, PROFILE_FUNCTION);
			protowire_uint(&pb, FUNCTION_ID, a->function);
			protowire_uint(&pb, FUNCTION_NAME, a->fname);
			protowire_uint(&pb, FUNCTION_SYSTEM_NAME, a->fname);
			if (a->file)
				protowire_uint(&pb, FUNCTION_FILENAME, a->file);
			protowire_end(&pb, m);
		}
		flush_message();
	}
	flush_message();
	free(at);
}

static void write_rest(void)
{
	for (int i = 0; i < kind.n; i++)
		value_type(PROFILE_SAMPLE_TYPE, kind.type[i], kind.unit[i]);
	if (kind.period) {
		value_type(PROFILE_PERIOD_TYPE, kind.type[1], kind.unit[1]);
		protowire_uint(&pb, PROFILE_PERIOD, kind.period);
	}
	if (time_first) {
		protowire_uint(&pb, PROFILE_TIME_NANOS, time_first);
		protowire_uint(&pb, PROFILE_DURATION_NANOS, time_last - time_first);
	}
	flush_message();
	write_locations();
	/* the string table last: every string is known now */
	for (size_t i = 0; i < intern_count(strs); i++) {
		size_t len;
		const char *s = intern_str(strs, (uint32_t)i, &len);
		protowire_bytes(&pb, PROFILE_STRING_TABLE, s, len);
		flush_message();
	}
	compress_pending();
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

	strs = intern_new();
	frames = intern_new();
	described = framedesc_new();
	intern_get(strs, "", 0);	/* pprof: string 0 is "" */
	key_host = cstr_id("host"), key_comm = cstr_id("comm"), key_pid = cstr_id("pid");
	key_tid = cstr_id("tid"), key_cpu = cstr_id("cpu");
	if (!(gz = libdeflate_alloc_compressor(opt.level)))
		marple_fatal(EXIT_DATA, "out of memory");
	char *stdin_only[] = { "-" };
	int n = argc - optind;
	char **paths = n > 0 ? argv + optind : stdin_only;
	for (int i = 0; i < (n > 0 ? n : 1); i++)
		if (read_input(paths[i]) < 0)
			return EXIT_DATA;
	marple_warn_skipped_lines(nbad);
	if (nclamped > MARPLE_REPORT_FIRST)
		marple_warn("%llu weights written as 2^63-1", (unsigned long long)nclamped);
	if (!kind.n || !nsamples) {
		marple_warn_at(marple_operands_name(n, argv + optind), 0, "%s",
			kind.n ? "no stacks in the input" : "no stack sections or folded stacks in the input");
		return EXIT_DATA;
	}
	write_rest();

	struct outfile *o = marple_outfile_open(opt.out);
	/* a short write sets the stream's error, which marple_outfile_commit reports */
	size_t written = fwrite(zout, 1, zout_len, marple_outfile_stream(o));
	if (marple_outfile_commit(o) < 0 || written != zout_len)
		return EXIT_DATA;
	libdeflate_free_compressor(gz);
	return EXIT_OK;
}
