/* test_jitframes — JIT code named after the fact
 * (lib/collect/syms.c, jitframes.c, stackframes.c): a perf map written after
 * the stacks were named (as the JVM writes its own at exit), also once its
 * process has exited; where its lines overlap, the newest wins; a map in a
 * process's own root (a container's /tmp), under its pid in its own pid
 * namespace. */
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hashtab.h"
#include "stackframes.h"
#include "syms.h"
#include "test.h"
#include "tpstack.h"

/* A child with an anonymous executable mapping ("JIT code"), in root (NULL:
 * ours); *addr is where the mapping is. */
static pid_t jit_child(const char *root, uint64_t *addr)
{
	int pfd[2];

	if (pipe(pfd) < 0)
		exit(1);
	pid_t child = fork();
	if (child == 0) {
		void *jit = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		uint64_t a = (uint64_t)(uintptr_t)jit;
		if (root && (chroot(root) < 0 || chdir("/") < 0))
			a = 0;
		if (write(pfd[1], &a, sizeof(a)) != sizeof(a))
			_exit(1);
		pause();
		_exit(0);
	}
	if (read(pfd[0], addr, sizeof(*addr)) != sizeof(*addr))
		exit(1);
	close(pfd[0]);
	close(pfd[1]);
	return child;
}

static void end_child(pid_t child)
{
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}

static void write_map(const char *path, const char *lines)
{
	FILE *f = fopen(path, "w");
	if (!f)
		exit(1);
	fputs(lines, f);
	fclose(f);
}

/* The records stackframes_write_table writes for table t of sf. */
static char *written(struct stackframes *sf, struct hashtab *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	stackframes_write_table(sf, t, f);
	fclose(f);
	return buf;
}

/* One stack of pid, its leaf at addr, collected into t. */
static void collect_one(struct stackframes *sf, struct hashtab *t, pid_t pid, uint64_t addr)
{
	stackframes_begin(sf, "jit");
	stackframes_user_ips(sf, pid, &addr, 1);
	stackframes_collect(sf, t, 1);
}

static void after_the_fact(int exit_first)
{
	uint64_t addr;
	char path[64], lines[128];
	pid_t child = jit_child(NULL, &addr);
	struct syms_cache *c = syms_cache_new(0);
	struct stackframes *sf = stackframes_new(c, NULL, -1, 0);
	struct hashtab *t = hashtab_new();

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)child);
	unlink(path);
	collect_one(sf, t, child, addr + 8);	/* named now: no map yet */
	if (exit_first)
		end_child(child);
	snprintf(lines, sizeof(lines), "%llx 40 LHot;::fib\n", (unsigned long long)addr);
	write_map(path, lines);
	char *out = written(sf, t);
	test_cond(exit_first ? "a map written as the process exits names its frames"
			     : "a map written after the stacks were named names them",
		  out && strcmp(out, "1#jit;LHot%3B::fib\n") == 0);
	if (out && strcmp(out, "1#jit;LHot%3B::fib\n") != 0)
		printf("# got: %s", out);
	free(out);
	if (!exit_first)
		end_child(child);
	unlink(path);
	hashtab_free(t);
	stackframes_free(sf);
	syms_cache_free(c);
}

/* Stacks written one at a time (memleak, memevents, diskblockrq) show a
 * name or what stands for none, never the placeholder. */
static void written_at_once(void)
{
	uint64_t addr;
	pid_t child = jit_child(NULL, &addr);
	struct syms_cache *c = syms_cache_new(0);
	struct stackframes *sf = stackframes_new(c, NULL, -1, 0);
	struct hashtab *t = hashtab_new();
	char *buf = NULL;
	size_t len = 0;

	collect_one(sf, t, child, addr + 8);	/* a placeholder made */
	FILE *f = open_memstream(&buf, &len);
	stackframes_begin(sf, "jit");
	stackframes_user_ips(sf, child, &(uint64_t){ addr + 8 }, 1);
	tpstack_write(sf, f, 1);
	fclose(f);
	test_cond("a stack written at once shows no placeholder", buf && strcmp(buf, "1#jit;[unknown]\n") == 0);
	if (buf && strcmp(buf, "1#jit;[unknown]\n") != 0)
		printf("# got: %s", buf);
	free(buf);
	end_child(child);
	hashtab_free(t);
	stackframes_free(sf);
	syms_cache_free(c);
}

static const char *lookup(pid_t pid, uint64_t addr)
{
	static char name[128];
	struct syms_cache *c = syms_cache_new(0);
	const char *n = syms_cache_lookup(c, pid, addr, NULL, NULL);
	snprintf(name, sizeof(name), "%s", n ? n : "(none)");
	syms_cache_free(c);
	return name;
}

