/* kernelids.c — the kernel's BTF ids our objects' loads need, kept once a
 * boot, and the libbpf program handlers that use them (see kernelids.h). */
#include "kernelids.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kfuncs.h"
#include "rundir.h"
#include "util.h"

#define KEPT_NAME "kernel-btf-ids"
#define KEPT_MAX (4u << 20)	/* 1,601 tracepoints here: 60 KB */
#define TRACEPOINT_PREFIX "btf_trace_"

static const char *const kfunc_names[KFUNC_COUNT] = {
	[KFUNC_RDONLY_CAST] = "bpf_rdonly_cast",
	[KFUNC_ITER_TASK_VMA_NEW] = "bpf_iter_task_vma_new",
	[KFUNC_ITER_TASK_VMA_NEXT] = "bpf_iter_task_vma_next",
	[KFUNC_ITER_TASK_VMA_DESTROY] = "bpf_iter_task_vma_destroy",
};

/* "name id\n" lines after a first line that names the boot: a
 * kernel-btf-ids file's bytes */
static char *ids;
static size_t ids_len;
static const char *used = "none";

/* The first line of a file made in this boot (the boot id read once) */
static const char *header(void)
{
	static char line[128];
	char boot[64];

	if (!line[0]) {
		if (rundir_boot_id(boot, sizeof(boot)) != 0)
			boot[0] = '\0';
		snprintf(line, sizeof(line), "marple kernel BTF ids 1 boot %s\n", boot);
	}
	return line;
}

/* The kept file, if root made it in this boot: 0, or -1. */
static int read_kept(const char *first)
{
	char why[160];
	int dir = rundir_open(why, sizeof(why));
	struct stat st;

	if (dir < 0)
		return -1;
	int fd = openat(dir, KEPT_NAME, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	close(dir);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022) ||
	    st.st_size <= 0 || (uint64_t)st.st_size > KEPT_MAX) {
		close(fd);
		return -1;
	}
	char *buf = marple_malloc((size_t)st.st_size + 1);
	ssize_t got = read(fd, buf, (size_t)st.st_size);
	close(fd);
	if (got == st.st_size)
		buf[got] = '\0';
	if (got != st.st_size || strncmp(buf, first, strlen(first)) != 0 || buf[got - 1] != '\n') {
		free(buf);
		return -1;
	}
	ids = buf;
	ids_len = (size_t)got;
	return 0;
}

static void append(char **buf, size_t *len, size_t *cap, const char *name, long id)
{
	size_t need = strlen(name) + 24;

	*buf = marple_grow(*buf, cap, *len + need + 1, 1);
	*len += (size_t)snprintf(*buf + *len, need, "%s %ld\n", name, id);
}

/* Every tracepoint's id and every kfunc's of ours, from the kernel's BTF:
 * 0, or -1 if it cannot be read. */
static int read_kernel(const char *first)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	size_t len = strlen(first), cap = 0;

	if (!vmlinux)
		return -1;
	char *buf = marple_grow(NULL, &cap, len + 1, 1);
	memcpy(buf, first, len + 1);
	for (uint32_t id = 1, n = btf__type_cnt(vmlinux); id < n; id++) {
		const struct btf_type *t = btf__type_by_id(vmlinux, id);
		const char *name = btf__name_by_offset(vmlinux, t->name_off);
		if (btf_is_typedef(t) && name && strncmp(name, TRACEPOINT_PREFIX, strlen(TRACEPOINT_PREFIX)) == 0)
			append(&buf, &len, &cap, name, id);
	}
	for (int k = 0; k < KFUNC_COUNT; k++) {
		int id = btf__find_by_name_kind(vmlinux, kfunc_names[k], BTF_KIND_FUNC);
		append(&buf, &len, &cap, kfunc_names[k], id > 0 ? id : 0);
	}
	btf__free(vmlinux);
	free(ids);
	ids = buf;
	ids_len = len;
	return 0;
}

