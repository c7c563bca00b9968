/* syms.h — symbol resolution for collectors (kernel and user space).
 *
 * Collectors of stacks (callstack, offcpu, mallocstacks, memleak, memevents,
 * diskblockrq) all use it:
 *
 *   struct ksyms *k = syms_kernel_load();                  // once; NULL if unreadable
 *   struct syms_cache *c = syms_cache_new(SYMS_DEMANGLE);
 *   syms_cache_snapshot(c, pid);                     // at the first sight of pid
 *   name = syms_cache_lookup(c, pid, addr, &module, &off);   // NULL: unknown
 *   name = syms_cache_lookup_exec(c, pid, exec_id, addr, &module, &off);  // across exec
 *   syms_cache_frame(c, pid, exec_id, addr, 0, &frame);   // name, kind, file, build-id, offsets
 *   name = syms_kernel_lookup(k, addr, &off);
 *
 * Most collectors do not call this directly but go through lib/collect/stackframes.h,
 * which turns BPF stack ids into root-first frames.
 *
 * Kernel names are ksyms.h's (with their BPF program).  User: the process's
 * images, each its mappings read from /proc/PID/maps; each mapped file is
 * the model's (mappedfiles.h: one identity, opened safely and mapped once),
 * and what it tells, elfsyms.h's (.symtab, .dynsym, separate debug files by
 * build-id or .gnu_debuglink, PLT stubs named from their relocations; PIE
 * and shared-library bias taken from the PT_LOAD segments); a JIT's
 * /tmp/perf-PID.map is perfmap.h's (read again when it changes, below).
 * Files are opened through /proc/PID/map_files (deleted files too), else
 * /proc/PID/root, so that processes in containers resolve against their own
 * files.  An address is a symbol's only inside it (its st_size, or for an
 * unsized label up to the next symbol and no further than the end of its
 * section): past _fini is no function, not "_fini".
 * syms_cache_snapshot() captures what a process
 * needs (its maps and its files, held in the model) the first time it is seen,
 * so it can still be named after it exits.  A lookup that misses every mapping
 * of a live process re-reads its maps (at most once a second: dlopen).
 *
 * Exec: a process that execs keeps its pid but gets new files at the same
 * addresses.  The _exec functions tell its images apart by an exec id (the
 * stack collectors record task->self_exec_id, which each execve bumps, with
 * every stack): each (pid, exec id) has its own snapshot, and once a newer
 * image of a pid is known the older ones are never read from /proc again, so a
 * stack is named from the files of the image it was sampled in or not at all
 * ("[unknown]"), never from another's.  syms_cache_snapshot_exec() also checks
 * that the maps it read are of the image meant (its layout, below).
 */
#ifndef MARPLE_SYMS_H
#define MARPLE_SYMS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ksyms.h"
#include "mappedfiles.h"

enum syms_flags {
	SYMS_DEMANGLE = 1,	/* C++ and Rust names demangled (libiberty) */
	SYMS_DEMANGLE_PARAMS = 2,	/* with SYMS_DEMANGLE: keep C++ parameter lists */
};

/* Of two names of one address, is a the one to show?  The public name: one
 * without a leading '_' first (malloc, not __libc_malloc), then the shorter
 * (then the first in byte order, so the choice never depends on order). */
int syms_name_preferred(const char *a, const char *b);

struct syms_cache;
struct syms_cache *syms_cache_new(int flags);
void syms_cache_free(struct syms_cache *c);
/* Read /proc/PID/maps and open what it maps, now (call at the first sample of
 * a pid).  0, or -1 if the process is gone.  A pid already snapshotted is
 * left alone (0). */
int syms_cache_snapshot(struct syms_cache *c, pid_t pid);

/* Exec ids: the low 32 bits of task->self_exec_id; SYMS_EXEC_ANY: "whichever
 * image of pid is the newest known" (what the functions without _exec use). */
#define SYMS_EXEC_ANY UINT64_MAX
/* An image's layout as /proc/PID/stat shows it, fields 26-28, 45-47, 50-51
 * (startcode endcode startstack start_data end_data start_brk env_start
 * env_end): where its code, data, heap and stack were put, randomized at each
 * exec.  BPF reads the same from current->mm (bpf/stacks.h: struct pid_note). */
#define SYMS_LAYOUT_N PROCMAPS_LAYOUT_N	/* procmaps_read_layout reads it */
/* Snapshot image exec_id of pid, which had this layout when it was sampled:
 * 0 when done (or done before); -1 if it cannot be any more (the process
 * exited, or a newer image is known); 1 if the process no longer has that
 * layout (it exec'ed, or was sampled in the middle of an exec with its layout
 * half built): nothing is kept, and a later call may try again (4 times). */