static void newest_wins(void)
{
	uint64_t a;
	char path[64], lines[512];
	pid_t child = jit_child(NULL, &a);
	unsigned long long x = (unsigned long long)a;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)child);
	/* a method at 0x000-0x100; recompiled over its middle; code freed and
	 * reused at its start; the same range listed twice */
	snprintf(lines, sizeof(lines),
		 "%llx 100 old_tier\n%llx 20 new_tier\n%llx 8 reused_head\n%llx 10 first_listing\n%llx 10 second_listing\n",
		 x, x + 0x40, x, x + 0x200, x + 0x200);
	write_map(path, lines);
	test_cond("overlapping lines: the later names its range", strcmp(lookup(child, a + 0x48), "new_tier") == 0);
	test_cond("overlapping lines: the earlier keeps the rest", strcmp(lookup(child, a + 0x80), "old_tier") == 0 &&
									 strcmp(lookup(child, a + 0x10), "old_tier") == 0);
	test_cond("code reused at a method's start: the newest name", strcmp(lookup(child, a + 4), "reused_head") == 0);
	test_cond("the same range twice: the later line", strcmp(lookup(child, a + 0x204), "second_listing") == 0);
	test_cond("past every line: no name", strcmp(lookup(child, a + 0x300), "(none)") == 0);
	unlink(path);
	end_child(child);
}

/* A process in another root (a container's): its map is in its /tmp. */
static void own_root(void)
{
	char dir[] = "/tmp/marple-jitroot.XXXXXX", tmp[128], path[192], lines[128], host[64];
	uint64_t addr;

	if (!mkdtemp(dir))
		exit(1);
	snprintf(tmp, sizeof(tmp), "%s/tmp", dir);
	mkdir(tmp, 01777);
	pid_t child = jit_child(dir, &addr);
	snprintf(path, sizeof(path), "%s/perf-%d.map", tmp, (int)child);
	snprintf(host, sizeof(host), "/tmp/perf-%d.map", (int)child);
	unlink(host);
	snprintf(lines, sizeof(lines), "%llx 40 in_container\n", (unsigned long long)addr);
	write_map(path, lines);
	test_cond("a map in the process's own root is read", addr && strcmp(lookup(child, addr + 8), "in_container") == 0);
	end_child(child);
	unlink(path);
	rmdir(tmp);
	rmdir(dir);
}

/* A container: its own pid namespace (where it is pid 1) and root; its map
 * is its /tmp/perf-1.map.  *outer is the child to end after it. */
static pid_t container_child(const char *root, uint64_t *addr, pid_t *outer)
{
	int pfd[2];
	struct {
		uint64_t addr;
		int64_t pid;
	} msg = { 0, 0 };

	if (pipe(pfd) < 0)
		exit(1);
	*outer = fork();
	if (*outer == 0) {
		if (unshare(CLONE_NEWPID) < 0)
			_exit(1);
		pid_t inner = fork();
		if (inner == 0) {
			void *jit = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			msg.addr = (uint64_t)(uintptr_t)jit;
			if (chroot(root) < 0 || chdir("/") < 0 || getpid() != 1)
				msg.addr = 0;
			if (write(pfd[1], &msg, sizeof(msg)) != sizeof(msg))
				_exit(1);
			pause();
			_exit(0);
		}
		msg.pid = inner;	/* as our namespace sees it */
		if (write(pfd[1], &msg, sizeof(msg)) != sizeof(msg))
			_exit(1);
		pause();
		_exit(0);
	}
	uint64_t a = 0;
	pid_t inner = 0;
	for (int i = 0; i < 2; i++) {
		if (read(pfd[0], &msg, sizeof(msg)) != sizeof(msg))
			exit(1);
		if (msg.pid)
			inner = (pid_t)msg.pid;
		else
			a = msg.addr;
	}
	close(pfd[0]);
	close(pfd[1]);
	*addr = a;
	return inner;
}

static void own_pid_namespace(void)
{
	char dir[] = "/tmp/marple-jitns.XXXXXX", tmp[128], path[192], lines[128];
	uint64_t addr;
	pid_t outer;

	if (!mkdtemp(dir))
		exit(1);
	snprintf(tmp, sizeof(tmp), "%s/tmp", dir);
	mkdir(tmp, 01777);
	pid_t inner = container_child(dir, &addr, &outer);
	snprintf(path, sizeof(path), "%s/perf-1.map", tmp);
	snprintf(lines, sizeof(lines), "%llx 40 in_pid_namespace\n", (unsigned long long)addr);
	write_map(path, lines);
	test_cond("a map under the pid the process has in its own namespace",
		  addr && inner > 1 && strcmp(lookup(inner, addr + 8), "in_pid_namespace") == 0);
	end_child(inner);
	end_child(outer);
	unlink(path);
	rmdir(tmp);
	rmdir(dir);
}

int main(void)
{
	test_plan(10);
	if (geteuid() != 0) {
		printf("SKIP: jitframes: needs root (chroot)\n");
		return 0;
	}
	after_the_fact(0);
	after_the_fact(1);
	written_at_once();
	newest_wins();
	own_root();
	own_pid_namespace();
	return test_report();
}
