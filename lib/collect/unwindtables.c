/* unwindtables.c — the unwind tables in BPF maps: each executable file's rows
 * (built by unwindtablescfi.c), and the per-process mappings that point at
 * them (see unwindtables.h). */
#include "unwindtables.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "bpfmap.h"
#include "collector.h"
#include "hashtab.h"
#include "mappedfiles.h"
#include "procmaps.h"
#include "procnewsring.h"
#include "syms.h"
#include "unwindtablescache.h"
#include "unwindtablescompact.h"
#include "unwindtablessize.h"
#include "unwindtablescfi.h"
#include "unwindtablesroom.h"
#include "unwindtablesshared.h"
#include "util.h"
#include "vmaiter.h"

#define MAX_LOADS 16

const struct unwind_row *unwindtables_find(const struct unwind_row *rows, uint32_t n, uint64_t pc)
{
	uint32_t lo = 0, hi = n;	/* the answer is below hi */

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (rows[mid].pc <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &rows[lo - 1] : NULL;
}

/* ---- the tables in BPF maps ---- */

static const char *const mode_names[] = { [UNWIND_MODE_FP] = "fp", [UNWIND_MODE_TABLES] = "tables",
					  [UNWIND_MODE_DWARF] = "dwarf" };

int unwindtables_mode(const char *name)
{
	for (int m = 0; m < 3; m++)
		if (strcmp(name, mode_names[m]) == 0)
			return m;
	return -1;
}

const char *unwindtables_mode_name(int mode)
{
	return mode >= 0 && mode < 3 ? mode_names[mode] : "?";
}



int unwindtables_size(struct bpf_object *obj, int mode, pid_t one_pid, uint64_t memory,
		      struct unwindtablescache *cache)
{
	int tables = mode == UNWIND_MODE_TABLES;
	/* the maps are allocated and zeroed in the kernel when created, all of
	 * them: one process needs a few slots (it execs, maps more) and the rows
	 * of its files, with their page indexes */
	uint32_t limit = unwindtablesroom_words_in(memory), nwords = limit;
	uint64_t want;
	if (one_pid && tables) {
		want = (uint64_t)unwindtablessize_words_for(one_pid) + 2;
		if (want < limit)
			nwords = (uint32_t)want & ~1u;
	}
	const char *exact = getenv("MARPLE_TEST_UNWIND_WORDS");	/* unwind.t's eviction: rows, not rules, exactly */
	if (tables && exact && marple_parse_u64(exact, 2, limit, &want) == 0)
		nwords = (uint32_t)want & ~1u;
	uint32_t nprocs = one_pid ? UNWINDTABLES_PROCS_ONE : UNWINDTABLES_PROCS;
	struct bpf_map *rows = bpf_object__find_map_by_name(obj, "unwind_rows");
	struct bpf_map *rules = bpf_object__find_map_by_name(obj, "unwind_rules");
	struct bpf_map *maps = bpf_object__find_map_by_name(obj, "unwind_mappings");
	struct bpf_map *procs = bpf_object__find_map_by_name(obj, "unwind_procs");
	struct bpf_map *files = bpf_object__find_map_by_name(obj, "unwind_files");
	struct bpf_map *learned = bpf_object__find_map_by_name(obj, "unwind_learned");

	if (!rows || !rules || !maps || !procs || !files || !learned ||
	    bpf_map__set_max_entries(rows, tables ? nwords / 2 : 1) < 0 ||
	    bpf_map__set_max_entries(rules, tables ? unwindtablesroom_rules_in(memory) : UNWIND_RULES_RESERVED) < 0 ||
	    bpf_map__set_max_entries(learned, tables ? UNWINDTABLES_LEARNED : 1) < 0 ||
	    bpf_map__set_max_entries(files, tables ? (one_pid ? UNWINDTABLES_FILES_ONE : UNWINDTABLES_FILES) : 1) < 0 ||
	    bpf_map__set_max_entries(maps, tables ? nprocs * UNWIND_MAX_MAPPINGS : 1) < 0 ||
	    bpf_map__set_max_entries(procs, tables ? nprocs : 1) < 0)
		return -1;
	if (tables)
		bpfmap_rodata_set(obj, "unwind_file_lookup",
			   vmaiter_works(cache) ? UNWIND_LOOKUP_VMA_ITER : UNWIND_LOOKUP_FIND_VMA);
	/* the Python walker finds a launcher's libpython with bpf_find_vma,
	 * where the kernel has it (bpf/python.bpf.h) */
	bpfmap_rodata_set(obj, "py_find_vma", libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_find_vma, NULL) == 1);
	return 0;
}

struct load {
	uint64_t offset, vaddr, filesz;
	int exec;			/* PF_X */
};

struct file {
	uint32_t row_off, nrows;	/* its table at word row_off of unwind_rows; nrows 0: no table */
	uint32_t words;			/* the table's words there */
	int has_cfi;			/* .eh_frame or .debug_frame rows (or unreadable: no
					 * frame pointers guessed in it either) */
	struct load loads[MAX_LOADS];	/* its PT_LOAD segments, for the bias */
	int nloads;
	uint32_t stamp;			/* its change time (mappedfile_stamp) */
};

