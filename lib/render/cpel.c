/* cpel.c — marple event text -> CPEL (see cpel.h).  The record parser here is
 * a fast path of its own (the CPEL floor is millions of events per second);
 * it accepts exactly what marple-format(5) says about event records. */
#include "cpel.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "escape.h"
#include "intern.h"
#include "util.h"

#define STRTAB_NAME "FileStrtab"

struct ev {
	uint64_t time;
	uint32_t track, code, datum, seq;
};

struct run {
	off_t off;		/* in the spool file, in struct ev units */
	size_t n;
};

struct cpel_conv {
	struct cpel_opts o;
	const char *name;
	unsigned long line;
	unsigned long nul_line;	/* the current input's first line holding a NUL byte */
	char *pend;		/* partial line carried between feeds */
	size_t plen, pcap;
	int in_section;
	uint64_t sections, events, bad, seq;
	int sorted;
	uint64_t last_time;
	/* strings */
	struct intern *st;	/* the CPEL string table: every string, deduplicated */
	struct intern *tracks;	/* track label -> track id */
	uint32_t *track_label;	/* track id -> label offset in st */
	size_t ntracks, track_cap;
	/* event types: name offset in st; small, searched linearly from the last hit */
	uint32_t *type_off;
	char **type_name;
	size_t *type_len;
	size_t ntypes, type_cap, last_type;
	/* datum keys */
	char **dkeys;
	size_t *dklen;
	size_t ndkeys;
	char *scratch;		/* strtab_add's NUL replacement */
	size_t scap;
	char *proc;		/* "comm (pid)" of the current record */
	size_t proccap;
	uint32_t datum_s_off;	/* "%s" */
	/* runs */
	struct ev *chunk;
	size_t nchunk, chunk_cap;
	int chunk_sorted;
	FILE *spool;
	struct run *runs;
	size_t nruns, runs_cap;
	off_t spooled;
	int failed;
	int skipping;		/* inside an overlong line */
};

/* ---- messages ---- */

static void cmsg(struct cpel_conv *c, const char *fmt, const char *detail)
{
	if (c->o.quiet)
		return;
	char buf[512];
	snprintf(buf, sizeof(buf), fmt, detail);
	marple_warn_at(c->name, c->line, "%s", buf);
}

static int bad_line(struct cpel_conv *c, const char *why)
{
	c->bad++;
	if (c->bad <= 10)
		cmsg(c, "%s", why);
	return 0;
}

/* ---- string tables ---- */

/* Offset in the CPEL string table of s (NUL bytes inside become '?'). */
static uint32_t strtab_add(struct cpel_conv *c, const char *s, size_t n)
{
	if (memchr(s, 0, n)) {
		c->scratch = marple_grow(c->scratch, &c->scap, n + 1, 1);
		for (size_t i = 0; i < n; i++)
			c->scratch[i] = s[i] ? s[i] : '?';
		s = c->scratch;
	}
	return (uint32_t)intern_offset(c->st, intern_get(c->st, s, n));
}

/* A printf format showing s literally: '%' doubled. */
static uint32_t strtab_add_format(struct cpel_conv *c, const char *s, size_t n)
{
	if (!memchr(s, '%', n))
		return strtab_add(c, s, n);
	char *f = marple_malloc(2 * n + 1);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		f[k++] = s[i];
		if (s[i] == '%')
			f[k++] = '%';
	}
	uint32_t off = strtab_add(c, f, k);
	free(f);
	return off;
}

static uint32_t track_id(struct cpel_conv *c, const char *s, size_t n)
{
	uint32_t id = intern_get(c->tracks, s, n);
	if (id == c->ntracks) {	/* new: ids count up from 0 */
		c->track_label = marple_grow(c->track_label, &c->track_cap, c->ntracks + 1, sizeof(uint32_t));
		c->track_label[c->ntracks++] = strtab_add_format(c, s, n);
	}
	return id;
}

