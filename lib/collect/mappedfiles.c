/* mappedfiles.c — the files processes map, each opened and mapped once (see
 * mappedfiles.h).  A chained hash of entries by identity under one lock (the
 * unwind tables' worker thread and the symbolizer's share it); the mappings
 * are registered with a SIGBUS handler that turns a truncated file's missing
 * pages into zeros instead of ending the collector. */
#include "mappedfiles.h"

#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hashtab.h"
#include "util.h"

#define MAPPEDFILES_BUCKETS 4096
/* mappings guarded at once: a busy box's distinct ELF files and their debug files */
#define GUARDS_MAX 65536

struct slot {
	const void *owner;
	void *data;
	void (*free_fn)(void *);
};

struct entry {
	struct mappedfile f;		/* first: what callers see */
	struct mappedfiles *mf;
	int refs;
	int hashed;			/* in the table (not replaced by a newer version) */
	int guard;			/* index in guards[], -1: not mapped */
	struct slot *slots;
	size_t nslots, slots_cap;
	char *build_id;			/* read on first ask */
	struct entry *next;
};

struct mappedfiles {
	pthread_mutex_t lock;
	int users;
	struct entry *bucket[MAPPEDFILES_BUCKETS];
	struct mappedfiles_stats st;
};

static struct mappedfiles shared = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* The mappings the SIGBUS handler may repair: read without a lock there
 * (only written under guard_lock, start last on add and first on removal). */
static struct guard {
	_Atomic uintptr_t start, end;
	_Atomic int truncated;
} guards[GUARDS_MAX];
static _Atomic size_t nguards;
static pthread_mutex_t guard_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction previous_bus;
static _Atomic uint64_t truncations;

/* A fault in a guarded mapping: the file shrank under us.  The rest of the
 * mapping from the faulting page becomes anonymous zero pages, and the
 * read retried finds zeros; any other SIGBUS goes on as before. */
static void on_sigbus(int sig, siginfo_t *si, void *uctx)
{
	uintptr_t a = (uintptr_t)si->si_addr;
	size_t n = atomic_load(&nguards);

	for (size_t i = 0; i < n; i++) {
		uintptr_t s = atomic_load(&guards[i].start), e = atomic_load(&guards[i].end);
		if (!s || a < s || a >= e)
			continue;
		uintptr_t page = a & ~(uintptr_t)4095;
		if (mmap((void *)page, e - page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
		    MAP_FAILED)
			break;
		if (atomic_exchange(&guards[i].truncated, 1) == 0)
			atomic_fetch_add(&truncations, 1);
		return;
	}
	sigaction(SIGBUS, &previous_bus, NULL);
	if (previous_bus.sa_flags & SA_SIGINFO && previous_bus.sa_sigaction)
		previous_bus.sa_sigaction(sig, si, uctx);
	/* SIG_DFL: returning re-runs the access, which now ends the process */
}

static void install_handler(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &previous_bus);
}

/* Guard [p, p + size): its index, or -1 when there is no room. */
static int guard_add(const void *p, size_t size)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	int at = -1;

	pthread_once(&once, install_handler);
	pthread_mutex_lock(&guard_lock);
	size_t n = atomic_load(&nguards);
	for (size_t i = 0; i < n && at < 0; i++)
		if (!atomic_load(&guards[i].start))
			at = (int)i;
	if (at < 0 && n < GUARDS_MAX) {
		at = (int)n;
		atomic_store(&nguards, n + 1);
	}
	if (at >= 0) {
		atomic_store(&guards[at].truncated, 0);
		atomic_store(&guards[at].end, (uintptr_t)p + size);
		atomic_store(&guards[at].start, (uintptr_t)p);
	}
	pthread_mutex_unlock(&guard_lock);
	return at;
}

static void guard_remove(int at)
{
	pthread_mutex_lock(&guard_lock);
	atomic_store(&guards[at].start, 0);
	atomic_store(&guards[at].end, 0);
	pthread_mutex_unlock(&guard_lock);
}

static void elf_init(void)
{
	elf_version(EV_CURRENT);
}

