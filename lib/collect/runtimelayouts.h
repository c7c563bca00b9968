/* runtimelayouts.h — which frame layout a process's interpreter uses:
 * its version (from its memory, or what its file's facts say), the
 * built-in table of that version, checked against the process's own
 * memory (CPython's code-object member table and, from 3.13, its
 * _Py_DebugOffsets; Perl's interpreter; Ruby's VM).  pyframes.c asks once
 * per process it is told of.
 *
 *   char note[224];
 *   const char *how, *why = runtimelayouts_choose(p, py, bias, &how, note, sizeof(note));
 *   // why NULL: p's layout is set and how says how it was found;
 *   // else why p is not walked (p->refused_early: on what its memory
 *   // said, which may be too early: ld.so not done).  note: something to
 *   // say once, or "".
 */
#ifndef MARPLE_RUNTIMELAYOUTS_H
#define MARPLE_RUNTIMELAYOUTS_H

#include <stddef.h>
#include <stdint.h>

struct pyproc;
struct pyelf;

/* p (its pid, lang and run-time addresses set) gets its version and
 * layout; py is its file's facts, bias that file's load bias. */
const char *runtimelayouts_choose(struct pyproc *p, const struct pyelf *py, uint64_t bias, const char **how,
				  char *note, size_t note_len);

#endif
