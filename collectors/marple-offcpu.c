/* marple-offcpu — off-CPU time by stack: how long threads spent blocked (or
 * waiting for a CPU), and where they were when they left it.
 *
 * At each sched_switch the thread leaving the CPU is stamped with the time
 * and its user and kernel stacks; when it is switched back in, the time it
 * was away is added (in microseconds) to that stack, in a kernel hash map.
 * --both adds on-CPU samples (cpu-clock) worth 1e6/HZ us each to the same
 * map, so one profile answers "where does the time go, waiting included".
 * --runq (and --both) keeps apart the time a thread was runnable but waiting
 * for a CPU (from its preemption or its sched_wakeup to its switch-in), by
 * the stack it was preempted or woken in: a section of its own, "cpu":"runq".
 * --wakers: each block carries the stacks of the thread (or interrupt) that
 * woke it, taken at sched_waking in the waker's context, written as one
 * stack: blocked frames root first, "--", the waker's frames leaf first, its
 * name ("[interrupt]" for an interrupt) last, as off-wake flame graphs draw.
 * --dwarf: user threads' registers and top of stack are copied when they
 * leave the CPU and unwound here (lib/collect/unwinddwarf.h) when they come back,
 * for code built without frame pointers.
 * Writes one stack section, weights in microseconds; --timed adds a samples
 * section with when each block began and how long it was.
 *
 *   $ marple-offcpu -p 4242 10
 *   {"marple":1,"interface":"offcpu","datatype":"stack",...,"units":{"weight":"us","measure":"off_cpu",...}}
 *   9998121#sleeper;_start;main;wait_here;clock_nanosleep;...;schedule
 *   {"trailer":1,...}
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <search.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfmap.h"
#include "collector.h"
#include "corebtf.h"
#include "counttable.h"
#include "cpuclock.h"
#include "unwinddwarf.h"
#include "offcpu.h"
#include "offcpu.skel.h"
#include "selffilter.h"
#include "stackcollector.h"
#include "hashtab.h"
#include "stackdrain.h"
#include "stackframes.h"
#include "stacksbpf.h"
#include "stream.h"
#include "syms.h"
#include "timedsamples.h"
#include "unwindtables.h"
#include "util.h"
#include "weight.h"

static struct {
	bool both, dwarf, timed, user_threads, runq, wakers, second_hop;
	uint64_t min_block_us, freq;
	uint32_t state_mask;
	const char *state;
} opt = { .min_block_us = 1, .freq = 99 };

enum { OPT_STATE = 256, OPT_BOTH, OPT_TIMED, OPT_RUNQ, OPT_WAKERS, OPT_SECOND_HOP };

static struct stackcollector sc = {
	.synopsis = "[options] [DURATION]",
	.about = "Off-CPU time by stack (sched_switch), written as a marple stack section in us.\n",
	.footer = "See marple-offcpu(1).\n",
};

static const struct sc_option options[] = {
	SC_PID("only this process"),
	SC_CHILDREN,
	SC_COMMAND("start CMD, trace it and the processes it starts\nuntil it exits (its output goes to stderr)"),
	SC_TID("only this thread"),
	SC_USER_ONLY,
	SC_KERNEL_ONLY,
	SC_DELIMIT,
	SC_ANNOTATE,
	{ 0, 'u', "user-threads-only", NULL, "user threads only: kernel threads (kworker, ksoftirqd,\n"
	  "rcu_*...) are not traced (bcc offcputime -u)" },
	{ 0, 'm', "min-block", "US", "ignore blocks shorter than US microseconds (default 1)" },
	{ 0, OPT_STATE, "state", "STATES", "only threads leaving the CPU in these states: letters\n"
	  "R (preempted), S (sleeping), D (disk/uninterruptible),\nT (stopped), t (traced), P (parked); e.g. SD" },
	{ 0, OPT_BOTH, "both", NULL, "add on-CPU samples (cpu-clock, -F HZ) in the same unit" },
	{ 0, 'F', "frequency", "HZ", "on-CPU sampling rate for --both (default 99)" },
	{ 0, OPT_RUNQ, "runq", NULL, "run-queue time (runnable, waiting for a CPU) in a section\n"
	  "of its own, not in off-CPU time (--both does this too)" },
	{ 0, OPT_WAKERS, "wakers", NULL, "each block (of at least --min-block) with the stacks of\n"
	  "who woke it: blocked frames;--;waker frames leaf first;waker" },
	{ 0, OPT_SECOND_HOP, "second-hop", NULL, "--wakers, and who woke the waker (a traced thread):\n"
	  "...;waker;--;its waker's frames leaf first;its name" },
	SC_UNWIND(",\ndwarf (16 KB copied at every switch-out: ~10 us a switch)"),
	SC_NO_PYTHON,
	SC_NO_INLINE,
	SC_DWARF,
	{ 0, OPT_TIMED, "timed", NULL, "keep when each block began and how long it was (a timed\n"
	  "stack section: marple-fold --from/--to, marple-flamescope)" },
	SC_STACK_STORAGE,
	SC_DRAIN_EVERY,
	SC_EVERY,
	SC_NO_DEMANGLE,
	SC_INCLUDE_SELF,
	SC_VERBOSE,
	SC_DESCRIBE("kind=collector\tsections=offcpu:stack:flamegraph\tevery=yes"
		"\tmeasures=off-CPU time: where threads blocked, how long (microseconds)"),
	SC_HELP,
	{ 0 },
};

static uint32_t parse_state(const char *s)
{
	static const char letters[] = "RSDTtXZP";
	uint32_t m = 0;

	if (!*s)
		marple_usage_error("--state needs at least one of the letters RSDTtP");
	for (; *s; s++) {
		const char *p = strchr(letters, *s);
		/* X and Z hold the bit positions of EXIT_DEAD and EXIT_ZOMBIE: those are
		 * exit states, never a state a thread blocks in, so never counted */
		if (!p || *s == 'X' || *s == 'Z')
			marple_usage_error("--state: unknown state '%c' (use the letters RSDTtP)", *s);
		m |= 1u << (p - letters);
	}
	return m;
}

