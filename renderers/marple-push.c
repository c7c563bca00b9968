/* marple-push — send a capture's stack sections to a continuous-profiling
 * server: Pyroscope's /ingest (folded text, the default) or OpenTelemetry's
 * OTLP profiles signal (--format otlp, the development proto pinned below).
 *
 *   $ marple-push http://pyroscope:4040 cpu.marple
 *   $ marple-push -f otlp --spool /var/spool/marple http://collector:4318 cpu.marple
 *
 * One request per stack section.  A server that is down or slow costs a
 * bounded time: every attempt has a timeout, a request is tried --retries
 * times with a doubling pause, and once one request has failed that way the
 * rest of the run is not tried at all (the server is down: waiting for each
 * would multiply the wait).  What was not sent goes to the spool directory
 * (--spool), one file per request, named on stderr, and is sent first by the
 * next run with the same spool; the spool is bounded (--spool-max), its
 * oldest requests dropped (and named) to make room.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <curl/curl.h>

#include "escape.h"
#include "intern.h"
#include "lines.h"
#include "folded.h"
#include "framedesc.h"
#include "options.h"
#include "pprof.h"
#include "protowire.h"
#include "stream.h"
#include "timed.h"
#include "weight.h"
#include "util.h"

/* The OTLP profiles proto this encoder follows: a development signal whose
 * messages still change between releases, so one version, named in -h, the
 * man page and tests/push/proto (the copy the tests decode with). */
#define OTLP_PROTO_VERSION "opentelemetry-proto v1.9.0 (a8951735f780)"
#define OTLP_PATH "/v1development/profiles"
#define PYROSCOPE_PATH "/ingest"
/* 3xx answers followed per request, at most (curl's default is 30) */
#define PUSH_MAX_REDIRECTS 5

enum push_format { FORMAT_PYROSCOPE, FORMAT_PPROF, FORMAT_OTLP };

static struct {
	enum push_format format;
	const char *app;
	const char *spool;
	uint64_t spool_max;
	uint64_t timeout_ms;
	uint64_t retries;
	uint64_t backoff_ms;
	int drain_only;
	struct curl_slist *headers;	/* -H, sent with every request, never spooled */
} opt = {
	.app = "marple", .spool_max = 256u << 20, .timeout_ms = 10000, .retries = 3, .backoff_ms = 1000,
};

enum { OPT_SPOOL_MAX = 256, OPT_TIMEOUT, OPT_RETRIES, OPT_BACKOFF, OPT_DRAIN, OPT_APP };
static const struct options_entry options[] = {
	{ 'f', "format", "FMT", "pyroscope (the default: folded text to URL/ingest),\n"
				"pprof (a gzipped pprof profile, as marple-pprof\n"
				"writes it, to URL/ingest) or otlp (OTLP profiles,\n"
				OTLP_PROTO_VERSION ", protobuf\n"
				"to URL" OTLP_PATH ")" },
	{ OPT_APP, "app", "NAME", "the application name (default: marple); Pyroscope's\n"
				  "name=NAME{host=...,interface=...}, OTLP's service.name" },
	{ 'n', "", "NAME", NULL },	/* the old spelling: -n is a name in messages */
	{ 'H', "header", "'KEY: VALUE'", "send this HTTP header too (X-Scope-OrgID: ...,\n"
					 "Authorization: ...); never written to the spool" },
	{ 's', "spool", "DIR", "keep what could not be sent in DIR (created), and\n"
			       "send what DIR holds first" },
	{ OPT_SPOOL_MAX, "spool-max", "BYTES", "the spool's bound: oldest requests dropped to stay\n"
					      "under it (default: 268435456, 256 MiB)" },
	{ OPT_TIMEOUT, "timeout", "S", "each attempt's limit, connecting included (default: 10)" },
	{ 't', "", "S", NULL },		/* the old spelling: -t is a thread's */
	{ OPT_RETRIES, "retries", "N", "attempts per request (default: 3)" },
	{ OPT_BACKOFF, "backoff", "S", "the pause before the second attempt, doubled before\n"
				       "each next one (default: 1)" },
	{ OPT_DRAIN, "drain", NULL, "send the spool only: no URL, no input" },
	OPTIONS_DESCRIBE("kind=helper"),
	OPTIONS_HELP,
	{ 0 }
};

static const struct options_help help = {
	.synopsis = "[OPTION]... URL [FILE]...\n"
		    "--drain --spool DIR [OPTION]...",
	.about = "Send the stack sections of marple captures to a continuous-profiling server,\n"
		 "one HTTP POST a section: Pyroscope's /ingest API (folded stacks, or a pprof\n"
		 "profile with --format pprof), or with --format otlp OpenTelemetry's profiles\n"
		 "signal, still in development: this program implements\n"
		 OTLP_PROTO_VERSION ", no other.\n"
		 "URL is the server's base (http://host:4040); the API's path is added unless\n"
		 "URL ends with it.\n",
	.after = "With no FILE, or FILE '-', read stdin.  Sections of other datatypes are\n"
		 "skipped.  A server that does not answer costs at most about\n"
		 "retries x timeout + the pauses (33 s at the defaults) for the whole run.\n"
		 "Exit: 0 every request sent (the spool's too), 1 some request not sent (kept\n"
		 "in the spool, or refused by the server, or no --spool: each named on\n"
		 "stderr) or no stack section in the input, 2 usage.  See marple-push(1).\n",
};

/* ---- one request ---- */

struct request {
	char *url;			/* complete, query and all */
	const char *content_type;
	struct pbuf body;
	char *what;			/* "FILE section N (INTERFACE)" or the spool file */
};

static void request_free(struct request *q)
{
	free(q->url);
	free(q->what);
	protowire_free(&q->body);
}

/* ---- reading a section ---- */

/* What a stack section's header says, as both formats need it. */
struct section_info {
	const char *iface, *host, *unit;
	struct weight_meaning weight;	/* what unit measures, how it adds up */
	int64_t freq;			/* options.frequency: samples a second, 0 none */
	uint64_t start_s, end_s;	/* wall clock, whole seconds; 0: unknown */
	uint64_t time_ns, duration_ns;	/* the same in ns (OTLP) */
};

static void section_times(json_t *hdr, json_t *tr, struct section_info *si)
{
	int64_t wall = stream_header_int(hdr, "wall_ns", -1), start = stream_header_int(hdr, "start_ns", -1);
	int64_t end = tr ? stream_header_int(tr, "end_ns", -1) : -1;
	uint64_t dur = (start >= 0 && end >= start) ? (uint64_t)(end - start) : 0;
	uint64_t t0 = wall > 0 ? (uint64_t)wall : marple_now_realtime_ns() - dur;
	si->time_ns = t0;
	si->duration_ns = dur;
	si->start_s = t0 / 1000000000u;
	si->end_s = (t0 + dur + 999999999u) / 1000000000u;
	if (si->end_s <= si->start_s)	/* a profile covers some time */
		si->end_s = si->start_s + 1;
}

