/* marple-fold — fold call stacks into Brendan Gregg's folded format.
 *
 * Reads `perf script` text, marple stack sections or folded text (each input
 * detected by itself; several files or stdin) and writes one line per unique
 * stack, sorted in byte order: the frames root first joined by ';', a blank and
 * the summed count.  perf script input folds byte for byte as FlameGraph's
 * stackcollapse-perf.pl does with the same options.
 *
 *   $ perf script | marple-fold --kernel
 *   ab;[unknown];__write_nocancel;system_call_fastpath_[k];sys_write_[k] 2
 *
 * --to-stream writes a marple stack section instead; --diff A B writes the
 * differential format "stack countA countB".  --lines and --no-inline read a
 * stack section's frame descriptions (its trailer, after its records): the
 * section's stacks are held until it ends.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "folded.h"
#include "framedesc.h"
#include "hashtab.h"
#include "lines.h"
#include "options.h"
#include "perfscript.h"
#include "stackfilter.h"
#include "stackunits.h"
#include "stream.h"
#include "timed.h"
#include "util.h"


static struct {
	struct perfscript_opts perf;
	int to_stream;
	int diff;
	int host_frame;
	int user_threads;	/* -u: kernel threads' stacks left out */
	int nolineno;		/* frames "NAME (FILE:LINE)" as "NAME (FILE)" */
	int lines;		/* frames placed in source as "NAME (FILE:LINE)" */
	int no_inline;		/* frames described "inline" left out */
	const char *out;
	struct timed_range range;
} opt = { .range.to_s = INFINITY };

enum input_kind { KIND_PERF, KIND_FOLDED, KIND_STREAM, KIND_NONE };
static const char *const kind_names[] = { "perf script", "folded", "marple stream" };

enum { TF_IDLE, TF_STACKS, TF_SAMPLES };

/* The timed stack section being read with --from/--to: its stacks' folded
 * keys (arena[off[i]..off[i+1])) and what of each lies in the range. */
struct timed_fold {
	int state;
	long section;
	unsigned long line;
	uint64_t from, to, ns_per_weight;
	char *arena;
	size_t arenacap;
	size_t *off, offcap;
	uint64_t *sum;
	size_t sumcap, n;
	struct hashtab *per;	/* --pid/--tid: "comm-PID[/TID];..." -> what lies in the range */
};

struct ctx {
	struct hashtab *agg;	/* folded key -> counts, hashed by hashtab_hash_line
				 * (as written is: a stream's lines hashed as read) */
	uint64_t *plain_ids;	/* a bit for each agg id whose key a record's
				 * frames as written were (plain_frames) */
	size_t plain_ids_cap;
	struct hashtab *written;	/* stream records' frames as written -> the id
					 * of their key, for those that are not it */
	int written_first;	/* the last record seen before was found there */
	struct perfscript *ps;
	struct timed_fold timed;
	uint64_t untimed;	/* sections --from/--to could not use */
	uint64_t pidless;	/* --pid/--tid: stack sections without a pid per sample */
	int plain;		/* --pid/--tid: the current section is folded as it is */
	int which;		/* 0, or 1 for the second file of --diff */
	const char *file;
	uint64_t bad, reported;
	uint64_t usable;
	unsigned long nul_line;	/* the current input's first line holding a NUL byte */
	uint64_t unusable;	/* inputs marple-format(5) calls unusable */
	char *tmp;
	size_t tmpcap;
	struct stackunits units;	/* the stack sections' weight unit (stackunits.h) */
	int unit_skip;		/* the current section is of another unit */
	char *interface;	/* the sections' interface; "fold" when they differ */
	char *host;		/* --host-frame: the current section's host, the root frame */
	uint64_t hostless;	/* --host-frame: inputs skipped for having no host */
	struct stackfilter_count kthreads;	/* -u: what was left out */
	struct mstr *frames;	/* -u: a key's frames */
	size_t framescap;
	char *lineless;		/* --nolineno: the key without lines */
	size_t linelesscap;
	struct framedesc *described;	/* --lines, --no-inline: the trailers' frames */
	struct hashtab *held;	/* and the section's stacks until its trailer: each
				 * frame's key (stream_frame_key) after its length */
};

enum { OPT_ADDRS = 256, OPT_FROM, OPT_TO, OPT_DIFF, OPT_NOLINENO, OPT_LINES, OPT_NO_INLINE };
static const struct options_entry options[] = {
	{ 'p', "pid", NULL, "process name as comm-PID (perf script input, timed\n"
			    "stack sections: marple-callstack --timed)" },
	{ 't', "tid", NULL, "process name as comm-PID/TID" },
	{ 'k', "kernel", NULL, "annotate kernel frames with _[k]" },
	{ 'j', "jit", NULL, "annotate JIT frames with _[j]" },
	{ 'a', "all", NULL, "all annotations (--kernel --jit)" },
	{ OPT_ADDRS, "addrs", NULL, "[module <address>] for frames without a symbol" },
	{ 'e', "event-filter", "EVENT", "keep only samples of EVENT (default: the first\n"
					"event seen in the input)" },
	{ 's', "to-stream", NULL, "write a marple stack section instead of text" },
	{ OPT_NOLINENO, "nolineno", NULL, "frames \"NAME (FILE:LINE)\" (Python's) as \"NAME (FILE)\":\n"
				    "a function's lines fold into one (py-spy --nolineno)" },
	{ OPT_LINES, "lines", NULL, "frames the stream places in source (native, inlined:\n"
				  "its trailer's descriptions) as \"NAME (FILE:LINE)\"" },
	{ OPT_NO_INLINE, "no-inline", NULL, "frames the stream describes as inlined functions\n"
					  "left out: native frames as their symbols name them" },
	OPTIONS_USER_THREADS_ONLY,
	{ OPT_DIFF, "diff", NULL, "two inputs A and B: \"stack countA countB\"" },
	{ 'd', "", NULL, NULL },	/* the old spelling: -d is --delimited's */
	{ 'H', "host-frame", NULL, "the host of each stack's section (its header's\n"
				   "\"host\") as the root frame: several hosts' files\n"
				   "fold into one graph, a tower per host" },
	{ OPT_FROM, "from", "S", "only samples in [--from, --to) seconds from the start\n"
				 "of each timed stack section (marple-callstack --timed)" },
	{ OPT_TO, "to", "S", "(see --from)" },
	OPTIONS_OUTPUT,
	OPTIONS_DESCRIBE("kind=filter"),
	OPTIONS_HELP,
	{ 0 }
};

