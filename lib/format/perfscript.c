/* perfscript.c — `perf script` text to folded stacks (see perfscript.h).
 *
 * The reference's rules are regular expressions; each one is matched here by
 * hand with the same leftmost/greedy/lazy choices, so that odd lines fold the
 * same way too:
 *   sample header  ^(\S.+?)\s+(\d+)/{0,}(\d+){0,}\s+       comm, pid[/tid]
 *   event          :\s*(\d+)*\s+(\S+):\s*$             period, event name
 *   frame          ^\s*(\w+)\s*(.+) \((\S*)\)          address, symbol, module
 */
#include "perfscript.h"

#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "util.h"

/* Frame lines parsed lately, by their bytes: a sample's callers repeat from
 * sample to sample (82% of the frame lines of a busy machine's capture hit
 * in 4096 slots).  Not a table of every distinct line: a slot is overwritten
 * by the next line that hashes to it, so it stays small enough for a core's
 * cache (every line in the hash table cost more than parsing it again).
 * A slot is 256 bytes: with 128, a line of C++ or Java and its unit (77
 * bytes the median line of the fold conformance inputs) often did not fit,
 * and was parsed every time (a third of those lines; 300 MiB of them folded
 * in 80-82 ms, now 77-79; a captured perf script's short lines the same). */
#define MEMO_SLOTS 4096
struct frame_memo {
	uint64_t hash;
	uint16_t linelen, unitlen;	/* text: the line, then its unit */
	uint8_t units, java;		/* units: 0 or 1 (frame_line's) */
	char text[240];
};

/* A frame line of a whole sample: its hashtab_hash_line, where it starts
 * and its length (frame_span_each). */
struct span_line {
	uint64_t hash;
	uint32_t at, len;
};

/* The last kept header's tail, from the ':' after its time, and its
 * period (header_event_memo). */
struct header_tail {
	char text[48];
	size_t len;
	uint64_t period;
	int given;
};

struct perfscript {
	struct perfscript_opts o;
	perfscript_sample_fn fn;
	perfscript_bad_fn bad;
	void *ctx;
	char *event;		/* kept event (filter) */
	char *other;		/* first skipped event */
	int defaulted;		/* filter taken from the first event */
	int have_pname;
	int is_java;
	char *pname;
	size_t pname_len, pname_cap;
	uint64_t period;
	int period_given;	/* the pending sample's header printed its period */
	/* Frames of the pending sample, leaf first: text in buf, units at offsets. */
	char *buf;
	size_t buf_len, buf_cap;
	size_t *unit;		/* start offset of each unit in buf */
	size_t nunit, unit_cap;
	char *key;
	size_t key_cap;
	uint64_t samples, filtered, nbad;
	uint64_t weighted;	/* samples whose weight was a period on their header */
	struct frame_memo *memo;	/* MEMO_SLOTS of them, at the first frame */
	/* The pending sample's frame lines as read, each ending in a newline:
	 * folded at the sample's end (flush).  In raw, or (a whole sample's)
	 * where they were read: whole, then, raw_len bytes at whole. */
	char *raw;
	const char *whole;
	uint64_t whole_hash;	/* whole's raw_len bytes' hashtab_hash_line */
	size_t raw_len, raw_cap, raw_lines;
	unsigned long raw_lineno;	/* the first pending line's */
	int raw_mixed;		/* other lines came between: not memoized */
	/* a sample's frame lines -> its folded key, folded + count[0],
	 * count[1] long (low half; the process name's length in the high half):
	 * hashed with the process name (memo_hash) */
	struct hashtab *stacks;
	uint64_t *seen;		/* SEEN_SLOTS raw samples' hashes, seen once */
	unsigned probes, hits;	/* the memo's, this window of samples */
	unsigned resting;	/* samples left to fold without the memo */
	char *folded;
	size_t folded_len, folded_cap;
	uint64_t *notes;	/* the caller's note on each memoized sample */
	size_t notes_cap;
	uint64_t *note;		/* the pending sample's, or NULL */
	struct header_tail tail;	/* header_event_memo's */
	struct span_line *span;	/* frame_span_each's lines */
	size_t span_cap;
};

static const unsigned char cls[256] = {
	/* 1 = \s, 2 = \w, 4 = \d, 8 = what tidying or a "->" split change */
	[';'] = 8, ['('] = 8, ['"'] = 8, ['\''] = 8, ['-'] = 8,
	['\t'] = 1, ['\n'] = 1, ['\v'] = 1, ['\f'] = 1, ['\r'] = 1, [' '] = 1,
	['0'] = 6, ['1'] = 6, ['2'] = 6, ['3'] = 6, ['4'] = 6, ['5'] = 6, ['6'] = 6, ['7'] = 6,
	['8'] = 6, ['9'] = 6, ['_'] = 2,
	['a'] = 2, ['b'] = 2, ['c'] = 2, ['d'] = 2, ['e'] = 2, ['f'] = 2, ['g'] = 2, ['h'] = 2,
	['i'] = 2, ['j'] = 2, ['k'] = 2, ['l'] = 2, ['m'] = 2, ['n'] = 2, ['o'] = 2, ['p'] = 2,
	['q'] = 2, ['r'] = 2, ['s'] = 2, ['t'] = 2, ['u'] = 2, ['v'] = 2, ['w'] = 2, ['x'] = 2,
	['y'] = 2, ['z'] = 2,
	['A'] = 2, ['B'] = 2, ['C'] = 2, ['D'] = 2, ['E'] = 2, ['F'] = 2, ['G'] = 2, ['H'] = 2,
	['I'] = 2, ['J'] = 2, ['K'] = 2, ['L'] = 2, ['M'] = 2, ['N'] = 2, ['O'] = 2, ['P'] = 2,
	['Q'] = 2, ['R'] = 2, ['S'] = 2, ['T'] = 2, ['U'] = 2, ['V'] = 2, ['W'] = 2, ['X'] = 2,
	['Y'] = 2, ['Z'] = 2,
};
#define IS_WS(c) (cls[(unsigned char)(c)] & 1)
#define IS_WORD(c) (cls[(unsigned char)(c)] & 2)
#define IS_DIGIT(c) (cls[(unsigned char)(c)] & 4)
#define IS_SPECIAL(c) (cls[(unsigned char)(c)] & 8)

