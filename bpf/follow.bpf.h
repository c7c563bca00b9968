/* follow.bpf.h — a target process and every process it starts, for the
 * collectors that take one (-p PID --children, -c CMD): pyenv's python3 is a
 * shell script that forks the interpreter, timeout and sudo fork the command,
 * a build forks compilers; following one pid profiled the shim and 0 records
 * of the work.  A process is followed from its fork (sched_process_fork)
 * when the forking one is, through every exec after, so the whole tree is
 * recorded from the target's start to its end.  Its own header, included by
 * the collectors that filter on a target, so the shared stacks.bpf.h keeps
 * no program that most collectors never attach.
 *
 * Defines, in the including program:
 *   follow_tgids       tgid -> 1: the processes followed; user space puts
 *                      the target in before it starts (stacksbpf_follow)
 *   follow_fork        the fork program, attached only when following
 * and the helper
 *   follow_wanted(tgid, targ_pid)   1 if tgid is the target or followed
 */
#ifndef MARPLE_FOLLOW_BPF_H
#define MARPLE_FOLLOW_BPF_H

#define FOLLOW_MAX_PIDS 16384	/* processes of one tree at once (a parallel build) */

/* Every plain hash map in bpf/ takes its memory as used (BPF_F_NO_PREALLOC):
 * a preallocated one is allocated, zeroed and linked whole when it is
 * created, before the first sample (unwind_files' 16,384 entries: 4 ms of a
 * start).  marple-memleak -K preallocates them again: its programs trace
 * the kernel's allocations, the maps' own refills among them. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, FOLLOW_MAX_PIDS);
	__type(key, __u32);
	__type(value, __u8);
} follow_tgids SEC(".maps");

SEC("raw_tp/sched_process_fork")
int BPF_PROG(follow_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	__u8 one = 1;

	/* a thread is its process's already; a full map drops the newest */
	if (ptgid != ctgid && bpf_map_lookup_elem(&follow_tgids, &ptgid))
		bpf_map_update_elem(&follow_tgids, &ctgid, &one, BPF_ANY);
	return 0;
}

static __always_inline int follow_wanted(__u32 tgid, __u32 targ_pid)
{
	return tgid == targ_pid || bpf_map_lookup_elem(&follow_tgids, &tgid) != NULL;
}

#endif
