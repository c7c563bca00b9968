/* test_unwindtablesroom — the room in unwind_rows (lib/collect/unwindtablesroom.h):
 * tables placed first fit in the extents freed, neighbours merged, the top
 * brought down by an extent that ends there, the smallest extent let go
 * (counted) when the list is full; and, as root, with a real file index
 * (a BPF hash): a table whose file no process maps is evicted (its entry
 * gone, its rows reused), one whose file this process maps never is. */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "stacks.h"
#include "test.h"
#include "unwindtablesroom.h"

/* Without a file index (fd -1): place and give only. */
static void extents(void)
{
	struct unwindtables_room r = { 0 };
	struct unwindtables_evictions ev = { 0 };
	uint32_t top = 0;
	uint32_t a = unwindtablesroom_place(&r, &top, 100, 10, -1, &ev);
	uint32_t b = unwindtablesroom_place(&r, &top, 100, 20, -1, &ev);
	uint32_t c = unwindtablesroom_place(&r, &top, 100, 30, -1, &ev);
	uint32_t d = unwindtablesroom_place(&r, &top, 100, 5, -1, &ev);
	test_cond("room: tables one after the other from the top", a == 0 && b == 10 && c == 30 && d == 60 && top == 65);
	unwindtablesroom_give(&r, &top, a, 10);
	unwindtablesroom_give(&r, &top, c, 30);
	test_cond("room: two extents freed, apart", r.nfree == 2 && unwindtablesroom_free_words(&r) == 40 && top == 65);
	uint32_t e = unwindtablesroom_place(&r, &top, 100, 25, -1, &ev);
	test_cond("room: first fit (not the first extent, too small)", e == 30 && r.nfree == 2 && r.free[1].off == 55);
	unwindtablesroom_give(&r, &top, b, 20);
	test_cond("room: merged with the one before (0..30)",
		  r.nfree == 2 && r.free[0].off == 0 && r.free[0].words == 30 && r.free[1].off == 55);
	unwindtablesroom_give(&r, &top, e, 25);
	test_cond("room: merged on both sides (0..60)", r.nfree == 1 && r.free[0].off == 0 && r.free[0].words == 60);
	unwindtablesroom_give(&r, &top, d, 5);
	test_cond("room: an extent ending at the top brings it down", r.nfree == 0 && top == 0);
	ev.fruitless_until_ns = UINT64_MAX;	/* no scan: fd -1 is no index */
	top = 95;
	test_cond("room: no place when neither an extent nor the top holds it",
		  unwindtablesroom_place(&r, &top, 100, 6, -1, &ev) == UNWINDTABLESROOM_NONE && top == 95 &&
			  unwindtablesroom_place(&r, &top, 100, 101, -1, &ev) == UNWINDTABLESROOM_NONE);
	top = 10000;
	for (uint32_t i = 0; i < UNWINDTABLESROOM_EXTENTS + 1; i++)
		unwindtablesroom_give(&r, &top, i * 3, i == 7 ? 1 : 2);	/* every third word stays used */
	test_cond("room: the list full, its smallest extent let go, counted lost",
		  r.nfree == UNWINDTABLESROOM_EXTENTS && r.words_lost == 1 && r.free[7].off == 24);
}

/* An index entry for key: words words at off. */
static void index_file(int fd, struct unwind_file_key key, uint32_t off, uint32_t words)
{
	struct unwind_file v = { .row_off = off, .row_count = words - 1, .words = words };
	bpf_map_update_elem(fd, &key, &v, BPF_ANY);
}

/* A real index: an unmapped file's table evicted, this program's kept. */
static void evictions(void)
{
	struct unwindtables_room r = { 0 };
	struct unwindtables_evictions ev = { 0 };
	struct unwind_file v;
	struct stat self;
	uint32_t top = 0;
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "test_files", sizeof(struct unwind_file_key), sizeof(struct unwind_file),
				16, NULL);

	if (fd < 0 || stat("/proc/self/exe", &self) != 0) {
		printf("FAIL: room: cannot create the test index: %s\n", strerror(errno));
		test_failed++;
		return;
	}
	struct unwind_file_key mine = { .dev = (uint32_t)(major(self.st_dev) << 20 | minor(self.st_dev)),
					.ino = self.st_ino };
	struct unwind_file_key gone = { .dev = 0xfffff, .ino = 1 };	/* no device: nobody maps it */
	index_file(fd, mine, unwindtablesroom_place(&r, &top, 100, 40, fd, &ev), 40);
	index_file(fd, gone, unwindtablesroom_place(&r, &top, 100, 40, fd, &ev), 40);
	uint32_t third = unwindtablesroom_place(&r, &top, 100, 30, fd, &ev);
	printf("# evicted %llu file(s), %llu words, %llu scan(s) in %.3f ms, %llu process(es) unreadable\n",
	       (unsigned long long)ev.files, (unsigned long long)ev.words, (unsigned long long)ev.scans, ev.scan_ns / 1e6,
	       (unsigned long long)ev.maps_unreadable);
	test_cond("room: the table of a file nobody maps evicted, its rows reused",
		  third == 40 && ev.files == 1 && ev.words == 40 && ev.scans == 1 && r.generation == 1 &&
			  bpf_map_lookup_elem(fd, &gone, &v) != 0);
	test_cond("room: the table of a file this process maps kept",
		  bpf_map_lookup_elem(fd, &mine, &v) == 0 && v.row_off == 0);
	uint32_t more = unwindtablesroom_place(&r, &top, 100, 40, fd, &ev);
	test_cond("room: nothing to evict: no place, one more scan, then none for a while",
		  more == UNWINDTABLESROOM_NONE && ev.scans == 2 && ev.files == 1 &&
			  unwindtablesroom_place(&r, &top, 100, 40, fd, &ev) == UNWINDTABLESROOM_NONE && ev.scans == 2);
	close(fd);
}

int main(void)
{
	test_plan(11);
	extents();
	if (geteuid() != 0) {
		printf("SKIP: room: BPF maps need root\n");
		printf("PLAN: skip the rest\n");
		return test_report();
	}
	evictions();
	return test_report();
}
