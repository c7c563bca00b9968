/* symswalked.c — the file VMAs an image of the symbolizer (syms.c) learns
 * from others than its maps: those the unwinder's BPF walk found
 * (syms_cache_add_walked_vma) and those another thread read in its maps
 * (syms_cache_post_maps), each with its file found by the kernel's
 * identity, never guessed; and the lookup in them. */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfsyms.h"
#include "mappedfiles.h"
#include "procmaps.h"
#include "syms.h"
#include "symsimage.h"
#include "util.h"

/* Do two walked VMAs map the same file the same way (offset at start)? */
static int same_file_place(const struct procmaps_line *a, const struct procmaps_line *b)
{
	return a->dev_major == b->dev_major && a->dev_minor == b->dev_minor && a->inode == b->inode &&
	       a->start - a->pgoff == b->start - b->pgoff;
}

/* The dso of a file VMA the BPF walk found (l: its range, the device and
 * inode of its file, as the kernel's maps show them), by that identity:
 * one a maps line of any process named (_known: only that), else the very
 * file mapped there, through map_files while the process lives, and only
 * if it is that inode.  NULL: not found (the process is gone, and no
 * other seen maps the file). */
static struct elfsyms_file *walked_dso_known(struct syms_cache *c, const struct procmaps_line *l)
{
	struct mappedfile *f = mappedfiles_find(c->elf.files, mappedfile_id_of_line(l));

	return f ? elfsyms_of_file(&c->elf, f, f->path, "") : NULL;
}

static struct elfsyms_file *walked_dso(struct syms_cache *c, pid_t pid, const struct procmaps_line *l)
{
	char mf[128], path[4096], root[64];
	struct stat st;
	struct elfsyms_file *d = walked_dso_known(c, l);

	if (d)
		return d;
	procmaps_map_files_path(pid, l, mf, sizeof(mf));
	ssize_t n = readlink(mf, path, sizeof(path) - 1);
	int fd = n > 0 ? procmaps_open_safe(AT_FDCWD, mf, &st) : -1;
	if (fd < 0 && l->path[0] == '/') {
		/* gone: by the name its maps gave another reader (the root it
		 * had before it) */
		fd = procmaps_open_safe(AT_FDCWD, l->path, &st);
		n = (ssize_t)strlen(l->path);
		if (fd >= 0 && (size_t)n < sizeof(path))
			memcpy(path, l->path, (size_t)n);
		else
			n = 0;
	}
	if (fd < 0 || n <= 0) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	path[n] = 0;
	if (!mappedfile_id_equal(mappedfile_id_of_stat(&st), mappedfile_id_of_line(l))) {
		close(fd);	/* not the file the walk saw (the pid is another process's now) */
		return NULL;
	}
	struct mappedfile *f = mappedfiles_of_fd(c->elf.files, fd, &st, path);
	close(fd);
	procmaps_root(pid, root, sizeof(root));
	return elfsyms_of_file(&c->elf, f, path, root);
}

/* Add file mapping l (its path: a hint, or "") to the walked VMAs of p
 * (NULL: make image exec_id of pid, whose maps are read when first asked
 * for): 0, or -1 if its file is not found yet. */
static int add_walked(struct syms_cache *c, struct proc *p, pid_t pid, uint64_t exec_id, const struct procmaps_line *l)
{
	if (p)
		for (size_t i = 0; i < p->nwalked; i++)
			if (p->walked[i].m.start == l->start && p->walked[i].m.end == l->end &&
			    same_file_place(&p->walked[i].id, l))
				return p->walked[i].m.dso ? 0 : -1;	/* told again (it left the kernel's LRU) */
	struct elfsyms_file *d = walked_dso(c, pid, l);
	if (!p) {
		p = syms_new_image(c, pid, exec_id);
		p->unread = 1;
	}
	/* kept without its file too: another process that maps it, seen
	 * before the frames are named, names them */
	p->walked = marple_grow(p->walked, &p->walked_cap, p->nwalked + 1, sizeof(*p->walked));
	p->walked[p->nwalked] = (struct walked_vma){
		.m = { .start = l->start, .end = l->end, .pgoff = l->pgoff, .dso = d, .name = d ? d->name : NULL,
		       .walked = 1 },
		.id = *l };
	p->walked[p->nwalked++].id.path = "";
	return d ? 0 : -1;
}

int syms_cache_add_walked_vma(struct syms_cache *c, pid_t pid, uint64_t exec_id, uint64_t start, uint64_t end,
			      uint64_t pgoff, uint32_t kdev, uint64_t ino)
{
	struct procmaps_line l = { .start = start, .end = end, .pgoff = pgoff, .perms = "r-xp",
				   .dev_major = kdev >> 20, .dev_minor = kdev & 0xfffff, .inode = ino, .path = "" };

	c->st.walked_vmas++;
	if (exec_id == SYMS_EXEC_ANY || start >= end || ino == 0)
		return -1;
	return add_walked(c, syms_find_image(c, pid, exec_id), pid, exec_id, &l);
}

