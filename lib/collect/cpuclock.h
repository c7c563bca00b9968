/* cpuclock.h — attach a BPF perf_event program to the cpu-clock software
 * event of every online CPU (this machine has no hardware PMU), and account
 * for the samples: how many were asked for, how many the program saw.
 *
 *   struct cpuclock *cc = cpuclock_attach(skel->progs.do_sample, 99, -1);   // NULL on failure
 *   cpuclock_target(cc, pid, 0);     // optional: what -p/-t samples (its CPU time, from now)
 *   ...
 *   struct cpuclock_account a;
 *   cpuclock_detach_account(cc, &a);  // stop sampling before draining the maps
 *   cpuclock_trailer_add(trailer, &a, samples_of_the_target, not_counted);  // "sampling": {...}
 *
 * Samples asked for: the frequency times the time sampled — with a target,
 * the target's CPU time (/proc/PID/stat utime+stime of a process, threads
 * that exited included; /proc/PID/task/TID/schedstat of a thread); else the
 * busy time of the sampled CPUs (the cpu-clock time the events count less
 * /proc/stat's idle and iowait), or with cpuclock_include_idle all of it.
 * Samples seen: those the caller's program counted (the target's, the busy
 * CPUs', or with idle all).  Not its runs, from the kernel's BPF statistics
 * where kernel.bpf_stats_enabled is on (never switched on here: it times
 * every BPF program on the machine) and shown with their run time: the
 * timer fires in idle too, and the program runs there to return at once.
 * Causes of loss that can be seen are reported: the kernel lowering
 * kernel.perf_event_max_sample_rate (it does when sampling takes too long:
 * "perf: interrupt took too long" in dmesg) below the frequency, samples that
 * came while another BPF program ran on the CPU (recursion misses), and in a
 * virtual machine the steal time of the sampled CPUs (the hypervisor ran
 * something else: the guest's clock goes on, its timer cannot fire).
 */
#ifndef MARPLE_CPUCLOCK_H
#define MARPLE_CPUCLOCK_H

#include <jansson.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_program;
struct cpuclock;

struct cpuclock_account {
	uint64_t freq;			/* samples a second asked for */
	uint64_t clock_ns;		/* cpu-clock time of the sampled CPUs, from the events */
	int target;			/* 1: a process or thread (task_ns), 0: whole CPUs */
	int tree;			/* cpuclock_target_tree: a target whose CPU time is not known */
	uint64_t task_ns;		/* the target's CPU time while sampling */
	uint64_t asked;			/* freq x (task_ns or clock_ns) */
	int stats_on;			/* kernel.bpf_stats_enabled on from start to end */
	int have_runs;			/* ... and the program's statistics read */
	uint64_t runs, run_ns;		/* the program's runs and their time */
	uint64_t recursion_misses;	/* runs skipped: another BPF program was running */
	uint64_t verified_insns;	/* instructions the verifier walked at load: its cost */
	uint64_t max_rate_start, max_rate_end;	/* kernel.perf_event_max_sample_rate, 0 unknown */
	uint64_t steal_ns;		/* the sampled CPUs' steal time (/proc/stat) while sampling */
	uint64_t idle_ns;		/* and their idle + iowait time */
	int include_idle;		/* cpuclock_include_idle: the idle time is asked for too */
	int ncpus;			/* the CPUs sampled */
	uint64_t self_excluded;		/* set by the caller: of the counted samples, those
					 * of marple's own processes, left out of its stacks
					 * (their CPU time is in the busy time) */
};

/* freq samples a second on each CPU; only_cpu >= 0 restricts to that CPU.
 * Offline CPUs are skipped.  NULL with a message said when one cannot be
 * attached or none is online (the collector exits 1). */
struct cpuclock *cpuclock_attach(struct bpf_program *prog, uint64_t freq, int only_cpu);
/* -I: the idle task's samples are counted, so asked for too (all the time
 * sampled, not only the busy time). */
void cpuclock_include_idle(struct cpuclock *cc);
/* Samples asked for are the CPU time of process pid (tid 0) or of thread tid,
 * counted from now. */
void cpuclock_target(struct cpuclock *cc, pid_t pid, pid_t tid);
/* A process and the processes it starts (--children): their CPU time is not
 * known (they come and go), so nothing is asked for and nothing checked. */
void cpuclock_target_tree(struct cpuclock *cc);
/* Continuous mode: the account since the last section (or the start), while
 * sampling goes on; the next counts from now. */
void cpuclock_account_section(struct cpuclock *cc, struct cpuclock_account *out);
/* Stop sampling, and with out fill in the account (since the last
 * cpuclock_account_section).  cc is freed. */
void cpuclock_detach_account(struct cpuclock *cc, struct cpuclock_account *out);
void cpuclock_detach(struct cpuclock *cc);
/* "sampling": {...} in the trailer.  Delivered: the samples the program
 * counted (counted_samples: the target's, else the busy CPUs', with
 * cpuclock_include_idle the idle task's too) less not_counted (samples it
 * could not aggregate: map or ring buffer full).  One line on stderr when
 * delivered is more than 2% off asked, with the causes seen that can explain
 * it (all lose samples: none explains a surplus), and how many of those
 * delivered were a->self_excluded. */
void cpuclock_trailer_add(json_t *trailer, const struct cpuclock_account *a, uint64_t counted_samples,
			  uint64_t not_counted);

#endif