struct perfscript *perfscript_new(const struct perfscript_opts *o, perfscript_sample_fn fn,
				    perfscript_bad_fn bad, void *ctx)
{
	struct perfscript *p = marple_calloc(1, sizeof(*p));
	if (o)
		p->o = *o;
	p->fn = fn;
	p->bad = bad;
	p->ctx = ctx;
	p->event = marple_strdup(o && o->event_filter ? o->event_filter : "");
	p->other = marple_strdup("");
	return p;
}

void perfscript_free(struct perfscript *p)
{
	if (!p)
		return;
	free(p->event);
	free(p->other);
	free(p->pname);
	free(p->buf);
	free(p->unit);
	free(p->key);
	free(p->memo);
	free(p->raw);
	hashtab_free(p->stacks);
	free(p->seen);
	free(p->folded);
	free(p->notes);
	free(p->span);
	free(p);
}

uint64_t perfscript_samples(const struct perfscript *p) { return p->samples; }
uint64_t *perfscript_sample_note(struct perfscript *p) { return p->note; }
uint64_t perfscript_filtered(const struct perfscript *p) { return p->filtered; }
const char *perfscript_event(const struct perfscript *p) { return p->event; }
const char *perfscript_other_event(const struct perfscript *p) { return p->other; }

const char *perfscript_weight_unit(const struct perfscript *p)
{
	if (!p->weighted)
		return "samples";
	/* perf's software clocks count their period in nanoseconds (the
	 * event may carry modifiers: cpu-clock:pppH) */
	size_t n = strcspn(p->event, ":");
	if ((n == 9 && memcmp(p->event, "cpu-clock", n) == 0) || (n == 10 && memcmp(p->event, "task-clock", n) == 0))
		return "ns";
	return p->event;
}

static inline char *reserve(struct perfscript *p, size_t more)
{
	if (p->buf_len + more > p->buf_cap)
		p->buf = marple_grow(p->buf, &p->buf_cap, p->buf_len + more, 1);
	return p->buf + p->buf_len;
}

static inline void put(struct perfscript *p, const char *s, size_t n)
{
	memcpy(reserve(p, n), s, n);
	p->buf_len += n;
}

/* The pending sample's key, "pname;unit_n;...;unit_1" (units leaf first in
 * buf), in p->key; returns its length. */
static size_t fold_key(struct perfscript *p)
{
	size_t need = p->pname_len + p->buf_len + p->nunit + 1;
	if (need > p->key_cap) {
		p->key_cap = need * 2;
		free(p->key);
		p->key = marple_malloc(p->key_cap);
	}
	char *k = p->key;
	memcpy(k, p->pname, p->pname_len);
	k += p->pname_len;
	size_t end = p->buf_len;
	for (size_t i = p->nunit; i-- > 0;) {
		size_t st = p->unit[i];
		*k++ = ';';
		memcpy(k, p->buf + st, end - st);
		k += end - st;
		end = st;
	}
	return (size_t)(k - p->key);
}

static void bad_line(struct perfscript *p, unsigned long lineno, const char *why)
{
	p->nbad++;
	if (p->bad)
		p->bad(p->ctx, lineno, why);
}

/* ^(\S.+?)\s+(\d+)/{0,}(\d+){0,}\s+ : returns 1 with comm=[0,*commlen), pid, tid spans. */
static int match_header(const char *s, size_t n, size_t *commlen, const char **pid, size_t *pidlen,
			const char **tid, size_t *tidlen)
{
	if (n < 2 || IS_WS(s[0]))
		return 0;
	for (size_t k = 2; k < n; k++) {
		if (!IS_WS(s[k]))
			continue;
		size_t a = k;
		while (a < n && IS_WS(s[a]))
			a++;
		size_t b = a;
		while (b < n && IS_DIGIT(s[b]))
			b++;
		/* every k in this blank run sees the same rest: try the run once */
		size_t next = a - 1;
		if (b == a) {
			k = next;
			continue;
		}
		size_t c = b, d;
		while (c < n && s[c] == '/')
			c++;
		d = c;
		while (d < n && IS_DIGIT(s[d]))
			d++;
		if (d >= n || !IS_WS(s[d])) {
			k = next;
			continue;
		}
		*commlen = k;
		*pid = s + a;
		*pidlen = b - a;
		*tid = s + c;
		*tidlen = d - c;
		return 1;
	}
	return 0;
}

