/* tpstack.c — stack records without the BPF frames of tracepoint programs (see tpstack.h). */
#include "tpstack.h"

#include <string.h>

#include "stream.h"

static int bpf_frame(const char *f)
{
	return !strncmp(f, "bpf_prog_", 9) || !strncmp(f, "bpf_trace_run", 13) ||
	       !strncmp(f, "__bpf_trace_", 12) || !strncmp(f, "__bpf_prog_enter", 16) ||
	       !strncmp(f, "bpf_trampoline_", 15);
}

void tpstack_write(struct stackframes *sf, FILE *f, uint64_t weight)
{
	size_t n;

	stackframes_jit_names(sf);
	const char *const *frames = stackframes_frames(sf, &n);

	while (n > 1 && bpf_frame(frames[n - 1]))
		n--;
	stackframes_weigh(sf, weight);
	stream_write_stack_tagged(f, weight, frames, stackframes_tags(sf), n);
}
