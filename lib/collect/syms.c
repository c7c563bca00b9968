/* syms.c — process images and the user-space symbolizer's lookups (see
 * syms.h): each (pid, exec id) with its mappings read from /proc, the file
 * VMAs others found for it (the unwinder's walk, the tables' worker:
 * symswalked.c), forgetting exited processes.  What a file tells is
 * elfsyms.c's (a slot in the model of mapped files, mappedfiles.h), a JIT's
 * perf map perfmap.c's, kernel names ksyms.c's.  Lookups are two binary
 * searches (the image's mappings, then the file's sorted symbols). */
#include "syms.h"

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <pthread.h>
#include <libiberty/demangle.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <linux/openat2.h>
#include <unistd.h>

#include "hashtab.h"
#include "elfsyms.h"
#include "mappedfiles.h"
#include "perfmap.h"
#include "procmaps.h"
#include "symsimage.h"
#include "util.h"

/* ---------------- user space ---------------- */

static int elf_ready;

struct syms_cache *syms_cache_new(int flags)
{
	struct syms_cache *c = marple_calloc(1, sizeof(*c));
	c->flags = flags;
	c->elf.flags = flags;
	c->elf.files = mappedfiles_shared();
	pthread_mutex_init(&c->post_lock, NULL);
	if (!elf_ready) {
		elf_version(EV_CURRENT);
		elf_ready = 1;
	}
	return c;
}

void syms_cache_free(struct syms_cache *c)
{
	if (!c)
		return;
	for (size_t b = 0; b < NBUCKETS; b++) {
		for (struct proc *p = c->procs[b], *n; p; p = n) {
			n = p->next;
			free(p->maps);
			free(p->walked);
			perfmap_free(p->jit);
			if (p->jit_known)
				perfmap_process_close(&p->jit_process);
			free(p);
		}
	}
	for (struct elfsyms_file *d = c->elf.list, *n; d; d = n) {
		n = d->next;
		elfsyms_file_free(&c->elf, d);
	}
	mappedfiles_release(c->elf.files);
	free(c->young);
	syms_posted_free(c);
	hashtab_free(c->jit_names);
	for (size_t i = 0; i < c->nnames; i++)
		free(c->names[i]);
	free(c->names);
	free(c);
}

static const char *intern(struct syms_cache *c, const char *s)
{
	for (size_t i = c->nnames; i-- > 0;)
		if (strcmp(c->names[i], s) == 0)
			return c->names[i];
	c->names = marple_grow(c->names, &c->names_cap, c->nnames + 1, sizeof(char *));
	c->names[c->nnames] = marple_strdup(s);
	return c->names[c->nnames++];
}

int syms_name_preferred(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	if ((a[0] == '_') != (b[0] == '_'))
		return b[0] == '_';
	if (la != lb)
		return la < lb;
	return strcmp(a, b) < 0;
}

/* The dso for the file pid maps at l; root is pid's root prefix. */
static struct elfsyms_file *get_dso(struct syms_cache *c, pid_t pid, const struct procmaps_line *l, const char *root)
{
	struct mappedfile *f = mappedfiles_open_line(c->elf.files, pid, l);

	return f ? elfsyms_of_file(&c->elf, f, l->path, root) : NULL;
}

struct proc *syms_find_image(struct syms_cache *c, pid_t pid, uint64_t exec_id)
{
	for (struct proc *p = c->procs[(uint32_t)pid % NBUCKETS]; p; p = p->next)
		if (p->pid == pid && p->exec_id == exec_id)
			return p;
	return NULL;
}

/* Is exec id a later than b?  (32-bit ids, which only grow) */
static int exec_after(uint64_t a, uint64_t b)
{
	return (int32_t)((uint32_t)a - (uint32_t)b) > 0;
}

/* The newest image of pid known (ANY images aside), or NULL. */
static struct proc *newest_image(struct syms_cache *c, pid_t pid)
{
	struct proc *n = NULL;
	for (struct proc *p = c->procs[(uint32_t)pid % NBUCKETS]; p; p = p->next)
		if (p->pid == pid && p->exec_id != SYMS_EXEC_ANY && (!n || exec_after(p->exec_id, n->exec_id)))
			n = p;
	return n;
}

