/* test_procmaps — lib/collect/procmaps: the one /proc/PID/maps parser against
 * hostile lines (spaces and "\012" in paths, " (deleted)", offsets at and past
 * 64 bits, cut lines), our own maps read whole, a deleted and a newline-named
 * mapped file opened through map_files, and the build-id reader. */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mappedfiles.h"
#include "procmaps.h"
#include "test.h"

static int parse(const char *text, struct procmaps_line *l, char *buf, size_t size)
{
	snprintf(buf, size, "%s", text);
	return procmaps_parse(buf, l);
}

/* The line of our maps that maps addr into l (its path copied to path). */
static int own_line(const void *addr, struct procmaps_line *l, char *path, size_t size)
{
	struct procmaps pm;
	int found = 0;

	if (procmaps_open(&pm, getpid()) < 0)
		return 0;
	while (!found && procmaps_next(&pm, l))
		if ((uintptr_t)addr >= l->start && (uintptr_t)addr < l->end) {
			snprintf(path, size, "%s", l->path);
			l->path = path;
			found = 1;
		}
	procmaps_close(&pm);
	return found;
}

/* A file of text made, mapped and (unlink) removed; 1 if fd's file reads text. */
static int reads(int fd, const char *text)
{
	char buf[64] = { 0 };
	ssize_t n = fd >= 0 ? pread(fd, buf, sizeof(buf) - 1, 0) : -1;
	if (fd >= 0)
		close(fd);
	return n == (ssize_t)strlen(text) && memcmp(buf, text, (size_t)n) == 0;
}

