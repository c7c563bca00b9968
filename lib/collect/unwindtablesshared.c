/* unwindtablesshared.c — the unwind tables' maps pinned and shared by the
 * collectors running at once, with their owner: a lock (see
 * unwindtablesshared.h). */
#include "unwindtablesshared.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "collector.h"
#include "lockfile.h"
#include "rundir.h"
#include "unwindtablescache.h"
#include "util.h"

#define BPFFS "/sys/fs/bpf"
#define BPFFS_MAGIC 0xcafe4a11	/* BPF_FS_MAGIC, linux/magic.h */
#define PIN_ROOT BPFFS "/marple"
/* what the shared maps hold beside the compact tables (whose encoding
 * UNWINDTABLESCACHE_FORMAT follows: raised with it, a new layout too) */
#define SHARED_FORMAT 3	/* 3: lock files removed by the last one out (lockfile.h) */

/* What the collectors sharing the tables agree on, in the state map. */
struct shared_state {
	uint32_t words_used;		/* unwind_rows' next free word */
	uint32_t rules_used;		/* unwind_rules in use */
	struct unwindtables_room room;	/* the rows freed below it (evictions) */
};

static const char *const shared_maps[] = { "unwind_rows", "unwind_rules", "unwind_files" };
#define NSHARED (sizeof(shared_maps) / sizeof(shared_maps[0]))

struct unwindtablesshared {
	char dir[64];			/* PIN_ROOT/<layout> */
	char layout[17];
	int run_fd;			/* RUNDIR, where the lock files are */
	int lock_fd, holders_fd, state_fd;
};

static char why[160];

const char *unwindtablesshared_why(void)
{
	return why;
}

const char *unwindtablesshared_dir(const struct unwindtablesshared *s)
{
	return s->dir;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ ((const unsigned char *)p)[i]) * 0x100000001b3ull;
	return h;
}

/* The layout of obj's shared maps as 16 hex digits: their types, sizes and
 * flags, the compact tables' format and the records' sizes. */
static int layout_of(struct bpf_object *obj, char out[17])
{
	uint32_t v[] = { SHARED_FORMAT, UNWINDTABLESCACHE_FORMAT, UNWINDTABLESCACHE_UNIT, UNWIND_PAGE_SHIFT,
			 UNWIND_TABLE_HEADER, UNWIND_MAX_RULES, sizeof(struct unwind_rule), sizeof(struct unwind_file),
			 sizeof(struct shared_state) };
	uint64_t h = fnv(0xcbf29ce484222325ull, v, sizeof(v));

	for (size_t i = 0; i < NSHARED; i++) {
		struct bpf_map *m = bpf_object__find_map_by_name(obj, shared_maps[i]);
		if (!m)
			return -1;
		uint32_t d[] = { bpf_map__type(m), bpf_map__key_size(m), bpf_map__value_size(m),
				 bpf_map__max_entries(m), bpf_map__map_flags(m) };
		h = fnv(h, d, sizeof(d));
	}
	snprintf(out, 17, "%016" PRIx64, h);
	return 0;
}

static void lock_name(char *name, size_t size, const char *layout, const char *what)
{
	snprintf(name, size, "tables-%s.%s", layout, what);
}

/* layout's owner, its lock file in RUNDIR taken (lockfile.h: the last one
 * out removes it); wait_ms as lockfile_take's: its fd, or -1. */
static int take_owner(int run_fd, const char *layout, uint64_t wait_ms)
{
	char name[64];

	lock_name(name, sizeof(name), layout, "lock");
	int fd = lockfile_take(run_fd, name, wait_ms, NULL);
	if (fd < 0 && wait_ms)
		snprintf(why, sizeof(why), RUNDIR "/%s: %s", name, strerror(errno));
	return fd;
}

/* layout's holders file (each holder holds it shared), opened while its
 * owner is taken (the last one out removes it then): its fd, or -1. */