static const struct options_help help = {
	.synopsis = "[OPTION]... [FILE]...\n"
	            "--diff [OPTION]... FILE_A FILE_B",
	.about = "Fold call stacks (perf script text, marple stack sections or folded text,\n"
	         "detected per input) into the folded format: \"comm;root;...;leaf count\",\n"
	         "one line per unique stack, sorted.\n",
	.after = "With no FILE, or FILE '-', read stdin.  Exit: 0 ok, 1 bad or unusable input,\n"
	         "2 usage.  See marple-fold(1).\n",
};

static void report_bad(struct ctx *c, unsigned long lineno, const char *why)
{
	c->bad++;
	if (c->reported++ < MARPLE_REPORT_FIRST)
		marple_warn_at(c->file, lineno, "%s", why);
}

static void on_bad(void *vc, unsigned long lineno, const char *why)
{
	report_bad(vc, lineno, why);
}

/* A NUL byte: binary data, not text; the caller reads no further. */
static int has_nul(struct ctx *c, struct lines *l)
{
	if (!lines_has_nul(l))
		return 0;
	c->nul_line = lines_lineno(l);
	report_bad(c, c->nul_line, "NUL byte in line: binary data, not text (nothing more is read)");
	return 1;
}

static size_t add_stack(struct ctx *c, const char *key, size_t len, uint64_t weight);
static size_t add_key(struct ctx *c, const char *key, size_t len, uint64_t h, uint64_t weight);
static void add_at(struct ctx *c, size_t id, uint64_t weight);

/* Are stacks counted under their keys as they come (no -u, no
 * --nolineno)?  Then an id found once stands for a key every time. */
static int keys_as_given(void)
{
	return !opt.user_threads && !opt.nolineno;
}

/* A sample of perf script: one the memo of whole samples folded before is
 * counted under the id noted then (no hashing, no compare). */
static void on_sample(void *vc, const char *stack, size_t len, uint64_t weight)
{
	struct ctx *c = vc;
	uint64_t *note = keys_as_given() ? perfscript_sample_note(c->ps) : NULL;

	if (note && *note) {
		add_at(c, *note - 1, weight);
		return;
	}
	size_t id = add_stack(c, stack, len, weight);
	if (note)
		*note = id + 1;
}

static enum input_kind detect(struct lines *l)
{
	size_t n;
	const char *b = lines_peek(l, 1 << 16, &n);
	const char *e = b + n, *s = b;
	const char *first = NULL;
	size_t firstlen = 0;
	int seen = 0;

	while (s < e && seen < 2) {
		const char *nl = memchr(s, '\n', (size_t)(e - s));
		const char *le = nl ? nl : e;
		size_t len = (size_t)(le - s);
		if (len && s[len - 1] == '\r')
			len--;
		if (len > 0) {
			if (!seen) {
				if (s[0] == '{')
					return KIND_STREAM;
				if (s[0] == '#' || s[0] == ' ' || s[0] == '\t')
					return KIND_PERF;
				first = s;
				firstlen = len;
			} else if (s[0] == ' ' || s[0] == '\t')
				return KIND_PERF;
			seen++;
		}
		if (!nl)
			break;
		s = nl + 1;
	}
	if (first && folded_line_looks_folded(first, firstlen))
		return KIND_FOLDED;
	return KIND_PERF;
}

/* The folded line at s[0, avail), its length to its '\n' in *n (none in
 * avail: 0 returned), read in one pass with its stack's hash, *h: the hash
 * of the blocks before where the stack ends is kept from the scan (the
 * count is at most two blocks back, else the stack is hashed again).
 * Returns 1 with *fl when it is "stack count" with a whole count, -1 for
 * a blank line, 0 for anything else (the reader says what). */
static int folded_hashed(const char *s, size_t avail, size_t *n, struct folded_line *fl, uint64_t *h)
{
	const unsigned char *p = (const unsigned char *)s;
	struct hashtab_line h0 = HASHTAB_LINE_START, h1 = h0, h2 = h0;
	const char *why;
	size_t i = 0;
	unsigned m = 0;

	for (; i + 16 <= avail && !(m = hashtab_line_nl(p + i)); i += 16) {
		h2 = h1;
		h1 = h0;
		hashtab_line_block(&h0, p + i);
	}
	if (!m)
		return 0;	/* the end of what is read: the reader reads on */
	*n = i + (size_t)__builtin_ctz(m);
	if (*n == 0 || (*n == 1 && s[0] == '\r'))
		return -1;
	if (folded_parse_line(s, *n, 1, fl, &why) < 0 || !fl->integral)
		return 0;
	size_t j = fl->len & ~(size_t)15;	/* where the stack's last block starts */
	if (j == i)
		*h = hashtab_line_end(&h0, s + j, fl->len - j, fl->len);
	else if (j + 16 == i)
		*h = hashtab_line_end(&h1, s + j, fl->len - j, fl->len);
	else if (j + 32 == i)
		*h = hashtab_line_end(&h2, s + j, fl->len - j, fl->len);
	else
		*h = hashtab_hash_line(s, fl->len);
	return 1;
}

/* The folded lines read ahead that are stacks with whole counts (and
 * blank lines), counted without a call of the reader each, their stacks
 * hashed in the scan for their ends: a tenth less CPU on folded text.  Stops at any other line, left to the reader. */
