/* marple-ipc — TCP connections between processes, as marple events.
 *
 * Traces sock:inet_sock_set_state (and accept()/accept4() returns, and
 * sock:sock_send_length/sock_recv_length for sizes) and writes one event
 * section (marple-format(5)), one track per process (its pid):
 *
 *   $ sudo marple-ipc 10 | marple-eventplot > tcp.html
 *   {"marple":1,"interface":"ipc","datatype":"event","track":"pid",...}
 *   5123000100,connect,4711,comm=curl,pid=4711,saddr=127.0.0.1,sport=40312,daddr=127.0.0.1,dport=8080,flow=127.0.0.1:40312>127.0.0.1:8080
 *   5123000900,accept,4700,comm=server,pid=4700,saddr=127.0.0.1,sport=8080,daddr=127.0.0.1,dport=40312,flow=127.0.0.1:40312>127.0.0.1:8080,from=accept,peer_comm=curl,peer_pid=4711
 *   5124000000,close,4711,comm=curl,pid=4711,...,tx=77,rx=1024,duration_ns=999100,peer_comm=server,peer_pid=4700
 *
 * Both ends of a connection share one flow= value (client address and port >
 * server address and port), so renderers can draw source -> destination; for
 * loopback connections the other end's process is named (peer_comm, peer_pid).
 */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "corebtf.h"
#include "eventcollector.h"
#include "ipc.h"
#include "ipc.skel.h"
#include "options.h"
#include "stream.h"
#include "util.h"

static struct {
	int verbose;
} opt;

static uint64_t records;

static const struct options_entry options[] = {
	{ 'v', "verbose", NULL, COLLECTOR_VERBOSE_HELP },
	OPTIONS_DESCRIBE("kind=collector\tsections=ipc:event:plot\tevery=no"
		"\tmeasures=TCP connections: connect, accept, sizes, close (events)"),
	OPTIONS_HELP,
	{ 0 }
};

static const struct options_help help = {
	.synopsis = "[-v] [DURATION]",
	.about = "Trace TCP connections (connect, accept, close, refused) between processes.\n",
	.after = "DURATION: seconds or 500ms/10s/2m; default: until SIGINT/SIGTERM.\n"
	         "No --every (continuous mode): one section per run.\n"
	         "Needs root.  Exit: 0 ok, 1 error, 2 usage.  See marple-ipc(1).\n",
};

/* ---- the two ends of each flow, to name the peer ---- */

struct end {
	char flow[112];
	char comm[17];
	unsigned int pid;
	int side;		/* 0 client (connect), 1 server (accept) */
	uint64_t time;
};

static struct end *ends;
static size_t nends, ends_cap;

static struct end *find_end(const char *flow, int side)
{
	for (size_t i = nends; i-- > 0;)
		if (ends[i].side == side && strcmp(ends[i].flow, flow) == 0)
			return &ends[i];
	return NULL;
}

static void remember(const char *flow, int side, const char *comm, unsigned int pid, uint64_t time)
{
	struct end *e = find_end(flow, side);
	if (!e) {
		/* forget ends of long-closed flows: keep the table small */
		if (nends >= 65536) {
			memmove(ends, ends + 32768, (nends - 32768) * sizeof(*ends));
			nends -= 32768;
		}
		ends = marple_grow(ends, &ends_cap, nends + 1, sizeof(*ends));
		e = &ends[nends++];
	}
	snprintf(e->flow, sizeof(e->flow), "%s", flow);
	snprintf(e->comm, sizeof(e->comm), "%s", comm);
	e->pid = pid;
	e->side = side;
	e->time = time;
}

static void addr_text(char *buf, size_t len, unsigned short family, const unsigned char *a)
{
	if (family == 10) {
		char t[INET6_ADDRSTRLEN];
		inet_ntop(AF_INET6, a, t, sizeof(t));
		snprintf(buf, len, "%s", t);
	} else {
		inet_ntop(AF_INET, a, buf, (socklen_t)len);
	}
}

