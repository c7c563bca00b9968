/* cpuclock.c — cpu-clock perf events with a BPF program on each CPU, and the
 * account of their samples (see cpuclock.h). */
#include "cpuclock.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "procstat.h"
#include "util.h"

struct cpuclock {
	struct bpf_link **links;
	int *fds;			/* a descriptor of each CPU's event kept for reading, or -1 */
	int n;
	int prog_fd;
	int stats_on;			/* kernel.bpf_stats_enabled was 1 at the start */
	uint64_t freq;
	uint64_t max_rate_start;
	pid_t pid, tid;			/* cpuclock_target */
	int tree;			/* cpuclock_target_tree */
	uint64_t task_ns_start;
	int only_cpu;
	int include_idle;		/* cpuclock_include_idle */
	uint64_t steal_start, idle_start;
	/* where the account starts (cpuclock_account_section moves it) */
	uint64_t clock_start, runs_start, run_ns_start, misses_start;
};

#define BPF_STATS_SYSCTL "/proc/sys/kernel/bpf_stats_enabled"

/* /proc/stat's columns (after "cpuN"), in ns: 3 idle, 4 iowait, 7 steal. */
enum { STAT_IDLE = 3, STAT_IOWAIT = 4, STAT_STEAL = 7 };

/* The sum of /proc/stat columns col and col2 (-1: none) of CPU cpu, or of
 * every CPU if cpu < 0, in ns; 0 if unreadable. */
static uint64_t proc_stat_ns(int cpu, int col, int col2)
{
	FILE *f = fopen("/proc/stat", "re");
	char line[512];
	uint64_t sum = 0;
	unsigned long long v[8];
	int n;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu", &n, &v[0], &v[1], &v[2], &v[3],
			   &v[4], &v[5], &v[6], &v[7]) == 9 && (cpu < 0 || n == cpu))
			sum += v[col] + (col2 >= 0 ? v[col2] : 0);
	if (f)
		fclose(f);
	return sum * (1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK));
}

/* A number from a one-line file; 0 if unreadable. */
static uint64_t read_u64_file(const char *path)
{
	char buf[64] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	return strtoull(buf, NULL, 10);
}

/* CPU time in ns of thread tid (schedstat) or of process pid (utime + stime,
 * in clock ticks, exited threads included); 0 if unreadable. */
static uint64_t task_cpu_ns(pid_t pid, pid_t tid)
{
	char path[64], buf[1024];
	unsigned long long utime, stime;

	if (tid) {
		snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)(pid ? pid : tid), (int)tid);
		return read_u64_file(path);
	}
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	const char *rest = procstat_read(AT_FDCWD, path, buf, sizeof(buf));
	/* after the comm: state, then fields 4..13, then utime (14) and stime (15) */
	if (!rest || sscanf(rest, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2)
		return 0;
	return (uint64_t)(utime + stime) * (1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK));
}

