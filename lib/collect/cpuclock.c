/* cpuclock.c — cpu-clock perf events with a BPF program on each CPU (see cpuclock.h). */
#include "cpuclock.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util.h"

struct cpuclock {
	struct bpf_link **links;
	int n;
};

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
	};

	if (ncpu <= 0)
		fatal(EXIT_DATA, "cannot count the CPUs: %s", strerror(-ncpu));
	cc->n = ncpu;
	cc->links = marple_calloc((size_t)ncpu, sizeof(*cc->links));
	for (int cpu = 0; cpu < ncpu; cpu++) {
		if (only_cpu >= 0 && cpu != only_cpu)
			continue;
		int fd = (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno == ENODEV)
				continue;	/* offline CPU */
			fatal(EXIT_DATA, "perf_event_open cpu-clock on CPU %d: %s", cpu, strerror(errno));
		}
		cc->links[cpu] = bpf_program__attach_perf_event(prog, fd);
		if (!cc->links[cpu]) {
			close(fd);
			fatal(EXIT_DATA, "attaching to the cpu-clock event of CPU %d: %s", cpu, strerror(errno));
		}
		attached++;
	}
	if (attached == 0)
		fatal(EXIT_DATA, only_cpu >= 0 ? "CPU %d is not online" : "no online CPU to sample (%d)", only_cpu);
	return cc;
}

void cpuclock_detach(struct cpuclock *cc)
{
	if (!cc)
		return;
	for (int i = 0; i < cc->n; i++)
		bpf_link__destroy(cc->links[i]);
	free(cc->links);
	free(cc);
}