/* The records of one section, as they were read. */
struct section_stacks {
	struct pbuf keys;	/* each stack's frames, ';'-joined as marple-fold writes them */
	size_t *off;		/* stack i is keys.b[off[i]..off[i+1]) */
	size_t offcap;
	uint64_t *weight;
	size_t wcap, n;
	/* OTLP: the same stacks as frame ids, root first */
	uint32_t *frame_ids;
	size_t *foff;
	size_t fcap, foffcap;
	/* pprof: the section's profile, built as it is read */
	struct pprof *prof;
	struct pprof_section psec;
};

/* For OTLP: the section's distinct frames by key (stream_frame_key: two
 * functions of one name in two files are two), id i location and function
 * i + 1; and the request's strings, frame names first, id i string i + 1. */
static struct intern *frame_keys, *frame_names;

/* A frame in a folded line: ';' would split it and a control byte end the
 * line, so they become ':' and '?' (marple-fold's rule). */
static void folded_frame(struct pbuf *p, const char *s, size_t len)
{
	for (size_t j = 0; j < len; j++) {
		unsigned char ch = (unsigned char)s[j];
		unsigned char o = ch == ';' ? ':' : (ch < 0x20 || ch == 0x7f) ? '?' : ch;
		protowire_raw(p, &o, 1);
	}
}

static void stacks_add(struct section_stacks *ss, const struct stack_rec *s)
{
	if (!ss->n) {
		ss->off = marple_grow(ss->off, &ss->offcap, 1, sizeof(*ss->off));
		ss->off[0] = 0;
		ss->foff = marple_grow(ss->foff, &ss->foffcap, 1, sizeof(*ss->foff));
		ss->foff[0] = 0;
		ss->keys.n = 0;
	}
	for (size_t i = 0; i < s->nframes; i++) {
		if (i)
			protowire_raw(&ss->keys, ";", 1);
		folded_frame(&ss->keys, s->frames[i].s, s->frames[i].len);
	}
	ss->off = marple_grow(ss->off, &ss->offcap, ss->n + 2, sizeof(*ss->off));
	ss->off[ss->n + 1] = ss->keys.n;
	if (opt.format == FORMAT_OTLP) {
		size_t at = ss->foff[ss->n];
		ss->frame_ids = marple_grow(ss->frame_ids, &ss->fcap, at + s->nframes, sizeof(*ss->frame_ids));
		for (size_t i = 0; i < s->nframes; i++) {	/* a tagged frame is other code */
			struct mstr k = stream_frame_key(s, i);
			ss->frame_ids[at + i] = intern_get(frame_keys, k.s, k.len);
		}
		ss->foff = marple_grow(ss->foff, &ss->foffcap, ss->n + 2, sizeof(*ss->foff));
		ss->foff[ss->n + 1] = at + s->nframes;
	}
	ss->weight = marple_grow(ss->weight, &ss->wcap, ss->n + 1, sizeof(*ss->weight));
	ss->weight[ss->n++] = s->weight;
}

/* ---- Pyroscope ---- */

/* Pyroscope's name syntax (APP{key=value,...}) has no escapes: anything but
 * letters, digits, '.', '-' and '_' in a host or interface becomes '_'. */
static void name_part(char *o, size_t cap, const char *s)
{
	size_t n = 0;
	for (; *s && n + 1 < cap; s++) {
		unsigned char ch = (unsigned char)*s;
		int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
			 ch == '.' || ch == '-' || ch == '_';
		o[n++] = ok ? (char)ch : '_';
	}
	o[n] = 0;
}

/* Pyroscope's units and sample rate for a section: a count of samples at
 * the collector's frequency; a time weight as samples at one per unit of
 * time (sampleRate 10^9 for ns), so that Pyroscope's seconds are right;
 * bytes as bytes, averaged over time when they are outstanding (memleak),
 * summed otherwise. */
static void pyroscope_units(const struct section_info *si, const char **units, uint64_t *rate, const char **agg)
{
	const char *tname;
	uint64_t ns;
	*units = "samples", *rate = 0, *agg = "sum";
	if (strcmp(si->unit, "samples") == 0) {
		*rate = si->freq > 0 ? (uint64_t)si->freq : 0;
	} else if ((ns = stream_time_unit_ns(si->unit, &tname))) {
		*rate = 1000000000u / ns;
	} else if (strcmp(si->unit, "bytes") == 0) {
		*units = "bytes";
		if (si->weight.average)
			*agg = "average";
	} else {
		*units = "objects";
	}
}

/* base with path added to its path (unless it ends in it already), before
 * its query: "http://h/?token=T" + "/ingest" is "http://h/ingest?token=T". */
static char *url_with_path(const char *base, const char *path)
{
	CURLU *u = curl_url();
	char *old = NULL, *joined = NULL, *out = NULL;

	if (curl_url_set(u, CURLUPART_URL, base, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_PATH, &old, 0) == CURLUE_OK) {
		size_t ol = strlen(old), pl = strlen(path);
		while (ol > 0 && old[ol - 1] == '/')
			ol--;
		int has = ol >= pl && memcmp(old + ol - pl, path, pl) == 0;
		joined = marple_malloc(ol + pl + 1);
		memcpy(joined, old, ol);
		strcpy(joined + ol, has ? "" : path);
		char *got = NULL;
		if (curl_url_set(u, CURLUPART_PATH, joined, 0) == CURLUE_OK &&
		    curl_url_get(u, CURLUPART_URL, &got, 0) == CURLUE_OK) {
			out = marple_strdup(got);
			curl_free(got);
		}
	}
	if (!out) {	/* not a URL libcurl takes: sent as given, curl says why */
		out = marple_malloc(strlen(base) + strlen(path) + 1);
		strcpy(out, base);
		strcat(out, path);
	}
	curl_free(old);
	free(joined);
	curl_url_cleanup(u);
	return out;
}