static void add_folded_ahead(struct ctx *c, struct lines *l)
{
	size_t len, at = 0, n;
	unsigned long lines = 0;
	const char *s = lines_buffered(l, &len);
	struct folded_line fl;
	uint64_t h;
	int kind;

	while (at < len && (kind = folded_hashed(s + at, len - at, &n, &fl, &h)) != 0) {
		if (kind > 0) {
			c->usable++;
			add_key(c, fl.stack, fl.len, h, fl.icount[0]);
		}
		at += n + 1;
		lines++;
	}
	if (lines)
		lines_skip(l, at, lines);
}

static void read_folded(struct ctx *c, struct lines *l)
{
	const char *s, *why;
	size_t len;
	struct folded_line fl;

	while (lines_next(l, &s, &len) > 0) {
		if (len == 0 || (len == 1 && s[0] == '\r'))
			continue;
		if (has_nul(c, l))
			break;
		if (folded_parse_line(s, len, 1, &fl, &why) < 0) {
			report_bad(c, lines_lineno(l), why);
			continue;
		}
		if (!fl.integral) {
			report_bad(c, lines_lineno(l), "count is not a whole number");
			continue;
		}
		add_stack(c, fl.stack, fl.len, fl.icount[0]);
		if (keys_as_given())
			add_folded_ahead(c, l);
	}
}

/* Stream frames to a folded key (in c->tmp): ';' becomes ':' and control
 * bytes '?', so that every frame stays one frame and every stack one line.
 * semi: what a ';' becomes (':' in a frame's name; itself between the
 * frames of a record taken as written). */
static char key_byte(char ch, char semi)
{
	unsigned char u = (unsigned char)ch;
	return u == ';' ? semi : (u < 0x20 || u == 0x7f) ? '?' : ch;
}

/* Copied whole, then fixed eight bytes a step: a word none of whose bytes
 * is below 0x20, ';' (unless kept) or 0x7f is left as it is (one that may
 * hold one is looked at byte by byte). */
static char *key_text(char *o, const char *s, size_t len, char semi)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x80 * ones;
	size_t j = 0;

	memcpy(o, s, len);
	for (; j + 8 <= len; j += 8) {
		uint64_t x;
		memcpy(&x, o + j, 8);
		uint64_t semis = semi == ';' ? 0 : (x ^ 0x3b * ones) - ones;
		if (!(((x - 0x20 * ones) | semis | ((x ^ 0x7f * ones) - ones)) & highs))
			continue;
		for (size_t k = j; k < j + 8; k++)
			o[k] = key_byte(o[k], semi);
	}
	for (; j < len; j++)
		o[j] = key_byte(o[j], semi);
	return o + len;
}

static char *key_frame(char *o, const char *s, size_t len)
{
	return key_text(o, s, len, ':');
}

/* The frames of a stack record as written, s[0, n), with %XX escapes but
 * no identity tag (no '#'), as their folded key in c->tmp, decoded in one
 * pass (no fields, no frame table); -1 for the parsed path: a '#', or a bad
 * escape (for its message). */
static long escaped_key(struct ctx *c, const char *s, size_t n)
{
	const char *e = s + n;
	if (memchr(s, '#', n))
		return -1;
	c->tmp = marple_grow(c->tmp, &c->tmpcap, n + 1, 1);
	char *o = c->tmp;
	for (;;) {
		const char *pct = memchr(s, '%', (size_t)(e - s));
		o = key_text(o, s, (size_t)((pct ? pct : e) - s), ';');
		if (!pct)
			return o - c->tmp;
		int hi = e - pct > 2 ? escape_hex_digit((unsigned char)pct[1]) : -1;
		int lo = e - pct > 2 ? escape_hex_digit((unsigned char)pct[2]) : -1;
		if (hi < 0 || lo < 0)
			return -1;
		*o++ = key_byte((char)(hi << 4 | lo), ':');
		s = pct + 3;
	}
}

static size_t stream_key(struct ctx *c, const struct stack_rec *sr)
{
	size_t hostlen = opt.host_frame ? strlen(c->host) + 1 : 0;
	size_t need = sr->nframes + hostlen;
	for (size_t i = 0; i < sr->nframes; i++)
		need += sr->frames[i].len;
	c->tmp = marple_grow(c->tmp, &c->tmpcap, need + 1, 1);
	char *o = c->tmp;
	if (hostlen) {
		o = key_frame(o, c->host, hostlen - 1);
		if (sr->nframes)
			*o++ = ';';
	}
	for (size_t i = 0; i < sr->nframes; i++) {
		if (i)
			*o++ = ';';
		o = key_frame(o, sr->frames[i].s, sr->frames[i].len);
	}
	return (size_t)(o - c->tmp);
}

/* -u: a kernel thread's folded stack (after the host frame with -H)?
 * Counted if so. */
static int kernel_thread_key(struct ctx *c, const char *key, size_t len, uint64_t weight)
{
	size_t n = folded_split_frames(key, len, &c->frames, &c->framescap), skip = opt.host_frame && n;
	if (!stackfilter_kernel_thread(c->frames + skip, n - skip))
		return 0;
	stackfilter_count_add(&c->kthreads, c->frames[skip], (double)weight);
	return 1;
}

/* Count a stack under its key; returns the key's id in agg (SIZE_MAX for a
 * kernel thread's left out). */
static size_t add_stack(struct ctx *c, const char *key, size_t len, uint64_t weight)
{
	c->usable++;
	if (opt.nolineno) {
		len = stackfilter_strip_lines(key, len, &c->lineless, &c->linelesscap);
		key = c->lineless;
	}
	if (opt.user_threads && kernel_thread_key(c, key, len, weight))
		return SIZE_MAX;
	return add_key(c, key, len, hashtab_hash_line(key, len), weight);
}

/* add_stack's count of key, as it is (h: its hashtab_hash_line). */
static size_t add_key(struct ctx *c, const char *key, size_t len, uint64_t h, uint64_t weight)
{
	size_t n = hashtab_size(c->agg);
	const struct hashtab_entry *e = hashtab_add_hashed(c->agg, h, key, len, c->which ? 0 : weight,
							 c->which ? weight : 0);
	if (hashtab_size(c->agg) > n && n % 64 == 0) {	/* a new key: not known plain */
		c->plain_ids = marple_grow(c->plain_ids, &c->plain_ids_cap, n / 64 + 1, sizeof(*c->plain_ids));
		c->plain_ids[n / 64] = 0;
	}
	return hashtab_index(c->agg, e);
}