static uint32_t type_code(struct cpel_conv *c, const char *s, size_t n)
{
	if (c->last_type < c->ntypes && c->type_len[c->last_type] == n &&
	    memcmp(c->type_name[c->last_type], s, n) == 0)
		return (uint32_t)c->last_type;
	for (size_t i = 0; i < c->ntypes; i++)
		if (c->type_len[i] == n && memcmp(c->type_name[i], s, n) == 0)
			return (uint32_t)(c->last_type = i);
	size_t cap = c->type_cap;
	c->type_off = marple_grow(c->type_off, &cap, c->ntypes + 1, sizeof(*c->type_off));
	cap = c->type_cap;
	c->type_name = marple_grow(c->type_name, &cap, c->ntypes + 1, sizeof(*c->type_name));
	c->type_len = marple_grow(c->type_len, &c->type_cap, c->ntypes + 1, sizeof(*c->type_len));
	c->type_off[c->ntypes] = strtab_add_format(c, s, n);
	c->type_name[c->ntypes] = marple_strndup(s, n);
	c->type_len[c->ntypes] = n;
	return (uint32_t)(c->last_type = c->ntypes++);
}

/* ---- runs ---- */

static int ev_cmp(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static FILE *spool_open(void)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	snprintf(path, sizeof(path), "%s/marple-cpel.XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	unlink(path);
	return fdopen(fd, "w+");
}

static int flush_chunk(struct cpel_conv *c)
{
	if (!c->nchunk)
		return 0;
	if (!c->chunk_sorted)
		qsort(c->chunk, c->nchunk, sizeof(*c->chunk), ev_cmp);
	if (!c->spool && !(c->spool = spool_open())) {
		if (!c->o.quiet)
			marple_warn("cannot create a temporary file: %s", strerror(errno));
		return -1;
	}
	if (fwrite(c->chunk, sizeof(*c->chunk), c->nchunk, c->spool) != c->nchunk) {
		if (!c->o.quiet)
			marple_warn("cannot write the temporary file: %s", strerror(errno));
		return -1;
	}
	c->runs = marple_grow(c->runs, &c->runs_cap, c->nruns + 1, sizeof(*c->runs));
	c->runs[c->nruns++] = (struct run){ c->spooled, c->nchunk };
	c->spooled += (off_t)c->nchunk;
	c->nchunk = 0;
	c->chunk_sorted = 1;
	return 0;
}

static int add_event(struct cpel_conv *c, uint64_t time, uint32_t track, uint32_t code, uint32_t datum)
{
	if (c->events >= UINT32_MAX) {
		if (!c->o.quiet)
			marple_warn("more than %u events: CPEL counts them in 32 bits", UINT32_MAX);
		return -1;
	}
	if (c->nchunk == c->chunk_cap && flush_chunk(c) < 0)
		return -1;
	if (c->nchunk && time < c->chunk[c->nchunk - 1].time)
		c->chunk_sorted = 0;
	if (c->events && time < c->last_time)
		c->sorted = 0;
	c->last_time = time;
	c->chunk[c->nchunk++] = (struct ev){ time, track, code, datum, (uint32_t)c->seq++ };
	c->events++;
	return 0;
}

/* ---- parsing ---- */

static int header_line(struct cpel_conv *c, char *p, size_t n)
{
	json_error_t jerr;
	json_t *j = json_loadb(p, n, JSON_REJECT_DUPLICATES, &jerr);
	if (!j || !json_is_object(j)) {
		json_decref(j);
		return bad_line(c, "malformed JSON line");
	}
	if (json_object_get(j, "trailer")) {
		if (!c->in_section)
			bad_line(c, "trailer outside a section");
		c->in_section = 0;
		json_decref(j);
		return 0;
	}
	json_t *v = json_object_get(j, "marple");
	const char *dt = json_string_value(json_object_get(j, "datatype"));
	if (!json_is_integer(v) || json_integer_value(v) < 1 || !dt) {
		json_decref(j);
		return bad_line(c, "JSON line is neither a section header nor a trailer");
	}
	if (json_integer_value(v) > 1) {
		json_decref(j);
		cmsg(c, "%s", "stream format version is newer than this program knows");
		return -1;
	}
	if (strcmp(dt, "event") != 0) {
		cmsg(c, "section of datatype \"%s\": CPEL holds events only (select event sections with marple-cat -s)", dt);
		json_decref(j);
		return -1;
	}
	json_decref(j);
	c->in_section = 1;
	c->sections++;
	return 0;
}

/* Up to the next ',' (or end). */
static inline char *next_comma(char *p, char *e)
{
	char *q = memchr(p, ',', (size_t)(e - p));
	return q ? q : e;
}

/* An event record's fields of interest, decoded in place. */
struct event_fields {
	char *comm, *pid;
	long commlen, pidlen;
	char *dval[8];
	long dlen[8];
};

/* The record's key=value fields from q to e: comm, pid and the datum keys.
 * Returns 0, or -1 for a bad record (counted and said by bad_line). */
static int read_fields(struct cpel_conv *c, char *q, char *e, struct event_fields *f)
{
	memset(f, 0, sizeof(*f));
	while (q < e) {
		char *k = ++q;
		q = next_comma(q, e);
		char *eq = memchr(k, '=', (size_t)(q - k));
		if (!eq)
			return bad_line(c, "field without '='"), -1;
		size_t klen = (size_t)(eq - k);
		char *val = eq + 1;
		int is_comm = klen == 4 && memcmp(k, "comm", 4) == 0;
		int is_pid = klen == 3 && memcmp(k, "pid", 3) == 0;
		int dk = -1;
		for (size_t i = 0; i < c->ndkeys; i++)
			if (c->dklen[i] == klen && memcmp(c->dkeys[i], k, klen) == 0)
				dk = (int)i;
		if (!is_comm && !is_pid && dk < 0)
			continue;
		long vl = escape_decode_inplace(val, (size_t)(q - val), NULL);
		if (vl < 0)
			return bad_line(c, "bad %XX escape"), -1;
		if (is_comm) {
			f->comm = val;
			f->commlen = vl;
		} else if (is_pid) {
			f->pid = val;
			f->pidlen = vl;
		}
		if (dk >= 0) {
			f->dval[dk] = val;
			f->dlen[dk] = vl;
		}
	}
	return 0;
}

/* "comm (pid)" names the process: written into c->proc (sized for the datum
 * keys too), its length returned. */
static size_t process_name(struct cpel_conv *c, const struct event_fields *f)
{
	size_t need = (size_t)f->commlen + (size_t)f->pidlen + 4;
	for (size_t i = 0; i < c->ndkeys; i++)
		need += c->dklen[i] + (size_t)f->dlen[i] + 2;
	c->proc = marple_grow(c->proc, &c->proccap, need + 1, 1);
	char *proc = c->proc;
	size_t plen = 0;
	if (f->comm) {
		memcpy(proc, f->comm, (size_t)f->commlen);
		plen = (size_t)f->commlen;
	}
	if (f->pid) {
		if (f->comm)
			proc[plen++] = ' ';
		proc[plen++] = '(';
		memcpy(proc + plen, f->pid, (size_t)f->pidlen);
		plen += (size_t)f->pidlen;
		proc[plen++] = ')';
	}
	return plen;
}

/* The datum keys' "key=value ..." written into c->proc; its length. */
static size_t datum_keys(struct cpel_conv *c, const struct event_fields *f)
{
	char *proc = c->proc;
	size_t dl = 0;
	for (size_t i = 0; i < c->ndkeys; i++) {
		if (!f->dval[i])
			continue;
		if (dl)
			proc[dl++] = ' ';
		memcpy(proc + dl, c->dkeys[i], c->dklen[i]);
		dl += c->dklen[i];
		proc[dl++] = '=';
		memcpy(proc + dl, f->dval[i], (size_t)f->dlen[i]);
		dl += (size_t)f->dlen[i];
	}
	return dl;
}

static int record_line(struct cpel_conv *c, char *p, char *e)
{
	uint64_t t = 0;
	char *q = p;

	if (!c->in_section)
		return bad_line(c, "record before any section header");
	while (q < e && *q >= '0' && *q <= '9') {
		uint64_t d = (uint64_t)(*q - '0');
		if (t > (UINT64_MAX - d) / 10)
			return bad_line(c, "event time out of range");
		t = t * 10 + d;
		q++;
	}
	if (q == p || q == e || *q != ',')
		return bad_line(c, "event record without a time");
	char *type = ++q;
	q = next_comma(q, e);
	if (q == e || q == type)
		return bad_line(c, "event record without a type and track");
	long typelen = escape_decode_inplace(type, (size_t)(q - type), NULL);
	char *track = ++q;
	q = next_comma(q, e);
	long tracklen = escape_decode_inplace(track, (size_t)(q - track), NULL);
	if (typelen < 0 || tracklen < 0)
		return bad_line(c, "bad %XX escape");

	struct event_fields f;
	if (read_fields(c, q, e, &f) < 0)
		return 0;	/* a bad record is skipped, counted */
	size_t plen = process_name(c, &f);
	uint32_t trk, datum;
	if (c->o.track == CPEL_TRACK_PID)
		trk = plen ? track_id(c, c->proc, plen) : track_id(c, "(no process)", 12);
	else
		trk = track_id(c, track, (size_t)tracklen);
	if (c->ndkeys)
		datum = strtab_add(c, c->proc, datum_keys(c, &f));
	else if (c->o.track == CPEL_TRACK_PID)
		datum = strtab_add(c, track, (size_t)tracklen);
	else
		datum = strtab_add(c, c->proc, plen);
	if (add_event(c, t, trk, type_code(c, type, (size_t)typelen), datum) < 0)
		return -1;
	return 0;
}

static int do_line(struct cpel_conv *c, char *p, size_t n)
{
	c->line++;
	if (n && p[n - 1] == '\r')
		n--;
	if (!n)
		return 0;
	if (memchr(p, 0, n)) {
		if (!c->nul_line)
			c->nul_line = c->line;
		return bad_line(c, "line holds a NUL byte");
	}
	if (*p == '{')
		return header_line(c, p, n);
	return record_line(c, p, p + n);
}

/* ---- public ---- */

struct cpel_conv *cpel_conv_new(const struct cpel_opts *o)
{
	struct cpel_conv *c = marple_calloc(1, sizeof(*c));
	c->o = *o;
	c->name = o->name ? o->name : "<stdin>";
	c->sorted = 1;
	c->chunk_sorted = 1;
	c->chunk_cap = o->run_events ? o->run_events : (1u << 20);
	c->chunk = marple_malloc(c->chunk_cap * sizeof(*c->chunk));
	c->st = intern_new();
	c->tracks = intern_new();
	strtab_add(c, STRTAB_NAME, sizeof(STRTAB_NAME) - 1);
	c->datum_s_off = strtab_add(c, "%s", 2);
	if (o->datum && *o->datum) {
		char *copy = marple_strdup(o->datum), *save = NULL;
		for (char *k = strtok_r(copy, ",", &save); k && c->ndkeys < 8; k = strtok_r(NULL, ",", &save)) {
			c->dkeys = realloc(c->dkeys, (c->ndkeys + 1) * sizeof(char *));
			c->dklen = realloc(c->dklen, (c->ndkeys + 1) * sizeof(size_t));
			if (!c->dkeys || !c->dklen)
				marple_fatal(EXIT_DATA, "out of memory");
			c->dkeys[c->ndkeys] = marple_strdup(k);
			c->dklen[c->ndkeys++] = strlen(k);
		}
		free(copy);
	}
	return c;
}

void cpel_conv_set_name(struct cpel_conv *c, const char *name)
{
	c->name = name;
	c->line = 0;
	c->nul_line = 0;
}

void cpel_conv_free(struct cpel_conv *c)
{
	if (!c)
		return;
	free(c->pend);
	intern_free(c->st);
	intern_free(c->tracks);
	free(c->track_label);
	for (size_t i = 0; i < c->ntypes; i++)
		free(c->type_name[i]);
	free(c->type_name);
	free(c->type_off);
	free(c->type_len);
	for (size_t i = 0; i < c->ndkeys; i++)
		free(c->dkeys[i]);
	free(c->dkeys);
	free(c->dklen);
	free(c->scratch);
	free(c->proc);
	free(c->chunk);
	free(c->runs);
	if (c->spool)
		fclose(c->spool);
	free(c);
}

int cpel_conv_feed(struct cpel_conv *c, char *buf, size_t len)
{
	char *p = buf, *e = buf + len;

	if (c->failed)
		return -1;
	if (c->skipping) {
		char *nl = memchr(p, '\n', len);
		if (!nl)
			return 0;
		c->skipping = 0;
		p = nl + 1;
	}
	if (c->plen) {
		char *nl = memchr(p, '\n', (size_t)(e - p));
		size_t take = nl ? (size_t)(nl - p) : (size_t)(e - p);
		if (c->plen + take > (64u << 20)) {
			c->plen = 0;
			c->line++;
			bad_line(c, "line longer than 64 MiB");
			if (!nl) {
				c->skipping = 1;	/* drop the rest of it */
				return 0;
			}
			p = nl + 1;
		} else {
			c->pend = marple_grow(c->pend, &c->pcap, c->plen + take + 1, 1);
			memcpy(c->pend + c->plen, p, take);
			c->plen += take;
			if (!nl)
				return 0;
			if (do_line(c, c->pend, c->plen) < 0)
				return c->failed = -1;
			c->plen = 0;
			p = nl + 1;
		}
	}
	/* Records are parsed in place, so work on a private copy of each block. */
	while (p < e) {
		char *nl = memchr(p, '\n', (size_t)(e - p));
		if (!nl) {
			size_t take = (size_t)(e - p);
			c->pend = marple_grow(c->pend, &c->pcap, take + 1, 1);
			memcpy(c->pend, p, take);
			c->plen = take;
			break;
		}
		if (do_line(c, p, (size_t)(nl - p)) < 0)
			return c->failed = -1;
		p = nl + 1;
	}
	return 0;
}

int cpel_conv_finish(struct cpel_conv *c)
{
	if (c->failed)
		return -1;
	if (c->plen) {
		int r = do_line(c, c->pend, c->plen);
		c->plen = 0;
		if (r < 0)
			return c->failed = -1;
	}
	return 0;
}

int cpel_conv_feed_file(struct cpel_conv *c, FILE *f)
{
	size_t cap = 1 << 20;
	char *buf = marple_malloc(cap);
	size_t n;
	int r = 0;
	while ((n = fread(buf, 1, cap, f)) > 0)
		if ((r = cpel_conv_feed(c, buf, n)) < 0)
			break;
	if (r == 0 && ferror(f)) {
		if (!c->o.quiet)
			marple_warn_at(c->name, 0, "read error: %s", strerror(errno));
		r = -1;
	}
	free(buf);
	if (r == 0)
		r = cpel_conv_finish(c);
	return r;
}

uint64_t cpel_conv_events(const struct cpel_conv *c) { return c->events; }
uint64_t cpel_conv_bad_lines(const struct cpel_conv *c) { return c->bad; }
uint64_t cpel_conv_sections(const struct cpel_conv *c) { return c->sections; }
unsigned long cpel_conv_nul_line(const struct cpel_conv *c) { return c->nul_line; }

/* ---- writing ---- */

struct bew {
	FILE *f;
	int err;
};

static void be32(struct bew *w, uint32_t v)
{
	unsigned char b[4] = { (unsigned char)(v >> 24), (unsigned char)(v >> 16), (unsigned char)(v >> 8),
			       (unsigned char)v };
	if (fwrite(b, 1, 4, w->f) != 4)
		w->err = 1;
}

static void name64(struct bew *w)
{
	char n[64] = STRTAB_NAME;
	if (fwrite(n, 1, 64, w->f) != 64)
		w->err = 1;
}

/* Natural order of track labels: "cpu2" before "cpu10". */
static int natural_cmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
			const char *x = a, *y = b;
			while (*x == '0')
				x++;
			while (*y == '0')
				y++;
			size_t lx = strspn(x, "0123456789"), ly = strspn(y, "0123456789");
			if (lx != ly)
				return lx < ly ? -1 : 1;
			int d = strncmp(x, y, lx);
			if (d)
				return d;
			a = x + lx;
			b = y + ly;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	return *a ? 1 : *b ? -1 : 0;
}