struct cpuclock *cpuclock_attach(struct bpf_program *prog, uint64_t freq, int only_cpu)
{
	struct cpuclock *cc = marple_calloc(1, sizeof(*cc));
	int ncpu = libbpf_num_possible_cpus(), attached = 0;
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.freq = 1,
		.sample_freq = freq,
		.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING,
	};

	if (ncpu <= 0) {
		marple_warn("cannot count the CPUs: %s", strerror(-ncpu));
		free(cc);
		return NULL;
	}
	cc->n = ncpu;
	cc->freq = freq;
	cc->prog_fd = bpf_program__fd(prog);
	/* the kernel's BPF statistics read where they are on, never switched
	 * on: they time every BPF program on the machine, and switching them
	 * patches each place the kernel runs one (a start 80 -> 68 ms of CPU
	 * without, 144 -> 113 at load 2, on the 2-CPU VM) */
	cc->stats_on = read_u64_file(BPF_STATS_SYSCTL) == 1;
	cc->max_rate_start = read_u64_file("/proc/sys/kernel/perf_event_max_sample_rate");
	cc->only_cpu = only_cpu;
	cc->steal_start = proc_stat_ns(only_cpu, STAT_STEAL, -1);
	cc->idle_start = proc_stat_ns(only_cpu, STAT_IDLE, STAT_IOWAIT);
	cc->links = marple_calloc((size_t)ncpu, sizeof(*cc->links));
	cc->fds = marple_calloc((size_t)ncpu, sizeof(*cc->fds));
	for (int cpu = 0; cpu < ncpu; cpu++)
		cc->fds[cpu] = -1;
	for (int cpu = 0; cpu < ncpu; cpu++) {
		if (only_cpu >= 0 && cpu != only_cpu)
			continue;
		int fd = (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0 && errno == ENODEV)
			continue;	/* offline CPU */
		if (fd < 0) {
			marple_warn("perf_event_open cpu-clock on CPU %d: %s", cpu, strerror(errno));
			goto fail;
		}
		cc->fds[cpu] = fcntl(fd, F_DUPFD_CLOEXEC, 0);	/* the link owns fd */
		cc->links[cpu] = bpf_program__attach_perf_event(prog, fd);
		if (!cc->links[cpu]) {
			marple_warn("attaching to the cpu-clock event of CPU %d: %s", cpu, strerror(errno));
			close(fd);
			goto fail;
		}
		attached++;
	}
	if (attached > 0)
		return cc;
	marple_warn(only_cpu >= 0 ? "CPU %d is not online" : "no online CPU to sample (%d)", only_cpu);
fail:
	cpuclock_detach(cc);
	return NULL;
}

void cpuclock_include_idle(struct cpuclock *cc)
{
	cc->include_idle = 1;
}

void cpuclock_target_tree(struct cpuclock *cc)
{
	cc->tree = 1;
}

void cpuclock_target(struct cpuclock *cc, pid_t pid, pid_t tid)
{
	cc->pid = pid;
	cc->tid = tid;
	cc->task_ns_start = task_cpu_ns(pid, tid);
}

/* The time an event counted, scaled up if it was not always on the CPU. */
static uint64_t event_ns(int fd)
{
	uint64_t v[3];	/* value, time enabled, time running */

	if (fd < 0 || read(fd, v, sizeof(v)) != (ssize_t)sizeof(v) || v[2] == 0)
		return 0;
	return v[2] < v[1] ? (uint64_t)((double)v[0] * (double)v[1] / (double)v[2]) : v[0];
}

/* The account from the last rebase to now; with rebase, now is the next
 * account's start (continuous mode: one per section). */
