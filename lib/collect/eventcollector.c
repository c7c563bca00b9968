/* eventcollector.c — ring buffer, poll loop and trailer of the event
 * collectors (see eventcollector.h). */
#include "eventcollector.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "bpfmap.h"
#include "collector.h"
#include "corebtf.h"
#include "events.h"
#include "selffilter.h"
#include "stream.h"
#include "util.h"

struct ring_buffer *eventcollector_ring(int events_fd, int (*on_event)(void *ctx, void *data, size_t size))
{
	struct ring_buffer *rb = ring_buffer__new(events_fd, on_event, NULL, NULL);

	if (!rb)
		marple_warn("cannot open the ring buffer: %s", strerror(errno));
	return rb;
}

int eventcollector_poll(struct ring_buffer *rb, int flush)
{
	while (!collector_should_stop()) {
		int err = ring_buffer__poll(rb, collector_poll_timeout_ms(100));
		if (err < 0 && err != -EINTR) {
			marple_warn("reading the ring buffer: %s", collector_strerror(err));
			return -1;
		}
		if (flush)
			fflush(stdout);
	}
	return 0;
}

/* Runs of obj's programs the kernel skipped because the same program was
 * already running on that CPU (a completion interrupting a completion):
 * events never seen. */
static uint64_t recursion_misses(struct bpf_object *obj)
{
	struct bpf_program *prog;
	uint64_t n = 0;

	bpf_object__for_each_program(prog, obj) {
		struct bpf_prog_info info = { 0 };
		uint32_t len = sizeof(info);
		int fd = bpf_program__fd(prog);
		if (fd >= 0 && bpf_obj_get_info_by_fd(fd, &info, &len) == 0)
			n += info.recursion_misses;
	}
	return n;
}

int eventcollector_trailer(FILE *f, int counts_fd, struct bpf_object *self_obj, uint64_t records,
			   const char *lost_what, const char *untracked_what, json_t *more, int verbose)
{
	uint64_t lost = bpfmap_percpu_sum(counts_fd, EVENTS_LOST);
	uint64_t untracked = bpfmap_percpu_sum(counts_fd, EVENTS_UNTRACKED);
	uint64_t missed = self_obj ? recursion_misses(self_obj) : 0;
	json_t *trl = stream_section_trailer_new(records, lost + missed, untracked, collector_end_reason());
	collector_memory_trailer(trl);
	corebtf_trailer(trl);
	if (self_obj) {
		json_object_set_new(trl, "recursion_misses", json_integer((json_int_t)missed));
		selffilter_trailer_add(trl, self_obj);
	}
	if (more)
		json_object_update(trl, more);
	json_decref(more);
	int rc = stream_write_json(f, trl);

	if (rc == 0 && verbose)
		collector_verbose_trailer(trl);
	json_decref(trl);
	if (rc < 0)
		return -1;
	if (lost)
		marple_warn("lost %" PRIu64 " %s (ring buffer full)", lost, lost_what);
	if (missed)
		marple_warn("%" PRIu64 " events not seen: the BPF program was already running on that CPU", missed);
	if (untracked)
		marple_warn("%" PRIu64 " %s", untracked, untracked_what);
	return 0;
}