static int open_holders(int run_fd, const char *layout)
{
	char name[64];

	lock_name(name, sizeof(name), layout, "holders");
	int fd = openat(run_fd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		snprintf(why, sizeof(why), RUNDIR "/%s: %s", name, strerror(errno));
	return fd;
}

/* bpffs at BPFFS (mounted if it is not: root may) and the pin folder. */
static int pin_dir(struct unwindtablesshared *s)
{
	struct statfs fs;

	if (statfs(BPFFS, &fs) != 0 || (uint32_t)fs.f_type != BPFFS_MAGIC) {
		if (mount("bpf", BPFFS, "bpf", 0, "mode=0700") != 0)
			return snprintf(why, sizeof(why), "no bpffs at " BPFFS ": %s", strerror(errno)), -1;
	}
	snprintf(s->dir, sizeof(s->dir), PIN_ROOT "/%s", s->layout);
	if ((mkdir(PIN_ROOT, 0700) != 0 && errno != EEXIST) || (mkdir(s->dir, 0700) != 0 && errno != EEXIST))
		return snprintf(why, sizeof(why), "%s: %s", s->dir, strerror(errno)), -1;
	return rundir_root_only(PIN_ROOT, why, sizeof(why)) == 0 && rundir_root_only(s->dir, why, sizeof(why)) == 0 ? 0 : -1;
}

/* Every pin in dir removed, and dir: what a collector left (killed), or
 * the last one out's. */
static void unpin_all(const char *dir)
{
	char path[128];
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.' && snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < (int)sizeof(path))
			unlink(path);
	if (d)
		closedir(d);
	rmdir(dir);
}

/* Held by no one (holders_fd taken exclusively, the owner taken): the
 * pins in dir, the holders file and the owner's lock removed, the lock
 * let go. */
static void remove_all(int run_fd, const char *layout, const char *dir, int owner_fd)
{
	char name[64];

	unpin_all(dir);
	lock_name(name, sizeof(name), layout, "holders");
	unlinkat(run_fd, name, 0);
	lock_name(name, sizeof(name), layout, "lock");
	lockfile_remove(run_fd, name, owner_fd);
}

static void pin_path(const struct unwindtablesshared *s, const char *name, char *path, size_t size)
{
	snprintf(path, size, "%s/%s", s->dir, name);
}

/* The first one in: the maps made as obj sizes them, and pinned. */
static int make_maps(struct unwindtablesshared *s, struct bpf_object *obj, int fds[NSHARED])
{
	char path[128];

	unpin_all(s->dir);
	if (mkdir(s->dir, 0700) != 0)
		return snprintf(why, sizeof(why), "%s: %s", s->dir, strerror(errno)), -1;
	for (size_t i = 0; i < NSHARED; i++) {
		struct bpf_map *m = bpf_object__find_map_by_name(obj, shared_maps[i]);
		LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = bpf_map__map_flags(m));
		fds[i] = bpf_map_create(bpf_map__type(m), shared_maps[i], bpf_map__key_size(m), bpf_map__value_size(m),
					bpf_map__max_entries(m), &o);
		pin_path(s, shared_maps[i], path, sizeof(path));
		if (fds[i] < 0 || bpf_obj_pin(fds[i], path) != 0)
			return snprintf(why, sizeof(why), "%s: %s", path, strerror(errno)), -1;
	}
	s->state_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unwind_shared", sizeof(uint32_t),
				     sizeof(struct shared_state), 1, NULL);
	pin_path(s, "state", path, sizeof(path));
	if (s->state_fd < 0 || bpf_obj_pin(s->state_fd, path) != 0)
		return snprintf(why, sizeof(why), "%s: %s", path, strerror(errno)), -1;
	return 0;
}

/* fd is the map obj's m would be (type, sizes, flags): else it is
 * another layout's, never used. */
static int same_map(int fd, uint32_t type, uint32_t key, uint32_t value, uint32_t entries, uint32_t flags)
{
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info);

	return fd >= 0 && bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && info.type == type &&
	       info.key_size == key && info.value_size == value && info.max_entries == entries &&
	       info.map_flags == flags;
}

