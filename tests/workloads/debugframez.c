/* debugframez — debugframe (the same call chain, its CFI in .debug_frame
 * only) with its debug sections compressed (-gz=zlib, SHF_COMPRESSED), as
 * a distribution's debug files and Go's binaries have them: the table
 * builder inflates .debug_frame into memory of its own, never in the
 * mapped file (libelf's elf_compress there was a SIGSEGV).
 * Usage: debugframez SECONDS
 * WORKLOAD_CFLAGS: -O2 -g -gz=zlib -fomit-frame-pointer -fno-asynchronous-unwind-tables -fno-unwind-tables -fno-optimize-sibling-calls
 */
#include "debugframe.c"
