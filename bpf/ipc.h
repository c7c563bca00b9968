/* ipc.h — the record bpf/ipc.bpf.c writes and collectors/marple-ipc.c reads. */
#ifndef MARPLE_IPC_H
#define MARPLE_IPC_H

enum ipc_type { IPC_CONNECT = 1, IPC_ACCEPT, IPC_CLOSE, IPC_REFUSED };

/* How the process of an accept was found. */
enum ipc_from { IPC_FROM_OPEN = 0, IPC_FROM_ACCEPT, IPC_FROM_IO, IPC_FROM_CONTEXT };

struct ipc_event {
	unsigned long long time;
	unsigned long long start;	/* established (close: duration = time - start) */
	unsigned long long tx, rx;	/* bytes sent and received (close) */
	unsigned int type;
	unsigned int pid;		/* process (tgid) owning this end */
	unsigned int from;		/* enum ipc_from */
	unsigned int passive;		/* this end accepted the connection */
	unsigned short family;		/* AF_INET, AF_INET6 */
	unsigned short sport, dport;	/* this end, the other end */
	unsigned char saddr[16], daddr[16];
	char comm[16];
};

#endif