static const char *sort_strtab;
static int track_order_cmp(const void *x, const void *y)
{
	uint32_t a = ((const uint32_t *)x)[1], b = ((const uint32_t *)y)[1];
	int d = natural_cmp(sort_strtab + a, sort_strtab + b);
	return d ? d : (((const uint32_t *)x)[0] > ((const uint32_t *)y)[0]) - (((const uint32_t *)x)[0] < ((const uint32_t *)y)[0]);
}

static const uint32_t *track_remap;

static inline void put_ev(unsigned char *b, const struct ev *e)
{
	uint32_t v[5] = { (uint32_t)(e->time >> 32), (uint32_t)e->time, track_remap[e->track], e->code, e->datum };
	for (int i = 0; i < 5; i++) {
		b[4 * i] = (unsigned char)(v[i] >> 24);
		b[4 * i + 1] = (unsigned char)(v[i] >> 16);
		b[4 * i + 2] = (unsigned char)(v[i] >> 8);
		b[4 * i + 3] = (unsigned char)v[i];
	}
}

/* A reader of one spilled run. */
struct cursor {
	struct ev *buf;
	size_t pos, n, left;
	off_t off;
};

static int cursor_fill(struct cpel_conv *c, struct cursor *k, size_t cap)
{
	size_t want = k->left < cap ? k->left : cap;
	k->pos = 0;
	k->n = 0;
	if (!want)
		return 0;
	if (pread(fileno(c->spool), k->buf, want * sizeof(struct ev), k->off * (off_t)sizeof(struct ev)) !=
	    (ssize_t)(want * sizeof(struct ev)))
		return -1;
	k->n = want;
	k->left -= want;
	k->off += (off_t)want;
	return 0;
}