struct unwindtables {
	/* each file's table is the tables' slot in the model (mappedfiles.h),
	 * the file held while the table is loaded; the vdso is in no file */
	struct mappedfiles *model;
	struct mappedfile **held;
	size_t nheld, held_cap;
	struct file *vdso;
	uint64_t files_unopened;	/* mappings whose file could not be opened */
	int rows_fd, mappings_fd, procs_fd, counters_fd, files_fd;
	uint32_t file_lookup;		/* UNWIND_LOOKUP_*: how the BPF side finds a PC's file */
	uint32_t *words;		/* unwind_rows, mapped as far as written (rows_view) */
	struct bpfmap_view rows_view, mappings_view;
	struct unwind_rule *rule_array;	/* unwind_rules, mmapped */
	uint64_t *procs_gen;		/* unwind_procs_gen, mmapped: moved on at each new slot */
	struct unwindtables_rules rules;
	struct unwind_mapping *mappings;	/* unwind_mappings, its slots in use mapped (mappings_view) */
	struct unwindtables_rowbuf rowbuf;	/* where each file's rows are built */
	uint32_t words_cap, words_used, rules_cap, slots;
	struct unwindtables_room room;	/* the rows freed below words_used */
	struct unwindtables_evictions evictions;
	uint64_t generation_seen;	/* the evictions the files' tables were checked after */
	uint64_t rows_used, index_words;	/* rows, and page index words, in the tables */
	pid_t *slot_pid;		/* who has each slot; 0: free */
	uint32_t next_slot;
	uint64_t build_ns, build_cpu_ns, compact_cpu_ns, unsupported, fdes_libdw, fdes_debug_frame, files_without_table, loads, procs_full;
	struct unwindtables_noroom noroom;	/* the files left without room */
	struct unwindtablescache *cache;	/* NULL: --no-cache, or none usable */
	struct unwindtablesshared *shared;	/* NULL: the tables' maps are ours alone */
	char *private_why;		/* why not shared */
	uint64_t files_shared;		/* files whose table another collector made */
	uint64_t stale_in_shared;	/* ... whose shared entry was another file's (inode reused) */
	uint64_t files_built;		/* files whose rows were built here (not read from the cache) */
	/* the counts the last trailer showed (reported) and, in continuous
	 * mode, those of the section before (before: what the next trailer
	 * subtracts, unwindtables_resume); the tables' sizes are not counts */
	struct unwindtables_counts {
		uint64_t c[UNWIND_NCOUNTERS];
		uint64_t build_ns, build_cpu_ns, compact_cpu_ns, files_built, loads, files_shared, stale_in_shared;
		uint64_t requests_served, request_wait_ns;
		struct unwindtablescache_stats cache;
		struct unwindtables_evictions evictions;
	} reported, before;

	/* requests are served by a thread of their own: building a big
	 * library's table takes seconds, and the collector's thread must go on
	 * reading its pid notes (symbols of short-lived processes) meanwhile */
	pthread_t worker;
	int worker_running, stopping;
	pthread_mutex_t lock;		/* the queue */
	pthread_cond_t wake;
	pthread_mutex_t load_lock;	/* files, slots and counts: one load at a time */
	int warm;			/* libc's and ld.so's tables built */
	pid_t queue[256];
	uint64_t queued_ns[256];	/* when each was asked for */
	unsigned nqueue;
	uint64_t queue_full;
	/* how long requests waited for the worker (asked until served), and
	 * the longest wait of the section */
	uint64_t requests_served, request_wait_ns, request_wait_max_ns;

	/* the file mappings of the process being loaded, for the symbolizer
	 * (unwindtables_share_maps; under load_lock) */
	struct syms_cache *syms;
	struct procmaps_line seen[UNWIND_MAX_MAPPINGS];
	size_t seen_off[UNWIND_MAX_MAPPINGS];	/* each one's path in seen_paths */
	uint32_t nseen;
	char *seen_paths;
	size_t seen_paths_len, seen_paths_cap;
};

static void warm_up(struct unwindtables *t);
static void stop_worker(struct unwindtables *t);

/* A process's slot of unwind_mappings, in bytes */
#define SLOT_BYTES ((size_t)UNWIND_MAX_MAPPINGS * sizeof(struct unwind_mapping))

static void *map_mmap(struct bpf_object *obj, const char *name, int *fd, uint32_t *entries)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, name);
	if (!m)
		return NULL;
	*fd = bpf_map__fd(m);
	*entries = bpf_map__max_entries(m);
	size_t len = (size_t)*entries * bpf_map__value_size(m);	/* values of 8 bytes: no padding */
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

struct unwindtables *unwindtables_new(struct bpf_object *obj)
{
	struct unwindtables *t = marple_calloc(1, sizeof(*t));
	uint32_t nmap = 0;
	int rules_fd;
	struct bpf_map *procs = bpf_object__find_map_by_name(obj, "unwind_procs");
	struct bpf_map *counters = bpf_object__find_map_by_name(obj, "unwind_counters");
	struct bpf_map *files = bpf_object__find_map_by_name(obj, "unwind_files");

	elf_version(EV_CURRENT);
	struct bpf_map *rows = bpf_object__find_map_by_name(obj, "unwind_rows");
	struct bpf_map *maps = bpf_object__find_map_by_name(obj, "unwind_mappings");
	if (rows && maps) {
		t->rows_fd = bpf_map__fd(rows);
		t->words_cap = bpf_map__max_entries(rows) * 2;
		t->mappings_fd = bpf_map__fd(maps);
		nmap = bpf_map__max_entries(maps);
		if (bpfmap_view_open(&t->rows_view, t->rows_fd, PROT_READ | PROT_WRITE) == 0)
			t->words = (uint32_t *)(void *)t->rows_view.base;
		if (bpfmap_view_open(&t->mappings_view, t->mappings_fd, PROT_READ | PROT_WRITE) == 0)
			t->mappings = (struct unwind_mapping *)(void *)t->mappings_view.base;
	}
	t->rule_array = map_mmap(obj, "unwind_rules", &rules_fd, &t->rules_cap);
	int gen_fd;
	uint32_t gen_entries;
	t->procs_gen = map_mmap(obj, "unwind_procs_gen", &gen_fd, &gen_entries);
	if (!t->words || !t->rule_array || !t->mappings || !t->procs_gen || !procs || !counters || !files) {
		marple_warn("cannot map the unwind tables: %s", strerror(errno));
		unwindtables_free(t);
		return NULL;
	}
	t->procs_fd = bpf_map__fd(procs);
	t->counters_fd = bpf_map__fd(counters);
	t->files_fd = bpf_map__fd(files);
	t->file_lookup = bpfmap_rodata_get(obj, "unwind_file_lookup", UNWIND_LOOKUP_FIND_VMA);
	t->slots = nmap / UNWIND_MAX_MAPPINGS;
	t->slot_pid = marple_calloc(t->slots, sizeof(*t->slot_pid));
	t->model = mappedfiles_shared();
	unwindtablescompact_rules_init(&t->rules, t->rule_array, t->rules_cap);
	pthread_mutex_init(&t->lock, NULL);
	pthread_mutex_init(&t->load_lock, NULL);
	pthread_cond_init(&t->wake, NULL);
	return t;
}

