/* unwindtablesroom.c — free extents of unwind_rows, and the eviction of
 * the tables of files no process maps (see unwindtablesroom.h). */
#include "unwindtablesroom.h"

#include <bpf/bpf.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfmap.h"
#include "hashtab.h"
#include "mappedfiles.h"
#include "procmaps.h"
#include "stacks.h"
#include "util.h"

/* The first free extent words fits in, else *top. */
static uint32_t take(struct unwindtables_room *r, uint32_t *top, uint32_t cap, uint64_t words)
{
	if (words == 0 || words > cap)
		return UNWINDTABLESROOM_NONE;
	for (uint32_t i = 0; i < r->nfree; i++) {
		if (r->free[i].words < words)
			continue;
		uint32_t off = r->free[i].off;
		r->free[i].off += (uint32_t)words;
		r->free[i].words -= (uint32_t)words;
		if (r->free[i].words == 0)
			memmove(&r->free[i], &r->free[i + 1], (--r->nfree - i) * sizeof(r->free[0]));
		return off;
	}
	if (cap - *top < words)
		return UNWINDTABLESROOM_NONE;
	*top += (uint32_t)words;
	return *top - (uint32_t)words;
}

/* The list full: its smallest extent let go (lost until the rows are made
 * afresh), so that a bigger one freed later finds a place. */
static void drop_smallest(struct unwindtables_room *r)
{
	uint32_t s = 0;

	for (uint32_t i = 1; i < r->nfree; i++)
		if (r->free[i].words < r->free[s].words)
			s = i;
	r->words_lost += r->free[s].words;
	memmove(&r->free[s], &r->free[s + 1], (--r->nfree - s) * sizeof(r->free[0]));
}

void unwindtablesroom_give(struct unwindtables_room *r, uint32_t *top, uint32_t off, uint32_t words)
{
	uint32_t i = 0;

	if (words == 0)
		return;
	while (i < r->nfree && r->free[i].off < off)
		i++;
	if (i > 0 && r->free[i - 1].off + r->free[i - 1].words == off) {
		off = r->free[--i].off;	/* merged with the one before */
		words += r->free[i].words;
		memmove(&r->free[i], &r->free[i + 1], (--r->nfree - i) * sizeof(r->free[0]));
	}
	if (i < r->nfree && off + words == r->free[i].off) {
		words += r->free[i].words;	/* and the one after */
		memmove(&r->free[i], &r->free[i + 1], (--r->nfree - i) * sizeof(r->free[0]));
	}
	if (off + words == *top) {
		*top = off;	/* the top comes down */
		return;
	}
	if (r->nfree == UNWINDTABLESROOM_EXTENTS) {
		drop_smallest(r);
		for (i = 0; i < r->nfree && r->free[i].off < off; i++)
			;
	}
	memmove(&r->free[i + 1], &r->free[i], (r->nfree - i) * sizeof(r->free[0]));
	r->free[i].off = off;
	r->free[i].words = words;
	r->nfree++;
}

uint64_t unwindtablesroom_free_words(const struct unwindtables_room *r)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < r->nfree; i++)
		n += r->free[i].words;
	return n;
}

/* The files some process maps executable, by their index key, into set:
 * the number of processes whose maps could not be read (not ours to read:
 * a process in another namespace, the sandbox's init).  Their files may
 * be evicted: a walk of theirs then finds no table (the entry is gone
 * before the rows are reused), and we could not have read their mappings
 * to load them anyway. */
static uint64_t mapped_files(struct hashtab *set)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	struct procmaps pm;
	struct procmaps_line l;
	uint64_t unreadable = 0;

	while (d && (e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		if (procmaps_open(&pm, (pid_t)atoi(e->d_name)) != 0) {
			unreadable += errno != ENOENT && errno != ESRCH;
			continue;
		}
		while (procmaps_next(&pm, &l)) {
			if (!procmaps_is_exec(&l) || !l.inode)
				continue;
			struct unwind_file_key k = { .dev = mappedfile_id_kernel_dev(mappedfile_id_of_line(&l)),
						     .ino = l.inode };
			hashtab_add(set, &k, sizeof(k), 1, 0);
		}
		procmaps_close(&pm);
	}
	if (d)
		closedir(d);
	return unreadable;
}

/* The index's tables whose files the scan did not find mapped. */
struct unmapped {
	struct hashtab *mapped;
	struct unwind_file_key *keys;
	size_t n, cap;
};

static void note_unmapped(const void *key, const void *value, void *arg)
{
	const struct unwind_file *v = value;
	struct unmapped *u = arg;

	if (v->row_count == 0 || v->words == 0 || v->row_off == UNWIND_NO_CFI ||
	    hashtab_find(u->mapped, key, sizeof(struct unwind_file_key)))
		return;
	u->keys = marple_grow(u->keys, &u->cap, u->n + 1, sizeof(*u->keys));
	memcpy(&u->keys[u->n++], key, sizeof(*u->keys));
}