static void own_option(int key, const char *arg)
{
	switch (key) {
	case 'm': opt.min_block_us = marple_opt_u64("--min-block", arg, 0, UINT64_MAX / 1000); break;
	case OPT_STATE: opt.state = arg; opt.state_mask = parse_state(arg); break;
	case OPT_BOTH: opt.both = true; break;
	case 'F': opt.freq = marple_opt_u64("-F", arg, 1, 100000); break;
	case OPT_TIMED: opt.timed = true; break;
	case 'u': opt.user_threads = true; break;
	case OPT_RUNQ: opt.runq = true; break;
	case OPT_WAKERS: opt.wakers = true; break;
	case OPT_SECOND_HOP: opt.wakers = opt.second_hop = true; break;
	}
}

static struct timedsamples *timed;	/* --timed */
static int split_cpu;			/* --both, --runq: on-CPU samples, run-queue time in sections of their own */

/* --dwarf's ring buffer: ~1900 stack copies; user space is woken when a
 * quarter of it is unread, and reads it every 20 ms anyway. */
#define RINGBUF_BYTES (32u << 20)
/* --wakers' ring buffer: ~95,000 blocks (88 bytes each), read every 20 ms */
#define WAKERS_RINGBUF_BYTES (8u << 20)

/* The kernel stack memo (bpf/offcpu.bpf.c) needs the kernel's text and
 * do_syscall_64's: found by find_ktext, or the memo stays off ("off: why"). */
static const char *kstack_memo_setup(struct offcpu_bpf *skel)
{
	LIBBPF_OPTS(bpf_test_run_opts, run);
	const char *slash;
	uint64_t size;

	if (sc.user_only || opt.dwarf)
		return "off: no kernel stacks walked at switch-outs";
	if (!skel->bss || bpf_prog_test_run_opts(bpf_program__fd(skel->progs.find_ktext), &run) != 0)
		return "off: cannot run find_ktext";
	if (!skel->bss->ktext_lo || !(slash = strchr(skel->bss->syscall_span, '/')) ||
	    sscanf(slash + 1, "%" SCNx64, &size) != 1 || size == 0 || size > 65536)
		return "off: no do_syscall_64 in this kernel's symbols";
	skel->bss->syscall_hi = skel->bss->syscall_lo + size;
	return "on";
}

/* The memo's counts in the trailer (the section's own with --every). */
static void kstack_memo_trailer_add(json_t *tr, struct offcpu_bpf *skel, const char *state)
{
	static const char *const names[KSTACK_N] = { "hits", "misses", "checked", "wrong", "no_fingerprint" };
	static uint64_t before[KSTACK_N];
	json_t *o = json_pack("{s:s}", "state", state);

	for (uint32_t i = 0; i < KSTACK_N; i++) {
		uint64_t v = bpfmap_percpu_sum(bpf_map__fd(skel->maps.kstack_counts), i);
		json_object_set_new(o, names[i], json_integer((json_int_t)(v - before[i])));
		before[i] = v;
	}
	json_object_set_new(tr, "kernel_stack_memo", o);
}