static int on_event(void *ctx, void *data, size_t size)
{
	static const char *const names[] = { "", "connect", "accept", "close", "refused" };
	static const char *const froms[] = { "open", "accept", "io", "context" };
	const struct ipc_event *e = data;
	char comm[17], pid[16], sa[48], da[48], sp[8], dp[8], flow[112], track[16];
	char tx[24], rx[24], dur[24], ppid[16];
	struct field f[16];
	size_t n = 0;

	if (size < sizeof(*e) || e->type < IPC_CONNECT || e->type > IPC_REFUSED)
		return 0;
	memcpy(comm, e->comm, 16);
	comm[16] = 0;
	snprintf(pid, sizeof(pid), "%u", e->pid);
	snprintf(track, sizeof(track), "%u", e->pid);
	addr_text(sa, sizeof(sa), e->family, e->saddr);
	addr_text(da, sizeof(da), e->family, e->daddr);
	snprintf(sp, sizeof(sp), "%u", e->sport);
	snprintf(dp, sizeof(dp), "%u", e->dport);
	const char *l = e->family == 10 ? "[" : "", *r = e->family == 10 ? "]" : "";
	/* client end first; the passive end sees the client as its peer */
	int side = e->passive ? 1 : 0;
	if (side == 0)
		snprintf(flow, sizeof(flow), "%s%s%s:%u>%s%s%s:%u", l, sa, r, e->sport, l, da, r, e->dport);
	else
		snprintf(flow, sizeof(flow), "%s%s%s:%u>%s%s%s:%u", l, da, r, e->dport, l, sa, r, e->sport);

	f[n++] = (struct field){ MSTR("comm"), escape_mstr_c(comm) };
	f[n++] = (struct field){ MSTR("pid"), escape_mstr_c(pid) };
	f[n++] = (struct field){ MSTR("saddr"), escape_mstr_c(sa) };
	f[n++] = (struct field){ MSTR("sport"), escape_mstr_c(sp) };
	f[n++] = (struct field){ MSTR("daddr"), escape_mstr_c(da) };
	f[n++] = (struct field){ MSTR("dport"), escape_mstr_c(dp) };
	f[n++] = (struct field){ MSTR("flow"), escape_mstr_c(flow) };
	if (side == 1)
		f[n++] = (struct field){ MSTR("from"), escape_mstr_c(froms[e->from & 3]) };
	if (e->type == IPC_CLOSE) {
		snprintf(tx, sizeof(tx), "%llu", e->tx);
		snprintf(rx, sizeof(rx), "%llu", e->rx);
		snprintf(dur, sizeof(dur), "%llu", e->start && e->time > e->start ? e->time - e->start : 0ull);
		f[n++] = (struct field){ MSTR("tx"), escape_mstr_c(tx) };
		f[n++] = (struct field){ MSTR("rx"), escape_mstr_c(rx) };
		f[n++] = (struct field){ MSTR("duration_ns"), escape_mstr_c(dur) };
	}
	if (e->type == IPC_CONNECT || e->type == IPC_ACCEPT)
		remember(flow, side, comm, e->pid, e->time);
	struct end *peer = find_end(flow, !side);
	if (peer && e->type != IPC_REFUSED) {
		snprintf(ppid, sizeof(ppid), "%u", peer->pid);
		f[n++] = (struct field){ MSTR("peer_comm"), escape_mstr_c(peer->comm) };
		f[n++] = (struct field){ MSTR("peer_pid"), escape_mstr_c(ppid) };
	}
	stream_write_event(stdout, e->time, escape_mstr_c(names[e->type]), escape_mstr_c(track), f, n);
	records++;
	return 0;
}

int main(int argc, char **argv)
{
	struct ipc_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	json_t *hdr = NULL;
	uint64_t duration;
	int c, err, status = EXIT_DATA, sizes, accepts;

	marple_init(argc, argv);
	while ((c = options_getopt(options, argc, argv)) != -1) {
		switch (c) {
		case 'v': opt.verbose++; break;
		case 'h': options_help(stdout, options, &help); return EXIT_OK;
		default: marple_usage_try();
		}
	}
	duration = collector_duration(argc, argv, optind);
	if (collector_start(opt.verbose > 1) < 0)
		return EXIT_DATA;

	if (!collector_tracepoint_exists("sock", "inet_sock_set_state"))
		marple_fatal(EXIT_DATA, "this kernel has no sock:inet_sock_set_state tracepoint (Linux 4.16+)");
	sizes = collector_tracepoint_exists("sock", "sock_send_length") &&
		collector_tracepoint_exists("sock", "sock_recv_length");
	accepts = collector_tracepoint_exists("syscalls", "sys_exit_accept4") &&
		  collector_tracepoint_exists("syscalls", "sys_exit_accept");
	hdr = stream_section_header_new("ipc", DATATYPE_EVENT);
	skel = ipc_bpf__open_opts(corebtf_opts(ipc_bpf__elf_bytes));
	if (!skel) {
		marple_warn("cannot open the BPF object");
		goto cleanup;
	}
	bpf_program__set_autoload(skel->progs.on_send, sizes);
	bpf_program__set_autoload(skel->progs.on_recv, sizes);
	bpf_program__set_autoload(skel->progs.on_accept4, accepts);
	bpf_program__set_autoload(skel->progs.on_accept_plain, accepts);
	if ((err = ipc_bpf__load(skel)) || (err = ipc_bpf__attach(skel))) {
		marple_warn("cannot trace TCP state changes: %s", collector_strerror(err));
		goto cleanup;
	}
	if (!sizes)
		marple_warn("no sock:sock_send_length/sock_recv_length tracepoints on this kernel "
			"(Linux 6.3+): byte counts are not available (tx=0, rx=0)");
	if (!accepts)
		marple_warn("no syscalls:sys_exit_accept4 tracepoint: the accepting process is "
			"taken from its first send or receive");
	if (opt.verbose)
		marple_warn("attached sock:inet_sock_set_state%s%s", accepts ? ", accept()/accept4() exits" : "",
			sizes ? ", sock:sock_send_length/sock_recv_length" : "");
	rb = eventcollector_ring(bpf_map__fd(skel->maps.event_records), on_event);
	if (!rb)
		goto cleanup;
	json_object_set_new(hdr, "units", json_pack("{s:s}", "time", "ns"));
	json_object_set_new(hdr, "track", json_string("pid"));
	json_object_set_new(hdr, "labels", json_pack("{s:s,s:s}", "track", "process", "flow", "TCP connection"));
	json_object_set_new(hdr, "options", json_pack("{s:b,s:b}", "sizes", sizes, "accept_syscalls", accepts));
	if (stream_write_json(stdout, hdr) < 0)
		goto cleanup;
	collector_ready(duration);
	if (eventcollector_poll(rb, 1) < 0)
		goto cleanup;
	ipc_bpf__detach(skel);
	ring_buffer__consume(rb);
	if (eventcollector_trailer(stdout, bpf_map__fd(skel->maps.event_counters), NULL, records, "events",
				   "connections not followed (too many open)", NULL, opt.verbose) < 0)
		goto cleanup;
	status = EXIT_OK;
cleanup:
	ring_buffer__free(rb);
	ipc_bpf__destroy(skel);
	json_decref(hdr);
	free(ends);
	marple_close_stdout();
	return status;
}
