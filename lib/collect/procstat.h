/* procstat.h — a /proc/PID/stat line, split after the process name (which may
 * hold spaces and parentheses: the last ')' ends it).
 *
 *   char buf[1024];
 *   const char *rest = procstat_read(AT_FDCWD, "/proc/42/stat", buf, sizeof(buf));
 *   if (rest && sscanf(rest, " %*c %d %d", &ppid, &pgid) == 2) ...   // fields 3, 4, 5
 */
#ifndef MARPLE_PROCSTAT_H
#define MARPLE_PROCSTAT_H

#include <stddef.h>

/* Read path (relative to dir_fd, or AT_FDCWD) into buf; the text after the
 * name's closing parenthesis (" S 1 42 ...": field 3 on), or NULL if the file
 * cannot be read or has no name. */
const char *procstat_read(int dir_fd, const char *path, char *buf, size_t size);

#endif