/* Count a stack again under its id (add_stack's answer). */
static void add_at(struct ctx *c, size_t id, uint64_t weight)
{
	c->usable++;
	hashtab_add_at(c->agg, id, c->which ? 0 : weight, c->which ? weight : 0);
}

/* Do frames f[0, n) of a stack record read as they are written: no %XX
 * escape, no identity tag ('#', marple-format(5)), no control byte to map?
 * Sixteen bytes a step in the compiler's vectors (SSE2 on x86-64): a
 * marple stream folds in 73 ms CPU instead of 91 (100 MiB). */
typedef unsigned char bytes16 __attribute__((vector_size(16)));

static int plain_frames(const char *f, size_t n)
{
	size_t i = 0;
	for (; i + 16 <= n; i += 16) {
		bytes16 x;
		uint64_t half[2];
		memcpy(&x, f + i, 16);
		bytes16 odd = (bytes16)((x < 0x20) | (x == 0x7f) | (x == '%') | (x == '#'));
		memcpy(half, &odd, 16);
		if (half[0] | half[1])
			return 0;
	}
	for (; i < n; i++) {
		unsigned char ch = (unsigned char)f[i];
		if (ch < 0x20 || ch == 0x7f || ch == '%' || ch == '#')
			return 0;
	}
	return 1;
}

/* Frames as written f[0, n) (h: their hash) counted under the key they
 * were decoded to before, if they were. */
static int add_written(struct ctx *c, const char *f, size_t n, uint64_t h, uint64_t weight)
{
	const struct hashtab_entry *e = c->written ? hashtab_find_hashed(c->written, h, f, n) : NULL;

	if (e)
		add_at(c, e->count[0], weight);
	return e != NULL;
}

/* A stack record's frames as written, f[0, n) (h: their hashtab_hash_line,
 * the hash of agg's and written's keys), seen before: counted
 * under their key with one hash, no scan and no decoding (most records of a
 * stream repeat a stack).  The key is found as it is written when a
 * record's frames as written, plain, were that key before (plain_ids: a key
 * found that came otherwise, from escapes or folded text, may be another
 * record's decoding), else from what frames as written were decoded to
 * before (written: never a plain record's, so the two never both answer).
 * Where the last record was found is asked first: a stream whose records
 * are escaped (C++ names) looks in agg for nothing no more. */
static int add_seen(struct ctx *c, const char *f, size_t n, uint64_t h, uint64_t weight)
{
	if (!keys_as_given())
		return 0;
	if (c->written_first && add_written(c, f, n, h, weight))
		return 1;
	const struct hashtab_entry *e = hashtab_find_hashed(c->agg, h, f, n);
	size_t id = e ? hashtab_index(c->agg, e) : 0;

	if (e && (c->plain_ids[id / 64] >> (id % 64) & 1)) {
		add_at(c, id, weight);
		c->written_first = 0;
		return 1;
	}
	return !c->written_first && (c->written_first = add_written(c, f, n, h, weight));
}

/* Frames as written, f[0, n), that were decoded to the key of id (one
 * add_seen finds next time). */
static void keep_written(struct ctx *c, const char *f, size_t n, size_t id)
{
	if (!keys_as_given())
		return;
	if (!c->written)
		c->written = hashtab_new();
	hashtab_add_hashed(c->written, hashtab_hash_line(f, n), f, n, id, 0);
}

/* A stack record "WEIGHT#FRAMES", s[0, n): its weight, and its frames as
 * written in *f; -1 when it does not read so (the parser says why). */
static int record_parts(const char *s, size_t n, uint64_t *w, struct mstr *f)
{
	const char *hash = memchr(s, '#', n);

	if (!hash || marple_parse_u64_span(s, (size_t)(hash - s), w) < 0)
		return -1;
	*f = (struct mstr){ hash + 1, (size_t)(s + n - hash - 1) };
	return 0;
}

/* The frames of a stack record s[0, avail) whose weight is 1-19 digits
 * (the usual), its weight in *w; NULL for any other (record_parts reads it). */
static const char *record_frames(const char *s, size_t avail, uint64_t *w)
{
	uint64_t v = 0;
	size_t i = 0;

	for (; i < avail && i < 20 && (unsigned char)(s[i] - '0') < 10; i++)
		v = v * 10 + (unsigned char)(s[i] - '0');
	if (i == 0 || i == 20 || i == avail || s[i] != '#')
		return NULL;
	*w = v;
	return s + i + 1;
}

/* The records read ahead that are plain stacks seen before, counted without
 * a call of the reader each (a third less CPU on a stream), each line's end
 * found as its frames are hashed (hashtab_hash_to_nl: a quarter less
 * CPU than memchr, then hashing); stops at the first other line, left to the reader. */
static void add_seen_ahead(struct ctx *c, struct stream_reader *r)
{
	size_t len, at = 0, n;
	unsigned long lines = 0;
	const char *s = stream_reader_ahead(r, &len), *f;
	uint64_t w, h;

	while (at < len && (f = record_frames(s + at, len - at, &w)) &&
	       (h = hashtab_hash_to_nl(f, (size_t)(s + len - f), &n), n != SIZE_MAX) && add_seen(c, f, n, h, w)) {
		at = (size_t)(f + n + 1 - s);
		lines++;
	}
	if (lines)
		stream_reader_took(r, at, lines);
}

/* A stack record of a section read with deferred records: its frames are the
 * key as written when they are plain (most records: no decoding, no copy). */
