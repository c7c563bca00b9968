/* test_bpfmap — a BPF array mapped as far as it is used (bpfmap_view,
 * lib/collect/bpfmap.h): nothing of it resident until reached, a reached
 * prefix the very array (written here, read by the kernel at the same
 * index, across the steps it grew by), nothing past its end. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bpfmap.h"
#include "test.h"

#define ELEM 4096u
#define NELEM 2048u	/* 8 MiB */

/* Resident KiB of this process. */
static long resident_kb(void)
{
	long size = 0, pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld %ld", &size, &pages) != 2)
		pages = -1;
	fclose(f);
	return pages < 0 ? -1 : pages * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Element key as the kernel has it: its first bytes, or "" if unreadable. */
static const char *kernel_elem(int fd, uint32_t key)
{
	static char v[ELEM];
	if (bpf_map_lookup_elem(fd, &key, v) != 0)
		return "";
	return v;
}

int main(void)
{
	test_plan(6);
	if (geteuid() != 0) {
		printf("SKIP: bpfmap: BPF maps need root\n");
		printf("PLAN: skip the rest\n");
		return 0;
	}
	LIBBPF_OPTS(bpf_map_create_opts, mmapable, .map_flags = BPF_F_MMAPABLE);
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "test_view", 4, ELEM, NELEM, &mmapable);
	int hash = bpf_map_create(BPF_MAP_TYPE_HASH, "test_hash", 4, 8, 16, NULL);
	if (fd < 0 || hash < 0) {
		printf("FAIL: bpfmap: cannot create the test maps: %s\n", strerror(errno));
		return 1;
	}
	struct bpfmap_view v, h;
	long before = resident_kb();
	int opened = bpfmap_view_open(&v, fd, PROT_READ | PROT_WRITE);
	long after_open = resident_kb();
	printf("# resident %ld KiB, %ld after opening a view of 8 MiB\n", before, after_open);
	test_cond("a view of an 8 MiB array is opened with none of it resident",
		  opened == 0 && v.len == (size_t)NELEM * ELEM && v.mapped == 0 && after_open - before < 1024);

	int reached = bpfmap_view_reach(&v, 700u << 10);	/* into the third step */
	long after_reach = resident_kb();
	printf("# resident %ld KiB after reaching 700 KiB (mapped %zu)\n", after_reach, v.mapped);
	test_cond("reaching 700 KiB maps its steps, and only they are resident",
		  reached == 0 && v.mapped == 3 * BPFMAP_VIEW_STEP && after_reach - after_open <= 3 * BPFMAP_VIEW_STEP / 1024 + 256);

	strcpy(v.base + 0, "first");
	strcpy(v.base + 170 * ELEM, "in the third step");
	test_cond("what is written through it is the array's, at the same index",
		  strcmp(kernel_elem(fd, 0), "first") == 0 && strcmp(kernel_elem(fd, 170), "in the third step") == 0);

	int whole = bpfmap_view_reach(&v, v.len);
	strcpy(v.base + (size_t)(NELEM - 1) * ELEM, "last");
	test_cond("reached to its end, the last element is the array's",
		  whole == 0 && v.mapped == v.len && strcmp(kernel_elem(fd, NELEM - 1), "last") == 0 &&
		  strcmp(v.base + 170 * ELEM, "in the third step") == 0);
	test_cond("nothing past its end", bpfmap_view_reach(&v, v.len + 1) == -1);
	bpfmap_view_close(&v);

	test_cond("a hash map is no view", bpfmap_view_open(&h, hash, PROT_READ) == -1 && errno == EINVAL);
	close(fd);
	close(hash);
	return test_report();
}