/* Open, configure and load; tp_btf first, raw_tp where it cannot load. */
static struct offcpu_bpf *load(const char **how)
{
	for (int raw = 0; raw < 2; raw++) {
		struct offcpu_bpf *skel = offcpu_bpf__open_opts(corebtf_opts(offcpu_bpf__elf_bytes));
		int err;
		if (!skel)
			marple_fatal(EXIT_DATA, "cannot open the BPF program: %s", strerror(errno));
		skel->rodata->targ_pid = (uint32_t)sc.pid;
		skel->rodata->targ_tid = (uint32_t)sc.tid;
		skel->rodata->want_user = !sc.kernel_only;
		skel->rodata->want_kernel = !sc.user_only;
		skel->rodata->state_mask = opt.state_mask;
		skel->rodata->min_block_ns = opt.min_block_us * 1000;
		skel->rodata->sample_us = 1000000 / opt.freq;
		skel->rodata->dwarf_mode = opt.dwarf;
		skel->rodata->user_threads_only = opt.user_threads;
		skel->rodata->runq_mode = opt.runq;
		skel->rodata->wakers_mode = opt.wakers;
		skel->rodata->second_hop = opt.second_hop;
		skel->rodata->timed_mode = opt.timed;
		if (opt.timed)	/* a busy machine switches ~100,000 times a second */
			timedsamples_size(skel->obj, 200000);
		uint32_t ring = opt.dwarf ? RINGBUF_BYTES : opt.wakers ? WAKERS_RINGBUF_BYTES : 4096;
		skel->rodata->wakeup_bytes = ring / 4;
		bpf_map__set_max_entries(skel->maps.events, ring);
		uint32_t storage = sc.stack_storage ? (uint32_t)sc.stack_storage : STACKSBPF_STORAGE_EVENTS;
		stacksbpf_set_counts_size(skel->obj, storage);
		stacksbpf_set_storage(skel->obj, storage);
		skel->rodata->stacks_unwind = (uint32_t)sc.unwind;
		skel->rodata->stacks_python = stackcollector_python_wanted(&sc);
		if (stackcollector_unwind_size(&sc, skel->obj) < 0)
			exit(EXIT_DATA);
		bpf_program__set_autoload(raw ? skel->progs.switch_btf : skel->progs.switch_raw, false);
		bpf_program__set_autoload(skel->progs.wakeup_btf, opt.runq && !raw);
		bpf_program__set_autoload(skel->progs.wakeup_raw, opt.runq && raw);
		bpf_program__set_autoload(skel->progs.waking_btf, opt.wakers && !raw);
		bpf_program__set_autoload(skel->progs.waking_raw, opt.wakers && raw);
		bpf_program__set_autoload(skel->progs.on_cpu_sample, opt.both);
		if ((err = offcpu_bpf__load(skel)) == 0) {
			*how = raw ? "raw_tp" : "tp_btf";
			return skel;
		}
		offcpu_bpf__destroy(skel);
		if (raw)
			marple_fatal(EXIT_DATA, "cannot load the BPF program on sched_switch: %s", collector_strerror(err));
	}
	return NULL;
}

/* --dwarf: the last copy of each thread off the CPU (a tsearch tree of
 * struct dwarf_sample, cut after its user.len bytes of stack), waiting for its
 * REC_WAKE. */
static struct {
	struct unwinddwarf *d;
	void *pending;
	uint64_t copies, wakes, short_blocks, on_cpu, unmatched_copies, unmatched_wakes, npending;
	uint64_t counts_lost;	/* kernel threads' last blocks with no room in the count table */
} dw;

static int by_tid(const void *a, const void *b)
{
	uint32_t x = ((const struct dwarf_sample *)a)->tid, y = ((const struct dwarf_sample *)b)->tid;
	return x < y ? -1 : x > y;
}

/* Take the pending copy of tid out of the tree (NULL: none). */
static struct dwarf_sample *take_pending(uint32_t tid)
{
	struct dwarf_sample k = { .tid = tid };
	struct dwarf_sample **p = tfind(&k, &dw.pending, by_tid), *s;

	if (!p)
		return NULL;
	s = *p;
	tdelete(s, &dw.pending, by_tid);
	dw.npending--;
	return s;
}

/* A block of s's thread that lasted delta ns: its time, unless under --min-block. */
static void add_block(struct dwarf_sample *s, uint64_t delta)
{
	if (delta < opt.min_block_us * 1000)
		dw.short_blocks++;
	else if (unwinddwarf_add(dw.d, s, delta / 1000) < 0)
		exit(EXIT_DATA);
	free(s);
}

/* Is this kernel frame where an interrupt entered (hard: its entry code;
 * soft: the softirq loop, in irq_exit, ksoftirqd or local_bh_enable)? */
