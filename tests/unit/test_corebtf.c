/* test_corebtf — each collector's BPF object relocated against the minimal
 * copy of the kernel's BTF (lib/collect/corebtf.h) exactly as against the
 * kernel's whole BTF: its programs' instructions after load the same, the
 * maps' file descriptors left out; a copy cut short is not used but made
 * again.  As root, with bpftool (a build dependency); failed otherwise. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "callstack.skel.h"
#include "corebtf.h"
#include "cpusched.skel.h"
#include "diskblockrq.skel.h"
#include "disklat.skel.h"
#include "ipc.skel.h"
#include "lock.skel.h"
#include "mallocstacks.skel.h"
#include "memevents.skel.h"
#include "memleak.skel.h"
#include "offcpu.skel.h"
#include "test.h"

static const struct {
	const char *name;
	const void *(*elf_bytes)(size_t *size);
} objects[] = {
	{ "callstack", callstack_bpf__elf_bytes },     { "cpusched", cpusched_bpf__elf_bytes },
	{ "diskblockrq", diskblockrq_bpf__elf_bytes }, { "disklat", disklat_bpf__elf_bytes },
	{ "ipc", ipc_bpf__elf_bytes },                 { "lock", lock_bpf__elf_bytes },
	{ "mallocstacks", mallocstacks_bpf__elf_bytes }, { "memevents", memevents_bpf__elf_bytes },
	{ "memleak", memleak_bpf__elf_bytes },         { "offcpu", offcpu_bpf__elf_bytes },
};
#define NOBJECTS (sizeof(objects) / sizeof(objects[0]))

/* insn i of a program: a map's fd (an ldimm64 naming a map) differs
 * between two loads; anything else is the relocation's answer */
static int same_insn(const struct bpf_insn *a, const struct bpf_insn *b, size_t i)
{
	if (a[i].code == (BPF_LD | BPF_IMM | BPF_DW) &&
	    (a[i].src_reg == BPF_PSEUDO_MAP_FD || a[i].src_reg == BPF_PSEUDO_MAP_VALUE))
		return a[i].code == b[i].code && a[i].src_reg == b[i].src_reg && a[i].dst_reg == b[i].dst_reg;
	return memcmp(&a[i], &b[i], sizeof(a[i])) == 0;
}

/* The programs of two loads of one object, instruction by instruction:
 * the number of programs that differ (or are missing), -1 when either
 * load failed. */
static int differing(struct bpf_object *a, struct bpf_object *b)
{
	struct bpf_program *pa;
	int n = 0;

	bpf_object__for_each_program(pa, a) {
		struct bpf_program *pb = bpf_object__find_program_by_name(b, bpf_program__name(pa));
		const struct bpf_insn *ia = bpf_program__insns(pa), *ib = pb ? bpf_program__insns(pb) : NULL;
		size_t len = bpf_program__insn_cnt(pa);
		int same = ia && ib && len == bpf_program__insn_cnt(pb);
		for (size_t i = 0; same && i < len; i++)
			same = same_insn(ia, ib, i);
		if (!same)
			fprintf(stderr, "test_corebtf: %s: %s differs\n", bpf_object__name(a), bpf_program__name(pa));
		n += !same;
	}
	return n;
}

static void object(size_t k)
{
	char name[128];
	size_t size = 0;
	const void *elf = objects[k].elf_bytes(&size);
	int made = corebtf_make(elf, size) == 0;
	const char *path = made ? corebtf_path(elf, size) : NULL;
	LIBBPF_OPTS(bpf_object_open_opts, minimal, .btf_custom_path = path);
	struct bpf_object *a = path ? bpf_object__open_mem(elf, size, &minimal) : NULL;
	struct bpf_object *b = bpf_object__open_mem(elf, size, NULL);
	int loaded = a && b && bpf_object__load(a) == 0 && bpf_object__load(b) == 0;

	snprintf(name, sizeof(name), "corebtf: %s: made (%s), loaded against it and the kernel's", objects[k].name,
		 path ? path : "none");
	test_cond(name, made && path && loaded);
	snprintf(name, sizeof(name), "corebtf: %s: every program's instructions the same", objects[k].name);
	test_cond(name, loaded && differing(a, b) == 0);
	bpf_object__close(a);
	bpf_object__close(b);
}

/* callstack's copy cut to 16 bytes: not used (NULL) and removed, then made
 * again in the background (waited for, 10 s at most). */
static void cut_short(void)
{
	size_t size = 0;
	const void *elf = callstack_bpf__elf_bytes(&size);
	const char *path = corebtf_path(elf, size);
	char copy[128] = "";
	struct stat st;

	if (path)
		snprintf(copy, sizeof(copy), "%s", path);
	int cut = path && truncate(copy, 16) == 0;
	const char *again = cut ? corebtf_path(elf, size) : "";
	test_cond("corebtf: a copy cut short: the kernel's BTF used instead", cut && again == NULL);
	int i = 0;
	while (cut && i++ < 100 && !(stat(copy, &st) == 0 && st.st_size > 16))
		usleep(100000);
	test_cond("corebtf: ... and the copy made again", cut && corebtf_path(elf, size) != NULL);
}

int main(void)
{
	test_plan(2 * NOBJECTS + 2);
	if (geteuid() != 0)
		fprintf(stderr, "test_corebtf: not root: no BPF object can be loaded\n");
	for (size_t k = 0; k < NOBJECTS; k++)
		object(k);
	cut_short();
	return test_report();
}
