/* uprobes.c — library lookup, uprobe attachment and traced commands (see uprobes.h). */
#include "uprobes.h"

#include <bpf/libbpf.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wordexp.h>

#include "collector.h"
#include "elfsyms.h"
#include "mappedfiles.h"
#include "procmaps.h"
#include "util.h"

static int lib_matches(const char *path, const char *name)
{
	const char *base = strrchr(path, '/');
	size_t n = strlen(name);

	base = base ? base + 1 : path;
	return strncmp(base, name, n) == 0 && (strncmp(base + n, ".so", 3) == 0 || base[n] == '-');
}

/* A path that reaches from here the file pid maps at l: in pid's root when
 * the file there is the one mapped (stat, which never blocks: a process can
 * put a FIFO or another file at that name in its own mount namespace), else
 * the mapping's own /proc/PID/map_files entry. */
static char *reachable_path(pid_t pid, const struct procmaps_line *l)
{
	size_t len = strlen(l->path) + 64;
	char *path = marple_malloc(len);
	struct stat st;

	snprintf(path, len, "/proc/%d/root%s", (int)pid, l->path);
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
	    !mappedfile_id_equal(mappedfile_id_of_stat(&st), mappedfile_id_of_line(l)))
		procmaps_map_files_path(pid, l, path, len);
	return path;
}

/* name's file as pid maps it (pid < 0: as we do), by a path that reaches
 * it from here. */
static char *find_in_maps(pid_t pid, const char *name)
{
	struct procmaps pm;
	struct procmaps_line l;
	char *found = NULL;

	if (procmaps_open(&pm, pid < 0 ? getpid() : pid) < 0)
		return NULL;
	while (!found && procmaps_next(&pm, &l)) {
		if (!procmaps_is_file(&l) || l.deleted || !lib_matches(l.path, name))
			continue;
		found = pid < 0 ? marple_strdup(l.path) : reachable_path(pid, &l);
	}
	procmaps_close(&pm);
	return found;
}

static char *find_in_ldcache(const char *name)
{
	char *line = NULL, *found = NULL;
	size_t cap = 0;
	FILE *p = popen("/sbin/ldconfig -p 2>/dev/null", "re");

	if (!p)
		return NULL;
	while (getline(&line, &cap, p) > 0) {
		char *arrow = strstr(line, "=> ");
		if (!arrow || found)
			continue;
		arrow += 3;
		arrow[strcspn(arrow, "\n")] = '\0';
		if (lib_matches(arrow, name) && access(arrow, R_OK) == 0)
			found = marple_strdup(arrow);
	}
	free(line);
	pclose(p);
	return found;
}

char *uprobes_find_lib(pid_t pid, const char *name)
{
	char *path = find_in_maps(pid, name);

	if (!path && pid < 0)
		path = find_in_ldcache(name);
	if (!path) {
		if (pid < 0)
			marple_warn("library %s not found (not mapped here, not in the ld.so cache)", name);
		else
			marple_warn("library %s not found in process %d (is it linked with it?)", name, (int)pid);
	}
	return path;
}

/* Where func is in the file open as fd (st: its fstat), through the model:
 * its offset into the file, 0; or -1 and why (*why). */
static int func_offset(int fd, const struct stat *st, const char *path, const char *func, uint64_t *off,
		       const char **why)
{
	struct mappedfiles *mf = mappedfiles_shared();
	struct elfsyms es = { .files = mf };
	struct elfsyms_file *d = elfsyms_of_file(&es, mappedfiles_of_fd(mf, fd, st, path), path, "");
	int rc = -1;

	if (!d->elf)
		*why = "not an ELF file";
	else if (elfsyms_func_offset(d, func, off) != 0)
		*why = "no such function";
	else
		rc = 0;
	elfsyms_file_free(&es, d);
	mappedfiles_release(mf);
	return rc;
}

struct bpf_link *uprobes_attach_at(struct bpf_program *prog, pid_t pid, const char *path,
				   const char *func, size_t offset, int retprobe, uint64_t cookie)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = retprobe != 0, .bpf_cookie = cookie);
	struct bpf_link *link = NULL;
	struct stat st;
	const char *why = NULL;
	char self[64];
	uint64_t at;
	/* never blocking, a regular file only; the kernel then probes the very
	 * file checked (by our descriptor), whatever the path names by then */
	int fd = procmaps_open_safe(AT_FDCWD, path, &st);

	if (fd < 0)
		why = errno == EINVAL ? "not a regular file" : strerror(errno);
	else if (func_offset(fd, &st, path, func, &at, &why) == 0) {
		snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
		if (!(link = bpf_program__attach_uprobe_opts(prog, pid, self, at + offset, &opts)))
			why = collector_strerror(-errno);
	}
	if (fd >= 0)
		close(fd);
	if (!link)
		marple_warn("cannot attach a %s to %s in %s: %s", retprobe ? "uretprobe" : "uprobe", func, path, why);
	return link;
}

struct bpf_link *uprobes_attach(struct bpf_program *prog, pid_t pid, const char *path,
				const char *func, uint64_t cookie)
{
	return uprobes_attach_at(prog, pid, path, func, 0, 0, cookie);
}

