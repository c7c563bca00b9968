/* rundir.h — /run/marple, the collectors' state that lives as long as the
 * boot: root's alone (a folder anyone else could write in would let them
 * choose what root's collectors read).  Its users: the shared unwind
 * tables' lock files (unwindtablesshared.h), the minimal copies of the
 * kernel's BTF (corebtf.h), the kernel's BTF ids (kernelids.h).
 *
 *   char why[160];
 *   int dir = rundir_open(why, sizeof(why));   // -1: why says why
 */
#ifndef MARPLE_RUNDIR_H
#define MARPLE_RUNDIR_H

#include <stddef.h>

#define RUNDIR "/run/marple"

/* path is a folder (not a link) no one but root may write in: 0, or -1
 * with why[0..len) set. */
int rundir_root_only(const char *path, char *why, size_t len);
/* RUNDIR (made if missing), root's alone, opened: its fd, or -1 with
 * why[0..len) set. */
int rundir_open(char *why, size_t len);

#endif
