/* marple-trace — marple event sections -> Chrome trace-event JSON (Perfetto UI,
 * chrome://tracing).
 *
 * sched_switch records become, per CPU, slices of the task that ran from one
 * switch to the next; other events become instants on their track (a CPU, or
 * a process for pid tracks); events sharing a flow= field (marple-ipc's
 * connections) are joined by flow arrows from the first to the second.
 *
 *   $ sudo marple-cpusched 5 | marple-trace > sched.json   # open in ui.perfetto.dev
 *   {"traceEvents":[
 *   {"ph":"X","pid":1000000,"tid":0,"ts":12.345,"dur":3.21,"name":"bash (311)",...},
 *   ...
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "eventread.h"
#include "options.h"
#include "stream.h"
#include "util.h"
#include "xml.h"

#define CPU_PID 1000000000	/* the synthetic process holding one thread per CPU */
#define TRACK_PID 1000000001	/* ... and the one holding other named tracks */

static struct {
	int idle;
	const char *output;
} opt;

static const struct options_entry options[] = {
	{ 'i', "idle", NULL, "also draw the idle task (pid 0) as slices" },
	OPTIONS_OUTPUT,
	OPTIONS_DESCRIBE("kind=renderer\tdisplay=trace,chrome-trace\treads=event\text=json"),
	OPTIONS_HELP,
	{ 0 }
};

static const struct options_help help = {
	.synopsis = "[--idle] [-o FILE] [FILE...]",
	.about = "Convert marple event sections to Chrome trace-event JSON for the Perfetto UI.\n",
	.after = "With no FILE, or FILE '-', read stdin.  Exit: 0 ok, 1 bad or no input, 2 usage.\n"
	         "See marple-trace(1).\n",
};

static FILE *out;
static int first_event = 1;
static struct eventread in;	/* in.t0: the time origin; in.end: the end of the capture */

/* what runs on each CPU since its last switch */
struct running {
	int declared;	/* its track named: only CPUs the capture has events of get one */
	int valid;
	uint64_t since;
	char *name;
	char *pid;
};
static struct running *cpus;
static size_t ncpus, cpus_cap;	/* ncpus: highest CPU seen + 1 */
static int cpu_process_named, track_process_named;

/* named tracks that are neither CPUs nor pids */
static char **tracks;
static size_t ntracks, tracks_cap;

/* pids seen, to name them once */
static long *pids_named;
static size_t npids, pids_cap;

/* flows: first event seen -> arrow to the next one */
struct flow {
	char *key;
	unsigned long id;
	int done;
};
static struct flow *flows;
static size_t nflows, flows_cap;

#define TRACE_HEAD "{\"displayTimeUnit\":\"ns\",\"traceEvents\":["

/* Every output goes through here: the file's head comes with the first
 * event, so an input that fails before it leaves no output at all. */
static void begin_event(void)
{
	if (first_event)
		fputs(TRACE_HEAD, out);
	fputs(first_event ? "\n" : ",\n", out);
	first_event = 0;
}

static void put_ts(uint64_t t)
{
	/* microseconds with ns precision */
	int64_t d = (int64_t)(t - in.t0);
	if (d < 0) {
		fputc('-', out);
		d = -d;
	}
	fprintf(out, "%lld.%03lld", (long long)(d / 1000), (long long)(d % 1000));
}

static void meta(const char *what, long pid, long tid, const char *name, size_t len)
{
	begin_event();
	fprintf(out, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%ld,\"tid\":%ld,\"args\":{\"name\":", what, pid, tid);
	xml_js_string_write(out, name, len);
	fputs("}}", out);
}

static int cpu_of(struct mstr track, long *cpu)
{
	uint64_t v;
	if (eventread_track_cpu(track, &v) < 0 || v > 65535)
		return 0;
	*cpu = (long)v;
	return 1;
}