static void add_stream_stack(struct ctx *c, struct stream_reader *r)
{
	struct mstr t = stream_reader_line_text(r), fr;
	uint64_t w;

	if (!opt.host_frame && record_parts(t.s, t.len, &w, &fr) == 0) {
		const char *f = fr.s;
		size_t n = fr.len;
		long k;
		if (add_seen(c, f, n, hashtab_hash_line(f, n), w))
			return;
		if (plain_frames(f, n)) {
			size_t id = add_stack(c, f, n, w);
			if (keys_as_given())	/* the key is f: found as written next time */
				c->plain_ids[id / 64] |= (uint64_t)1 << (id % 64);
			return;
		}
		if ((k = escaped_key(c, f, n)) >= 0) {
			keep_written(c, f, n, add_stack(c, c->tmp, (size_t)k, w));
			return;
		}
	}
	if (stream_reader_parse_record(r) != STREAM_RECORD) {
		report_bad(c, stream_reader_line(r), stream_reader_error(r));
		return;
	}
	size_t id = add_stack(c, c->tmp, stream_key(c, stream_reader_stack(r)), stream_reader_stack(r)->weight);
	if (!opt.host_frame && record_parts(t.s, t.len, &w, &fr) == 0)
		keep_written(c, fr.s, fr.len, id);
}

/* --lines, --no-inline: a stack record held until its section's trailer has
 * described its frames; each frame's key after its length. */
static void hold_stack(struct ctx *c, const struct stack_rec *sr)
{
	size_t need = 1;
	for (size_t i = 0; i < sr->nframes; i++)
		need += sizeof(uint32_t) + stream_frame_key(sr, i).len;
	c->tmp = marple_grow(c->tmp, &c->tmpcap, need, 1);
	char *o = c->tmp;
	for (size_t i = 0; i < sr->nframes; i++) {
		struct mstr k = stream_frame_key(sr, i);
		uint32_t len = (uint32_t)k.len;
		memcpy(o, &len, sizeof(len));
		memcpy(o + sizeof(len), k.s, k.len);
		o += sizeof(len) + k.len;
	}
	if (!c->held)
		c->held = hashtab_new();
	hashtab_add(c->held, c->tmp, (size_t)(o - c->tmp), sr->weight, 0);
}

/* A held stack (hold_stack) as its folded key in c->tmp, its frames as the
 * descriptions say: inlined ones left out (--no-inline), those placed in
 * source with " (FILE:LINE)" (--lines; a script's frame says its line in
 * its name already).  Returns the key's length. */
static size_t described_key(struct ctx *c, const char *held, size_t len)
{
	size_t o = 0, pos = 0, n = 0;
	if (opt.host_frame) {
		c->tmp = marple_grow(c->tmp, &c->tmpcap, strlen(c->host) + 1, 1);
		o = (size_t)(key_frame(c->tmp, c->host, strlen(c->host)) - c->tmp);
		n++;
	}
	while (pos + sizeof(uint32_t) <= len) {
		uint32_t kl;
		memcpy(&kl, held + pos, sizeof(kl));
		const char *k = held + pos + sizeof(kl);
		pos += sizeof(kl) + kl;
		const struct framedesc_frame *d = framedesc_get(c->described, k, kl);
		if (opt.no_inline && framedesc_is(d, "inline"))
			continue;
		size_t name_len, file_len = 0;
		stream_frame_key_split(k, kl, &name_len);
		const char *file = NULL;
		int64_t line = 0;
		int placed = opt.lines && !framedesc_is_script(d) && framedesc_source(d, &file, &file_len, &line);
		char end[32];
		int end_len = placed ? snprintf(end, sizeof(end), line > 0 ? ":%lld)" : ")", (long long)line) : 0;
		c->tmp = marple_grow(c->tmp, &c->tmpcap, o + 1 + name_len + 2 + file_len + (size_t)end_len, 1);
		if (n++)
			c->tmp[o++] = ';';
		o = (size_t)(key_frame(c->tmp + o, k, name_len) - c->tmp);
		if (placed) {
			memcpy(c->tmp + o, " (", 2);
			o = (size_t)(key_frame(c->tmp + o + 2, file, file_len) - c->tmp);
			memcpy(c->tmp + o, end, (size_t)end_len);
			o += (size_t)end_len;
		}
	}
	return o;
}

/* The held stacks of the section that ended, folded as described. */
static void release_held(struct ctx *c)
{
	if (!c->held)
		return;
	for (size_t i = 0; i < hashtab_size(c->held); i++) {
		const struct hashtab_entry *e = hashtab_at(c->held, i);
		size_t len = described_key(c, e->key, e->len);	/* grows c->tmp */
		add_stack(c, c->tmp, len, e->count[0]);
	}
	hashtab_free(c->held);
	c->held = NULL;
}

/* --from/--to: the stacks of a timed stack section are kept until its samples
 * section has said how much of each lies in the range. */
static void timed_finish(struct ctx *c, const char *why_dropped)
{
	struct timed_fold *t = &c->timed;

	if (t->state == TF_SAMPLES && t->per)
		for (size_t i = 0; i < hashtab_size(t->per); i++) {
			const struct hashtab_entry *e = hashtab_at(t->per, i);
			uint64_t w = timed_weight(e->count[0], t->ns_per_weight);
			if (w)
				add_stack(c, e->key, e->len, w);
		}
	else if (t->state == TF_SAMPLES)
		for (size_t i = 0; i < t->n; i++) {
			uint64_t w = timed_weight(t->sum[i], t->ns_per_weight);
			if (w)
				add_stack(c, t->arena + t->off[i], t->off[i + 1] - t->off[i], w);
		}
	else if (t->state == TF_STACKS) {
		marple_warn_at(c->file, t->line, "section %ld: timed stacks without their samples section (%s): "
			"left out of the --from/--to fold", t->section, why_dropped);
		c->untimed++;
	}
	hashtab_free(t->per);
	t->per = NULL;
	t->state = TF_IDLE;
}