static void pyroscope_request(CURL *c, const char *base, const struct section_info *si,
			      const struct section_stacks *ss, struct request *q, const unsigned char *pprof_gz,
			      size_t pprof_len)
{
	char app[256], host[256], iface[256], name[900];
	const char *units, *agg;
	uint64_t rate;
	name_part(app, sizeof(app), opt.app);
	name_part(host, sizeof(host), si->host);
	name_part(iface, sizeof(iface), si->iface);
	snprintf(name, sizeof(name), "%s{host=%s,interface=%s}", app, host, iface);
	pyroscope_units(si, &units, &rate, &agg);
	char *ename = curl_easy_escape(c, name, 0);
	char *path = url_with_path(base, PYROSCOPE_PATH);
	char rate_s[40] = "";
	if (rate)
		snprintf(rate_s, sizeof(rate_s), "&sampleRate=%llu", (unsigned long long)rate);
	size_t len = strlen(path) + strlen(ename) + 300;
	q->url = marple_malloc(len);
	if (pprof_gz) {	/* the profile says its sample types and period itself */
		snprintf(q->url, len, "%s%cname=%s&from=%llu&until=%llu&format=pprof&spyName=marple", path,
			 strchr(path, '?') ? '&' : '?', ename, (unsigned long long)si->start_s,
			 (unsigned long long)si->end_s);
		q->content_type = "application/octet-stream";
		protowire_raw(&q->body, pprof_gz, pprof_len);
		curl_free(ename);
		free(path);
		return;
	}
	snprintf(q->url, len, "%s%cname=%s&from=%llu&until=%llu&format=folded%s&spyName=marple&units=%s"
		 "&aggregationType=%s", path, strchr(path, '?') ? '&' : '?', ename,
		 (unsigned long long)si->start_s, (unsigned long long)si->end_s, rate_s, units, agg);
	curl_free(ename);
	free(path);
	q->content_type = "text/plain";
	for (size_t i = 0; i < ss->n; i++) {
		char w[32];
		protowire_raw(&q->body, ss->keys.b + ss->off[i], ss->off[i + 1] - ss->off[i]);
		int k = snprintf(w, sizeof(w), " %llu\n", (unsigned long long)ss->weight[i]);
		protowire_raw(&q->body, w, (size_t)k);
	}
}

/* ---- OTLP profiles (tests/push/proto, OTLP_PROTO_VERSION) ---- */

enum {
	REQ_RESOURCE_PROFILES = 1, REQ_DICTIONARY = 2,
	RP_RESOURCE = 1, RP_SCOPE_PROFILES = 2,
	RES_ATTRIBUTES = 1,
	KV_KEY = 1, KV_VALUE = 2, ANY_STRING = 1,
	SP_SCOPE = 1, SP_PROFILES = 2, SCOPE_NAME = 1, SCOPE_VERSION = 2,
	PROF_SAMPLE_TYPE = 1, PROF_SAMPLES = 2, PROF_TIME = 3, PROF_DURATION = 4, PROF_PERIOD_TYPE = 5,
	PROF_PERIOD = 6, PROF_ATTRIBUTES = 11,
	VT_TYPE = 1, VT_UNIT = 2,
	SAMPLE_STACK = 1, SAMPLE_VALUES = 2,
	DICT_MAPPING = 1, DICT_LOCATION = 2, DICT_FUNCTION = 3, DICT_LINK = 4, DICT_STRING = 5,
	DICT_ATTRIBUTE = 6, DICT_STACK = 7,
	MAP_MEMORY_LIMIT = 2, MAP_FILENAME = 4, MAP_ATTRIBUTES = 5,
	LOC_MAPPING = 1, LOC_ADDRESS = 2,
	LOC_LINES = 3, LINE_FUNCTION = 1, LINE_LINE = 2, FUNC_NAME = 1, FUNC_SYSTEM_NAME = 2, FUNC_FILENAME = 3,
	KVU_KEY = 1, KVU_VALUE = 2,
	STACK_LOCATIONS = 1,
};

static void kv_string(struct pbuf *p, uint32_t field, const char *key, const char *value)
{
	size_t m = protowire_begin(p, field);
	protowire_bytes(p, KV_KEY, key, strlen(key));
	size_t v = protowire_begin(p, KV_VALUE);
	protowire_bytes(p, ANY_STRING, value, strlen(value));
	protowire_end(p, v);
	protowire_end(p, m);
}

static void fixed64(struct pbuf *p, uint32_t field, uint64_t v)
{
	unsigned char b[8];
	protowire_tag(p, field, PB_FIXED64);
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	protowire_raw(p, b, 8);
}

/* A frame's name as a string the proto accepts (UTF-8): decoded, or the
 * escaped form for one that is not UTF-8 (as marple-pprof does). */
static void string_entry(struct pbuf *p, const char *s, size_t len)
{
	if (escape_is_utf8(s, len)) {
		protowire_bytes(p, DICT_STRING, s, len);
		return;
	}
	char *e = escape_dup(s, len);
	protowire_bytes(p, DICT_STRING, e, strlen(e));
	free(e);
}

/* A mapping of the request: a file (as the trailer describes frames) and
 * the largest offset a frame in it has. */
struct otlp_map {
	uint32_t file, build_id;	/* string ids + 1 (0: no build id) */
	uint64_t limit;
};

/* Each frame's mapping (index + 1 in maps, 0 none) and address (its
 * function's offset in the file), from the trailer's descriptions: two
 * functions of one name in two files keep their own file and build id; a
 * source frame's (Python's, an inlined native function's) source file
 * (string id + 1, 0 none) and line instead.  Strings the mappings name are
 * added to frame_names. */
static struct otlp_map *otlp_mappings(json_t *tr, size_t nframes, uint32_t *mapping, uint64_t *address,
				      uint32_t *source, int64_t *line, size_t *nmaps)
{
	struct framedesc *fd = framedesc_new();
	struct intern *keys = intern_new();
	struct otlp_map *maps = NULL;
	size_t cap = 0;

	framedesc_add(fd, tr);
	*nmaps = 0;
	for (size_t i = 0; i < nframes; i++) {
		size_t len;
		const char *k = intern_str(frame_keys, (uint32_t)i, &len);
		const struct framedesc_frame *d = framedesc_get(fd, k, len);
		mapping[i] = 0, address[i] = 0, source[i] = 0, line[i] = 0;
		if (d && d->file && (framedesc_is_script(d) || framedesc_is(d, "inline"))) {
			source[i] = 1 + intern_get(frame_names, d->file, d->file_len);
			line[i] = d->line;
			continue;
		}
		if (!d || !d->file || d->file[0] == '[' || framedesc_is(d, "marker"))
			continue;
		uint32_t file = 1 + intern_get(frame_names, d->file, d->file_len);
		uint32_t bid = d->build_id ? 1 + intern_get(frame_names, d->build_id, strlen(d->build_id)) : 0;
		uint32_t pair[2] = { file, bid };
		uint32_t m = intern_get(keys, (const char *)pair, sizeof(pair));
		if (m == *nmaps) {
			maps = marple_grow(maps, &cap, *nmaps + 1, sizeof(*maps));
			maps[(*nmaps)++] = (struct otlp_map){ file, bid, 1 };
		}
		mapping[i] = m + 1;
		if (d->has_offset) {
			address[i] = d->offset;
			if (d->offset >= maps[m].limit)
				maps[m].limit = d->offset + 1;
		}
	}
	intern_free(keys);
	framedesc_free(fd);
	return maps;
}

