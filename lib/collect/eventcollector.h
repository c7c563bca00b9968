/* eventcollector.h — user side of the collectors that send one record per
 * event on a ring buffer (bpf/events.bpf.h: disklat, ipc): open the ring
 * buffer, poll it until the capture ends, and write the trailer with what the
 * kernel side could not send or follow.
 *
 *   rb = eventcollector_ring(bpf_map__fd(skel->maps.events), on_event);
 *   collector_ready(duration);
 *   if (eventcollector_poll(rb, 0) < 0) goto cleanup;
 *   x_bpf__detach(skel);
 *   ring_buffer__consume(rb);
 *   eventcollector_trailer(stdout, bpf_map__fd(skel->maps.counts), skel->obj, records,
 *                          "I/O records", "I/O requests not timed (too many in flight)", NULL,
 *                          opt.verbose);
 */
#ifndef MARPLE_EVENTCOLLECTOR_H
#define MARPLE_EVENTCOLLECTOR_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

struct ring_buffer;
struct bpf_object;

/* A reader of the ring buffer calling on_event for each record; NULL after a
 * message. */
struct ring_buffer *eventcollector_ring(int events_fd, int (*on_event)(void *ctx, void *data, size_t size));

/* Poll until collector_should_stop(); flush: fflush(stdout) after each poll.
 * 0, or -1 after a message when the ring buffer cannot be read. */
int eventcollector_poll(struct ring_buffer *rb, int flush);

/* Write the trailer: records, "lost" = records the ring buffer had no room
 * for, "dropped" = events the kernel side's table had no room for; then name
 * each that is not 0 on stderr ("lost N <lost_what> (ring buffer full)",
 * "N <untracked_what>"); with self_obj (a program that leaves marple's own
 * processes out, selffilter.h) also "self_excluded" and "recursion_misses"
 * (its programs' runs the kernel skipped, one running already on that CPU:
 * counted in "lost" too); more (may be NULL, taken): the collector's own
 * members, added; verbose: its counts on stderr too (-v).  0, or -1 on a
 * write error. */
int eventcollector_trailer(FILE *f, int counts_fd, struct bpf_object *self_obj, uint64_t records,
			   const char *lost_what, const char *untracked_what, json_t *more, int verbose);

#endif