/* :\s*(\d+)*\s+(\S+):\s*$ : period digits (maybe empty) and the event name. */
static int match_event(const char *s, size_t n, const char **per, size_t *perlen, const char **ev,
		       size_t *evlen)
{
	size_t e = n;
	while (e > 0 && IS_WS(s[e - 1]))
		e--;
	if (e < 2 || s[e - 1] != ':')
		return 0;
	size_t p = e - 1;
	while (p > 0 && !IS_WS(s[p - 1]))
		p--;
	if (p == e - 1 || p == 0)
		return 0;
	size_t q = p;
	while (q > 0 && IS_WS(s[q - 1]))
		q--;
	size_t dend = q;
	while (q > 0 && IS_DIGIT(s[q - 1]))
		q--;
	size_t dstart = q;
	while (q > 0 && IS_WS(s[q - 1]))
		q--;
	if (q == 0 || s[q - 1] != ':')
		return 0;
	*per = s + dstart;
	*perlen = dend - dstart;
	*ev = s + p;
	*evlen = e - 1 - p;
	return 1;
}

static void set_str(char **dst, const char *s, size_t n)
{
	free(*dst);
	*dst = marple_strndup(s, n);
}

/* The period and event of header line s[0, n) (match_event finds them at
 * its end): *period (1 where none is printed), *given (one was), *tail
 * where the ':' before them is (0: none found), and whether the event is
 * the one kept (the other events' samples are counted as filtered). */
static int header_event(struct perfscript *p, const char *s, size_t n, uint64_t *period, int *given, size_t *tail)
{
	const char *per, *ev;
	size_t perlen = 0, evlen;

	*period = 1;
	*given = 0;
	*tail = 0;
	if (!match_event(s, n, &per, &perlen, &ev, &evlen))
		return 1;
	for (*tail = (size_t)(per - s); *tail > 0 && s[*tail] != ':'; --*tail)
		;	/* blanks between, and the ':' is no first byte */
	*given = perlen > 0;
	if (p->event[0] == 0) {
		set_str(&p->event, ev, evlen);
		p->defaulted = 1;
	} else if (strlen(p->event) != evlen || memcmp(p->event, ev, evlen) != 0) {
		if (p->other[0] == 0)
			set_str(&p->other, ev, evlen);
		return 0;
	}
	/* digits only (match_event's); past 2^64-1, saturated */
	if (*given && !(perlen == 1 && per[0] == '0') && marple_parse_u64_span(per, perlen, period) < 0)
		*period = UINT64_MAX;
	return 1;
}

/* header_event, from the last header's answer when this one ends in the
 * same bytes (": 1001001 cpu-clock: ": nearly every header of a capture),
 * from the ':' that ends its time on (all match_event looks at). */
static int header_event_memo(struct perfscript *p, const char *s, size_t n, uint64_t *period, int *given)
{
	struct header_tail *t = &p->tail;
	if (t->len && n > t->len && memcmp(s + n - t->len, t->text, t->len) == 0) {
		*period = t->period;
		*given = t->given;
		return 1;
	}
	size_t at;
	if (!header_event(p, s, n, period, given, &at))
		return 0;
	t->len = 0;
	if (at > 0 && n - at <= sizeof(t->text)) {
		t->len = n - at;
		memcpy(t->text, s + at, t->len);
		t->period = *period;
		t->given = *given;
	}
	return 1;
}

static void header_line(struct perfscript *p, const char *s, size_t n, size_t commlen,
			const char *pid, size_t pidlen, const char *tid, size_t tidlen)
{
	/* Perl truth: "" and "0" are false. */
	if (tidlen == 0 || (tidlen == 1 && tid[0] == '0')) {
		tid = pid;
		tidlen = pidlen;
		pid = "?";
		pidlen = 1;
	}
	uint64_t period;
	int given;
	if (!header_event_memo(p, s, n, &period, &given)) {
		p->filtered++;
		return;
	}
	p->period = period;
	p->period_given = given;

	size_t need = commlen + pidlen + tidlen + 3;
	if (need > p->pname_cap)
		p->pname = marple_grow(p->pname, &p->pname_cap, need, 1);
	char *o = p->pname;
	for (size_t i = 0; i < commlen; i++)
		o[i] = s[i] == ' ' ? '_' : s[i];
	o += commlen;
	if (p->o.tid || p->o.pid) {
		*o++ = '-';
		memcpy(o, pid, pidlen);
		o += pidlen;
		if (p->o.tid) {
			*o++ = '/';
			memcpy(o, tid, tidlen);
			o += tidlen;
		}
	}
	p->pname_len = (size_t)(o - p->pname);
	p->is_java = p->pname_len >= 4 && memcmp(p->pname, "java", 4) == 0;	/* m/^java/ */
	p->have_pname = 1;
}

/* The first \s byte of s[i, n), or n; eight bytes a step while none of them
 * is below '!' or above 0x7f (a byte that is may be one: looked at alone). */
static size_t find_ws(const char *s, size_t i, size_t n)
{
	const uint64_t ones = 0x0101010101010101ull;
	while (i + 8 <= n) {
		uint64_t x;
		memcpy(&x, s + i, 8);
		if (((x - 0x21 * ones) | x) & (0x80 * ones))
			break;
		i += 8;
	}
	while (i < n && !IS_WS(s[i]))
		i++;
	return i;
}

/* Past the spaces from s[i], eight a step. */
static size_t skip_spaces(const char *s, size_t i, size_t n)
{
	uint64_t x;
	while (i + 8 <= n && (memcpy(&x, s + i, 8), x == 0x2020202020202020ull))
		i += 8;
	while (i < n && s[i] == ' ')
		i++;
	return i;
}