/* A later one: the pinned maps, if they are what obj would make. */
static int get_maps(struct unwindtablesshared *s, struct bpf_object *obj, int fds[NSHARED])
{
	char path[128];

	for (size_t i = 0; i < NSHARED; i++) {
		struct bpf_map *m = bpf_object__find_map_by_name(obj, shared_maps[i]);
		pin_path(s, shared_maps[i], path, sizeof(path));
		fds[i] = bpf_obj_get(path);
		if (!same_map(fds[i], bpf_map__type(m), bpf_map__key_size(m), bpf_map__value_size(m),
			      bpf_map__max_entries(m), bpf_map__map_flags(m)))
			return snprintf(why, sizeof(why), "%s: %s", path,
					fds[i] < 0 ? strerror(errno) : "a map of another layout"), -1;
	}
	pin_path(s, "state", path, sizeof(path));
	s->state_fd = bpf_obj_get(path);
	if (!same_map(s->state_fd, BPF_MAP_TYPE_ARRAY, sizeof(uint32_t), sizeof(struct shared_state), 1, 0))
		return snprintf(why, sizeof(why), "%s: %s", path,
				s->state_fd < 0 ? strerror(errno) : "a map of another layout"), -1;
	return 0;
}

/* The pinned maps made obj's: its own are never created. */
static int reuse_maps(struct bpf_object *obj, int fds[NSHARED])
{
	for (size_t i = 0; i < NSHARED; i++) {
		struct bpf_map_info info = { 0 };
		uint32_t len = sizeof(info);
		int err = bpf_map__reuse_fd(bpf_object__find_map_by_name(obj, shared_maps[i]), fds[i]);
		if (err)
			return snprintf(why, sizeof(why), "%s: %s", shared_maps[i], strerror(-err)), -1;
		if (bpf_obj_get_info_by_fd(fds[i], &info, &len) == 0)
			collector_memory_shared(info.id);
	}
	return 0;
}

static void shared_free(struct unwindtablesshared *s)
{
	if (s->run_fd >= 0)
		close(s->run_fd);
	if (s->state_fd >= 0)
		close(s->state_fd);
	if (s->holders_fd >= 0)
		close(s->holders_fd);	/* the flocks go with them */
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	free(s);
}

/* Under the lock: the maps made (first in) or taken, obj's made them, and
 * this collector counted among the holders.  0, or -1 with why set. */
static int join(struct unwindtablesshared *s, struct bpf_object *obj)
{
	int fds[NSHARED] = { -1, -1, -1 }, rc = -1;
	int first = lockfile_flock(s->holders_fd, LOCK_EX | LOCK_NB) == 0;

	if (pin_dir(s) == 0 && (first ? make_maps(s, obj, fds) : get_maps(s, obj, fds)) == 0 &&
	    lockfile_flock(s->holders_fd, LOCK_SH | LOCK_NB) == 0 && reuse_maps(obj, fds) == 0)
		rc = 0;
	else if (first) {
		remove_all(s->run_fd, s->layout, s->dir, s->lock_fd);	/* nobody else holds them */
		s->lock_fd = -1;
	}
	for (size_t i = 0; i < NSHARED; i++)
		if (fds[i] >= 0)
			close(fds[i]);	/* obj holds its copies */
	return rc;
}

/* Layout name's pins and lock files, removed if no collector holds them. */
static void sweep_layout(int run_fd, const char *name)
{
	char path[128];
	int l = take_owner(run_fd, name, 0), h = l >= 0 ? open_holders(run_fd, name) : -1;

	if (h >= 0 && lockfile_flock(h, LOCK_EX | LOCK_NB) == 0) {
		snprintf(path, sizeof(path), PIN_ROOT "/%s", name);
		remove_all(run_fd, name, path, l);
		l = -1;
	}
	if (h >= 0)
		close(h);
	if (l >= 0)
		close(l);
}

/* The layout entry name names (a pin folder "<layout>" under PIN_ROOT, or
 * with lock_files a lock file "tables-<layout>.lock" in RUNDIR) into
 * layout: 1, or 0 if it names none. */
static int layout_named(const char *name, int lock_files, char layout[17])
{
	if (lock_files) {
		if (strlen(name) != 7 + 16 + 5 || strncmp(name, "tables-", 7) != 0 || strcmp(name + 7 + 16, ".lock") != 0)
			return 0;
		name += 7;
	} else if (strlen(name) != 16) {
		return 0;
	}
	if (strspn(name, "0123456789abcdef") < 16)
		return 0;
	memcpy(layout, name, 16);
	layout[16] = 0;
	return 1;
}

