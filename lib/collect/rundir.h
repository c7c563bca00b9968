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
/* buf[0..size) into a new file name (root's alone, 0600) in folder dir:
 * 0, or -1 (a file of that name already there, too). */
int rundir_write_new(int dir, const char *name, const void *buf, size_t size);
/* This boot's identity (the kernel's random boot_id) in id[0..cap): what
 * is kept for the boot says whose it is.  0, or -1. */
int rundir_boot_id(char *id, size_t cap);

#endif