int syms_cache_snapshot_exec(struct syms_cache *c, pid_t pid, uint64_t exec_id,
			     const uint64_t layout[SYMS_LAYOUT_N]);
/* Read again, while they live and keep their layout, the maps of the images
 * snapshotted by syms_cache_snapshot_exec, 50 ms and 1 s after: libraries
 * mapped just after a snapshot (by ld.so after an exec, dlopen at start-up)
 * are then known.  Call it every few hundred ms during a capture. */
void syms_cache_refresh(struct syms_cache *c);
/* Read the maps of image exec_id of pid again now, if it still lives with
 * that layout and they were read more than 10 ms ago (an unwinder that met
 * an address mapped since: ld.so maps a program's libraries after its exec's
 * snapshot).  0 if read, else -1. */
int syms_cache_reread_exec(struct syms_cache *c, pid_t pid, uint64_t exec_id);
/* Continuous mode, after a section: forget the processes that have exited
 * (their samples were all drained and named in it), so that a week on a busy
 * box (here 200 processes a second) does not keep every one's maps, and the
 * files no process left maps (their symbols and mapped ELF files; the
 * strings looked up in them are gone too).  A zombie stays until reaped.
 * How many processes were forgotten. */
size_t syms_cache_forget_exited(struct syms_cache *c);
/* The same in two steps, for a capture that names stacks while it runs: mark
 * the processes exited now (before the kernel maps are read: all their
 * samples are then in user space), name every stack drained, then forget
 * those marked.  keep_jit: not the processes with anonymous executable memory
 * (a JIT's perf map is read when the stacks are written, jitframes.h).
 * Either also lets go of the pages of the mapped ELF files read since the
 * last call (they are read again from the page cache when needed): a long
 * capture keeps what a period's lookups read resident, not all it read. */
void syms_cache_mark_exited(struct syms_cache *c);
size_t syms_cache_forget_marked(struct syms_cache *c, int keep_jit);

/* Name of the function at addr in pid (snapshotting first if needed), or NULL.
 * *module (basename of the mapped file, or "[vdso]", "[anon]"...) and *offset
 * are set when known (module NULL when addr is in no mapping).  Either may be
 * NULL.  Returned strings live as long as the cache. */
const char *syms_cache_lookup(struct syms_cache *c, pid_t pid, uint64_t addr,
			      const char **module, uint64_t *offset);
/* The same in image exec_id of pid.  An image first seen here is read from
 * /proc now unless a newer one is known (then every lookup in it is NULL). */
const char *syms_cache_lookup_exec(struct syms_cache *c, pid_t pid, uint64_t exec_id, uint64_t addr,
				   const char **module, uint64_t *offset);

/* One answer for an address: everything known about the frame at addr in
 * image exec_id of pid, from one search of its mappings (stackframes.c asks
 * once a frame).  Strings live as long as the cache. */
enum syms_kind {
	SYMS_KIND_UNKNOWN,		/* in no file and no JIT code */
	SYMS_KIND_NATIVE,		/* in a mapped file (named by its symbols, or not) */
	SYMS_KIND_JIT,			/* named by the process's perf map, or in its anonymous executable memory */
};
struct syms_frame {
	const char *name;		/* NULL: not named */
	enum syms_kind kind;
	const char *module;		/* basename, "[vdso]", "[anon]"...; NULL: addr is in no mapping */
	const char *path;		/* the file as the process's maps name it (else as module) */
	struct mappedfile_id file;	/* the file's identity (mappedfiles.h); 0, 0: no file */
	const char *build_id;		/* GNU build id in hex, "" if none or no file */
	uint64_t file_offset;		/* addr's offset in the file (in the mapping's object) */
	uint64_t sym_offset;		/* addr - the start of the symbol (or perf map line) named */
	uint64_t map_start, map_end, map_pgoff;	/* the mapping holding addr */
	int in_jit_memory;		/* anonymous executable memory of a process that has some */
	int at_interp_entry;		/* asked with SYMS_FRAME_INTERP_ENTRY, below */
};
/* flags: SYMS_FRAME_INTERP_ENTRY also says whether addr is in the first
 * SYMS_ENTRY_CODE bytes of the entry point (ELF e_entry) of the file the
 * image's program names as its interpreter (PT_INTERP: the dynamic loader),
 * by device and inode: a user stack that ends there is whole (the loader's
 * _start relocating the program before main; its first call is at most a
 * few instructions in).  0 and *out filled, or -1 (*out filled all the
 * same) when addr is in no mapping. */
#define SYMS_FRAME_INTERP_ENTRY 1
#define SYMS_ENTRY_CODE 64
int syms_cache_frame(struct syms_cache *c, pid_t pid, uint64_t exec_id, uint64_t addr, int flags,
		     struct syms_frame *out);

