/* test_hostilefiles.c — what a traced program's files can do to the
 * symbolizer (issue 40): a program without .symtab whose .gnu_debuglink
 * names a FIFO beside it must not stall the lookup (a blocking open waited
 * for ever), and its frames are still named from .dynsym.  The program is
 * this test run again ("wait"), copied, stripped and linked to a debug file
 * that is then replaced by a FIFO, and run as nobody.  The FIFO is counted
 * and named (procmaps_refused: the trailer's files_not_regular). */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procmaps.h"
#include "syms.h"
#include "test.h"

void hostilefiles_spin(void);
void hostilefiles_spin(void)
{
	for (;;)
		pause();
}

static int run(const char *cmd)
{
	int rc = system(cmd);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static void on_alarm(int sig)
{
	(void)sig;
	printf("FAIL: hostile files: the lookup blocked (a FIFO at the debug link)\n");
	fflush(stdout);
	_exit(1);
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/test_hostilefiles.XXXXXX", self[512] = "", cmd[8192], prog[600], dbg[600];
	int ready[2];
	char c;

	if (argc > 1 && strcmp(argv[1], "wait") == 0) {
		if (write(3, "r", 1) != 1)
			return 1;
		hostilefiles_spin();
	}
	test_plan(2);
	if (!mkdtemp(dir) || chmod(dir, 0755) != 0 || readlink("/proc/self/exe", self, sizeof(self) - 1) <= 0)
		return 1;
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	snprintf(dbg, sizeof(dbg), "%s/prog.debug", dir);
	snprintf(cmd, sizeof(cmd),
		 "cp '%s' '%s' && cp '%s' '%s' && strip '%s' && objcopy --add-gnu-debuglink='%s' '%s' && rm '%s' && "
		 "mkfifo -m 0666 '%s'",
		 self, prog, self, dbg, prog, dbg, prog, dbg, dbg);
	if (run(cmd) != 0) {
		printf("SKIP: hostile files: strip or objcopy failed\nSKIP: hostile files: (the same)\n");
		return 0;
	}
	if (pipe(ready) != 0)
		return 1;
	pid_t child = fork();
	if (child == 0) {
		dup2(ready[1], 3);
		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(1);
		execl(prog, prog, "wait", (char *)NULL);
		_exit(1);
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1)
		return 1;
	/* the address of hostilefiles_spin in the child: ours moved by the
	 * difference of the two programs' load addresses */
	struct syms_cache *sc = syms_cache_new(0);
	struct syms_map ours, theirs;
	uint64_t at = (uint64_t)(uintptr_t)hostilefiles_spin + 4;
	signal(SIGALRM, on_alarm);
	alarm(20);
	int mapped = syms_cache_map(sc, getpid(), at, &ours) == 0;
	struct procmaps pm;
	struct procmaps_line l;
	uint64_t base = 0;
	if (mapped && procmaps_open(&pm, child) == 0) {
		while (!base && procmaps_next(&pm, &l))
			if (l.pgoff == ours.pgoff && procmaps_is_exec(&l) && strstr(l.path, "/prog"))
				base = l.start;
		procmaps_close(&pm);
	}
	const char *module = NULL, *first = NULL;
	if (base)
		syms_cache_lookup(sc, child, at - ours.start + base, &module, NULL);
	alarm(0);
	test_cond("hostile files: a FIFO at the debug link does not stall the lookup",
		  base != 0 && module && strcmp(module, "prog") == 0 &&
			  syms_cache_map(sc, child, at - ours.start + base, &theirs) == 0);
	test_cond("hostile files: ... it is counted and named", procmaps_refused(&first) >= 1 && first &&
								      strcmp(first, dbg) == 0);
	syms_cache_free(sc);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	run(cmd);
	return test_report();
}
