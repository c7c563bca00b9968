/* unwindtablesshared.h — one copy of the unwind tables in the kernel for
 * the collectors running at once: the file tables' maps (unwind_rows,
 * unwind_rules, unwind_files of bpf/unwindtables.bpf.h) pinned under
 * /sys/fs/bpf/marple/<layout>/ and reused by every collector whose maps
 * have that layout (sizes, row format: an incompatible build never reuses
 * them); the per-process maps stay each collector's own.
 *
 * The owner of the rows is no collector but a lock: the next free word and
 * the rules in use sit in a fourth pinned map (state), read and written
 * only under an flock of /run/marple/tables-<layout>.lock, held while one
 * collector adds a file (builds it, or reads it from the disk cache): a
 * file already in the shared index (unwind_files) is taken as it is.  Each
 * collector holds a shared flock of tables-<layout>.holders while it lives;
 * the first one in (nobody holds it) makes the maps afresh (dropping what
 * a collector killed before its end left pinned), the last one out unpins
 * them and removes both lock files (lockfile.h: a collector that waited
 * for the lock of a removed file takes the new one): the tables live as
 * long as some collector holds them.  A table
 * that does not fit evicts, under the lock, those of files no process maps
 * any more: the free extents and the evictions' generation live in the
 * state map beside the next free word (unwindtablesroom.h).
 * A collector also removes the pins and lock files of other layouts nobody
 * holds (left by a collector killed before its end).
 *
 *   struct unwindtablesshared *s = unwindtablesshared_open(obj);  // sized, before load
 *   ... load; unwindtables_use_shared(t, s) ...
 *   if (unwindtablesshared_begin(s, files_fd, &key, &known, &words_used, &rules, &room) == 0)
 *           ... build, write rows where room and words_used say, register ...
 *   unwindtablesshared_end(s, words_used, rules.n, &room);
 *   unwindtablesshared_close(s);            // the last one out unpins
 *
 * Not shared (NULL from open, the reason in unwindtablesshared_why): not
 * root, MARPLE_SHARED_TABLES=off, no bpffs, a pin of another layout.
 */
#ifndef MARPLE_UNWINDTABLESSHARED_H
#define MARPLE_UNWINDTABLESSHARED_H

#include <linux/types.h>
#include <stdint.h>

#include "stacks.h"
#include "unwindtablescompact.h"
#include "unwindtablesroom.h"

struct bpf_object;
struct unwindtablesshared;

/* The tables' maps of obj (sized, not loaded) made the pinned ones, or
 * NULL: then they stay private, unwindtablesshared_why says why. */
struct unwindtablesshared *unwindtablesshared_open(struct bpf_object *obj);
/* Why the last open gave NULL ("" after one that shared). */
const char *unwindtablesshared_why(void);
/* The pin directory (for the trailer). */
const char *unwindtablesshared_dir(const struct unwindtablesshared *s);
/* Lock the shared tables to add a file: *words_used is the next free word,
 * room the extents free below it, rules holds every rule in use.  1 with *known filled when key (NULL: the
 * vdso, in no index) is in the index with a table or as a file without
 * CFI (nothing to build); 0 else.  Always followed by _end. */
int unwindtablesshared_begin(struct unwindtablesshared *s, int files_fd, const struct unwind_file_key *key,
			     struct unwind_file *known, uint32_t *words_used, struct unwindtables_rules *rules,
			     struct unwindtables_room *room);
void unwindtablesshared_end(struct unwindtablesshared *s, uint32_t words_used, uint32_t rules_used,
			   const struct unwindtables_room *room);
/* The evictions' generation now (no lock: a table kept from before is
 * looked up again when it moved): the shared tables' (all collectors'),
 * or when s is NULL (private tables) own's. */
uint64_t unwindtablesshared_generation(struct unwindtablesshared *s, const struct unwindtables_room *own);
void unwindtablesshared_close(struct unwindtablesshared *s);

#endif
