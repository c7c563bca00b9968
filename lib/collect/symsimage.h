/* symsimage.h — the symbolizer's model of a process image, private to
 * syms.c (images, their maps, lookups) and symswalked.c (the file VMAs an
 * image learns from the unwinder's walk and other readers of its maps). */
#ifndef MARPLE_SYMSIMAGE_H
#define MARPLE_SYMSIMAGE_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "elfsyms.h"
#include "mappedfiles.h"
#include "perfmap.h"
#include "procmaps.h"
#include "syms.h"

struct umap {
	uint64_t start, end, pgoff;
	struct elfsyms_file *dso;		/* NULL for anonymous and special mappings */
	const char *name;		/* basename or "[vdso]", "[anon]"... (owned by the cache) */
	int anon_exec;			/* anonymous and executable: where a JIT puts code */
	int walked;			/* told by the BPF walk (syms_cache_add_walked_vma) */
};

/* A file VMA the BPF walk found (syms_cache_add_walked_vma): its file
 * known by the kernel's identity, found when told or at a lookup later (a
 * process that maps it seen since) */
struct walked_vma {
	struct umap m;			/* m.dso NULL: its file not found yet */
	struct procmaps_line id;	/* range, device and inode (path "") */
	int missed;			/* looked up without its file: counted */
};

/* One image of a process: (pid, exec id), or (pid, SYMS_EXEC_ANY) for callers
 * that do not tell images apart. */
struct proc {
	pid_t pid;
	int gone;			/* maps unreadable: exited */
	int frozen;			/* never read /proc for it again: a newer image
					 * of pid is known, or its maps could not be
					 * shown to be of this image */
	int verified;			/* maps read and checked against layout */
	int tries;			/* snapshots whose layout did not match */
	uint64_t exec_id;
	uint64_t layout[SYMS_LAYOUT_N];	/* valid when has_layout */
	int has_layout;
	int refreshes;			/* syms_cache_refresh reads done */
	int forget;			/* syms_cache_forget_exited: exited, to be freed */
	uint64_t snap_ns;		/* when it was snapshotted */
	uint64_t read_ns;
	struct umap *maps;
	size_t nmaps;
	/* file VMAs the BPF walk found in this image (syms_cache_add_walked_vma):
	 * where maps has nothing (a library mapped after they were read, the
	 * process gone before they were read again) */
	struct walked_vma *walked;
	size_t nwalked, walked_cap;
	int unread;			/* made by syms_cache_add_walked_vma: maps not read yet */
	struct perfmap *jit;
	/* what finding and trusting its perf map needs, kept from the snapshot
	 * of a process with anonymous executable memory so that a map written
	 * at exit (the JVM's) can still be read after the process is gone */
	/* its program's interpreter (PT_INTERP), found once (find_interp) */
	int interp_state;		/* 0: not looked for; 1: found; -1: none */
	int interp_by_id;		/* found on disk: known by interp_id, else by interp_base */
	struct mappedfile_id interp_id;
	char interp_base[64];
	const struct elfsyms_file *interp_prog;	/* the program naming it (not itself the loader) */
	int jit_known;			/* jit_process noted */
	int anon_exec;			/* it has anonymous executable memory */
	struct perfmap_process jit_process;
	uint64_t jit_check_ns;		/* when its map was last looked at */
	struct proc *next;
};

#define NBUCKETS 4096

/* A file mapping another thread saw in a process's maps (syms_cache_post_maps) */
struct posted_map {
	pid_t pid;
	uint64_t layout[SYMS_LAYOUT_N];
	uint64_t posted_ns;		/* when (monotonic): kept for its image this long */
	struct procmaps_line l;		/* l.path: owned, with the process's root before it */
};

#define SYMS_POSTED_MAX 16384
/* A reader of maps can post a process's mappings before the cache has read
 * the announcement of its image (another thread reads the maps; the news
 * ring is read between the collector's naming slices, which take what was
 * posted): kept for it this long, then dropped, counted. */
#define SYMS_POSTED_WAIT_NS 2000000000ull

struct syms_cache {
	int flags;
	pthread_mutex_t post_lock;	/* posted: filled by another thread */
	struct posted_map *posted;
	size_t nposted, posted_cap;
	struct posted_map *waiting;	/* taken, their images not announced yet */
	size_t nwaiting, waiting_cap;
	uint64_t announced, waiting_announced;	/* images announced (snapshot_exec):
						 * in all, and at waiting's last scan */
	uint64_t waiting_scan_ns;
	struct proc *procs[NBUCKETS];
	struct elfsyms elf;		/* its files: slots in the model (mappedfiles.h) */
	char **names;			/* interned mapping names */
	size_t nnames, names_cap;
	struct syms_stats st;
	struct proc **young;		/* images syms_cache_refresh will read again */
	size_t nyoung, young_cap;
	struct hashtab *jit_names;	/* the names of perf maps' lines, demangled */
};

/* Image (pid, exec_id) of c, or NULL; a new one, its maps not read */
struct proc *syms_find_image(struct syms_cache *c, pid_t pid, uint64_t exec_id);
struct proc *syms_new_image(struct syms_cache *c, pid_t pid, uint64_t exec_id);

/* symswalked.c */
void syms_take_posted(struct syms_cache *c);
struct umap *syms_walked_map(struct syms_cache *c, struct proc *p, uint64_t addr);
void syms_posted_free(struct syms_cache *c);

#endif
