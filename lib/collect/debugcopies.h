/* debugcopies.h — debug files whose DWARF sections are compressed
 * (SHF_COMPRESSED: Debian's libc6-dbg ships them so) kept inflated on disk,
 * so that the next capture maps the DWARF instead of inflating it again:
 * opening libc's (10 MB inflated) took 45 ms of CPU, its copy 7 ms.
 *
 * A copy is the file's bytes as they are, then each compressed .debug_
 * section inflated, then a section header table naming those (the file's
 * own layout kept: its notes and segments stay where they were).  It is in
 * the cache folder "debug" (cachedir.h: 0700, at most MARPLE_CACHE_SIZE
 * MB, the copies used least recently removed), named by the file's device,
 * inode, size, mtime and ctime (a file changed: another name, the old copy
 * ages out), written to a temporary file renamed into place; one whose
 * section headers do not end it (not whole) is removed and made again.
 * Only root's and our files are copied.
 *
 *   fd = debugcopies_open(fd, max_bytes);  // its copy's fd (fd closed), or fd
 */
#ifndef MARPLE_DEBUGCOPIES_H
#define MARPLE_DEBUGCOPIES_H

#include <stdint.h>

struct debugcopies_stats {
	uint64_t read;		/* files whose copy was read */
	uint64_t written;	/* copies made */
	uint64_t failed;	/* copies that could not be made (the file read as it is) */
};

/* The inflated copy of the debug file open as fd, made if there is none:
 * its descriptor (fd then closed), or fd itself when the file has no
 * compressed .debug_ section, inflates to over max_bytes, is not ours or
 * root's, or there is no cache. */
int debugcopies_open(int fd, uint64_t max_bytes);
/* What this process's opens did (the trailer's "sources"). */
void debugcopies_stats(struct debugcopies_stats *out);
/* No copy read or made in this process (--no-cache). */
void debugcopies_disable(void);

#endif
