/* test_syms_exec — lib/collect/syms.h across exec: one snapshot per (pid, exec id),
 * checked against the image's layout, kept after the process execs, and no
 * image read from /proc once a newer one is known. */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "syms.h"
#include "test.h"

__attribute__((noinline)) int exec_probe_target(int x)
{
	return x * 3 + 1;
}

/* The layout fields of /proc/PID/stat, as struct pid_note has them. */
static int layout_of(pid_t pid, uint64_t out[SYMS_LAYOUT_N])
{
	static const int field[SYMS_LAYOUT_N] = { 26, 27, 28, 45, 46, 47, 50, 51 };
	char path[64], buf[1024];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "r")))
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	if (!p)
		return -1;
	p += 2;
	for (int fld = 3, i = 0; i < SYMS_LAYOUT_N && *p; fld++) {
		if (fld == field[i])
			out[i++] = strtoull(p, NULL, 10);
		p += strcspn(p, " ");
		p += *p == ' ';
	}
	return 0;
}

int main(void)
{
	test_plan(14);
	int go[2];
	uint64_t mine[SYMS_LAYOUT_N], bad[SYMS_LAYOUT_N] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	uint64_t addr = (uint64_t)(uintptr_t)exec_probe_target + 2;
	char exe0[256] = "", exe[256];
	const char *n;

	if (pipe(go) < 0)
		return 1;
	pid_t child = fork();
	if (child == 0) {
		char c;
		close(go[1]);
		if (read(go[0], &c, 1) == 1)
			execl("/bin/sleep", "sleep", "20", (char *)NULL);
		_exit(0);
	}
	close(go[0]);
	struct syms_cache *c = syms_cache_new(0);

	/* image 7 of the child (a fork of us: our files at our addresses) */
	test_cond("layout read", layout_of(child, mine) == 0);
	test_cond("wrong layout: not kept, try again", syms_cache_snapshot_exec(c, child, 7, bad) == 1);
	test_cond("wrong layout: no names", syms_cache_lookup_exec(c, child, 7, addr, NULL, NULL) == NULL);
	test_cond("right layout: snapshot", syms_cache_snapshot_exec(c, child, 7, mine) == 0);
	n = syms_cache_lookup_exec(c, child, 7, addr, NULL, NULL);
	test_cond("named in its image", n && strcmp(n, "exec_probe_target") == 0);

	/* the child execs sleep: same pid, other files */
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)child);
	readlink(exe, exe0, sizeof(exe0) - 1);
	if (write(go[1], "x", 1) != 1)
		return 1;
	for (int i = 0; i < 500; i++) {
		char now[256] = "";
		uint64_t l[SYMS_LAYOUT_N];
		readlink(exe, now, sizeof(now) - 1);
		/* exec'ed, and its new layout complete (ld.so runs after) */
		if (strcmp(now, exe0) != 0 && layout_of(child, l) == 0 && l[7] != 0 && memcmp(l, mine, sizeof(l)))
			break;
		nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
	}
	test_cond("snapshot done before is kept", syms_cache_snapshot_exec(c, child, 7, mine) == 0);
	n = syms_cache_lookup_exec(c, child, 7, addr, NULL, NULL);
	test_cond("old image still named from its own files", n && strcmp(n, "exec_probe_target") == 0);
	test_cond("an image that is not there any more: not snapshotted",
		  syms_cache_snapshot_exec(c, child, 8, mine) == 1);

	/* image 9, seen first now: read from /proc, so 7 and 8 are never again */
	uint64_t l9[SYMS_LAYOUT_N];
	layout_of(child, l9);
	test_cond("new image snapshotted", syms_cache_snapshot_exec(c, child, 9, l9) == 0);
	test_cond("new image: sleep's files, not ours", syms_cache_lookup_exec(c, child, 9, addr, NULL, NULL) == NULL);
	test_cond("older image not snapshotted once a newer is known",
		  syms_cache_snapshot_exec(c, child, 8, l9) == -1);
	n = syms_cache_lookup_exec(c, child, 7, addr, NULL, NULL);
	test_cond("old image kept after a newer one", n && strcmp(n, "exec_probe_target") == 0);
	n = syms_cache_lookup_exec(c, child, 6, addr, NULL, NULL);
	test_cond("an older image seen first now is not read from /proc", n == NULL);

	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	test_cond("exited: the snapshot still names", (n = syms_cache_lookup_exec(c, child, 7, addr, NULL, NULL)) &&
		  strcmp(n, "exec_probe_target") == 0);
	syms_cache_free(c);
	return test_report();
}