static void timed_header(struct ctx *c, struct stream_reader *r)
{
	struct timed_fold *t = &c->timed;
	json_t *hdr = stream_reader_header(r);
	enum timed_role role = timed_role(hdr);

	stream_reader_defer_records(r, 0);
	c->plain = 0;
	if (role == TIMED_SAMPLES && t->state == TF_STACKS) {
		t->state = TF_SAMPLES;
		if (opt.perf.pid || opt.perf.tid)
			t->per = hashtab_new();
		stream_reader_defer_records(r, 1);	/* timed_record parses the samples */
		return;
	}
	timed_finish(c, "another section follows");
	if (role == TIMED_SAMPLES) {
		marple_warn_at(c->file, stream_reader_line(r), "section %ld: samples without their stack section: skipped",
			stream_reader_section(r));
		c->untimed++;
	} else if (role == TIMED_STACKS) {
		*t = (struct timed_fold){ .state = TF_STACKS, .section = stream_reader_section(r),
					  .line = stream_reader_line(r), .ns_per_weight = timed_ns_per_weight(hdr),
					  .arena = t->arena, .arenacap = t->arenacap, .off = t->off,
					  .offcap = t->offcap, .sum = t->sum, .sumcap = t->sumcap };
		timed_range_ns(&opt.range, hdr, &t->from, &t->to);
		t->off = marple_grow(t->off, &t->offcap, 1, sizeof(*t->off));
		t->off[0] = 0;
	} else if (stream_reader_datatype(r) == DATATYPE_STACK && !opt.range.set) {
		/* --pid/--tid alone: the stacks are there, their processes not */
		marple_warn_at(c->file, stream_reader_line(r), "section %ld has no pid per sample (collect with "
			"--timed): folded by comm alone", stream_reader_section(r));
		c->pidless++;
		c->plain = 1;
	} else if (stream_reader_datatype(r) == DATATYPE_STACK) {
		marple_warn_at(c->file, stream_reader_line(r), "section %ld has no sample times (collect with --timed): "
			"left out of the --from/--to fold", stream_reader_section(r));
		c->untimed++;
	}
}

/* --pid/--tid: sample s's stack key (in c->tmp) with its process in the
 * comm frame, "comm-PID" or "comm-PID/TID", as perf script input folds. */
static size_t process_key(struct ctx *c, const struct timed_sample *s)
{
	struct timed_fold *t = &c->timed;
	const char *k = t->arena + t->off[s->stack];
	size_t len = t->off[s->stack + 1] - t->off[s->stack], at = 0;
	char tag[32];

	if (opt.host_frame)	/* the comm frame follows the host's */
		while (at < len && k[at++] != ';')
			;
	while (at < len && k[at] != ';')
		at++;
	int n = opt.perf.tid ? snprintf(tag, sizeof(tag), "-%u/%u", s->pid, s->tid)
			     : snprintf(tag, sizeof(tag), "-%u", s->pid);
	c->tmp = marple_grow(c->tmp, &c->tmpcap, len + (size_t)n, 1);
	memcpy(c->tmp, k, at);
	memcpy(c->tmp + at, tag, (size_t)n);
	memcpy(c->tmp + at + n, k + at, len - at);
	return len + (size_t)n;
}

static void timed_record(struct ctx *c, struct stream_reader *r)
{
	struct timed_fold *t = &c->timed;

	if (t->state == TF_STACKS) {
		size_t len = stream_key(c, stream_reader_stack(r));
		t->arena = marple_grow(t->arena, &t->arenacap, t->off[t->n] + len, 1);
		memcpy(t->arena + t->off[t->n], c->tmp, len);
		t->off = marple_grow(t->off, &t->offcap, t->n + 2, sizeof(*t->off));
		t->off[t->n + 1] = t->off[t->n] + len;
		t->sum = marple_grow(t->sum, &t->sumcap, t->n + 1, sizeof(*t->sum));
		t->sum[t->n++] = 0;
	} else if (t->state == TF_SAMPLES) {
		struct timed_sample s;
		const char *why;
		struct mstr text = stream_reader_line_text(r);
		if (timed_sample_parse_text(text.s, text.len, &s) == 0)
			;	/* the usual sample: parsed without the stream reader's field table */
		else if (stream_reader_parse_record(r) != STREAM_RECORD) {
			report_bad(c, stream_reader_line(r), stream_reader_error(r));
			return;
		} else if (timed_sample_parse(stream_reader_event(r), &s, &why) < 0) {
			report_bad(c, stream_reader_line(r), why);
			return;
		}
		if (s.stack >= t->n)
			report_bad(c, stream_reader_line(r), "sample names a stack its stack section does not have");
		else if (t->per) {
			size_t len = process_key(c, &s);
			hashtab_add(t->per, c->tmp, len, timed_in_range(&s, t->from, t->to, t->ns_per_weight), 0);
		}
		else
			t->sum[s.stack] += timed_in_range(&s, t->from, t->to, t->ns_per_weight);
	}
}

static void stream_header(struct ctx *c, struct stream_reader *r, int *warned_type)
{
	json_t *hdr = stream_reader_header(r);

	/* a timed stack section's samples section goes with it */
	if (timed_role(hdr) != TIMED_SAMPLES)
		c->unit_skip = stream_reader_datatype(r) == DATATYPE_STACK &&
			!stackunits_admit(&c->units, hdr, c->file, stream_reader_line(r), stream_reader_section(r));
	if (c->unit_skip) {
		stream_reader_defer_records(r, 1);	/* records unread */
		if (opt.range.set || opt.perf.pid || opt.perf.tid)
			timed_finish(c, "another section follows");
		return;
	}
	stream_reader_defer_records(r, 0);
	/* --to-stream names what was folded, so a picture of it says so: one
	 * interface as it was, several as "fold" */
	const char *iface = stream_header_str(hdr, "interface", "fold");
	if (!c->interface)
		c->interface = marple_strdup(iface);
	else if (strcmp(c->interface, iface)) {
		free(c->interface);
		c->interface = marple_strdup("fold");
	}
	if (opt.host_frame) {
		free(c->host);
		c->host = marple_strdup(stream_header_str(hdr, "host", "(no host)"));
	}
	if (opt.range.set || opt.perf.pid || opt.perf.tid) {
		timed_header(c, r);
		if (opt.range.set)
			return;
	} else {
		/* add_stream_stack; hold_stack takes them parsed */
		stream_reader_defer_records(r, stream_reader_datatype(r) == DATATYPE_STACK && !c->described);
	}
	if (stream_reader_datatype(r) != DATATYPE_STACK && timed_role(hdr) != TIMED_SAMPLES &&
		 !(*warned_type)++)
		marple_warn_at(c->file, stream_reader_line(r), "section %ld holds %s data, not stacks: skipped",
			stream_reader_section(r), stream_datatype_name(stream_reader_datatype(r)));
}

