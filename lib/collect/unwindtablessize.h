/* unwindtablessize.h — the room unwind tables need, judged from the CFI
 * bytes of the files (a row takes 5 to 6 bytes of CFI in what gcc and clang
 * write), before any row is built: the size of a process's share of the
 * table map (unwindtables.c) and the rows of a file left without room. */
#ifndef MARPLE_UNWINDTABLESSIZE_H
#define MARPLE_UNWINDTABLESSIZE_H

#include <gelf.h>
#include <stdint.h>
#include <sys/types.h>

/* Table words for pid's executable files, with room for what it maps later. */
uint32_t unwindtablessize_words_for(pid_t pid);
/* Rows elf's CFI would take, had it room: its CFI bytes / 5.4. */
uint64_t unwindtablessize_rows_estimate(Elf *elf);

#endif
