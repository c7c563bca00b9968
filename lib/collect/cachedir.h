/* cachedir.h — the folders marple keeps what it learned between runs in,
 * one a cache: the unwind tables (unwindtablescache.h) and debug files kept
 * inflated (debugcopies.h).
 *
 * Where: $MARPLE_CACHE_DIR/NAME if set, else /var/cache/marple/NAME for
 * root, else $XDG_CACHE_HOME/marple/NAME or ~/.cache/marple/NAME; the
 * folders 0700 and ours (one owned by another user, writable by others or
 * a symbolic link is not used: said), entries 0600.  At most
 * $MARPLE_CACHE_SIZE MB a folder (default CACHEDIR_SIZE_DEFAULT_MB): past
 * it the entries used least recently (their mtime) are removed.  An
 * entry's name is its own; NAME.tmp.* is one being written (renamed into
 * place when whole), NAME.lock a lock, .NAME the folder's own notes.
 *
 *   char root[4096];
 *   struct cachedir *c = cachedir_root(root, sizeof(root), "debug") == 0
 *           ? cachedir_open_at(root, "debug") : NULL;     // NULL: no cache
 *   int fd = openat(c->fd, "entry", O_RDONLY | O_NOFOLLOW);
 *   ... write ENTRY.tmp.PID, rename it to ENTRY; then:
 *   cachedir_evict(c, 0);
 *   cachedir_close(c);
 */
#ifndef MARPLE_CACHEDIR_H
#define MARPLE_CACHEDIR_H

#include <stddef.h>
#include <stdint.h>

#define CACHEDIR_SIZE_DEFAULT_MB 256u

struct cachedir {
	int fd;			/* the folder: every entry is opened relative to it */
	char *path;
	uint64_t limit_bytes;
	uint64_t evicted;	/* entries removed to stay under the limit */
};

/* The cache root into dir (MARPLE_CACHE_DIR, /var/cache/marple, ...): 0, or
 * -1 when there is none (said, naming what, unless MARPLE_CACHE_DIR is ""
 * or "off"). */
int cachedir_root(char *dir, size_t cap, const char *what);
/* root/name, made if missing, checked, and evicted unless unchanged since
 * its last look; NULL (said) when it cannot be used. */
struct cachedir *cachedir_open_at(const char *root, const char *name);
/* Remove the entries used least recently until the folder is under its
 * limit, temporary files of writers that died, and locks no one holds;
 * at_open: not if the folder is as the last look left it. */
void cachedir_evict(struct cachedir *c, int at_open);
void cachedir_close(struct cachedir *c);

#endif
