/* unwindtablescache.h — each executable file's unwind table (unwindtablescompact.h) kept
 * on disk between runs and shared by collectors running at once, so that
 * libc's, python3's or cc1's table is built once, not by every capture.
 *
 * Where: the cache folder "unwind" (cachedir.h: $MARPLE_CACHE_DIR/unwind,
 * /var/cache/marple/unwind for root, ...; 0700 and ours, entries 0600, at
 * most $MARPLE_CACHE_SIZE MB, the entries used least recently removed past
 * it: looked at when opened unless the folder is unchanged since the last
 * look, and whenever a 16th of that has been written since).
 *
 * An entry is named by its file's device and inode, and records its key
 * (device, inode, size, mtime and ctime: the version of the bytes it was
 * built from; never the build-id alone, which anyone can copy into a file of
 * theirs), UNWINDTABLESCACHE_FORMAT, UNWINDTABLESCACHE_UNIT, its size and a checksum,
 * all checked before its table is used: an entry of another key
 * or format is stale, one that fails a check is corrupt; both are rebuilt
 * and counted, never used.  Entries are written to a temporary file renamed
 * into place, opened without following symlinks.  Only files owned by root
 * or by us are cached, never an image in memory (the vdso).
 *
 * Collectors running at once: the first to miss a file takes the entry's
 * lock (flock on NAME.lock, removed when done) while it builds and writes it; the others wait
 * for that (UNWINDTABLESCACHE_WAIT_MS at most) and read the entry instead.
 *
 *   struct unwindtablescache *c = unwindtablescache_open();     // NULL: no cache
 *   struct unwindtablescache_ticket tk;
 *   if (unwindtablescache_lookup(c, &tk, elf, fd, buf, cap, &len, &st) == 0) {
 *           ... build data[0..size) ...
 *           unwindtablescache_store(c, &tk, data, size, &st);   // or _abandon
 *   }
 *   unwindtablescache_close(c);
 */
#ifndef MARPLE_UNWINDCACHE_H
#define MARPLE_UNWINDCACHE_H

#include <gelf.h>
#include <jansson.h>
#include <linux/types.h>
#include <stdint.h>

#include "stacks.h"
#include "unwindtablescfi.h"

/* Raise when what an entry holds changes meaning (rules, encodings, the
 * compact table's layout): old entries are then stale.  Format 1 held
 * struct unwind_row rows (16 bytes); 2 the compact table itself, which a
 * hit copies into the kernel's map with no compaction (unwindtables.c).
 * The compact layout's constants (stacks.h) are part of it: a build with
 * other pages read 2's entries as its own (every frame a cut). */
#define UNWINDTABLESCACHE_FORMAT \
	(3u | (uint32_t)UNWIND_PAGE_SHIFT << 8 | (uint32_t)UNWIND_ROW_RULE_BITS << 16 | (uint32_t)UNWIND_TABLE_HEADER << 24)
#define UNWINDTABLESCACHE_UNIT 4u	/* the entries' word: 32-bit (unwindtablescompact.h) */
#define UNWINDTABLESCACHE_WAIT_MS 30000u	/* for another collector's build: libLLVM's takes seconds */

struct unwindtablescache_stats {
	uint64_t read;		/* files whose table came from the cache */
	uint64_t waited;	/* of which after waiting for another collector's build */
	uint64_t missed;	/* files with no entry yet */
	uint64_t stale;		/* entries of another key or format: rebuilt */
	uint64_t corrupt;	/* entries failing a check (size, checksum, ...): rebuilt */
	uint64_t written;	/* entries written */
	uint64_t write_failed;
	uint64_t evicted;	/* entries removed to stay under the size limit */
	uint64_t ns;		/* wall time in the cache: lookups, waits, writes */
	uint64_t cpu_ns;	/* the CPU time of that */
};

/* One file's lookup: what unwindtablescache_store needs to write its entry. */
struct unwindtablescache_ticket {
	char name[96];		/* the entry's file name; "" when the file cannot be cached */
	char key[160];
	int lock_fd;		/* the entry's lock, held; -1: none */
};

struct unwindtablescache;
/* The cache at its usual place (above); NULL when it cannot be used (after
 * one message saying why, unless MARPLE_CACHE_DIR is "" or "off"). */
struct unwindtablescache *unwindtablescache_open(void);
/* The same at dir (the cache's root: entries go to dir/unwind). */
struct unwindtablescache *unwindtablescache_open_at(const char *dir);
void unwindtablescache_close(struct unwindtablescache *c);
const char *unwindtablescache_dir(const struct unwindtablescache *c);
const struct unwindtablescache_stats *unwindtablescache_stats(const struct unwindtablescache *c);
/* "files_from_cache", "files_from_cache_after_wait", "files_rebuilt_stale",
 * "files_rebuilt_corrupt", "cache_entries_written", "cache_entries_evicted",
 * "cache_ms" and "cache_cpu_ms" of now since before into a trailer's object u. */
void unwindtablescache_trailer_add(json_t *u, const struct unwindtablescache_stats *now,
				   const struct unwindtablescache_stats *before);

/* The bytes a lookup of the file open as fd would read, as its entry is
 * now (0: none, or not cacheable): what buf must hold for it. */
size_t unwindtablescache_entry_size(struct unwindtablescache *c, int fd);
/* The table of the ELF file elf (open as fd; -1: an image in memory, the
 * vdso, never cached): 1 when buf[0..*len) (at most cap
 * bytes) and *st were read from its entry; 0 when the caller is to build
 * it, then always followed by unwindtablescache_store or unwindtablescache_abandon
 * with tk; UNWINDTABLESCACHE_MORE_ROOM when its entry is there but holds
 * *len bytes, more than cap (written since buf was sized, by another
 * collector): nothing held, the caller looks up again with room for them
 * (else builds it and stores nothing).  What the bytes are is the caller's
 * (unwindtables.c: the file's compact table, unwindtablescompact.h). */
#define UNWINDTABLESCACHE_MORE_ROOM 2
int unwindtablescache_lookup(struct unwindtablescache *c, struct unwindtablescache_ticket *tk, Elf *elf, int fd, void *buf,
		       size_t cap, size_t *len, struct unwindtables_rowstats *st);
/* The entry the last lookup read (it returned 1) is no table after all (its
 * user's own checks): counted corrupt, not read. */
void unwindtablescache_refuse(struct unwindtablescache *c);
/* Write the table built for tk's file, data[0..size), as its entry, and
 * release its lock. */
void unwindtablescache_store(struct unwindtablescache *c, struct unwindtablescache_ticket *tk, const void *data, size_t size,
		       const struct unwindtables_rowstats *st);
/* Nothing to write (no table, no room): release tk's lock. */
void unwindtablescache_abandon(struct unwindtablescache *c, struct unwindtablescache_ticket *tk);

/* A yes-or-no fact about the running kernel that costs to find out (the
 * VMA iterator probe: 5-30 ms of CPU, the kernel's BTF parsed a second
 * time), kept in the cache (the file .NAME) until the next boot: 0 with
 * *value set, or -1 when not known for this boot (or c is NULL). */
int unwindtablescache_kernel_fact(struct unwindtablescache *c, const char *name, int *value);
void unwindtablescache_kernel_fact_set(struct unwindtablescache *c, const char *name, int value);

#endif
