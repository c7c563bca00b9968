/* pprof.c — stack records as one gzipped pprof profile (see pprof.h). */
#include "pprof.h"

#include <stdlib.h>
#include <string.h>
#include <libdeflate.h>

#include "escape.h"
#include "framedesc.h"
#include "intern.h"
#include "protowire.h"
#include "util.h"
#include "weight.h"

/* profile.proto's field numbers (github.com/google/pprof, proto/profile.proto) */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12, PROFILE_COMMENT = 13,
	VALUETYPE_TYPE = 1, VALUETYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,
	LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3,
	MAPPING_ID = 1, MAPPING_MEMORY_START = 2, MAPPING_MEMORY_LIMIT = 3, MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5, MAPPING_BUILD_ID = 6, MAPPING_HAS_FUNCTIONS = 7,
	LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1, LINE_LINE = 2,
	FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4,
};

enum { MAPPING_USER = 1, MAPPING_KERNEL = 2 };
#define KERNEL_SUFFIX "_[k]"

/* The sample types of a section, and where they were first seen (for the message
 * when another input differs). */
struct kind {
	int n;
	uint32_t type[2], unit[2];	/* string ids */
	uint64_t period;		/* ns a CPU sample stands for; 0: not CPU */
	char *where;			/* "file section N (interface)" */
};

/* The output, compressed in memory: written only when complete, so a failure
 * leaves no half profile behind.  Messages gather in pb; each MiB becomes one
 * gzip member (a gzip file may hold several; every gzip reader, Go's among
 * them, reads them as one stream), compressed by libdeflate, which does a
 * whole buffer at a time two to four times faster than zlib. */
#define CHUNK (1u << 20)

/* A file's mapping (marple-format(5) "frames"): its locations are at their
 * functions' offsets in it. */
struct file_mapping {
	uint32_t file, build_id;	/* string ids */
	uint64_t limit;			/* past the largest offset of its locations */
};
enum { MAPPING_FIRST_FILE = 3 };

struct pprof {
	struct intern *strs;		/* the string table; id 0 is "" */
	struct pbuf pb;			/* one top-level message at a time */
	struct intern *frames;		/* frames as read */
	uint32_t *loc_of;		/* by frame id * 2 + kernel: location id, 0 none */
	size_t loc_of_len;
	uint32_t *loc_name;		/* by location id - 1: name id */
	uint32_t *loc_frame;		/* by location id - 1: its frame's id in frames */
	unsigned char *loc_kernel;
	size_t nloc, loc_cap, loc_kcap, loc_fcap;
	struct framedesc *described;	/* the stack trailers' "frames" */
	struct file_mapping *maps;	/* mapping id MAPPING_FIRST_FILE + i */
	size_t nmaps, maps_cap;
	struct kind kind;		/* of the first section */
	uint64_t time_first, time_last;	/* wall-clock ns covered by the sections */
	uint64_t nsamples, nclamped;
	uint32_t key_host, key_comm, key_pid, key_tid, key_cpu;
	uint32_t *id;			/* a stack's frame ids (add_sample) */
	size_t id_cap;
	struct libdeflate_compressor *gz;
	unsigned char *zout;
	size_t zout_len, zout_cap;
};

static void compress_pending(struct pprof *p)
{
	if (!p->pb.n)
		return;
	size_t bound = libdeflate_gzip_compress_bound(p->gz, p->pb.n);
	p->zout = marple_grow(p->zout, &p->zout_cap, p->zout_len + bound, 1);
	size_t k = libdeflate_gzip_compress(p->gz, p->pb.b, p->pb.n, p->zout + p->zout_len, bound);
	if (!k)
		marple_fatal(EXIT_DATA, "gzip compression failed");
	p->zout_len += k;
	p->pb.n = 0;
}

/* A top-level message is complete in pb. */
static void flush_message(struct pprof *p)
{
	if (p->pb.n >= CHUNK)
		compress_pending(p);
}

/* The string id of a name: its bytes when they are UTF-8 (a name decoded
 * from the stream, '%' and all, as every renderer shows it); a name that is
 * not %XX-escaped as a whole, as in marple's headers, so that pprof gets
 * valid strings. */