/* A perf map line's name as shown (C++ names demangled), stored once for the
 * life of the cache. */
static const char *jit_name(void *ctx, const char *name)
{
	struct syms_cache *c = ctx;
	char *d = NULL;

	if (!c->jit_names)
		c->jit_names = hashtab_new();
	if ((c->flags & SYMS_DEMANGLE) && name[0] == '_' && name[1] == 'Z')
		d = cplus_demangle(name, DMGL_ANSI | (c->flags & SYMS_DEMANGLE_PARAMS ? DMGL_PARAMS : 0));
	const char *s = d ? d : name;
	const char *k = hashtab_add(c->jit_names, s, strlen(s), 0, 0)->key;
	free(d);
	return k;
}

/* (Re)read p's perf map if it has appeared or changed since it was read:
 * 1 if it was read, 0 if not (none, unchanged, or not to be trusted). */
static int load_perfmap(struct syms_cache *c, struct proc *p)
{
	struct stat st;
	FILE *f;
	int fd;

	if (!p->jit_known || (fd = perfmap_open(&p->jit_process, &st)) < 0)
		return 0;
	if ((p->jit && perfmap_unchanged(p->jit, &st)) || !(f = fdopen(fd, "re"))) {
		close(fd);
		return 0;
	}
	struct perfmap *pm = perfmap_read(f, &st, jit_name, c);
	c->st.perfmap_lines_skipped += pm->skipped.bad_lines + pm->skipped.lines_unread;
	c->st.perfmap_names_cut += pm->skipped.long_lines + pm->skipped.long_names;
	c->st.perfmap_bytes_unread += pm->skipped.bytes_unread;
	perfmap_free(p->jit);
	p->jit = pm;
	return 1;
}

/* (Re)read /proc/PID/maps into p.  With p->has_layout, the maps are taken only
 * if the process still has that layout after they were read (images only
 * change forward, so they are of p's image): 1, p left as it was, if not. */
static int read_maps(struct syms_cache *c, struct proc *p)
{
	char root[64];
	struct procmaps pm;
	struct procmaps_line l;
	size_t cap = 0;
	struct umap *maps = NULL;
	size_t nmaps = 0;

	if (procmaps_open(&pm, p->pid) < 0) {
		p->gone = 1;
		return -1;
	}
	procmaps_root(p->pid, root, sizeof(root));
	int anon_exec = 0;
	while (procmaps_next(&pm, &l)) {
		const char *file = l.path;
		struct umap m = { l.start, l.end, l.pgoff, NULL, NULL };
		if (procmaps_is_file(&l)) {
			if (procmaps_is_exec(&l) || strchr(l.perms, 'r'))
				m.dso = get_dso(c, p->pid, &l, root);
			const char *base = strrchr(file, '/');
			m.name = m.dso ? m.dso->name : intern(c, base + 1);
		} else if (file[0]) {
			m.name = intern(c, file);
		} else {
			m.name = "[anon]";
			m.anon_exec = procmaps_is_exec(&l);
			anon_exec |= m.anon_exec;
		}
		maps = marple_grow(maps, &cap, nmaps + 1, sizeof(*maps));
		maps[nmaps++] = m;
	}
	procmaps_close(&pm);
	if (p->has_layout) {
		uint64_t now[SYMS_LAYOUT_N];
		if (procmaps_read_layout(p->pid, now) < 0 || memcmp(now, p->layout, sizeof(now)) != 0) {
			free(maps);
			return 1;
		}
	}
	/* a process that has exited but not been reaped (a zombie) still has a
	 * maps file, an empty one: it keeps its snapshot */
	if (nmaps == 0 && p->nmaps > 0) {
		p->gone = 1;
		return -1;
	}
	free(p->maps);
	p->maps = maps;
	p->nmaps = nmaps;
	p->read_ns = marple_now_monotonic_ns();
	if (anon_exec && !p->jit_known) {	/* a JIT writes code to anonymous memory */
		perfmap_process_note(&p->jit_process, p->pid, root);
		p->jit_known = 1;
		p->anon_exec = 1;
	}
	if (anon_exec && !p->jit) {
		p->jit_check_ns = p->read_ns;
		load_perfmap(c, p);
	}
	return 0;
}

