/* collector.h — what every BPF collector shares: the root/BTF checks, libbpf
 * logging, the duration operand, SIGINT/SIGTERM, and the "ready" signal that
 * tests and the driver wait for.
 *
 * Lifecycle: parse options -> collector_start() (exit 1 if < 0) -> open skeleton
 * -> set rodata -> load -> attach -> collector_ready() -> loop while
 * !collector_should_stop() -> drain -> write trailer with collector_end_reason().
 */
#ifndef MARPLE_COLLECTOR_H
#define MARPLE_COLLECTOR_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

/* -1 with one clear line said when not root or when the kernel has no BTF
 * (the collector exits 1); else installs SIGINT/SIGTERM handlers and libbpf
 * logging (verbose: all of it), 0. */
int collector_start(int verbose);

/* The optional duration operand: argv[optind] if present (seconds, or with a
 * unit: 500ms, 10s, 2m).  0, or no operand, means "until SIGINT/SIGTERM".
 * Exits 2 on junk or on extra operands. */
uint64_t collector_duration(int argc, char **argv, int optind);

/* Start the clock for the duration; call right after attaching. Creates the
 * file named by $MARPLE_READY_FILE, if set, so a waiting test knows tracing
 * has begun. */
void collector_ready(uint64_t duration_ns);

/* Continuous mode's cuts fall on the wall clock's whole multiples of the
 * interval (every 60 s: at :00), so that every collector of a capture cuts
 * at the same instants and an interval file holds the same interval of each:
 * the monotonic instant nearest mono whose wall-clock time is such a
 * multiple.  The first cut after a start is collector_aligned_cut(start +
 * interval / 2, interval); the next, collector_aligned_cut(cut + interval,
 * interval) (re-aligned each time: the wall clock may be slewed meanwhile). */
uint64_t collector_aligned_cut(uint64_t mono_ns, uint64_t interval_ns);

/* The wall-clock time of such a cut, for the next section's header: the
 * multiple itself (the clocks' conversion is off by some ns either way, and
 * a header 91 ns before 23:14:00 was listed and pushed as 23:13:59). */
uint64_t collector_cut_wall_ns(uint64_t cut_mono_ns, uint64_t interval_ns);

/* -p: stop once process pid (thread: thread pid) has exited, as perf stops
 * with its target; called again for more, once all of them have exited.
 * A pidfd, so the moment is seen at the next collector_should_stop. */
void collector_watch_target(pid_t pid, int thread);
/* True once every watched target has exited (0 with none watched). */
int collector_target_exited(void);

/* True once the duration is over, a signal came or the targets exited. */
int collector_should_stop(void);
/* Milliseconds until the deadline (capped at max_ms), 0 if stopping. */
int collector_poll_timeout_ms(int max_ms);
/* "duration", "signal" (with SIGINT/SIGTERM) or "target exited" — for the
 * trailer's "ended". */
const char *collector_end_reason(void);

/* -v: the trailer's counts in one line on stderr ("statistics: records 12,
 * samples 3071, ..."): its whole-number members, nested ones as a.b. */
#include <jansson.h>
void collector_verbose_trailer(json_t *trailer);
/* The trailer's "memory": what this collector holds now and held at most
 * (rss_bytes, peak_rss_bytes: /proc/self/status's VmRSS and VmHWM) and
 * the kernel memory of the BPF maps it has open (bpf_map_bytes, the
 * kernel's memlock of each, and bpf_maps; marple-format(5)),
 * bpf_map_shared_bytes of them those of maps other collectors share
 * (collector_memory_shared), bpf_map_private_bytes the others'.
 */
void collector_memory_trailer(json_t *trailer);
/* The map of id is shared with other collectors (counted apart). */
void collector_memory_shared(uint32_t map_id);
/* The priority a collector's threads that samples wait for take (the
 * drainer's, the unwind tables' builder): ahead of ordinary processes on a
 * busy machine; best effort (setpriority of the calling thread). */
#define COLLECTOR_NICE -10
/* pthread_create for a collector's helper threads: they start with SIGCHLD
 * blocked, so a -c command's stops (collector_wake_on_child) interrupt the
 * main thread's poll, which lets them go on.  Returns pthread_create's. */
#include <pthread.h>
int collector_thread_start(pthread_t *t, void *(*fn)(void *), void *arg);
/* From now on a child's SIGCHLD (a traced -c command stopped: each signal it
 * gets stops it until we let it go on) ends the main thread's poll at once
 * instead of at its timeout; other system calls are restarted. */
void collector_wake_on_child(void);
/* What -v and -vv mean in every collector. */
#define COLLECTOR_VERBOSE_HELP "statistics on stderr; -vv: libbpf's messages too"

/* libbpf error code (negative errno) as text. */
const char *collector_strerror(int err);

/* Does the kernel have tracepoint category:name? (tracefs/debugfs lookup, or
 * the kernel's BTF when tracefs is not mounted: then only name is checked) */
int collector_tracepoint_exists(const char *category, const char *name);

#endif