/* The synthetic process and thread of a CPU, named when its first event comes. */
static void declare_cpu(long cpu)
{
	if ((size_t)cpu >= ncpus) {
		cpus = marple_grow(cpus, &cpus_cap, (size_t)cpu + 1, sizeof(*cpus));
		memset(cpus + ncpus, 0, ((size_t)cpu + 1 - ncpus) * sizeof(*cpus));
		ncpus = (size_t)cpu + 1;
	}
	if (cpus[cpu].declared)
		return;
	if (!cpu_process_named)
		meta("process_name", CPU_PID, 0, "CPUs", 4);
	cpu_process_named = cpus[cpu].declared = 1;
	char nm[32];
	int n = snprintf(nm, sizeof(nm), "cpu%ld", cpu);
	meta("thread_name", CPU_PID, cpu, nm, (size_t)n);
	begin_event();
	fprintf(out, "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%d,\"tid\":%ld,"
		"\"args\":{\"sort_index\":%ld}}", CPU_PID, cpu, cpu);
}

/* pid and tid for a track; names it on first use */
static void where(struct mstr track, const struct mstr *comm, long *pid, long *tid)
{
	long cpu;
	uint64_t v;

	if (cpu_of(track, &cpu)) {
		declare_cpu(cpu);
		*pid = CPU_PID;
		*tid = cpu;
		return;
	}
	if (marple_parse_u64_span(track.s, track.len, &v) == 0 && v < 1000000000) {
		*pid = *tid = (long)v;
		for (size_t i = 0; i < npids; i++)
			if (pids_named[i] == (long)v)
				return;
		pids_named = marple_grow(pids_named, &pids_cap, npids + 1, sizeof(long));
		pids_named[npids++] = (long)v;
		if (comm) {
			meta("process_name", *pid, *pid, comm->s, comm->len);
			meta("thread_name", *pid, *pid, comm->s, comm->len);
		}
		return;
	}
	*pid = TRACK_PID;
	for (size_t i = 0; i < ntracks; i++)
		if (strlen(tracks[i]) == track.len && memcmp(tracks[i], track.s, track.len) == 0) {
			*tid = (long)i;
			return;
		}
	if (!track_process_named)
		meta("process_name", TRACK_PID, 0, "tracks", 6);
	track_process_named = 1;
	tracks = marple_grow(tracks, &tracks_cap, ntracks + 1, sizeof(char *));
	tracks[ntracks] = marple_strndup(track.s, track.len);
	*tid = (long)ntracks;
	meta("thread_name", TRACK_PID, *tid, track.s, track.len);
	ntracks++;
}

static void args(const struct event_rec *e)
{
	fputs(",\"args\":{", out);
	for (size_t i = 0; i < e->nfields; i++) {
		if (i)
			fputc(',', out);
		xml_js_string_write(out, e->fields[i].key.s, e->fields[i].key.len);
		fputc(':', out);
		xml_js_string_write(out, e->fields[i].value.s, e->fields[i].value.len);
	}
	fputc('}', out);
}

static void end_slice(long cpu, uint64_t t, const struct mstr *state)
{
	struct running *r = &cpus[cpu];
	if (!r->valid)
		return;
	if (t >= r->since && (opt.idle || strcmp(r->pid, "0") != 0)) {
		begin_event();
		fprintf(out, "{\"ph\":\"X\",\"pid\":%d,\"tid\":%ld,\"ts\":", CPU_PID, cpu);
		put_ts(r->since);
		fprintf(out, ",\"dur\":%llu.%03llu,\"name\":", (unsigned long long)((t - r->since) / 1000),
			(unsigned long long)((t - r->since) % 1000));
		xml_js_string_cstr(out, r->name);
		fputs(",\"cat\":\"sched\",\"args\":{\"pid\":", out);
		xml_js_string_cstr(out, r->pid);
		if (state) {
			fputs(",\"end_state\":", out);
			xml_js_string_write(out, state->s, state->len);
		}
		fputs("}}", out);
	}
	free(r->name);
	free(r->pid);
	r->valid = 0;
}