static void *map_file(const char *name, const char *text)
{
	int fd = open(name, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		return NULL;
	void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

int main(void)
{
	struct procmaps_line l;
	char buf[8192], path[8192];

	test_plan(33);

	test_cond("a library's line",
		  parse("7f1c2a428000-7f1c2a5bd000 r-xp 00028000 fd:01 1835023                    "
			"/usr/lib/x86_64-linux-gnu/libc.so.6\n", &l, buf, sizeof(buf)) == 0 &&
			  l.start == 0x7f1c2a428000 && l.end == 0x7f1c2a5bd000 && l.pgoff == 0x28000 &&
			  strcmp(l.perms, "r-xp") == 0 && procmaps_is_exec(&l) && l.dev_major == 0xfd &&
			  l.dev_minor == 1 && l.inode == 1835023 &&
			  strcmp(l.path, "/usr/lib/x86_64-linux-gnu/libc.so.6") == 0 && !l.deleted);
	test_cond("the kernel's s_dev and stat's st_dev of it",
		  mappedfile_id_kernel_dev(mappedfile_id_of_line(&l)) == (0xfdu << 20 | 1) &&
			  mappedfile_id_of_line(&l).dev == makedev(0xfd, 1));
	test_cond("anonymous memory: no path, the line's trailing space",
		  parse("7ffd1000-7ffd2000 rw-p 00000000 00:00 0 \n", &l, buf, sizeof(buf)) == 0 &&
			  l.path[0] == 0 && !procmaps_is_file(&l) && !procmaps_is_exec(&l));
	test_cond("anonymous memory without the trailing space",
		  parse("7ffd1000-7ffd2000 rwxp 00000000 00:00 0", &l, buf, sizeof(buf)) == 0 && l.path[0] == 0 &&
			  procmaps_is_exec(&l));
	test_cond("[vdso] and a named anonymous mapping",
		  parse("7ffd3000-7ffd5000 r-xp 00000000 00:00 0                          [vdso]", &l, buf,
			sizeof(buf)) == 0 && strcmp(l.path, "[vdso]") == 0 &&
			  parse("7ffd3000-7ffd5000 rw-p 00000000 00:00 0   [anon:glibc: malloc]", &l, buf,
				sizeof(buf)) == 0 && strcmp(l.path, "[anon:glibc: malloc]") == 0);
	test_cond("spaces in a path are the path's",
		  parse("400000-401000 r-xp 00000000 08:01 42     /tmp/my dir/a  b.so", &l, buf, sizeof(buf)) == 0 &&
			  strcmp(l.path, "/tmp/my dir/a  b.so") == 0);
	test_cond("\" (deleted)\" is taken off and said",
		  parse("400000-401000 r-xp 00000000 08:01 42 /tmp/prog (deleted)\n", &l, buf, sizeof(buf)) == 0 &&
			  strcmp(l.path, "/tmp/prog") == 0 && l.deleted);
	test_cond("\" (deleted)\" only at the end",
		  parse("400000-401000 r-xp 00000000 08:01 42 /tmp/a (deleted)/b", &l, buf, sizeof(buf)) == 0 &&
			  strcmp(l.path, "/tmp/a (deleted)/b") == 0 && !l.deleted);
	test_cond("a memfd's \" (deleted)\"",
		  parse("400000-401000 r-xs 00000000 00:01 7 /memfd:jit (deleted)", &l, buf, sizeof(buf)) == 0 &&
			  strcmp(l.path, "/memfd:jit") == 0 && l.deleted);
	test_cond("a newline shown as \\012 stays as shown: no line of its own",
		  parse("400000-401000 r-xp 00000000 08:01 42 /tmp/a\\012400000-401000 r-xp", &l, buf,
			sizeof(buf)) == 0 && strcmp(l.path, "/tmp/a\\012400000-401000 r-xp") == 0 && l.start == 0x400000);
	test_cond("the highest offset, 16 hex digits",
		  parse("ffffffffff600000-ffffffffff601000 --xp ffffffffffff0000 00:00 0   [vsyscall]", &l, buf,
			sizeof(buf)) == 0 && l.start == 0xffffffffff600000ull && l.pgoff == 0xffffffffffff0000ull);
	test_cond("an offset past 64 bits is no line (not ULLONG_MAX)",
		  parse("400000-401000 r-xp 1ffffffffffff0000 08:01 42 /a", &l, buf, sizeof(buf)) < 0);
	test_cond("an address past 64 bits is no line",
		  parse("10000000000000000-10000000000001000 r-xp 0 08:01 42 /a", &l, buf, sizeof(buf)) < 0);
	test_cond("an inode past 64 bits is no line",
		  parse("400000-401000 r-xp 0 08:01 18446744073709551616 /a", &l, buf, sizeof(buf)) < 0);
	test_cond("an inode of 2^64 - 1 is",
		  parse("400000-401000 r-xp 0 08:01 18446744073709551615 /a", &l, buf, sizeof(buf)) == 0 &&
			  l.inode == UINT64_MAX);
	test_cond("an end before its start is no line",
		  parse("401000-400000 r-xp 0 08:01 42 /a", &l, buf, sizeof(buf)) < 0);
	static const char *const cut[] = {
		"",
		"\n",
		"400000",
		"400000-",
		"400000-401000",
		"400000-401000 r-x",
		"400000-401000 r-xp",
		"400000-401000 r-xp 00000000 08",
		"400000-401000 r-xp 00000000 08:01",
		"400000-401000 r-xp 00000000 08:01 ",
		"400000-401000 r-xp 00000000 08:01 42",	/* a file's line without its file */
		"400000-401000 r-xp 00000000 08:01 42   \n",
		"400000-401000 rzxp 00000000 08:01 42 /a",
		"400000-401000 r-xp 0000000g 08:01 42 /a",
		"400000-401000 r-xp 00000000 08:01 42x /a",
		"garbage in place of a line",
	};
	int rejected = 0;
	for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++)
		rejected += parse(cut[i], &l, buf, sizeof(buf)) < 0;
	snprintf(path, sizeof(path), "all %zu cut or malformed lines are no lines (%d)", sizeof(cut) / sizeof(cut[0]),
		 rejected);
	test_cond(path, rejected == (int)(sizeof(cut) / sizeof(cut[0])));
	/* a path of 4000 bytes: one line, whatever its length */
	char *longline = malloc(5000);
	int n = snprintf(longline, 5000, "400000-401000 r-xp 00000000 08:01 42 /");
	memset(longline + n, 'x', 4000);
	longline[n + 4000] = 0;
	test_cond("a 4000-byte path", procmaps_parse(longline, &l) == 0 && strlen(l.path) == 4001);
	free(longline);

	/* our own maps, read whole */
	struct procmaps pm;
	int lines = 0, self_exec = 0;
	char exe[4096] = { 0 };
	test_cond("our maps open", procmaps_open(&pm, getpid()) == 0);
	ssize_t el = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	while (procmaps_next(&pm, &l)) {
		lines++;
		self_exec |= procmaps_is_exec(&l) && el > 0 && strcmp(l.path, exe) == 0;
	}
	procmaps_close(&pm);
	test_cond("our maps: lines, our own code among them", lines > 5 && self_exec);
	test_cond("a process that is not there: no maps", procmaps_open(&pm, 0) < 0 && !procmaps_next(&pm, &l));
	procmaps_root(getpid(), buf, sizeof(buf));
	test_cond("our root is no prefix", buf[0] == 0);

	/* a mapped file deleted since: its line says so, map_files opens it */
	char dir[] = "/tmp/test_procmaps.XXXXXX";
	test_cond("a directory", mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/gone lib.so", dir);
	void *gone = map_file(path, "the deleted file");
	unlink(path);
	char seen[8192];
	test_cond("a deleted mapped file: its line", gone && own_line(gone, &l, seen, sizeof(seen)) && l.deleted &&
							    strcmp(l.path, path) == 0);
	test_cond("a deleted mapped file opens by map_files", reads(procmaps_open_file(getpid(), &l), "the deleted file"));
	procmaps_map_files_path(getpid(), &l, buf, sizeof(buf));
	snprintf(path, sizeof(path), "/proc/%d/map_files/", (int)getpid());
	test_cond("map_files names the range", strncmp(buf, path, strlen(path)) == 0 && strchr(buf + strlen(path), '-'));
	/* a name with a newline in it: shown as \012, and opened */
	snprintf(path, sizeof(path), "%s/two\nlines.so", dir);
	void *nl = map_file(path, "newline");
	snprintf(buf, sizeof(buf), "%s/two\\012lines.so", dir);
	test_cond("a newline in a name is \\012 in its line",
		  nl && own_line(nl, &l, seen, sizeof(seen)) && !l.deleted && strcmp(l.path, buf) == 0);
	test_cond("a file with a newline in its name opens", reads(procmaps_open_file(getpid(), &l), "newline"));
	/* without map_files (not ours to read) the path is tried, \012 both ways */
	l.start = l.end = 0;
	test_cond("... by its name, when map_files does not have it",
		  reads(procmaps_open_file(getpid(), &l), "newline"));
	l.deleted = 1;
	test_cond("a deleted file is never opened by a name another file may have now",
		  procmaps_open_file(getpid(), &l) < 0);
	unlink(path);
	munmap(gone, 4096);
	munmap(nl, 4096);
	rmdir(dir);

	/* build-ids: the one reader */
	char id[2 * 64 + 1] = { 0 };
	elf_version(EV_CURRENT);
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	int rc = procmaps_build_id(elf, id, sizeof(id));
	test_cond("our own build-id, in hex", rc == 0 && strlen(id) >= 16 && strspn(id, "0123456789abcdef") == strlen(id));
	test_cond("a buffer too small for it: none", procmaps_build_id(elf, id, 9) < 0);
	elf_end(elf);
	close(fd);
	static char text[] = "no ELF file at all";
	elf = elf_memory(text, sizeof(text));
	test_cond("no ELF, no build-id", procmaps_build_id(elf, id, sizeof(id)) < 0 && procmaps_build_id(NULL, id, sizeof(id)) < 0);
	elf_end(elf);
	return test_report();
}
