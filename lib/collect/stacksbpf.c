/* stacksbpf.c — the user side of bpf/stacks.bpf.h (see stacksbpf.h). */
#include "stacksbpf.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "counttable.h"
#include "hashtab.h"
#include "jitframes.h"
#include "procnewsring.h"
#include "stackdrain.h"
#include "timedsamples.h"
#include "util.h"

int stacksbpf_read_counters(int fd, uint64_t out[STACKS_NCOUNTERS])
{
	int ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		return -1;
	uint64_t *v = marple_calloc((size_t)ncpu, sizeof(uint64_t));
	int rc = 0;
	for (uint32_t i = 0; i < STACKS_NCOUNTERS; i++) {
		out[i] = 0;
		if (bpf_map_lookup_elem(fd, &i, v) != 0) {
			rc = -1;
			continue;
		}
		for (int c = 0; c < ncpu; c++)
			out[i] += v[c];
	}
	free(v);
	return rc;
}

/* Sum the per-CPU stage clock of obj into *out; 0 or -1 (out zeroed). */
static int read_stages(struct bpf_object *obj, struct stacks_stage_clock *out)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, "stacks_samples");
	int ncpu = libbpf_num_possible_cpus();
	uint32_t zero = 0;

	memset(out, 0, sizeof(*out));
	if (!m || ncpu <= 0)
		return -1;
	struct stacks_sample *v = marple_calloc((size_t)ncpu, sizeof(*v));
	int rc = bpf_map_lookup_elem(bpf_map__fd(m), &zero, v) == 0 ? 0 : -1;
	for (int c = 0; rc == 0 && c < ncpu; c++) {
		for (int i = 0; i < STACKS_NSTAGES; i++)
			out->ns[i] += v[c].clock.ns[i];
		out->timed += v[c].clock.timed;
		out->timed_counts += v[c].clock.timed_counts;
	}
	free(v);
	return rc;
}

void stacksbpf_stages_trailer_add(json_t *sampling, struct bpf_object *obj, struct stacks_stage_clock *before)
{
	static const char *const names[] = STACKS_STAGE_NAMES;
	struct stacks_stage_clock now_clock, *now = &now_clock;

	if (!sampling || read_stages(obj, now) < 0)
		return;
	uint64_t timed = now->timed - before->timed, counts = now->timed_counts - before->timed_counts;
	json_t *o = json_object();
	char key[64];

	json_object_set_new(o, "timed_samples", json_integer((json_int_t)timed));
	for (int i = 0; i < STACKS_NSTAGES; i++) {
		uint64_t n = i == STACKS_STAGE_COUNTS ? counts : timed, ns = now->ns[i] - before->ns[i];
		snprintf(key, sizeof(key), "%s_ns", names[i]);
		json_object_set_new(o, key, json_integer(n ? (json_int_t)((ns + n / 2) / n) : 0));
	}
	json_object_set_new(sampling, "stages", o);
	*before = *now;
}

/* One line on stderr when more than a tenth of the user stacks written (by
 * weight) do not reach a stack root: how many, where they end, the likely
 * reason and what helps, naming only options this collector takes.  Counted
 * on the stacks written, not on the walker's events (unwind.cut_* in the
 * trailer): offcpu's walker counted 27,934 of 66,453 events cut while 504 of
 * the 14,602 stacks it wrote were.
 * Not for a handful of events (a short or idle capture: a process caught
 * starting up is no sign of a broken unwind). */
