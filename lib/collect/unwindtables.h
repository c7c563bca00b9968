/* unwindtables.h — unwind tables for --unwind tables: each executable file's
 * .eh_frame (and .debug_frame) turned into sorted rows (struct unwind_row,
 * bpf/stacks.h; built by unwindtablescfi.h) that the BPF side
 * (bpf/stacks.bpf.h) walks user stacks with, in the kernel.
 *
 * One table per file (by device and inode; the vdso by its contents' place),
 * shared by every process that maps it; each process gets the list of its
 * executable mappings with where its file's rows are.  Loaded for -p's
 * process before the capture, and for any other when the BPF side asks
 * (a process it has no mappings for, or a PC outside them: exec, dlopen).
 *
 *   struct unwindtables *t = unwindtables_new(skel->obj);     // after load
 *   unwindtables_load_pid(t, pid);                          // -p's process
 *   unwindtables_poll_with(t, news);     // its requests ride on the process news (procnewsring.h)
 *   ... capture ...
 *   unwindtables_trailer_add(t, trailer);                   // "unwind": {...}
 *   unwindtables_free(t);
 */
#ifndef MARPLE_UNWINDTAB_H
#define MARPLE_UNWINDTAB_H

#include <gelf.h>
#include <jansson.h>
#include <linux/types.h>
#include <stdint.h>
#include <sys/types.h>

#include "stacks.h"

/* The row for file address pc in rows[0..n), or NULL before the first. */
const struct unwind_row *unwindtables_find(const struct unwind_row *rows, uint32_t n, uint64_t pc);

struct bpf_object;
struct ring_buffer;
struct unwindtables;
/* --unwind's modes (UNWIND_MODE_*, stacks.h) by name, and back: "tables",
 * "fp", "dwarf"; -1 for another name. */
int unwindtables_mode(const char *name);
const char *unwindtables_mode_name(int mode);
/* Size the unwind maps of an object that includes bpf/stacks.bpf.h, before
 * load: in tables mode room for memory bytes of tables and rules (--unwind-memory; the
 * kernel allocates them at load) and UNWINDTABLES_PROCS processes, or when one
 * process is traced (one_pid: -p, -t) a few slots and rows for its files'
 * CFI and more, memory at most; one entry each otherwise.  cache (NULL:
 * none) keeps what probing the kernel found out, for the next runs.  0 or -1. */
#define UNWINDTABLES_MEMORY_DEFAULT (32ull << 20)	/* ~7.3 M rows of 4 bytes (+ page index, rules):
						 * cc1 + libLLVM + libclang-cpp + libc ~3.5 M */
#define UNWINDTABLES_PROCS 1024u		/* 8 MB of mappings */
#define UNWINDTABLES_PROCS_ONE 8u		/* the process, again after each exec or dlopen */
#define UNWINDTABLES_FILES 16384u		/* files found by bpf_find_vma (1.5 MB) */
#define UNWINDTABLES_FILES_ONE 1024u
#define UNWINDTABLES_LEARNED 4096u		/* processes whose VMAs found by lookup are kept (1.6 MB) */
struct unwindtablescache;
int unwindtables_size(struct bpf_object *obj, int mode, pid_t one_pid, uint64_t memory,
		      struct unwindtablescache *cache);
/* For a loaded object that includes bpf/stacks.bpf.h; NULL + message if its
 * maps cannot be mapped. */
struct unwindtables *unwindtables_new(struct bpf_object *obj);
void unwindtables_free(struct unwindtables *t);
/* Read files' rows from cache, and write those built there (unwindtablescache.h;
 * owned by t from now on); before any table is loaded.  Without it (NULL:
 * --no-cache) every file's rows are built. */
void unwindtables_use_cache(struct unwindtables *t, struct unwindtablescache *cache);
/* The file tables' maps of t are those pinned by shared
 * (unwindtablesshared_open before load; owned by t from now on): files are
 * added under its lock, and those another collector made are taken as
 * they are.  NULL: they are t's alone (the reason, from the last
 * unwindtablesshared_open, goes into the trailer).  Before any table is
 * loaded. */
struct unwindtablesshared;
void unwindtables_use_shared(struct unwindtables *t, struct unwindtablesshared *shared);
/* Build the tables of the C library and the dynamic loader now (the
 * worker does it first otherwise): for a command about to start, whose
 * first samples are then walked by table at once. */
void unwindtables_warm_up(struct unwindtables *t);
/* Build the table of the executable file at path now (a command about to
 * be started): its first samples find it through bpf_find_vma. */
void unwindtables_warm_file(struct unwindtables *t, const char *path);
/* Read pid's executable mappings and give the BPF side them with their
 * tables (building those not built yet).  0, or -1 if the process is gone. */
int unwindtables_load_pid(struct unwindtables *t, pid_t pid);
/* Post the file mappings of each process loaded from now on to syms
 * (syms_cache_post_maps): a library the symbolizer's own read of the
 * process's maps missed (mapped after it, the process gone before the next)
 * is named from them. */
struct syms_cache;
void unwindtables_share_maps(struct unwindtables *t, struct syms_cache *syms);
/* Serve the BPF side's requests (PROCNEWS_UNWIND_REQUEST): they are read
 * whenever the news are polled, and served by a thread of the table's own. */
struct procnewsring;
int unwindtables_poll_with(struct unwindtables *t, struct procnewsring *news);
/* Stop serving requests, and add "unwind": {mode, the BPF counters, files,
 * rows, table_bytes, build_ms, the files left without room, the files built
 * and read from the cache, cache_ms} to a trailer,
 * with a line on stderr when many stacks were cut, and one naming the files
 * left without a table when the limit was reached. */
void unwindtables_trailer_add(struct unwindtables *t, json_t *trailer);
/* Continuous mode, after a section's trailer: serve requests again (the
 * trailer stopped the worker to read final counts); the next trailer's
 * counts (stacks walked, frames, cuts, files built, build and cache time,
 * process loads, files from another collector) are the next section's
 * own, its sizes (files, rows, memory) those of the tables as they are. */
void unwindtables_resume(struct unwindtables *t);

#endif