void unwindtables_free(struct unwindtables *t)
{
	if (!t)
		return;
	stop_worker(t);
	bpfmap_view_close(&t->rows_view);
	if (t->rule_array)
		munmap(t->rule_array, (size_t)t->rules_cap * sizeof(*t->rule_array));
	if (t->procs_gen)
		munmap(t->procs_gen, sizeof(*t->procs_gen));
	unwindtablescompact_rules_free(&t->rules);
	bpfmap_view_close(&t->mappings_view);
	for (size_t i = 0; i < t->nheld; i++) {
		mappedfile_set_slot(t->held[i], t, NULL, NULL);	/* frees its table */
		mappedfile_put(t->held[i]);
	}
	free(t->held);
	free(t->vdso);
	if (t->model)
		mappedfiles_release(t->model);
	unwindtablescfi_buf_free(&t->rowbuf);
	unwindtablescache_close(t->cache);
	unwindtablesshared_close(t->shared);
	free(t->private_why);
	unwindtablesroom_noroom_free(&t->noroom);
	free(t->slot_pid);
	free(t->seen_paths);
	free(t);
}

/* The table just written at off, n rows in words words: f's. */
static void add_table(struct unwindtables *t, struct file *f, uint32_t off, uint32_t n, uint64_t words,
		      const struct unwindtables_rowstats *st)
{
	f->row_off = off;
	f->nrows = n;
	f->words = (uint32_t)words;
	t->rows_used += n;
	t->index_words += words - n;
	t->unsupported += st->unsupported;
	t->fdes_libdw += st->fdes_libdw;
	t->fdes_debug_frame += st->fdes_debug_frame;
}

/* unwind_rows mapped from word off for words words (at most to the map's
 * end): 0, or -1.  Only while the table is written (build_file). */
static int reach_words(struct unwindtables *t, uint64_t off, uint64_t words)
{
	uint64_t end = off + words > t->words_cap ? t->words_cap : off + words;
	return bpfmap_view_window(&t->rows_view, (size_t)off * 4, (size_t)end * 4);
}

/* A place for a table of words words, mapped (unwindtablesroom_place). */
static uint32_t take_room(struct unwindtables *t, uint64_t words)
{
	uint32_t off = unwindtablesroom_place(&t->room, &t->words_used, t->words_cap, words, t->files_fd, &t->evictions);
	if (off != UNWINDTABLESROOM_NONE && reach_words(t, off, words) != 0) {
		unwindtablesroom_give(&t->room, &t->words_used, off, (uint32_t)words);
		off = UNWINDTABLESROOM_NONE;
	}
	return off;
}

/* f's table read from its cache entry (t->cache's; elf open as fd) straight
 * into a free part of the map as big as the entry, made a table there in
 * one pass (nothing to build or compact), the rest of the part freed: 1
 * when it was; else to be built: 0 with *tk for unwindtablescache_store or
 * _abandon; -1 when it is there but not to be used nor stored (no table
 * after all, no room for it, or it outgrew its room twice).  The room is
 * sized by the entry as it is before the lookup, which may wait for
 * another collector's build: the entry written meanwhile is then read with
 * room for it, not built a second time (unwindcache.t's two at once). */
static int read_cached(struct unwindtables *t, struct file *f, Elf *elf, int fd, struct unwindtablescache_ticket *tk)
{
	struct unwindtables_rowstats st;
	size_t len = unwindtablescache_entry_size(t->cache, fd);
	uint32_t n = 0;

	for (int tries = 0;; tries++) {
		uint32_t want = (uint32_t)((len + 3) / 4), off = want ? take_room(t, want) : UNWINDTABLESROOM_NONE;
		uint32_t entry = off == UNWINDTABLESROOM_NONE ? 0 : want;
		int rc = unwindtablescache_lookup(t->cache, tk, elf, fd, t->words + (entry ? off : 0),
						  (size_t)entry * 4, &len, &st);
		if (rc == 1) {
			uint64_t c1 = marple_thread_cpu_ns();
			uint64_t words = entry ? unwindtablescompact_import(t->words, off, len, &t->rules, &n) : 0;
			t->compact_cpu_ns += marple_thread_cpu_ns() - c1;
			if (words) {
				f->has_cfi = 1;
				unwindtablesroom_give(&t->room, &t->words_used, off + (uint32_t)words,
						      entry - (uint32_t)words);
				add_table(t, f, off, n, words, &st);
				return 1;
			}
			unwindtablescache_refuse(t->cache);	/* checked, yet not a table (never seen) */
		}
		if (entry)
			unwindtablesroom_give(&t->room, &t->words_used, off, entry);
		/* more room once: for the entry written while we sized and
		 * waited, not for one that had no room already */
		if (rc != UNWINDTABLESCACHE_MORE_ROOM || tries || entry < want)
			return rc == 0 ? 0 : -1;
	}
}

/* Build f's table from elf (open as fd; -1: the vdso) into unwind_rows, if
 * there is room left for it (any size: the limit is the table's,
 * --unwind-memory): read from the cache when it has it (read_cached), else
 * its rows built in our buffer (reused from file to file), then compacted
 * into a free part of the map (take_room), and cached. */