/* ids kept for the next start: written under a name of this process's,
 * renamed into place only whole (collectors starting at once each write
 * the same bytes; the last rename wins) */
static void keep(void)
{
	char why[160], tmp[64];
	int dir = rundir_open(why, sizeof(why));

	if (dir < 0)
		return;
	snprintf(tmp, sizeof(tmp), KEPT_NAME ".new.%d", (int)getpid());
	if (rundir_write_new(dir, tmp, ids, ids_len) != 0 || fchmodat(dir, tmp, 0600, 0) != 0 ||
	    renameat(dir, tmp, dir, KEPT_NAME) != 0)
		unlinkat(dir, tmp, 0);
	close(dir);
}

/* 1: the file is read and kept; 0 under MARPLE_KERNEL_IDS=off, or when
 * not root (/run/marple is root's) */
static int keeping(void)
{
	const char *env = getenv("MARPLE_KERNEL_IDS");

	return !(env && strcmp(env, "off") == 0) && geteuid() == 0;
}

/* ids read from the kernel's BTF, and kept: 0, or -1 (ids as they were) */
static int from_kernel(void)
{
	if (read_kernel(header()) != 0)
		return -1;
	used = "read";
	if (keeping())
		keep();
	return 0;
}

/* ids set: 0, or -1 if the kernel's BTF cannot be read */
static int ids_ready(void)
{
	static int tried;

	if (!tried++) {
		if (keeping() && read_kept(header()) == 0)
			used = "kept";
		else
			from_kernel();
	}
	return ids ? 0 : -1;
}

/* name's id in ids: >= 0, or -1 if it has no line */
static long find_line(const char *name)
{
	size_t nlen = strlen(name);

	for (const char *p = ids; (p = memchr(p, '\n', ids_len - (size_t)(p - ids))) != NULL;) {
		p++;
		if ((size_t)(ids + ids_len - p) > nlen && memcmp(p, name, nlen) == 0 && p[nlen] == ' ')
			return strtol(p + nlen + 1, NULL, 10);
	}
	return -1;
}

/* The id of the kernel's tracepoint typedef or kfunc name, 0 if the
 * kernel has none, -1 if its BTF cannot be read. */
static long find(const char *name)
{
	if (ids_ready() != 0)
		return -1;
	long id = find_line(name);
	/* a kept file without it (an older marple's, say): the kernel's BTF
	 * read again, and kept */
	if (id < 0 && strcmp(used, "kept") == 0 && from_kernel() == 0)
		id = find_line(name);
	return id < 0 ? 0 : id;
}

/* Each call of a kfunc of kfuncs.h (a helper number of ours) made the
 * kernel's kfunc call: 0, or a negative errno. */
static int patch_kfunc_calls(struct bpf_program *prog)
{
	const struct bpf_insn *insns = bpf_program__insns(prog);
	size_t n = bpf_program__insn_cnt(prog);
	struct bpf_insn *copy = NULL;
	int err = 0;

	for (size_t i = 0; i < n; i++) {
		uint32_t k = (uint32_t)insns[i].imm - KFUNC_CALL_BASE;
		if (insns[i].code != (BPF_JMP | BPF_CALL) || insns[i].src_reg != 0 || k >= KFUNC_COUNT)
			continue;
		long id = find(kfunc_names[k]);
		if (id <= 0)
			continue;	/* none in this kernel: dead code here (kfuncs.h) */
		if (!copy) {
			copy = marple_malloc(n * sizeof(*copy));
			memcpy(copy, insns, n * sizeof(*copy));
		}
		copy[i].src_reg = BPF_PSEUDO_KFUNC_CALL;
		copy[i].off = 0;	/* the kernel's own BTF, not a module's */
		copy[i].imm = (int32_t)id;
	}
	if (copy)
		err = bpf_program__set_insns(prog, copy, n);
	free(copy);
	return err;
}

enum section { SECTION_TP_BTF, SECTION_PERF_EVENT, SECTION_UPROBE, SECTION_URETPROBE, SECTION_TRACEPOINT, SECTION_RAW_TP };

