/* self.bpf.h — keep marple's own processes out of what a collector records
 * (included by stacks.bpf.h and events.bpf.h, so every collector has it;
 * include after vmlinux.h and bpf_core_read.h).
 *
 * A task is marple's own when
 *   - its comm is "marple" (the driver, a shell script, and its subshells) or
 *     begins with "marple-" (every collector, filter and renderer), or
 *   - its process is in self_tgids: the collector itself and the pids named in
 *     $MARPLE_SELF_PIDS (the driver's and the supervisor's), or
 *   - its process group is self_config.pgid ($MARPLE_SELF_PGID: a supervisor
 *     that gives itself and its collectors a process group of their own).
 * User space fills the maps after load (lib/collect/selffilter.h:
 * selffilter_setup); with --include-self it sets self_config.off and nothing
 * is left out.
 *
 * Defines, in the including program:
 *   self_config     one struct self_config (self.h)
 *   self_tgids      tgid -> 1
 *   self_excluded   per-CPU u64: the events and samples left out
 *   self_last       per-CPU: the processes last found not marple's, a slot a pid
 * and the helpers
 *   self_task_is_marple(task)   1 (and counted) if task is marple's own
 *   self_current_is_marple()    the same for the current task
 */
#ifndef MARPLE_SELF_BPF_H
#define MARPLE_SELF_BPF_H

#include "self.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct self_config);
} self_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, SELF_MAX_PIDS);
	__type(key, __u32);
	__type(value, __u8);
} self_tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} self_excluded SEC(".maps");

/* The processes this CPU last found not marple's, a slot each by their
 * pid's low bits, and the events of each left before it is looked up
 * again: a hash lookup in self_tgids cost each sample of every process
 * about what the count map's does (bench callstack-bpf's counts stage:
 * 700-1,500 ns a timed sample on a loaded machine), and a CPU sharing its
 * time among a build's processes looked 47% of its samples up with the
 * last one alone remembered, 9-16% with these; a recheck finds a pid added
 * or a process group joined since. */
#define SELF_RECHECK 16
#define SELF_MEMOS 64
struct self_last {
	__u32 tgid;
	__u32 left;
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct self_last[SELF_MEMOS]);
} self_last SEC(".maps");

/* "marple" or "marple-..." as the first 8 bytes of a comm (little endian) */
static __always_inline int self_comm_is_marple(__u64 first8)
{
	__u8 seventh = (__u8)(first8 >> 48);
	return (first8 & 0xffffffffffffull) == 0x656c7072616dull && (seventh == 0 || seventh == '-');
}

/* Is the task whose comm begins with first8, of process tgid, marple's own
 * (t: for its process group)? */
static __always_inline int self_is_marple(const struct self_config *cfg, __u64 first8, __u32 tgid,
					  struct task_struct *t)
{
	__u32 zero = 0;

	if (!self_comm_is_marple(first8)) {
		struct self_last *last = bpf_map_lookup_elem(&self_last, &zero);
		if (last)
			last += tgid & (SELF_MEMOS - 1);
		if (last && last->tgid == tgid && last->left) {
			last->left--;
			return 0;
		}
		if (!bpf_map_lookup_elem(&self_tgids, &tgid) &&
		    (!cfg->pgid || BPF_CORE_READ(t, signal, pids[PIDTYPE_PGID], numbers[0].nr) != (int)cfg->pgid)) {
			if (last) {
				last->tgid = tgid;
				last->left = SELF_RECHECK - 1;
			}
			return 0;
		}
	}
	__u64 *n = bpf_map_lookup_elem(&self_excluded, &zero);
	if (n)
		(*n)++;
	return 1;
}

static __always_inline int self_task_is_marple(struct task_struct *t)
{
	__u32 zero = 0;
	struct self_config *cfg = bpf_map_lookup_elem(&self_config, &zero);
	__u64 first8 = 0;

	if (!cfg || cfg->off || !t)
		return 0;
	bpf_core_read(&first8, sizeof(first8), &t->comm);
	return self_is_marple(cfg, first8, BPF_CORE_READ(t, tgid), t);
}

/* The same for the current task, whose comm and tgid are loads from its
 * BTF pointer, not two probe reads (helper calls) at every sample or event:
 * the comm's line is the one a stack collector's key reads next. */
static __always_inline int self_current_is_marple(void)
{
	__u32 zero = 0;
	struct self_config *cfg = bpf_map_lookup_elem(&self_config, &zero);
	struct task_struct *t = bpf_get_current_task_btf();

	if (!cfg || cfg->off)
		return 0;
	return self_is_marple(cfg, *(__u64 *)&t->comm[0], (__u32)t->tgid, t);
}

#endif
