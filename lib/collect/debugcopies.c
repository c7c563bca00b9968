/* debugcopies.c — compressed debug files kept inflated on disk (see
 * debugcopies.h). */
#include "debugcopies.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cachedir.h"
#include "util.h"

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_DATA ELFDATA2LSB
#else
#define HOST_DATA ELFDATA2MSB
#endif

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;	/* the folder and the counts */
static struct cachedir *folder;
static int folder_tried, disabled;
static unsigned tmp_seq;
static struct debugcopies_stats counts;

void debugcopies_disable(void)
{
	disabled = 1;
}

void debugcopies_stats(struct debugcopies_stats *out)
{
	pthread_mutex_lock(&lock);
	*out = counts;
	pthread_mutex_unlock(&lock);
}

/* Whether the section is a compressed .debug_ one (what libdw inflates). */
static int compressed_debug(Elf *e, size_t shstrndx, const GElf_Shdr *sh)
{
	const char *name = (sh->sh_flags & SHF_COMPRESSED) && sh->sh_type != SHT_NOBITS
				   ? elf_strptr(e, shstrndx, sh->sh_name) : NULL;
	return name && strncmp(name, ".debug_", 7) == 0;
}

/* The bytes e's compressed .debug_ sections inflate to (0: none). */
static uint64_t inflated_bytes(Elf *e)
{
	size_t shstrndx;
	uint64_t total = 0;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return 0;
	for (Elf_Scn *scn = elf_nextscn(e, NULL); scn; scn = elf_nextscn(e, scn)) {
		GElf_Shdr sh;
		GElf_Chdr ch;
		if (gelf_getshdr(scn, &sh) && compressed_debug(e, shstrndx, &sh) && gelf_getchdr(scn, &ch))
			total += ch.ch_size;
	}
	return total;
}

/* A copy as debugcopies_write leaves it: an ELF whose section headers end it
 * (one cut short by a crash is not). */
static int copy_whole(int fd, const struct stat *st)
{
	Elf64_Ehdr eh;
	return pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) && memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
	       eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_shentsize == sizeof(Elf64_Shdr) &&
	       eh.e_shoff + (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr) == (uint64_t)st->st_size;
}

static int pwrite_full(int fd, const void *buf, size_t len, uint64_t off)
{
	const char *p = buf;
	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);
		if (n <= 0)
			return -1;
		p += n, len -= (size_t)n, off += (uint64_t)n;
	}
	return 0;
}

/* src's first size bytes to out, at the same offsets. */
static int copy_bytes(int src, int out, uint64_t size)
{
	char buf[1 << 16];
	for (uint64_t off = 0; off < size;) {
		ssize_t n = pread(src, buf, sizeof(buf), (off_t)off);
		if (n <= 0 || pwrite_full(out, buf, (size_t)n, off) != 0)
			return -1;
		off += (uint64_t)n;
	}
	return 0;
}

/* Section i of e inflated at *off of out (aligned), its header *sh made to
 * say so. */
static int append_inflated(Elf *e, size_t i, int out, uint64_t *off, Elf64_Shdr *sh)
{
	Elf_Scn *scn = elf_getscn(e, i);
	Elf_Data *d = scn && elf_compress(scn, 0, 0) >= 0 ? elf_getdata(scn, NULL) : NULL;
	if (!d || (d->d_size && !d->d_buf))
		return -1;
	uint64_t align = d->d_align ? d->d_align : 1;
	*off = (*off + align - 1) / align * align;
	if (pwrite_full(out, d->d_buf, d->d_size, *off) != 0)
		return -1;
	sh->sh_flags &= ~(uint64_t)SHF_COMPRESSED;
	sh->sh_offset = *off;
	sh->sh_size = d->d_size;
	sh->sh_addralign = align;
	*off += d->d_size;
	return 0;
}

/* The copy of src (e, of size bytes) written to out: src's bytes, its
 * compressed .debug_ sections inflated after them, the section headers
 * after those, e_shoff made to point there.  Native 64-bit ELF only. */