/* The tables of files no process maps evicted: how many. */
static uint64_t evict(struct unwindtables_room *r, uint32_t *top, int files_fd, struct unwindtables_evictions *ev)
{
	uint64_t t0 = marple_now_monotonic_ns(), evicted = 0;
	struct unwind_file v;

	if (t0 < ev->fruitless_until_ns)
		return 0;	/* a scan that freed nothing a moment ago: the same answer */
	struct unmapped u = { .mapped = hashtab_new() };
	/* counted first: a collector that kept a table's place from before
	 * looks it up again, whatever this scan finds */
	r->generation++;
	ev->scans++;
	ev->maps_unreadable += mapped_files(u.mapped);
	bpfmap_each(files_fd, sizeof(struct unwind_file_key), sizeof(struct unwind_file), note_unmapped, &u);
	for (size_t i = 0; i < u.n; i++) {
		/* out of the index, then free: no walk finds it there any more */
		if (bpf_map_lookup_elem(files_fd, &u.keys[i], &v) != 0 || v.row_count == 0 ||
		    bpf_map_delete_elem(files_fd, &u.keys[i]) != 0)
			continue;
		unwindtablesroom_give(r, top, v.row_off, v.words);
		ev->words += v.words;
		evicted++;
	}
	ev->files += evicted;
	uint64_t t1 = marple_now_monotonic_ns();
	/* scans that free nothing take at most a tenth of the time (a process
	 * whose every file is without room asks once for each) */
	ev->fruitless_until_ns = evicted ? 0 : t1 + 9 * (t1 - t0);
	ev->scan_ns += t1 - t0;
	free(u.keys);
	hashtab_free(u.mapped);
	return evicted;
}

void unwindtablesroom_trailer_add(json_t *u, const struct unwindtables_evictions *now,
				  const struct unwindtables_evictions *before, const struct unwindtables_room *r)
{
	json_object_set_new(u, "files_evicted", json_integer((json_int_t)(now->files - before->files)));
	json_object_set_new(u, "words_evicted", json_integer((json_int_t)(now->words - before->words)));
	json_object_set_new(u, "evict_scans", json_integer((json_int_t)(now->scans - before->scans)));
	json_object_set_new(u, "evict_maps_unreadable",
			    json_integer((json_int_t)(now->maps_unreadable - before->maps_unreadable)));
	json_object_set_new(u, "evict_scan_ms", json_real((double)(now->scan_ns - before->scan_ns) / 1e6));
	json_object_set_new(u, "words_free", json_integer((json_int_t)unwindtablesroom_free_words(r)));
	json_object_set_new(u, "words_lost", json_integer((json_int_t)r->words_lost));
}

/* 1/64 of the bytes (8 bytes a rule), from 256 rules to UNWIND_MAX_RULES
 * (512 KiB; a build's compilers and their libraries have a few thousand
 * distinct rules). */
uint32_t unwindtablesroom_rules_in(uint64_t bytes)
{
	uint64_t n = bytes / 64 / sizeof(struct unwind_rule);
	return n < 256 ? 256 : n > UNWIND_MAX_RULES ? UNWIND_MAX_RULES : (uint32_t)n;
}

/* Words (4 bytes: a row, or an entry of a page index) once the rules have
 * their share; even (two to an element), at least 2. */
uint32_t unwindtablesroom_words_in(uint64_t bytes)
{
	uint64_t rules = (uint64_t)unwindtablesroom_rules_in(bytes) * sizeof(struct unwind_rule);
	uint64_t words = bytes > rules ? (bytes - rules) / 4 : 0;
	words = words > UINT32_MAX / 2 ? UINT32_MAX / 2 : words;
	return words < 2 ? 2 : (uint32_t)words & ~1u;
}

/* ~1 index word for 20 rows in compiled code (UNWIND_PAGE_SHIFT), 1 for 8
 * counted, for sparser code */
uint64_t unwindtablesroom_rows_of_words(uint64_t words)
{
	return words * 8 / 9;
}

void unwindtablesroom_noroom_add(struct unwindtables_noroom *nr, const char *path, uint64_t rows_wanted)
{
	nr->files++;
	nr->rows_wanted += rows_wanted;
	if (nr->npaths < UNWINDTABLESROOM_NAMED) {
		nr->paths = realloc(nr->paths, (nr->npaths + 1) * sizeof(char *));
		nr->paths[nr->npaths++] = marple_strndup(path, strcspn(path, "\n"));
	}
}

void unwindtablesroom_noroom_free(struct unwindtables_noroom *nr)
{
	for (size_t i = 0; i < nr->npaths; i++)
		free(nr->paths[i]);
	free(nr->paths);
}

void unwindtablesroom_noroom_report(json_t *u, const struct unwindtables_noroom *nr, uint64_t mem, uint64_t words)
{
	json_t *names = json_array();
	char list[1024] = "";
	size_t len = 0;

	json_object_set_new(u, "files_without_room", json_integer((json_int_t)nr->files));
	for (size_t i = 0; i < nr->npaths; i++)
		json_array_append_new(names, json_string(nr->paths[i]));
	json_object_set_new(u, "files_without_room_names", names);
	if (!nr->files)
		return;
	/* said once, with the files: their code ends stacks in [no unwind table]
	 * (the cut_* counts are the walker's, by event: the warning about cut
	 * stacks counts the stacks written, stacksbpf.c warn_incomplete) */
	for (size_t i = 0; i < nr->npaths && len < sizeof(list) - 1; i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "", nr->paths[i]);
	marple_warn("the unwind tables reached their limit (--unwind-memory %" PRIu64 "%s, ~%" PRIu64 " rows): %" PRIu64
		    " file(s) got no table (~%" PRIu64 " rows more wanted); their frames end stacks in "
		    "[no unwind table]: %s%s", mem >= (1u << 20) ? (mem + (1u << 19)) >> 20 : (mem + 512) >> 10,
		    mem >= (1u << 20) ? "" : "K", unwindtablesroom_rows_of_words(words), nr->files, nr->rows_wanted, list,
		    nr->files > nr->npaths ? ", ..." : "");
}

uint32_t unwindtablesroom_place(struct unwindtables_room *r, uint32_t *top, uint32_t cap, uint64_t words, int files_fd,
				struct unwindtables_evictions *ev)
{
	uint32_t off = take(r, top, cap, words);

	if (off == UNWINDTABLESROOM_NONE && words <= cap && evict(r, top, files_fd, ev) > 0)
		off = take(r, top, cap, words);
	return off;
}