static void read_stream(struct ctx *c, struct lines *l)
{
	struct stream_reader *r = stream_reader_new_lines(l, c->file);
	enum stream_item it;
	int warned_type = 0;

	while ((it = stream_reader_next(r)) != STREAM_EOF) {
		if (it == STREAM_ERROR)
			report_bad(c, stream_reader_line(r), stream_reader_error(r));
		else if (it == STREAM_HEADER) {
			release_held(c);	/* a section without a trailer */
			stream_header(c, r, &warned_type);
		} else if (it == STREAM_TRAILER && c->described) {
			framedesc_add(c->described, stream_reader_trailer(r));
			release_held(c);
		} else if (it != STREAM_RECORD || c->unit_skip)
			continue;
		else if (c->described && stream_reader_datatype(r) == DATATYPE_STACK)
			hold_stack(c, stream_reader_stack(r));
		else if (c->plain)
			add_stack(c, c->tmp, stream_key(c, stream_reader_stack(r)), stream_reader_stack(r)->weight);
		else if (opt.range.set || opt.perf.pid || opt.perf.tid)
			timed_record(c, r);
		else if (stream_reader_datatype(r) == DATATYPE_STACK) {
			add_stream_stack(c, r);
			if (!opt.host_frame && keys_as_given())
				add_seen_ahead(c, r);
		}
	}
	if (opt.range.set || opt.perf.pid || opt.perf.tid)
		timed_finish(c, "the input ends");
	release_held(c);
	const char *why = stream_reader_unusable(r);
	if (why) {
		marple_warn_at(c->file, 0, "%s", why);
		c->unusable++;
	}
	stream_reader_free(r);
}

/* perf script text: the usual samples taken whole from what is read, any
 * other line one by one.  Returns lines_next's last answer. */
static int read_perf(struct ctx *c, struct perfscript *ps, struct lines *l)
{
	const char *s;
	size_t len;
	unsigned long n;
	int rc;

	for (;;) {
		s = lines_buffered(l, &len);
		len = perfscript_whole_samples(ps, s, len, lines_lineno(l) + 1, &n);
		lines_skip(l, len, n);
		/* a sample's frame lines are parsed at its end: a NUL byte is
		 * reported after the bad lines before it */
		if ((rc = lines_next(l, &s, &len)) <= 0 || (lines_has_nul(l) && (perfscript_finish(ps), has_nul(c, l))))
			return rc;
		perfscript_line(ps, s, len, lines_lineno(l));
	}
}

static void read_input(struct ctx *c, struct perfscript *ps, const char *path)
{
	FILE *f = marple_open_input(path);
	struct lines *l = lines_new(f, marple_input_name(path));
	enum input_kind kind = detect(l);
	int rc;
	/* marple-format(5)'s rule, for the text inputs (read_stream asks the stream reader) */
	uint64_t usable_before = c->usable + perfscript_filtered(ps), bad_before = c->bad;

	c->file = marple_input_name(path);
	c->nul_line = 0;
	if (getenv("MARPLE_FOLD_DEBUG"))
		marple_warn("%s: %s input", c->file, kind_names[kind]);
	if (opt.host_frame && kind != KIND_STREAM && kind != KIND_NONE) {
		marple_warn_at(c->file, 0, "%s input names no host (--host-frame needs marple stack sections): skipped",
			kind_names[kind]);
		c->hostless++;
		kind = KIND_NONE;
	}
	if ((opt.lines || opt.no_inline) && (kind == KIND_PERF || kind == KIND_FOLDED))
		marple_warn_at(c->file, 0, "%s input describes no frames: --lines and --no-inline leave it as it is",
			kind_names[kind]);
	if (opt.range.set && kind != KIND_STREAM) {
		marple_warn_at(c->file, 0, "%s input has no sample times for --from/--to: skipped", kind_names[kind]);
		c->untimed++;
		kind = KIND_NONE;
	}
	switch (kind) {
	case KIND_NONE:
		break;
	case KIND_PERF:
		rc = read_perf(c, ps, l);
		perfscript_finish(ps);
		if (rc < 0)
			c->bad++;
		break;
	case KIND_FOLDED:
		read_folded(c, l);
		break;
	case KIND_STREAM:
		read_stream(c, l);
		break;
	}
	const char *why = kind == KIND_PERF || kind == KIND_FOLDED ?
		stream_unusable_why(c->usable + perfscript_filtered(ps) - usable_before, c->bad - bad_before, c->nul_line) : NULL;
	if (why) {
		marple_warn_at(c->file, 0, "%s", why);
		c->unusable++;
	}
	lines_free(l);
	if (f != stdin)
		fclose(f);
}

static void put_u64(FILE *f, uint64_t v)
{
	char b[24], *p = b + sizeof(b);
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	fwrite(p, 1, (size_t)(b + sizeof(b) - p), f);
}

static void write_folded(FILE *f, struct hashtab *agg)
{
	struct hashtab_entry **e = hashtab_sorted(agg);
	size_t n = hashtab_size(agg);
	for (size_t i = 0; i < n; i++) {
		fwrite(e[i]->key, 1, e[i]->len, f);
		putc(' ', f);
		put_u64(f, e[i]->count[0]);
		if (opt.diff) {
			putc(' ', f);
			put_u64(f, e[i]->count[1]);
		}
		putc('\n', f);
	}
}