static int write_copy(int src, Elf *e, uint64_t size, int out)
{
	size_t shnum, shstrndx;
	GElf_Ehdr eh;
	if (!gelf_getehdr(e, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != HOST_DATA ||
	    elf_getshdrnum(e, &shnum) != 0 || shnum == 0 || shnum >= SHN_LORESERVE ||
	    elf_getshdrstrndx(e, &shstrndx) != 0 || copy_bytes(src, out, size) != 0)
		return -1;
	Elf64_Shdr *sh = marple_calloc(shnum, sizeof(*sh));
	uint64_t off = size;
	int rc = 0;
	for (size_t i = 0; i < shnum && rc == 0; i++) {
		GElf_Shdr g;
		if (!gelf_getshdr(elf_getscn(e, i), &g)) {
			rc = -1;
			break;
		}
		sh[i] = (Elf64_Shdr){ g.sh_name, g.sh_type, g.sh_flags, g.sh_addr, g.sh_offset,
				      g.sh_size, g.sh_link, g.sh_info, g.sh_addralign, g.sh_entsize };
		if (compressed_debug(e, shstrndx, &g))
			rc = append_inflated(e, i, out, &off, &sh[i]);
	}
	off = (off + 7) & ~(uint64_t)7;
	if (rc == 0)
		rc = pwrite_full(out, sh, shnum * sizeof(*sh), off) ||
		     pwrite_full(out, &off, sizeof(off), offsetof(Elf64_Ehdr, e_shoff));
	free(sh);
	return rc ? -1 : 0;
}

/* The copy named name, if it is there, ours and whole (one that is not is
 * removed): its descriptor, touched (used now: evicted last); else -1. */
static int open_copy(const char *name)
{
	struct stat st;
	int fd = openat(folder->fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && copy_whole(fd, &st)) {
		futimens(fd, NULL);
		return fd;
	}
	close(fd);
	unlinkat(folder->fd, name, 0);
	return -1;
}

/* The copy of src made as name (a temporary file renamed into place): its
 * descriptor, or -1. */
static int make_copy(int src, Elf *e, uint64_t size, const char *name)
{
	char tmp[256];
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d.%u", name, (int)getpid(), tmp_seq++);
	int out = openat(folder->fd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return -1;
	if (write_copy(src, e, size, out) != 0 || renameat(folder->fd, tmp, folder->fd, name) != 0) {
		close(out);
		unlinkat(folder->fd, tmp, 0);
		return -1;
	}
	cachedir_evict(folder, 0);	/* a copy is megabytes: look now */
	return out;
}

/* The copy of the file (st, e) by its name: read, else made; -1 if neither. */
static int copy_of(int fd, Elf *e, const struct stat *st)
{
	char name[200];
	snprintf(name, sizeof(name), "i-%llx-%llu-%llu-%lld.%09ld-%lld.%09ld", (unsigned long long)st->st_dev,
		 (unsigned long long)st->st_ino, (unsigned long long)st->st_size, (long long)st->st_mtim.tv_sec,
		 st->st_mtim.tv_nsec, (long long)st->st_ctim.tv_sec, st->st_ctim.tv_nsec);
	int copy = open_copy(name);
	if (copy >= 0) {
		counts.read++;
		return copy;
	}
	if ((copy = make_copy(fd, e, (uint64_t)st->st_size, name)) >= 0)
		counts.written++;
	else
		counts.failed++;
	return copy;
}

int debugcopies_open(int fd, uint64_t max_bytes)
{
	struct stat st;
	if (disabled || fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (st.st_uid != 0 && st.st_uid != geteuid()))
		return fd;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	uint64_t need = e ? inflated_bytes(e) : 0;
	int copy = -1;
	if (need > 0 && need <= max_bytes) {
		pthread_mutex_lock(&lock);
		if (!folder_tried) {
			char root[4096];
			folder_tried = 1;
			if (cachedir_root(root, sizeof(root), "debug") == 0)
				folder = cachedir_open_at(root, "debug");
		}
		if (folder)
			copy = copy_of(fd, e, &st);
		pthread_mutex_unlock(&lock);
	}
	elf_end(e);
	if (copy < 0)
		return fd;
	close(fd);
	return copy;
}
