/* timedsamples.c — --timed's user side (see timedsamples.h). */
#include "timedsamples.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfmap.h"
#include "hashtab.h"
#include "intern.h"
#include "stackdrain.h"
#include "stream.h"
#include "timedrec.h"
#include "util.h"

struct sample {
	uint64_t time, dur;
	uint32_t key;			/* id in keys */
	uint32_t tid, pid, cpu;
};

/* Samples held in memory before they go on to a file: a long section's
 * length is bounded by disk, not by this program's memory (32 bytes a
 * sample: 11 MB over 30 minutes at 99 Hz on 2 CPUs, when it stayed). */
#define TIMED_IN_MEMORY 8192

struct timedsamples {
	struct intern *keys;		/* struct stack_key bytes -> id */
	struct hashtab *stacks;		/* the records: frames (stackframes_collect) and weights */
	uint32_t *record_of_key;	/* by key id; UINT32_MAX: not in the count table */
	size_t nrecords_of_key;		/* its length */
	struct sample *s;		/* the newest, up to TIMED_IN_MEMORY */
	size_t n, cap;
	FILE *spill;			/* the section's others, as they came (tmpfile) */
	uint64_t nspilled;
	int spill_failed;		/* said once: then all stay in memory */
	int lost_fd;
	uint64_t lost_before;		/* timed_lost at the last section (--every) */
	struct stackdrain *drain;	/* timedsamples_set_drain */
};

void timedsamples_set_drain(struct timedsamples *ts, struct stackdrain *d)
{
	ts->drain = d;
}

int timedsamples_size(struct bpf_object *obj, uint64_t records_per_s)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, "timed_samples");
	/* a quarter second of records (the poll is every 20 ms), 8 bytes of header each */
	uint64_t want = records_per_s * (sizeof(struct timed_rec) + 8) / 4, size = 1u << 20;

	while (size < want && size < (1u << 30))
		size <<= 1;
	return m ? bpf_map__set_max_entries(m, (uint32_t)size) : -1;
}

/* The samples in memory onto the end of the spill file.  A file that cannot
 * be made or written (a full disk) is said once; the samples then stay in
 * memory, as they did before there was a file. */
static void spill_out(struct timedsamples *ts)
{
	if (!ts->spill && !(ts->spill = tmpfile())) {
		marple_warn("--timed: cannot make a temporary file for sample times: %s; they stay in memory",
			    strerror(errno));
		ts->spill_failed = 1;
		return;
	}
	if (fwrite(ts->s, sizeof(*ts->s), ts->n, ts->spill) != ts->n || fflush(ts->spill) != 0) {
		marple_warn("--timed: writing sample times to a temporary file: %s; they stay in memory",
			    strerror(errno));
		ts->spill_failed = 1;	/* the file's first nspilled samples stay good */
		return;
	}
	ts->nspilled += ts->n;
	ts->n = 0;
}

void timedsamples_add_keyed(struct timedsamples *ts, const void *key, size_t len, uint32_t pid, uint32_t tid,
			    uint32_t cpu, uint64_t time, uint64_t dur)
{
	if (ts->n >= TIMED_IN_MEMORY && !ts->spill_failed)
		spill_out(ts);
	ts->s = marple_grow(ts->s, &ts->cap, ts->n + 1, sizeof(*ts->s));
	ts->s[ts->n++] = (struct sample){ .time = time, .dur = dur, .tid = tid, .pid = pid, .cpu = cpu,
					  .key = intern_get(ts->keys, key, len) };
}

void timedsamples_add(struct timedsamples *ts, const struct stack_key *key, uint32_t tid, uint32_t cpu,
		      uint64_t time, uint64_t dur)
{
	struct stack_key k = *key;

	if (ts->drain)
		stackdrain_number_key(ts->drain, &k);
	timedsamples_add_keyed(ts, &k, sizeof(k), key->pid, tid, cpu, time, dur);
}

void timedsamples_name_key(struct timedsamples *ts, const void *key, size_t len, uint32_t rec)
{
	uint32_t k = intern_get(ts->keys, key, len);
	size_t old = ts->nrecords_of_key;

	if (k >= old) {
		ts->record_of_key = marple_grow(ts->record_of_key, &ts->nrecords_of_key, (size_t)k + 1,
						sizeof(*ts->record_of_key));
		for (size_t i = old; i < ts->nrecords_of_key; i++)
			ts->record_of_key[i] = UINT32_MAX;
	}
	ts->record_of_key[k] = rec;
}