static void account(struct cpuclock *cc, struct cpuclock_account *out, int rebase)
{
	struct bpf_prog_info info = { 0 };
	uint32_t len = sizeof(info);
	uint64_t clock_ns = 0;

	memset(out, 0, sizeof(*out));
	out->freq = cc->freq;
	for (int i = 0; i < cc->n; i++)
		clock_ns += event_ns(cc->fds[i]);
	out->clock_ns = clock_ns > cc->clock_start ? clock_ns - cc->clock_start : 0;
	out->target = cc->pid || cc->tid || cc->tree;
	out->tree = cc->tree;
	uint64_t task_ns = out->target && !cc->tree ? task_cpu_ns(cc->pid, cc->tid) : 0;
	if (out->target)
		out->task_ns = task_ns > cc->task_ns_start ? task_ns - cc->task_ns_start : 0;
	/* cpu-clock's timer fires in idle too (the program's runs count
	 * those samples, of the idle task), but only -I counts them: like
	 * is set against like, the samples counted against the time
	 * sampled — the target's CPU time, the busy time of the sampled
	 * CPUs, or with -I all their time. */
	uint64_t idle = proc_stat_ns(cc->only_cpu, STAT_IDLE, STAT_IOWAIT);
	out->idle_ns = idle > cc->idle_start ? idle - cc->idle_start : 0;
	out->include_idle = cc->include_idle;
	out->ncpus = cc->n;
	uint64_t busy_ns = out->clock_ns > out->idle_ns ? out->clock_ns - out->idle_ns : 0;
	uint64_t sampled_ns = out->target ? out->task_ns : cc->include_idle ? out->clock_ns : busy_ns;
	out->asked = (uint64_t)((double)sampled_ns * (double)cc->freq / 1e9);
	int have_info = bpf_obj_get_info_by_fd(cc->prog_fd, &info, &len) == 0;
	out->stats_on = cc->stats_on && read_u64_file(BPF_STATS_SYSCTL) == 1;
	if (have_info && out->stats_on) {
		out->have_runs = 1;
		out->runs = info.run_cnt - cc->runs_start;
		out->run_ns = info.run_time_ns - cc->run_ns_start;
	}
	if (have_info) {
		out->recursion_misses = info.recursion_misses - cc->misses_start;	/* (counted either way) */
		out->verified_insns = info.verified_insns;
	}
	uint64_t steal = proc_stat_ns(cc->only_cpu, STAT_STEAL, -1);
	out->steal_ns = steal > cc->steal_start ? steal - cc->steal_start : 0;
	out->max_rate_start = cc->max_rate_start;
	out->max_rate_end = read_u64_file("/proc/sys/kernel/perf_event_max_sample_rate");
	if (!rebase)
		return;
	cc->clock_start = clock_ns;
	if (out->target)
		cc->task_ns_start = task_ns;
	cc->idle_start = idle;
	cc->steal_start = steal;
	cc->max_rate_start = out->max_rate_end;
	if (out->have_runs) {
		cc->runs_start = info.run_cnt;
		cc->run_ns_start = info.run_time_ns;
	}
	if (have_info)
		cc->misses_start = info.recursion_misses;
}

void cpuclock_account_section(struct cpuclock *cc, struct cpuclock_account *out)
{
	account(cc, out, 1);
}

void cpuclock_detach_account(struct cpuclock *cc, struct cpuclock_account *out)
{
	if (!cc)
		return;
	for (int i = 0; i < cc->n; i++)
		bpf_link__destroy(cc->links[i]);
	if (out)
		account(cc, out, 0);
	for (int i = 0; i < cc->n; i++)
		if (cc->fds[i] >= 0)
			close(cc->fds[i]);
	free(cc->fds);
	free(cc->links);
	free(cc);
}

void cpuclock_detach(struct cpuclock *cc)
{
	cpuclock_detach_account(cc, NULL);
}

/* The causes of missing samples that can be seen, for the stderr line. */
static void loss_causes(const struct cpuclock_account *a, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = 0;
	if (a->max_rate_end && a->max_rate_end < a->max_rate_start)
		n += (size_t)snprintf(buf + n, size - n,
				      "; the kernel lowered kernel.perf_event_max_sample_rate from %" PRIu64
				      " to %" PRIu64 " (sampling took too long: see dmesg)",
				      a->max_rate_start, a->max_rate_end);
	if (a->max_rate_end && a->max_rate_end < a->freq && n < size)
		n += (size_t)snprintf(buf + n, size - n,
				      "; kernel.perf_event_max_sample_rate (%" PRIu64 ") is below -F %" PRIu64,
				      a->max_rate_end, a->freq);
	if (a->recursion_misses && n < size)
		n += (size_t)snprintf(buf + n, size - n, "; %" PRIu64 " samples came while another BPF program ran",
				      a->recursion_misses);
	if (a->steal_ns * a->freq >= 1000000000ull && n < size)
		snprintf(buf + n, size - n,
			 "; the hypervisor kept these virtual CPUs for %.2f s (steal time), when no sample fires "
			 "(~%" PRIu64 " samples)",
			 (double)a->steal_ns / 1e9, (uint64_t)((double)a->steal_ns * (double)a->freq / 1e9));
}

/* The stderr line of a sample count off what was asked: a shortfall with
 * the causes seen (each loses samples), a surplus with none of them. */