struct proc *syms_new_image(struct syms_cache *c, pid_t pid, uint64_t exec_id)
{
	struct proc *p = marple_calloc(1, sizeof(*p));
	p->pid = pid;
	p->exec_id = exec_id;
	size_t b = (uint32_t)pid % NBUCKETS;
	p->next = c->procs[b];
	c->procs[b] = p;
	c->st.procs++;
	return p;
}

/* p's image is current (or was when p was seen): older images of its process
 * are not read from /proc again.  0, or -1 if a newer image is known. */
static int make_current(struct syms_cache *c, struct proc *p)
{
	struct proc *n = newest_image(c, p->pid);
	if (n && exec_after(n->exec_id, p->exec_id))
		return -1;
	for (struct proc *q = c->procs[(uint32_t)p->pid % NBUCKETS]; q; q = q->next)
		if (q->pid == p->pid && q->exec_id != SYMS_EXEC_ANY && exec_after(p->exec_id, q->exec_id))
			q->frozen = 1;
	return 0;
}

/* The image to resolve (pid, exec_id) in: created at the first call, with
 * its maps read now if no newer image is known.  SYMS_EXEC_ANY: the newest
 * image known, or one read now. */
static struct proc *get_proc(struct syms_cache *c, pid_t pid, uint64_t exec_id)
{
	struct proc *p;

	if (exec_id == SYMS_EXEC_ANY && (p = newest_image(c, pid)))
		return p;
	if ((p = syms_find_image(c, pid, exec_id)) && !p->unread)
		return p;
	if (!p)
		p = syms_new_image(c, pid, exec_id);
	p->unread = 0;
	if (exec_id != SYMS_EXEC_ANY && make_current(c, p) < 0) {
		p->frozen = 1;	/* the process has exec'ed since: its maps are another image's */
		return p;
	}
	read_maps(c, p);
	return p;
}

int syms_cache_snapshot(struct syms_cache *c, pid_t pid)
{
	struct proc *p = get_proc(c, pid, SYMS_EXEC_ANY);
	return p->gone && p->nmaps == 0 ? -1 : 0;
}

int syms_cache_snapshot_exec(struct syms_cache *c, pid_t pid, uint64_t exec_id,
			     const uint64_t layout[SYMS_LAYOUT_N])
{
	struct proc *p = syms_find_image(c, pid, exec_id);
	int rc;

	if (!p)
		p = syms_new_image(c, pid, exec_id);
	if (p->verified)
		return 0;
	p->unread = 0;
	if (make_current(c, p) < 0 || p->tries >= 4) {
		p->frozen = 1;
		return -1;
	}
	memcpy(p->layout, layout, sizeof(p->layout));
	p->has_layout = 1;
	c->announced++;
	rc = read_maps(c, p);
	if (rc == 0) {
		p->verified = 1;
		p->frozen = 0;
		p->snap_ns = p->read_ns;
		c->young = marple_grow(c->young, &c->young_cap, c->nyoung + 1, sizeof(*c->young));
		c->young[c->nyoung++] = p;
		return 0;
	}
	/* not this image's maps (or none): never guess.  Maps read before
	 * without a check (a lookup came first) are dropped too. */
	free(p->maps);
	p->maps = NULL;
	p->nmaps = 0;
	p->frozen = 1;
	if (rc < 0)
		return -1;
	p->tries++;
	return 1;
}

void syms_cache_refresh(struct syms_cache *c)
{
	static const uint64_t after_ns[] = { 50000000, 1000000000 };
	uint64_t now = marple_now_monotonic_ns();
	size_t w = 0;

	syms_take_posted(c);	/* while their images are known: not forgotten yet */

	for (size_t i = 0; i < c->nyoung; i++) {
		struct proc *p = c->young[i];
		if (!p->frozen && !p->gone && p->refreshes < 2 && now - p->snap_ns >= after_ns[p->refreshes]) {
			int rc = read_maps(c, p);	/* checked against its layout */
			if (rc > 0)
				p->frozen = 1;	/* exec'ed since: keep what we have */
			p->refreshes++;
		}
		if (!p->frozen && !p->gone && p->refreshes < 2)
			c->young[w++] = p;
	}
	c->nyoung = w;
}

