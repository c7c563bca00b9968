/* uprobes.h — finding a shared library and attaching uprobes to its functions
 * (mallocstacks, memleak), and starting a command to trace (-c).
 *
 *   char *libc = uprobes_find_lib(pid, "libc");        // NULL + message if absent
 *   struct bpf_link *l = uprobes_attach(prog, pid, libc, "malloc", 0);
 *   pid_t child = uprobes_command_start("./leaky 3");        // stopped before exec; -1: failed
 *   ... attach with pid = child ...
 *   if (uprobes_command_go(child) < 0) ...                     // now it execs
 *   while (!collector_should_stop() && !uprobes_command_exited(child, &status)) ...
 */
#ifndef MARPLE_UPROBES_H
#define MARPLE_UPROBES_H

#include <stdint.h>
#include <sys/types.h>

struct bpf_program;
struct bpf_link;

/* The path of the shared library whose file name starts with "name.so" or
 * "name-" (e.g. "libc" finds libc.so.6) mapped in pid (-1: in this process,
 * then the ld.so cache), as /proc/PID/root/... for a process in another mount
 * namespace.  NULL + a one-line message if it is not found. */
char *uprobes_find_lib(pid_t pid, const char *name);

/* Attach prog as a uprobe on function func of the ELF file path, for pid
 * (-1: every process), cookie for the program to read
 * (bpf_get_attach_cookie: one program for several functions, verified
 * once).  path is opened without blocking and must be a regular file
 * (procmaps_open_safe), func is found through the model (mappedfiles + the
 * symbolizer's elfsyms slot), and the kernel is handed that very file by its
 * descriptor.  NULL + a one-line message naming the function, the file and
 * why (not a regular file, not an ELF file, no such function, the kernel's
 * error) on failure. */
struct bpf_link *uprobes_attach(struct bpf_program *prog, pid_t pid, const char *path,
				const char *func, uint64_t cookie);

/* Same at offset bytes into func, a uretprobe where retprobe. */
struct bpf_link *uprobes_attach_at(struct bpf_program *prog, pid_t pid, const char *path,
				   const char *func, size_t offset, int retprobe, uint64_t cookie);

/* Where to put an entry probe on func(ptr) of path so that it fires for every
 * ptr != NULL and the probed instruction is one the kernel emulates: past a
 * leading "test %rdi,%rdi; je" when the next instruction is a push (glibc's
 * free).  A uprobe on the test itself is single-stepped out of line, a debug
 * trap that costs tens of microseconds in some virtual machines.  0 when path
 * is not this process's own copy of the library or the code differs. */
size_t uprobes_past_null_check(const char *path, const char *func);

/* Does process pid exist?  0, or -1 after "process PID not found". */
int uprobes_require_process(pid_t pid);

/* Fork a child that executes CMD (split into words as sh would, without
 * command substitution; found on $PATH) once uprobes_command_go() is called, so that
 * probes can be attached to its pid first.  Its stdout goes to stderr (stdout
 * is the collector's data).  The child, or -1 after a message naming the
 * command (it cannot be split, no pipe, no fork).  uprobes_command_go() lets
 * it exec: 0, or -1 after a message naming the command when it cannot be run
 * (not found, not executable).  None of them ends this process: the caller
 * decides. */
pid_t uprobes_command_start(const char *cmd);
int uprobes_command_go(pid_t child);
/* Does cmd split into a command and its arguments (as for
 * uprobes_command_start: quoted as for sh, no ; | & < > or $(...))?  0, or
 * -1: a usage error, checked with the options. */
int uprobes_command_check(const char *cmd);
/* Has the child exited?  Non-blocking; call it often (every 100ms): the child
 * is ptraced and waits here after exec and before it exits, when at_exit (if
 * not NULL) is called while its memory maps can still be read.  *status gets
 * its exit status (128+N for a signal).  Returns 1 once, when it has. */
int uprobes_command_exited(pid_t child, void (*at_exit)(pid_t, void *), void *arg, int *status);
/* End the child (SIGTERM, then reap) if it is still running. */
void uprobes_command_stop(pid_t child);

#endif