static uint32_t string_id(struct pprof *p, const char *s, size_t len)
{
	if (escape_is_utf8(s, len))
		return intern_get(p->strs, s, len);
	char *e = escape_dup(s, len);
	uint32_t id = intern_get(p->strs, e, strlen(e));
	free(e);
	return id;
}

static uint32_t cstr_id(struct pprof *p, const char *s)
{
	return string_id(p, s, strlen(s));
}

struct pprof *pprof_new(int gzip_level)
{
	struct pprof *p = marple_calloc(1, sizeof(*p));
	p->strs = intern_new();
	p->frames = intern_new();
	p->described = framedesc_new();
	intern_get(p->strs, "", 0);	/* pprof: string 0 is "" */
	p->key_host = cstr_id(p, "host"), p->key_comm = cstr_id(p, "comm"), p->key_pid = cstr_id(p, "pid");
	p->key_tid = cstr_id(p, "tid"), p->key_cpu = cstr_id(p, "cpu");
	if (!(p->gz = libdeflate_alloc_compressor(gzip_level)))
		marple_fatal(EXIT_DATA, "out of memory");
	return p;
}

void pprof_free(struct pprof *p)
{
	if (!p)
		return;
	intern_free(p->strs);
	intern_free(p->frames);
	protowire_free(&p->pb);
	free(p->loc_of);
	free(p->loc_name);
	free(p->loc_frame);
	free(p->maps);
	framedesc_free(p->described);
	free(p->loc_kernel);
	free(p->kind.where);
	free(p->id);
	libdeflate_free_compressor(p->gz);
	free(p->zout);
	free(p);
}

uint64_t pprof_samples(const struct pprof *p)
{
	return p->nsamples;
}

int pprof_has_section(const struct pprof *p)
{
	return p->kind.n > 0;
}

/* Frames are looked up by their bytes as read (one hash lookup a frame, the
 * common case); only a frame seen the first time is stripped of "_[k]",
 * escaped and put in the string table. */
static uint32_t location_of(struct pprof *p, struct mstr f, uint32_t frame, int kernel)
{
	size_t slot = (size_t)frame * 2 + (size_t)kernel;
	if (slot < p->loc_of_len && p->loc_of[slot])
		return p->loc_of[slot];
	if (slot >= p->loc_of_len) {
		size_t old = p->loc_of_len;
		p->loc_of = marple_grow(p->loc_of, &p->loc_of_len, slot + 2, sizeof(*p->loc_of));
		memset(p->loc_of + old, 0, (p->loc_of_len - old) * sizeof(*p->loc_of));
	}
	size_t k = sizeof(KERNEL_SUFFIX) - 1;
	if (f.len > k && memcmp(f.s + f.len - k, KERNEL_SUFFIX, k) == 0) {
		f.len -= k;
		kernel = 1;
	}
	p->loc_name = marple_grow(p->loc_name, &p->loc_cap, p->nloc + 1, sizeof(*p->loc_name));
	p->loc_kernel = marple_grow(p->loc_kernel, &p->loc_kcap, p->nloc + 1, 1);
	p->loc_frame = marple_grow(p->loc_frame, &p->loc_fcap, p->nloc + 1, sizeof(*p->loc_frame));
	p->loc_frame[p->nloc] = frame;
	p->loc_name[p->nloc] = string_id(p, f.s, f.len);
	p->loc_kernel[p->nloc] = (unsigned char)kernel;
	return p->loc_of[slot] = (uint32_t)++p->nloc;
}

/* ---- sections ---- */

/* The sample types a section's weight stands for (lib/format/weight.h;
 * marple-pprof(1)): samples with a frequency are CPU time too. */
static void kind_of(struct pprof *p, json_t *hdr, uint64_t freq, struct kind *k)
{
	struct weight_meaning w;

	weight_meaning_of(hdr, &w);
	k->n = 1;
	k->period = 0;
	k->type[0] = cstr_id(p, w.type), k->unit[0] = cstr_id(p, w.type_unit);
	if (strcmp(w.unit, "samples") == 0 && freq) {
		k->n = 2;
		k->type[1] = cstr_id(p, "cpu"), k->unit[1] = cstr_id(p, "nanoseconds");
		k->period = 1000000000 / freq;
	}
}