static void build_rows(struct unwindtables *t, struct file *f, Elf *elf, int fd, const char *path)
{
	struct unwindtables_rowstats st;
	struct unwindtablescache_ticket ticket;
	size_t nph;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &nph) == 0)
		for (size_t i = 0; i < nph && f->nloads < MAX_LOADS; i++)
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
				f->loads[f->nloads++] = (struct load){ ph.p_offset, ph.p_vaddr, ph.p_filesz,
								       (ph.p_flags & PF_X) != 0 };
	uint32_t n = 0, off = UNWINDTABLESROOM_NONE;
	int cache = t->cache ? read_cached(t, f, elf, fd, &ticket) : -1, rc = 0;

	if (cache == 1)
		return;
	cache = cache == 0;	/* a ticket to store (or abandon) */
	uint64_t words = 0, t0 = marple_now_monotonic_ns(), c0 = marple_thread_cpu_ns();
	rc = unwindtablescfi_read(elf, UNWINDTABLES_CFI_OURS, t->words_cap, &t->rowbuf, &st);
	n = (uint32_t)t->rowbuf.nrows;
	t->files_built++;
	t->build_ns += marple_now_monotonic_ns() - t0;
	t->build_cpu_ns += marple_thread_cpu_ns() - c0;
	uint64_t c1 = marple_thread_cpu_ns();
	words = rc == 0 ? unwindtablescompact_words(t->rowbuf.rows, n) : 0;
	f->has_cfi = rc > 0 || (rc == 0 && n > 0);
	if (rc == 0 && words && (off = take_room(t, words)) == UNWINDTABLESROOM_NONE)
		rc = 1;
	if (rc > 0) {
		unwindtablesroom_noroom_add(&t->noroom, path, unwindtablessize_rows_estimate(elf));
	} else if (rc < 0 || n == 0 || words == 0) {
		t->files_without_table++;	/* none, or rows out of order (never seen) */
	} else {
		unwindtablescompact_pack(t->rowbuf.rows, n, &t->rules, t->words + off, off);
		t->compact_cpu_ns += marple_thread_cpu_ns() - c1;
		if (cache) {
			void *out = marple_malloc(UNWINDTABLESCOMPACT_EXPORT_MAX(words));
			size_t size = unwindtablescompact_export(t->words, off, (uint32_t)words, &t->rules, out);
			unwindtablescache_store(t->cache, &ticket, out, size, &st);
			free(out);
			cache = 0;
		}
		add_table(t, f, off, n, words, &st);
	}
	if (cache)
		unwindtablescache_abandon(t->cache, &ticket);
}

/* build_rows, then the rows written let go of: only the kernel reads them
 * after (a second's capture of a build held 14 MB of them resident). */
static void build_file(struct unwindtables *t, struct file *f, Elf *elf, int fd, const char *path)
{
	build_rows(t, f, elf, fd, path);
	bpfmap_view_let_go(&t->rows_view);
}

/* An executable mapping: its maps line, whether it is of a file (0:
 * anonymous code) and vdso-ness. */
struct maps_line {
	struct procmaps_line m;
	int file;
	int vdso;
};

/* A file that could not be opened: no table, and no frame-pointer guess. */
static const struct file unopened_file = { .has_cfi = 1 };

/* Tell the BPF side about f (file dev:ino, as the kernel encodes s_dev),
 * so that it finds its rows from any process's VMA. */
/* f's entry in unwind_files.  replace: the shared index's entry for its
 * inode is another file's (stale_in_shared). */
static void register_file(struct unwindtables *t, const struct file *f, const struct procmaps_line *m, int replace)
{
	struct unwind_file_key k = { .dev = mappedfile_id_kernel_dev(mappedfile_id_of_line(m)), .ino = m->inode };
	struct unwind_file v = { .row_off = f->nrows || f->has_cfi ? f->row_off : UNWIND_NO_CFI,
				 .row_count = f->nrows, .stamp = f->stamp, .words = f->words };

	for (int i = 0; i < f->nloads && v.nloads < UNWIND_FILE_LOADS; i++) {
		const struct load *l = &f->loads[i];
		v.loads[v.nloads].start = l->offset & ~4095ull;
		v.loads[v.nloads].end = l->offset + l->filesz;
		v.loads[v.nloads++].delta = (int64_t)(l->offset - l->vaddr);
		/* the lowest executable one: where mm->start_code points when
		 * this file is a process's program */
		if (l->exec && (!v.text_load || l->vaddr < f->loads[v.text_load - 1].vaddr))
			v.text_load = (uint32_t)v.nloads;
	}
	/* full: found through the process's mappings only; a file without a
	 * table here never hides the one another collector sharing made */
	bpf_map_update_elem(t->files_fd, &k, &v, t->shared && !f->nrows && !replace ? BPF_NOEXIST : BPF_ANY);
}

/* Shared tables: locked to add a file (m: its maps line; NULL: the vdso)
 * with the next free row and the rules as the others left them; 1 with
 * known filled when another collector made its table. */
static int shared_begin(struct unwindtables *t, const struct procmaps_line *m, struct unwind_file *known)
{
	struct unwind_file_key k = { 0 };

	if (!t->shared)
		return 0;
	if (m)
		k = (struct unwind_file_key){ .dev = mappedfile_id_kernel_dev(mappedfile_id_of_line(m)), .ino = m->inode };
	return unwindtablesshared_begin(t->shared, t->files_fd, m ? &k : NULL, known, &t->words_used, &t->rules,
				       &t->room);
}

static void shared_end(struct unwindtables *t)
{
	if (t->shared)
		unwindtablesshared_end(t->shared, t->words_used, t->rules.n, &t->room);
}

