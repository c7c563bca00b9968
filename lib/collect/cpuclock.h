/* cpuclock.h — attach a BPF perf_event program to the cpu-clock software
 * event of every online CPU (this machine has no hardware PMU).
 *
 *   struct cpuclock *cc = cpuclock_attach(skel->progs.do_sample, 99, -1);   // exits 1 on failure
 *   ...
 *   cpuclock_detach(cc);      // stop sampling before draining the maps
 */
#ifndef MARPLE_CPUCLOCK_H
#define MARPLE_CPUCLOCK_H

#include <stdint.h>

struct bpf_program;
struct cpuclock;
/* freq samples a second on each CPU; only_cpu >= 0 restricts to that CPU.
 * Offline CPUs are skipped.  Exits 1 with a message when nothing can attach. */
struct cpuclock *cpuclock_attach(struct bpf_program *prog, uint64_t freq, int only_cpu);
void cpuclock_detach(struct cpuclock *cc);

#endif