#define STACKSBPF_WARN_MIN_EVENTS 20
static void warn_incomplete(const struct stackframes *sf, const struct stackframes_stats *st, uint64_t events)
{
	const char *mode = stackframes_unwind_mode(sf), *why;

	if (events < STACKSBPF_WARN_MIN_EVENTS || st->user_weight == 0 ||
	    st->incomplete_user_weight * 10 <= st->user_weight)
		return;
	char fp_why[256];
	snprintf(fp_why, sizeof(fp_why), "frame-pointer unwinding stops in code built without frame pointers "
		 "(most Debian packages are); unwinding from .eh_frame (%s) finds whole stacks",
		 stackframes_unwind_advice(sf));
	if (strcmp(mode, "fp") == 0)
		why = fp_why;
	else if (strcmp(mode, "dwarf") == 0)
		why = "code without unwind information (JIT, hand-written assembly), or stacks deeper "
		      "than the copy; debug info for the programs (their -dbgsym or -dbg packages, "
		      ".debug_frame) helps";
	else
		why = "code without unwind information (JIT, hand-written assembly); debug info for the "
		      "programs (their -dbgsym or -dbg packages, .debug_frame) helps";
	uint64_t at_named = st->incomplete_user_stacks - st->incomplete_at_marker - st->incomplete_at_unnamed;
	marple_warn("%.0f%% of the user stacks written (%" PRIu64 " of %" PRIu64 " distinct stacks) stop before "
		"_start, __libc_start_main or a thread start (unwinding: %s; %" PRIu64 " end at a marker frame, "
		"%" PRIu64 " at code no symbol names, %" PRIu64 " at a named function): %s",
		100.0 * (double)st->incomplete_user_weight / (double)st->user_weight, st->incomplete_user_stacks,
		st->user_stacks, mode, st->incomplete_at_marker, st->incomplete_at_unnamed, at_named, why);
}

/* A hint, as for node's and java's JIT code (jitframes.c), when a twentieth
 * of the user stacks' weight is in an interpreter whose frames are not
 * walked: the script's functions are missing, not merely unnamed. */
static void warn_unwalked(const struct stackframes_stats *st, uint64_t events)
{
	if (events < STACKSBPF_WARN_MIN_EVENTS || st->user_weight == 0)
		return;
	for (int i = 0; i < STACKFRAMES_NUNWALKED; i++)
		if (st->unwalked_weight[i] * 20 >= st->user_weight && st->unwalked_weight[i])
			marple_warn("%.0f%% of the user stacks' weight is in the %s interpreter (pid %d "
				    "and maybe others): marple does not walk %s's own frames yet, so the stacks show the "
				    "interpreter's C functions, not the script's",
				    100.0 * (double)st->unwalked_weight[i] / (double)st->user_weight,
				    stackframes_unwalked_names[i], st->unwalked_pid[i], stackframes_unwalked_names[i]);
}

uint64_t stacksbpf_not_counted(const uint64_t c[STACKS_NCOUNTERS])
{
	return c[STACKS_MAP_FULL] + c[STACKS_RINGBUF_FULL];
}