/* ^\s*(\w+)\s*(.+) \((\S*)\) */
static int match_frame(const char *s, size_t n, size_t *pc0, size_t *pc1, size_t *f0, size_t *f1,
		       size_t *m0, size_t *m1)
{
	size_t a = 0;
	if (n > 0 && s[0] == '\t')	/* perf's: a tab, spaces padding the address */
		a = skip_spaces(s, 1, n);
	while (a < n && IS_WS(s[a]))
		a++;
	size_t b = a;
	while (b < n && IS_WORD(s[b]))
		b++;
	if (b == a)
		return 0;
	/* Z: the rightmost " (" whose following non-space run holds a ')'. */
	size_t z = n, t = 0, lim = n;
	while (lim > 0) {
		const char *open = memrchr(s, '(', lim);
		if (!open)
			break;
		size_t i = (size_t)(open - s);
		lim = i;
		if (i == 0 || s[i - 1] != ' ')
			continue;
		size_t r = find_ws(s, i + 1, n);
		const char *last = memrchr(s + i + 1, ')', r - i - 1);
		if (last) {
			z = i - 1;
			t = (size_t)(last - s);
			break;
		}
	}
	if (z == n)
		return 0;
	size_t x = b;
	while (x < n && IS_WS(s[x]))
		x++;
	size_t w, y;
	if (z >= b + 1) {
		w = b;
		y = x < z - 1 ? x : z - 1;
		if (y < b)
			y = b;
	} else if (z >= a + 2) {
		w = z - 1;
		y = z - 1;
	} else
		return 0;
	*pc0 = a;
	*pc1 = w;
	*f0 = y;
	*f1 = z;
	*m0 = z + 2;
	*m1 = t;
	return 1;
}

/* First "->" in s[0,n), or NULL (memchr is much faster than memmem here). */
static const char *find_arrow(const char *s, size_t n)
{
	const char *e = s + n;
	while (s + 1 < e) {
		const char *d = memchr(s, '-', (size_t)(e - s - 1));
		if (!d)
			return NULL;
		if (d[1] == '>')
			return d;
		s = d + 1;
	}
	return NULL;
}

static int contains(const char *s, size_t n, const char *needle)
{
	return memmem(s, n, needle, strlen(needle)) != NULL;
}

/* mod matches /tmp/perf-\d+\.map or /jitted-\d+-\d+\.so anywhere. */
static int is_jit_module(const char *m, size_t n)
{
	for (const char *q = m; (q = memmem(q, n - (size_t)(q - m), "/tmp/perf-", 10)); q++) {
		const char *r = q + 10, *e = m + n;
		const char *d = r;
		while (d < e && IS_DIGIT(*d))
			d++;
		if (d > r && e - d >= 4 && memcmp(d, ".map", 4) == 0)
			return 1;
	}
	for (const char *q = m; (q = memmem(q, n - (size_t)(q - m), "/jitted-", 8)); q++) {
		const char *e = m + n, *d = q + 8, *r = d;
		while (d < e && IS_DIGIT(*d))
			d++;
		if (d == r || d >= e || *d != '-')
			continue;
		r = ++d;
		while (d < e && IS_DIGIT(*d))
			d++;
		if (d > r && e - d >= 3 && memcmp(d, ".so", 3) == 0)
			return 1;
	}
	return 0;
}

/* Tidy one symbol (already [unknown]-resolved) into buf: ; -> :, drop what
 * follows the first '(' unless it looks like a Go method, drop quotes,
 * Java's leading L. */
static void put_tidy(struct perfscript *p, const char *f, size_t n)
{
	static const unsigned char special[256] = { [';'] = 1, ['('] = 1, ['"'] = 1, ['\''] = 1 };
	size_t i = 0;
	while (i < n && !special[(unsigned char)f[i]])
		i++;
	size_t cut = n;
	if (i < n) {
		/* Go method: ".(" ... ")." */
		const char *dp = memmem(f, n, ".(", 2);
		int go = 0;
		if (dp) {
			for (size_t j = n; j-- > (size_t)(dp - f) + 2;)
				if (j + 1 < n && f[j] == ')' && f[j + 1] == '.') {
					go = 1;
					break;
				}
		}
		if (!go) {
			for (size_t j = 0; j < n; j++) {
				if (f[j] != '(')
					continue;
				static const char anon[] = "anonymous namespace)";
				if (n - j - 1 >= sizeof(anon) - 1 && memcmp(f + j + 1, anon, sizeof(anon) - 1) == 0)
					continue;
				cut = j;
				break;
			}
		}
	}
	size_t start = p->buf_len;
	char *o = reserve(p, cut);
	size_t k = i < cut ? i : cut;
	memcpy(o, f, k);	/* no ; ( " ' before i */
	for (size_t j = k; j < cut; j++) {
		char c = f[j];
		if (c == '"' || c == '\'')
			continue;
		o[k++] = c == ';' ? ':' : c;
	}
	if (p->is_java && k > 0 && o[0] == 'L' && memchr(o, '/', k)) {
		memmove(o, o + 1, k - 1);
		k--;
	}
	p->buf_len = start + k;
}

/* A symbol that tidies to itself and holds no "->": none of ; ( " ' -, not
 * [unknown], and no Java name to strip an L from. */
static int plain_symbol(const struct perfscript *p, const char *f, size_t n)
{
	if (p->is_java || (n == 9 && memcmp(f, "[unknown]", 9) == 0))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (IS_SPECIAL(f[i]))
			return 0;
	return 1;
}