static bool interrupt_entry(const char *f)
{
	static const char *const prefixes[] = { "asm_sysvec_", "asm_common_interrupt", "fred_extint", "fred_sysvec_",
						"handle_softirqs", "__do_softirq" };

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(*prefixes); i++)
		if (strncmp(f, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return false;
}

static uint64_t wakers_interrupt;	/* --wakers: blocks ended by an interrupt */
static uint64_t wakers_second_hop;	/* --second-hop: blocks with their waker's waker */
static uint64_t wakers_named;		/* --wakers: (blocked, waker) pairs named */

/* If k's kernel stack is an interrupt's, its frames for the top of an
 * off-wake stack, into tail[*m...]: leaf first down to where it entered,
 * then "[interrupt]": the task it interrupted did not wake anyone, and its
 * user stack (any process's, often one that ran for a moment: naming it
 * loads that program's symbols) is not named.  Whether it was. */
static bool interrupt_frames(const struct stack_key *k, char **tail, size_t *m)
{
	size_t n, entry = 0;	/* (fr[0], the name, is never an entry) */
	const char *const *fr;

	stackframes_begin(sc.sf, k->comm);
	stackframes_kernel_id(sc.sf, k->kern_stack_id);
	fr = stackframes_frames(sc.sf, &n);
	for (size_t i = n; i-- > 1;)	/* the innermost entry (root first: from the end) */
		if (interrupt_entry(fr[i])) {
			entry = i;
			break;
		}
	if (!entry)
		return false;
	for (size_t i = n; i-- > entry;)
		tail[(*m)++] = marple_strdup(fr[i]);
	tail[(*m)++] = marple_strdup("[interrupt]");
	return true;
}

/* The waker's frames for the top of an off-wake stack, into tail[*m...]:
 * leaf first, then its name; from an interrupt, interrupt_frames'.  -U:
 * the kernel frames, read only to tell interrupts, left out.  Whether it
 * was an interrupt. */
static bool waker_frames(const struct stack_key *k, char **tail, size_t *m)
{
	size_t n, user_end;
	const char *const *fr;

	if (interrupt_frames(k, tail, m))
		return true;
	stackframes_begin(sc.sf, k->comm);
	stackframes_user_id_exec(sc.sf, (pid_t)k->pid, k->exec_id, k->user_stack_id);
	stackframes_frames(sc.sf, &user_end);
	stackframes_kernel_id(sc.sf, k->kern_stack_id);
	fr = stackframes_frames(sc.sf, &n);
	for (size_t i = sc.user_only ? user_end : n; i-- > 1;)	/* fr[0] is the waker's name */
		tail[(*m)++] = marple_strdup(fr[i]);
	tail[(*m)++] = marple_strdup(n ? fr[0] : "[unknown]");
	return false;
}

/* --wakers: blocks (how many) of rec->off_us in all with the same waker, as
 * one stack of the off-CPU table: the blocked frames, "--", the waker's
 * (waker_frames), and (--second-hop) "--" and the waker's waker's: not when
 * an interrupt woke it (the task it interrupted woke nobody). */
static void add_waker(const struct waker_record *rec, uint64_t blocks, struct hashtab *t)
{
	static char **tail;
	static size_t cap_tail;
	size_t n, m = 0;

	tail = marple_grow(tail, &cap_tail, 4 + 4 * MARPLE_STACK_DEPTH + 16, sizeof(*tail));
	tail[m++] = marple_strdup("--");
	wakers_named++;
	if (waker_frames(&rec->waker, tail, &m)) {
		wakers_interrupt += blocks;
	} else if (rec->waker_flags & WAKER2_SEEN) {
		wakers_second_hop += blocks;
		tail[m++] = marple_strdup("--");
		waker_frames(&rec->waker2, tail, &m);
	}
	stackframes_key(sc.sf, &rec->blocked);
	stackframes_frames(sc.sf, &n);
	stackframes_user_splice(sc.sf, n, (const char *const *)tail, m);
	stackframes_collect(sc.sf, t, rec->off_us);
	for (size_t i = 0; i < m; i++)
		free(tail[i]);
}

/* --wakers: the blocks read since the last naming, summed by what their
 * record says but the time: count[0] their off_us, count[1] how many.
 * Named one per pair (wakers_name), not one per block: at ~37 us a
 * block, 20,000 blocks a second fell behind the ring buffer. */
static struct hashtab *wakers_pending;

static void wakers_sum(const struct waker_record *rec)
{
	struct waker_record k = *rec;

	k.off_us = 0;
	k.waker_flags &= WAKER2_SEEN;	/* (the others: how it was seen) */
	if (!(k.waker_flags & WAKER2_SEEN))	/* (not written: what the CPU's scratch held) */
		memset(&k.waker2, 0, sizeof(k.waker2));
	if (!wakers_pending)
		wakers_pending = hashtab_new();
	hashtab_add(wakers_pending, &k, sizeof(k), rec->off_us, 1);
}

/* Name each pair summed so far into t.  Before the drain clears the stacks
 * their ids name (stackdrain's settled), and at the end. */
static void wakers_name(struct hashtab *t)
{
	struct waker_record rec;

	for (size_t i = 0; wakers_pending && i < hashtab_size(wakers_pending); i++) {
		const struct hashtab_entry *e = hashtab_at(wakers_pending, i);
		memcpy(&rec, e->key, sizeof(rec));	/* (the table packs its keys) */
		rec.off_us = e->count[0];
		add_waker(&rec, e->count[1], t);
	}
	hashtab_free(wakers_pending);
	wakers_pending = NULL;
}

/* stackdrain's settled: the records read, then named, before the set
 * their stacks may be in is cleared */
static void wakers_settled(void *arg)
{
	ring_buffer__consume(sc.notes);
	wakers_name(((struct stacksbpf_table *)arg)->t);
}

static int on_event(void *ctx, void *data, size_t len)
{
	const struct dwarf_sample *e = data;
	const struct wake_record *w = data;

	if (len >= offsetof(struct dwarf_sample, user.data) && e->type == REC_OFF &&
	    len >= offsetof(struct dwarf_sample, user.data) + e->user.len) {
		size_t n = offsetof(struct dwarf_sample, user.data) + e->user.len;
		struct dwarf_sample *s = take_pending(e->tid);
		/* its REC_WAKE was lost, or the kernel never reported the
		 * thread back before its next switch-out (rare) */
		if (s)
			dw.unmatched_copies++;
		free(s);
		s = marple_malloc(n);
		memcpy(s, e, n);
		if (!tsearch(s, &dw.pending, by_tid))
			marple_fatal(EXIT_DATA, "out of memory");
		dw.npending++;
		dw.copies++;
	} else if (len >= sizeof(*w) && w->type == REC_WAKE) {
		struct dwarf_sample *s = take_pending(w->tid);
		dw.wakes++;
		if (s && s->time == w->off_ts) {
			add_block(s, w->delta_ns);
		} else {
			dw.unmatched_wakes++;
			dw.unmatched_copies += s != NULL;
			free(s);
		}
	} else if (len >= sizeof(struct waker_record) && w->type == REC_WAKER) {
		wakers_sum(data);
	} else if (len >= sizeof(*e) && e->type == REC_ONCPU) {
		dw.on_cpu++;
		if (unwinddwarf_add(dw.d, e, 1000000 / opt.freq) < 0)
			exit(EXIT_DATA);
	}
	return 0;
}

struct still_blocked {
	struct counttable *counts;	/* without a drain (--dwarf) */
	uint64_t now;
};

/* The stacks of the threads off the CPU now are still named by their start
 * entries: kept when their set is cleared. */
static void pin_one_blocked(const void *key, const void *value, void *arg)
{
	struct start s;

	(void)key;
	memcpy(&s, value, sizeof(s));
	if (!s.dwarf) {
		stackdrain_pin(arg, s.key.user_stack_id);
		stackdrain_pin(arg, s.key.kern_stack_id);
	}
	if (!s.dwarf && (s.waker_flags & WAKER_SEEN)) {
		stackdrain_pin(arg, s.waker.user_stack_id);
		stackdrain_pin(arg, s.waker.kern_stack_id);
	}
	if (!s.dwarf && (s.waker_flags & WAKER2_SEEN)) {
		stackdrain_pin(arg, s.waker2.user_stack_id);
		stackdrain_pin(arg, s.waker2.kern_stack_id);
	}
}

/* --second-hop: the wakers kept for the blocks their threads will end */
static void pin_one_waker(const void *key, const void *value, void *arg)
{
	struct stack_key k;

	(void)key;
	memcpy(&k, value, sizeof(k));
	stackdrain_pin(arg, k.user_stack_id);
	stackdrain_pin(arg, k.kern_stack_id);
}

static void pin_blocked(struct stackdrain *d, void *skel)
{
	bpfmap_each(bpf_map__fd(((struct offcpu_bpf *)skel)->maps.start), sizeof(uint32_t), sizeof(struct start),
		    pin_one_blocked, d);
	if (opt.second_hop)
		bpfmap_each(bpf_map__fd(((struct offcpu_bpf *)skel)->maps.woken_by), sizeof(uint32_t),
			    sizeof(struct stack_key), pin_one_waker, d);
}

/* us more microseconds of key: in the drain if the counts were drained
 * already, or in the count table (--dwarf: no drain). */
static void add_time(const struct still_blocked *sb, const struct stack_key *key, uint64_t us)
{
	if (!us)
		return;
	if (sc.drain)
		stackdrain_add(sc.drain, key, &us);
	else if (!sb->counts || counttable_add(sb->counts, 0, key, &us) != 0)	/* set 0: never flipped */
		dw.counts_lost++;
}

/* One thread still off the CPU at the end (an element of the start map):
 * blocked until it was runnable (runq_mode), waiting for a CPU since. */
static void add_one_blocked(const void *key, const void *value, void *arg)
{
	const struct still_blocked *sb = arg;
	uint32_t tid;
	struct start s;
	uint64_t now = sb->now, runnable;

	memcpy(&tid, key, sizeof(tid));
	memcpy(&s, value, sizeof(s));
	if (s.dwarf) {
		struct dwarf_sample *p = take_pending(tid);
		if (p && p->time == s.ts && now > s.ts) {
			add_block(p, now - s.ts);
			return;
		}
		if (p && p->time != s.ts)	/* not this block's copy */
			dw.unmatched_copies++;
		free(p);	/* (or it left after the end: no time) */
		return;
	}
	if (now < s.ts || now - s.ts < opt.min_block_us * 1000)
		return;
	runnable = s.runnable_ts && s.runnable_ts < now ? (s.runnable_ts > s.ts ? s.runnable_ts : s.ts) : now;
	struct stack_key runq = s.key;
	runq.exec_id |= STACK_EXEC_ID_RUNQ;
	add_time(sb, &s.key, (runnable - s.ts) / 1000);
	add_time(sb, &runq, (now - runnable) / 1000);
	if (timed)
		timedsamples_add(timed, &s.key, tid, UINT32_MAX, s.ts, now - s.ts);
}

/* Threads still off the CPU at the end count up to the end (now). */
static void add_still_blocked(struct offcpu_bpf *skel, uint64_t now)
{
	struct counttable counts;
	struct still_blocked sb = { NULL, now };

	if (!sc.drain) {
		if (counttable_open(&counts, bpf_map__fd(skel->maps.counts), sizeof(struct stack_key), sizeof(uint64_t)) == 0)
			sb.counts = &counts;
		else
			marple_warn("cannot add the threads still off the CPU to the count table: %s", strerror(errno));
	}

	bpfmap_each(bpf_map__fd(skel->maps.start), sizeof(uint32_t), sizeof(struct start), add_one_blocked, &sb);
	dw.unmatched_copies += dw.npending;	/* their REC_WAKE was lost */
	if (sb.counts)
		counttable_close(sb.counts);
}

/* --dwarf's counts in the trailer, and on stderr when copies went unmatched. */
static void dwarf_trailer_add(json_t *tr)
{
	json_object_set_new(tr, "dwarf", json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "copies", (json_int_t)dw.copies,
						   "wakes", (json_int_t)dw.wakes, "short", (json_int_t)dw.short_blocks,
						   "on_cpu", (json_int_t)dw.on_cpu, "unmatched_copies",
						   (json_int_t)dw.unmatched_copies, "unmatched_wakes",
						   (json_int_t)dw.unmatched_wakes, "counts_lost", (json_int_t)dw.counts_lost));
	unwinddwarf_trailer_add(dw.d, tr, sc.verbose);
	if (dw.counts_lost)
		marple_warn("--dwarf: %llu blocks still under way at the end found no room in the count table",
			    (unsigned long long)dw.counts_lost);
	if (dw.unmatched_copies || dw.unmatched_wakes)
		marple_warn("--dwarf: %llu stack copies never matched by a switch-in, %llu switch-ins without a copy "
			"(see the trailer's \"dwarf\" and \"ringbuf_full\")",
			(unsigned long long)dw.unmatched_copies, (unsigned long long)dw.unmatched_wakes);
}