static void warn_off(const struct cpuclock_account *a, uint64_t delivered, uint64_t not_counted, int surplus)
{
	char causes[512], own[96] = "";

	if (surplus)
		snprintf(causes, sizeof(causes), "; more than asked, and no cause of that is known here "
			 "(throttling, recursion and steal time can only lose samples)");
	else
		loss_causes(a, causes, sizeof(causes));
	if (a->self_excluded)
		snprintf(own, sizeof(own), ", %" PRIu64 " of them marple's own, left out of the stacks",
			 a->self_excluded);
	marple_warn("asked for %" PRIu64 " samples (%" PRIu64 " Hz x %.2f s of %s), got %" PRIu64 " (%+.1f%%%s)%s%s",
		a->asked, a->freq,
		(double)(a->target ? a->task_ns : a->include_idle ? a->clock_ns
			 : a->clock_ns > a->idle_ns ? a->clock_ns - a->idle_ns : 0) / 1e9,
		a->target ? "the target's CPU time" : a->include_idle ? "CPU time" : "busy CPU time", delivered,
		100.0 * ((double)delivered - (double)a->asked) / (double)a->asked, own,
		not_counted ? "; some not counted (see stack_errors)" : "",
		causes[0] ? causes : "; no cause seen (not throttled, no recursion, no steal time)");
}

void cpuclock_trailer_add(json_t *trailer, const struct cpuclock_account *a, uint64_t counted_samples,
			  uint64_t not_counted)
{
	json_t *o = json_object();
	/* not the program's runs: they include the idle CPUs' samples, which
	 * only -I asks for (a 1 s capture, half idle: "asked for 100, got 195") */
	uint64_t delivered = counted_samples > not_counted ? counted_samples - not_counted : 0;

	json_object_set_new(o, "frequency", json_integer((json_int_t)a->freq));
	json_object_set_new(o, "cpu_clock_ns", json_integer((json_int_t)a->clock_ns));
	if (a->target && !a->tree)
		json_object_set_new(o, "target_cpu_ns", json_integer((json_int_t)a->task_ns));
	json_object_set_new(o, "asked", json_integer((json_int_t)a->asked));
	json_object_set_new(o, "delivered", json_integer((json_int_t)delivered));
	json_object_set_new(o, "not_counted", json_integer((json_int_t)not_counted));
	json_object_set_new(o, "bpf_stats", json_boolean(a->stats_on));
	if (a->have_runs) {
		json_object_set_new(o, "program_runs", json_integer((json_int_t)a->runs));
		json_object_set_new(o, "program_ns", json_integer((json_int_t)a->run_ns));
	}
	json_object_set_new(o, "recursion_misses", json_integer((json_int_t)a->recursion_misses));
	if (a->verified_insns)
		json_object_set_new(o, "program_verified_insns", json_integer((json_int_t)a->verified_insns));
	json_object_set_new(o, "max_sample_rate", json_integer((json_int_t)a->max_rate_end));
	json_object_set_new(o, "steal_ns", json_integer((json_int_t)a->steal_ns));
	json_object_set_new(o, "idle_ns", json_integer((json_int_t)a->idle_ns));
	json_object_set_new(trailer, "sampling", o);
	/* The busy time comes from /proc/stat, in ticks (10 ms, each end of
	 * the capture rounded): two a CPU, and a sample a CPU, are measuring,
	 * not missing samples.  With -I a tickless kernel may not sample an
	 * idle CPU at all: anything from the busy time's samples to all the
	 * time's is right. */
	double ncpus = a->ncpus > 0 ? a->ncpus : 1;
	double slack = ((double)a->freq * 0.02 + 1) * ncpus;
	double low = (double)a->asked, high = (double)a->asked;
	if (a->include_idle && !a->target)
		low = (double)(a->clock_ns > a->idle_ns ? a->clock_ns - a->idle_ns : 0) * (double)a->freq / 1e9;
	low = fmin(low * 0.98, low - slack);
	high = fmax(high * 1.02, high + slack);
	if (a->asked >= 50 && ((double)delivered < low || (double)delivered > high))
		warn_off(a, delivered, not_counted, (double)delivered > high);
}