static void frame_line(struct perfscript *p, const char *s, size_t pc0, size_t pc1, size_t f0,
		       size_t f1, size_t m0, size_t m1)
{
	const char *func = s + f0, *mod = s + m0;
	size_t flen = f1 - f0, mlen = m1 - m0;

	/* s/\+0x[\da-f]+$// */
	size_t h = flen;
	while (h > 0 && ((func[h - 1] >= '0' && func[h - 1] <= '9') || (func[h - 1] >= 'a' && func[h - 1] <= 'f')))
		h--;
	if (h < flen && h >= 3 && memcmp(func + h - 3, "+0x", 3) == 0)
		flen = h - 3;
	if (flen > 0 && func[0] == '(')
		return;

	int kern = p->o.kernel && mlen > 0 && (mod[0] == '[' || (mlen >= 7 && memcmp(mod + mlen - 7, "vmlinux", 7) == 0)) &&
		   !contains(mod, mlen, "unknown");
	int jit = !kern && p->o.jit && is_jit_module(mod, mlen);

	/* split /->/, dropping trailing empty pieces */
	size_t end = flen;
	while (end >= 2 && func[end - 2] == '-' && func[end - 1] == '>')
		end -= 2;
	if (end == 0)
		return;

	if (p->nunit == p->unit_cap)
		p->unit = marple_grow(p->unit, &p->unit_cap, p->nunit + 1, sizeof(size_t));
	p->unit[p->nunit++] = p->buf_len;
	if (plain_symbol(p, func, end)) {	/* the usual frame: nothing to split or tidy */
		put(p, func, end);
		if (kern)
			put(p, "_[k]", 4);
		else if (jit)
			put(p, "_[j]", 4);
		return;
	}
	size_t pos = 0;
	int first = 1;
	for (;;) {
		const char *arrow = find_arrow(func + pos, end - pos);
		size_t pe = arrow ? (size_t)(arrow - func) : end;
		const char *piece = func + pos;
		size_t plen = pe - pos;

		if (!first)
			put(p, ";", 1);
		if (plen == 9 && memcmp(piece, "[unknown]", 9) == 0) {
			char tmp[64];
			const char *base = "unknown";
			size_t blen = 7;
			if (!(mlen == 9 && memcmp(mod, "[unknown]", 9) == 0)) {
				const char *sl = memrchr(mod, '/', mlen);
				base = sl ? sl + 1 : mod;
				blen = mlen - (size_t)(base - mod);
			}
			/* "[" base [" <" pc ">"] "]", then tidied like any name */
			size_t need = blen + (pc1 - pc0) + 5;
			char *t = need <= sizeof(tmp) ? tmp : marple_malloc(need);
			size_t k = 0;
			t[k++] = '[';
			memcpy(t + k, base, blen);
			k += blen;
			if (p->o.addrs) {
				t[k++] = ' ';
				t[k++] = '<';
				memcpy(t + k, s + pc0, pc1 - pc0);
				k += pc1 - pc0;
				t[k++] = '>';
			}
			t[k++] = ']';
			put_tidy(p, t, k);
			if (t != tmp)
				free(t);
		} else
			put_tidy(p, piece, plen);
		if (!first)
			put(p, "_[i]", 4);
		else if (kern)
			put(p, "_[k]", 4);
		else if (jit)
			put(p, "_[j]", 4);
		first = 0;
		if (!arrow)
			break;
		pos = pe + 2;
	}
}

/* The frame at slot of the memo, if it holds line s[0, n) as parsed for
 * this sample's kind (Java or not): its unit appended, as frame_line would. */
static int memo_replay(struct perfscript *p, const struct frame_memo *m, uint64_t h, const char *s, size_t n)
{
	if (m->hash != h || m->linelen != n || m->java != p->is_java || memcmp(m->text, s, n) != 0)
		return 0;
	if (m->units) {
		if (p->nunit == p->unit_cap)
			p->unit = marple_grow(p->unit, &p->unit_cap, p->nunit + 1, sizeof(size_t));
		p->unit[p->nunit++] = p->buf_len;
		if (m->unitlen)
			put(p, m->text + n, m->unitlen);
	}
	return 1;
}

/* Keep in slot m what frame_line made of s[0, n): nothing, or the one
 * unit it appended at buf0, when line and unit fit. */
static void memo_keep(struct perfscript *p, struct frame_memo *m, uint64_t h, const char *s, size_t n,
		      size_t buf0, size_t unit0)
{
	size_t ulen = p->buf_len - buf0;
	if (n + ulen > sizeof(m->text))
		return;
	m->hash = h;
	m->linelen = (uint16_t)n;
	m->unitlen = (uint16_t)ulen;
	m->units = p->nunit > unit0;
	m->java = (uint8_t)p->is_java;
	memcpy(m->text, s, n);
	if (ulen)	/* buf may not be allocated yet */
		memcpy(m->text + n, p->buf + buf0, ulen);
}

/* A frame line of a sample (h: its hashtab_hash_line): from the memo when the
 * same bytes were parsed lately, else parsed (and kept unless it was a bad
 * line). */
static void frame_hashed(struct perfscript *p, const char *s, size_t n, uint64_t h, unsigned long lineno)
{
	struct frame_memo *m = NULL;
	if (p->have_pname) {
		if (!p->memo)
			p->memo = marple_calloc(MEMO_SLOTS, sizeof(*p->memo));
		m = &p->memo[h & (MEMO_SLOTS - 1)];
		if (memo_replay(p, m, h, s, n))
			return;
	}
	size_t pc0, pc1, f0, f1, m0, m1, buf0 = p->buf_len, unit0 = p->nunit;
	if (!match_frame(s, n, &pc0, &pc1, &f0, &f1, &m0, &m1)) {
		bad_line(p, lineno, "not a sample header, stack frame, comment or blank line");
		return;
	}
	if (!m)
		return;
	frame_line(p, s, pc0, pc1, f0, f1, m0, m1);
	memo_keep(p, m, h, s, n, buf0, unit0);
}

