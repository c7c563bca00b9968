/* test_syms_exit — lib/syms keeps the snapshot of a process that exits during
 * a capture, also when it is a zombie (exited, not yet reaped: its
 * /proc/PID/maps opens but is empty) and a lookup misses more than a second
 * after the snapshot, which makes the cache look at the maps again; and
 * syms_cache_forget_exited (continuous mode) lets go of it once reaped; a
 * long capture's two steps (mark, then forget) forget only the processes
 * gone at the mark, and keep a JIT's (anonymous executable memory); a file
 * that is not ELF is not kept mapped; the pages of a mapped file read for
 * a lookup are let go at the next forget turn. */
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "syms.h"
#include "test.h"
#include "util.h"

__attribute__((noinline)) int exit_target(int x) { return x * 5 + 3; }

static uint64_t addr_of(void *f, int off)
{
	return (uint64_t)(uintptr_t)f + (uint64_t)off;
}

/* 1 once pid is a zombie (state Z in /proc/PID/stat), within 5 s */
static int wait_zombie(pid_t pid)
{
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (int i = 0; i < 500; i++) {
		FILE *f = fopen(path, "r");
		size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
		if (f)
			fclose(f);
		buf[n] = 0;
		char *rp = strrchr(buf, ')');
		if (rp && rp[1] == ' ' && rp[2] == 'Z')
			return 1;
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* one child, snapshotted, then killed; reaped or left a zombie */
static void exited_child(int reap)
{
	const char *what = reap ? "reaped" : "zombie";
	char name[128];
	const char *n, *mod = NULL;
	pid_t child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	struct syms_cache *c = syms_cache_new(SYMS_DEMANGLE);
	snprintf(name, sizeof(name), "%s: snapshot", what);
	test_cond(name, syms_cache_snapshot(c, child) == 0);
	kill(child, SIGKILL);
	if (reap)
		waitpid(child, NULL, 0);
	else
		wait_zombie(child);
	/* the cache looks at the maps again on a miss only after a second */
	struct timespec ts = { 1, 100 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	n = syms_cache_lookup(c, child, 16, &mod, NULL);
	snprintf(name, sizeof(name), "%s: an address in no mapping misses", what);
	test_cond(name, n == NULL && mod == NULL);
	n = syms_cache_lookup(c, child, addr_of((void *)exit_target, 2), &mod, NULL);
	snprintf(name, sizeof(name), "%s: still named after a miss", what);
	test_cond(name, n && strcmp(n, "exit_target") == 0 && mod && strcmp(mod, "test_syms_exit") == 0);
	n = syms_cache_lookup(c, child, addr_of((void *)getppid, 1), NULL, NULL);
	snprintf(name, sizeof(name), "%s: its libc still named", what);
	test_cond(name, n && strstr(n, "getppid"));
	snprintf(name, sizeof(name), "%s: snapshot kept", what);
	test_cond(name, syms_cache_snapshot(c, child) == 0);
	/* continuous mode forgets the exited after each section; a zombie is
	 * not gone yet, ourselves never */
	syms_cache_snapshot(c, getpid());
	size_t forgotten = syms_cache_forget_exited(c);
	snprintf(name, sizeof(name), "%s: forget_exited forgets it %s (%zu)", what, reap ? "once reaped" : "not",
		 forgotten);
	test_cond(name, forgotten == (size_t)reap);
	syms_cache_free(c);
	if (!reap)
		waitpid(child, NULL, 0);
}

/* a child that pauses, with anonymous executable memory if jit */
static pid_t paused_child(int jit)
{
	pid_t child = fork();
	if (child == 0) {
		if (jit)
			mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		pause();
		_exit(0);
	}
	/* the mapping made before the snapshot */
	struct timespec ts = { 0, 200 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	return child;
}

/* mark, then forget: what exited after the mark stays until the next */
static void mark_then_forget(void)
{
	pid_t plain = paused_child(0), jit = paused_child(1);
	struct syms_cache *c = syms_cache_new(SYMS_DEMANGLE);

	test_cond("mark/forget: snapshots", syms_cache_snapshot(c, plain) == 0 && syms_cache_snapshot(c, jit) == 0);
	syms_cache_mark_exited(c);
	kill(plain, SIGKILL);
	kill(jit, SIGKILL);
	waitpid(plain, NULL, 0);
	waitpid(jit, NULL, 0);
	size_t n = syms_cache_forget_marked(c, 1);
	test_cond("mark/forget: gone after the mark: kept", n == 0);
	syms_cache_mark_exited(c);
	n = syms_cache_forget_marked(c, 1);
	test_cond("mark/forget: gone before the mark: forgotten, the JIT's kept", n == 1);
	const char *mod = NULL;
	syms_cache_lookup(c, jit, addr_of((void *)exit_target, 2), &mod, NULL);
	test_cond("mark/forget: the JIT's maps still known", mod && strcmp(mod, "test_syms_exit") == 0);
	syms_cache_mark_exited(c);
	n = syms_cache_forget_marked(c, 0);
	test_cond("mark/forget: without keep_jit, the JIT's forgotten too", n == 1);
	/* no process maps the test's files now: they were let go, and are
	 * read again for the next process */
	pid_t again = paused_child(0);
	const char *name = syms_cache_lookup(c, again, addr_of((void *)exit_target, 2), &mod, NULL);
	test_cond("mark/forget: files forgotten are read again", name && strcmp(name, "exit_target") == 0);
	kill(again, SIGKILL);
	waitpid(again, NULL, 0);
	syms_cache_free(c);
}

/* Resident kB of this process's mappings of path that span the whole file
 * from offset 0 (the cache's own: the loader maps segments); -1 if none. */
static long whole_file_rss_kb(const char *path, size_t file_size)
{
	char line[1024], name[512];
	unsigned long start = 0, end = 0, off = 0;
	long kb = -1;
	int ours = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	while (f && fgets(line, sizeof(line), f)) {
		long rss;
		name[0] = 0;
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %511s", &start, &end, &off, name) >= 3 && strchr(line, '-') <
		    strchr(line, ' ')) {
			ours = off == 0 && strcmp(name, path) == 0 && end - start >= file_size &&
			       end - start < file_size + 4096;
			continue;
		}
		if (ours && sscanf(line, "Rss: %ld kB", &rss) == 1)
			kb = (kb < 0 ? 0 : kb) + rss;
	}
	if (f)
		fclose(f);
	return kb;
}

/* The pages of a mapped file read for a lookup are let go at the next
 * forget turn, though a live process maps the file; names stay valid. */
static void file_pages_released(void)
{
	char exe[512];
	struct stat st;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	pid_t child = paused_child(0);
	struct syms_cache *c = syms_cache_new(SYMS_DEMANGLE);
	const char *mod = NULL;
	const char *name = syms_cache_lookup(c, child, addr_of((void *)exit_target, 2), &mod, NULL);
	int have = n > 0 && stat(exe, &st) == 0;
	long before = have ? whole_file_rss_kb(exe, (size_t)st.st_size) : -1;
	test_cond("file pages: the lookup read the mapped file", name && strcmp(name, "exit_target") == 0 &&
		  before > 0);
	syms_cache_mark_exited(c);
	syms_cache_forget_marked(c, 0);
	long after = have ? whole_file_rss_kb(exe, (size_t)st.st_size) : -1;
	struct syms_stats ss;
	syms_cache_stats(c, &ss);
	test_cond("file pages: let go at the forget turn, the process alive", after == 0 && ss.file_releases >= 1);
	if (after != 0)
		fprintf(stderr, "# resident of %s: %ld kB, then %ld kB\n", exe, before, after);
	name = syms_cache_lookup(c, child, addr_of((void *)exit_target, 2), &mod, NULL);
	test_cond("file pages: read again after", name && strcmp(name, "exit_target") == 0 &&
		  whole_file_rss_kb(exe, (size_t)st.st_size) > 0);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	syms_cache_free(c);
}

/* A file that is not ELF (a memfd region of a browser, a data file) is
 * named, and not kept mapped here. */
static void not_elf(void)
{
	char path[] = "/tmp/marple-notelf-XXXXXX", line[512];
	int fd = mkstemp(path);
	static char zeros[65536];
	int ok = fd >= 0 && write(fd, zeros, sizeof(zeros)) == (ssize_t)sizeof(zeros);
	void *m = ok ? mmap(NULL, sizeof(zeros), PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
	pid_t child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	struct syms_cache *c = syms_cache_new(0);
	const char *mod = NULL;
	syms_cache_lookup(c, child, (uint64_t)(uintptr_t)m + 100, &mod, NULL);
	test_cond("not ELF: its mapping named", m != MAP_FAILED && mod && strncmp(mod, "marple-notelf-", 14) == 0);
	int mapped = 0;
	FILE *f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof(line), f))
		mapped += strstr(line, path) != NULL;
	if (f)
		fclose(f);
	test_cond("not ELF: not kept mapped by the cache", mapped == 1);	/* ours, the test's own */
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	syms_cache_free(c);
	unlink(path);
	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	test_plan(23);
	marple_init(argc, argv);
	exited_child(0);
	exited_child(1);
	mark_then_forget();
	not_elf();
	file_pages_released();
	return test_report();
}
