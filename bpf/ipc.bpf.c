// SPDX-License-Identifier: GPL-2.0
/* ipc.bpf.c — TCP connections between processes without kprobes.
 *
 * sock:inet_sock_set_state gives the state changes.  It runs in the context of
 * whoever moved the socket, which for the passive side is a softirq or the
 * peer's process, so the owner of each socket is remembered at the right
 * moment instead: the connecting process at CLOSE -> SYN_SENT (its connect()
 * call), the accepting process at the return of accept()/accept4() (from the
 * new fd), or failing that at its first send or receive.  Sizes come from
 * sock:sock_send_length / sock:sock_recv_length (kernel 6.3+). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "ipc.h"
#include "events.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define AF_INET 2
#define AF_INET6 10
#define IPPROTO_TCP 6
#define TCP_ESTABLISHED 1
#define TCP_SYN_SENT 2
#define TCP_SYN_RECV 3
#define TCP_CLOSE 7
#define MSG_PEEK 2

struct conn {
	__u64 start, tx, rx;
	__u32 pid, from;
	__u8 passive, have_pid, announced, pad;
	char comm[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct conn);
} conns SEC(".maps");

static __always_inline void set_owner(struct conn *c, __u32 from)
{
	events_owner(&c->pid, c->comm);
	c->have_pid = 1;
	c->from = from;
}

/* Addresses of this end (s) and the other (d) from the socket itself. */
static __always_inline void addrs_from_sk(struct ipc_event *e, struct sock *sk)
{
	e->family = BPF_CORE_READ(sk, __sk_common.skc_family);
	/* inet_sport, as the tracepoint had it: skc_num is 0 once the port is
	 * released, before the switch to TCP_CLOSE */
	e->sport = __builtin_bswap16(BPF_CORE_READ((struct inet_sock *)sk, inet_sport));
	e->dport = __builtin_bswap16(BPF_CORE_READ(sk, __sk_common.skc_dport));
	if (e->family == AF_INET6) {
		BPF_CORE_READ_INTO(&e->saddr, sk, __sk_common.skc_v6_rcv_saddr);
		BPF_CORE_READ_INTO(&e->daddr, sk, __sk_common.skc_v6_daddr);
	} else {
		BPF_CORE_READ_INTO(&e->saddr, sk, __sk_common.skc_rcv_saddr);
		BPF_CORE_READ_INTO(&e->daddr, sk, __sk_common.skc_daddr);
	}
}

static __always_inline struct ipc_event *new_event(__u32 type, struct conn *c)
{
	struct ipc_event *e = events_reserve(sizeof(*e));
	if (!e)
		return NULL;
	__builtin_memset(e, 0, sizeof(*e));
	e->time = bpf_ktime_get_ns();
	e->type = type;
	if (c) {
		e->start = c->start;
		e->tx = c->tx;
		e->rx = c->rx;
		e->pid = c->pid;
		e->from = c->from;
		e->passive = c->passive;
		__builtin_memcpy(e->comm, c->comm, sizeof(e->comm));
	}
	return e;
}

/* The passive end's owner is known now: say "accept". */
static __always_inline void announce_accept(struct sock *sk, struct conn *c)
{
	struct ipc_event *e;

	if (c->announced)
		return;
	c->announced = 1;
	e = new_event(IPC_ACCEPT, c);
	if (!e)
		return;
	addrs_from_sk(e, sk);
	bpf_ringbuf_submit(e, 0);
}

/* BTF tracepoints, not classic ones: detaching a classic tracepoint waits for
 * a grace period (~70 ms each, one after the other), which made a 1 s capture
 * last 1.4 s; a raw one does not. */
SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(on_state, struct sock *so, int old, int new)
{
	__u64 sk = (__u64)so;
	struct conn *c, zero = {};
	struct ipc_event *e;

	if (BPF_CORE_READ(so, sk_protocol) != IPPROTO_TCP)
		return 0;
	if (new == TCP_SYN_SENT) {
		/* connect(): we are in the connecting process */
		set_owner(&zero, IPC_FROM_OPEN);
		if (bpf_map_update_elem(&conns, &sk, &zero, BPF_ANY))
			events_count(EVENTS_UNTRACKED);
		return 0;
	}
	if (new == TCP_ESTABLISHED && old == TCP_SYN_RECV) {
		/* a passive connection, ready for accept(): owner not known yet */
		zero.passive = 1;
		zero.start = bpf_ktime_get_ns();
		if (bpf_map_update_elem(&conns, &sk, &zero, BPF_NOEXIST))
			events_count(EVENTS_UNTRACKED);
		return 0;
	}
	c = bpf_map_lookup_elem(&conns, &sk);
	if (!c)
		return 0;	/* opened before we started, or not TCP we follow */
	if (new == TCP_ESTABLISHED && old == TCP_SYN_SENT) {
		c->start = bpf_ktime_get_ns();
		c->announced = 1;
		e = new_event(IPC_CONNECT, c);
		if (!e)
			return 0;
	} else if (new == TCP_CLOSE) {
		if (c->passive && !c->have_pid) {
			/* closed before anyone accepted it or did I/O */
			c->from = IPC_FROM_CONTEXT;
			events_owner(&c->pid, c->comm);
		}
		e = new_event(old == TCP_SYN_SENT ? IPC_REFUSED : IPC_CLOSE, c);
		bpf_map_delete_elem(&conns, &sk);
		if (!e)
			return 0;
	} else {
		return 0;
	}
	addrs_from_sk(e, so);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

static __always_inline int on_accept(long fd)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	struct file **fds, *f = NULL;
	struct socket *so;
	struct sock *sk;
	struct conn *c;
	__u64 key;

	if (fd < 0 || fd > 1 << 20)
		return 0;
	fds = BPF_CORE_READ(t, files, fdt, fd);
	if (!fds || bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) || !f)
		return 0;
	so = BPF_CORE_READ(f, private_data);
	if (!so)
		return 0;
	sk = BPF_CORE_READ(so, sk);
	key = (__u64)sk;
	c = bpf_map_lookup_elem(&conns, &key);
	if (!c || !c->passive || c->have_pid)
		return 0;
	set_owner(c, IPC_FROM_ACCEPT);
	announce_accept(sk, c);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_accept4")
int on_accept4(struct trace_event_raw_sys_exit *ctx)
{
	return on_accept(ctx->ret);
}

SEC("tracepoint/syscalls/sys_exit_accept")
int on_accept_plain(struct trace_event_raw_sys_exit *ctx)
{
	return on_accept(ctx->ret);
}

static __always_inline int on_io(struct sock *sk, int ret, int flags, int rx)
{
	__u64 key = (__u64)sk;
	struct conn *c;

	if (BPF_CORE_READ(sk, sk_protocol) != IPPROTO_TCP)
		return 0;
	c = bpf_map_lookup_elem(&conns, &key);
	if (!c)
		return 0;
	if (c->passive && !c->have_pid) {
		set_owner(c, IPC_FROM_IO);
		announce_accept(sk, c);
	}
	if (ret > 0 && !(flags & MSG_PEEK)) {
		if (rx)
			__sync_fetch_and_add(&c->rx, ret);
		else
			__sync_fetch_and_add(&c->tx, ret);
	}
	return 0;
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(on_send, struct sock *sk, int ret, int flags)
{
	return on_io(sk, ret, flags, 0);
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(on_recv, struct sock *sk, int ret, int flags)
{
	return on_io(sk, ret, flags, 1);
}