int syms_cache_reread_exec(struct syms_cache *c, pid_t pid, uint64_t exec_id)
{
	struct proc *p = syms_find_image(c, pid, exec_id);

	if (!p || p->gone || p->frozen || marple_now_monotonic_ns() - p->read_ns < 10000000ull)
		return -1;
	int rc = read_maps(c, p);	/* checked against its layout, if it has one */
	if (rc > 0)
		p->frozen = 1;	/* exec'ed since: keep what we have */
	return rc == 0 ? 0 : -1;
}

/* The files no process known maps any more (a build starts new compilers
 * and test programs all the time: their symbol tables and mapped ELF files
 * were kept for the whole capture); read again if mapped again. */
static void forget_unused_dsos(struct syms_cache *c)
{
	for (struct elfsyms_file *d = c->elf.list; d; d = d->next)
		d->used = 0;
	for (size_t b = 0; b < NBUCKETS; b++)
		for (struct proc *p = c->procs[b]; p; p = p->next) {
			for (size_t i = 0; i < p->nmaps; i++)
				if (p->maps[i].dso)
					p->maps[i].dso->used = 1;
			for (size_t i = 0; i < p->nwalked; i++)
				if (p->walked[i].m.dso)
					p->walked[i].m.dso->used = 1;
		}
	for (struct elfsyms_file **dp = &c->elf.list, *d; (d = *dp);) {
		if (d->used) {
			dp = &d->next;
			continue;
		}
		*dp = d->next;
		elfsyms_file_free(&c->elf, d);
	}
}

/* The pages of the mapped ELF files read since the last turn go back:
 * reading a file's symbols faults in its whole .symtab and .strtab, a
 * lookup then a few pages of names, and nothing let go of them while a
 * process mapped the file (a long capture over a build held 13-55 MB of
 * libLLVM's and others' pages, following whatever ran).  MADV_DONTNEED on
 * a read-only private file mapping only drops our page table entries: the
 * contents stay valid (names given out keep pointing into it) and the next
 * read faults the page in again from the page cache, where the kernel may
 * reclaim it meanwhile.  What a minute's lookups read is resident, not
 * everything read since the start. */
static void release_file_pages(struct syms_cache *c)
{
	for (struct elfsyms_file *d = c->elf.list; d; d = d->next) {
		if (d->released && !d->touched)
			continue;
		mappedfile_release_pages(d->file);
		if (d->dbg_file)
			mappedfile_release_pages(d->dbg_file);
		d->touched = 0;
		d->released = 1;
		c->st.file_releases++;
	}
}

void syms_cache_mark_exited(struct syms_cache *c)
{
	for (size_t b = 0; b < NBUCKETS; b++)
		for (struct proc *p = c->procs[b]; p; p = p->next)
			p->forget = kill(p->pid, 0) != 0 && errno == ESRCH;
}

size_t syms_cache_forget_marked(struct syms_cache *c, int keep_jit)
{
	size_t gone = 0, w = 0;

	for (size_t b = 0; b < NBUCKETS; b++)
		for (struct proc *p = c->procs[b]; p; p = p->next)
			if (keep_jit && p->anon_exec)	/* its perf map is read when written */
				p->forget = 0;
	for (size_t i = 0; i < c->nyoung; i++)
		if (!c->young[i]->forget)
			c->young[w++] = c->young[i];
	c->nyoung = w;
	for (size_t b = 0; b < NBUCKETS; b++) {
		for (struct proc **pp = &c->procs[b], *p; (p = *pp);) {
			if (!p->forget) {
				pp = &p->next;
				continue;
			}
			*pp = p->next;
			free(p->maps);
			free(p->walked);
			perfmap_free(p->jit);
			if (p->jit_known)
				perfmap_process_close(&p->jit_process);
			free(p);
			gone++;
		}
	}
	c->st.procs_forgotten += gone;
	if (gone)
		forget_unused_dsos(c);
	release_file_pages(c);
	return gone;
}

