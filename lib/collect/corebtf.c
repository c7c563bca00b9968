/* corebtf.c — minimal copies of the kernel's BTF for our BPF objects (see
 * corebtf.h). */
#include "corebtf.h"

#include <bpf/btf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hashtab.h"
#include "kernelids.h"
#include "rundir.h"
#include "util.h"

static const char *used = "kernel";

/* bpftool gen min_core_btf of the object at obj into out: its exit status
 * (127: no bpftool on PATH nor in /usr/sbin). */
static int run_bpftool(const char *obj, const char *out)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		execlp("bpftool", "bpftool", "gen", "min_core_btf", "/sys/kernel/btf/vmlinux", out, obj, (char *)NULL);
		execl("/usr/sbin/bpftool", "bpftool", "gen", "min_core_btf", "/sys/kernel/btf/vmlinux", out, obj,
		      (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* RUNDIR's name for the minimal BTF of elf[0..size) */
static void name_of(char *name, size_t len, const void *elf, size_t size)
{
	snprintf(name, len, "core-btf-%016" PRIx64, hashtab_hash(elf, size));
}

/* Written under names of this process's, renamed into place only whole:
 * collectors starting at once each make it (the last rename wins, the
 * same bytes), and a reader never finds half a file. */
int corebtf_make(const void *elf, size_t size)
{
	char why[160], name[48], obj[96], out[96];
	int dir = rundir_open(why, sizeof(why)), rc = -1;

	if (dir < 0)
		return -1;
	name_of(name, sizeof(name), elf, size);
	snprintf(obj, sizeof(obj), "%s.o.%d", name, (int)getpid());
	snprintf(out, sizeof(out), "%s.new.%d", name, (int)getpid());
	if (rundir_write_new(dir, obj, elf, size) == 0) {
		char objpath[128], outpath[128];
		snprintf(objpath, sizeof(objpath), RUNDIR "/%s", obj);
		snprintf(outpath, sizeof(outpath), RUNDIR "/%s", out);
		/* root's alone whatever the umask: corebtf_path takes no other */
		if (run_bpftool(objpath, outpath) == 0 && fchmodat(dir, out, 0600, 0) == 0 &&
		    renameat(dir, out, dir, name) == 0)
			rc = 0;
	}
	unlinkat(dir, obj, 0);
	unlinkat(dir, out, 0);
	close(dir);
	return rc;
}

/* corebtf_make, in a process of its own that the collector neither waits
 * for nor holds open: its output, its session's signals and its other
 * files are not the grandchild's (a reader of the collector's output would
 * otherwise wait for its end). */
static void make_later(const void *elf, size_t size)
{
	pid_t pid = fork();

	if (pid != 0) {
		/* (a collector's SIGCHLD handler may have reaped it: ECHILD) */
		while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		return;
	}
	if (fork() != 0)
		_exit(0);
	setsid();
	signal(SIGCHLD, SIG_DFL);	/* bpftool's end is ours to wait for */
	int null = open("/dev/null", O_RDWR);
	for (int fd = 0; fd < 3 && null >= 0; fd++)
		dup2(null, fd);
	close_range(3, ~0u, 0);
	corebtf_make(elf, size);
	_exit(0);
}

/* The file at path is BTF this libbpf reads (a copy made by another
 * bpftool than this libbpf's, or cut short, would fail the object's open:
 * the collector's start). */
static int parses(const char *path)
{
	struct btf *btf = btf__parse(path, NULL);
	int ok = libbpf_get_error(btf) == 0 && btf;

	if (ok)
		btf__free(btf);
	return ok;
}

const char *corebtf_path(const void *elf, size_t size)
{
	static char path[96];
	const char *env = getenv("MARPLE_CORE_BTF");
	char why[160], name[48];
	struct stat st;

	used = "kernel";
	if ((env && strcmp(env, "off") == 0) || !elf || size == 0 || geteuid() != 0)
		return NULL;
	int dir = rundir_open(why, sizeof(why));
	if (dir < 0)
		return NULL;
	name_of(name, sizeof(name), elf, size);
	int have = fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0 &&
		   !(st.st_mode & 022) && st.st_size > 0;
	snprintf(path, sizeof(path), RUNDIR "/%s", name);
	if (have && !parses(path)) {
		unlinkat(dir, name, 0);	/* made again, for the next start */
		have = 0;
	}
	close(dir);
	if (!have) {
		make_later(elf, size);
		return NULL;
	}
	used = "minimal";
	return path;
}

const struct bpf_object_open_opts *corebtf_opts(const void *(*elf_bytes)(size_t *size))
{
	static struct bpf_object_open_opts opts;
	size_t size = 0;
	const void *elf = elf_bytes(&size);

	kernelids_use();
	memset(&opts, 0, sizeof(opts));
	opts.sz = sizeof(opts);
	opts.btf_custom_path = corebtf_path(elf, size);
	return &opts;
}

void corebtf_trailer(json_t *trailer)
{
	json_object_set_new(trailer, "core_btf", json_string(used));
	kernelids_trailer(trailer);
}