/* The request's dictionary: mappings (a file each, its build id as the
 * attribute process.executable.build_id.gnu), a location and a function per
 * frame (frame id i is location, function and string i + 1), the strings,
 * the interface attribute (1) and the stacks. */
static void otlp_dictionary(struct pbuf *p, json_t *tr, size_t nframes, const uint32_t *fname, uint32_t s_attr,
			    const char *iface, const struct pbuf *stack_tab)
{
	uint32_t *mapping = marple_malloc((nframes + 1) * sizeof(*mapping));
	uint64_t *address = marple_malloc((nframes + 1) * sizeof(*address));
	uint32_t *source = marple_malloc((nframes + 1) * sizeof(*source));
	int64_t *line = marple_malloc((nframes + 1) * sizeof(*line));
	size_t nmaps;
	struct otlp_map *maps = otlp_mappings(tr, nframes, mapping, address, source, line, &nmaps);
	uint32_t s_bid = nmaps ? 1 + intern_get(frame_names, "process.executable.build_id.gnu", 31) : 0;

	size_t d = protowire_begin(p, REQ_DICTIONARY);
	/* every table's entry 0 is the zero value (the proto's rule) */
	protowire_end(p, protowire_begin(p, DICT_MAPPING));
	for (size_t i = 0; i < nmaps; i++) {
		size_t m = protowire_begin(p, DICT_MAPPING);
		protowire_uint(p, MAP_MEMORY_LIMIT, maps[i].limit);
		protowire_uint(p, MAP_FILENAME, maps[i].file);
		if (maps[i].build_id) {		/* attribute 2 + i: this mapping's build id */
			size_t a = protowire_begin(p, MAP_ATTRIBUTES);
			protowire_varint(p, 2 + i);
			protowire_end(p, a);
		}
		protowire_end(p, m);
	}
	protowire_end(p, protowire_begin(p, DICT_LOCATION));
	for (size_t i = 1; i <= nframes; i++) {
		size_t l = protowire_begin(p, DICT_LOCATION);
		if (mapping[i - 1]) {
			protowire_uint(p, LOC_MAPPING, mapping[i - 1]);
			protowire_uint(p, LOC_ADDRESS, address[i - 1]);
		}
		size_t ln = protowire_begin(p, LOC_LINES);
		protowire_uint(p, LINE_FUNCTION, i);
		if (line[i - 1] > 0)
			protowire_int(p, LINE_LINE, line[i - 1]);
		protowire_end(p, ln);
		protowire_end(p, l);
	}
	protowire_end(p, protowire_begin(p, DICT_FUNCTION));
	for (size_t i = 1; i <= nframes; i++) {
		size_t f = protowire_begin(p, DICT_FUNCTION);
		protowire_uint(p, FUNC_NAME, fname[i - 1]);
		protowire_uint(p, FUNC_SYSTEM_NAME, fname[i - 1]);
		if (source[i - 1])
			protowire_uint(p, FUNC_FILENAME, source[i - 1]);
		protowire_end(p, f);
	}
	protowire_end(p, protowire_begin(p, DICT_LINK));
	protowire_bytes(p, DICT_STRING, "", 0);
	for (size_t i = 0; i < intern_count(frame_names); i++) {
		size_t len;
		const char *s = intern_str(frame_names, (uint32_t)i, &len);
		string_entry(p, s, len);
	}
	protowire_end(p, protowire_begin(p, DICT_ATTRIBUTE));
	size_t kv = protowire_begin(p, DICT_ATTRIBUTE);
	protowire_uint(p, KVU_KEY, s_attr);
	size_t av = protowire_begin(p, KVU_VALUE);
	protowire_bytes(p, ANY_STRING, iface, strlen(iface));
	protowire_end(p, av);
	protowire_end(p, kv);
	for (size_t i = 0; i < nmaps; i++) {
		size_t len = 0;
		const char *bid = maps[i].build_id ? intern_str(frame_names, maps[i].build_id - 1, &len) : "";
		kv = protowire_begin(p, DICT_ATTRIBUTE);
		protowire_uint(p, KVU_KEY, s_bid);
		av = protowire_begin(p, KVU_VALUE);
		protowire_bytes(p, ANY_STRING, bid, len);
		protowire_end(p, av);
		protowire_end(p, kv);
	}
	protowire_end(p, protowire_begin(p, DICT_STACK));
	protowire_raw(p, stack_tab->b, stack_tab->n);
	protowire_end(p, d);
	free(maps);
	free(mapping);
	free(address);
	free(source);
	free(line);
}

/* The string id of each frame's name (a tagged frame's: its name alone),
 * the names put first in the strings. */
static uint32_t *otlp_frame_names(size_t nframes)
{
	uint32_t *fname = marple_malloc((nframes + 1) * sizeof(*fname));

	for (size_t i = 0; i < nframes; i++) {
		size_t len;
		const char *k = intern_str(frame_keys, (uint32_t)i, &len);
		stream_frame_key_split(k, len, &len);
		fname[i] = 1 + intern_get(frame_names, k, len);
	}
	return fname;
}

/* One profile of one sample type (the proto has one a profile), every
 * record a sample with its weight as the value; each distinct frame one
 * function and one location (frame id i is function and location i + 1);
 * strings: "" first, then the frames' names, then the few names of the
 * profile itself and of its mappings that no frame has (a dictionary SHOULD
 * NOT hold a value twice: two frames of one name share its string). */