struct mappedfiles *mappedfiles_shared(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, elf_init);
	pthread_mutex_lock(&shared.lock);
	shared.users++;
	pthread_mutex_unlock(&shared.lock);
	return &shared;
}

static void entry_free(struct entry *e)
{
	for (size_t i = 0; i < e->nslots; i++)
		if (e->slots[i].free_fn && e->slots[i].data)
			e->slots[i].free_fn(e->slots[i].data);
	free(e->slots);
	if (e->guard >= 0)
		guard_remove(e->guard);
	if (e->f.data)
		munmap((void *)e->f.data, e->f.size);
	free(e->build_id);
	free((char *)e->f.path);
	free(e);
}

static size_t bucket_of(struct mappedfile_id id)
{
	return hashtab_hash(&id, sizeof(id)) % MAPPEDFILES_BUCKETS;
}

/* Take e out of the table (under the lock). */
static void unhash(struct mappedfiles *mf, struct entry *e)
{
	struct entry **pp = &mf->bucket[bucket_of(e->f.id)];

	while (*pp && *pp != e)
		pp = &(*pp)->next;
	if (*pp)
		*pp = e->next;
	e->hashed = 0;
	e->next = NULL;
}

void mappedfiles_release(struct mappedfiles *mf)
{
	/* a file lives while an analyzer holds it (mappedfile_put frees it):
	 * nothing else to free here */
	pthread_mutex_lock(&mf->lock);
	mf->users--;
	pthread_mutex_unlock(&mf->lock);
}

struct mappedfile *mappedfiles_find(struct mappedfiles *mf, struct mappedfile_id id)
{
	struct entry *e;

	pthread_mutex_lock(&mf->lock);
	for (e = mf->bucket[bucket_of(id)]; e; e = e->next)
		if (mappedfile_id_equal(e->f.id, id))
			break;
	if (e)
		e->refs++;
	pthread_mutex_unlock(&mf->lock);
	return e ? &e->f : NULL;
}

/* Map fd whole if it is an ELF file (its magic read first: no mapping is
 * made for what no one will read). */
static void map_elf(struct mappedfiles *mf, struct entry *e, int fd, size_t size)
{
	unsigned char magic[SELFMAG];
	void *m;

	if (size < 64 || pread(fd, magic, SELFMAG, 0) != SELFMAG || memcmp(magic, ELFMAG, SELFMAG) != 0) {
		mf->st.not_elf++;
		return;
	}
	m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return;
	if ((e->guard = guard_add(m, size)) < 0) {
		/* unguarded, a truncation would end the collector: not read */
		munmap(m, size);
		mf->st.unmapped++;
		return;
	}
	e->f.data = m;
	e->f.size = size;
}

uint32_t mappedfile_stamp(const struct stat *st)
{
	uint64_t ns = (uint64_t)st->st_ctim.tv_sec * 1000000000u + (uint64_t)st->st_ctim.tv_nsec;
	return (uint32_t)(ns ^ (ns >> 32));
}

struct mappedfile *mappedfiles_of_fd(struct mappedfiles *mf, int fd, const struct stat *st, const char *path)
{
	struct mappedfile_id id = mappedfile_id_of_stat(st);
	struct entry *e;

	pthread_mutex_lock(&mf->lock);
	for (e = mf->bucket[bucket_of(id)]; e; e = e->next)
		if (mappedfile_id_equal(e->f.id, id))
			break;
	if (e && (e->f.size_opened != (int64_t)st->st_size || e->f.mtime.tv_sec != st->st_mtim.tv_sec ||
		  e->f.mtime.tv_nsec != st->st_mtim.tv_nsec || e->f.stamp != mappedfile_stamp(st))) {
		unhash(mf, e);	/* another version now: its holders keep the old one */
		e = NULL;
	}
	if (!e) {
		e = marple_calloc(1, sizeof(*e));
		e->mf = mf;
		e->guard = -1;
		e->f.id = id;
		e->f.size_opened = (int64_t)st->st_size;
		e->f.mtime = st->st_mtim;
		e->f.uid = st->st_uid;
		e->f.stamp = mappedfile_stamp(st);
		e->f.path = marple_strdup(path);
		map_elf(mf, e, fd, (size_t)st->st_size);
		e->hashed = 1;
		e->next = mf->bucket[bucket_of(id)];
		mf->bucket[bucket_of(id)] = e;
		mf->st.opened++;
		mf->st.held++;
	}
	e->refs++;
	pthread_mutex_unlock(&mf->lock);
	return &e->f;
}