static void kind_describe(struct pprof *p, const struct kind *k, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = 0;
	for (int i = 0; i < k->n && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s/%s", i ? "," : "", intern_str(p->strs, k->type[i], NULL),
				       intern_str(p->strs, k->unit[i], NULL));
}

/* The first section sets the profile's sample types; later ones must match.
 * Returns 0, or -1 after a message naming both. */
static int kind_check(struct pprof *p, json_t *hdr, long section, unsigned long line,
		      const struct pprof_section *sec, const char *file)
{
	struct kind k;
	char here[256];
	kind_of(p, hdr, sec->freq, &k);
	snprintf(here, sizeof(here), "%s section %ld (%s)", file, section, stream_header_str(hdr, "interface", "?"));
	if (!p->kind.n) {
		p->kind = k;
		p->kind.where = marple_strdup(here);
		return 0;
	}
	if (k.n == p->kind.n && !memcmp(k.type, p->kind.type, sizeof(k.type[0]) * (size_t)k.n) &&
	    !memcmp(k.unit, p->kind.unit, sizeof(k.unit[0]) * (size_t)k.n))
		return 0;
	char a[200], b[200];
	kind_describe(p, &k, a, sizeof(a));
	kind_describe(p, &p->kind, b, sizeof(b));
	marple_warn_at(file, line,
		"section %ld (%s) has sample types %s, but %s has %s: one profile holds one kind of data "
		"(convert them separately)", section, stream_header_str(hdr, "interface", "?"), a, p->kind.where, b);
	return -1;
}

static int64_t option_int(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_integer(v) ? (int64_t)json_integer_value(v) : -1;
}

int pprof_section_begin(struct pprof *p, json_t *hdr, long section, unsigned long line, const char *file,
			struct pprof_section *sec)
{
	json_t *o = json_object_get(hdr, "options");
	const char *host = stream_header_str(hdr, "host", NULL);

	*sec = (struct pprof_section){ .host = host ? cstr_id(p, host) : 0 };
	sec->pid = option_int(o, "pid");
	sec->tid = option_int(o, "tid");
	sec->cpu = option_int(o, "cpu");
	/* marple-fold --pid/--tid names the process "comm-PID[/TID]" */
	sec->root_pid = json_is_true(json_object_get(o, "pid"));
	sec->root_tid = json_is_true(json_object_get(o, "tid"));
	sec->kernel_only = strcmp(stream_header_str(o, "stacks", ""), "kernel") == 0;
	int64_t freq = option_int(o, "frequency");
	sec->freq = freq > 0 ? (uint64_t)freq : 0;
	if (kind_check(p, hdr, section, line, sec, file) < 0)
		return -1;

	int64_t wall = stream_header_int(hdr, "wall_ns", -1);
	if (wall > 0 && (!p->time_first || (uint64_t)wall < p->time_first))
		p->time_first = (uint64_t)wall;
	if (wall > 0 && (uint64_t)wall > p->time_last)
		p->time_last = (uint64_t)wall;
	return 0;
}

void pprof_section_end(struct pprof *p, json_t *hdr, json_t *tr, long section, const char *file)
{
	int64_t wall = stream_header_int(hdr, "wall_ns", -1), start = stream_header_int(hdr, "start_ns", -1);
	int64_t end = tr ? stream_header_int(tr, "end_ns", -1) : -1;
	if (wall > 0 && start >= 0 && end >= start && (uint64_t)(wall + (end - start)) > p->time_last)
		p->time_last = (uint64_t)(wall + (end - start));
	char c[300];
	snprintf(c, sizeof(c), "%s section %ld: %s on %s, %lld records, %lld lost, %lld dropped", file,
		 section, stream_header_str(hdr, "interface", "?"), stream_header_str(hdr, "host", "?"),
		 (long long)(tr ? stream_header_int(tr, "records", -1) : -1),
		 (long long)(tr ? stream_header_int(tr, "lost", 0) : 0),
		 (long long)(tr ? stream_header_int(tr, "dropped", 0) : 0));
	protowire_uint(&p->pb, PROFILE_COMMENT, cstr_id(p, c));
	flush_message(p);
	if (tr)
		framedesc_add(p->described, tr);
}

/* ---- samples ---- */