static void otlp_request(const char *base, const struct section_info *si, const struct section_stacks *ss,
			 json_t *tr, struct request *q)
{
	struct pbuf *p = &q->body;
	struct intern *stacks = intern_new();
	struct pbuf samples = { 0 }, stack_tab = { 0 };
	uint32_t *loc = NULL;
	size_t loccap = 0;
	size_t nframes = intern_count(frame_keys);
	uint32_t *fname = otlp_frame_names(nframes);

	/* sample type and period, marple-pprof's (lib/format/weight.h) */
	const char *type = si->weight.type, *unit = si->weight.type_unit;
	int cpu = strcmp(si->unit, "samples") == 0 && si->freq > 0;
	/* looked up among the frames, added after them if new: string id + 1 */
#define STRING_ID(text) (1 + intern_get(frame_names, (text), strlen(text)))
	uint32_t s_type = STRING_ID(type), s_unit = STRING_ID(unit), s_attr = STRING_ID("marple.interface");
	uint32_t s_cpu = cpu ? STRING_ID("cpu") : 0, s_ns = cpu ? STRING_ID("nanoseconds") : 0;
#undef STRING_ID

	for (size_t i = 0; i < ss->n; i++) {
		size_t a = ss->foff[i], b = ss->foff[i + 1];
		loc = marple_grow(loc, &loccap, b - a + 1, sizeof(*loc));
		for (size_t k = 0; k < b - a; k++)	/* leaf first */
			loc[k] = ss->frame_ids[b - 1 - k] + 1;
		uint32_t before = (uint32_t)intern_count(stacks);
		uint32_t sid = intern_get(stacks, (const char *)loc, (b - a) * sizeof(*loc));
		if (sid == before) {
			size_t m = protowire_begin(&stack_tab, DICT_STACK);
			size_t l = protowire_begin(&stack_tab, STACK_LOCATIONS);
			for (size_t k = 0; k < b - a; k++)
				protowire_varint(&stack_tab, loc[k]);
			protowire_end(&stack_tab, l);
			protowire_end(&stack_tab, m);
		}
		size_t m = protowire_begin(&samples, PROF_SAMPLES);
		protowire_uint(&samples, SAMPLE_STACK, sid + 1);
		size_t v = protowire_begin(&samples, SAMPLE_VALUES);
		protowire_varint(&samples, ss->weight[i] > INT64_MAX ? (uint64_t)INT64_MAX : ss->weight[i]);
		protowire_end(&samples, v);
		protowire_end(&samples, m);
	}

	size_t rp = protowire_begin(p, REQ_RESOURCE_PROFILES);
	size_t r = protowire_begin(p, RP_RESOURCE);
	kv_string(p, RES_ATTRIBUTES, "service.name", opt.app);
	kv_string(p, RES_ATTRIBUTES, "host.name", si->host);
	protowire_end(p, r);
	size_t sp = protowire_begin(p, RP_SCOPE_PROFILES);
	size_t sc = protowire_begin(p, SP_SCOPE);
	protowire_bytes(p, SCOPE_NAME, "marple", 6);
	protowire_end(p, sc);
	size_t pr = protowire_begin(p, SP_PROFILES);
	size_t vt = protowire_begin(p, PROF_SAMPLE_TYPE);
	protowire_uint(p, VT_TYPE, s_type);
	protowire_uint(p, VT_UNIT, s_unit);
	protowire_end(p, vt);
	protowire_raw(p, samples.b, samples.n);
	fixed64(p, PROF_TIME, si->time_ns);
	protowire_uint(p, PROF_DURATION, si->duration_ns);
	if (cpu) {
		vt = protowire_begin(p, PROF_PERIOD_TYPE);
		protowire_uint(p, VT_TYPE, s_cpu);
		protowire_uint(p, VT_UNIT, s_ns);
		protowire_end(p, vt);
		protowire_uint(p, PROF_PERIOD, 1000000000u / (uint64_t)si->freq);
	}
	size_t ai = protowire_begin(p, PROF_ATTRIBUTES);
	protowire_varint(p, 1);		/* attribute_table[1]: the interface */
	protowire_end(p, ai);
	protowire_end(p, pr);
	protowire_end(p, sp);
	protowire_end(p, rp);

	otlp_dictionary(p, tr, nframes, fname, s_attr, si->iface, &stack_tab);
	free(fname);
	q->url = url_with_path(base, OTLP_PATH);
	q->content_type = "application/x-protobuf";
	protowire_free(&samples);
	protowire_free(&stack_tab);
	free(loc);
	intern_free(stacks);
}

/* ---- sending ---- */

enum sent { SENT, TRANSIENT, REFUSED };

static CURL *curl;
static int server_down;		/* a request failed every attempt: try no more this run */

static size_t keep_reply(char *data, size_t size, size_t n, void *vbuf)
{
	struct pbuf *b = vbuf;
	size_t len = size * n;
	if (b->n < 200)		/* the start of the reply, for the message */
		protowire_raw(b, data, len < 200 - b->n ? len : 200 - b->n);
	return len;
}

/* A new handle, its connections closed: after a failed attempt the one it
 * used may be dirty (a 500 whose body never ended, cut at --timeout, made the
 * next attempt fail "Unsupported protocol" on it). */
static void fresh_handle(void)
{
	CURL *c = curl_easy_init();

	if (!c)
		return;		/* the old one, then */
	curl_easy_cleanup(curl);
	curl = c;
}

static void sleep_ms(uint64_t ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* a and b have the same scheme, host and port: -H headers may go to both. */
static int same_origin(const char *a, const char *b)
{
	CURLU *ua = curl_url(), *ub = curl_url();
	int same = curl_url_set(ua, CURLUPART_URL, a, 0) == CURLUE_OK &&
		   curl_url_set(ub, CURLUPART_URL, b, 0) == CURLUE_OK;
	static const CURLUPart parts[] = { CURLUPART_SCHEME, CURLUPART_HOST, CURLUPART_PORT };

	for (size_t i = 0; same && i < sizeof(parts) / sizeof(parts[0]); i++) {
		char *x = NULL, *y = NULL;
		same = curl_url_get(ua, parts[i], &x, CURLU_DEFAULT_PORT) == CURLUE_OK &&
		       curl_url_get(ub, parts[i], &y, CURLU_DEFAULT_PORT) == CURLUE_OK && strcasecmp(x, y) == 0;
		curl_free(x);
		curl_free(y);
	}
	curl_url_cleanup(ua);
	curl_url_cleanup(ub);
	return same;
}

/* One POST of q's body to url, its headers h: curl's code, *status the
 * answer's, *location where a 3xx points (curl's, valid until the next). */
static CURLcode post_once(const struct request *q, const char *url, struct curl_slist *h, struct pbuf *reply,
			  long *status, char **location)
{
	curl_easy_reset(curl);
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)opt.timeout_ms);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, (long)opt.timeout_ms);
	curl_easy_setopt(curl, CURLOPT_USERAGENT, "marple-push/1");
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(curl, CURLOPT_POST, 1L);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDS, q->body.n ? (const char *)q->body.b : "");
	curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)q->body.n);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, keep_reply);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, reply);
	CURLcode rc = curl_easy_perform(curl);
	*status = 0;
	*location = NULL;
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, status);
	if (rc == CURLE_OK && *status >= 300 && *status < 400)
		curl_easy_getinfo(curl, CURLINFO_REDIRECT_URL, location);
	return rc;
}

/* One attempt: SENT on a 2xx answer; REFUSED on a 4xx that resending will
 * not change (all but 408 and 429); TRANSIENT otherwise (no connection, a
 * timeout, 5xx), *why saying which.  A server that moved (3xx) is followed
 * here, a few hops at most and only to the URL's own scheme, host and port:
 * the -H headers (API keys, tenant ids) and the body go nowhere else (curl
 * would send them on to any host, dropping only Authorization); the request
 * stays a POST with its body, also after 301-303, which browsers turn into a
 * GET that no ingest API takes. */
