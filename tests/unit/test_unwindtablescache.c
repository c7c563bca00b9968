/* test_unwindtablescache — unwind tables kept on disk (lib/collect/unwindtablescache.h),
 * here a file's rows as the bytes stored:
 * an entry written and read back byte for byte; corrupt (a byte flipped,
 * truncated), stale (a file without build-id changed; another word size)
 * and symlinked entries rebuilt, never used; a directory others may write
 * in refused; a reader waiting for the lock of a build in progress reads
 * its entry, asking for more room when it sized its buffer before the entry
 * was there, not building it again; the oldest entries evicted past the size limit; an open looks
 * at the entries only when the folder changed since the last look. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "procmaps.h"
#include "test.h"
#include "unwindtablescache.h"
#include "unwindtablescfi.h"

#define CAP (1u << 20)

struct subject {
	int fd;
	Elf *elf;
};

static struct subject open_subject(const char *path)
{
	struct subject s = { open(path, O_RDONLY), NULL };
	if (s.fd >= 0)
		s.elf = elf_begin(s.fd, ELF_C_READ_MMAP, NULL);
	return s;
}

static void close_subject(struct subject *s)
{
	elf_end(s->elf);
	close(s->fd);
}

static struct unwind_row *rows;
static uint32_t nrows;
static struct unwindtables_rowstats rowstats;

/* One lookup of s: 1 hit (rows read into got[0..*n)), else 0 after storing
 * what was built (the rows of the first build). */
static int lookup_store(struct unwindtablescache *c, struct subject *s, struct unwind_row *got, uint32_t *n)
{
	struct unwindtablescache_ticket tk;
	struct unwindtables_rowstats st;
	size_t len = 0;
	if (unwindtablescache_lookup(c, &tk, s->elf, s->fd, got, CAP * sizeof(*got), &len, &st) == 1) {
		*n = (uint32_t)(len / sizeof(*got));
		return 1;
	}
	unwindtablescache_store(c, &tk, rows, nrows * sizeof(*rows), &rowstats);
	return 0;
}

static void flip_byte(const char *path, off_t off)
{
	int fd = open(path, O_RDWR);
	unsigned char b;
	if (pread(fd, &b, 1, off) == 1) {
		b ^= 0x40;
		if (pwrite(fd, &b, 1, off) != 1)
			perror(path);
	}
	close(fd);
}

struct holder {
	struct unwindtablescache *c;
	struct unwindtablescache_ticket tk;
};

static void *store_later(void *arg)
{
	struct holder *h = arg;
	nanosleep(&(struct timespec){ .tv_nsec = 300 * 1000000 }, NULL);
	unwindtablescache_store(h->c, &h->tk, rows, nrows * sizeof(*rows), &rowstats);
	return NULL;
}

/* The cache at path (its last look noted: under the limit, nothing to
 * clean) gets a 2 MB file behind the folder's back (its mtime put back): an
 * open under a 1 MB limit does not look, so evicts nothing; once the folder
 * has changed, an open looks and evicts. */
static void test_look_note(const char *path)
{
	char unwind[600] = "", big[700], note[700];
	struct stat dir_st;
	setenv("MARPLE_CACHE_SIZE", "1", 1);
	struct unwindtablescache *c = unwindtablescache_open_at(path);
	if (c)
		snprintf(unwind, sizeof(unwind), "%s", unwindtablescache_dir(c));
	unwindtablescache_close(c);
	snprintf(big, sizeof(big), "%s/zz-grown", unwind);
	snprintf(note, sizeof(note), "%s/.looked", unwind);
	int ok = c && access(note, R_OK) == 0 && stat(unwind, &dir_st) == 0;
	FILE *f = ok ? fopen(big, "w") : NULL;
	ok = f && ftruncate(fileno(f), 2 << 20) == 0;
	if (f)
		fclose(f);
	struct timespec back[2] = { dir_st.st_atim, dir_st.st_mtim };
	ok = ok && utimensat(AT_FDCWD, unwind, back, 0) == 0;
	c = unwindtablescache_open_at(path);
	test_cond("unwindcache: an open of a folder unchanged since its last look does not look",
		  ok && c && unwindtablescache_stats(c)->evicted == 0 && access(big, F_OK) == 0);
	unwindtablescache_close(c);
	if (ok)
		utimensat(AT_FDCWD, unwind, NULL, 0);	/* now: as an entry written */
	c = unwindtablescache_open_at(path);
	test_cond("unwindcache: once the folder changed, an open looks and evicts past the limit",
		  ok && c && unwindtablescache_stats(c)->evicted >= 1 && access(big, F_OK) != 0);
	unwindtablescache_close(c);
	unsetenv("MARPLE_CACHE_SIZE");
}