/* The sections our objects use, as libbpf types them.  A tp_btf program
 * opens as a raw tracepoint's (libbpf would read the kernel's BTF for a
 * tracing program) and loads as what it is. */
static const struct {
	const char *sec;
	enum bpf_prog_type type;
} sections[] = {
	[SECTION_TP_BTF] = { "tp_btf+", BPF_PROG_TYPE_RAW_TRACEPOINT },
	[SECTION_PERF_EVENT] = { "perf_event", BPF_PROG_TYPE_PERF_EVENT },
	[SECTION_UPROBE] = { "uprobe+", BPF_PROG_TYPE_KPROBE },
	[SECTION_URETPROBE] = { "uretprobe+", BPF_PROG_TYPE_KPROBE },
	[SECTION_TRACEPOINT] = { "tracepoint+", BPF_PROG_TYPE_TRACEPOINT },
	[SECTION_RAW_TP] = { "raw_tp+", BPF_PROG_TYPE_RAW_TRACEPOINT },
};

/* The part of prog's section name after its first '/', or NULL */
static const char *section_arg(const struct bpf_program *prog)
{
	const char *slash = strchr(bpf_program__section_name(prog), '/');

	return slash ? slash + 1 : NULL;
}

static int prepare_load(struct bpf_program *prog, struct bpf_prog_load_opts *opts, long cookie)
{
	if (cookie == SECTION_TP_BTF) {
		const char *tp = section_arg(prog);
		char name[128];
		snprintf(name, sizeof(name), TRACEPOINT_PREFIX "%s", tp ? tp : "");
		long id = tp ? find(name) : -1;
		if (id <= 0) {
			marple_warn(id < 0 ? "%s: cannot read the kernel's BTF for tracepoint %s's id"
					   : "%s: the kernel's BTF has no tracepoint %s",
				    bpf_program__name(prog), tp ? tp : "(none named)");
			return -ESRCH;
		}
		bpf_program__set_type(prog, BPF_PROG_TYPE_TRACING);
		bpf_program__set_expected_attach_type(prog, BPF_TRACE_RAW_TP);
		opts->expected_attach_type = BPF_TRACE_RAW_TP;
		opts->attach_btf_id = (uint32_t)id;
		opts->attach_btf_obj_fd = 0;
	}
	return patch_kfunc_calls(prog);
}

/* What libbpf's own handlers auto-attach (a skeleton's __attach, or
 * bpf_program__attach): tracepoints by their section's name; perf-event
 * and uprobe programs the collector attaches itself. */
static int attach(const struct bpf_program *prog, long cookie, struct bpf_link **link)
{
	const char *arg = section_arg(prog);

	*link = NULL;
	if (cookie == SECTION_TP_BTF) {
		*link = bpf_program__attach_trace(prog);
	} else if (cookie == SECTION_RAW_TP && arg) {
		*link = bpf_program__attach_raw_tracepoint(prog, arg);
	} else if (cookie == SECTION_TRACEPOINT && arg && strchr(arg, '/')) {
		char category[128];
		size_t len = strcspn(arg, "/");
		snprintf(category, sizeof(category), "%.*s", (int)len, arg);
		*link = bpf_program__attach_tracepoint(prog, category, arg + len + 1);
	} else {
		return 0;
	}
	return *link ? 0 : -errno;
}

void kernelids_use(void)
{
	static int registered;

	if (registered++)
		return;
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
		LIBBPF_OPTS(libbpf_prog_handler_opts, o, .cookie = (long)i, .prog_prepare_load_fn = prepare_load,
			    .prog_attach_fn = attach);
		if (libbpf_register_prog_handler(sections[i].sec, sections[i].type, 0, &o) < 0)
			marple_warn("cannot register libbpf's handler of section %s: %s", sections[i].sec,
				    strerror(errno));
	}
}

void kernelids_trailer(json_t *trailer)
{
	json_object_set_new(trailer, "kernel_btf_ids", json_string(used));
}