/* --wakers' counts in the trailer (the section's own with --every), and on
 * stderr at the end when blocks went without their waker. */
static void wakers_trailer_add(json_t *tr, struct offcpu_bpf *skel, int last)
{
	static const char *const names[WAKERS_N] = { "with_waker", "waker_unseen", "waker_lost", "waker_early" };
	static uint64_t interrupt_before;
	static uint64_t before[WAKERS_N];
	json_t *o = json_object();

	for (uint32_t i = 0; i < WAKERS_N; i++) {
		uint64_t v = bpfmap_percpu_sum(bpf_map__fd(skel->maps.wakers), i);
		json_object_set_new(o, names[i], json_integer((json_int_t)(v - before[i])));
		if (!last)
			before[i] = v;
		else if ((i == WAKERS_UNSEEN || i == WAKERS_LOST) && v)
			marple_warn("--wakers: %" PRIu64 " blocks counted without their waker (%s)", v,
				    i == WAKERS_LOST ? "the ring buffer was full" : "no sched_waking seen for them");
	}
	json_object_set_new(o, "interrupt", json_integer((json_int_t)(wakers_interrupt - interrupt_before)));
	interrupt_before = wakers_interrupt;
	if (opt.second_hop) {
		static uint64_t second_before;
		json_object_set_new(o, "second_hop", json_integer((json_int_t)(wakers_second_hop - second_before)));
		second_before = wakers_second_hop;
	}
	static uint64_t named_before;
	json_object_set_new(o, "pairs_named", json_integer((json_int_t)(wakers_named - named_before)));
	named_before = wakers_named;
	json_object_set_new(tr, "wakers", o);
}