size_t syms_cache_forget_exited(struct syms_cache *c)
{
	syms_cache_mark_exited(c);
	return syms_cache_forget_marked(c, 0);
}

static struct umap *find_map_of(struct syms_cache *c, struct proc *p, uint64_t addr)
{
	for (int pass = 0; pass < 2; pass++) {
		size_t lo = 0, hi = p->nmaps;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (addr < p->maps[mid].start)
				hi = mid;
			else if (addr >= p->maps[mid].end)
				lo = mid + 1;
			else
				return &p->maps[mid];
		}
		/* not mapped when we looked: maybe dlopen'ed since; look again (rarely) */
		if (pass || p->gone || p->frozen || marple_now_monotonic_ns() - p->read_ns < 1000000000ull)
			break;
		int rc = read_maps(c, p);
		if (rc != 0) {
			p->frozen = rc > 0;	/* exec'ed since: keep the maps we have */
			break;
		}
	}
	/* in no mapping read: one the BPF walk found, or another reader of
	 * its maps saw, if any did */
	return syms_walked_map(c, p, addr);
}

/* The mapping of p holding addr, or NULL; its file is marked as read since
 * the last release_file_pages (a lookup reads its symbol names, the unwinder
 * its .eh_frame, both from the mapping). */
static struct umap *find_map(struct syms_cache *c, struct proc *p, uint64_t addr)
{
	struct umap *m = find_map_of(c, p, addr);

	if (m && m->dso)
		m->dso->touched = 1;
	return m;
}

/* addr in p's perf map; a miss reads the map again if it changed (at most
 * once a second: node adds lines as it compiles). */
static const char *jit_lookup(struct syms_cache *c, struct proc *p, uint64_t addr, uint64_t *offset)
{
	for (int pass = 0; pass < 2; pass++) {
		const struct perfmap_sym *u = p->jit ? perfmap_find(p->jit, addr) : NULL;
		if (u) {
			if (offset)
				*offset = addr - u->origin;
			return u->name;
		}
		uint64_t now = marple_now_monotonic_ns();
		if (pass || !p->anon_exec || now - p->jit_check_ns < 1000000000ull)
			break;
		p->jit_check_ns = now;
		if (!load_perfmap(c, p))
			break;
	}
	return NULL;
}

int syms_cache_jit_reload(struct syms_cache *c, pid_t pid, uint64_t exec_id)
{
	struct proc *p = syms_find_image(c, pid, exec_id);

	if (!p && exec_id == SYMS_EXEC_ANY)
		p = newest_image(c, pid);
	if (!p || !p->anon_exec)
		return 0;
	p->jit_check_ns = marple_now_monotonic_ns();
	return load_perfmap(c, p);
}

const char *syms_cache_jit_runtime(struct syms_cache *c, pid_t pid, uint64_t exec_id)
{
	struct proc *p = get_proc(c, pid, exec_id);

	for (size_t i = 0; i < p->nmaps; i++) {
		const char *n = p->maps[i].name;
		if (!p->maps[i].dso)
			continue;
		if (strcmp(n, "libjvm.so") == 0 || strcmp(n, "java") == 0)
			return "java";
		if (strcmp(n, "node") == 0 || strncmp(n, "libnode.so", 10) == 0 || strcmp(n, "nodejs") == 0)
			return "node";
	}
	return NULL;
}

const char *syms_cache_lookup(struct syms_cache *c, pid_t pid, uint64_t addr, const char **module,
			      uint64_t *offset)
{
	return syms_cache_lookup_exec(c, pid, SYMS_EXEC_ANY, addr, module, offset);
}

const char *syms_cache_lookup_exec(struct syms_cache *c, pid_t pid, uint64_t exec_id, uint64_t addr,
				   const char **module, uint64_t *offset)
{
	struct syms_frame f;
	int mapped = syms_cache_frame(c, pid, exec_id, addr, 0, &f) == 0;

	if (module)
		*module = f.module;
	if (offset && (f.name || mapped))
		*offset = f.name ? f.sym_offset : f.file_offset;
	return f.name;
}