static int write_stream(FILE *f, struct hashtab *agg, const char *units, const char *interface)
{
	json_t *h = stream_section_header_new(interface ? interface : "fold", DATATYPE_STACK);
	json_object_set_new(h, "units", json_pack("{s:s}", "weight", units ? units : "samples"));
	json_object_set_new(h, "options",
			    json_pack("{s:b,s:b,s:b,s:b,s:b}", "pid", opt.perf.pid, "tid", opt.perf.tid,
				      "kernel", opt.perf.kernel, "jit", opt.perf.jit, "addrs", opt.perf.addrs));
	if (stream_write_json(f, h) < 0)
		return -1;
	json_decref(h);

	struct hashtab_entry **e = hashtab_sorted(agg);
	size_t n = hashtab_size(agg), cap = 0;
	struct mstr *frames = NULL;
	for (size_t i = 0; i < n; i++) {
		size_t nf = 0, pos = 0, fl;
		const char *fr;
		while (folded_next_frame(e[i]->key, e[i]->len, &pos, &fr, &fl)) {
			frames = marple_grow(frames, &cap, nf + 1, sizeof(*frames));
			frames[nf++] = (struct mstr){ fr, fl };
		}
		stream_write_stack(f, e[i]->count[0], frames, nf);
	}
	free(frames);
	json_t *t = stream_section_trailer_new(n, 0, 0, "eof");
	int rc = stream_write_json(f, t);
	json_decref(t);
	return rc;
}

/* The options into opt; exits on -h (0) and on a usage error (2). */
static void parse_options(int argc, char **argv)
{
	int ch;

	while ((ch = options_getopt(options, argc, argv)) != -1) {
		switch (ch) {
		case 'p': opt.perf.pid = 1; break;
		case 't': opt.perf.tid = 1; break;
		case 'k': opt.perf.kernel = 1; break;
		case 'j': opt.perf.jit = 1; break;
		case 'a': opt.perf.kernel = opt.perf.jit = 1; break;
		case OPT_ADDRS: opt.perf.addrs = 1; break;
		case 'e':
			if (!*optarg)
				marple_usage_error("--event-filter: empty event name");
			opt.perf.event_filter = optarg;
			break;
		case 's': opt.to_stream = 1; break;
		case 'u': opt.user_threads = 1; break;
		case OPT_NOLINENO: opt.nolineno = 1; break;
		case OPT_LINES: opt.lines = 1; break;
		case OPT_NO_INLINE: opt.no_inline = 1; break;
		case 'd':
		case OPT_DIFF: opt.diff = 1; break;
		case 'H': opt.host_frame = 1; break;
		case 'o': opt.out = optarg; break;
		case OPT_FROM: timed_range_option(&opt.range, 1, optarg); break;
		case OPT_TO: timed_range_option(&opt.range, 0, optarg); break;
		case 'h': options_help(stdout, options, &help); marple_close_stdout(); exit(EXIT_OK);
		default: marple_usage_try();
		}
	}
	if (opt.diff && argc - optind != 2)
		marple_usage_error("--diff needs exactly two inputs, A and B");
	if (opt.diff && opt.to_stream)
		marple_usage_error("--diff and --to-stream exclude each other (a stack section has one weight)");
	timed_range_check(&opt.range);
	if ((opt.lines || opt.no_inline) && (opt.range.set || opt.perf.pid || opt.perf.tid))
		marple_usage_error("--lines and --no-inline do not go with --from, --to, --pid or --tid yet");
}

int main(int argc, char **argv)
{
	marple_init(argc, argv);
	parse_options(argc, argv);

	struct ctx c = { .agg = hashtab_new() };
	if (opt.lines || opt.no_inline)
		c.described = framedesc_new();
	struct perfscript *ps = perfscript_new(&opt.perf, on_sample, on_bad, &c);
	c.ps = ps;
	char *stdin_only[] = { "-" };
	char **files = optind < argc ? argv + optind : stdin_only;
	int nfiles = optind < argc ? argc - optind : 1;
	uint64_t usable_before = 0;

	for (int i = 0; i < nfiles; i++) {
		c.which = opt.diff ? i : 0;
		read_input(&c, ps, files[i]);
		if (opt.diff && c.usable == usable_before)
			marple_warn_at(c.file, 0, "no usable stacks in this input");
		usable_before = c.usable;
	}

	if (perfscript_filtered(ps) && !opt.perf.event_filter)
		marple_warn("kept only samples of event '%s' (the first seen); %llu samples of other events "
			"(e.g. '%s') skipped; choose one with --event-filter",
			perfscript_event(ps), (unsigned long long)perfscript_filtered(ps),
			perfscript_other_event(ps));
	marple_warn_skipped_lines(c.bad);
	stackfilter_count_say(&c.kthreads, c.units.unit, "without -u they are kept");
	int rc = EXIT_OK;
	if (hashtab_size(c.agg) == 0) {
		marple_warn_at(marple_operands_name(argc - optind, argv + optind), 0, "no usable stacks in the input%s",
			perfscript_filtered(ps) ? " (every sample was of another event)" :
			c.untimed ? " (no timed stack section)" :
			c.hostless ? " (no marple stack section: no host to name)" :
			opt.range.set ? " (none in that time range)" : "");
		rc = EXIT_DATA;
		goto cleanup;
	}
	if (c.unusable) {	/* each named as it ended: nothing is written */
		rc = EXIT_DATA;
		goto cleanup;
	}

	struct outfile *of = marple_outfile_open(opt.out);
	FILE *f = marple_outfile_stream(of);
	if (opt.to_stream) {
		/* a stream header's unit, else what perf's periods count */
		const char *units = c.units.unit ? c.units.unit : perfscript_samples(ps) ? perfscript_weight_unit(ps) : NULL;
		if (write_stream(f, c.agg, units, c.interface) < 0) {
			marple_outfile_abort(of);
			rc = EXIT_DATA;
			goto cleanup;
		}
	} else
		write_folded(f, c.agg);
	if (marple_outfile_commit(of) < 0 || c.hostless)
		rc = EXIT_DATA;
cleanup:
	perfscript_free(ps);
	hashtab_free(c.agg);
	free(c.plain_ids);
	hashtab_free(c.written);
	free(c.tmp);
	free(c.timed.arena);
	free(c.timed.off);
	free(c.timed.sum);
	stackunits_free(&c.units);
	free(c.frames);
	free(c.lineless);
	framedesc_free(c.described);
	hashtab_free(c.held);
	free(c.interface);
	free(c.host);
	return rc;
}