static void frame_or_bad(struct perfscript *p, const char *s, size_t n, unsigned long lineno)
{
	frame_hashed(p, s, n, hashtab_hash_line(s, n), lineno);
}

/* The frame lines s[0, ...) of a sample, count of them, one after another
 * (the first numbered lineno), each ending in '\n' before end: their memo
 * slots are asked for a batch at a time before any is read (a slot is read
 * cold: one miss after another took 86% of a line's time on a busy
 * machine's capture); each line hashed as its end is found. */
static void frame_lines(struct perfscript *p, const char *s, const char *end, size_t count, unsigned long lineno)
{
	enum { BATCH = 16 };
	const char *line[BATCH];
	size_t len[BATCH];
	uint64_t h[BATCH];
	if (p->have_pname && !p->memo)
		p->memo = marple_calloc(MEMO_SLOTS, sizeof(*p->memo));
	for (size_t done = 0; done < count;) {
		size_t k = count - done < BATCH ? count - done : BATCH;
		for (size_t i = 0; i < k; i++) {
			line[i] = s;
			h[i] = hashtab_hash_to_nl(s, (size_t)(end - s), &len[i]);
			if (p->memo)
				__builtin_prefetch(&p->memo[h[i] & (MEMO_SLOTS - 1)]);
			s += len[i] + 1;
		}
		for (size_t i = 0; i < k; i++)
			frame_hashed(p, line[i], len[i], h[i], lineno + done + i);
		done += k;
	}
}

/* Appends s[0, n) to the pending raw sample, then a newline: the frame
 * lines as they were read (a whole sample's are copied at once:
 * perfscript_whole_samples). */
static void raw_put(struct perfscript *p, const char *s, size_t n)
{
	if (p->raw_len + n + 1 > p->raw_cap)
		p->raw = marple_grow(p->raw, &p->raw_cap, p->raw_len + n + 1, 1);
	memcpy(p->raw + p->raw_len, s, n);
	p->raw[p->raw_len + n] = '\n';
	p->raw_len += n + 1;
}

static void raw_start(struct perfscript *p, unsigned long lineno)
{
	p->raw_len = 0;
	p->raw_lineno = lineno;
	p->whole = NULL;
}

/* The pending frame lines. */
static const char *pending(const struct perfscript *p)
{
	return p->whole ? p->whole : p->raw;
}

/* The pending frame lines parsed, as they would have been one by one. */
static void parse_pending(struct perfscript *p)
{
	if (!p->raw_lines)
		return;
	frame_lines(p, pending(p), pending(p) + p->raw_len, p->raw_lines, p->raw_lineno);
	p->raw_lines = 0;
}

/* Another kind of line inside a sample: what is pending is parsed now, and
 * the sample is not memoized. */
static void drain(struct perfscript *p)
{
	if (!p->raw_lines)
		return;
	parse_pending(p);
	p->raw_mixed = 1;
}

/* A frame line of a sample with a process name: kept as it is until the
 * sample ends (lines numbered one after another, else parsed at once). */
static void pend_frame(struct perfscript *p, const char *s, size_t n, unsigned long lineno)
{
	if (p->raw_lines && lineno != p->raw_lineno + p->raw_lines)
		drain(p);
	if (!p->raw_lines)
		raw_start(p, lineno);
	raw_put(p, s, n);
	p->raw_lines++;
}

/* The memo of whole samples holds at most this much (raw and folded): a
 * capture whose samples are all different is then folded at the usual
 * speed without growing. */
#define STACKS_MEMO_BYTES (64u << 20)

/* The memo pays only when nearly every sample is one seen before: it is
 * tried on a window of samples, and left alone for the next RESTING ones
 * when fewer than seven in eight were hits (a busy machine's 20 s capture:
 * 41% and 74% hits, 10% slower with the memo than without). */
#define WINDOW 1024u
#define RESTING (15 * WINDOW)

/* Samples are memoized the second time they are seen (a slot of `seen`
 * holds the hash of the last one seen once, of a hit, of one memoized): of a
 * busy machine's capture (37,146 samples) 6,447 of 7,807 stacks come once,
 * and kept they cost more in memory and page faults than hits on the others
 * save. */
#define SEEN_SLOTS 8192

/* Keep the folded key of the pending raw sample (parsed without a bad line,
 * not in the memo). */
static void memo_sample(struct perfscript *p, uint64_t h, const char *key, size_t len)
{
	size_t n = hashtab_size(p->stacks);
	if (hashtab_bytes(p->stacks) + p->folded_len + len + p->notes_cap * sizeof(*p->notes) > STACKS_MEMO_BYTES)
		return;
	p->folded = marple_grow(p->folded, &p->folded_cap, p->folded_len + len, 1);
	memcpy(p->folded + p->folded_len, key, len);
	hashtab_add_hashed(p->stacks, h, pending(p), p->raw_len, p->folded_len, len | (uint64_t)p->pname_len << 32);
	p->folded_len += len;
	p->notes = marple_grow(p->notes, &p->notes_cap, n + 1, sizeof(*p->notes));
	p->notes[n] = 0;
	p->note = &p->notes[n];
}

/* The memo of whole samples' entry for the pending sample, if it has one
 * (the same frame lines of the same process: their key has the process
 * name first); *h its hash (the frame lines', the process name's mixed
 * in: no copy of the two together is made). */