static enum sent attempt(const struct request *q, char *why, size_t whylen)
{
	struct pbuf reply = { 0 };
	struct curl_slist *h = curl_slist_append(NULL, "Expect:");	/* no 100-continue round trip */
	char ct[80], *url = marple_strdup(q->url), *location;
	snprintf(ct, sizeof(ct), "Content-Type: %s", q->content_type);
	h = curl_slist_append(h, ct);
	for (struct curl_slist *o = opt.headers; o; o = o->next)
		h = curl_slist_append(h, o->data);

	long status;
	CURLcode rc;
	int hops = 0;
	while ((rc = post_once(q, url, h, &reply, &status, &location)) == CURLE_OK && location &&
	       hops < PUSH_MAX_REDIRECTS && same_origin(q->url, location)) {
		free(url);
		url = marple_strdup(location);
		reply.n = 0;
		hops++;
	}
	curl_slist_free_all(h);

	enum sent s;
	if (rc != CURLE_OK) {
		snprintf(why, whylen, "%s", curl_easy_strerror(rc));
		s = TRANSIENT;
	} else if (location) {
		if (hops == PUSH_MAX_REDIRECTS)
			snprintf(why, whylen, "HTTP %ld: more than %d redirects", status, PUSH_MAX_REDIRECTS);
		else
			snprintf(why, whylen, "HTTP %ld: moved to another scheme, host or port, not followed: %.200s",
				 status, location);
		s = TRANSIENT;
	} else if (status >= 200 && status < 300) {
		s = SENT;
	} else {
		size_t k = 0;
		char text[201];
		for (size_t i = 0; i < reply.n && k < 200; i++)	/* one printable line */
			text[k++] = reply.b[i] >= 0x20 && reply.b[i] < 0x7f ? (char)reply.b[i] : ' ';
		while (k > 0 && text[k - 1] == ' ')
			k--;
		text[k] = 0;
		snprintf(why, whylen, "HTTP %ld%s%s", status, k ? ": " : "", text);
		s = status >= 400 && status < 500 && status != 408 && status != 429 ? REFUSED : TRANSIENT;
	}
	if (s != SENT)
		fresh_handle();
	free(url);
	protowire_free(&reply);
	return s;
}

/* Every attempt --retries allows, a doubling pause between them. */
static enum sent send_request(const struct request *q, char *why, size_t whylen)
{
	uint64_t pause = opt.backoff_ms;
	enum sent s = TRANSIENT;
	if (server_down) {
		snprintf(why, whylen, "not tried: the server did not take an earlier request");
		return TRANSIENT;
	}
	for (uint64_t i = 0; i < opt.retries; i++) {
		if (i) {
			sleep_ms(pause);
			pause = pause * 2 > 60000 ? 60000 : pause * 2;
		}
		if ((s = attempt(q, why, whylen)) != TRANSIENT)
			return s;
	}
	server_down = 1;
	return s;
}

/* ---- the spool: one file a request ---- */

/* A spool file: "marple-push 1\n", the URL and the content type a line
 * each, then the body.  Headers (-H) are not kept: they may hold secrets. */
#define SPOOL_MAGIC "marple-push 1\n"

static int spool_lock_fd = -1;
static unsigned spool_seq;
static uint64_t nkept, nlost, nrefused;

struct spool_entry {
	char *name;
	uint64_t size;
};

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct spool_entry *)a)->name, ((const struct spool_entry *)b)->name);
}

/* The spool's requests, oldest first (their names begin with the time). */
static struct spool_entry *spool_list(size_t *n)
{
	struct spool_entry *e = NULL;
	size_t cap = 0;
	*n = 0;
	DIR *d = opendir(opt.spool);
	if (!d)
		return NULL;
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l < 5 || strcmp(de->d_name + l - 4, ".req") != 0)
			continue;
		char path[4096];
		struct stat st;
		snprintf(path, sizeof(path), "%s/%s", opt.spool, de->d_name);
		if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		e = marple_grow(e, &cap, *n + 1, sizeof(*e));
		e[*n].name = marple_strdup(de->d_name);
		e[(*n)++].size = (uint64_t)st.st_size;
	}
	closedir(d);
	if (*n)	/* an empty spool has no array: qsort is declared nonnull */
		qsort(e, *n, sizeof(*e), entry_cmp);
	return e;
}

static void spool_list_free(struct spool_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(e[i].name);
	free(e);
}

/* Make room for `need` bytes under --spool-max, dropping the oldest. */
static void spool_make_room(uint64_t need)
{
	size_t n;
	struct spool_entry *e = spool_list(&n);
	uint64_t total = need;
	for (size_t i = 0; i < n; i++)
		total += e[i].size;
	for (size_t i = 0; i < n && total > opt.spool_max; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", opt.spool, e[i].name);
		if (unlink(path) == 0) {
			marple_warn("%s: dropped (%llu bytes): the spool is over --spool-max %llu", path,
				    (unsigned long long)e[i].size, (unsigned long long)opt.spool_max);
			total -= e[i].size;
			nlost++;
		}
	}
	spool_list_free(e, n);
}

static const char *run_url;	/* the URL given; NULL with --drain */

/* url with its user and password (user:password@host) taken out, or put back
 * from the run's URL of the same origin: the spool never holds them. */
static char *url_credentials(const char *url, int put_back)
{
	CURLU *u = curl_url(), *r = curl_url();
	char *out = NULL, *got = NULL, *user = NULL, *password = NULL;

	if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK) {
		curl_url_set(u, CURLUPART_USER, NULL, 0);
		curl_url_set(u, CURLUPART_PASSWORD, NULL, 0);
		if (put_back && run_url && same_origin(url, run_url) &&
		    curl_url_set(r, CURLUPART_URL, run_url, 0) == CURLUE_OK) {
			if (curl_url_get(r, CURLUPART_USER, &user, 0) == CURLUE_OK)
				curl_url_set(u, CURLUPART_USER, user, 0);
			if (curl_url_get(r, CURLUPART_PASSWORD, &password, 0) == CURLUE_OK)
				curl_url_set(u, CURLUPART_PASSWORD, password, 0);
		}
		if (curl_url_get(u, CURLUPART_URL, &got, 0) == CURLUE_OK)
			out = marple_strdup(got);
	}
	curl_free(got);
	curl_free(user);
	curl_free(password);
	curl_url_cleanup(u);
	curl_url_cleanup(r);
	return out ? out : marple_strdup(url);
}