/* JIT code named after the fact.  A JIT lists its code in /tmp/perf-PID.map
 * ("START SIZE name", hex, one a line; where lines overlap the later wins),
 * read in the process's own root (a container's /tmp, under its pid there).
 * The JVM writes it only at exit or on `jcmd PID Compiler.perfmap`, after the
 * samples were named: read the map of pid again if it has appeared or
 * changed, also once pid has exited (the owner and root it needs were kept
 * at its snapshot).  1 when it was read, else 0. */
int syms_cache_jit_reload(struct syms_cache *c, pid_t pid, uint64_t exec_id);
/* The JIT pid runs, judged by the files it maps: "java" (libjvm.so),
 * "node", or NULL. */
const char *syms_cache_jit_runtime(struct syms_cache *c, pid_t pid, uint64_t exec_id);


/* What the unwinder needs about the mapping holding addr (lib/collect/unwinddwarfwalk.c). */
struct syms_map {
	uint64_t start, end, pgoff;	/* the mapping, as in /proc/PID/maps */
	const char *module;		/* basename */
	const unsigned char *file;	/* the whole mapped ELF file (mmapped), or NULL */
	size_t file_size;
	int64_t bias;			/* run-time address = ELF vaddr + bias */
	uint64_t eh_frame_hdr;		/* vaddr of .eh_frame_hdr, 0 if none */
	uint64_t eh_frame_hdr_size;
	uint64_t lo, hi;		/* run-time range of all of this file's mappings */
};
/* 0 and *out filled, or -1 if addr is in no file-backed mapping of pid. */
int syms_cache_map(struct syms_cache *c, pid_t pid, uint64_t addr, struct syms_map *out);
int syms_cache_map_exec(struct syms_cache *c, pid_t pid, uint64_t exec_id, uint64_t addr, struct syms_map *out);
int syms_cache_read_exec(struct syms_cache *c, pid_t pid, uint64_t exec_id, uint64_t addr, void *buf,
			 size_t len);

/* A file VMA the BPF walk found in image exec_id of pid (bpf/stacks.h: struct
 * unwind_vma_note; the file by the kernel's identity: device kdev as it
 * encodes it, major << 20 | minor, and inode): the addresses in it that
 * fall in no mapping read from /proc are named from that file.  A process
 * whose libraries were mapped after its maps were read (ld.so, after the
 * exec's snapshot) and that exited before they were read again is named
 * so.  The file is one any process's maps named, or the one mapped there
 * while pid lives, checked to be that inode: never another.  0, or -1 if
 * the file was not found (yet: a process seen later that maps it names the
 * frames). */
int syms_cache_add_walked_vma(struct syms_cache *c, pid_t pid, uint64_t exec_id, uint64_t start, uint64_t end,
			      uint64_t pgoff, uint32_t kdev, uint64_t ino);

/* Thread-safe, for another reader of pid's maps (the unwind tables' worker):
 * lines[0..n), read while pid had layout (read before and after them), are
 * the walked VMAs of the image with that layout, as above (its file by the
 * line's device and inode, else opened by its path, checked to be that
 * inode).  Taken in by the cache's own thread at syms_cache_refresh or
 * when a lookup finds no mapping; an image not known by then is left out
 * (as are lines past 16,384 waiting). */
struct procmaps_line;
void syms_cache_post_maps(struct syms_cache *c, pid_t pid, const uint64_t layout[SYMS_LAYOUT_N],
			  const struct procmaps_line *lines, size_t n);

/* Statistics for the trailers and the benchmarks. */
struct syms_stats {
	uint64_t procs, dsos, symbols, lookups, misses;	/* since the start */
	uint64_t procs_held, dsos_held;	/* held now: images not forgotten, files open */
	uint64_t procs_forgotten;	/* images let go (syms_cache_forget_*) */
	uint64_t walked_vmas;		/* syms_cache_add_walked_vma calls */
	uint64_t walked_vmas_unopened;	/* ... whose file was still not found when a
					 * frame in it was looked up */
	uint64_t walked_named;		/* lookups named from a VMA the walk found */
	uint64_t posted_unmatched;	/* posted mappings (syms_cache_post_maps) whose
					 * image was never announced: dropped */
	uint64_t symbol_names_cut;	/* ELF symbol names cut to ELFSYMS_NAME_MAX */
	uint64_t perfmap_lines_skipped;	/* perf map lines not read: malformed, past the line limit */
	uint64_t perfmap_names_cut;	/* perf map lines or names cut to their limits (perfmap.h) */
	uint64_t perfmap_bytes_unread;	/* perf map bytes past the size limit */
	uint64_t file_releases;		/* mapped files whose pages were let go
					 * (syms_cache_forget_marked: those read
					 * since the last time) */
};
void syms_cache_stats(const struct syms_cache *c, struct syms_stats *out);

#endif
