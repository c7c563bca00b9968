/* plan.h — which collectors a capture runs, and with which options: the names
 * `marple collect` and marple-collect take (interfaces, groups of the config's
 * [Aliases], INTERFACE:OPTS) worked out from the registry and the config.
 *
 *   marple collect -t 5 cpu callstack:-F199,--timed
 *   -> callstack  marple-callstack  -F 99 --timed -F199 --timed
 *      offcpu     marple-offcpu
 *      cpusched   marple-cpusched
 *
 * A collector's options come in this order: the config's (its [INTERFACE]
 * keys, as its registry config= field maps them to options), then the user's
 * INTERFACE:OPTS (the last word wins, so the user's does), then
 * --include-self.  Nothing here exits: a bad name is a message for the caller.
 */
#ifndef MARPLE_PLAN_H
#define MARPLE_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "registry.h"

struct plan_collector {
	char *interface;	/* "callstack" */
	char *program;		/* "marple-callstack": found by the caller */
	char **args;		/* its options, NULL-terminated */
	size_t nargs, cap;
};

struct plan {
	struct plan_collector *c;	/* in the order first named */
	size_t n, cap;
};

struct plan_request {
	char *const *names;	/* interfaces, groups, INTERFACE:OPTS */
	size_t nnames;
	int every;		/* continuous: each collector needs every=yes */
	int run;		/* a command is followed: each needs --children */
	int include_self;	/* --include-self to those that take it */
	uint64_t capture_s;	/* one capture's length (an interval's), 0: unknown */
	uint64_t cpus;		/* CPUs online, for a flag set to auto */
};

/* The plan for rq, with the config read (config_load) and reg: 0, or -1 with
 * *why saying which name is wrong and why (a usage error, malloc'd).  The
 * plan lives as long as the capture: nothing frees it. */
int plan_make(struct plan *p, const struct registry *reg, const struct plan_request *rq, char **why);

#endif