/* The event records' output buffer: whole records, written in big blocks. */
struct evout {
	struct bew *w;
	size_t len;
	unsigned char buf[20 * 4096];
};

static void evout_put(struct evout *o, const struct ev *e)
{
	put_ev(o->buf + o->len, e);
	o->len += 20;
	if (o->len == sizeof(o->buf)) {
		if (fwrite(o->buf, 1, o->len, o->w->f) != o->len)
			o->w->err = 1;
		o->len = 0;
	}
}

static void evout_flush(struct evout *o)
{
	if (o->len && fwrite(o->buf, 1, o->len, o->w->f) != o->len)
		o->w->err = 1;
	o->len = 0;
}

/* The file header (version 1, big-endian, 4 sections, the date) and the
 * string table, padded to 8 bytes. */
static void write_head_strtab(struct bew *w, const char *strtab, size_t stlen)
{
	uint32_t strtab_len = (uint32_t)((stlen + 7) & ~(size_t)7);
	unsigned char fh[8] = { 0x01, 0, 0, 4 };
	uint32_t now = (uint32_t)time(NULL);
	fh[4] = (unsigned char)(now >> 24);
	fh[5] = (unsigned char)(now >> 16);
	fh[6] = (unsigned char)(now >> 8);
	fh[7] = (unsigned char)now;
	if (fwrite(fh, 1, 8, w->f) != 8)
		w->err = 1;

	be32(w, 1);		/* STRTAB */
	be32(w, strtab_len);
	static const char zeros[8];
	if (fwrite(strtab, 1, stlen, w->f) != stlen ||
	    fwrite(zeros, 1, strtab_len - stlen, w->f) != strtab_len - stlen)
		w->err = 1;
}