/* The ELF symbol at addr in mapping m: its name (and *offset in it), or NULL. */
static const char *elf_symbol_at(struct syms_cache *c, const struct umap *m, uint64_t addr, uint64_t *offset)
{
	const struct elfsyms_seg *sg;
	struct elfsyms_sym *u;

	elfsyms_load(&c->elf, m->dso);
	if (!m->dso->nsyms || !(sg = elfsyms_seg_of(m->dso, m->pgoff)))
		return NULL;
	uint64_t vaddr = addr - m->start + m->pgoff - sg->off + sg->vaddr;
	if (!(u = (struct elfsyms_sym *)elfsyms_find(m->dso->syms, m->dso->nsyms, vaddr)))
		return NULL;
	*offset = vaddr - u->addr;
	c->st.walked_named += m->walked;
	return elfsyms_name(&c->elf, u);
}

static int at_interp_entry(struct syms_cache *c, struct proc *p, uint64_t addr, const struct umap *m);

int syms_cache_frame(struct syms_cache *c, pid_t pid, uint64_t exec_id, uint64_t addr, int flags,
		     struct syms_frame *out)
{
	struct proc *p = get_proc(c, pid, exec_id);
	struct umap *m = find_map(c, p, addr);

	memset(out, 0, sizeof(*out));
	c->st.lookups++;
	out->in_jit_memory = p->anon_exec && m && m->anon_exec;
	if (m) {
		out->module = m->name;
		out->path = m->dso ? m->dso->path : m->name;
		out->file_offset = addr - m->start + m->pgoff;
		out->map_start = m->start;
		out->map_end = m->end;
		out->map_pgoff = m->pgoff;
	}
	if (m && m->dso) {
		out->file = m->dso->file->id;
		out->build_id = elfsyms_build_id(m->dso);
		out->name = elf_symbol_at(c, m, addr, &out->sym_offset);
		out->kind = SYMS_KIND_NATIVE;
	} else {
		out->build_id = "";
		out->name = jit_lookup(c, p, addr, &out->sym_offset);
		out->kind = out->name || out->in_jit_memory ? SYMS_KIND_JIT : SYMS_KIND_UNKNOWN;
	}
	if (!out->name)
		c->st.misses++;
	if ((flags & SYMS_FRAME_INTERP_ENTRY) && m)
		out->at_interp_entry = at_interp_entry(c, p, addr, m);
	return m ? 0 : -1;
}

/* The interpreter p's program names (PT_INTERP), found once: by its
 * device and inode as the process sees it (its root, a container's) or as
 * we do, else by its name only.  0, or -1 if it has none (or its program is
 * not known: not kept, asked again). */
static int find_interp(struct syms_cache *c, struct proc *p)
{
	char interp[256], path[320];
	uint64_t layout[SYMS_LAYOUT_N];
	struct stat st;

	if (p->interp_state)
		return p->interp_state > 0 ? 0 : -1;
	if (!p->has_layout && (p->exec_id != SYMS_EXEC_ANY || procmaps_read_layout(p->pid, layout) != 0))
		return -1;	/* where its program is not known */
	struct umap *prog = find_map(c, p, p->has_layout ? p->layout[0] : layout[0]);
	if (!prog || !prog->dso)
		return -1;
	p->interp_state = -1;
	if (elfsyms_interp(prog->dso, interp, sizeof(interp)) != 0)
		return -1;
	p->interp_state = 1;
	p->interp_prog = prog->dso;
	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)p->pid, interp);
	p->interp_by_id = stat(path, &st) == 0 || stat(interp, &st) == 0;
	p->interp_id = p->interp_by_id ? mappedfile_id_of_stat(&st) : (struct mappedfile_id){ 0, 0 };
	snprintf(p->interp_base, sizeof(p->interp_base), "%s", strrchr(interp, '/') + 1);
	return 0;
}

/* Is addr (in mapping m of image p) in the first SYMS_ENTRY_CODE bytes of
 * the entry point of the file p's program names as its interpreter
 * (PT_INTERP)?  (syms.h SYMS_FRAME_INTERP_ENTRY) */
