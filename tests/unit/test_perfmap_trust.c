/* test_perfmap_trust — /tmp/perf-PID.map is in a world-writable directory, so
 * the symbol reader (lib/collect/syms.c) must not follow a symlink planted there, nor
 * read a map owned by another user than the process's owner or root (as perf
 * refuses).  Runs on a child process with an anonymous executable mapping. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

int main(void)
{
	test_plan(3);
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
	return test_report();
}