static void on_switch(const struct event_rec *e, long cpu)
{
	const struct mstr *comm = stream_fields_get(e->fields, e->nfields, "next_comm");
	const struct mstr *pid = stream_fields_get(e->fields, e->nfields, "next_pid");
	if (!comm)
		comm = stream_fields_get(e->fields, e->nfields, "comm");
	if (!pid)
		pid = stream_fields_get(e->fields, e->nfields, "pid");
	end_slice(cpu, e->time, stream_fields_get(e->fields, e->nfields, "prev_state"));
	struct running *r = &cpus[cpu];
	char *name = marple_malloc((comm ? comm->len : 1) + (pid ? pid->len : 1) + 4);
	size_t n = 0;
	if (comm) {
		memcpy(name, comm->s, comm->len);
		n = comm->len;
	}
	if (pid) {
		n += (size_t)sprintf(name + n, "%s(", n ? " " : "");
		memcpy(name + n, pid->s, pid->len);
		n += pid->len;
		name[n++] = ')';
	}
	name[n] = 0;
	r->valid = 1;
	r->since = e->time;
	r->name = name;
	r->pid = pid ? marple_strndup(pid->s, pid->len) : marple_strdup("?");
}

static void on_event(struct eventread *er, const struct event_rec *e)
{
	const struct mstr *comm = stream_fields_get(e->fields, e->nfields, "comm");
	const struct mstr *flow = stream_fields_get(e->fields, e->nfields, "flow");
	long pid, tid, cpu;

	(void)er;
	where(e->track, comm, &pid, &tid);
	if (escape_mstr_eq(e->type, "sched_switch") && cpu_of(e->track, &cpu)) {
		on_switch(e, cpu);
		return;
	}
	begin_event();
	/* events in a flow are 1 us slices: flow arrows bind to slices */
	if (flow)
		fprintf(out, "{\"ph\":\"X\",\"dur\":1,\"pid\":%ld,\"tid\":%ld,\"ts\":", pid, tid);
	else
		fprintf(out, "{\"ph\":\"i\",\"s\":\"t\",\"pid\":%ld,\"tid\":%ld,\"ts\":", pid, tid);
	put_ts(e->time);
	fputs(",\"name\":", out);
	xml_js_string_write(out, e->type.s, e->type.len);
	fputs(",\"cat\":\"event\"", out);
	args(e);
	fputc('}', out);
	if (!flow)
		return;
	for (size_t i = 0; i < nflows; i++)
		if (strlen(flows[i].key) == flow->len && memcmp(flows[i].key, flow->s, flow->len) == 0) {
			if (flows[i].done)
				return;
			flows[i].done = 1;
			begin_event();
			fprintf(out, "{\"ph\":\"f\",\"bp\":\"e\",\"id\":%lu,\"pid\":%ld,\"tid\":%ld,\"ts\":", flows[i].id,
				pid, tid);
			put_ts(e->time);
			fputs(",\"name\":\"flow\",\"cat\":\"flow\"}", out);
			return;
		}
	flows = marple_grow(flows, &flows_cap, nflows + 1, sizeof(*flows));
	flows[nflows] = (struct flow){ marple_strndup(flow->s, flow->len), nflows + 1, 0 };
	begin_event();
	fprintf(out, "{\"ph\":\"s\",\"id\":%lu,\"pid\":%ld,\"tid\":%ld,\"ts\":", flows[nflows].id, pid, tid);
	put_ts(e->time);
	fputs(",\"name\":\"flow\",\"cat\":\"flow\"}", out);
	nflows++;
}

int main(int argc, char **argv)
{
	int c;

	marple_init(argc, argv);
	while ((c = options_getopt(options, argc, argv)) != -1) {
		switch (c) {
		case 'i': opt.idle = 1; break;
		case 'o': opt.output = optarg; break;
		case 'h': options_help(stdout, options, &help); return EXIT_OK;
		default: marple_usage_try();
		}
	}
	struct outfile *of = marple_outfile_open_whole(opt.output);	/* an input found unusable at its end leaves nothing */
	if (!of)
		return EXIT_DATA;
	out = marple_outfile_stream(of);
	in.on_event = on_event;
	int nin = argc - optind;
	if (eventread_files(&in, nin, argv + optind) < 0 || eventread_check(&in, nin, argv + optind) < 0) {
		marple_outfile_abort(of);
		return EXIT_DATA;
	}
	/* the last task on each CPU ran until the end of the capture */
	for (size_t i = 0; i < ncpus; i++)
		end_slice((long)i, in.end, NULL);
	if (first_event)	/* every event writes something: this is only a safeguard */
		fputs(TRACE_HEAD, out);
	fputs("\n]}\n", out);
	return eventread_finish(&in, of, nin, argv + optind);
}