/* f as the shared index has it: a table another collector made. */
static void file_of_index(struct file *f, const struct unwind_file *v)
{
	f->has_cfi = v->row_off != UNWIND_NO_CFI;
	f->row_off = f->has_cfi ? v->row_off : 0;
	f->nrows = v->row_count;
	f->words = v->words;
	for (uint32_t i = 0; i < v->nloads && i < UNWIND_FILE_LOADS; i++)
		f->loads[f->nloads++] = (struct load){ .offset = v->loads[i].start,
						       .vaddr = v->loads[i].start - (uint64_t)v->loads[i].delta,
						       .filesz = v->loads[i].end - v->loads[i].start,
						       .exec = v->text_load == i + 1 };
}

/* The vdso's table, built from our own image of it the first time. */
static struct file *vdso_file(struct unwindtables *t, const struct maps_line *ml)
{
	size_t len;
	Elf *elf;

	if (t->vdso)
		return t->vdso;
	t->vdso = marple_calloc(1, sizeof(*t->vdso));
	/* from our own image, never the traced process's: it may have
	 * rewritten its copy through /proc/self/mem (issue 40) */
	void *buf = procmaps_own_vdso(&len);
	if (buf && (elf = elf_memory(buf, len))) {
		shared_begin(t, NULL, NULL);
		build_file(t, t->vdso, elf, -1, ml->m.path);
		shared_end(t);
		elf_end(elf);
	} else {
		t->vdso->has_cfi = 1;	/* unknown: its frames are not guessed either */
		t->files_without_table++;
	}
	free(buf);
	return t->vdso;
}

/* The table of the file mapped at ml (pid 0: a file by its path), known
 * to the model by its identity: built the first time it is seen. */
static const struct file *get_file(struct unwindtables *t, pid_t pid, const struct maps_line *ml)
{
	struct mappedfile *mf;
	struct file *f = NULL;
	struct stat st;

	if (ml->vdso)
		return vdso_file(t, ml);
	/* known by the device and inode of the maps line: no open, no stat */
	if (!ml->m.deleted && (mf = mappedfiles_find(t->model, mappedfile_id_of_line(&ml->m)))) {
		f = mappedfile_slot(mf, t);
		mappedfile_put(mf);
	}
	if (f)
		return f;
	int fd = pid ? procmaps_open_file(pid, &ml->m) : procmaps_open_safe(AT_FDCWD, ml->m.path, NULL);
	mf = fd >= 0 && fstat(fd, &st) == 0 ? mappedfiles_of_fd(t->model, fd, &st, ml->m.path) : NULL;
	if (mf && (f = mappedfile_slot(mf, t))) {	/* known by its opened identity (deleted) */
		mappedfile_put(mf);
		close(fd);
		return f;
	}
	if (!mf) {
		/* no identity to keep a table under: told to BPF as having
		 * none, tried again if seen again */
		if (fd >= 0)
			close(fd);
		t->files_unopened++;
		register_file(t, &unopened_file, &ml->m, 0);
		return &unopened_file;
	}
	f = marple_calloc(1, sizeof(*f));
	f->stamp = mappedfile_stamp(&st);
	struct unwind_file known;
	int in_shared = shared_begin(t, &ml->m, &known);
	int stale = in_shared && known.stamp && known.stamp != f->stamp;
	if (in_shared && !stale) {
		file_of_index(f, &known);
		t->files_shared++;
	} else {
		/* another file's table under a freed inode number: made
		 * afresh, the stale one's rows left unused */
		t->stale_in_shared += stale;
		Elf *elf = mf->data ? elf_memory((char *)mf->data, mf->size) : NULL;
		if (elf && elf_kind(elf) == ELF_K_ELF) {
			build_file(t, f, elf, fd, ml->m.path);
			mappedfile_release_pages(mf);	/* .eh_frame's pages: read again only to rebuild */
		} else {
			f->has_cfi = 1;	/* unknown: its frames are not guessed either */
			t->files_without_table++;
		}
		elf_end(elf);
		register_file(t, f, &ml->m, stale);
	}
	shared_end(t);
	if (fd >= 0)
		close(fd);
	mappedfile_set_slot(mf, t, f, free);
	t->held = marple_grow(t->held, &t->held_cap, t->nheld + 1, sizeof(*t->held));
	t->held[t->nheld++] = mf;
	return f;
}

/* file address = address - bias, from the PT_LOAD that holds file offset pgoff */
static uint64_t mapping_bias(const struct file *f, uint64_t start, uint64_t pgoff)
{
	for (int i = 0; i < f->nloads; i++) {
		const struct load *l = &f->loads[i];
		if (pgoff >= (l->offset & ~4095ull) && pgoff < l->offset + l->filesz)
			return start - pgoff + l->offset - l->vaddr;
	}
	return start - pgoff;
}

/* m as an executable mapping into l: 0 if it is not one. */
static int exec_mapping(const struct procmaps_line *m, struct maps_line *l)
{
	if (!procmaps_is_exec(m))
		return 0;
	l->m = *m;
	l->vdso = strcmp(m->path, "[vdso]") == 0;
	l->file = l->vdso || m->inode;	/* else anonymous code (a JIT): frame pointers */
	return 1;
}

