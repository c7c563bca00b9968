/* cpusched.h — the record bpf/cpusched.bpf.c writes into its per-CPU ring
 * buffers and collectors/marple-cpusched.c reads. */
#ifndef MARPLE_CPUSCHED_H
#define MARPLE_CPUSCHED_H

#define CPUSCHED_COMM_LEN 16

enum cpusched_type { CPUSCHED_SWITCH = 1, CPUSCHED_WAKEUP = 2 };

/* sched_switch: prev = task leaving, next = task switched in.
 * sched_wakeup: prev = the waker (current task), next = the task woken. */
struct cpusched_event {
	unsigned long long time;	/* bpf_ktime_get_ns() */
	unsigned int type;
	unsigned int cpu;
	unsigned int prev_pid;
	unsigned int next_pid;
	unsigned int prev_state;	/* raw task state (switch) */
	int next_prio;
	unsigned int preempt;		/* switch: prev was preempted */
	unsigned int target_cpu;	/* wakeup: CPU the task will run on */
	unsigned int next_tgid;		/* next's thread group: its process */
	char prev_comm[CPUSCHED_COMM_LEN];
	char next_comm[CPUSCHED_COMM_LEN];
};

#endif
