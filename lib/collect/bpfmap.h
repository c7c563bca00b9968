/* bpfmap.h — reading BPF maps from user space the way the collectors do at
 * the end of a capture: every element of a hash map, or one per-CPU counter
 * summed over the CPUs.
 *
 *   static void one(const void *key, const void *value, void *arg) { ... }
 *   uint64_t n = bpfmap_each(bpf_map__fd(skel->maps.start), sizeof(uint32_t),
 *                            sizeof(struct start), one, NULL);
 *   uint64_t lost = bpfmap_percpu_sum(bpf_map__fd(skel->maps.stack_counters), 0);
 */
#ifndef MARPLE_BPFMAP_H
#define MARPLE_BPFMAP_H

#include <stddef.h>
#include <stdint.h>

/* Call fn for each element of the map (keys of key_size bytes, values of
 * value_size): the one walker of BPF maps, in batches of elements where the
 * kernel can (one at a time where not); an element deleted meanwhile is
 * passed over.  Returns how many fn was called for. */
uint64_t bpfmap_each(int fd, size_t key_size, size_t value_size,
		     void (*fn)(const void *key, const void *value, void *arg), void *arg);

/* The sum over the CPUs of the u64 at key of a per-CPU array; 0 if unreadable. */
uint64_t bpfmap_percpu_sum(int fd, uint32_t key);

/* A BPF_F_MMAPABLE array mapped into this process as far as it is used.
 * The kernel maps every page of such a mapping when it is made
 * (remap_vmalloc_range), so a whole array counts in our resident memory,
 * used or not: the unwind tables' 32 MiB of rows held 29 MiB never written
 * in a second's capture.  A view reserves the address space of the whole
 * array and maps a prefix of it, grown as the user side writes further
 * (the kernel's copy is the same, whole, either way), or only the window
 * written now, let go after (the unwind rows: a second's capture of a build
 * wrote 14 MB of rows, never read back by us):
 *
 *   struct bpfmap_view v;
 *   bpfmap_view_open(&v, fd, PROT_READ | PROT_WRITE);  // nothing mapped yet
 *   if (bpfmap_view_reach(&v, end) == 0) ... v.base[0..end) ...
 *   if (bpfmap_view_window(&v, start, end) == 0) ... v.base[start..end) ...
 *   bpfmap_view_let_go(&v);                            // nothing mapped again
 *   bpfmap_view_close(&v);
 */
struct bpfmap_view {
	char *base;		/* the array's first byte (reserved, mapped up to mapped) */
	size_t len;		/* the array's bytes, to a page */
	size_t mapped;		/* base[0..mapped) is mapped */
	int fd, prot;
};
/* Reserve fd's array, nothing mapped.  0, or -1 (errno) if it is no
 * mmapable array or there is no address space. */
int bpfmap_view_open(struct bpfmap_view *v, int fd, int prot);
/* base[0..end) mapped (grown in steps of BPFMAP_VIEW_STEP): 0, or -1 if end
 * is past the array or mmap failed. */
#define BPFMAP_VIEW_STEP (256u << 10)
int bpfmap_view_reach(struct bpfmap_view *v, size_t end);
/* base[start..end) mapped (to whole pages), whatever was before: 0, or -1
 * if the window is empty or past the array, or mmap failed. */
int bpfmap_view_window(struct bpfmap_view *v, size_t start, size_t end);
/* Every page mapped back to the reservation: not resident in us any more
 * (the array keeps its contents). */
void bpfmap_view_let_go(struct bpfmap_view *v);
void bpfmap_view_close(struct bpfmap_view *v);

/* A uint32_t of a BPF object's .rodata by its name, before load (as a
 * skeleton's rodata is set, for objects opened without one): its value, or
 * dflt where it has none; set, if it has it. */
struct bpf_object;
uint32_t bpfmap_rodata_get(struct bpf_object *obj, const char *name, uint32_t dflt);
void bpfmap_rodata_set(struct bpf_object *obj, const char *name, uint32_t value);
/* The fd of obj's map name, loaded; -1 where it has none. */
int bpfmap_fd(struct bpf_object *obj, const char *name);

#endif
