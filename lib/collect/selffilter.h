/* selffilter.h — keep marple's own processes out of a capture (user side of
 * bpf/self.bpf.h, and the reading of /proc for marple-memtime).
 *
 * A process is marple's own when its comm is "marple" or begins with
 * "marple-", when it is the collector itself, when its pid is listed in
 * $MARPLE_SELF_PIDS (decimal pids separated by spaces or commas: the driver
 * puts its own there, a supervisor its own), or when its process group is
 * $MARPLE_SELF_PGID (a supervisor that puts itself and its collectors, and
 * nothing else, in a process group of their own).  --include-self (every
 * collector) keeps them all.  A process group is not used otherwise: a shell
 * script's background jobs share its group, workloads included.
 *
 *   skel = x_bpf__open_and_load();
 *   selffilter_setup(skel->obj, include_self);    // exits 2 on a bad variable, -1 on a map
 *   ...
 *   selffilter_trailer_add(trailer, skel->obj);          // "self_excluded": N
 */
#ifndef MARPLE_SELFFILTER_H
#define MARPLE_SELFFILTER_H

#include <jansson.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_object;

/* The options.h entry of --include-self, for collectors that do not parse
 * with stackcollector.h. */
#define SELF_OPTION_KEY 0x5e1f
#define SELF_OPTION \
	{ SELF_OPTION_KEY, "include-self", NULL, "marple's own processes too (left out by default)" }

/* Fill obj's self_config and self_tgids (after load): on unless include_self,
 * with this process, $MARPLE_SELF_PIDS and $MARPLE_SELF_PGID.  A malformed
 * variable is a usage error (exit 2); -1 with a message said when the maps
 * cannot be filled (the collector exits 1), else 0. */
int selffilter_setup(struct bpf_object *obj, int include_self);
/* The events or samples obj's programs left out as marple's own. */
uint64_t selffilter_excluded(struct bpf_object *obj);
/* Add "self_excluded" to a trailer. */
void selffilter_trailer_add(json_t *trailer, struct bpf_object *obj);

/* For collectors that read /proc: set up the same rule without BPF. */
void selffilter_rule_init(int include_self);
/* Does selffilter_is_marple look at the process group ($MARPLE_SELF_PGID set)? */
int selffilter_wants_pgid(void);
/* Is pid (whose comm and process group are given) marple's own? */
int selffilter_is_marple(pid_t pid, const char *comm, pid_t pgid);

#endif
