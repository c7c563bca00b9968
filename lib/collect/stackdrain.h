/* stackdrain.h — draining the kernel maps of a stack collector while it runs,
 * so that a capture of any length fits maps sized for seconds.
 *
 * The kernel side (bpf/stacks.bpf.h) keeps two sets, each a half of the stack
 * store and of the count table (counts); programs write into the active one
 * (stacks_ctl).  Every period, or at once when a program finds a set half
 * full (it wakes the pid notes' ring buffer), stackdrain_poll flips the set,
 * waits for the programs in flight, adds each entry of the idle half of the
 * count table to a user-space table (its stacks interned by their addresses), then clears
 * the idle set.  Draining does no symbolizing: a drain takes milliseconds, so
 * the active set does not fill meanwhile.  At the end, stackdrain_emit passes
 * each key of the table, with the addresses of its stacks and its summed
 * value, to the collector's add(), which names them (stackframes_key_stacks).
 * Values are arrays of u64 sums.  A long capture folds
 * (stackdrain_fold): every minute or so the same is done with what was drained
 * so far, which is then let go, so that memory holds one minute's stacks and
 * the processes still running, not every process the capture saw.
 *
 * A stack id is a slot of the kernel's stack store, read there and nowhere
 * else; a drained stack is known by its addresses.  The drain numbers the
 * stacks it drained (the same addresses, the same number, never given to
 * another stack), and the keys it hands add() carry those numbers where the
 * kernel had ids: they tell stacks apart (--timed finds a sample's record by
 * them) and are never read as ids.
 *
 * Stack ids stay readable as long as something may still name them: a count
 * of one set may name a stack of the other (a program that ran across a flip;
 * offcpu's blocks that span flips), so the stacks of a set are copied when it
 * is cleared and those ids are read from the copy until the next clear; the
 * slots a collector's own state still names (offcpu's blocked threads) are
 * pinned by its pin() callback and kept.
 *
 *   d = stackdrain_new(skel->obj, sizeof(struct stack_key), sizeof(u64), 0, add, t);
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

#include "stackframes.h"	/* struct stack_ips */

struct bpf_object;
struct stackdrain;

/* What add() is handed: a key drained (its stack ids replaced by the
 * drain's numbers), the addresses of its stacks, and its sums. */
struct stackdrain_entry {
	const void *key;
	struct stack_ips user, kern;
	struct stack_ips user2, kern2;	/* stackdrain_set_second_key's (else none) */
	const void *value;
};

/* How often a set is drained when no program asks sooner. */
#define STACKDRAIN_PERIOD_MS 1000

/* For a loaded object with stacks_ctl, stacks, stack_slots and counts
 * (counttable.h; keys of key_size bytes holding a struct stack_key at
 * stack_key_offset, values of value_size bytes: u64 sums).  NULL + message if
 * it has not.  key_size 0: no count table (memleak: its allocations are state,
 * not counts): only the stack store is drained, every stack not pinned freed;
 * add may be NULL then. */
struct stackdrain *stackdrain_new(struct bpf_object *obj, size_t key_size, size_t value_size,
				  size_t stack_key_offset, void (*add)(const struct stackdrain_entry *e, void *arg),
				  void *arg);
/* Keys hold a second struct stack_key at offset (> 0; marple-lock's
 * holder), whose stacks are drained too and handed as user2, kern2. */
void stackdrain_set_second_key(struct stackdrain *d, size_t offset);
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
 * stacks until stackdrain_number_kept, which stops that thread. */
void stackdrain_set_kept(struct stackdrain *d, void (*still_named)(struct stackdrain *d, void *arg), void *arg);
void stackdrain_keep(struct stackdrain *d, int id, uint32_t gen);
/* The drain's number for the stack of a kept (id, gen) (numbered now if
 * it is still in the store), an error id (< 0) kept as it is, or -ENOENT
 * if unknown. */
int stackdrain_number_kept(struct stackdrain *d, int id, uint32_t gen);
/* The addresses of the stack numbered number, copied into
 * ips[MARPLE_STACK_DEPTH], or why there are none: a number < 0 as it is,
 * -ENOENT. */
struct stack_ips stackdrain_stack(const struct stackdrain *d, int number, uint64_t *ips);
/* settled(arg) is called after a flip, once the programs in flight are done
 * and before the idle set is cleared: the collector reads there what still
 * names its stacks (--timed's ring buffer), numbering them with
 * stackdrain_number_key. */
void stackdrain_set_settled(struct stackdrain *d, void (*settled)(void *arg), void *arg);
/* k's kernel stack ids replaced by the drain's numbers for their stacks
 * (those of the keys add() is handed). */
void stackdrain_number_key(struct stackdrain *d, struct stack_key *k);
/* The addresses of stack id in the store, read where it is (a record of
 * the rings read before its set is cleared: stackdrain_set_settled) into
 * ips[MARPLE_STACK_DEPTH]: the depth, or -1. */
int stackdrain_read_id(struct stackdrain *d, int id, uint64_t *ips);
/* Add value (u64 sums) to key's as a count drained, the user stack of its
 * struct stack_key given by its addresses (user.n < 0: why there are none),
 * not its id: a stack walked on in user space (unwindcut.h); its kernel
 * stack id read where it is.  *numbered (if not NULL): that struct
 * stack_key with the drain's numbers, as stackdrain_number_key gives. */
void stackdrain_add_walked(struct stackdrain *d, const void *key, struct stack_ips user, const void *value,
			   struct stack_key *numbered);
/* How long a capture's wait for its ring buffers may last, at most max_ms:
 * 0 when a drain is due.  A program's request is a flag in stacks_ctl and a
 * record that wakes the wait, but that record may have been read already
 * (a drain reads the rings before it clears a set): the flag decides. */
int stackdrain_wait_ms(const struct stackdrain *d, int max_ms);
/* Drain the idle set if one is due; 1 if it drained. */
int stackdrain_poll(struct stackdrain *d);
/* Flip, wait, read and clear the idle set now. */
void stackdrain_now(struct stackdrain *d);
/* At the end, programs detached: both sets read. */
void stackdrain_finish(struct stackdrain *d);
/* Add one more key/value after stackdrain_finish (a block still running at
 * the end), its stacks read where they are. */
void stackdrain_add(struct stackdrain *d, const void *key, const void *value);
/* Hand add() every key drained, with its stacks' addresses and its sums. */
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
