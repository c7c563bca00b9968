/* vmaiter.c — does this kernel let a perf-event program walk a task's VMAs
 * with the open-coded iterator (see vmaiter.h)? */
#include "vmaiter.h"

#include <bpf/libbpf.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util.h"
#include "vmaiter.skel.h"

int vmaiter_works(struct unwindtablescache *cache)
{
	static int works = -1;

	if (works >= 0)
		return works;
	if (unwindtablescache_kernel_fact(cache, "vma-iterator", &works) == 0)
		return works;
	works = 0;
	libbpf_print_fn_t old = libbpf_set_print(NULL);	/* a refusal is an answer, not an error */
	struct vmaiter_bpf *probe = vmaiter_bpf__open_and_load();
	libbpf_set_print(old);
	struct perf_event_attr attr = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(attr),
					.config = PERF_COUNT_SW_TASK_CLOCK, .sample_period = 100000 };
	int fd = probe ? (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC) : -1;
	struct bpf_link *link = fd >= 0 ? bpf_program__attach_perf_event(probe->progs.vmaiter_probe, fd) : NULL;
	int answered = !probe;	/* a program refused is an answer; a probe cut short is not */
	if (link) {
		volatile __u64 *walked = &probe->bss->walked, *refused = &probe->bss->refused;
		uint64_t until = marple_thread_cpu_ns() + 20000000;	/* 20 ms of CPU at most */
		while (*walked + *refused < 4 && marple_thread_cpu_ns() < until)
			;
		works = *walked > 0;
		answered = works || *walked + *refused >= 4;
		bpf_link__destroy(link);
	}
	if (fd >= 0)
		close(fd);
	vmaiter_bpf__destroy(probe);
	if (answered)
		unwindtablescache_kernel_fact_set(cache, "vma-iterator", works);
	return works;
}
