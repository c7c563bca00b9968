/* test_plt — PLT stubs by name (lib/collect/syms.c): every stub objdump
 * names "name@plt" has that name, in this binary (PIE) and in Debian's
 * python3.11 (not PIE, .plt with lazy binding). */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "syms.h"
#include "test.h"

static void end_child(pid_t child)
{
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}

/* Every "<name@plt>:" objdump shows in file is named so at its address
 * (+ bias) in pid.  -1 if objdump cannot tell. */
static int plt_like_objdump(const char *file, pid_t pid, int64_t bias, int *total)
{
	char cmd[512], line[1024];
	int bad = 0;

	snprintf(cmd, sizeof(cmd), "objdump -d --no-show-raw-insn '%s' 2>/dev/null | grep '@plt>:$'", file);
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	struct syms_cache *c = syms_cache_new(0);
	*total = 0;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long vaddr;
		char name[512];
		if (sscanf(line, "%llx <%511[^>]>:", &vaddr, name) != 2)
			continue;
		(*total)++;
		const char *n = syms_cache_lookup(c, pid, (uint64_t)((int64_t)vaddr + bias) + 2, NULL, NULL);
		if (!n || strcmp(n, name) != 0) {
			if (bad++ < 3)
				printf("# %s: %s at %llx named %s\n", file, name, vaddr, n ? n : "(none)");
		}
	}
	pclose(p);
	syms_cache_free(c);
	return bad;
}

/* main's address in the file, from objdump. */
static int64_t file_vaddr_of_main(const char *self)
{
	char line[256], cmd[4200];
	unsigned long long v = 0;
	snprintf(cmd, sizeof(cmd), "objdump -d '%s' 2>/dev/null | grep '<main>:$'", self);
	FILE *p = popen(cmd, "r");
	if (p && fgets(line, sizeof(line), p))
		v = strtoull(line, NULL, 16);
	if (p)
		pclose(p);
	return (int64_t)v;
}

int main(void);

static void plt_stubs(void)
{
	int total = 0, bad;
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n > 0)
		self[n] = 0;
	if (n <= 0 || !file_vaddr_of_main(self)) {
		printf("SKIP: PLT stubs: no objdump\n");
		test_cond("PLT stubs of this binary named as objdump names them", 1);
	} else {
		bad = plt_like_objdump(self, getpid(), (int64_t)(uintptr_t)main - file_vaddr_of_main(self), &total);
		test_cond("PLT stubs of this binary named as objdump names them", bad == 0 && total > 5);
	}
	/* Debian's python3.11: not PIE, its addresses are the file's */
	const char *py = "/usr/bin/python3.11";
	if (access(py, X_OK) != 0) {
		printf("SKIP: PLT stubs of python3.11: not installed\n");
		test_cond("PLT stubs of Debian's python3.11 named as objdump names them", 1);
		return;
	}
	int pfd[2];
	if (pipe(pfd) < 0)
		exit(1);
	pid_t child = fork();
	if (child == 0) {
		dup2(pfd[1], 1);
		execl(py, py, "-c", "import sys, time; print('up', flush=True); time.sleep(30)", (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	char up[8] = { 0 };
	ssize_t got = read(pfd[0], up, 3);	/* it has started */
	if (got < 1)
		printf("# python3.11 did not start (%zd)\n", got);
	close(pfd[0]);
	bad = plt_like_objdump(py, child, 0, &total);
	test_cond("PLT stubs of Debian's python3.11 named as objdump names them", bad == 0 && total > 100);
	printf("# python3.11: %d PLT stubs\n", total);
	end_child(child);
}

int main(void)
{
	test_plan(2);
	plt_stubs();
	return test_report();
}