/* Write a request to the spool (whole or not at all, mode 0600, its URL
 * without credentials); its name on stderr. */
static void spool_keep(const struct request *q, const char *why)
{
	if (!opt.spool) {
		marple_warn("%s: not sent (%s), and not kept: no --spool", q->what, why);
		nlost++;
		return;
	}
	uint64_t size = sizeof(SPOOL_MAGIC) - 1 + strlen(q->url) + strlen(q->content_type) + 2 + q->body.n;
	if (size > opt.spool_max) {
		marple_warn("%s: not sent (%s), and not kept: %llu bytes, more than --spool-max", q->what, why,
			    (unsigned long long)size);
		nlost++;
		return;
	}
	spool_make_room(size);
	char tmp[4096], path[4096];
	uint64_t now = marple_now_realtime_ns();
	snprintf(path, sizeof(path), "%s/%020llu-%d-%u.req", opt.spool, (unsigned long long)now, (int)getpid(),
		 spool_seq++);
	snprintf(tmp, sizeof(tmp), "%s/.tmp-%d-%u", opt.spool, (int)getpid(), spool_seq);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
	int ok = f != NULL;
	if (fd >= 0 && !f)
		close(fd);
	if (f) {
		char *url = url_credentials(q->url, 0);
		fprintf(f, "%s%s\n%s\n", SPOOL_MAGIC, url, q->content_type);
		free(url);
		if (q->body.n)	/* an empty body has no buffer (fwrite's pointer must be one) */
			fwrite(q->body.b, 1, q->body.n, f);
		ok = marple_close_output(f, tmp) == 0 && rename(tmp, path) == 0;
	}
	if (!ok) {
		marple_warn("%s: not sent (%s), and not kept: %s: %s", q->what, why, tmp, strerror(errno));
		unlink(tmp);
		nlost++;
		return;
	}
	marple_warn("%s: not sent (%s): kept in %s", q->what, why, path);
	nkept++;
}

/* A spool file back into a request; -1 when it is not one (left alone). */
static int spool_read(const char *path, struct request *q)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = -1;
	static char ct[80];
	if ((n = getline(&line, &cap, f)) > 0 && strcmp(line, SPOOL_MAGIC) == 0 && (n = getline(&line, &cap, f)) > 1) {
		line[n - 1] = 0;
		q->url = marple_strdup(line);
		if ((n = getline(&line, &cap, f)) > 1 && (size_t)n < sizeof(ct)) {
			line[n - 1] = 0;
			strcpy(ct, line);
			q->content_type = ct;
			char buf[65536];
			size_t k;
			while ((k = fread(buf, 1, sizeof(buf), f)) > 0)
				protowire_raw(&q->body, buf, k);
			rc = ferror(f) ? -1 : 0;
		}
	}
	free(line);
	fclose(f);
	return rc;
}