static const struct hashtab_entry *memo_find(struct perfscript *p, uint64_t *h)
{
	uint64_t lines = p->whole ? p->whole_hash : hashtab_hash_line(pending(p), p->raw_len);
	*h = lines ^ (hashtab_hash(p->pname, p->pname_len) * 0x9e3779b97f4a7c15ull);
	if (p->seen[*h & (SEEN_SLOTS - 1)] != *h)
		return NULL;
	return hashtab_find_hashed(p->stacks, *h, pending(p), p->raw_len);
}

/* The pending sample's folded key, from the memo of whole samples when the
 * same process had the same frame lines before (no frame parsed), else from
 * its frames, parsed (and memoized the second time).  Returns its length. */
static size_t sample_key(struct perfscript *p, const char **key)
{
	uint64_t h = 0, *seen = NULL, bad = p->nbad;
	int memo = p->raw_lines && !p->raw_mixed;

	if (memo) {
		if (!p->stacks) {
			p->stacks = hashtab_new();
			p->seen = marple_calloc(SEEN_SLOTS, sizeof(*p->seen));
		}
		const struct hashtab_entry *e = memo_find(p, &h);
		seen = &p->seen[h & (SEEN_SLOTS - 1)];
		p->probes++;
		if (e && e->count[1] >> 32 == p->pname_len && memcmp(p->folded + e->count[0], p->pname, p->pname_len) == 0) {
			p->hits++;
			p->note = &p->notes[hashtab_index(p->stacks, e)];
			*key = p->folded + e->count[0];
			return e->count[1] & UINT32_MAX;
		}
		memo = !e;	/* another process's (hashes alike): not memoized */
	}
	parse_pending(p);
	size_t len = fold_key(p);
	*key = p->key;
	if (memo && p->nbad == bad && *seen == h)
		memo_sample(p, h, p->key, len);
	else if (memo)
		*seen = h;
	return len;
}

/* Count the pending sample. */
static void flush(struct perfscript *p)
{
	if (!p->have_pname)
		return;
	const char *key;
	size_t len = sample_key(p, &key);
	p->samples++;
	p->weighted += p->period_given;
	if (p->fn)
		p->fn(p->ctx, key, len, p->period);
	p->note = NULL;
	p->buf_len = 0;
	p->nunit = 0;
	p->have_pname = 0;
	p->raw_lines = 0;
	p->whole = NULL;
	p->raw_mixed = 0;
	if (p->resting)
		p->resting--;
	else if (p->probes >= WINDOW) {
		p->resting = p->hits * 8 < p->probes * 7 ? RESTING : 0;
		p->probes = p->hits = 0;
	}
}

void perfscript_line(struct perfscript *p, const char *s, size_t n, unsigned long lineno)
{
	if (n > 0 && s[n - 1] == '\r')
		n--;
	if (n == 0) {
		flush(p);
		return;
	}
	if (IS_WS(s[0]) && p->have_pname && !p->resting) {
		pend_frame(p, s, n, lineno);
		return;
	}
	drain(p);
	if (s[0] == '#')
		return;
	if (IS_WS(s[0])) {
		frame_or_bad(p, s, n, lineno);
		return;
	}
	size_t commlen, pidlen, tidlen;
	const char *pid, *tid;
	if (match_header(s, n, &commlen, &pid, &pidlen, &tid, &tidlen)) {
		header_line(p, s, n, commlen, pid, pidlen, tid, tidlen);
		return;
	}
	size_t pc0, pc1, f0, f1, m0, m1;
	if (match_frame(s, n, &pc0, &pc1, &f0, &f1, &m0, &m1)) {
		if (p->have_pname)
			frame_line(p, s, pc0, pc1, f0, f1, m0, m1);
		return;
	}
	bad_line(p, lineno, "not a sample header, stack frame, comment or blank line");
}

/* The frame lines of a sample at f[0, n), each starting with a blank (not
 * '\r') and not ending in "\r\n", through the last one's '\n' (a blank
 * line follows it); *frames says how many.  0 for anything else, or lines
 * not whole in f[0, n). */
static size_t frame_span_lines(const char *f, size_t n, size_t *frames)
{
	const char *e = f + n, *nl = f - 1;
	size_t k = 0;

	while (nl + 1 < e && nl[1] != '\n') {
		const char *line = nl + 1;
		if (!IS_WS(line[0]) || line[0] == '\r')
			return 0;
		nl = memchr(line, '\n', (size_t)(e - line));
		if (!nl || nl[-1] == '\r')
			return 0;
		k++;
	}
	if (nl + 1 >= e)
		return 0;
	*frames = k;
	return (size_t)(nl + 1 - f);
}

/* frame_span_lines, in the pass that hashes the lines (*hash: their
 * hashtab_hash_line): 16 bytes a step, each '\n' in them checked (a
 * repeated perf script's samples fold 9% faster than with memchr a line
 * and hashing after); the last bytes before n the slow way. */
static size_t frame_span(const char *f, size_t n, size_t *frames, uint64_t *hash)
{
	const unsigned char *p = (const unsigned char *)f;
	struct hashtab_line h = HASHTAB_LINE_START;
	size_t k = 0, i = 0, len;

	if (n == 0 || !IS_WS(p[0]) || p[0] == '\r' || p[0] == '\n')
		return 0;
	for (; i + 16 <= n; i += 16) {
		for (unsigned m = hashtab_line_nl(p + i); m; m &= m - 1) {
			size_t q = i + (size_t)__builtin_ctz(m);	/* q > 0: p[0] is no '\n' */
			k++;
			if (p[q - 1] == '\r' || q + 1 >= n)
				return 0;
			if (p[q + 1] == '\n') {	/* the blank line: the sample ends */
				*frames = k;
				len = q + 1;
				if (len - i == 16) {
					hashtab_line_block(&h, p + i);
					i += 16;
				}
				*hash = hashtab_line_end(&h, p + i, len - i, len);
				return len;
			}
			if (!IS_WS(p[q + 1]) || p[q + 1] == '\r')
				return 0;
		}
		hashtab_line_block(&h, p + i);
	}
	if ((len = frame_span_lines(f, n, frames)) > 0)
		*hash = hashtab_hash_line(f, len);
	return len;
}