uint64_t stacksbpf_trailer_add(json_t *trailer, const uint64_t c[STACKS_NCOUNTERS], const struct stackframes *sf)
{
	static const char *const names[] = STACKS_COUNTER_NAMES;
	struct stackframes_stats st = { 0 };
	json_t *o = json_object();
	uint64_t not_counted = stacksbpf_not_counted(c);
	/* a sample whose stack found no room is counted, but under a frame that
	 * says so: dropped as the format has it (a failed stack), its weight kept */
	uint64_t dropped = not_counted + c[STACKS_LOST_SAMPLES];
	uint64_t bad = 0;

	for (int i = 0; i < STACKS_NCOUNTERS; i++) {
		json_object_set_new(o, names[i], json_integer((json_int_t)c[i]));
		if (i != STACKS_SAMPLES && i != STACKS_LOST_SAMPLES)
			bad += c[i];
	}
	if (sf) {
		stackframes_stats(sf, &st);
		json_object_set_new(o, "missing_user_stacks", json_integer((json_int_t)st.missing_user));
		json_object_set_new(o, "missing_kernel_stacks", json_integer((json_int_t)st.missing_kernel));
		json_object_set_new(o, "unknown_frames", json_integer((json_int_t)st.unknown_frames));
		json_object_set_new(o, "user_stacks", json_integer((json_int_t)st.user_stacks));
		json_object_set_new(o, "incomplete_user_stacks", json_integer((json_int_t)st.incomplete_user_stacks));
		json_object_set_new(o, "user_weight", json_integer((json_int_t)st.user_weight));
		json_object_set_new(o, "incomplete_user_weight", json_integer((json_int_t)st.incomplete_user_weight));
		json_object_set_new(o, "incomplete_at_marker", json_integer((json_int_t)st.incomplete_at_marker));
		json_object_set_new(o, "incomplete_at_unnamed", json_integer((json_int_t)st.incomplete_at_unnamed));
		warn_incomplete(sf, &st, c[STACKS_SAMPLES]);
		warn_unwalked(&st, c[STACKS_SAMPLES]);
		stackframes_trailer_add(sf, trailer);
	}
	json_object_set_new(trailer, "stack_errors", o);
	jitframes_trailer_add(trailer);
	if (bad || st.missing_user || st.missing_kernel) {
		marple_warn("of %" PRIu64 " samples: %" PRIu64 " not counted (map full %" PRIu64 ", ring buffer full %" PRIu64
			"), %" PRIu64 " under [lost: stack map full]; stacks lost: %" PRIu64 " (stack map full %" PRIu64
			", collisions %" PRIu64 ", read errors %" PRIu64 " user, %" PRIu64 " kernel)%s",
			c[STACKS_SAMPLES], not_counted, c[STACKS_MAP_FULL], c[STACKS_RINGBUF_FULL], c[STACKS_LOST_SAMPLES],
			c[STACKS_NOSPACE] + c[STACKS_COLLISION] + c[STACKS_USER_FAULT] + c[STACKS_KERN_FAULT],
			c[STACKS_NOSPACE], c[STACKS_COLLISION], c[STACKS_USER_FAULT], c[STACKS_KERN_FAULT],
			c[STACKS_MAP_FULL] + c[STACKS_NOSPACE] ? " (raise --stack-storage)" : "");
	}
	return dropped;
}

struct pidnotes {
	struct syms_cache *syms;
	int seen_fd;			/* pids_seen, or -1 */
};

static int on_pidnote(void *ctx, void *data, size_t len)
{
	struct pidnotes *pn = ctx;
	const struct pid_note *n = data;

	if (len < sizeof(*n))
		return 0;
	/* a snapshot that could not be shown to be of this image (sampled in
	 * the middle of an exec?) is asked for again at its next sample */
	if (syms_cache_snapshot_exec(pn->syms, (pid_t)n->pid, n->exec_id, (const uint64_t *)n->layout) > 0 &&
	    pn->seen_fd >= 0) {
		__u64 key = STACKS_SEEN_KEY(n->pid, n->exec_id);
		bpf_map_delete_elem(pn->seen_fd, &key);
	}
	return 0;
}

/* A file VMA the unwinder found (bpf/unwindtables.bpf.h): its frames named
 * from it where the process's maps, read before, say nothing. */
static int on_vmanote(void *ctx, void *data, size_t len)
{
	struct syms_cache *syms = ctx;
	const struct unwind_vma_note *n = data;

	if (len >= sizeof(*n))
		syms_cache_add_walked_vma(syms, (pid_t)n->tgid, n->exec_id, n->start, n->end, n->pgoff,
					  n->key.dev, n->key.ino);
	return 0;
}

struct procnewsring *stacksbpf_news_open(struct bpf_object *obj, struct syms_cache *syms, struct bpf_link **exec_link)
{
	static struct pidnotes pn[8];	/* a collector has one; never freed */
	static int npn;
	struct bpf_map *seen = bpf_object__find_map_by_name(obj, "pids_seen");
	struct bpf_program *exec = bpf_object__find_program_by_name(obj, "stacks_exec");
	struct procnewsring *news;

	*exec_link = NULL;
	if (!seen) {
		marple_warn("no pids_seen map in the BPF program");
		return NULL;
	}
	if (npn == 8) {
		marple_warn("too many process news readers");
		return NULL;
	}
	if (!(news = procnewsring_open(obj)))
		return NULL;
	if (exec && !(*exec_link = bpf_program__attach(exec)))
		marple_warn("cannot attach to sched_process_exec (%s): a process that execs and exits before "
			"its first sample is taken may be left unnamed", strerror(errno));
	pn[npn] = (struct pidnotes){ syms, bpf_map__fd(seen) };
	procnewsring_on(news, PROCNEWS_IMAGE, on_pidnote, &pn[npn++]);
	/* into the same cache as the images' snapshots, in their order */
	procnewsring_on(news, PROCNEWS_UNWIND_VMA, on_vmanote, syms);
	return news;
}