/* What the sections are made of (the capture's state, past main's setup). */
static struct {
	struct offcpu_bpf *skel;
	struct bpf_link *link, *wake_link, *waking_link;
	struct cpuclock *cc;
	struct stacksbpf_table table;
	struct timedsamples_walk *timed_walk;
	json_t *hdr;
	uint64_t end;
	const char *kstack_memo;	/* "on", or "off: why" */
} cap;

/* The end of the capture: switches are no longer seen. */
static void stop_tracing(void *arg)
{
	(void)arg;
	cap.end = marple_now_monotonic_ns();
	cpuclock_detach(cap.cc);
	cap.cc = NULL;
	bpf_link__destroy(cap.link);
	cap.link = NULL;
	bpf_link__destroy(cap.wake_link);
	cap.wake_link = NULL;
	bpf_link__destroy(cap.waking_link);
	cap.waking_link = NULL;
	bpf_link__destroy(sc.exec_link);
	sc.exec_link = NULL;
	ring_buffer__consume(sc.notes);
}

/* --both's on-CPU samples (category 1), --runq's run-queue time (2): a
 * section of their own after the off-CPU one, its header's "cpu" saying which. */
static int write_part(const char *cpu, int category, const char *note)
{
	json_object_set_new(cap.hdr, "cpu", json_string(cpu));
	int rc = stream_write_json(stdout, cap.hdr);
	json_object_set_new(cap.hdr, "cpu", json_string("off"));
	uint64_t records = stackframes_write_table_cpu(sc.sf, cap.table.t, stdout, category);
	json_t *tr = stream_section_trailer_new(records, 0, 0, collector_end_reason());
	json_object_set_new(tr, "note", json_string(note));
	stackframes_trailer_add(sc.sf, tr);
	if (rc == 0)
		rc = stream_write_json(stdout, tr);
	json_decref(tr);
	return rc;
}

/* One section: at every --every interval (tracing goes on: a block is counted in
 * the section it ends in) and at the end (the threads still off the CPU
 * count up to it). */