static void write_evtdef(struct cpel_conv *c, struct bew *w)
{
	be32(w, 3);		/* EVTDEF */
	be32(w, 64 + 4 + (uint32_t)c->ntypes * 12);
	name64(w);
	be32(w, (uint32_t)c->ntypes);
	for (size_t i = 0; i < c->ntypes; i++) {
		be32(w, (uint32_t)i);
		be32(w, c->type_off[i]);
		be32(w, c->datum_s_off);
	}
}

/* The track section, track ids in the natural order of their labels (G2
 * lists them so); returns the map from our track numbers to those ids. */
static uint32_t *write_trackdef(struct cpel_conv *c, struct bew *w, const char *strtab)
{
	be32(w, 4);		/* TRACKDEF */
	be32(w, 64 + 4 + (uint32_t)c->ntracks * 8);
	name64(w);
	be32(w, (uint32_t)c->ntracks);
	uint32_t *order = marple_malloc((c->ntracks + 1) * 2 * sizeof(uint32_t));
	uint32_t *remap = marple_malloc((c->ntracks + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < c->ntracks; i++) {
		order[2 * i] = (uint32_t)i;
		order[2 * i + 1] = c->track_label[i];
	}
	sort_strtab = strtab;
	qsort(order, c->ntracks, 2 * sizeof(uint32_t), track_order_cmp);
	for (size_t i = 0; i < c->ntracks; i++) {
		remap[order[2 * i]] = (uint32_t)i;
		be32(w, (uint32_t)i);
		be32(w, order[2 * i + 1]);
	}
	free(order);
	return remap;
}

/* The spilled runs merged back in time order: a k-way merge by linear scan of
 * the run heads (runs are few: one per million events).  Sets w->err to 2
 * when the temporary file cannot be read back. */
static void emit_spilled(struct cpel_conv *c, struct evout *o)
{
	struct bew *w = o->w;
	size_t cap = c->sorted ? (1u << 16) : (1u << 12);
	size_t nk = c->sorted ? 1 : c->nruns;
	struct cursor *k = marple_calloc(nk, sizeof(*k));
	for (size_t i = 0; i < nk; i++) {
		k[i].buf = marple_malloc(cap * sizeof(struct ev));
		k[i].off = c->sorted ? 0 : c->runs[i].off;
		k[i].left = c->sorted ? (size_t)c->spooled : c->runs[i].n;
		if (cursor_fill(c, &k[i], cap) < 0)
			w->err = 2;
	}
	for (;;) {
		struct cursor *best = NULL;
		for (size_t i = 0; i < nk; i++) {
			if (k[i].pos == k[i].n)
				continue;
			if (!best || ev_cmp(&k[i].buf[k[i].pos], &best->buf[best->pos]) < 0)
				best = &k[i];
		}
		if (!best)
			break;
		evout_put(o, &best->buf[best->pos]);
		if (++best->pos == best->n && cursor_fill(c, best, cap) < 0)
			w->err = 2;
		if (w->err)
			break;
	}
	for (size_t i = 0; i < nk; i++)
		free(k[i].buf);
	free(k);
}

/* The event section: in memory when everything fitted, else merged from the
 * temporary file.  Returns -1 when the spilled runs could not be flushed. */
static int write_events(struct cpel_conv *c, struct bew *w, uint64_t nev, uint64_t evlen)
{
	be32(w, 5);		/* EVENT */
	be32(w, (uint32_t)evlen);
	name64(w);
	be32(w, (uint32_t)nev);
	be32(w, 1000000000u);

	struct evout *o = marple_malloc(sizeof(*o));
	o->w = w;
	o->len = 0;
	int r = 0;
	if (!c->nruns) {
		if (!c->chunk_sorted)
			qsort(c->chunk, c->nchunk, sizeof(*c->chunk), ev_cmp);
		for (size_t i = 0; i < c->nchunk; i++)
			evout_put(o, &c->chunk[i]);
	} else if (flush_chunk(c) < 0) {
		r = -1;
	} else {
		fflush(c->spool);
		emit_spilled(c, o);
	}
	evout_flush(o);
	free(o);
	return r;
}

int cpel_conv_write(struct cpel_conv *c, FILE *out)
{
	struct bew w = { out, 0 };
	uint64_t nev = c->events, evlen = 64 + 8 + c->events * 20;

	if (c->failed)
		return -1;
	if (evlen > UINT32_MAX) {
		if (!c->o.quiet)
			marple_warn("%llu events make an event section longer than CPEL's 32-bit length",
				(unsigned long long)nev);
		return -1;
	}
	size_t stlen;
	const char *strtab = intern_arena(c->st, &stlen);
	write_head_strtab(&w, strtab, stlen);
	write_evtdef(c, &w);
	uint32_t *remap = write_trackdef(c, &w, strtab);
	track_remap = remap;
	int r = write_events(c, &w, nev, evlen);
	free(remap);
	track_remap = NULL;
	if (r < 0)
		return -1;
	if (w.err == 2) {
		if (!c->o.quiet)
			marple_warn("cannot read back the temporary file: %s", strerror(errno));
		return -1;
	}
	return w.err ? -1 : 0;	/* write errors are reported by the caller's close */
}

int cpel_convert_buffer(const char *buf, size_t len, const struct cpel_opts *o, FILE *out)
{
	struct cpel_conv *c = cpel_conv_new(o);
	char *copy = marple_malloc(len + 1);
	memcpy(copy, buf, len);
	int r = cpel_conv_feed(c, copy, len);
	free(copy);
	if (r == 0)
		r = cpel_conv_finish(c);
	if (r == 0 && cpel_conv_events(c) == 0)
		r = -1;
	if (r == 0)
		r = cpel_conv_write(c, out);
	cpel_conv_free(c);
	return r;
}
