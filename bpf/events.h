/* events.h — the counters of the collectors that send one record per event on
 * a ring buffer (bpf/events.bpf.h), as both sides index them. */
#ifndef MARPLE_EVENTS_H
#define MARPLE_EVENTS_H

enum events_counter {
	EVENTS_LOST,			/* records lost: the ring buffer was full */
	EVENTS_UNTRACKED,		/* the program's own table was full */
	EVENTS_NCOUNTERS
};

#endif
