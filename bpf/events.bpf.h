/* events.bpf.h — kernel side of the collectors that send one record per event
 * on a ring buffer (disklat, ipc); include after vmlinux.h and bpf_helpers.h.
 *
 * Defines, in the including program:
 *   event_records    BPF_MAP_TYPE_RINGBUF (4 MiB), read with lib/collect/eventcollector.h
 *   event_counters   per-CPU u64 counters indexed by enum events_counter (events.h)
 * and the helpers (names prefixed: a program's own maps and helpers, such as
 * a stack collector's counts, never meet these)
 *   events_count(i)            event_counters[i] += 1 on this CPU
 *   events_reserve(size)       a record to fill and bpf_ringbuf_submit(), or
 *                              NULL with the loss counted (EVENTS_LOST)
 *   events_owner(&pid, comm)   the current process: its tgid and comm[16]
 * and bpf/self.bpf.h's self_current_is_marple()/self_task_is_marple(task).
 */
#ifndef MARPLE_EVENTS_BPF_H
#define MARPLE_EVENTS_BPF_H

#include "events.h"
#include "self.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} event_records SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, EVENTS_NCOUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} event_counters SEC(".maps");

static __always_inline void events_count(__u32 i)
{
	__u64 *n = bpf_map_lookup_elem(&event_counters, &i);
	if (n)
		(*n)++;
}

static __always_inline void *events_reserve(__u64 size)
{
	void *e = bpf_ringbuf_reserve(&event_records, size, 0);
	if (!e)
		events_count(EVENTS_LOST);
	return e;
}

static __always_inline void events_owner(__u32 *pid, char *comm)
{
	*pid = (__u32)(bpf_get_current_pid_tgid() >> 32);
	bpf_get_current_comm(comm, 16);
}

#endif