static int write_section(void *arg, int last)
{
	uint64_t records, counters[STACKS_NCOUNTERS] = { 0 };
	struct offcpu_bpf *skel = cap.skel;

	(void)arg;
	if (sc.interval) {
		stackcollector_stamp_header(&sc, cap.hdr);
		if (stream_write_json(stdout, cap.hdr) < 0)
			return -1;
	}
	if (sc.drain)
		stackdrain_finish(sc.drain);
	if (last)
		add_still_blocked(skel, cap.end);
	if (sc.drain)
		stackdrain_emit(sc.drain);

	if (opt.dwarf)
		records = unwinddwarf_write(dw.d, sc.sf, bpf_map__fd(skel->maps.counts), stdout);
	else if (timed)
		records = timedsamples_walk_write(cap.timed_walk, stdout);
	else
		records = stackframes_write_table_cpu(sc.sf, cap.table.t, stdout, split_cpu ? 0 : -1);
	stackcollector_counters(&sc, skel->obj, counters);
	json_t *tr = stackcollector_section_trailer(&sc, records, stackcollector_ended(&sc), last);
	uint64_t dropped = stacksbpf_trailer_add(tr, counters, sc.sf) + dw.unmatched_wakes;
	json_object_set_new(tr, "dropped", json_integer((json_int_t)dropped));
	/* the section's own (--every), the whole capture's in the warning */
	static uint64_t unpaired_before;
	uint64_t unpaired = bpfmap_percpu_sum(bpf_map__fd(skel->maps.unpaired), 0);
	json_object_set_new(tr, "unpaired_switch_outs", json_integer((json_int_t)(unpaired - unpaired_before)));
	unpaired_before = unpaired;
	stackcollector_self_excluded(&sc, skel->obj, tr);
	/* a normal event (every capture of the demo had some): the trailer
	 * counts it; a stderr line made every cron capture send mail */
	if (opt.dwarf)
		dwarf_trailer_add(tr);
	if (opt.wakers)
		wakers_trailer_add(tr, skel, last);
	kstack_memo_trailer_add(tr, skel, cap.kstack_memo);
	/* where the programs' time goes, for the cost of a switch */
	static struct stacks_stage_clock stages_before;
	if (!opt.dwarf)
		stacksbpf_stages_trailer_add(tr, skel->obj, &stages_before);
	if (sc.unwindtab)
		stackcollector_unwind_trailer(&sc, tr);
	stackdrain_trailer_add(sc.drain, tr);
	int rc = stackcollector_write_trailer(&sc, tr);
	if (split_cpu && opt.both && rc == 0)
		rc = write_part("on", 1, "the on-CPU samples of the off-CPU section before; its trailer counts for them");
	if (split_cpu && opt.runq && rc == 0)
		rc = write_part("runq", 2, "the run-queue time of the off-CPU section before; its trailer counts for it");
	if (!last && cap.table.t) {
		hashtab_free(cap.table.t);
		cap.table.t = hashtab_new();
	}
	if (last && timed)
		timedsamples_write_section(timed, cap.hdr, "block", collector_end_reason(), 0, stdout);
	/* a section is whole on its way out: the supervisor cuts files by them */
	if (rc == 0 && fflush(stdout) != 0)
		rc = -1;
	return rc;
}

/* The section's header: what was traced and how, its unit. */
static json_t *section_header(const char *how)
{
	json_t *hdr = stream_section_header_new("offcpu", DATATYPE_STACK);
	json_t *o = json_object();
	json_object_set_new(o, "min_block_us", json_integer((json_int_t)opt.min_block_us));
	if (opt.state)
		json_object_set_new(o, "state", json_string(opt.state));
	stackcollector_target_options(&sc, o);
	json_object_set_new(o, "on_cpu", json_boolean(opt.both));
	json_object_set_new(o, "user_threads_only", json_boolean(opt.user_threads));
	json_object_set_new(o, "runq", json_boolean(opt.runq));
	json_object_set_new(o, "wakers", json_boolean(opt.wakers));
	if (opt.second_hop)
		json_object_set_new(o, "second_hop", json_true());
	if (opt.both)
		json_object_set_new(o, "frequency", json_integer((json_int_t)opt.freq));
	json_object_set_new(o, "tracepoint", json_string(how));
	if (sc.interval)
		json_object_set_new(o, "interval_ns", json_integer((json_int_t)sc.interval));
	json_object_set_new(hdr, "options", o);
	weight_meaning_set(hdr, "us", "off_cpu", 0);
	return hdr;
}

/* Attach what the options ask for (raw: the raw_tp programs were loaded). */
static void attach(struct offcpu_bpf *skel, bool raw)
{
	cap.link = bpf_program__attach(raw ? skel->progs.switch_raw : skel->progs.switch_btf);
	if (!cap.link)
		marple_fatal(EXIT_DATA, "cannot attach to sched_switch: %s", strerror(errno));
	if (opt.wakers && !(cap.waking_link = bpf_program__attach(raw ? skel->progs.waking_raw
									   : skel->progs.waking_btf)))
		marple_fatal(EXIT_DATA, "cannot attach to sched_waking: %s", strerror(errno));
	if (opt.runq && !(cap.wake_link = bpf_program__attach(raw ? skel->progs.wakeup_raw
								  : skel->progs.wakeup_btf)))
		marple_fatal(EXIT_DATA, "cannot attach to sched_wakeup: %s", strerror(errno));
	if (opt.both && !(cap.cc = cpuclock_attach(skel->progs.on_cpu_sample, opt.freq, -1)))
		exit(EXIT_DATA);
}