/* pid's executable mappings, sorted (as the maps file lists them), into m[]. */
static int read_mappings(struct unwindtables *t, pid_t pid, struct unwind_mapping *m, uint32_t *n)
{
	struct procmaps pm;
	struct procmaps_line pl;
	struct maps_line l;

	if (procmaps_open(&pm, pid) < 0)
		return -1;
	*n = 0;
	t->nseen = 0;
	while (*n < UNWIND_MAX_MAPPINGS && procmaps_next(&pm, &pl)) {
		if (!exec_mapping(&pl, &l))
			continue;
		if (t->syms && l.file && !l.vdso && t->nseen < UNWIND_MAX_MAPPINGS) {
			/* for the symbolizer (unwindtables_share_maps) */
			size_t len = strlen(pl.path) + 1;
			t->seen_paths = marple_grow(t->seen_paths, &t->seen_paths_cap, t->seen_paths_len + len, 1);
			memcpy(t->seen_paths + t->seen_paths_len, pl.path, len);
			t->seen[t->nseen] = pl;
			t->seen_off[t->nseen++] = t->seen_paths_len;
			t->seen_paths_len += len;
		}
		struct unwind_mapping *mm = &m[(*n)++];
		*mm = (struct unwind_mapping){ .start = l.m.start, .end = l.m.end };
		if (!l.file) {
			mm->row_off = UNWIND_NO_CFI;	/* anonymous code (a JIT): frame pointers */
			continue;
		}
		const struct file *f = get_file(t, pid, &l);
		mm->bias = mapping_bias(f, l.m.start, l.m.pgoff);
		mm->row_off = f->nrows || f->has_cfi ? f->row_off : UNWIND_NO_CFI;
		mm->row_count = f->nrows;
	}
	procmaps_close(&pm);
	return 0;
}

/* Build now the tables of the C library and the dynamic loader we use
 * ourselves (nearly every process maps the same files): a process sampled
 * in them for the first time then waits for no table. */
void unwindtables_use_cache(struct unwindtables *t, struct unwindtablescache *cache)
{
	pthread_mutex_lock(&t->load_lock);
	unwindtablescache_close(t->cache);
	t->cache = cache;
	pthread_mutex_unlock(&t->load_lock);
}

void unwindtables_use_shared(struct unwindtables *t, struct unwindtablesshared *shared)
{
	pthread_mutex_lock(&t->load_lock);
	t->shared = shared;
	free(t->private_why);
	t->private_why = shared ? NULL : marple_strdup(unwindtablesshared_why());
	pthread_mutex_unlock(&t->load_lock);
}

void unwindtables_warm_up(struct unwindtables *t)
{
	pthread_mutex_lock(&t->load_lock);
	if (!t->warm)
		warm_up(t);
	t->warm = 1;
	pthread_mutex_unlock(&t->load_lock);
}

void unwindtables_warm_file(struct unwindtables *t, const char *path)
{
	struct stat st;
	struct maps_line l = { .m = { .path = path } };

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return;
	l.m.dev_major = major(st.st_dev);
	l.m.dev_minor = minor(st.st_dev);
	l.m.inode = st.st_ino;
	l.file = 1;
	pthread_mutex_lock(&t->load_lock);
	get_file(t, 0, &l);
	pthread_mutex_unlock(&t->load_lock);
}

static void warm_up(struct unwindtables *t)
{
	struct procmaps pm;
	struct procmaps_line pl;
	struct maps_line l;

	procmaps_open(&pm, getpid());
	while (procmaps_next(&pm, &pl))
		if (exec_mapping(&pl, &l) && l.file && !l.vdso && (strstr(pl.path, "/libc.so") || strstr(pl.path, "/ld-linux")))
			get_file(t, getpid(), &l);
	procmaps_close(&pm);
}

/* A free slot for pid's mappings: one not in use, else one of a process
 * that has exited, in turn among the slots mapped so far (one let go is
 * taken again last: a walk may still be reading it); more are mapped only
 * when all those are taken, so the memory follows the processes loaded at
 * once, not all a capture saw.  UINT32_MAX if none. */
static uint32_t take_slot(struct unwindtables *t, pid_t pid)
{
	uint32_t mapped = (uint32_t)(t->mappings_view.mapped / SLOT_BYTES), s = UINT32_MAX;

	for (uint32_t k = 0; k < mapped && s == UINT32_MAX; k++) {
		uint32_t c = (t->next_slot + k) % mapped;
		if (t->slot_pid[c] == 0 || (kill(t->slot_pid[c], 0) != 0 && errno == ESRCH))
			s = c;
	}
	if (s == UINT32_MAX && mapped < t->slots &&
	    bpfmap_view_reach(&t->mappings_view, (size_t)(mapped + 1) * SLOT_BYTES) == 0)
		s = mapped;
	if (s != UINT32_MAX) {
		t->next_slot = s + 1;
		t->slot_pid[s] = pid;
	}
	return s;
}

static int load_pid(struct unwindtables *t, pid_t pid);

int unwindtables_load_pid(struct unwindtables *t, pid_t pid)
{
	pthread_mutex_lock(&t->load_lock);
	int rc = load_pid(t, pid);
	pthread_mutex_unlock(&t->load_lock);
	return rc;
}

/* t's files whose tables evictions took out of the index forgotten (built again). */
static void forget_evicted(struct unwindtables *t, uint64_t generation)
{
	if (generation == t->generation_seen)
		return;
	t->generation_seen = generation;
	for (size_t i = 0; i < t->nheld; i++) {
		struct file *f = mappedfile_slot(t->held[i], t);
		struct unwind_file_key k = { .dev = mappedfile_id_kernel_dev(t->held[i]->id), .ino = t->held[i]->id.ino };
		struct unwind_file v;
		if (!f || !f->nrows || (bpf_map_lookup_elem(t->files_fd, &k, &v) == 0 && v.row_off == f->row_off))
			continue;
		t->rows_used -= t->shared ? 0 : f->nrows;	/* ours: evicted here */
		t->index_words -= t->shared ? 0 : f->words - f->nrows;
		mappedfile_set_slot(t->held[i], t, NULL, NULL);	/* frees f */
		mappedfile_put(t->held[i]);
		t->held[i--] = t->held[--t->nheld];
	}
}

