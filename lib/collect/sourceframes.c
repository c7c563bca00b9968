/* sourceframes.c — a file's source frames: DWARF inline chains, else a Go
 * table's function (see sourceframes.h). */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gopclntab.h"
#include "hashtab.h"
#include "sourceframes.h"
#include "util.h"

#define MAX_SEGMENTS 16

struct source_file {
	struct dwarfinline *dwarf;
	struct gopclntab *go;
	int nsegs;
	struct {
		uint64_t offset, filesz, vaddr;
	} segs[MAX_SEGMENTS];		/* PT_LOAD: a file offset to its vaddr */
};

struct sourceframes {
	struct hashtab *paths;		/* path -> index in files */
	struct source_file *files;
	size_t cap;
	struct sourceframes_stats st;
};

struct sourceframes *sourceframes_new(void)
{
	struct sourceframes *s = calloc(1, sizeof(*s));
	if (!s || !(s->paths = hashtab_new()))
		marple_fatal(1, "out of memory");
	return s;
}

/* The loadable segments of the ELF at path. */
static void read_segments(struct source_file *f, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	size_t n = 0;
	if (elf && elf_getphdrnum(elf, &n) == 0) {
		for (size_t i = 0; i < n && f->nsegs < MAX_SEGMENTS; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
				f->segs[f->nsegs].offset = ph.p_offset, f->segs[f->nsegs].filesz = ph.p_filesz,
				f->segs[f->nsegs++].vaddr = ph.p_vaddr;
		}
	}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
}

/* The slot of path with build_id (opened on first sight), or NULL over the
 * bound.  Keyed by both: one path can be two files (containers, a rebuild). */
static struct source_file *file_of(struct sourceframes *s, pid_t pid, const char *path, const char *build_id)
{
	char key[4096];
	int len = snprintf(key, sizeof(key), "%s%c%s", path, 0, build_id ? build_id : "");
	if (len < 0 || (size_t)len >= sizeof(key))
		return NULL;
	size_t before = hashtab_size(s->paths);
	if (before >= SOURCEFRAMES_MAX_FILES && !hashtab_find(s->paths, key, (size_t)len)) {
		s->st.files_refused++;
		return NULL;
	}
	size_t i = hashtab_index(s->paths, hashtab_add(s->paths, key, (size_t)len, 0, 0));
	if (i < before)
		return &s->files[i];
	s->files = marple_grow(s->files, &s->cap, i + 1, sizeof(*s->files));
	struct source_file *f = memset(&s->files[i], 0, sizeof(*f));
	char real[4096];
	snprintf(real, sizeof(real), "/proc/%d/root%s", (int)pid, path);
	if (access(real, R_OK) != 0)
		snprintf(real, sizeof(real), "%s", path);
	elf_version(EV_CURRENT);
	read_segments(f, real);
	f->dwarf = dwarfinline_open(real, NULL, 0);
	if (f->dwarf)
		s->st.dwarf_bytes += dwarfinline_stats(f->dwarf)->dwarf_bytes,
		s->st.table_bytes += dwarfinline_stats(f->dwarf)->table_bytes;
	f->go = gopclntab_open(real);
	s->st.files++;
	return f;
}

static int offset_to_vaddr(const struct source_file *f, uint64_t offset, uint64_t *vaddr)
{
	for (int i = 0; i < f->nsegs; i++)
		if (offset >= f->segs[i].offset && offset - f->segs[i].offset < f->segs[i].filesz) {
			*vaddr = offset - f->segs[i].offset + f->segs[i].vaddr;
			return 0;
		}
	return -1;
}

int sourceframes_lookup(struct sourceframes *s, pid_t pid, const char *path, const char *build_id,
			uint64_t file_offset, struct sourceframes_frame *out, int max)
{
	s->st.lookups++;
	struct source_file *f = path[0] == '/' ? file_of(s, pid, path, build_id) : NULL;
	uint64_t vaddr;
	if (!f || max < 1 || offset_to_vaddr(f, file_offset, &vaddr) != 0) {
		s->st.unresolved++;
		return 0;
	}
	struct dwarfinline_frame chain[DWARFINLINE_MAX_DEPTH];
	int n = f->dwarf ? dwarfinline_lookup(f->dwarf, vaddr, chain, max < DWARFINLINE_MAX_DEPTH ? max : DWARFINLINE_MAX_DEPTH) : 0;
	for (int i = 0; i < n; i++)
		out[i] = (struct sourceframes_frame){ chain[i].function, chain[i].file, chain[i].line };
	if (n > 0) {
		s->st.dwarf_resolved++;
		return n;
	}
	struct gopclntab_frame g;
	if (f->go && gopclntab_lookup(f->go, vaddr, &g)) {
		out[0] = (struct sourceframes_frame){ g.function, g.file, g.line };
		s->st.go_resolved++;
		return 1;
	}
	s->st.unresolved++;
	return 0;
}

void sourceframes_stats(const struct sourceframes *s, struct sourceframes_stats *out)
{
	*out = s->st;
}

void sourceframes_free(struct sourceframes *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < hashtab_size(s->paths); i++) {
		dwarfinline_close(s->files[i].dwarf);
		gopclntab_close(s->files[i].go);
	}
	free(s->files);
	hashtab_free(s->paths);
	free(s);
}