static void label_str(struct pprof *p, uint32_t key, uint32_t value)
{
	size_t m = protowire_begin(&p->pb, SAMPLE_LABEL);
	protowire_uint(&p->pb, LABEL_KEY, key);
	protowire_uint(&p->pb, LABEL_STR, value);
	protowire_end(&p->pb, m);
}

static void label_num(struct pprof *p, uint32_t key, int64_t value)
{
	size_t m = protowire_begin(&p->pb, SAMPLE_LABEL);
	protowire_uint(&p->pb, LABEL_KEY, key);
	protowire_int(&p->pb, LABEL_NUM, value);
	protowire_end(&p->pb, m);
}

/* comm, pid and tid from a root frame "comm-PID" or "comm-PID/TID". */
static void root_labels(struct pprof *p, struct mstr root, const struct pprof_section *sec)
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
	label_str(p, p->key_comm, string_id(p, root.s, comm_len));
	if (pid >= 0)
		label_num(p, p->key_pid, pid);
	if (tid >= 0)
		label_num(p, p->key_tid, tid);
}

static int64_t value_of(struct pprof *p, uint64_t v, const char *file, unsigned long line)
{
	if (v <= INT64_MAX)
		return (int64_t)v;
	if (p->nclamped++ < MARPLE_REPORT_FIRST)
		marple_warn_at(file, line, "weight %llu does not fit pprof's int64: written as 2^63-1",
			(unsigned long long)v);
	return INT64_MAX;
}

void pprof_add_sample(struct pprof *p, const struct stack_rec *s, const struct pprof_section *sec, const char *file,
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
	uint32_t *id = p->id = marple_grow(p->id, &p->id_cap, s->nframes, sizeof(*p->id));
	for (size_t i = 0; i < s->nframes; i++) {	/* by key: a tagged frame is other code */
		struct mstr k = stream_frame_key(s, i);
		id[i] = intern_hash(k.s, k.len);
		intern_prefetch(p->frames, id[i], 0);
	}
	for (size_t i = 0; i < s->nframes; i++)
		intern_prefetch(p->frames, id[i], 1);
	for (size_t i = 0; i < s->nframes; i++) {
		struct mstr k = stream_frame_key(s, i);
		id[i] = intern_get_hashed(p->frames, k.s, k.len, id[i]);
		if ((size_t)id[i] * 2 < p->loc_of_len)
			__builtin_prefetch(&p->loc_of[(size_t)id[i] * 2]);
	}
	struct pbuf *pb = &p->pb;
	size_t m = protowire_begin(pb, PROFILE_SAMPLE);
	size_t l = protowire_begin(pb, SAMPLE_LOCATION_ID);
	for (size_t i = s->nframes; i-- > 0;)
		if (i != delim)
			protowire_varint(pb, location_of(p, s->frames[i], id[i], i > delim || (sec->kernel_only && i > 0)));
	protowire_end(pb, l);
	size_t v = protowire_begin(pb, SAMPLE_VALUE);
	int64_t w = value_of(p, s->weight, file, line);
	protowire_varint(pb, (uint64_t)w);
	if (p->kind.n == 2) {
		unsigned __int128 ns = (unsigned __int128)(uint64_t)w * 1000000000u / (sec->freq ? sec->freq : 1);
		protowire_varint(pb, ns > INT64_MAX ? (uint64_t)INT64_MAX : (uint64_t)ns);
	}
	protowire_end(pb, v);
	if (sec->host)
		label_str(p, p->key_host, sec->host);
	if (s->nframes > 0)
		root_labels(p, s->frames[0], sec);
	if (sec->cpu >= 0)
		label_num(p, p->key_cpu, sec->cpu);
	protowire_end(pb, m);
	flush_message(p);
	p->nsamples++;
}

/* ---- the rest of the profile, after the samples ---- */

static void value_type(struct pprof *p, uint32_t field, uint32_t type, uint32_t unit)
{
	size_t m = protowire_begin(&p->pb, field);
	protowire_uint(&p->pb, VALUETYPE_TYPE, type);
	protowire_uint(&p->pb, VALUETYPE_UNIT, unit);
	protowire_end(&p->pb, m);
}

/* What the trailers told about a location, worked out before any is written. */
struct located {
	uint32_t mapping, function, fname;	/* function: id; fname: its name's string id */
	uint32_t file;				/* the function's file (string id), 0 none */
	uint64_t address;
	int64_t line;
};

