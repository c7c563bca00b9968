/* syms.h — symbol resolution for collectors (kernel and user space).
 *
 * CONTRACT, implemented by lib/syms.c (issue 4).  Collectors of stacks
 * (callstack, offcpu, mallocstacks, memleak, memevents, diskblockrq) all use it.
 *
 * Kernel: /proc/kallsyms.  User: /proc/PID/maps + libelf (.symtab, .dynsym,
 * PIE and shared-library bias), .gnu_debuglink and /usr/lib/debug/.build-id,
 * /tmp/perf-PID.map for JITs, /proc/PID/root for processes in containers.
 * syms_cache_snapshot() captures what a process needs the first time it is
 * seen, so it can still be named after it exits.
 */
#ifndef MARPLE_SYMS_H
#define MARPLE_SYMS_H

#include <stdint.h>
#include <sys/types.h>

enum syms_flags {
	SYMS_DEMANGLE = 1,	/* C++ and Rust names demangled */
};

struct ksyms;
struct ksyms *ksyms_load(void);		/* NULL + message if /proc/kallsyms unreadable */
void ksyms_free(struct ksyms *k);
/* Name of the kernel function holding addr, or NULL. */
const char *ksyms_lookup(const struct ksyms *k, uint64_t addr, uint64_t *offset);

struct syms_cache;
struct syms_cache *syms_cache_new(int flags);
void syms_cache_free(struct syms_cache *c);
/* Read /proc/PID/maps and open what it maps, now (call at the first sample of
 * a pid).  0, or -1 if the process is gone. */
int syms_cache_snapshot(struct syms_cache *c, pid_t pid);
/* Name of the function at addr in pid (snapshotting first if needed), or NULL.
 * *module (basename of the mapped file) and *offset are set when known.
 * Returned strings live as long as the cache. */
const char *syms_cache_lookup(struct syms_cache *c, pid_t pid, uint64_t addr,
			      const char **module, uint64_t *offset);

#endif
