/* disklat.h — the record bpf/disklat.bpf.c writes and collectors/marple-disklat.c
 * reads, and the issued request it remembers until the completion (read at
 * the end for the requests still in flight). */
#ifndef MARPLE_DISKLAT_H
#define MARPLE_DISKLAT_H

struct disklat_event {
	unsigned long long issue_ns;
	unsigned long long complete_ns;
	unsigned int pid;
	unsigned int dev_major, dev_minor;
	unsigned int bytes;
	unsigned int op;	/* REQ_OP_*: 0 read, 1 write, 2 flush, 3 discard, ... */
	unsigned int error;
	char comm[16];
};

struct disklat_start {
	unsigned long long ts;
	unsigned int pid, bytes, op, major, minor;
	unsigned int requeued;	/* put back since its issue (block_rq_requeue) */
	char comm[16];
};

#endif
