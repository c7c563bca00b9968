/* lockfile.h — a lock file its holder removes when done, so that lock
 * files do not pile up (a collector run with -p has a layout of its own:
 * two files a run in /run/marple before).  Since a name's file may be
 * removed and made again while another process waits for its lock, a lock
 * taken on a file no longer at its name is let go and the one there now
 * taken: two never hold "the" lock.  Every user of a name takes it so.
 * The users: the unwind cache's entries (unwindtablescache.c), the shared
 * tables' owner (unwindtablesshared.c), and the cache folder's sweep of
 * locks no one holds (cachedir.c).
 *
 *   int waited;
 *   int fd = lockfile_take(dir, "x.lock", 500, &waited);  // -1: not taken
 *   ...
 *   lockfile_remove(dir, "x.lock", fd);   // removed while held, let go
 */
#ifndef MARPLE_LOCKFILE_H
#define MARPLE_LOCKFILE_H

#include <stdint.h>

#define LOCKFILE_FOREVER UINT64_MAX

/* The lock of file name in folder dir (made 0600 if missing; a link, not a
 * regular file, or another user's refused), taken exclusively: its fd, or
 * -1.  wait_ms: 0 one try, LOCKFILE_FOREVER as long as it takes, else up to
 * that long.  *waited (may be NULL): another held it. */
int lockfile_take(int dir, const char *name, uint64_t wait_ms, int *waited);
/* name removed, then fd (its lock, taken) closed: the lock let go. */
void lockfile_remove(int dir, const char *name, int fd);
/* flock(2) through signals (a collector's are caught without SA_RESTART),
 * for a lock file's fd or another: 0, or -1 (EWOULDBLOCK with LOCK_NB). */
int lockfile_flock(int fd, int op);

#endif
