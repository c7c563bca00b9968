/* test_perfmap_trust — /tmp/perf-PID.map is in a world-writable directory, so
 * the symbol reader (lib/collect/perfmap.c) must not follow a symlink planted there, nor
 * read a map owned by another user than the process's owner or root (as perf
 * refuses).  Runs on a child process with an anonymous executable mapping.
 * Then the attack of issue 40: nobody, in a user and mount namespace of its
 * own, chroots into a tmpfs and bind-mounts a root-only file onto its
 * tmp/perf-PID.map: root's capture must not show that file's lines. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "syms.h"
#include "test.h"

static const char *lookup(pid_t pid, uint64_t addr)
{
	static char name[128];
	const char *mod;
	uint64_t off;
	struct syms_cache *c = syms_cache_new(0);
	const char *n = syms_cache_lookup(c, pid, addr, &mod, &off);
	snprintf(name, sizeof(name), "%s", n ? n : "");
	syms_cache_free(c);
	return name;
}

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);
	if (fd >= 0) {
		if (write(fd, text, strlen(text)) < 0)
			perror(path);
		close(fd);
	}
}

/* The child's side of the namespace cases: as nobody, in a user and mount
 * namespace of its own, a tmpfs at dir becomes its root, with tmp/perf-PID.map
 * either its own file listing addr as "ns_symbol" or (secret not NULL) that
 * root-only file bind-mounted there.  Tells the parent on ready; waits. */