void stacksbpf_table_add(const struct stackdrain_entry *e, void *arg)
{
	const struct stacksbpf_table *w = arg;
	uint64_t v;

	memcpy(&v, e->value, sizeof(v));
	if (v) {
		stackframes_key_stacks(w->sf, e->key, e->user, e->kern);
		stackframes_collect(w->sf, w->t, v);
	}
}

/* One entry of a count table, its stack ids read from the kernel's store. */
static void collect_count(const void *key, const void *value, void *arg)
{
	const struct stacksbpf_table *w = arg;
	uint64_t v;

	memcpy(&v, value, sizeof(v));
	if (v) {
		stackframes_key(w->sf, key);
		stackframes_collect(w->sf, w->t, v);
	}
}

void stacksbpf_collect_counts(struct stackframes *sf, int fd, struct hashtab *t)
{
	struct stacksbpf_table w = { sf, t };
	struct counttable c;

	if (counttable_open(&c, fd, sizeof(struct stack_key), sizeof(uint64_t)) != 0) {
		marple_warn("cannot read the kernel's count table: %s", strerror(errno));
		return;
	}
	for (int s = 0; s < 2; s++)
		counttable_each(&c, s, 0, collect_count, &w);
	counttable_close(&c);
}

int stacksbpf_check_target(long long pid, long long tid)
{
	char p[64];

	if (pid > 0) {
		snprintf(p, sizeof(p), "/proc/%lld", pid);
		if (access(p, F_OK) < 0) {
			marple_warn("no process with PID %lld", pid);
			return -1;
		}
	}
	if (tid > 0) {
		snprintf(p, sizeof(p), "/proc/%lld/task/%lld", pid > 0 ? pid : tid, tid);
		if (access(p, F_OK) < 0) {
			marple_warn("no thread with TID %lld%s", tid, pid > 0 ? " in that process" : "");
			return -1;
		}
	}
	return 0;
}

static void consume(void *rb)
{
	ring_buffer__consume(rb);
}

void stacksbpf_drain_rings(struct stackdrain *d, struct ring_buffer *rb, struct timedsamples *ts)
{
	stackdrain_set_settled(d, consume, rb);
	if (ts)
		timedsamples_set_drain(ts, d);
}

uint32_t stacksbpf_storage_for(uint64_t events_per_s, uint64_t drain_ms)
{
	if (drain_ms == 0)	/* drained at the end only: everything must fit */
		return STACKSBPF_STORAGE_DEFAULT;
	uint64_t want = events_per_s * drain_ms / 1000 * 2;
	uint32_t n = STACKSBPF_STORAGE_MIN;
	while (n < want && n < STACKSBPF_STORAGE_DEFAULT)
		n *= 2;
	return n;
}

int stacksbpf_set_storage(struct bpf_object *obj, uint32_t n)
{
	if (n == 0)
		n = STACKSBPF_STORAGE_DEFAULT;
	struct bpf_map *s = bpf_object__find_map_by_name(obj, "stacks");
	struct bpf_map *i = bpf_object__find_map_by_name(obj, "stack_slots");

	/* two sets of n (stackdrain.h); a collector that does not drain uses one */
	if (!s || !i || bpf_map__set_max_entries(s, 2 * n) < 0 || bpf_map__set_max_entries(i, 2 * n) < 0)
		return -1;
	return 0;
}

int stacksbpf_set_counts_size(struct bpf_object *obj, uint32_t n)
{
	if (n == 0)
		n = STACKSBPF_STORAGE_DEFAULT;
	struct bpf_map *c = bpf_object__find_map_by_name(obj, "counts");

	/* a half a set (stackdrain.h) */
	if (!c || bpf_map__set_max_entries(c, 2 * n) < 0)
		return -1;
	return 0;
}