void syms_cache_post_maps(struct syms_cache *c, pid_t pid, const uint64_t layout[SYMS_LAYOUT_N],
			  const struct procmaps_line *lines, size_t n)
{
	char root[64];

	procmaps_root(pid, root, sizeof(root));
	pthread_mutex_lock(&c->post_lock);
	for (size_t i = 0; i < n; i++) {
		/* bounded, should the cache's thread not take them in for long */
		if (!lines[i].inode || lines[i].deleted || !procmaps_is_file(&lines[i]) ||
		    c->nposted >= SYMS_POSTED_MAX)
			continue;
		c->posted = marple_grow(c->posted, &c->posted_cap, c->nposted + 1, sizeof(*c->posted));
		struct posted_map *m = &c->posted[c->nposted++];
		m->pid = pid;
		memcpy(m->layout, layout, sizeof(m->layout));
		m->posted_ns = marple_now_monotonic_ns();
		m->l = lines[i];
		size_t len = strlen(root) + strlen(lines[i].path) + 1;
		char *path = marple_malloc(len);
		snprintf(path, len, "%s%s", root, lines[i].path);
		m->l.path = path;
	}
	pthread_mutex_unlock(&c->post_lock);
}

/* The image of pid with that layout, or NULL */
static struct proc *image_with_layout(struct syms_cache *c, pid_t pid, const uint64_t layout[SYMS_LAYOUT_N])
{
	for (struct proc *p = c->procs[(uint32_t)pid % NBUCKETS]; p; p = p->next)
		if (p->pid == pid && p->has_layout && memcmp(p->layout, layout, sizeof(p->layout)) == 0)
			return p;
	return NULL;
}

/* Posted mapping m to its image: 1 when it had one, or it waited too long
 * (dropped, counted); 0 while it may still come.  m's path is freed when
 * it is done with. */
static int place_posted(struct syms_cache *c, struct posted_map *m, uint64_t now)
{
	struct proc *p = image_with_layout(c, m->pid, m->layout);

	if (p)
		add_walked(c, p, p->pid, p->exec_id, &m->l);
	else if (now - m->posted_ns < SYMS_POSTED_WAIT_NS)
		return 0;
	else
		c->st.posted_unmatched++;
	free((char *)m->l.path);
	return 1;
}

/* The posted mappings, to the images that had that layout; those whose
 * image is not announced yet wait (c->waiting, at most SYMS_POSTED_MAX:
 * past that dropped, counted), looked at again when an image is announced,
 * or a second on, when the oldest may have waited too long. */
void syms_take_posted(struct syms_cache *c)
{
	pthread_mutex_lock(&c->post_lock);
	struct posted_map *posted = c->posted;
	size_t n = c->nposted;
	c->posted = NULL;
	c->nposted = c->posted_cap = 0;
	pthread_mutex_unlock(&c->post_lock);
	if (!n && !c->nwaiting)
		return;
	uint64_t now = marple_now_monotonic_ns();
	if (c->nwaiting && (c->announced != c->waiting_announced || now - c->waiting_scan_ns >= 1000000000ull)) {
		size_t w = 0;
		for (size_t i = 0; i < c->nwaiting; i++)
			if (!place_posted(c, &c->waiting[i], now))
				c->waiting[w++] = c->waiting[i];
		c->nwaiting = w;
		c->waiting_announced = c->announced;
		c->waiting_scan_ns = now;
	}
	for (size_t i = 0; i < n; i++) {
		if (place_posted(c, &posted[i], now))
			continue;
		if (c->nwaiting >= SYMS_POSTED_MAX) {	/* a storm of processes: bounded, counted */
			c->st.posted_unmatched++;
			free((char *)posted[i].l.path);
			continue;
		}
		c->waiting = marple_grow(c->waiting, &c->waiting_cap, c->nwaiting + 1, sizeof(*c->waiting));
		c->waiting[c->nwaiting++] = posted[i];
	}
	free(posted);
}

/* The walked VMA of p holding addr (syms_cache_add_walked_vma, or posted),
 * if its file is known, or NULL */
struct umap *syms_walked_map(struct syms_cache *c, struct proc *p, uint64_t addr)
{
	syms_take_posted(c);
	struct walked_vma *found = NULL;
	for (size_t i = 0; i < p->nwalked; i++) {
		struct walked_vma *w = &p->walked[i];
		if (addr < w->m.start || addr >= w->m.end)
			continue;
		if (found && !same_file_place(&found->id, &w->id))
			return NULL;	/* remapped with another file or offset between them: no guess */
		found = w;
	}
	if (!found)
		return NULL;
	if (!found->m.dso && (found->m.dso = walked_dso_known(c, &found->id)))
		found->m.name = found->m.dso->name;
	if (found->m.dso)
		return &found->m;
	if (!found->missed)
		c->st.walked_vmas_unopened++;
	found->missed = 1;
	return NULL;
}

void syms_posted_free(struct syms_cache *c)
{
	for (size_t i = 0; i < c->nposted; i++)
		free((char *)c->posted[i].l.path);
	free(c->posted);
	for (size_t i = 0; i < c->nwaiting; i++)
		free((char *)c->waiting[i].l.path);
	free(c->waiting);
	pthread_mutex_destroy(&c->post_lock);
}