static int at_interp_entry(struct syms_cache *c, struct proc *p, uint64_t addr, const struct umap *mapped)
{
	const struct umap mine = *mapped, *m = &mine;	/* find_interp may read the maps again */
	const struct elfsyms_seg *sg;
	GElf_Ehdr eh;

	if (!m->dso || !m->dso->elf || find_interp(c, p) != 0 || p->interp_prog == m->dso ||
	    !gelf_getehdr(m->dso->elf, &eh) || !(sg = elfsyms_seg_of(m->dso, m->pgoff)))
		return 0;
	if (p->interp_by_id ? !mappedfile_id_equal(p->interp_id, m->dso->file->id)
			    : strcmp(p->interp_base, m->dso->name) != 0)
		return 0;
	uint64_t vaddr = addr - (m->start - m->pgoff + sg->off - sg->vaddr);
	return vaddr >= eh.e_entry && vaddr < eh.e_entry + SYMS_ENTRY_CODE;
}

int syms_cache_map(struct syms_cache *c, pid_t pid, uint64_t addr, struct syms_map *out)
{
	return syms_cache_map_exec(c, pid, SYMS_EXEC_ANY, addr, out);
}

int syms_cache_map_exec(struct syms_cache *c, pid_t pid, uint64_t exec_id, uint64_t addr, struct syms_map *out)
{
	struct proc *p = get_proc(c, pid, exec_id);
	struct umap *m = find_map(c, p, addr);
	const struct elfsyms_seg *sg;

	if (!m || !m->dso || !m->dso->elf || !(sg = elfsyms_seg_of(m->dso, m->pgoff)))
		return -1;
	out->start = m->start;
	out->end = m->end;
	out->pgoff = m->pgoff;
	out->module = m->name;
	out->file = m->dso->map;
	out->file_size = m->dso->size;
	out->bias = (int64_t)(m->start - m->pgoff + sg->off - sg->vaddr);
	out->eh_frame_hdr = m->dso->eh_frame_hdr;
	out->eh_frame_hdr_size = m->dso->eh_frame_hdr_size;
	out->lo = m->start;
	out->hi = m->end;
	if ((uintptr_t)m < (uintptr_t)p->maps || (uintptr_t)m >= (uintptr_t)(p->maps + p->nmaps))
		return 0;	/* a VMA the BPF walk found (p->walked): no neighbours known */
	for (size_t i = (size_t)(m - p->maps); i-- > 0 && p->maps[i].dso == m->dso;)
		out->lo = p->maps[i].start;
	for (size_t i = (size_t)(m - p->maps) + 1; i < p->nmaps && p->maps[i].dso == m->dso; i++)
		out->hi = p->maps[i].end;
	return 0;
}

int syms_cache_read_exec(struct syms_cache *c, pid_t pid, uint64_t exec_id, uint64_t addr, void *buf,
			 size_t len)
{
	struct syms_map sm;

	if (syms_cache_map_exec(c, pid, exec_id, addr, &sm) < 0) {
		/* .eh_frame may sit in a mapping next to the one holding addr */
		return -1;
	}
	/* run-time address -> vaddr -> file offset through the PT_LOAD segments */
	struct proc *p = get_proc(c, pid, exec_id);
	struct umap *m = find_map(c, p, addr);
	uint64_t vaddr = addr - (uint64_t)sm.bias;
	for (size_t i = 0; i < m->dso->nsegs; i++) {
		const struct elfsyms_seg *s = &m->dso->segs[i];
		if (vaddr >= s->vaddr && vaddr + len <= s->vaddr + s->filesz) {
			uint64_t off = vaddr - s->vaddr + s->off;
			if (off + len > sm.file_size)
				return -1;
			memcpy(buf, sm.file + off, len);
			return 0;
		}
	}
	return -1;
}

void syms_cache_stats(const struct syms_cache *c, struct syms_stats *out)
{
	*out = c->st;
	out->procs_held = out->dsos_held = 0;
	for (size_t b = 0; b < NBUCKETS; b++)
		for (const struct proc *p = c->procs[b]; p; p = p->next)
			out->procs_held++;
	for (const struct elfsyms_file *d = c->elf.list; d; d = d->next)
		out->dsos_held++;
	out->dsos = c->elf.opened;
	out->symbols = c->elf.symbols;
	out->symbol_names_cut = c->elf.names_cut;
}
