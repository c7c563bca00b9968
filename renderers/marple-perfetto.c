/* marple-perfetto — marple event sections (and latency points such as
 * marple-disklat's) -> a Perfetto trace in its native protobuf format.
 *
 * Perfetto calls its JSON importer legacy and best-effort; from its own
 * format it builds the real scheduling views.  So context switches and
 * wake-ups become ftrace events, bundled per CPU as the kernel's ring buffers
 * would give them (Perfetto derives the CPU slices and each thread's states
 * from them), and everything else becomes TrackEvents on tracks of their own:
 * disk requests as slices on one track per device, TCP connections as slices
 * on their process joined by flow arrows, other events as instants.  A timed
 * stack section (marple-lock --timed, marple-offcpu --timed) becomes a slice
 * per sample on its thread's track, with its stacks; a lock's waits (each
 * named by the lock and the function that released it) are also slices on
 * a track of their lock.
 *
 *   $ sudo marple-cpusched -w 10 | marple-perfetto -o sched.pftrace
 *   $ marple-perfetto capture.marple > capture.pftrace   # ui.perfetto.dev
 *
 * The output is written in one pass: a CPU's events are held until its
 * bundle reaches --bundle bytes, a track is described once, a connection is
 * remembered while it is open; memory does not grow with the capture's length.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "eventread.h"
#include "hashtab.h"
#include "intern.h"
#include "options.h"
#include "protowire.h"
#include "stream.h"
#include "timed.h"
#include "util.h"

static struct {
	const char *output;
	uint64_t bundle_bytes;
} opt = { .bundle_bytes = 64 * 1024 };

static const struct options_entry options[] = {
	OPTIONS_OUTPUT,
	{ 'b', "bundle", "BYTES", "hold up to BYTES of a CPU's events per bundle (default 65536)" },
	OPTIONS_DESCRIBE("kind=renderer\tdisplay=perfetto\treads=event\text=pftrace"),
	OPTIONS_HELP,
	{ 0 }
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [-o FILE] [-b BYTES] [FILE...]\n"
		"Convert marple event sections (latency points, as marple-disklat writes, and\n"
		"timed stack sections, as marple-lock --timed writes, too) to a Perfetto trace\n"
		"in its protobuf format (ui.perfetto.dev, trace_processor).\n"
		"\n",
		marple_progname);
	options_usage(f, options);
	fputs("\n"
	      "With no FILE, or FILE '-', read stdin.  Sections must come from one host.\n"
	      "Exit: 0 ok, 1 bad or no input, 2 usage.  See marple-perfetto(1).\n",
	      f);
}

/* Field numbers of Perfetto's trace protos (protos/perfetto/trace/ in its
 * source tree); tests/perfetto/trace.proto states the same ones for protoc. */
enum {
	TRACE_PACKET = 1,
	/* TracePacket */
	PKT_FTRACE_EVENTS = 1, PKT_PROCESS_TREE = 2, PKT_CLOCK_SNAPSHOT = 6, PKT_TIMESTAMP = 8,
	PKT_SEQUENCE_ID = 10, PKT_TRACK_EVENT = 11, PKT_SEQUENCE_FLAGS = 13, PKT_SYSTEM_INFO = 45,
	PKT_TRACK_DESCRIPTOR = 60,
	SEQ_INCREMENTAL_STATE_CLEARED = 1,
	/* FtraceEventBundle; FtraceEvent */
	BUNDLE_CPU = 1, BUNDLE_EVENT = 2,
	FTRACE_TIMESTAMP = 1, FTRACE_PID = 2, FTRACE_SCHED_SWITCH = 4, FTRACE_SCHED_WAKEUP = 17,
	/* SchedSwitchFtraceEvent; SchedWakeupFtraceEvent */
	SWITCH_PREV_COMM = 1, SWITCH_PREV_PID = 2, SWITCH_PREV_STATE = 4, SWITCH_NEXT_COMM = 5,
	SWITCH_NEXT_PID = 6, SWITCH_NEXT_PRIO = 7,
	WAKEUP_COMM = 1, WAKEUP_PID = 2, WAKEUP_PRIO = 3, WAKEUP_SUCCESS = 4, WAKEUP_TARGET_CPU = 5,
	/* ProcessTree; its Process and Thread */
	TREE_PROCESS = 1, TREE_THREAD = 2, PROCESS_PID = 1, PROCESS_CMDLINE = 3,
	THREAD_TID = 1, THREAD_NAME = 2, THREAD_TGID = 3,
	/* ClockSnapshot; its Clock; the builtin clock ids */
	SNAPSHOT_CLOCK = 1, CLOCK_ID = 1, CLOCK_TIMESTAMP = 2,
	CLOCK_REALTIME = 1, CLOCK_MONOTONIC = 3, CLOCK_BOOTTIME = 6,
	/* SystemInfo; Utsname */
	SYSINFO_UTSNAME = 1, SYSINFO_NUM_CPUS = 8, UTS_SYSNAME = 1, UTS_RELEASE = 3,
	/* TrackDescriptor; ProcessDescriptor */
	TRACK_UUID = 1, TRACK_NAME = 2, TRACK_PROCESS = 3, TRACK_THREAD = 4, TRACK_PARENT = 5,
	PROCDESC_PID = 1, PROCDESC_NAME = 6, THREADDESC_PID = 1, THREADDESC_TID = 2, THREADDESC_NAME = 5,
	/* TrackEvent and its types; DebugAnnotation */
	EVENT_ANNOTATION = 4, EVENT_TYPE = 9, EVENT_TRACK = 11, EVENT_CATEGORY = 22, EVENT_NAME = 23,
	EVENT_FLOW = 47, EVENT_FLOW_END = 48,
	SLICE_BEGIN = 1, SLICE_END = 2, INSTANT = 3,
	ANNOT_INT = 4, ANNOT_STRING = 6, ANNOT_NAME = 10,
};

#define SEQUENCE_ID 1		/* all packets are one writer's sequence */
#define MAX_CPU 65535

/* ---- output: one packet at a time ---- */

static FILE *out;
static struct pbuf pkt;		/* the packet being written */
static struct pbuf outbuf;	/* packets not yet written out */
static int sequence_started;

