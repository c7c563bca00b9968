/* self.h — what bpf/self.bpf.h and lib/collect/self.c share: how a collector
 * is told which processes are marple's own. */
#ifndef MARPLE_BPF_SELF_H
#define MARPLE_BPF_SELF_H

#define SELF_MAX_PIDS 256	/* pids in $MARPLE_SELF_PIDS, with the collector's own */

struct self_config {
	__u32 off;		/* 1: --include-self, nothing is left out (0 until user space
				 * fills the map: marple-* is left out from the start) */
	__u32 pgid;		/* $MARPLE_SELF_PGID, 0: none */
};

#endif