/* frame_span's lines while the memo of whole samples rests (it needs no
 * hash of them all): each line hashed for the frame memo as its end is
 * found, kept in p->span (one pass, not one to find the lines and one to
 * hash them); the span's length, or 0. */
static size_t frame_span_each(struct perfscript *p, const char *f, size_t n, size_t *frames)
{
	size_t at = 0, k = 0, len;

	if (n == 0 || !IS_WS(f[0]) || f[0] == '\r' || f[0] == '\n')
		return 0;
	for (;;) {
		uint64_t h = hashtab_hash_to_nl(f + at, n - at, &len);
		if (len == SIZE_MAX)
			return 0;
		size_t q = at + len;	/* its '\n'; len > 0: a line starts with a blank */
		if (f[q - 1] == '\r' || q + 1 >= n || q >= UINT32_MAX)
			return 0;
		if (k == p->span_cap)
			p->span = marple_grow(p->span, &p->span_cap, k + 1, sizeof(*p->span));
		p->span[k++] = (struct span_line){ h, (uint32_t)at, (uint32_t)len };
		if (p->memo)
			__builtin_prefetch(&p->memo[h & (MEMO_SLOTS - 1)]);
		if (f[q + 1] == '\n') {	/* the blank line: the sample ends */
			*frames = k;
			return q + 1;
		}
		if (!IS_WS(f[q + 1]) || f[q + 1] == '\r')
			return 0;
		at = q + 1;
	}
}

/* The frame lines at f that frame_span_each kept, as frame_lines would
 * fold them. */
static void span_lines(struct perfscript *p, const char *f, size_t frames, unsigned long lineno)
{
	if (p->have_pname && !p->memo)
		p->memo = marple_calloc(MEMO_SLOTS, sizeof(*p->memo));
	for (size_t i = 0; i < frames; i++)
		frame_hashed(p, f + p->span[i].at, p->span[i].len, p->span[i].hash, lineno + i);
}

/* The bytes of the sample at s[0, n) through the blank line that ends it,
 * when it is the usual kind: a first line that may be a header (not blank,
 * no blank or '#' first; *head its length), then frame lines (frame_span's:
 * *frames of them, *hash theirs; while the memo rests, frame_span_each's
 * lines).  0 for anything else, or a sample not whole in s. */
static size_t whole_sample(struct perfscript *p, const char *s, size_t n, size_t *head, size_t *frames,
			   uint64_t *hash)
{
	if (n == 0 || IS_WS(s[0]) || s[0] == '#')
		return 0;
	const char *nl = memchr(s, '\n', n), *f;
	if (!nl || (f = nl + 1) >= s + n)
		return 0;
	*head = (size_t)(nl - s);
	*hash = 0;
	if (*f == '\n') {
		*frames = 0;
		return (size_t)(f + 1 - s);
	}
	size_t len = p->resting ? frame_span_each(p, f, (size_t)(s + n - f), frames)
				: frame_span(f, (size_t)(s + n - f), frames, hash);
	return len ? (size_t)(f + len + 1 - s) : 0;
}

/* One whole sample (whole_sample's) as its lines one by one would be
 * folded, its frame lines pended at once when they would be. */
static void fold_whole(struct perfscript *p, const char *s, size_t n, size_t head, size_t frames,
		       uint64_t hash, unsigned long lineno)
{
	const char *f = s + head + 1;
	perfscript_line(p, s, head, lineno);
	if (frames && p->have_pname && !p->resting) {
		raw_start(p, lineno + 1);
		p->whole = f;	/* not copied: folded at once (flush, below) */
		p->whole_hash = hash;
		p->raw_len = (size_t)(s + n - 1 - f);	/* through the last frame's newline */
		p->raw_lines = frames;
	} else if (p->resting)
		span_lines(p, f, frames, lineno + 1);	/* as perfscript_line would */
	else
		frame_lines(p, f, s + n, frames, lineno + 1);
	flush(p);	/* the blank line */
}

size_t perfscript_whole_samples(struct perfscript *p, const char *s, size_t n, unsigned long lineno,
				unsigned long *lines)
{
	size_t at = 0, len, head, frames;
	uint64_t hash;
	*lines = 0;
	/* only between samples: nothing pending that the next lines could add to */
	while (!p->have_pname && !p->raw_lines && !p->buf_len && !p->nunit &&
	       (len = whole_sample(p, s + at, n - at, &head, &frames, &hash)) > 0) {
		fold_whole(p, s + at, len, head, frames, hash, lineno + *lines);
		at += len;
		*lines += frames + 2;
	}
	return at;
}

void perfscript_finish(struct perfscript *p)
{
	flush(p);
}

uint64_t perfscript_parse_buffer(struct perfscript *p, const char *buf, size_t len)
{
	uint64_t before = p->samples;
	unsigned long lineno = 0;
	const char *s = buf, *e = buf + len;

	while (s < e) {
		const char *nl = memchr(s, '\n', (size_t)(e - s));
		const char *le = nl ? nl : e;
		perfscript_line(p, s, (size_t)(le - s), ++lineno);
		s = nl ? nl + 1 : e;
	}
	perfscript_finish(p);
	return p->samples - before;
}