/* Each location's mapping (its file's, with the file's build id, when the
 * trailers describe it), address (its function's offset in the file) and
 * function: one per Python or inlined native function (name, source file),
 * its lines on the locations; one per name otherwise. */
static struct located *locate_all(struct pprof *p)
{
	struct located *at = marple_calloc(p->nloc ? p->nloc : 1, sizeof(*at));
	struct intern *map_keys = intern_new(), *func_keys = intern_new();
	uint32_t nfunc = 0;

	for (size_t i = 0; i < p->nloc; i++) {
		size_t key_len, len;
		const char *name = intern_str(p->frames, p->loc_frame[i], &key_len);
		const struct framedesc_frame *d = framedesc_get(p->described, name, key_len);
		stream_frame_key_split(name, key_len, &len);
		struct located *a = &at[i];
		if (framedesc_is(d, "kernel"))	/* told so, with no "_[k]" nor "-" */
			p->loc_kernel[i] = 1;
		a->mapping = p->loc_kernel[i] ? MAPPING_KERNEL : MAPPING_USER;
		a->fname = p->loc_name[i];
		/* a source frame's file is a source file, not a mapped one */
		int source = framedesc_is_script(d) || framedesc_is(d, "inline");
		if (d && !p->loc_kernel[i] && d->file && d->file[0] != '[' && !source &&
		    !framedesc_is(d, "marker")) {
			size_t bl = d->build_id ? strlen(d->build_id) : 0;
			char *key = marple_malloc(d->file_len + bl + 2);
			memcpy(key, d->file, d->file_len);
			key[d->file_len] = 0;
			memcpy(key + d->file_len + 1, d->build_id ? d->build_id : "", bl + 1);
			uint32_t m = intern_get(map_keys, key, d->file_len + bl + 1);
			free(key);
			if (m == p->nmaps) {
				p->maps = marple_grow(p->maps, &p->maps_cap, p->nmaps + 1, sizeof(*p->maps));
				p->maps[p->nmaps++] = (struct file_mapping){ string_id(p, d->file, d->file_len),
									     bl ? cstr_id(p, d->build_id) : 0, 1 };
			}
			a->mapping = MAPPING_FIRST_FILE + m;
			if (d->has_offset) {
				a->address = d->offset;
				if (d->offset >= p->maps[m].limit)
					p->maps[m].limit = d->offset + 1;
			}
		}
		char key[1 + 2 * sizeof(uint32_t) + sizeof(size_t)];
		size_t klen;
		if (source) {
			a->fname = string_id(p, name, framedesc_function_len(d, name, len));
			a->file = d->file ? string_id(p, d->file, d->file_len) : 0;
			a->line = d->line;
			key[0] = 0;
			memcpy(key + 1, &a->fname, sizeof(uint32_t));
			memcpy(key + 1 + sizeof(uint32_t), &a->file, sizeof(uint32_t));
			klen = 1 + 2 * sizeof(uint32_t);
		} else {	/* a function of its own, at its source line if told */
			const char *src;
			size_t src_len;
			if (framedesc_source(d, &src, &src_len, &a->line))
				a->file = string_id(p, src, src_len);
			key[0] = 1;
			memcpy(key + 1, &i, sizeof(size_t));
			klen = 1 + sizeof(size_t);
		}
		uint32_t f = intern_get(func_keys, key, klen);
		if (f == nfunc)
			nfunc++;
		a->function = f + 1;
	}
	intern_free(map_keys);
	intern_free(func_keys);
	return at;
}