#define NO_TIME UINT64_MAX	/* a packet whose content carries its own times, or none */

static void packet_begin(uint64_t time)
{
	if (time != NO_TIME)
		protowire_uint(&pkt, PKT_TIMESTAMP, time);
	protowire_uint(&pkt, PKT_SEQUENCE_ID, SEQUENCE_ID);
	if (!sequence_started)
		protowire_uint(&pkt, PKT_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
	sequence_started = 1;
}

/* Packets gather in outbuf and go out a MiB at a time: a trace has hundreds
 * of thousands of packets, and two small fwrite calls for each, through
 * stdio's 4 KiB buffer, cost a system call every few packets. */
#define OUT_CHUNK (1u << 20)

static void output_flush(void)
{
	if (outbuf.n)
		fwrite(outbuf.b, 1, outbuf.n, out);
	outbuf.n = 0;
}

static void packet_end(void)
{
	protowire_tag(&outbuf, TRACE_PACKET, PB_LEN);
	protowire_varint(&outbuf, pkt.n);
	protowire_raw(&outbuf, pkt.b, pkt.n);
	pkt.n = 0;
	if (outbuf.n >= OUT_CHUNK)
		output_flush();
}

/* A name from a record: its bytes if they are UTF-8 (protobuf strings must
 * be), else the %XX-escaped text. */
static void put_name(struct pbuf *p, uint32_t field, struct mstr s)
{
	if (escape_is_utf8(s.s, s.len)) {
		protowire_bytes(p, field, s.s, s.len);
		return;
	}
	char *e = escape_dup(s.s, s.len);
	protowire_bytes(p, field, e, strlen(e));
	free(e);
}

static void put_fixed64(struct pbuf *p, uint32_t field, uint64_t v)
{
	unsigned char b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	protowire_tag(p, field, PB_FIXED64);
	protowire_raw(p, b, 8);
}

/* ---- the fields of a scheduling event, found in one pass ---- */

enum sched_field {
	F_COMM, F_PID, F_PRIO, F_TARGET_CPU, F_WAKER_PID, F_TGID, F_PREV_COMM, F_PREV_PID, F_PREV_STATE,
	F_NEXT_COMM, F_NEXT_PID, F_NEXT_PRIO, F_NEXT_TGID, NFIELDS
};
static const struct mstr sched_keys[NFIELDS] = {
	MSTR("comm"), MSTR("pid"), MSTR("prio"), MSTR("target_cpu"), MSTR("waker_pid"), MSTR("tgid"),
	MSTR("prev_comm"), MSTR("prev_pid"), MSTR("prev_state"), MSTR("next_comm"),
	MSTR("next_pid"), MSTR("next_prio"), MSTR("next_tgid"),
};

/* Keys are 3 to 10 bytes: two loads that overlap compare them, no call, no
 * loop (eleven keys an event, millions of events). */
static int key_is(const struct mstr *key, size_t k)
{
	const char *a = key->s, *b = sched_keys[k].s;
	size_t n = key->len;
	if (n != sched_keys[k].len)
		return 0;
	if (n >= 8) {
		uint64_t x0, x1, y0, y1;
		memcpy(&x0, a, 8), memcpy(&y0, b, 8);
		memcpy(&x1, a + n - 8, 8), memcpy(&y1, b + n - 8, 8);
		return x0 == y0 && x1 == y1;
	}
	if (n >= 4) {
		uint32_t x0, x1, y0, y1;
		memcpy(&x0, a, 4), memcpy(&y0, b, 4);
		memcpy(&x1, a + n - 4, 4), memcpy(&y1, b + n - 4, 4);
		return x0 == y0 && x1 == y1;
	}
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

/* v[k]: the value of key k, or NULL.  Millions of records, their keys in the
 * same order each time: the key found at a position last time is tried first. */
static void sched_fields(const struct event_rec *e, const struct mstr *v[NFIELDS])
{
	static unsigned char last_at[16];

	for (size_t k = 0; k < NFIELDS; k++)
		v[k] = NULL;
	for (size_t i = 0; i < e->nfields; i++) {
		const struct mstr *key = &e->fields[i].key;
		size_t guess = i < sizeof(last_at) ? last_at[i] : 0;
		if (key_is(key, guess)) {
			v[guess] = &e->fields[i].value;
			continue;
		}
		for (size_t k = 0; k < NFIELDS; k++)
			if (key_is(key, k)) {
				v[k] = &e->fields[i].value;
				if (i < sizeof(last_at))
					last_at[i] = (unsigned char)k;
				break;
			}
	}
}

static int value_u64(const struct mstr *m, uint64_t max, uint64_t *v)
{
	return m && marple_parse_u64_span(m->s, m->len, v) == 0 && *v <= max;
}

static int value_i32(const struct mstr *m, int64_t *v)
{
	uint64_t u;
	if (!m || !m->len)
		return 0;
	int neg = m->s[0] == '-';
	if (marple_parse_u64_span(m->s + neg, m->len - (size_t)neg, &u) < 0 || u > INT32_MAX)
		return 0;
	*v = neg ? -(int64_t)u : (int64_t)u;
	return 1;
}

/* ---- the capture: clocks, kernel, host ---- */

static char *first_host;
static uint64_t section_start;	/* start_ns of the section being read */
static const char *section_iface = "";
static enum timed_role section_timed;
static void timed_stacks_begin(json_t *hdr);
static double section_y_ns;	/* latency points: nanoseconds per unit of y */
static int state_layout_414;	/* prev_state bits as Linux 4.14+ report them */
static uint64_t preempt_bit = 0x800;	/* Perfetto's reading of R+ without a newer kernel */

/* The kernel's prev_state encoding Perfetto decodes for the release we
 * declare (it reads the layout from SystemInfo's release; none means 4.4). */
static void choose_state_layout(const char *release)
{
	unsigned major = 0, minor = 0;
	if (!release || sscanf(release, "%u.%u", &major, &minor) != 2)
		return;
	state_layout_414 = major > 4 || (major == 4 && minor >= 14);
	preempt_bit = state_layout_414 ? 0x100 : major == 4 && minor >= 8 ? 0x1000 : 0x800;
}

/* marple-cpusched's state letters as sched_switch's prev_state; -1 unknown. */
static int64_t state_bits(struct mstr s)
{
	static const char basic[] = "SDTtXZ";	/* 0x1 .. 0x20 in every layout */
	if (s.len == 1 && s.s[0] == 'R')
		return 0;
	if (s.len == 2 && s.s[0] == 'R' && s.s[1] == '+')
		return (int64_t)preempt_bit;
	if (s.len != 1)
		return -1;
	const char *b = memchr(basic, s.s[0], sizeof(basic) - 1);
	if (b)
		return (int64_t)1 << (b - basic);
	if (s.s[0] == 'P')
		return state_layout_414 ? 0x40 : 0x200;
	if (s.s[0] == 'I')	/* TASK_IDLE: reported as such, or uninterruptible + noload */
		return state_layout_414 ? 0x80 : 0x402;
	return -1;
}

static void write_system_info(json_t *hdr)
{
	const char *release = stream_header_str(hdr, "kernel", NULL);
	int64_t ncpus = stream_header_int(hdr, "ncpus", 0);

	choose_state_layout(release);
	if (!release)
		return;
	packet_begin(NO_TIME);
	size_t m = protowire_begin(&pkt, PKT_SYSTEM_INFO);
	size_t u = protowire_begin(&pkt, SYSINFO_UTSNAME);
	protowire_bytes(&pkt, UTS_SYSNAME, "Linux", 5);
	protowire_bytes(&pkt, UTS_RELEASE, release, strlen(release));
	protowire_end(&pkt, u);
	if (ncpus > 0)
		protowire_uint(&pkt, SYSINFO_NUM_CPUS, (uint64_t)ncpus);
	protowire_end(&pkt, m);
	packet_end();
}

/* marple's times are CLOCK_MONOTONIC; they are given to Perfetto as its trace
 * clock (boot time, which it also assumes for ftrace events) unchanged, and
 * the snapshot ties them to the wall clock the header read at the same moment. */
static void write_clock_snapshot(uint64_t mono, uint64_t wall)
{
	static const uint32_t ids[] = { CLOCK_BOOTTIME, CLOCK_MONOTONIC, CLOCK_REALTIME };
	static uint64_t last_mono, last_wall;
	if (mono == last_mono && wall == last_wall)	/* sections of one capture share it */
		return;
	last_mono = mono;
	last_wall = wall;
	packet_begin(mono);
	size_t m = protowire_begin(&pkt, PKT_CLOCK_SNAPSHOT);
	for (size_t i = 0; i < 3; i++) {
		size_t c = protowire_begin(&pkt, SNAPSHOT_CLOCK);
		protowire_uint(&pkt, CLOCK_ID, ids[i]);
		protowire_uint(&pkt, CLOCK_TIMESTAMP, ids[i] == CLOCK_REALTIME ? wall : mono);
		protowire_end(&pkt, c);
	}
	protowire_end(&pkt, m);
	packet_end();
}

/* Nanoseconds in a unit of duration; 0 for another unit. */
static double y_unit_ns(const char *u)
{
	static const struct { const char *name; double ns; } units[] = {
		{ "s", 1e9 }, { "ms", 1e6 }, { "us", 1e3 }, { "ns", 1 },
	};
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(u, units[i].name))
			return units[i].ns;
	return 0;
}

static int on_section(struct eventread *er, json_t *hdr, enum datatype dt)
{
	const char *host = stream_header_str(hdr, "host", "");
	int64_t start = stream_header_int(hdr, "start_ns", -1), wall = stream_header_int(hdr, "wall_ns", -1);
	json_t *units = json_object_get(hdr, "units");

	section_y_ns = y_unit_ns(stream_header_str(units, "y", ""));
	if (dt == DATATYPE_POINT && (strcmp(stream_header_str(units, "x", ""), "s") != 0 || start < 0 || !section_y_ns)) {
		marple_warn_at(er->file, er->line, "section \"%s\" (points): %s draws only latency points (x in seconds "
			"since the header's start_ns, y a duration in s, ms, us or ns, as marple-disklat writes)",
			stream_header_str(hdr, "interface", "?"), marple_progname);
		return -1;
	}
	if (!first_host) {
		first_host = marple_strdup(host);
		write_system_info(hdr);
	} else if (strcmp(first_host, host) != 0) {
		marple_warn_at(er->file, er->line, "sections from hosts \"%s\" and \"%s\": their clocks do not line up; "
			"write one trace per host", first_host, host);
		return -1;
	}
	section_start = start >= 0 ? (uint64_t)start : 0;
	section_iface = stream_header_str(hdr, "interface", "");
	if ((section_timed = timed_role(hdr)) == TIMED_STACKS)
		timed_stacks_begin(hdr);
	if (start >= 0 && wall >= 0)
		write_clock_snapshot((uint64_t)start, (uint64_t)wall);
	return 0;
}

/* ---- scheduling: ftrace events bundled per CPU ---- */

static struct pbuf *bundles;	/* by CPU: FtraceEvent messages not yet written */
static size_t nbundles, bundles_cap;
static uint64_t unknown_states;

static struct pbuf *bundle_of(uint64_t cpu)
{
	if (cpu >= nbundles) {
		bundles = marple_grow(bundles, &bundles_cap, cpu + 1, sizeof(*bundles));
		memset(bundles + nbundles, 0, (cpu + 1 - nbundles) * sizeof(*bundles));
		nbundles = cpu + 1;
	}
	return &bundles[cpu];
}

static void bundle_flush(uint64_t cpu)
{
	struct pbuf *b = &bundles[cpu];
	if (!b->n)
		return;
	packet_begin(NO_TIME);
	size_t m = protowire_begin(&pkt, PKT_FTRACE_EVENTS);
	protowire_uint(&pkt, BUNDLE_CPU, cpu);
	protowire_raw(&pkt, b->b, b->n);
	protowire_end(&pkt, m);
	packet_end();
	b->n = 0;
}

/* A sched_switch as the kernel's tracepoint has it; 0 if it lacks next_pid. */
static int put_switch(struct pbuf *b, const struct event_rec *e, const struct mstr *v[NFIELDS])
{
	const struct mstr *next_comm = v[F_NEXT_COMM] ? v[F_NEXT_COMM] : v[F_COMM];
	uint64_t next_pid, prev_pid;
	int64_t prio, bits = -1;
	int have_prev = value_u64(v[F_PREV_PID], INT32_MAX, &prev_pid);

	if (!value_u64(v[F_NEXT_PID] ? v[F_NEXT_PID] : v[F_PID], INT32_MAX, &next_pid))
		return 0;
	if (v[F_PREV_STATE] && (bits = state_bits(*v[F_PREV_STATE])) < 0)
		unknown_states++;
	size_t m = protowire_begin(b, BUNDLE_EVENT);
	protowire_uint(b, FTRACE_TIMESTAMP, e->time);
	if (have_prev)
		protowire_uint(b, FTRACE_PID, prev_pid);
	size_t s = protowire_begin(b, FTRACE_SCHED_SWITCH);
	if (v[F_PREV_COMM])
		put_name(b, SWITCH_PREV_COMM, *v[F_PREV_COMM]);
	if (have_prev)
		protowire_uint(b, SWITCH_PREV_PID, prev_pid);
	if (bits >= 0)
		protowire_int(b, SWITCH_PREV_STATE, bits);
	if (next_comm)
		put_name(b, SWITCH_NEXT_COMM, *next_comm);
	protowire_uint(b, SWITCH_NEXT_PID, next_pid);
	if (value_i32(v[F_NEXT_PRIO], &prio))
		protowire_int(b, SWITCH_NEXT_PRIO, prio);
	protowire_end(b, s);
	protowire_end(b, m);
	return 1;
}

/* A wake-up: the woken task, its target CPU; the event's pid is the waker. */
static int put_wakeup(struct pbuf *b, const struct event_rec *e, const struct mstr *v[NFIELDS])
{
	uint64_t pid, waker, target;
	int64_t prio;

	if (!value_u64(v[F_PID], INT32_MAX, &pid))
		return 0;
	size_t m = protowire_begin(b, BUNDLE_EVENT);
	protowire_uint(b, FTRACE_TIMESTAMP, e->time);
	if (value_u64(v[F_WAKER_PID], INT32_MAX, &waker))
		protowire_uint(b, FTRACE_PID, waker);
	size_t w = protowire_begin(b, FTRACE_SCHED_WAKEUP);
	if (v[F_COMM])
		put_name(b, WAKEUP_COMM, *v[F_COMM]);
	protowire_uint(b, WAKEUP_PID, pid);
	if (value_i32(v[F_PRIO], &prio))
		protowire_int(b, WAKEUP_PRIO, prio);
	protowire_uint(b, WAKEUP_SUCCESS, 1);
	if (value_u64(v[F_TARGET_CPU], MAX_CPU, &target))
		protowire_uint(b, WAKEUP_TARGET_CPU, target);
	protowire_end(b, w);
	protowire_end(b, m);
	return 1;
}

static void name_thread(const struct mstr *tid, const struct mstr *tgid, const struct mstr *comm);

/* 1 if e went into its CPU's bundle. */
static int on_sched_event(const struct event_rec *e)
{
	uint64_t cpu;
	int sw = escape_mstr_eq(e->type, "sched_switch");

	if ((!sw && !escape_mstr_eq(e->type, "sched_wakeup")) || eventread_track_cpu(e->track, &cpu) < 0 ||
	    cpu > MAX_CPU)
		return 0;
	const struct mstr *v[NFIELDS];
	sched_fields(e, v);
	struct pbuf *b = bundle_of(cpu);
	if (!(sw ? put_switch(b, e, v) : put_wakeup(b, e, v)))
		return 0;
	if (sw)
		name_thread(v[F_NEXT_PID] ? v[F_NEXT_PID] : v[F_PID], v[F_NEXT_TGID], v[F_NEXT_COMM] ? v[F_NEXT_COMM] : v[F_COMM]);
	else
		name_thread(v[F_PID], v[F_TGID], v[F_COMM]);
	if (b->n >= opt.bundle_bytes)
		bundle_flush(cpu);
	return 1;
}

/* ---- tracks: named once, with lanes for slices that overlap ---- */

/* A track holds slices that nest; requests or connections that overlap in
 * time go to the first lane free at their start (lanes of one owner are
 * sibling tracks of the same name, which Perfetto shows together). */
struct lane {
	uint64_t uuid;
	uint64_t end;		/* when its last slice ended */
	char *open;		/* the key of the slice open in it (a connection), or NULL */
};

struct owner {			/* a process, a device or a named track */
	uint64_t uuid;
	int named;		/* process named in a ProcessTree packet */
	uint32_t said;		/* a thread's track: hash of the name described | 1 */
	struct lane *lanes;
	size_t nlanes, lanes_cap;
};

static struct intern *owner_ids;
static struct owner *owners;
static size_t nowners, owners_cap;
static uint64_t next_uuid = 1;
static char *keybuf;
static size_t keybuf_cap;

static void track_descriptor(uint64_t uuid, uint64_t parent, struct mstr name, int64_t pid,
			     const struct mstr *pname)
{
	packet_begin(NO_TIME);
	size_t m = protowire_begin(&pkt, PKT_TRACK_DESCRIPTOR);
	protowire_uint(&pkt, TRACK_UUID, uuid);
	if (parent)
		protowire_uint(&pkt, TRACK_PARENT, parent);
	if (name.len)
		put_name(&pkt, TRACK_NAME, name);
	if (pid >= 0) {
		size_t p = protowire_begin(&pkt, TRACK_PROCESS);
		protowire_uint(&pkt, PROCDESC_PID, (uint64_t)pid);
		if (pname)
			put_name(&pkt, PROCDESC_NAME, *pname);
		protowire_end(&pkt, p);
	}
	protowire_end(&pkt, m);
	packet_end();
}

/* The owner of kind k ('p' pid, 'd' device, 't' named track) and name; *fresh
 * set when it is new (its track not described yet). */
static struct owner *owner_get(char k, struct mstr a, struct mstr b, int *fresh)
{
	size_t len = 2 + a.len + b.len;
	keybuf = marple_grow(keybuf, &keybuf_cap, len, 1);
	keybuf[0] = k;
	memcpy(keybuf + 1, a.s, a.len);
	keybuf[1 + a.len] = 0;
	memcpy(keybuf + 2 + a.len, b.s, b.len);
	uint32_t id = intern_get(owner_ids, keybuf, len);
	*fresh = id >= nowners;
	if (*fresh) {
		owners = marple_grow(owners, &owners_cap, (size_t)id + 1, sizeof(*owners));
		owners[id] = (struct owner){ .uuid = next_uuid++ };
		nowners = (size_t)id + 1;
	}
	return &owners[id];
}

/* The process track of a pid, described (and the process named) on first use. */
static struct owner *process_track(uint64_t pid, const struct mstr *comm)
{
	char num[24];
	int fresh, n = snprintf(num, sizeof(num), "%llu", (unsigned long long)pid);
	struct owner *o = owner_get('p', (struct mstr){ num, (size_t)n }, MSTR(""), &fresh);

	if (fresh)
		track_descriptor(o->uuid, 0, MSTR(""), (int64_t)pid, comm);
	if (!o->named && comm) {
		packet_begin(NO_TIME);
		size_t m = protowire_begin(&pkt, PKT_PROCESS_TREE);
		size_t p = protowire_begin(&pkt, TREE_PROCESS);
		protowire_uint(&pkt, PROCESS_PID, pid);
		put_name(&pkt, PROCESS_CMDLINE, *comm);
		protowire_end(&pkt, p);
		protowire_end(&pkt, m);
		packet_end();
		o->named = 1;
	}
	return o;
}

/* Threads with their process (marple-cpusched's next_tgid, tgid) in
 * ProcessTree packets: Perfetto puts a thread's tracks under its process, and
 * a process is named after its main thread.  Perfetto ranks these names above
 * sched_switch's, so a thread is named again whenever its name changes
 * (prctl, exec): the last name is the one shown.  What was said is kept by
 * tid (a hash of the name): a few bytes per thread id, however long the trace. */
static uint32_t *thread_said;	/* by tid: hash of the name last written | 1, 0 none */
static size_t thread_said_n, thread_said_cap;

static void name_thread(const struct mstr *tid_s, const struct mstr *tgid_s, const struct mstr *comm)
{
	uint64_t tid, tgid;

	if (!comm || !value_u64(tid_s, INT32_MAX, &tid) || !value_u64(tgid_s, INT32_MAX, &tgid) || tid == 0)
		return;
	uint32_t h = (uint32_t)hashtab_hash(comm->s, comm->len) | 1;
	if (tid >= thread_said_n) {
		thread_said = marple_grow(thread_said, &thread_said_cap, tid + 1, sizeof(*thread_said));
		memset(thread_said + thread_said_n, 0, (tid + 1 - thread_said_n) * sizeof(*thread_said));
		thread_said_n = tid + 1;
	}
	if (thread_said[tid] == h)
		return;
	thread_said[tid] = h;
	packet_begin(NO_TIME);
	size_t m = protowire_begin(&pkt, PKT_PROCESS_TREE);
	if (tid == tgid) {
		size_t p = protowire_begin(&pkt, TREE_PROCESS);
		protowire_uint(&pkt, PROCESS_PID, tgid);
		put_name(&pkt, PROCESS_CMDLINE, *comm);
		protowire_end(&pkt, p);
	}
	size_t t = protowire_begin(&pkt, TREE_THREAD);
	protowire_uint(&pkt, THREAD_TID, tid);
	put_name(&pkt, THREAD_NAME, *comm);
	protowire_uint(&pkt, THREAD_TGID, tgid);
	protowire_end(&pkt, t);
	protowire_end(&pkt, m);
	packet_end();
}

/* A lane of o free at start (for key, if the slice stays open), new if none is. */
static struct lane *lane_take(struct owner *o, uint64_t start, struct mstr name, const struct mstr *key)
{
	struct lane *l = NULL;
	for (size_t i = 0; i < o->nlanes && !l; i++)
		if (!o->lanes[i].open && o->lanes[i].end <= start)
			l = &o->lanes[i];
	if (!l) {
		o->lanes = marple_grow(o->lanes, &o->lanes_cap, o->nlanes + 1, sizeof(*o->lanes));
		l = &o->lanes[o->nlanes++];
		*l = (struct lane){ .uuid = next_uuid++ };
		track_descriptor(l->uuid, o->uuid, name, -1, NULL);
	}
	l->open = key ? marple_strndup(key->s, key->len) : NULL;
	return l;
}

static struct lane *lane_open(struct owner *o, struct mstr key)
{
	for (size_t i = 0; i < o->nlanes; i++)
		if (o->lanes[i].open && strlen(o->lanes[i].open) == key.len &&
		    memcmp(o->lanes[i].open, key.s, key.len) == 0)
			return &o->lanes[i];
	return NULL;
}

static void lane_close(struct lane *l, uint64_t end)
{
	free(l->open);
	l->open = NULL;
	l->end = end;
}

/* ---- track events ---- */

struct track_event {
	uint64_t time, track;
	int type;
	struct mstr name;
	const struct field *fields;	/* as debug annotations */
	size_t nfields;
	uint64_t flow;			/* 0: none */
	int flow_ends;
};

static void put_annotation(struct mstr key, struct mstr value)
{
	uint64_t v;
	size_t m = protowire_begin(&pkt, EVENT_ANNOTATION);
	put_name(&pkt, ANNOT_NAME, key);
	if (value.len && value.s[0] != '0' && marple_parse_u64_span(value.s, value.len, &v) == 0 && v <= INT64_MAX)
		protowire_int(&pkt, ANNOT_INT, (int64_t)v);
	else
		put_name(&pkt, ANNOT_STRING, value);
	protowire_end(&pkt, m);
}

static void write_track_event(const struct track_event *t)
{
	packet_begin(t->time);
	size_t m = protowire_begin(&pkt, PKT_TRACK_EVENT);
	protowire_uint(&pkt, EVENT_TYPE, (uint64_t)t->type);
	protowire_uint(&pkt, EVENT_TRACK, t->track);
	if (t->type != SLICE_END) {
		put_name(&pkt, EVENT_NAME, t->name);
		put_name(&pkt, EVENT_CATEGORY, escape_mstr_c(section_iface));
	}
	for (size_t i = 0; i < t->nfields; i++)
		put_annotation(t->fields[i].key, t->fields[i].value);
	if (t->flow)
		put_fixed64(&pkt, t->flow_ends ? EVENT_FLOW_END : EVENT_FLOW, t->flow);
	protowire_end(&pkt, m);
	packet_end();
}

/* "connect 127.0.0.1:8080": the event's type and the other end. */
static struct mstr connection_name(const struct event_rec *e, const char *type)
{
	static char *buf;
	static size_t cap;
	const struct mstr *addr = stream_fields_get(e->fields, e->nfields, "daddr");
	const struct mstr *port = stream_fields_get(e->fields, e->nfields, "dport");
	size_t tl = strlen(type), al = addr ? addr->len : 1, pl = port ? port->len : 1;

	buf = marple_grow(buf, &cap, tl + al + pl + 3, 1);
	int n = snprintf(buf, cap, "%s %.*s:%.*s", type, (int)al, addr ? addr->s : "?", (int)pl,
			 port ? port->s : "?");
	return (struct mstr){ buf, (size_t)n };
}

/* marple-ipc: each connection a slice on its process, from connect or accept
 * to close, the connect's slice joined to the accept's by a flow arrow.
 * 1 if e was drawn so. */
static int on_connection(const struct event_rec *e, uint64_t pid, const struct mstr *comm)
{
	const struct mstr *flow = stream_fields_get(e->fields, e->nfields, "flow");
	int is_connect = escape_mstr_eq(e->type, "connect"), is_accept = escape_mstr_eq(e->type, "accept");
	struct track_event t = { .time = e->time, .fields = e->fields, .nfields = e->nfields };

	if (!flow || (!is_connect && !is_accept && !escape_mstr_eq(e->type, "close")))
		return 0;
	struct owner *o = process_track(pid, comm);
	struct lane *l = lane_open(o, *flow);
	if (is_connect || is_accept) {
		if (l)		/* the same connection opened twice: end the first */
			lane_close(l, e->time);
		l = lane_take(o, e->time, MSTR("connections"), flow);
		t = (struct track_event){ e->time, l->uuid, SLICE_BEGIN, connection_name(e, is_connect ? "connect" : "accept"),
					  e->fields, e->nfields, hashtab_hash(flow->s, flow->len) | 1, is_accept };
		write_track_event(&t);
		return 1;
	}
	uint64_t dur = 0;
	if (!l) {		/* opened before the capture or its open not seen: its duration tells when */
		value_u64(stream_fields_get(e->fields, e->nfields, "duration_ns"), e->time, &dur);
		l = lane_take(o, e->time - dur, MSTR("connections"), flow);
		struct track_event b = { e->time - dur, l->uuid, SLICE_BEGIN, connection_name(e, "connection") };
		write_track_event(&b);
	}
	t.track = l->uuid;
	t.type = SLICE_END;
	write_track_event(&t);
	lane_close(l, e->time);
	return 1;
}

static uint64_t undrawable;

/* Any other event: an instant on its track (a process for a pid track). */
static void on_other_event(const struct event_rec *e)
{
	const struct mstr *comm = stream_fields_get(e->fields, e->nfields, "comm");
	uint64_t pid;
	struct owner *o;
	int fresh;

	if (marple_parse_u64_span(e->track.s, e->track.len, &pid) == 0 && pid <= INT32_MAX) {
		if (on_connection(e, pid, comm))
			return;
		o = process_track(pid, comm);
	} else {
		o = owner_get('t', escape_mstr_c(section_iface), e->track, &fresh);
		if (fresh)
			track_descriptor(o->uuid, 0, e->track, -1, NULL);
	}
	struct track_event t = { e->time, o->uuid, INSTANT, e->type, e->fields, e->nfields };
	write_track_event(&t);
}

static void on_timed_sample(struct eventread *er, const struct event_rec *e);

static void on_event(struct eventread *er, const struct event_rec *e)
{
	if (section_timed == TIMED_SAMPLES)
		on_timed_sample(er, e);
	else if (!on_sched_event(e))
		on_other_event(e);
}

/* ---- latency points: a slice ending at x, y long, on its device's track ---- */

static const char *request_name(const struct point_rec *p)
{
	static const char *const names[][2] = {
		{ "R", "read" }, { "W", "write" }, { "F", "flush" }, { "D", "discard" },
		{ "S", "secure erase" }, { "Z", "write zeroes" }, { "O", "other" },
	};
	const struct mstr *rw = stream_fields_get(p->fields, p->nfields, "rw");
	for (size_t i = 0; rw && i < sizeof(names) / sizeof(names[0]); i++)
		if (escape_mstr_eq(*rw, names[i][0]))
			return names[i][1];
	return NULL;
}

static void on_point(struct eventread *er, const struct point_rec *p)
{
	const struct mstr *dev = stream_fields_get(p->fields, p->nfields, "dev");
	struct mstr track = dev ? *dev : escape_mstr_c(section_iface);
	int fresh;

	if (!(p->x >= 0 && p->x < 1e9 && p->y >= 0 && p->y * section_y_ns < 1e18)) {
		if (++undrawable <= 10)	/* the first ten named, all counted at the end */
			marple_warn_at(er->file, er->line, "point not drawn: x or y out of range (negative, not a number, or too large)");
		return;
	}
	uint64_t end = section_start + (uint64_t)(p->x * 1e9 + 0.5);
	uint64_t dur = (uint64_t)(p->y * section_y_ns + 0.5), start = end > dur ? end - dur : 0;
	struct owner *o = owner_get('d', escape_mstr_c(section_iface), track, &fresh);
	if (fresh) {
		char name[300];
		int n = snprintf(name, sizeof(name), "disk %.*s", (int)(track.len < 256 ? track.len : 256), track.s);
		track_descriptor(o->uuid, 0, (struct mstr){ name, (size_t)n }, -1, NULL);
	}
	struct lane *l = lane_take(o, start, MSTR("requests"), NULL);
	const char *rn = request_name(p);
	struct track_event t = { start, l->uuid, SLICE_BEGIN, rn ? escape_mstr_c(rn) : p->info, p->fields, p->nfields };
	write_track_event(&t);
	t = (struct track_event){ end, l->uuid, SLICE_END };
	write_track_event(&t);
	lane_close(l, end);
}

/* ---- timed stack sections: a slice per sample on its thread ---- */

/* A stack record of the timed section being read, as its samples draw it. */
struct held_stack {
	char *name;		/* the slice's: its function, or the lock and who released it */
	char *thread;		/* the thread's name (the record's comm frame) */
	char *lock;		/* marple-lock: the lock ("futex 0x..."), else NULL */
	char *stack;		/* root first, ';' between frames (a lock's waiter) */
	char *holder;		/* an off-wake record's second stack, root first; or NULL */
	char **keys;		/* the frames the slice is named by, leaf first, as the
				 * trailer describes them: the holder's, or the stack's */
	size_t nkeys;
	int named_by_root;	/* (the holder's) none found: the last key, its name */
};

static struct {
	struct held_stack *v;
	size_t n, cap;
	int is_lock;		/* the section is marple-lock's */
} held;
static uint64_t samples_unnamed;	/* samples naming no stack record held */

static void held_free_keys(struct held_stack *h)
{
	for (size_t i = 0; i < h->nkeys; i++)
		free(h->keys[i]);
	free(h->keys);
	h->keys = NULL;
	h->nkeys = 0;
}

static void held_clear(void)
{
	for (size_t i = 0; i < held.n; i++) {
		struct held_stack *h = &held.v[i];
		held_free_keys(h);
		free(h->name), free(h->thread), free(h->lock), free(h->stack), free(h->holder);
	}
	held.n = 0;
}

static void timed_stacks_begin(json_t *hdr)
{
	held_clear();
	held.is_lock = !strcmp(stream_header_str(hdr, "interface", ""), "lock");
}

/* frames[from..to) joined by ';', in order or (reverse) leaf first. */
static char *join_frames(const struct stack_rec *s, size_t from, size_t to, int reverse)
{
	size_t len = 1, at = 0;
	for (size_t i = from; i < to; i++)
		len += s->frames[i].len + 1;
	char *b = marple_malloc(len);
	for (size_t k = from; k < to; k++) {
		const struct mstr *f = &s->frames[reverse ? to - 1 - (k - from) : k];
		if (at)
			b[at++] = ';';
		memcpy(b + at, f->s, f->len);
		at += f->len;
	}
	b[at] = 0;
	return b;
}

/* Frame i as the trailer's "frames" names it: its text and tag, if any. */
static char *frame_key_text(const struct stack_rec *s, size_t i)
{
	if (s->tags && s->tags[i])
		return marple_asprintf("%.*s#%08x", (int)s->frames[i].len, s->frames[i].s, s->tags[i]);
	return marple_strndup(s->frames[i].s, s->frames[i].len);
}

static void on_stack(struct eventread *er, const struct stack_rec *s)
{
	size_t n = s->nframes, dash = n, first = held.is_lock && n > 1;

	(void)er;
	for (size_t i = 0; i < n; i++)
		if (s->frames[i].len == 2 && !memcmp(s->frames[i].s, "--", 2)) {
			dash = i;
			break;
		}
	held.v = marple_grow(held.v, &held.cap, held.n + 1, sizeof(*held.v));
	struct held_stack *h = &held.v[held.n++];
	*h = (struct held_stack){ 0 };
	if (first && s->frames[0].len > 2 && s->frames[0].s[0] == '[')
		h->lock = marple_strndup(s->frames[0].s + 1, s->frames[0].len - 2);
	h->thread = n > first ? marple_strndup(s->frames[first].s, s->frames[first].len) : marple_strdup("?");
	h->stack = join_frames(s, first, dash, 0);
	if (dash < n)
		h->holder = join_frames(s, dash + 1, n, 1);
	/* named at the trailer, which says which frames are whose */
	h->keys = marple_malloc((n + 1) * sizeof(*h->keys));
	if (h->lock) {
		for (size_t i = dash + 1; i < n; i++)
			h->keys[h->nkeys++] = frame_key_text(s, i);
		h->named_by_root = 1;
	} else {
		for (size_t i = dash; i-- > first + 1;)
			h->keys[h->nkeys++] = frame_key_text(s, i);
	}
	if (!h->nkeys && !h->lock)	/* (a stack of its thread's name alone) */
		h->keys[h->nkeys++] = marple_strdup(h->thread);
}

/* Is file a C library's (its code is the lock's, not the program's)? */
static int c_library(const char *file)
{
	const char *b = strrchr(file, '/');
	b = b ? b + 1 : file;
	return !strncmp(b, "libc.so", 7) || !strncmp(b, "libc-", 5) || !strncmp(b, "libpthread", 10) ||
	       !strncmp(b, "ld-linux", 8);
}

/* Is key i the program's code: described, neither the kernel's nor a C
 * library's?  An inlined frame is the function's it was inlined into (the
 * next frame not inlined, leaf first: a kernel function of the same name
 * reads as the inlined one, whose description a name has). */
static int key_is_program(const struct held_stack *h, json_t *frames, size_t i)
{
	json_t *d = json_object_get(frames, h->keys[i]);

	if (!d || h->keys[i][0] == '[')
		return 0;
	while (!strcmp(stream_header_str(d, "kind", ""), "inline") && ++i < h->nkeys)
		d = json_object_get(frames, h->keys[i]);
	return d && strcmp(stream_header_str(d, "kind", ""), "kernel") && !c_library(stream_header_str(d, "file", ""));
}

/* The function a slice is named by: the first of its keys, leaf first, that
 * is neither the kernel's nor a C library's (the code that released the
 * lock, or that blocked); else the holder's name or how its wait ended
 * ("[timed out]"), or the stack's leaf; NULL for none (a kernel lock). */
static const char *slice_function(const struct held_stack *h, json_t *frames)
{
	if (!h->nkeys)
		return NULL;
	for (size_t i = 0; json_is_object(frames) && i < h->nkeys; i++)
		if (key_is_program(h, frames, i))
			return h->keys[i];
	return h->keys[h->named_by_root ? h->nkeys - 1 : 0];
}

static void on_stack_trailer(struct eventread *er, json_t *trailer)
{
	json_t *frames = json_object_get(trailer, "frames");

	(void)er;
	for (size_t i = 0; i < held.n; i++) {
		struct held_stack *h = &held.v[i];
		const char *f = slice_function(h, frames);
		if (!h->lock)
			h->name = marple_strdup(f ? f : "?");
		else if (f)
			h->name = marple_asprintf("%s \xe2\x86\x90 %s", h->lock, f);
		else
			h->name = marple_strdup(h->lock);
		held_free_keys(h);
	}
}

/* A thread's track, described on first use and again when the thread's name
 * changes: a thread seen before its prctl (a page fault's wait at its start)
 * is shown by the name it kept, as name_thread does for the scheduler's. */
static struct owner *thread_track(uint32_t pid, uint32_t tid, const char *name)
{
	char num[16];
	int fresh, n = snprintf(num, sizeof(num), "%u", tid);
	struct owner *o = owner_get('h', (struct mstr){ num, (size_t)n }, MSTR(""), &fresh);
	uint32_t h = (uint32_t)hashtab_hash(name, strlen(name)) | 1;

	if (o->said != h) {
		o->said = h;
		packet_begin(NO_TIME);
		size_t m = protowire_begin(&pkt, PKT_TRACK_DESCRIPTOR);
		protowire_uint(&pkt, TRACK_UUID, o->uuid);
		size_t t = protowire_begin(&pkt, TRACK_THREAD);
		protowire_uint(&pkt, THREADDESC_PID, pid);
		protowire_uint(&pkt, THREADDESC_TID, tid);
		put_name(&pkt, THREADDESC_NAME, escape_mstr_c(name));
		protowire_end(&pkt, t);
		protowire_end(&pkt, m);
		packet_end();
	}
	return o;
}

/* A slice (an instant when dur is 0) on track, its stacks as arguments. */
static void sample_slice(uint64_t track, uint64_t time, uint64_t dur, struct mstr name, const struct held_stack *h,
			 const struct timed_sample *s)
{
	char pid[16], tid[16];
	struct field args[5] = {
		{ MSTR("pid"), { pid, (size_t)snprintf(pid, sizeof(pid), "%u", s->pid) } },
		{ MSTR("tid"), { tid, (size_t)snprintf(tid, sizeof(tid), "%u", s->tid) } },
		{ h->holder ? MSTR("waiter_stack") : MSTR("stack"), escape_mstr_c(h->stack) },
	};
	size_t nargs = 3;

	if (h->holder)
		args[nargs++] = (struct field){ MSTR("holder_stack"), escape_mstr_c(h->holder) };
	if (h->lock)
		args[nargs++] = (struct field){ MSTR("lock"), escape_mstr_c(h->lock) };
	struct track_event t = { time, track, dur ? SLICE_BEGIN : INSTANT, name, args, nargs };
	write_track_event(&t);
	if (!dur)
		return;
	t = (struct track_event){ time + dur, track, SLICE_END };
	write_track_event(&t);
}

/* A sample of a timed section: a slice on its thread's track, and a lock's
 * wait a slice on a lane of its lock's track too (named by the thread). */
static void on_timed_sample(struct eventread *er, const struct event_rec *e)
{
	struct timed_sample s;
	const char *why = "names no stack record of the section before";

	if (timed_sample_parse(e, &s, &why) < 0 || s.stack >= held.n) {
		if (++samples_unnamed <= 10)
			marple_warn_at(er->file, er->line, "sample not drawn: %s", why);
		return;
	}
	struct held_stack *h = &held.v[s.stack];
	if (!h->name)	/* (its section had no trailer) */
		h->name = marple_strdup(h->thread);
	struct owner *o = thread_track(s.pid, s.tid, h->thread);
	sample_slice(o->uuid, s.time, s.dur, escape_mstr_c(h->name), h, &s);
	if (!h->lock)
		return;
	int fresh;
	char *track = marple_asprintf("%s (pid %u)", h->lock, s.pid);
	o = owner_get('l', escape_mstr_c(track), MSTR(""), &fresh);
	if (fresh)
		track_descriptor(o->uuid, 0, escape_mstr_c(track), -1, NULL);
	free(track);
	char *who = marple_asprintf("%s %u", h->thread, s.tid);
	struct lane *l = lane_take(o, s.time, MSTR("waits"), NULL);
	sample_slice(l->uuid, s.time, s.dur, escape_mstr_c(who), h, &s);
	lane_close(l, s.time + s.dur);
	free(who);
}

int main(int argc, char **argv)
{
	struct eventread in = { .on_event = on_event, .on_point = on_point, .on_section = on_section,
				.on_stack = on_stack, .on_stack_trailer = on_stack_trailer };
	int c;

	marple_init(argc, argv);
	while ((c = options_getopt(options, argc, argv)) != -1) {
		switch (c) {
		case 'o': opt.output = optarg; break;
		case 'b': opt.bundle_bytes = marple_opt_u64("-b", optarg, 1, 64 << 20); break;
		case 'h': usage(stdout); return EXIT_OK;
		default: marple_usage_try();
		}
	}
	struct outfile *of = marple_outfile_open_whole(opt.output);	/* a bad line found late leaves nothing */
	out = marple_outfile_stream(of);
	owner_ids = intern_new();
	int nin = argc - optind;
	if (eventread_files(&in, nin, argv + optind) < 0) {
		marple_outfile_abort(of);
		return EXIT_DATA;
	}
	for (size_t i = 0; i < nbundles; i++)
		bundle_flush(i);
	if (unknown_states)
		marple_warn("%llu context switches with a prev_state that is not a ps(1) letter: written without it",
			(unsigned long long)unknown_states);
	if (undrawable)
		marple_warn("%llu points not drawn: x or y out of range (negative, not a number, or too large)",
			(unsigned long long)undrawable);
	if (samples_unnamed)
		marple_warn("%llu samples of timed sections not drawn: bad, or naming no stack record",
			(unsigned long long)samples_unnamed);
	output_flush();
	held_clear();
	free(held.v);
	int rc = eventread_finish(&in, of, nin, argv + optind);
	return (undrawable || samples_unnamed) && rc == EXIT_OK ? EXIT_DATA : rc;
}