static int on_timed(void *ctx, void *data, size_t len)
{
	const struct timed_rec *r = data;

	if (len >= sizeof(*r))
		timedsamples_add(ctx, &r->key, r->tid, r->cpu, r->time, r->dur);
	return 0;
}

struct timedsamples *timedsamples_new(struct bpf_object *obj, struct ring_buffer *rb)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, "timed_samples");
	struct bpf_map *lost = bpf_object__find_map_by_name(obj, "timed_lost");
	struct timedsamples *ts;

	if (!m || !lost) {
		marple_warn("no timed_samples map in the BPF program");
		return NULL;
	}
	ts = marple_calloc(1, sizeof(*ts));
	ts->keys = intern_new();
	ts->stacks = hashtab_new();
	ts->lost_fd = bpf_map__fd(lost);
	if (rb && ring_buffer__add(rb, bpf_map__fd(m), on_timed, ts) < 0) {
		marple_warn("cannot read the timed_samples ring buffer: %s", strerror(errno));
		timedsamples_free(ts);
		return NULL;
	}
	return ts;
}

void timedsamples_free(struct timedsamples *ts)
{
	if (!ts)
		return;
	intern_free(ts->keys);
	hashtab_free(ts->stacks);
	free(ts->record_of_key);
	free(ts->s);
	if (ts->spill)
		fclose(ts->spill);
	free(ts);
}

void timedsamples_mark(json_t *stack_hdr)
{
	json_object_set_new(stack_hdr, "timed", json_string("stacks"));
}

struct timedsamples_walk {
	struct timedsamples *ts;
	struct stackframes *sf;
	uint32_t *rec;			/* record of each key id, grown as keys come */
	size_t reccap;
};

/* record_of_key for at least n keys; a key not yet seen has no record */
static void grow_records(struct timedsamples_walk *w, size_t n)
{
	size_t old = w->reccap;
	w->rec = marple_grow(w->rec, &w->reccap, n, sizeof(*w->rec));
	for (size_t i = old; i < w->reccap; i++)
		w->rec[i] = UINT32_MAX;
}

void timedsamples_key(const struct stackdrain_entry *e, void *arg)
{
	struct timedsamples_walk *w = arg;
	uint64_t v;

	memcpy(&v, e->value, sizeof(v));
	if (!v)
		return;
	stackframes_key_stacks(w->sf, e->key, e->user, e->kern);
	uint32_t rec = (uint32_t)stackframes_collect(w->sf, w->ts->stacks, v);
	/* the samples' keys carry the same numbers for their stacks */
	uint32_t k = intern_get(w->ts->keys, e->key, sizeof(struct stack_key));
	grow_records(w, (size_t)k + 1);
	w->rec[k] = rec;
}

struct timedsamples_walk *timedsamples_walk_new(struct timedsamples *ts, struct stackframes *sf)
{
	struct timedsamples_walk *w = marple_calloc(1, sizeof(*w));

	w->ts = ts;
	w->sf = sf;
	return w;
}

uint64_t timedsamples_walk_write(struct timedsamples_walk *w, FILE *f)
{
	struct timedsamples *ts = w->ts;

	uint64_t records = stackframes_write_table(w->sf, ts->stacks, f);
	/* keys seen only in samples (not in the map: it was full) have no record */
	grow_records(w, intern_count(ts->keys) + 1);
	free(ts->record_of_key);
	ts->record_of_key = w->rec;
	ts->nrecords_of_key = w->reccap;
	w->rec = NULL;	/* the next section's records from none */
	w->reccap = 0;
	return records;
}

void timedsamples_walk_free(struct timedsamples_walk *w)
{
	if (w)
		free(w->rec);
	free(w);
}

/* The section's samples in one array (*n of them): those in memory, or,
 * when some went to the file, all read back into a new one, the file's
 * first.  Samples the file could not give back are counted in *unread. */
static struct sample *section_samples(struct timedsamples *ts, size_t *n, uint64_t *unread)
{
	*n = ts->n;
	*unread = 0;
	if (!ts->nspilled)
		return ts->s;
	struct sample *all = marple_malloc((ts->nspilled + ts->n) * sizeof(*all));
	size_t got = fseeko(ts->spill, 0, SEEK_SET) == 0 ? fread(all, sizeof(*all), ts->nspilled, ts->spill) : 0;
	if (got != ts->nspilled)
		marple_warn("--timed: reading sample times back from a temporary file: %s", strerror(errno));
	*unread = ts->nspilled - got;
	memcpy(all + got, ts->s, ts->n * sizeof(*all));
	*n = got + ts->n;
	return all;
}