/* The pins and lock files of other layouts that no collector holds,
 * removed: a collector killed before its end left them (-p's layouts are
 * its process's: the same one may never come again), its pins holding
 * kernel memory until then; an older marple left every lock file. */
static void sweep(int run_fd, const char *own)
{
	char layout[17];

	for (int lock_files = 0; lock_files <= 1; lock_files++) {
		int fd = lock_files ? openat(run_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
				    : open(PIN_ROOT, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
		struct dirent *e;
		if (!d && fd >= 0)
			close(fd);
		while (d && (e = readdir(d)))
			if (layout_named(e->d_name, lock_files, layout) && strcmp(layout, own) != 0)
				sweep_layout(run_fd, layout);
		if (d)
			closedir(d);
	}
}

struct unwindtablesshared *unwindtablesshared_open(struct bpf_object *obj)
{
	const char *env = getenv("MARPLE_SHARED_TABLES");
	struct unwindtablesshared *s;

	why[0] = 0;
	if (env && strcmp(env, "off") == 0)
		return snprintf(why, sizeof(why), "MARPLE_SHARED_TABLES=off"), NULL;
	if (geteuid() != 0)
		return snprintf(why, sizeof(why), "not root"), NULL;
	s = marple_calloc(1, sizeof(*s));
	s->run_fd = s->lock_fd = s->holders_fd = s->state_fd = -1;
	if (layout_of(obj, s->layout) != 0) {
		snprintf(why, sizeof(why), "no unwind maps");
		shared_free(s);
		return NULL;
	}
	if ((s->run_fd = rundir_open(why, sizeof(why))) >= 0 &&
	    (s->lock_fd = take_owner(s->run_fd, s->layout, LOCKFILE_FOREVER)) >= 0)
		s->holders_fd = open_holders(s->run_fd, s->layout);
	if (s->holders_fd < 0 || join(s, obj) != 0) {
		shared_free(s);
		return NULL;
	}
	sweep(s->run_fd, s->layout);
	flock(s->lock_fd, LOCK_UN);
	return s;
}

int unwindtablesshared_begin(struct unwindtablesshared *s, int files_fd, const struct unwind_file_key *key,
			     struct unwind_file *known, uint32_t *words_used, struct unwindtables_rules *rules,
			     struct unwindtables_room *room)
{
	struct shared_state st = { 0 };

	lockfile_flock(s->lock_fd, LOCK_EX);
	/* a fresh state (0): the first file, its rules after the reserved;
	 * the top comes down when the tables below it are evicted */
	if (bpf_map_lookup_elem(s->state_fd, &(uint32_t){ 0 }, &st) == 0) {
		*words_used = st.words_used;
		*room = st.room;
	}
	unwindtablescompact_rules_adopt(rules, st.rules_used);
	return key && bpf_map_lookup_elem(files_fd, key, known) == 0 &&
	       (known->row_count > 0 || known->row_off == UNWIND_NO_CFI);
}

void unwindtablesshared_end(struct unwindtablesshared *s, uint32_t words_used, uint32_t rules_used,
			   const struct unwindtables_room *room)
{
	struct shared_state st = { words_used, rules_used, *room };

	bpf_map_update_elem(s->state_fd, &(uint32_t){ 0 }, &st, BPF_ANY);
	flock(s->lock_fd, LOCK_UN);
}

uint64_t unwindtablesshared_generation(struct unwindtablesshared *s, const struct unwindtables_room *own)
{
	struct shared_state st = { 0 };

	if (!s)
		return own->generation;
	bpf_map_lookup_elem(s->state_fd, &(uint32_t){ 0 }, &st);
	return st.room.generation;
}

void unwindtablesshared_close(struct unwindtablesshared *s)
{
	if (!s)
		return;
	lockfile_flock(s->lock_fd, LOCK_EX);
	/* nobody else holds them: the last one out unpins (the maps go with
	 * the last descriptor) and removes the lock files */
	if (lockfile_flock(s->holders_fd, LOCK_EX | LOCK_NB) == 0) {
		remove_all(s->run_fd, s->layout, s->dir, s->lock_fd);
		s->lock_fd = -1;
	}
	shared_free(s);
}