static int load_pid(struct unwindtables *t, pid_t pid)
{
	uint64_t layout[SYMS_LAYOUT_N];
	struct unwind_proc old, p = { 0 };
	int had = bpf_map_lookup_elem(t->procs_fd, &(__u32){ (__u32)pid }, &old) == 0;

	if (procmaps_read_layout(pid, layout) != 0)
		return -1;
	/* a new slot, filled before the process points at it: the BPF side
	 * never sees a list half written */
	p.slot = take_slot(t, pid);
	if (p.slot == UINT32_MAX) {
		t->procs_full++;
		return -1;
	}
	p.tag = layout[2];	/* start_stack */
	/* read again while tables are evicted meanwhile (one mapped since): never published stale */
	int rc, tries = 0;
	uint64_t generation;
	do {
		forget_evicted(t, generation = unwindtablesshared_generation(t->shared, &t->room));
		t->seen_paths_len = 0;
		rc = read_mappings(t, pid, t->mappings + (size_t)p.slot * UNWIND_MAX_MAPPINGS, &p.n);
	} while (rc == 0 && unwindtablesshared_generation(t->shared, &t->room) != generation && ++tries < 3);
	if (rc != 0 || unwindtablesshared_generation(t->shared, &t->room) != generation) {
		t->slot_pid[p.slot] = 0;
		return -1;
	}
	uint64_t after[SYMS_LAYOUT_N];
	if (t->syms && t->nseen && procmaps_read_layout(pid, after) == 0 && memcmp(after, layout, sizeof(after)) == 0) {
		/* the maps were of the image with that layout: the symbolizer
		 * names from them what its own read of them missed */
		for (uint32_t i = 0; i < t->nseen; i++)
			t->seen[i].path = t->seen_paths + t->seen_off[i];
		syms_cache_post_maps(t->syms, pid, layout, t->seen, t->nseen);
	}
	__u32 key = (__u32)pid;
	bpf_map_update_elem(t->procs_fd, &key, &p, BPF_ANY);
	/* before the old slot is let go: a walk that takes its slot from the
	 * CPU's last stack (unwindtables.bpf.h) no longer takes that one */
	__atomic_fetch_add(t->procs_gen, 1, __ATOMIC_SEQ_CST);
	if (had && old.slot < t->slots && old.slot != p.slot)
		t->slot_pid[old.slot] = 0;
	t->loads++;
	return 0;
}