static void namespaced_jit(const char *dir, const char *secret, uint64_t addr, int ready)
{
	char path[600], map[64], line[128];
	gid_t nobody = 65534;

	snprintf(path, sizeof(path), "%s/tmp/perf-%d.map", dir, (int)getpid());
	if (setgroups(1, &nobody) != 0 || setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0 ||
	    prctl(PR_SET_DUMPABLE, 1) != 0 || unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
		_exit(10);	/* dumpable: a setuid process may not write its own uid_map otherwise */
	write_file("/proc/self/setgroups", "deny");
	write_file("/proc/self/uid_map", "0 65534 1");
	write_file("/proc/self/gid_map", "0 65534 1");
	if (mount("none", dir, "tmpfs", 0, NULL) != 0)
		_exit(11);
	snprintf(map, sizeof(map), "%s/tmp", dir);
	mkdir(map, 01777);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	snprintf(line, sizeof(line), "%llx 100 ns_symbol\n", (unsigned long long)addr);
	if (fd < 0 || write(fd, line, strlen(line)) < 0)
		_exit(12);
	close(fd);
	if (secret && mount(secret, path, NULL, MS_BIND, NULL) != 0)
		_exit(13);
	if (chroot(dir) != 0 || chdir("/") != 0)
		_exit(14);
	if (write(ready, "r", 1) != 1)
		_exit(15);
	pause();
	_exit(0);
}

/* Start a namespaced JIT (see namespaced_jit) and return its pid, its
 * "JIT" address in *addr; the secret file, when asked for, lists that
 * address as SECRET_ROOT_ONLY_TOKEN.  -1 if it could not be set up. */
static pid_t start_namespaced(const char *dir, const char *secret, uint64_t *addr)
{
	int to_parent[2], ready[2];
	char c;

	if (pipe(to_parent) < 0 || pipe(ready) < 0)
		return -1;
	pid_t child = fork();
	if (child == 0) {
		void *jit = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		uint64_t a = (uint64_t)(uintptr_t)jit;
		if (write(to_parent[1], &a, sizeof(a)) != sizeof(a) || read(ready[0], &c, 1) != 1)
			_exit(1);
		namespaced_jit(dir, secret, a, to_parent[1]);
	}
	close(to_parent[1]);	/* a child that fails is then an end of file, not a wait */
	close(ready[0]);
	if (child < 0 || read(to_parent[0], addr, sizeof(*addr)) != sizeof(*addr))
		return -1;
	if (secret) {
		FILE *f = fopen(secret, "w");
		fprintf(f, "%llx 100 SECRET_ROOT_ONLY_TOKEN\n", (unsigned long long)*addr);
		fclose(f);
		chmod(secret, 0600);
	}
	if (write(ready[1], "g", 1) != 1 || read(to_parent[0], &c, 1) != 1) {
		int status = 0;
		kill(child, SIGKILL);
		waitpid(child, &status, 0);
		printf("# namespaced child: exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return WIFEXITED(status) && WEXITSTATUS(status) == 10 ? -2 : -1;	/* no user namespaces here */
	}
	close(to_parent[0]), close(ready[1]);
	return child;
}

static void namespace_cases(void)
{
	char dir[] = "/tmp/marple-nsroot.XXXXXX", secret[64];
	uint64_t addr = 0;

	snprintf(secret, sizeof(secret), "/tmp/marple-secret.%d", (int)getpid());
	if (!mkdtemp(dir) || chmod(dir, 0755) != 0)
		return;
	pid_t own = start_namespaced(dir, NULL, &addr);
	if (own == -2) {
		printf("SKIP: perf map: in its own root (no unprivileged user namespaces)\n"
		       "SKIP: perf map: a bind-mounted root-only file (no unprivileged user namespaces)\n");
		rmdir(dir);
		return;
	}
	test_cond("perf map: in its own root, the owner's map is read",
		  own > 0 && strcmp(lookup(own, addr + 8), "ns_symbol") == 0);
	if (own > 0)
		kill(own, SIGKILL), waitpid(own, NULL, 0);
	pid_t thief = start_namespaced(dir, secret, &addr);
	test_cond("perf map: a root-only file bind-mounted there by nobody is not read",
		  thief > 0 && strcmp(lookup(thief, addr + 8), "SECRET_ROOT_ONLY_TOKEN") != 0);
	if (thief > 0)
		kill(thief, SIGKILL), waitpid(thief, NULL, 0);
	unlink(secret);
	rmdir(dir);
}

int main(void)
{
	test_plan(5);
	int pfd[2];
	char path[64], target[64];
	uint64_t addr = 0;

	if (geteuid() != 0) {
		printf("SKIP: perf map trust: needs root (to own files as another user)\n");
		return 0;
	}
	if (pipe(pfd) < 0)
		return 1;
	pid_t child = fork();
	if (child == 0) {	/* a process with an anonymous "JIT" mapping */
		void *jit = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		uint64_t a = (uint64_t)(uintptr_t)jit;
		if (write(pfd[1], &a, sizeof(a)) != sizeof(a))
			_exit(1);
		pause();
		_exit(0);
	}
	if (read(pfd[0], &addr, sizeof(addr)) != sizeof(addr))
		return 1;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)child);
	snprintf(target, sizeof(target), "/tmp/marple-perfmap-target.%d", (int)getpid());
	FILE *f = fopen(target, "w");
	fprintf(f, "%llx 100 planted_symbol\n", (unsigned long long)addr);
	fclose(f);

	/* Positive control: a regular map owned by root is read. */
	unlink(path);
	link(target, path);
	test_cond("perf map owned by root is read", strcmp(lookup(child, addr + 8), "planted_symbol") == 0);

	/* A symlink planted in /tmp is not followed. */
	unlink(path);
	if (symlink(target, path) == 0)
		test_cond("perf map symlink is not followed", strcmp(lookup(child, addr + 8), "planted_symbol") != 0);

	/* A map owned by another user (not the process's owner) is not read. */
	unlink(path);
	f = fopen(path, "w");
	fprintf(f, "%llx 100 planted_symbol\n", (unsigned long long)addr);
	fclose(f);
	if (chown(path, 65534, 65534) == 0)
		test_cond("perf map owned by another user is not read", strcmp(lookup(child, addr + 8), "planted_symbol") != 0);

	unlink(path);
	unlink(target);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	namespace_cases();
	return test_report();
}