/* The entry of the file open as fd (closed here). */
static struct mappedfile *of_fd_closing(struct mappedfiles *mf, int fd, const char *path)
{
	struct stat st;
	struct mappedfile *f = NULL;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		f = mappedfiles_of_fd(mf, fd, &st, path);
	close(fd);
	return f;
}

struct mappedfile *mappedfiles_open_line(struct mappedfiles *mf, pid_t pid, const struct procmaps_line *l)
{
	struct mappedfile *f;

	if (l->inode && !l->deleted && (f = mappedfiles_find(mf, mappedfile_id_of_line(l))))
		return f;
	return of_fd_closing(mf, procmaps_open_file(pid, l), l->path);
}

struct mappedfile *mappedfiles_open_path(struct mappedfiles *mf, const char *path)
{
	return of_fd_closing(mf, procmaps_open_safe(AT_FDCWD, path, NULL), path);
}

void mappedfile_put(struct mappedfile *f)
{
	struct entry *e = (struct entry *)f;
	struct mappedfiles *mf;

	if (!f)
		return;
	mf = e->mf;
	pthread_mutex_lock(&mf->lock);
	if (--e->refs > 0) {
		pthread_mutex_unlock(&mf->lock);
		return;
	}
	if (e->hashed)
		unhash(mf, e);
	mf->st.held--;
	pthread_mutex_unlock(&mf->lock);
	entry_free(e);
}

void *mappedfile_slot(struct mappedfile *f, const void *owner)
{
	struct entry *e = (struct entry *)f;
	void *data = NULL;

	pthread_mutex_lock(&e->mf->lock);
	for (size_t i = 0; i < e->nslots; i++)
		if (e->slots[i].owner == owner)
			data = e->slots[i].data;
	pthread_mutex_unlock(&e->mf->lock);
	return data;
}

void mappedfile_set_slot(struct mappedfile *f, const void *owner, void *data, void (*free_fn)(void *))
{
	struct entry *e = (struct entry *)f;
	struct slot old = { 0 };
	size_t i;

	pthread_mutex_lock(&e->mf->lock);
	for (i = 0; i < e->nslots && e->slots[i].owner != owner; i++)
		;
	if (i == e->nslots)
		e->slots = marple_grow(e->slots, &e->slots_cap, ++e->nslots, sizeof(*e->slots));
	else
		old = e->slots[i];
	e->slots[i] = (struct slot){ owner, data, free_fn };
	pthread_mutex_unlock(&e->mf->lock);
	if (old.free_fn && old.data && old.data != data)
		old.free_fn(old.data);
}

const char *mappedfile_build_id(struct mappedfile *f)
{
	struct entry *e = (struct entry *)f;
	char id[2 * 64 + 1] = "";

	pthread_mutex_lock(&e->mf->lock);
	if (!e->build_id) {
		Elf *elf = f->data && !mappedfile_truncated(f) ? elf_memory((char *)f->data, f->size) : NULL;
		if (procmaps_build_id(elf, id, sizeof(id)) != 0)
			id[0] = 0;
		if (elf)
			elf_end(elf);
		e->build_id = marple_strdup(id);
	}
	pthread_mutex_unlock(&e->mf->lock);
	return e->build_id;
}

int mappedfile_truncated(const struct mappedfile *f)
{
	const struct entry *e = (const struct entry *)f;

	return e->guard >= 0 && atomic_load(&guards[e->guard].truncated);
}

void mappedfile_release_pages(struct mappedfile *f)
{
	if (f->data)
		madvise((void *)f->data, f->size, MADV_DONTNEED);
}

void mappedfiles_stats(const struct mappedfiles *mf, struct mappedfiles_stats *out)
{
	*out = mf->st;
	out->truncated = atomic_load(&truncations);
}