size_t uprobes_past_null_check(const char *path, const char *func)
{
	void *addr = dlsym(RTLD_DEFAULT, func);
	const unsigned char *b = addr;
	struct stat ours, theirs;
	Dl_info info;
	size_t off = 0;

	if (!addr || !dladdr(addr, &info) || !info.dli_fname || stat(info.dli_fname, &ours) != 0 ||
	    stat(path, &theirs) != 0 || ours.st_dev != theirs.st_dev || ours.st_ino != theirs.st_ino)
		return 0;
#if defined(__x86_64__)
	/* test %rdi,%rdi; je rel32 | je rel8 */
	if (b[0] == 0x48 && b[1] == 0x85 && b[2] == 0xff)
		off = b[3] == 0x0f && b[4] == 0x84 ? 9 : b[3] == 0x74 ? 5 : 0;
	/* then push %reg: emulated by the kernel, no single-step */
	if (off && !((b[off] >= 0x50 && b[off] <= 0x57) || (b[off] == 0x41 && b[off + 1] >= 0x50 && b[off + 1] <= 0x57)))
		off = 0;
#endif
	return off;
}

int uprobes_require_process(pid_t pid)
{
	if (pid <= 0 || (kill(pid, 0) != 0 && errno == ESRCH)) {
		marple_warn("process %d not found", (int)pid);
		return -1;
	}
	return 0;
}

static int go_fd[2] = { -1, -1 };
/* the child writes execvp's errno here if it fails; closed by a good exec */
static int exec_err_fd[2] = { -1, -1 };
static char *command_name;
static int traced_exec;

/* cmd split as sh would, without command substitution: 0, or -1 (*we
 * then holds nothing to free). */
static int split_command(const char *cmd, wordexp_t *we)
{
	int rc = wordexp(cmd, we, WRDE_NOCMD | WRDE_SHOWERR);

	if (rc == 0 && we->we_wordc > 0)
		return 0;
	if (rc == 0 || rc == WRDE_NOSPACE)
		wordfree(we);
	return -1;
}

int uprobes_command_check(const char *cmd)
{
	wordexp_t we;

	if (split_command(cmd, &we) != 0)
		return -1;
	wordfree(&we);
	return 0;
}

static void close_pipes(void)
{
	int *fds[] = { go_fd, exec_err_fd };

	for (int i = 0; i < 2; i++)
		for (int k = 0; k < 2; k++) {
			if (fds[i][k] >= 0)
				close(fds[i][k]);
			fds[i][k] = -1;
		}
}

pid_t uprobes_command_start(const char *cmd)
{
	wordexp_t we;
	pid_t pid;

	if (split_command(cmd, &we) != 0) {
		marple_warn("cannot split the command '%s' into words", cmd);
		return -1;
	}
	if (pipe2(go_fd, O_CLOEXEC) < 0 || pipe2(exec_err_fd, O_CLOEXEC) < 0) {
		marple_warn("cannot start the command '%s': pipe: %s", cmd, strerror(errno));
		close_pipes();
		wordfree(&we);
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		marple_warn("cannot start the command '%s': fork: %s", cmd, strerror(errno));
		close_pipes();
		wordfree(&we);
		return -1;
	}
	if (pid == 0) {
		char c;
		/* Nothing that allocates before exec: the probes may already watch us. */
		close(go_fd[1]);
		dup2(STDERR_FILENO, STDOUT_FILENO);
		/* traced: stops after exec and before exit (uprobes_command_exited) */
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if (read(go_fd[0], &c, 1) != 1)
			_exit(127);
		execvp(we.we_wordv[0], we.we_wordv);
		int err = errno;
		ssize_t written = write(exec_err_fd[1], &err, sizeof err);
		(void)written;
		_exit(127);
	}
	command_name = marple_strdup(we.we_wordv[0]);
	wordfree(&we);
	close(go_fd[0]);
	close(exec_err_fd[1]);
	go_fd[0] = exec_err_fd[1] = -1;
	return pid;
}

int uprobes_command_go(pid_t child)
{
	char c = 'g';
	int err = 0;
	ssize_t n;

	(void)child;
	if (write(go_fd[1], &c, 1) != 1)
		marple_warn("cannot start the command: %s", strerror(errno));
	close(go_fd[1]);
	go_fd[1] = -1;
	/* end of file once the exec succeeded; its errno if it failed */
	do
		n = read(exec_err_fd[0], &err, sizeof err);
	while (n < 0 && errno == EINTR);
	close(exec_err_fd[0]);
	exec_err_fd[0] = -1;
	if (n == sizeof err)
		marple_warn("cannot run the command '%s': %s", command_name, strerror(err));
	free(command_name);
	command_name = NULL;
	return n == sizeof err ? -1 : 0;
}

int uprobes_command_exited(pid_t child, void (*at_exit)(pid_t, void *), void *arg, int *status)
{
	int st;
	pid_t r;

	while ((r = waitpid(child, &st, WNOHANG)) == child && WIFSTOPPED(st)) {
		int sig = WSTOPSIG(st), event = st >> 16;
		if (sig == SIGTRAP && event == PTRACE_EVENT_EXIT) {
			if (at_exit)
				at_exit(child, arg);
			sig = 0;
		} else if (sig == SIGTRAP && event == 0 && !traced_exec) {
			/* the stop after exec: from now on, stop before exit too */
			traced_exec = 1;
			ptrace(PTRACE_SETOPTIONS, child, NULL, (void *)(long)(PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL));
			sig = 0;
		}
		ptrace(PTRACE_CONT, child, NULL, (void *)(long)sig);
	}
	if (r != child)
		return 0;
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return 1;
}

void uprobes_command_stop(pid_t child)
{
	int st;

	if (waitpid(child, &st, WNOHANG) == 0) {
		kill(child, SIGTERM);
		/* a traced child stops on the way out: let it go */
		while (waitpid(child, &st, 0) == child && WIFSTOPPED(st))
			ptrace(PTRACE_DETACH, child, NULL, (void *)(long)(WSTOPSIG(st) == SIGTRAP ? 0 : WSTOPSIG(st)));
	}
}