static void *serve_requests(void *arg)
{
	struct unwindtables *t = arg;

	/* samples end in [no unwind table] until their files are built: at nice
	 * -10, load 18, requests waited 320 ms (mean) for 91 ms of building */
	struct sched_param rt = { .sched_priority = 1 };
	if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &rt) != 0)
		setpriority(PRIO_PROCESS, 0, COLLECTOR_NICE);	/* this thread; best effort */
	unwindtables_warm_up(t);	/* here, if not done before the capture: it can take a while */
	pthread_mutex_lock(&t->lock);
	for (;;) {
		while (!t->nqueue && !t->stopping)
			pthread_cond_wait(&t->wake, &t->lock);
		if (t->stopping)
			break;
		pid_t pid = t->queue[0];
		uint64_t wait = marple_now_monotonic_ns() - t->queued_ns[0];
		memmove(t->queue, t->queue + 1, --t->nqueue * sizeof(t->queue[0]));
		memmove(t->queued_ns, t->queued_ns + 1, t->nqueue * sizeof(t->queued_ns[0]));
		pthread_mutex_unlock(&t->lock);
		unwindtables_load_pid(t, pid);
		pthread_mutex_lock(&t->lock);
		t->requests_served++;
		t->request_wait_ns += wait;
		if (wait > t->request_wait_max_ns)
			t->request_wait_max_ns = wait;
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

/* A request from the BPF side: queued for the worker (once). */
static int on_request(void *ctx, void *data, size_t len)
{
	struct unwindtables *t = ctx;
	pid_t pid;
	unsigned i;

	if (len < sizeof(__u32))
		return 0;
	pid = (pid_t)*(const __u32 *)data;
	pthread_mutex_lock(&t->lock);
	for (i = 0; i < t->nqueue && t->queue[i] != pid; i++)
		;
	if (i == t->nqueue) {
		if (t->nqueue < sizeof(t->queue) / sizeof(t->queue[0])) {
			t->queued_ns[t->nqueue] = marple_now_monotonic_ns();
			t->queue[t->nqueue++] = pid;
		} else
			t->queue_full++;	/* asked again in 20 ms */
	}
	pthread_cond_signal(&t->wake);
	pthread_mutex_unlock(&t->lock);
	return 0;
}

static int start_worker(struct unwindtables *t)
{
	if (t->worker_running)
		return 0;
	t->stopping = 0;
	if (collector_thread_start(&t->worker, serve_requests, t) != 0)
		return -1;
	t->worker_running = 1;
	return 0;
}

int unwindtables_poll_with(struct unwindtables *t, struct procnewsring *news)
{
	if (start_worker(t) < 0)
		return -1;
	procnewsring_on(news, PROCNEWS_UNWIND_REQUEST, on_request, t);
	return 0;
}

void unwindtables_share_maps(struct unwindtables *t, struct syms_cache *syms)
{
	pthread_mutex_lock(&t->load_lock);
	t->syms = syms;
	pthread_mutex_unlock(&t->load_lock);
}

void unwindtables_resume(struct unwindtables *t)
{
	if (t)
		t->before = t->reported;	/* the next section counts from what this one showed */
	if (t && start_worker(t) < 0)
		marple_warn("cannot restart the unwind tables' worker: new processes' stacks stop at their first frame");
}

/* Stop serving requests (the counts are final after this). */
static void stop_worker(struct unwindtables *t)
{
	if (!t->worker_running)
		return;
	pthread_mutex_lock(&t->lock);
	t->stopping = 1;
	pthread_cond_signal(&t->wake);
	pthread_mutex_unlock(&t->lock);
	pthread_join(t->worker, NULL);
	t->worker_running = 0;
}

void unwindtables_trailer_add(struct unwindtables *t, json_t *trailer)
{
	static const char *const names[UNWIND_NCOUNTERS] = UNWIND_COUNTER_NAMES;
	static const char *const lookup_names[] = UNWIND_LOOKUP_NAMES;
	json_t *u = json_object();
	uint64_t c[UNWIND_NCOUNTERS];

	stop_worker(t);

	const struct unwindtablescache_stats *now_cs = t->cache ? unwindtablescache_stats(t->cache) : &(struct unwindtablescache_stats){ 0 };
	const struct unwindtables_counts *b = &t->before;
	struct unwindtables_counts *r = &t->reported;
	*r = (struct unwindtables_counts){ .build_ns = t->build_ns, .build_cpu_ns = t->build_cpu_ns,
					.compact_cpu_ns = t->compact_cpu_ns, .files_built = t->files_built,
					.loads = t->loads, .files_shared = t->files_shared,
					.stale_in_shared = t->stale_in_shared, .cache = *now_cs, .evictions = t->evictions };
	r->requests_served = t->requests_served;	/* the worker has stopped */
	r->request_wait_ns = t->request_wait_ns;
	uint64_t wait_max = t->request_wait_max_ns;
	t->request_wait_max_ns = 0;	/* the next section's own */
	for (uint32_t i = 0; i < UNWIND_NCOUNTERS; i++) {
		r->c[i] = bpfmap_percpu_sum(t->counters_fd, i);
		c[i] = r->c[i] >= b->c[i] ? r->c[i] - b->c[i] : 0;
		json_object_set_new(u, names[i], json_integer((json_int_t)c[i]));
	}
	json_object_set_new(u, "mode", json_string("tables"));
	json_object_set_new(u, "tables", json_string(t->shared ? "shared" : "private"));
	if (t->shared)
		json_object_set_new(u, "tables_pinned_in", json_string(unwindtablesshared_dir(t->shared)));
	else if (t->private_why)
		json_object_set_new(u, "tables_private_why", json_string(t->private_why));
	json_object_set_new(u, "files_from_shared", json_integer((json_int_t)(t->files_shared - b->files_shared)));
	json_object_set_new(u, "files_stale_in_shared", json_integer((json_int_t)(t->stale_in_shared - b->stale_in_shared)));
	json_object_set_new(u, "file_lookup", json_string(lookup_names[t->file_lookup == UNWIND_LOOKUP_VMA_ITER]));
	json_object_set_new(u, "files", json_integer((json_int_t)(t->nheld + (t->vdso != NULL) + t->files_unopened)));
	json_object_set_new(u, "files_without_table", json_integer((json_int_t)t->files_without_table));
	/* kernel memory the tables use: rows, page indexes, rules (the maps
	 * hold table_memory, allocated at load) */
	uint64_t bytes = ((t->words_used - unwindtablesroom_free_words(&t->room)) * 4 +
			  (uint64_t)t->rules.n * sizeof(struct unwind_rule));
	json_object_set_new(u, "rows", json_integer((json_int_t)t->rows_used));
	json_object_set_new(u, "rules", json_integer((json_int_t)t->rules.n));
	json_object_set_new(u, "rows_without_rule_room", json_integer((json_int_t)t->rules.rows_without_room));
	json_object_set_new(u, "index_bytes", json_integer((json_int_t)(t->index_words * 4)));
	json_object_set_new(u, "rows_unsupported", json_integer((json_int_t)t->unsupported));
	json_object_set_new(u, "fdes_by_libdw", json_integer((json_int_t)t->fdes_libdw));
	json_object_set_new(u, "fdes_from_debug_frame", json_integer((json_int_t)t->fdes_debug_frame));
	unwindtablesroom_noroom_report(u, &t->noroom, (uint64_t)t->words_cap * 4 +
				       (uint64_t)t->rules_cap * sizeof(struct unwind_rule), t->words_cap);
	unwindtablesroom_trailer_add(u, &r->evictions, &b->evictions, &t->room);
	json_object_set_new(u, "rows_limit", json_integer((json_int_t)unwindtablesroom_rows_of_words(t->words_cap)));
	json_object_set_new(u, "processes_without_room", json_integer((json_int_t)t->procs_full));
	json_object_set_new(u, "table_bytes", json_integer((json_int_t)bytes));
	json_object_set_new(u, "bytes_per_row", json_real(t->rows_used ? (double)bytes / (double)t->rows_used : 0));
	json_object_set_new(u, "table_memory",
			    json_integer((json_int_t)((uint64_t)t->words_cap * 4 +
						      (uint64_t)t->rules_cap * sizeof(struct unwind_rule))));
	json_object_set_new(u, "build_ms", json_real((double)(t->build_ns - b->build_ns) / 1e6));
	json_object_set_new(u, "build_cpu_ms", json_real((double)(t->build_cpu_ns - b->build_cpu_ns) / 1e6));
	json_object_set_new(u, "compact_cpu_ms", json_real((double)(t->compact_cpu_ns - b->compact_cpu_ns) / 1e6));
	json_object_set_new(u, "cache", json_string(t->cache ? "on" : "off"));
	json_object_set_new(u, "files_built", json_integer((json_int_t)(t->files_built - b->files_built)));
	unwindtablescache_trailer_add(u, now_cs, &b->cache);
	json_object_set_new(u, "process_loads", json_integer((json_int_t)(t->loads - b->loads)));
	json_object_set_new(u, "requests_served", json_integer((json_int_t)(r->requests_served - b->requests_served)));
	json_object_set_new(u, "request_wait_ms", json_real((double)(r->request_wait_ns - b->request_wait_ns) / 1e6));
	json_object_set_new(u, "request_wait_max_ms", json_real((double)wait_max / 1e6));
	json_object_set_new(trailer, "unwind", u);
}