static void write_mappings(struct pprof *p)	/* after locate_all */
{
	int used[3] = { 0 };
	for (size_t i = 0; i < p->nloc; i++)
		used[p->loc_kernel[i] ? MAPPING_KERNEL : MAPPING_USER] = 1;
	for (int id = MAPPING_USER; id <= MAPPING_KERNEL; id++) {
		if (!used[id])
			continue;
		size_t m = protowire_begin(&p->pb, PROFILE_MAPPING);
		protowire_uint(&p->pb, MAPPING_ID, (uint64_t)id);
		/* frames whose file no trailer told: no file name */
		protowire_uint(&p->pb, MAPPING_FILENAME, id == MAPPING_KERNEL ? cstr_id(p, "[kernel.kallsyms]") : 0);
		protowire_uint(&p->pb, MAPPING_HAS_FUNCTIONS, 1);
		protowire_end(&p->pb, m);
		flush_message(p);
	}
	/* a file's mapping runs from 0 (file offset 0) past its largest offset */
	for (size_t i = 0; i < p->nmaps; i++) {
		size_t m = protowire_begin(&p->pb, PROFILE_MAPPING);
		protowire_uint(&p->pb, MAPPING_ID, MAPPING_FIRST_FILE + i);
		protowire_uint(&p->pb, MAPPING_MEMORY_START, 0);
		protowire_uint(&p->pb, MAPPING_MEMORY_LIMIT, p->maps[i].limit);
		protowire_uint(&p->pb, MAPPING_FILE_OFFSET, 0);
		protowire_uint(&p->pb, MAPPING_FILENAME, p->maps[i].file);
		if (p->maps[i].build_id)
			protowire_uint(&p->pb, MAPPING_BUILD_ID, p->maps[i].build_id);
		protowire_uint(&p->pb, MAPPING_HAS_FUNCTIONS, 1);
		protowire_end(&p->pb, m);
		flush_message(p);
	}
}

/* A location per frame name, in the user or kernel mapping or its file's;
 * functions as locate_all made them, each written with its first location. */
static void write_locations(struct pprof *p)
{
	struct pbuf *pb = &p->pb;
	struct located *at = locate_all(p);
	uint32_t written = 0;

	write_mappings(p);
	for (size_t i = 0; i < p->nloc; i++) {
		const struct located *a = &at[i];
		size_t m = protowire_begin(pb, PROFILE_LOCATION);
		protowire_uint(pb, LOCATION_ID, i + 1);
		protowire_uint(pb, LOCATION_MAPPING_ID, a->mapping);
		if (a->address)
			protowire_uint(pb, LOCATION_ADDRESS, a->address);
		size_t l = protowire_begin(pb, LOCATION_LINE);
		protowire_uint(pb, LINE_FUNCTION_ID, a->function);
		if (a->line > 0)
			protowire_int(pb, LINE_LINE, a->line);
		protowire_end(pb, l);
		protowire_end(pb, m);
		if (a->function > written) {	/* functions are numbered in order of first use */
			written = a->function;
			m = protowire_begin(pb, PROFILE_FUNCTION);
			protowire_uint(pb, FUNCTION_ID, a->function);
			protowire_uint(pb, FUNCTION_NAME, a->fname);
			protowire_uint(pb, FUNCTION_SYSTEM_NAME, a->fname);
			if (a->file)
				protowire_uint(pb, FUNCTION_FILENAME, a->file);
			protowire_end(pb, m);
		}
		flush_message(p);
	}
	flush_message(p);
	free(at);
}

const unsigned char *pprof_finish(struct pprof *p, size_t *len)
{
	if (p->nclamped > MARPLE_REPORT_FIRST)
		marple_warn("%llu weights written as 2^63-1", (unsigned long long)p->nclamped);
	for (int i = 0; i < p->kind.n; i++)
		value_type(p, PROFILE_SAMPLE_TYPE, p->kind.type[i], p->kind.unit[i]);
	if (p->kind.period) {
		value_type(p, PROFILE_PERIOD_TYPE, p->kind.type[1], p->kind.unit[1]);
		protowire_uint(&p->pb, PROFILE_PERIOD, p->kind.period);
	}
	if (p->time_first) {
		protowire_uint(&p->pb, PROFILE_TIME_NANOS, p->time_first);
		protowire_uint(&p->pb, PROFILE_DURATION_NANOS, p->time_last - p->time_first);
	}
	flush_message(p);
	write_locations(p);
	/* the string table last: every string is known now */
	for (size_t i = 0; i < intern_count(p->strs); i++) {
		size_t n;
		const char *s = intern_str(p->strs, (uint32_t)i, &n);
		protowire_bytes(&p->pb, PROFILE_STRING_TABLE, s, n);
		flush_message(p);
	}
	compress_pending(p);
	*len = p->zout_len;
	return p->zout;
}
