/* test_syms_walked — lib/collect/syms.h: an image's addresses that no maps
 * read hold, named from the file VMAs the BPF walk found
 * (syms_cache_add_walked_vma) or another reader of its maps posted
 * (syms_cache_post_maps), and only in that image, only from that file. */
#include <elf.h>
#include <libelf.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "procmaps.h"
#include "syms.h"
#include "symsimage.h"	/* SYMS_POSTED_MAX */
#include "test.h"

/* Our own mapping that holds addr, into out (its path copied to path). */
static int our_mapping(uint64_t addr, struct procmaps_line *out, char *path, size_t size)
{
	struct procmaps pm;
	struct procmaps_line l;
	int found = -1;

	if (procmaps_open(&pm, getpid()) < 0)
		return -1;
	while (found < 0 && procmaps_next(&pm, &l))
		if (addr >= l.start && addr < l.end) {
			*out = l;
			snprintf(path, size, "%s", l.path);
			out->path = path;
			found = 0;
		}
	procmaps_close(&pm);
	return found;
}

static uint32_t kernel_dev(const struct procmaps_line *l)
{
	return (l->dev_major << 20) | l->dev_minor;
}

int main(void)
{
	test_plan(15);
	uint64_t adler = (uint64_t)(uintptr_t)adler32 + 2, elfv = (uint64_t)(uintptr_t)elf_version + 2;
	struct procmaps_line z, e;
	char zpath[4096], epath[4096];
	uint64_t layout[SYMS_LAYOUT_N], bad[SYMS_LAYOUT_N] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	const char *n;

	if (our_mapping(adler, &z, zpath, sizeof(zpath)) < 0 || our_mapping(elfv, &e, epath, sizeof(epath)) < 0) {
		printf("FAIL: libz's and libelf's mappings not found\n");
		return 1;
	}
	/* a process that is sleep: none of our libraries, at other addresses */
	pid_t child = fork();
	if (child == 0) {
		execl("/bin/sleep", "sleep", "20", (char *)NULL);
		_exit(1);
	}
	char exe[64], now[256] = "";
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)child);
	for (int i = 0; i < 500 && !strstr(now, "sleep"); i++) {
		nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
		ssize_t r = readlink(exe, now, sizeof(now) - 1);
		now[r > 0 ? r : 0] = 0;
	}
	nanosleep(&(struct timespec){ 0, 50000000 }, NULL);	/* ld.so done */
	struct syms_cache *c = syms_cache_new(0);
	syms_cache_snapshot(c, getpid());	/* libz and libelf known by their maps lines */
	test_cond("sleep's layout read", procmaps_read_layout(child, layout) == 0);
	test_cond("its image snapshotted", syms_cache_snapshot_exec(c, child, 9, layout) == 0);
	test_cond("an address in no mapping of it: not named",
		  syms_cache_lookup_exec(c, child, 9, adler, NULL, NULL) == NULL);

	/* the walk found libz there */
	test_cond("a VMA the walk found: taken",
		  syms_cache_add_walked_vma(c, child, 9, z.start, z.end, z.pgoff, kernel_dev(&z), z.inode) == 0);
	n = syms_cache_lookup_exec(c, child, 9, adler, NULL, NULL);
	test_cond("named from it", n && strcmp(n, "adler32") == 0);
	/* the unwinder (unwindcut.c) asks for its mapping: the walked one,
	 * read from the walked VMA alone (ASan caught a read of the process's
	 * maps before it) */
	struct syms_map sm;
	test_cond("its mapping found for the unwinder, as walked",
		  syms_cache_map_exec(c, child, 9, adler, &sm) == 0 && sm.lo == z.start && sm.hi == z.end);
	test_cond("not in an older image of the pid", syms_cache_lookup_exec(c, child, 8, adler, NULL, NULL) == NULL);
	syms_cache_add_walked_vma(c, child, 12, z.start, z.end, z.pgoff, kernel_dev(&z), z.inode + 1);
	test_cond("a VMA of another inode names nothing",
		  syms_cache_lookup_exec(c, child, 12, adler, NULL, NULL) == NULL);

	/* the unwind tables' worker read libelf in its maps, then it exited */
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	syms_cache_post_maps(c, child, bad, &e, 1);
	test_cond("posted under another layout: not named", syms_cache_lookup_exec(c, child, 9, elfv, NULL, NULL) == NULL);
	syms_cache_post_maps(c, child, layout, &e, 1);
	n = syms_cache_lookup_exec(c, child, 9, elfv, NULL, NULL);
	test_cond("posted under its layout: named, the process gone", n && strcmp(n, "elf_version") == 0);
	/* libelf found at libz's place too (unmapped, another file mapped
	 * there): which one a frame was in is not known */
	syms_cache_add_walked_vma(c, child, 9, z.start, z.end, e.pgoff, kernel_dev(&e), e.inode);
	test_cond("two files found at one place: no name", syms_cache_lookup_exec(c, child, 9, adler, NULL, NULL) == NULL);
	/* another sleep, whose maps the worker posts before the cache has
	 * read its image's announcement (another thread posts; the news ring
	 * is read between naming slices): they wait for it */
	pid_t second = fork();
	if (second == 0) {
		execl("/bin/sleep", "sleep", "20", (char *)NULL);
		_exit(1);
	}
	uint64_t layout2[SYMS_LAYOUT_N];
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)second);
	now[0] = 0;
	for (int i = 0; i < 500 && !strstr(now, "sleep"); i++) {
		nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
		ssize_t r = readlink(exe, now, sizeof(now) - 1);
		now[r > 0 ? r : 0] = 0;
	}
	nanosleep(&(struct timespec){ 0, 50000000 }, NULL);
	if (procmaps_read_layout(second, layout2) < 0)
		memset(layout2, 0, sizeof(layout2));
	syms_cache_post_maps(c, second, layout2, &e, 1);
	test_cond("posted before its image: not named yet",
		  syms_cache_lookup_exec(c, second, 3, elfv, NULL, NULL) == NULL);
	syms_cache_snapshot_exec(c, second, 3, layout2);
	n = syms_cache_lookup_exec(c, second, 3, elfv, NULL, NULL);
	test_cond("its image announced: named from what was posted", n && strcmp(n, "elf_version") == 0);
	kill(second, SIGKILL);
	waitpid(second, NULL, 0);
	struct syms_stats st;
	syms_cache_stats(c, &st);
	test_cond("counted: named from walked VMAs, one not found, none dropped yet",
		  st.walked_named == 3 && st.walked_vmas_unopened == 1 && st.posted_unmatched == 0);
	/* a storm of processes whose images are never announced: what waits
	 * is bounded, the rest dropped at once and counted (one waits already:
	 * the mapping posted under another layout) */
	static struct procmaps_line many[SYMS_POSTED_MAX];
	for (size_t i = 0; i < SYMS_POSTED_MAX; i++)
		many[i] = e;
	syms_cache_post_maps(c, 4242, bad, many, SYMS_POSTED_MAX);
	syms_cache_lookup_exec(c, second, 3, adler, NULL, NULL);	/* a miss takes them in: they wait */
	syms_cache_post_maps(c, 4242, bad, many, 5);
	syms_cache_lookup_exec(c, second, 3, adler, NULL, NULL);
	syms_cache_stats(c, &st);
	test_cond("waiting mappings bounded (SYMS_POSTED_MAX): the 6 past it dropped at once, counted",
		  st.posted_unmatched == 6);
	syms_cache_free(c);
	return test_report();
}
