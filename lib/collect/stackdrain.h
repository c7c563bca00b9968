/* stackdrain.h — draining the kernel maps of a stack collector while it runs,
 * so that a capture of any length fits maps sized for seconds.
 *
 * The kernel side (bpf/stacks.bpf.h) keeps two sets, each a half of the stack
 * store and a count map (counts, counts1); programs write into the active one
 * (stacks_ctl).  Every period, or at once when a program finds a set half
 * full (it wakes the pid notes' ring buffer), stackdrain_poll flips the set,
 * waits for the programs in flight, adds each element of the idle count map
 * to a user-space table (its stacks interned by their addresses), then clears
 * the idle set.  Draining does no symbolizing: a drain takes milliseconds, so
 * the active set does not fill meanwhile.  At the end, stackdrain_emit passes
 * each key of the table, with its summed value, to the collector's add(),
 * which names it with the stackframes it was given (their ids now read from
 * the table).  Values are arrays of u64 sums.  A long capture folds
 * (stackdrain_fold): every minute or so the same is done with what was drained
 * so far, which is then let go, so that memory holds one minute's stacks and
 * the processes still running, not every process the capture saw.
 *
 * Stack ids stay readable as long as something may still name them: a count
 * of one set may name a stack of the other (a program that ran across a flip;
 * offcpu's blocks that span flips), so the stacks of a set are copied when it
 * is cleared and those ids are read from the copy until the next clear; the
 * slots a collector's own state still names (offcpu's blocked threads) are
 * pinned by its pin() callback and kept.
 *
 *   d = stackdrain_new(skel->obj, sc.sf, sizeof(struct stack_key), sizeof(u64), 0, add, t);
 *   stackdrain_set_pin(d, pin_blocked, skel);      // optional
 *   while capturing: stackdrain_poll(d);           // stackcollector_poll does
 *   detach; stackdrain_finish(d);                  // both sets read
 *   stackdrain_emit(d);                            // add() for each key
 *   ... write what add() made ...
 *   stackdrain_trailer_add(d, trailer);            // "drains"
 */
#ifndef MARPLE_STACKDRAIN_H
#define MARPLE_STACKDRAIN_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct bpf_object;
struct stackframes;
struct stackdrain;

/* How often a set is drained when no program asks sooner. */
#define STACKDRAIN_PERIOD_MS 1000

/* For a loaded object with stacks_ctl, stacks, stack_slots, counts and
 * counts1 (keys of key_size bytes holding a struct stack_key at
 * stack_key_offset, values of value_size bytes: u64 sums).  NULL + message if
 * it has not.  key_size 0: no count maps (memleak: its allocations are state,
 * not counts): only the stack store is drained, every stack not pinned freed;
 * sf and add may be NULL then. */
struct stackdrain *stackdrain_new(struct bpf_object *obj, struct stackframes *sf, size_t key_size,
				  size_t value_size, size_t stack_key_offset,
				  void (*add)(const void *key, const void *value, void *arg), void *arg);
/* Drain every ms milliseconds, and when a program asks; 0: only at
 * stackdrain_finish (a full map loses what does not fit, as without draining). */
void stackdrain_set_period(struct stackdrain *d, uint64_t ms);
/* pin(d, arg) is called before a set's stacks are cleared: it calls
 * stackdrain_pin for each stack id the collector's own maps still hold. */
void stackdrain_set_pin(struct stackdrain *d, void (*pin)(struct stackdrain *d, void *arg), void *arg);
void stackdrain_pin(struct stackdrain *d, int id);
/* For state that keeps stack ids with their set's generation across drains
 * (memleak's allocations: bpf/stacks.bpf.h stacks_get_kept): every stack of a
 * set being cleared moves to user space, its slot freed (a store full of
 * outstanding allocations' stacks would lose every new one).  Every
 * STACKDRAIN_SWEEP_EVERY drains still_named() is called and says, by
 * stackdrain_keep, each (id, gen) its state still names; the moved stacks
 * it did not name are let go (that thread also filters the moved stacks, so
 * a drain never waits for a sweep).  From this call on, the drains are done
 * by a thread of their own, real-time where allowed, woken by the programs'
 * requests on drain_requests (stackdrain_poll does nothing): the collector's
 * state is in the kernel, and nothing else it does touches the drained
 * stacks until stackdrain_intern_kept, which stops that thread. */
void stackdrain_set_kept(struct stackdrain *d, void (*still_named)(struct stackdrain *d, void *arg), void *arg);
void stackdrain_keep(struct stackdrain *d, int id, uint32_t gen);
/* The drained-stack id of a kept (id, gen) (interned now if it is still in
 * the store), an error id (< 0) kept as it is, or -ENOENT if unknown. */
int stackdrain_intern_kept(struct stackdrain *d, int id, uint32_t gen);
/* sf reads stack ids as drained-stack ids (stackdrain_intern_kept's). */
void stackdrain_name_interned(struct stackdrain *d, struct stackframes *sf);
/* settled(arg) is called after a flip, once the programs in flight are done
 * and before the idle set is cleared: the collector reads there what still
 * names its stacks (--timed's ring buffer), interning them with
 * stackdrain_intern_key. */
void stackdrain_set_settled(struct stackdrain *d, void (*settled)(void *arg), void *arg);
/* k's kernel stack ids as ids of the stacks drained (those add() sees). */
struct stack_key;
void stackdrain_intern_key(struct stackdrain *d, struct stack_key *k);
/* Drain the idle set if one is due; 1 if it drained. */
int stackdrain_poll(struct stackdrain *d);
/* Flip, wait, read and clear the idle set now. */
void stackdrain_now(struct stackdrain *d);
/* At the end, programs detached: both sets read. */
void stackdrain_finish(struct stackdrain *d);
/* Add one more key/value after stackdrain_finish (a block still running at
 * the end), its stacks read where they are. */
void stackdrain_add(struct stackdrain *d, const void *key, const void *value);
/* Pass every key drained, with its sums, to add() (its stack ids read by the
 * stackframes meanwhile). */
uint64_t stackdrain_emit(struct stackdrain *d);	/* how many keys */
/* After stackdrain_emit, in continuous mode: what was drained is
 * forgotten (keys, sums, the stacks they named: a week's capture holds one
 * interval's), so the next section counts from 0.  The kernel side and the
 * stacks pinned there are untouched. */
void stackdrain_restart(struct stackdrain *d);
/* During a long capture: set aside every key drained so far, to be passed
 * to add() (named now: the collector's add() only adds up, its records are
 * written at the end) a slice at a time by stackdrain_fold_step between
 * drains, then let go with its stacks (a key drained again later is added
 * again).  Call it right after a drain: with the processes that had exited
 * before it marked (syms_cache_mark_exited), their symbols can be forgotten
 * once the fold is named.  A fold not finished is finished first. */
void stackdrain_fold_start(struct stackdrain *d);
/* Name keys of the fold for about budget_us (0: all); 1 when it is done (or
 * there was none).  stackdrain_emit and _restart finish it first. */
int stackdrain_fold_step(struct stackdrain *d, uint64_t budget_us);
/* "drains": how many times a set was read and cleared. */
void stackdrain_trailer_add(struct stackdrain *d, json_t *tr);	/* and "folds" if any */
void stackdrain_free(struct stackdrain *d);

#endif
