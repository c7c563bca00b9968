/* unwindtablesroom.h — the room in unwind_rows (bpf/unwindtables.bpf.h):
 * tables are written below the next free word (the top), and the extents
 * freed by evicting the tables of files no process maps any more are kept
 * in a list (sorted, neighbours merged) and reused first fit.  The list
 * lives where the top does: in the collector (private tables) or in the
 * shared state map, under its lock (unwindtablesshared.h).
 *
 * Eviction is done only when a table does not fit: one scan of every
 * process's executable file mappings (/proc/PID/maps), then each table in
 * the file index (unwind_files) whose file none maps has its index entry
 * deleted BEFORE its rows are freed (a walk never reads a reused row as
 * its old file's: the kernel finds no table for that file, asks, and user
 * space builds it again).  A collector that kept a table's place from
 * before (its file model) checks the generation (evictions so far): when
 * it changed, each table it kept is looked up in the index again.
 *
 *   uint32_t off = unwindtablesroom_place(&room, &top, cap, words, files_fd, &stats);
 *   ... later, a table no longer wanted there: ...
 *   unwindtablesroom_give(&room, &top, off, words);
 */
#ifndef MARPLE_UNWINDTABLESROOM_H
#define MARPLE_UNWINDTABLESROOM_H

#include <jansson.h>
#include <stdint.h>

#define UNWINDTABLESROOM_NONE UINT32_MAX
/* Free extents kept (2 KB of state): past that, the smallest is let go
 * (counted lost until the rows are made afresh). */
#define UNWINDTABLESROOM_EXTENTS 256

struct unwindtables_room {
	uint64_t generation;		/* eviction scans so far */
	uint64_t words_lost;		/* freed words the list had no place for */
	uint32_t nfree, pad;
	struct {
		uint32_t off, words;
	} free[UNWINDTABLESROOM_EXTENTS];	/* sorted by off, none adjacent */
};

/* What one collector's evictions did (its trailer's). */
struct unwindtables_evictions {
	uint64_t files, words, scans, scan_ns;
	uint64_t maps_unreadable;	/* processes whose maps a scan could not read */
	uint64_t fruitless_until_ns;	/* no scan before (the last freed nothing) */
};

/* Of --unwind-memory's bytes, the rules' share (entries of unwind_rules),
 * the words left for the tables (entries of unwind_rows: 2 words each),
 * and the rows such words hold with their page indexes (a guess). */
uint32_t unwindtablesroom_rules_in(uint64_t bytes);
uint32_t unwindtablesroom_words_in(uint64_t bytes);
uint64_t unwindtablesroom_rows_of_words(uint64_t words);

/* The files left without room, the first UNWINDTABLESROOM_NAMED named. */
#define UNWINDTABLESROOM_NAMED 20
struct unwindtables_noroom {
	uint64_t files, rows_wanted;
	char **paths;
	size_t npaths;
};
/* The file at path got no table; it would take rows_wanted rows. */
void unwindtablesroom_noroom_add(struct unwindtables_noroom *nr, const char *path, uint64_t rows_wanted);
void unwindtablesroom_noroom_free(struct unwindtables_noroom *nr);
/* "files_without_room" and "files_without_room_names" into the trailer's
 * "unwind" object u, and when there were some, a warning naming them
 * (tables of memory bytes, words words). */
void unwindtablesroom_noroom_report(json_t *u, const struct unwindtables_noroom *nr, uint64_t memory, uint64_t words);

/* words[off..off+words) free again: merged with its neighbours, given back
 * to the top when it ends there. */
void unwindtablesroom_give(struct unwindtables_room *r, uint32_t *top, uint32_t off, uint32_t words);
/* The place of a table of words words: the first free extent it fits in,
 * else at *top (then moved past it) if cap words hold it there, else the
 * same once the tables of the file index (files_fd, unwind_files) whose
 * files no process maps any more are evicted (no scan while the time since
 * one that freed nothing is under 9 times its own); UNWINDTABLESROOM_NONE
 * when none. */
uint32_t unwindtablesroom_place(struct unwindtables_room *r, uint32_t *top, uint32_t cap, uint64_t words, int files_fd,
				struct unwindtables_evictions *ev);
/* The words free in the list (below the top). */
uint64_t unwindtablesroom_free_words(const struct unwindtables_room *r);
/* "files_evicted", "words_evicted", "evict_scans", "evict_maps_unreadable",
 * "evict_scan_ms" (since before), "words_free" and "words_lost" (r's now)
 * into the trailer's "unwind" object u. */
void unwindtablesroom_trailer_add(json_t *u, const struct unwindtables_evictions *now,
				  const struct unwindtables_evictions *before, const struct unwindtables_room *r);

#endif