/* The file's samples written: it starts again empty. */
static void spill_reset(struct timedsamples *ts)
{
	if (ts->spill && (ftruncate(fileno(ts->spill), 0) != 0 || fseeko(ts->spill, 0, SEEK_SET) != 0)) {
		fclose(ts->spill);	/* a new one when next needed */
		ts->spill = NULL;
	}
	ts->nspilled = 0;
}

void timedsamples_restart(struct timedsamples *ts)
{
	spill_reset(ts);
	intern_free(ts->keys);
	ts->keys = intern_new();
	hashtab_free(ts->stacks);
	ts->stacks = hashtab_new();
	free(ts->record_of_key);
	ts->record_of_key = NULL;
	ts->nrecords_of_key = 0;
	ts->n = 0;
}

static int by_time(const void *a, const void *b)
{
	const struct sample *x = a, *y = b;
	return x->time < y->time ? -1 : x->time > y->time;
}

static json_t *samples_header(json_t *stack_hdr)
{
	static const char *const copied[] = { "interface", "start_ns", "wall_ns", "clock", "host", "kernel", "options" };
	json_t *h = json_object();

	json_object_set_new(h, "marple", json_integer(MARPLE_FORMAT_VERSION));
	for (size_t i = 0; i < sizeof(copied) / sizeof(copied[0]); i++) {
		json_t *v = json_object_get(stack_hdr, copied[i]);
		if (v)
			json_object_set(h, copied[i], v);
		if (i == 0)
			json_object_set_new(h, "datatype", json_string("event"));
	}
	json_object_set_new(h, "timed", json_string("samples"));
	json_object_set_new(h, "units", json_pack("{s:s}", "time", "ns"));
	json_object_set_new(h, "track", json_string("cpu"));
	return h;
}

uint64_t timedsamples_write_section(struct timedsamples *ts, json_t *stack_hdr, const char *type,
				    const char *last_ended, uint64_t end_ns, FILE *f)
{
	uint64_t written = 0, unmatched = 0, unread, on_disk = ts->nspilled;
	json_t *h = samples_header(stack_hdr);
	const char *ended = end_ns ? "interval" : last_ended;
	size_t n;
	struct sample *all = section_samples(ts, &n, &unread);

	stream_write_json(f, h);
	json_decref(h);
	if (n)	/* qsort of no array: a null pointer, undefined */
		qsort(all, n, sizeof(*all), by_time);
	for (size_t i = 0; i < n; i++) {
		const struct sample *s = &all[i];
		uint32_t rec = s->key < ts->nrecords_of_key ? ts->record_of_key[s->key] : UINT32_MAX;
		if (rec == UINT32_MAX) {
			unmatched++;
			continue;
		}
		fprintf(f, "%llu,%s,", (unsigned long long)s->time, type);
		if (s->cpu == UINT32_MAX)
			putc('-', f);
		else
			fprintf(f, "cpu%u", s->cpu);
		fprintf(f, ",stack=%u,pid=%u,tid=%u", rec, s->pid, s->tid);
		if (s->dur)
			fprintf(f, ",dur=%llu", (unsigned long long)s->dur);
		putc('\n', f);
		written++;
	}
	if (all != ts->s)
		free(all);
	uint64_t all_lost = bpfmap_percpu_sum(ts->lost_fd, 0);
	uint64_t lost = (all_lost >= ts->lost_before ? all_lost - ts->lost_before : 0) + unread;
	ts->lost_before = all_lost;
	if (lost || unmatched)
		marple_warn("--timed: %llu sample times lost (ring buffer full, or not read back), %llu of stacks not counted",
			(unsigned long long)lost, (unsigned long long)unmatched);
	json_t *t = stream_section_trailer_new(written, lost, unmatched, ended);
	json_object_set_new(t, "samples_on_disk", json_integer((json_int_t)on_disk));
	if (end_ns)
		json_object_set_new(t, "end_ns", json_integer((json_int_t)end_ns));
	stream_write_json(f, t);
	json_decref(t);
	return written;
}
