/* sourceframes.c — a file's source frames: DWARF inline chains, else a Go
 * table's function (see sourceframes.h). */
#include <fcntl.h>
#include <gelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gopclntab.h"
#include "mappedfiles.h"
#include "procmaps.h"
#include "sourceframes.h"
#include "util.h"

#define MAX_SEGMENTS 16

/* What sourceframes learned about a mapped file: its slot in the file's
 * entry of the model (mappedfiles.h). */
struct source_file {
	struct dwarfinline *dwarf;
	struct gopclntab *go;
	int nsegs;
	struct {
		uint64_t offset, filesz, vaddr;
	} segs[MAX_SEGMENTS];		/* PT_LOAD: a file offset to its vaddr */
};

struct sourceframes {
	struct mappedfiles *model;
	struct mappedfile **held;	/* the files with a slot, held */
	size_t nheld, held_cap;
	uint64_t dwarf_kept;		/* debug section bytes of the DWARF kept open */
	struct sourceframes_stats st;
};

struct sourceframes *sourceframes_new(void)
{
	struct sourceframes *s = marple_calloc(1, sizeof(*s));
	s->model = mappedfiles_shared();
	return s;
}

/* The loadable segments of the ELF file f, from its mapping. */
static void read_segments(struct source_file *sfile, const struct mappedfile *f)
{
	Elf *elf = elf_memory((char *)f->data, f->size);
	size_t n = 0;
	if (elf && elf_getphdrnum(elf, &n) == 0) {
		for (size_t i = 0; i < n && sfile->nsegs < MAX_SEGMENTS; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
				sfile->segs[sfile->nsegs].offset = ph.p_offset, sfile->segs[sfile->nsegs].filesz = ph.p_filesz,
				sfile->segs[sfile->nsegs++].vaddr = ph.p_vaddr;
		}
	}
	if (elf)
		elf_end(elf);
}

/* Open path (the process's root first, then ours) only if it is the file f
 * (a regular file, never blocking, the same device and inode): libdw reads
 * DWARF from a descriptor, not from the model's mapping. */
static int open_same_file(pid_t pid, const char *path, const struct mappedfile *f, char *real, size_t size)
{
	for (int ours = 0; ours < 2; ours++) {
		struct stat st;
		if (ours)
			snprintf(real, size, "%s", path);
		else
			snprintf(real, size, "/proc/%d/root%s", (int)pid, path);
		int fd = procmaps_open_safe(AT_FDCWD, real, &st);
		if (fd >= 0 && mappedfile_id_equal(mappedfile_id_of_stat(&st), f->id))
			return fd;
		if (fd >= 0)
			close(fd);
	}
	return -1;
}

static void source_file_free(void *p)
{
	struct source_file *sfile = p;
	dwarfinline_close(sfile->dwarf);
	gopclntab_close(sfile->go);
	free(sfile);
}

/* What f tells of its sources (read on first sight, kept as sourceframes'
 * slot in f), or NULL over the bound.  Takes the reference f holds: kept
 * with a new slot, else let go. */
static struct source_file *file_of(struct sourceframes *s, pid_t pid, const char *path, struct mappedfile *f)
{
	struct source_file *sfile = mappedfile_slot(f, s);
	if (sfile || s->nheld >= SOURCEFRAMES_MAX_FILES) {
		s->st.files_refused += !sfile;
		mappedfile_put(f);
		return sfile;
	}
	sfile = marple_calloc(1, sizeof(*sfile));
	if (f->data && !mappedfile_truncated(f)) {
		elf_version(EV_CURRENT);
		read_segments(sfile, f);
		sfile->go = gopclntab_from_memory(f->data, f->size);
	}
	char real[4200];
	int fd = open_same_file(pid, path, f, real, sizeof(real));
	sfile->dwarf = fd >= 0 ? dwarfinline_open_fd(real, fd, NULL, 0) : NULL;
	const struct dwarfinline_stats *ds = sfile->dwarf ? dwarfinline_stats(sfile->dwarf) : NULL;
	uint64_t bytes = ds && !ds->too_big ? ds->dwarf_bytes : 0;	/* too big: not kept open */
	if (bytes > SOURCEFRAMES_MAX_DWARF_BYTES - s->dwarf_kept) {
		dwarfinline_close(sfile->dwarf);	/* kept open, it would pass the bound */
		sfile->dwarf = NULL;
		s->st.dwarf_refused++;
	} else {
		s->dwarf_kept += bytes;
	}
	mappedfile_set_slot(f, s, sfile, source_file_free);
	s->held = marple_grow(s->held, &s->held_cap, s->nheld + 1, sizeof(*s->held));
	s->held[s->nheld++] = f;
	s->st.files++;
	return sfile;
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

int sourceframes_lookup(struct sourceframes *s, pid_t pid, const char *path, struct mappedfile_id id,
			uint64_t file_offset, struct sourceframes_frame *out, int max)
{
	s->st.lookups++;
	struct mappedfile *mf = path[0] == '/' && (id.dev || id.ino) ? mappedfiles_find(s->model, id) : NULL;
	struct source_file *f = mf ? file_of(s, pid, path, mf) : NULL;
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
	struct gopclntab_frame go[DWARFINLINE_MAX_DEPTH];
	n = f->go ? gopclntab_chain(f->go, vaddr, go, max < DWARFINLINE_MAX_DEPTH ? max : DWARFINLINE_MAX_DEPTH) : 0;
	for (int i = 0; i < n; i++)
		out[i] = (struct sourceframes_frame){ go[i].function, go[i].file, go[i].line };
	if (n > 0) {
		s->st.go_resolved++;
		return n;
	}
	s->st.unresolved++;
	return 0;
}

void sourceframes_stats(const struct sourceframes *s, struct sourceframes_stats *out)
{
	*out = s->st;
	for (size_t i = 0; i < s->nheld; i++) {	/* units are read as they are asked */
		const struct source_file *sfile = mappedfile_slot(s->held[i], s);
		if (sfile && sfile->go) {
			struct gopclntab_stats g;
			gopclntab_stats(sfile->go, &g);
			out->go_cut += g.cut;
			out->go_bad_inline += g.bad_inline;
			out->go_no_inline_tables += !g.funcdata_bytes;
			out->go_bytes += g.table_bytes + g.funcdata_bytes;
		}
		const struct dwarfinline_stats *d = sfile && sfile->dwarf ? dwarfinline_stats(sfile->dwarf) : NULL;
		if (!d)
			continue;
		out->dwarf_bytes += d->dwarf_bytes;
		out->table_bytes += d->table_bytes;
		out->units += d->units;
		out->units_read += d->units_read;
		out->build_ns += d->build_ns;
	}
}

void sourceframes_free(struct sourceframes *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nheld; i++) {
		mappedfile_set_slot(s->held[i], s, NULL, NULL);	/* frees its source_file */
		mappedfile_put(s->held[i]);
	}
	free(s->held);
	mappedfiles_release(s->model);
	free(s);
}
