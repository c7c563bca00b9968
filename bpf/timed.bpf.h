/* timed.bpf.h — --timed for the stack collectors (include after stacks.bpf.h):
 * besides counting a sample in the kernel, send a small struct timed_rec
 * (bpf/timedrec.h) on the timed_samples ring buffer, so that user space knows
 * when every sample was taken.  User space sizes the ring buffer and drains
 * it (lib/collect/timedsamples.h); records that do not fit are counted in
 * timed_lost (per CPU, key 0), never hidden.
 *
 *   stacks_add(&key, 1);
 *   timed_emit_now(&key, tid, 0);
 */
#ifndef MARPLE_TIMED_BPF_H
#define MARPLE_TIMED_BPF_H

#include "timedrec.h"

const volatile bool timed_mode = false;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);	/* sized by user space */
} timed_samples SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} timed_lost SEC(".maps");

static __always_inline void timed_emit(const struct stack_key *key, __u32 tid, __u64 time, __u64 dur)
{
	if (!timed_mode)
		return;
	struct timed_rec *r = bpf_ringbuf_reserve(&timed_samples, sizeof(*r), 0);
	if (!r) {
		__u32 zero = 0;
		__u64 *n = bpf_map_lookup_elem(&timed_lost, &zero);
		if (n)
			(*n)++;
		return;
	}
	r->time = time;
	r->dur = dur;
	r->cpu = bpf_get_smp_processor_id();
	r->tid = tid;
	__builtin_memcpy(&r->key, key, sizeof(*key));
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

/* timed_emit at this time: the clock read only when timed (a helper call
 * in the argument was made at every sample, timed or not) */
static __always_inline void timed_emit_now(const struct stack_key *key, __u32 tid, __u64 dur)
{
	if (timed_mode)
		timed_emit(key, tid, bpf_ktime_get_ns(), dur);
}

#endif