int main(int argc, char **argv)
{
	struct offcpu_bpf *skel;
	const char *how;

	marple_init(argc, argv);
	if (stackcollector_parse(&sc, options, own_option, argc, argv))
		return EXIT_OK;	/* -h */
	opt.dwarf = sc.unwind == UNWIND_MODE_DWARF;
	if (opt.dwarf && sc.kernel_only)
		marple_usage_error("--dwarf unwinds user stacks: not with -K");
	if (opt.dwarf && opt.timed)
		marple_usage_error("--timed works with frame-pointer stacks: not with --dwarf");
	/* --dwarf keeps the kernel's stack ids until the end (not drained);
	 * --timed: a block is timed from when it began, often in an interval
	 * before the one it ends in, which counts it */
	if (opt.runq && (opt.dwarf || opt.timed))
		marple_usage_error("--runq: not with --%s (one section for the whole capture)",
				   opt.dwarf ? "dwarf" : "timed");
	if (opt.wakers && (opt.dwarf || opt.timed))
		marple_usage_error("--wakers: not with --%s", opt.dwarf ? "dwarf" : "timed");
	/* --both: the whole time, running, waiting for a CPU and blocked, each apart */
	opt.runq = opt.runq || (opt.both && !opt.dwarf && !opt.timed);
	if (sc.interval && (opt.dwarf || opt.timed))
		marple_usage_error("--every: not with --%s (one section for the whole capture)",
				   opt.dwarf ? "dwarf" : "timed");
	if (collector_start(sc.verbose > 1) < 0 || stacksbpf_check_target(sc.pid, sc.tid) < 0)
		return EXIT_DATA;
	/* started now, held until the tracing is attached */
	if (sc.cmd && (sc.pid = stackcollector_target(&sc)) < 0)
		exit(EXIT_DATA);	/* uprobes said why; exit: what main holds stays reachable */
	cap.skel = skel = load(&how);
	cap.kstack_memo = kstack_memo_setup(skel);
	if (selffilter_setup(skel->obj, sc.include_self) < 0 || stackcollector_follow(&sc, skel->obj, sc.pid) < 0)
		exit(EXIT_DATA);

	sc.syms = syms_cache_new(sc.no_demangle ? 0 : SYMS_DEMANGLE);
	if (!sc.user_only)
		sc.ksyms = syms_kernel_load();
	sc.sf = stackframes_new(sc.syms, sc.ksyms, bpf_map__fd(skel->maps.stacks), stackcollector_sf_flags(&sc));
	stackframes_set_unwind_mode(sc.sf, unwindtables_mode_name(sc.unwind));
	if (stackcollector_news_open(&sc, skel->obj) < 0)
		marple_fatal(EXIT_DATA, "cannot set up the ring buffer");
	if (stackcollector_unwind_loaded(&sc, skel->obj) < 0)
		exit(EXIT_DATA);
	stackcollector_python(&sc, skel->obj);
	if (opt.dwarf)
		dw.d = unwinddwarf_new(sc.syms);
	if ((opt.dwarf || opt.wakers) &&
	    ring_buffer__add(sc.notes, bpf_map__fd(skel->maps.events), on_event, &cap.table) < 0)
		marple_fatal(EXIT_DATA, "cannot set up the ring buffers");
	if (opt.timed && !(timed = timedsamples_new(skel->obj, sc.notes)))
		marple_fatal(EXIT_DATA, "cannot set up --timed");
	/* the counts are drained while capturing (--dwarf's records keep stack
	 * ids until the end: its maps are read then) */
	cap.table = (struct stacksbpf_table){ sc.sf, NULL };
	/* --both: the off-CPU records in one section, the on-CPU ones in a
	 * second, each header saying which ("cpu"), so readers need not guess
	 * from a frame named __schedule (absent with -U).  --timed and
	 * --dwarf keep one section (its samples name records of one table). */
	split_cpu = (opt.both || opt.runq) && !opt.timed && !opt.dwarf;
	stackframes_split_cpu(sc.sf, split_cpu);
	if (!opt.dwarf) {
		if (stackcollector_drain_counts(&sc, skel->obj, sc.sf, sc.notes, timed, &cap.table, &cap.timed_walk) < 0)
			exit(EXIT_DATA);
		stackdrain_set_pin(sc.drain, pin_blocked, skel);
		if (opt.wakers)
			stackdrain_set_settled(sc.drain, wakers_settled, &cap.table);
	}

	json_t *hdr = cap.hdr = section_header(how);
	if (opt.timed)
		timedsamples_mark(hdr);
	if (!opt.both || split_cpu)
		json_object_set_new(hdr, "cpu", json_string("off"));

	attach(skel, strcmp(how, "raw_tp") == 0);
	if (!sc.interval && stream_write_json(stdout, hdr) < 0)
		marple_fatal(EXIT_DATA, "cannot write the header");
	/* pid notes wake us at once; --dwarf's, --timed's and --wakers' records are read every 20 ms */
	struct stackcollector_run lifecycle = {
		.rb = sc.notes,
		.poll_ms = opt.dwarf || opt.timed || opt.wakers ? 20 : 200,
		.stop = stop_tracing,
		.section = write_section,
	};
	int ran = stackcollector_run(&sc, &lifecycle);
	if (ran == STACKCOLLECTOR_READ_FAILED)
		exit(EXIT_DATA);
	if (ran < 0)
		marple_fatal(EXIT_DATA, "cannot write the section: %s", strerror(errno));
	json_decref(hdr);

	hashtab_free(cap.table.t);
	timedsamples_walk_free(cap.timed_walk);
	timedsamples_free(timed);
	tdestroy(dw.pending, free);
	unwinddwarf_free(dw.d);
	stackcollector_free(&sc);
	offcpu_bpf__destroy(skel);
	marple_close_stdout();
	return EXIT_OK;
}