static int spool_open(void)
{
	if (mkdir(opt.spool, 0700) < 0 && errno != EEXIST) {
		marple_warn("%s: %s", opt.spool, strerror(errno));
		return -1;
	}
	char path[4096];
	snprintf(path, sizeof(path), "%s/.lock", opt.spool);
	spool_lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (spool_lock_fd < 0) {
		marple_warn("%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Send what the spool holds, oldest first.  Another marple-push draining
 * the same spool (a slow server, runs overlapping) holds the lock: then this
 * run leaves the spool to it. */
static void spool_drain(void)
{
	if (flock(spool_lock_fd, LOCK_EX | LOCK_NB) < 0) {
		marple_warn("%s: another marple-push is sending what it holds: left to it", opt.spool);
		return;
	}
	size_t n;
	struct spool_entry *e = spool_list(&n);
	for (size_t i = 0; i < n; i++) {
		char path[4096], why[300];
		struct request q = { 0 };
		snprintf(path, sizeof(path), "%s/%s", opt.spool, e[i].name);
		if (spool_read(path, &q) < 0) {
			marple_warn("%s: not a request marple-push spooled: left alone", path);
			request_free(&q);
			continue;
		}
		char *url = url_credentials(q.url, 1);
		free(q.url);
		q.url = url;
		enum sent s = send_request(&q, why, sizeof(why));
		if (s == SENT) {
			unlink(path);
		} else if (s == REFUSED) {
			marple_warn("%s: refused by the server (%s): removed, resending cannot change that", path, why);
			unlink(path);
			nrefused++;
		} else {
			if (!server_down || i == 0)
				marple_warn("%s: not sent (%s): still in the spool", path, why);
			nkept++;
		}
		request_free(&q);
	}
	if (server_down && n > 1)
		marple_warn("%s: %zu requests still in the spool", opt.spool, (size_t)nkept);
	spool_list_free(e, n);
	flock(spool_lock_fd, LOCK_UN);
}

/* ---- the inputs ---- */

static uint64_t nsections, nsent, nbad;

/* An input's requests, sent once it is read whole and found usable: a file
 * marple-format(5) calls unusable (binary, mostly malformed) sends nothing. */
static struct request *queued;
static size_t nqueued, queued_cap;

static void queue_section(const char *url, const char *file, long section, json_t *hdr, json_t *tr,
			  struct section_stacks *ss)
{
	struct section_info si = {
		.iface = stream_header_str(hdr, "interface", "unknown"),
		.host = stream_header_str(hdr, "host", "unknown"),
	};
	weight_meaning_of(hdr, &si.weight);
	si.unit = si.weight.unit;
	si.freq = stream_header_int(json_object_get(hdr, "options"), "frequency", 0);
	section_times(hdr, tr, &si);

	queued = marple_grow(queued, &queued_cap, nqueued + 1, sizeof(*queued));
	struct request *q = &queued[nqueued++];
	char what[600];
	*q = (struct request){ 0 };
	snprintf(what, sizeof(what), "%s section %ld (%s)", file, section, si.iface);
	q->what = marple_strdup(what);
	if (opt.format == FORMAT_OTLP) {
		otlp_request(url, &si, ss, tr, q);
	} else if (opt.format == FORMAT_PPROF) {
		size_t zlen;
		pprof_section_end(ss->prof, hdr, tr, section, file);
		const unsigned char *z = pprof_finish(ss->prof, &zlen);
		pyroscope_request(curl, url, &si, ss, q, z, zlen);
		pprof_free(ss->prof);
		ss->prof = NULL;
	} else {
		pyroscope_request(curl, url, &si, ss, q, NULL, 0);
	}
}

static void send_queued(void)
{
	for (size_t i = 0; i < nqueued; i++) {
		struct request *q = &queued[i];
		char why[300];
		nsections++;
		enum sent s = send_request(q, why, sizeof(why));
		if (s == SENT) {
			nsent++;
		} else if (s == REFUSED) {
			marple_warn("%s: refused by the server (%s): not kept, resending cannot change that", q->what,
				    why);
			nrefused++;
		} else {
			spool_keep(q, why);
		}
		request_free(q);
	}
	nqueued = 0;
}

static void read_input(const char *url, const char *path)
{
	FILE *f = marple_open_input(path);
	const char *file = marple_input_name(path);
	struct lines *l = lines_new(f, file);
	if (!folded_input_is_stream(l)) {
		marple_warn_at(file, 1, "not a marple stream (marple-push sends stack sections)");
		nbad++;
		lines_free(l);
		if (f != stdin)
			fclose(f);
		return;
	}
	struct stream_reader *r = stream_reader_new_lines(l, file);
	struct section_stacks ss = { 0 };
	enum stream_item it;
	int in_stack = 0, pending = 0;
	json_t *hdr = NULL;
	long section = 0;
	uint64_t bad = 0;

	while ((it = stream_reader_next(r)) != STREAM_EOF) {
		if (it == STREAM_ERROR) {
			if (bad++ < MARPLE_REPORT_FIRST)
				stream_reader_warn(r);
		} else if (it == STREAM_HEADER) {
			if (pending)	/* a section without its trailer */
				queue_section(url, file, section, hdr, NULL, &ss);
			pending = 0;
			json_decref(hdr);
			hdr = NULL;
			in_stack = stream_reader_datatype(r) == DATATYPE_STACK &&
				   timed_role(stream_reader_header(r)) != TIMED_SAMPLES;
			if (in_stack) {
				hdr = json_incref(stream_reader_header(r));
				section = stream_reader_section(r);
				ss.n = 0;
				/* each request carries its own frames only */
				intern_free(frame_keys);
				intern_free(frame_names);
				frame_keys = intern_new();
				frame_names = intern_new();
				if (opt.format == FORMAT_PPROF) {	/* one profile a section: never refused */
					pprof_free(ss.prof);
					ss.prof = pprof_new(1);
					pprof_section_begin(ss.prof, hdr, section, stream_reader_line(r), file, &ss.psec);
				}
				pending = 1;
			}
		} else if (!in_stack) {
			continue;
		} else if (it == STREAM_RECORD) {
			if (ss.prof)
				pprof_add_sample(ss.prof, stream_reader_stack(r), &ss.psec, file, stream_reader_line(r));
			else
				stacks_add(&ss, stream_reader_stack(r));
		} else if (it == STREAM_TRAILER && pending) {
			queue_section(url, file, section, hdr, stream_reader_trailer(r), &ss);
			pending = 0;
		}
	}
	const char *why = stream_reader_unusable(r);	/* marple-format(5): send nothing of it */
	if (why) {
		marple_warn_at(file, 0, "%s (nothing of it sent)", why);
		nbad++;
		for (size_t i = 0; i < nqueued; i++)
			request_free(&queued[i]);
		nqueued = 0;
	} else {
		if (pending)
			queue_section(url, file, section, hdr, NULL, &ss);
		send_queued();
	}
	marple_warn_skipped_lines(bad);
	json_decref(hdr);
	free(ss.off), free(ss.weight), free(ss.frame_ids), free(ss.foff);
	pprof_free(ss.prof);
	protowire_free(&ss.keys);
	stream_reader_free(r);
	lines_free(l);
	if (f != stdin)
		fclose(f);
}

int main(int argc, char **argv)
{
	int ch;
	marple_init(argc, argv);
	while ((ch = options_getopt(options, argc, argv)) != -1) {
		switch (ch) {
		case 'f':
			if (strcmp(optarg, "pyroscope") == 0)
				opt.format = FORMAT_PYROSCOPE;
			else if (strcmp(optarg, "pprof") == 0)
				opt.format = FORMAT_PPROF;
			else if (strcmp(optarg, "otlp") == 0)
				opt.format = FORMAT_OTLP;
			else
				marple_usage_error("--format: '%s' is not pyroscope, pprof or otlp", optarg);
			break;
		case 'n':
		case OPT_APP: opt.app = optarg; break;
		case 'H':
			if (!strchr(optarg, ':') || strpbrk(optarg, "\r\n"))
				marple_usage_error("--header: '%s' is not one 'KEY: VALUE' line", optarg);
			opt.headers = curl_slist_append(opt.headers, optarg);
			break;
		case 's': opt.spool = optarg; break;
		case OPT_SPOOL_MAX: opt.spool_max = marple_opt_u64("--spool-max", optarg, 1, UINT64_MAX); break;
		case 't':
		case OPT_TIMEOUT:
			opt.timeout_ms = (uint64_t)(marple_opt_double("--timeout", optarg, 0.001, 86400) * 1000);
			break;
		case OPT_RETRIES: opt.retries = marple_opt_u64("--retries", optarg, 1, 100); break;
		case OPT_BACKOFF:
			opt.backoff_ms = (uint64_t)(marple_opt_double("--backoff", optarg, 0, 3600) * 1000);
			break;
		case OPT_DRAIN: opt.drain_only = 1; break;
		case 'h': options_help(stdout, options, &help); marple_close_stdout(); return EXIT_OK;
		default: marple_usage_try();
		}
	}
	const char *url = NULL;
	if (opt.drain_only) {
		if (!opt.spool)
			marple_usage_error("--drain needs --spool DIR");
		if (optind < argc)
			marple_usage_error("--drain takes no URL or FILE: the spooled requests carry their URLs");
	} else {
		if (optind >= argc)
			marple_usage_error("no URL");
		url = run_url = argv[optind++];
		if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
			marple_usage_error("URL '%s' is not http:// or https://", url);
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK || !(curl = curl_easy_init()))
		marple_fatal(EXIT_DATA, "libcurl cannot start");
	frame_keys = intern_new();
	frame_names = intern_new();
	if (opt.spool && spool_open() < 0)
		return EXIT_DATA;
	if (opt.spool)
		spool_drain();
	if (!opt.drain_only) {
		char *stdin_only[] = { "-" };
		int n = argc - optind;
		char **paths = n > 0 ? argv + optind : stdin_only;
		for (int i = 0; i < (n > 0 ? n : 1); i++)
			read_input(url, paths[i]);
		if (!nsections && !nbad)
			marple_warn_at(marple_operands_name(n, argv + optind), 0, "no stack sections in the input");
	}
	curl_easy_cleanup(curl);
	curl_slist_free_all(opt.headers);
	curl_global_cleanup();
	intern_free(frame_keys);
	intern_free(frame_names);
	if (nkept || nlost || nrefused || nbad || (!opt.drain_only && !nsections))
		return EXIT_DATA;
	return EXIT_OK;
}