int main(void)
{
	char dir[] = "/tmp/test_unwindcache.XXXXXX", path[512], self[256] = "", nobid[512], entry[600], cmd[1400];
	struct unwindtables_rowbuf b = { 0 };
	struct unwind_row *got = malloc(CAP * sizeof(*got));
	struct stat st;
	uint32_t n = 0;
	size_t len = 0;

	test_plan(26);
	elf_version(EV_CURRENT);
	unsetenv("MARPLE_CACHE_SIZE");
	if (!mkdtemp(dir) || readlink("/proc/self/exe", self, sizeof(self) - 1) < 0)
		return 1;
	/* the subject: this program, and a copy without its build-id */
	struct subject s = open_subject(self);
	char id[80];
	int rc = s.elf ? unwindtablescfi_read(s.elf, UNWINDTABLES_CFI_OURS, CAP, &b, &rowstats) : -1;
	rows = b.rows, nrows = (uint32_t)b.nrows;
	test_cond("unwindcache: the subject has rows and a build-id",
		  rc == 0 && nrows > 10 && procmaps_build_id(s.elf, id, sizeof(id)) == 0);
	snprintf(nobid, sizeof(nobid), "%s/nobid", dir);
	snprintf(cmd, sizeof(cmd), "objcopy --remove-section .note.gnu.build-id '%s' '%s'", self, nobid);
	int objcopy_ok = system(cmd) == 0;

	snprintf(path, sizeof(path), "%s/root", dir);
	struct unwindtablescache *c = unwindtablescache_open_at(path);
	test_cond("unwindcache: its directory made, mode 0700",
		  c && stat(unwindtablescache_dir(c), &st) == 0 && (st.st_mode & 07777) == 0700);
	if (!c)
		return test_report();
	const struct unwindtablescache_stats *cs = unwindtablescache_stats(c);
	struct stat self_st;
	stat(self, &self_st);
	snprintf(entry, sizeof(entry), "%s/f-%llx-%llu", unwindtablescache_dir(c), (unsigned long long)self_st.st_dev,
		 (unsigned long long)self_st.st_ino);

	test_cond("unwindcache: first lookup misses, and the entry is written",
		  lookup_store(c, &s, got, &n) == 0 && cs->missed == 1 && cs->written == 1);
	test_cond("unwindcache: the entry is named by the file (device, inode), mode 0600",
		  lstat(entry, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0600);
	test_cond("unwindcache: second lookup reads the same rows back",
		  lookup_store(c, &s, got, &n) == 1 && n == nrows && !memcmp(got, rows, n * sizeof(*rows)) &&
			  cs->read == 1);

	/* a byte of the rows flipped: corrupt, rebuilt */
	flip_byte(entry, (off_t)(st.st_size - 7));
	test_cond("unwindcache: a flipped byte: corrupt, not used",
		  lookup_store(c, &s, got, &n) == 0 && cs->corrupt == 1 && cs->written == 2);
	test_cond("unwindcache: ... and rewritten", lookup_store(c, &s, got, &n) == 1 &&
							   !memcmp(got, rows, n * sizeof(*rows)));
	if (truncate(entry, st.st_size - 16) != 0)
		perror(entry);
	test_cond("unwindcache: truncated: corrupt, not used", lookup_store(c, &s, got, &n) == 0 && cs->corrupt == 2);
	/* another word size (a format neighbours may change): stale */
	flip_byte(entry, 12);	/* unit's low byte */
	test_cond("unwindcache: another word size: stale", lookup_store(c, &s, got, &n) == 0 && cs->stale == 1);

	/* a symlink planted at the entry's path is not followed, nor written through */
	char victim[600];
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	FILE *v = fopen(victim, "w");
	fputs("keep", v);
	fclose(v);
	unlink(entry);
	if (symlink(victim, entry) != 0)
		perror(entry);
	uint64_t corrupt = cs->corrupt;
	test_cond("unwindcache: a symlink at the entry: not read", lookup_store(c, &s, got, &n) == 0 &&
									  cs->corrupt == corrupt + 1);
	test_cond("unwindcache: ... its target untouched, the entry a file again",
		  stat(victim, &st) == 0 && st.st_size == 4 && lstat(entry, &st) == 0 && S_ISREG(st.st_mode));

	/* no build-id: named by device and inode, keyed by size and mtime too */
	if (objcopy_ok) {
		struct subject t = open_subject(nobid);
		test_cond("unwindcache: no build-id: written, then read",
			  t.elf && procmaps_build_id(t.elf, id, sizeof(id)) != 0 &&
				  lookup_store(c, &t, got, &n) == 0 && lookup_store(c, &t, got, &n) == 1);
		close_subject(&t);
		struct timespec when[2] = { { .tv_nsec = UTIME_OMIT }, { .tv_sec = 1000000000 } };
		utimensat(AT_FDCWD, nobid, when, 0);	/* touched: another version of the file */
		t = open_subject(nobid);
		uint64_t stale = cs->stale;
		test_cond("unwindcache: no build-id, file changed: stale, rebuilt",
			  lookup_store(c, &t, got, &n) == 0 && cs->stale == stale + 1 &&
				  lookup_store(c, &t, got, &n) == 1);
		close_subject(&t);
	} else {
		printf("SKIP: unwindcache: no build-id: objcopy failed\n");
		printf("SKIP: unwindcache: no build-id, file changed: objcopy failed\n");
	}

	/* a build in progress elsewhere (its lock held): wait, then read its entry */
	unlink(entry);
	struct holder h = { .c = unwindtablescache_open_at(path) };
	pthread_t th;
	uint64_t read = cs->read;
	test_cond("unwindcache: another's lookup misses and holds the lock",
		  h.c && unwindtablescache_lookup(h.c, &h.tk, s.elf, s.fd, got, CAP * sizeof(*got), &len, &(struct unwindtables_rowstats){ 0 }) == 0 &&
			  h.tk.lock_fd >= 0);
	pthread_create(&th, NULL, store_later, &h);
	test_cond("unwindcache: ours waits for its entry and reads it",
		  lookup_store(c, &s, got, &n) == 1 && cs->read == read + 1 && cs->waited == 1 &&
			  !memcmp(got, rows, n * sizeof(*rows)));
	pthread_join(th, NULL);
	unwindtablescache_close(h.c);

	/* the same as collectors meet it: ours sized its buffer by the entry
	 * before the other's build wrote it (none: 0 bytes), then waited; the
	 * entry then there is too big for it, and is read again with room, not
	 * built a second time (unwindcache.t's two at once) */
	unlink(entry);
	h = (struct holder){ .c = unwindtablescache_open_at(path) };
	read = cs->read;
	uint64_t written = cs->written;
	struct unwindtablescache_ticket ours;
	int more = -1;
	if (h.c && unwindtablescache_lookup(h.c, &h.tk, s.elf, s.fd, got, CAP * sizeof(*got), &len, &(struct unwindtables_rowstats){ 0 }) == 0) {
		pthread_create(&th, NULL, store_later, &h);
		len = 0;
		more = unwindtablescache_lookup(c, &ours, s.elf, s.fd, got, unwindtablescache_entry_size(c, s.fd), &len,
						&(struct unwindtables_rowstats){ 0 });
		pthread_join(th, NULL);
	}
	unwindtablescache_close(h.c);
	test_cond("unwindcache: ours, its buffer sized before the entry was written, waits and asks for more room",
		  more == UNWINDTABLESCACHE_MORE_ROOM && len == nrows * sizeof(*rows) && ours.lock_fd < 0 &&
			  cs->written == written && cs->waited == 2);
	test_cond("unwindcache: ... then reads it with room for it, the wait counted once",
		  lookup_store(c, &s, got, &n) == 1 && n == nrows && !memcmp(got, rows, n * sizeof(*rows)) &&
			  cs->read == read + 1 && cs->waited == 2 && cs->written == written);

	/* a fact about the kernel: kept for this boot only, read back as written */
	int fact = -1;
	test_cond("unwindcache: a kernel fact not found out yet is not known",
		  unwindtablescache_kernel_fact(c, "vma-iterator", &fact) == -1 && fact == -1);
	unwindtablescache_kernel_fact_set(c, "vma-iterator", 1);
	test_cond("unwindcache: a kernel fact set is known, as set",
		  unwindtablescache_kernel_fact(c, "vma-iterator", &fact) == 0 && fact == 1);
	char factfile[700];
	snprintf(factfile, sizeof(factfile), "%s/.vma-iterator", unwindtablescache_dir(c));
	FILE *ff = fopen(factfile, "w");
	if (ff) {
		fputs("00000000-0000-0000-0000-000000000000 0\n", ff);
		fclose(ff);
	}
	fact = -1;
	test_cond("unwindcache: a kernel fact of another boot is not believed",
		  unwindtablescache_kernel_fact(c, "vma-iterator", &fact) == -1 && fact == -1);
	unwindtablescache_close(c);

	/* the size limit: the entry used least recently goes */
	setenv("MARPLE_CACHE_SIZE", "1", 1);
	c = unwindtablescache_open_at(path);
	cs = c ? unwindtablescache_stats(c) : NULL;
	struct stat e1;
	struct unwind_row *big = calloc(50000, sizeof(*big));	/* 800 KB: two do not fit in 1 MB */
	struct unwindtablescache_ticket tk;
	if (c && objcopy_ok) {
		struct subject t = open_subject(nobid);
		unwindtablescache_lookup(c, &tk, s.elf, s.fd, got, CAP * sizeof(*got), &len, &(struct unwindtables_rowstats){ 0 });
		unwindtablescache_store(c, &tk, big, 50000 * sizeof(*big), &rowstats);
		struct timespec old[2] = { { .tv_sec = 1000000000 }, { .tv_sec = 1000000000 } };
		utimensat(AT_FDCWD, entry, old, AT_SYMLINK_NOFOLLOW);
		unwindtablescache_lookup(c, &tk, t.elf, t.fd, got, CAP * sizeof(*got), &len, &(struct unwindtables_rowstats){ 0 });
		unwindtablescache_store(c, &tk, big, 50000 * sizeof(*big), &rowstats);
		test_cond("unwindcache: past the limit, the oldest entry is evicted",
			  cs->evicted == 1 && lstat(entry, &e1) != 0);
		close_subject(&t);
	} else {
		printf("SKIP: unwindcache: eviction: objcopy failed\n");
	}
	unwindtablescache_close(c);
	unsetenv("MARPLE_CACHE_SIZE");
	test_look_note(path);

	/* a directory others may write in is not used */
	snprintf(path, sizeof(path), "%s/open", dir);
	mkdir(path, 0777);
	chmod(path, 0777);
	test_cond("unwindcache: a directory others may write in is refused", unwindtablescache_open_at(path) == NULL);
	snprintf(path, sizeof(path), "%s/link", dir);
	if (symlink(dir, path) != 0)
		perror(path);
	test_cond("unwindcache: a symlinked cache directory is refused", unwindtablescache_open_at(path) == NULL);
	setenv("MARPLE_CACHE_DIR", "off", 1);
	test_cond("unwindcache: MARPLE_CACHE_DIR=off: none", unwindtablescache_open() == NULL);

	close_subject(&s);
	unwindtablescfi_buf_free(&b);
	free(got);
	free(big);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		return 1;
	return test_report();
}
