/* test_framemerge.c — an interpreter's frames put in place of the native
 * activations that ran them (framemerge_run): Ruby's VM loop left out after
 * each activation, and each Ruby C method just before its C function's
 * native frame; one whose function is known but not in the stack last
 * before the next activation or the leaf; one whose function is not known
 * where its activation's Ruby frames end. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "framemerge.h"
#include "test.h"

#include <linux/types.h>
#include "python.h"

#define ENTRY (1ull << 63)

/* A native frame: its name and its code's address (the eval loop at 0x1000,
 * the VM loop at 0x2000, C functions at 0x3000 and up, 0x100 each) */
struct nat { const char *name; uint64_t pc; };

/* Merge natives (root first) with words (leaf first, names wname[]) and
 * compare the names, root first, with want ("a;b;c"). */
static int merged_is(const struct nat *nat, int n, const uint64_t *words, const char *const *wname, int m,
		     const struct framemerge_cmethod *cm, const char *want)
{
	uint64_t ips[64];
	const char *native[64];
	char got[1024] = "";
	for (int i = 0; i < n; i++) {
		native[i] = nat[i].name;
		ips[n - 1 - i] = nat[i].pc + (i < n - 1);	/* return addresses but the leaf's */
	}
	struct framemerge_stack s = { .ips = ips, .n = n, .native = native, .words = words, .m = m, .cmethod = cm,
				      .eval_lo = 0x1000, .eval_hi = 0x1100, .loop_lo = 0x2000, .loop_hi = 0x2100,
				      .native_whole = 1 };
	struct framemerge_result r;
	framemerge_run(&s, &r);
	for (size_t i = 0; i < r.nout; i++) {
		strcat(got, i ? ";" : "");
		strcat(got, r.out[i].word >= 0 ? wname[r.out[i].word] : r.out[i].native);
	}
	free(r.out);
	if (strcmp(got, want) != 0) {
		printf("# got  %s\n# want %s\n", got, want);
		return 0;
	}
	return r.merged == 1;
}

int main(void)
{
	test_plan(3);
	/* Object#settle_sorted calls Enumerable#sort_by (enum_sort_by), whose
	 * rb_block_call calls Array#each (rb_ary_each), whose rb_yield runs
	 * the block in an activation of its own */
	static const struct nat sort[] = {
		{ "_start", 0x3000 }, { "main", 0x3100 }, { "rb_vm_exec", 0x1000 }, { "vm_exec_core", 0x2000 },
		{ "vm_call_cfunc", 0x3200 }, { "enum_sort_by", 0x3300 }, { "rb_block_call", 0x3400 },
		{ "rb_ary_each", 0x3500 }, { "rb_yield", 0x3600 }, { "rb_vm_exec", 0x1010 }, { "vm_exec_core", 0x2010 },
	};
	static const uint64_t sort_words[] = { 10 | ENTRY, 11, 12, 13, 14 | ENTRY };
	static const char *const sort_names[] = { "block", "Array#each", "Enumerable#sort_by", "settle_sorted", "<main>" };
	static const struct framemerge_cmethod sort_cm[] = {
		{ 0, 0, 0 }, { 1, 0x3500, 0x3600 }, { 1, 0x3300, 0x3400 }, { 0, 0, 0 }, { 0, 0, 0 },
	};
	test_cond("framemerge: each C method just before its C function's frame, the VM loop left out",
		  merged_is(sort, 11, sort_words, sort_names, 5, sort_cm,
			    "_start;main;<main>;settle_sorted;vm_call_cfunc;Enumerable#sort_by;enum_sort_by;"
			    "rb_block_call;Array#each;rb_ary_each;rb_yield;block"));
	/* Kernel#sleep sampled in the VM's call before its function runs */
	static const struct nat early[] = {
		{ "_start", 0x3000 }, { "main", 0x3100 }, { "rb_vm_exec", 0x1000 }, { "vm_exec_core", 0x2000 },
		{ "vm_call_cfunc", 0x3200 },
	};
	static const uint64_t sleep_words[] = { 20, 21, 22 | ENTRY };
	static const char *const sleep_names[] = { "Kernel#sleep", "settle", "<main>" };
	static const struct framemerge_cmethod sleep_cm[] = { { 1, 0x3700, 0x3800 }, { 0, 0, 0 }, { 0, 0, 0 } };
	test_cond("framemerge: a C method whose function is not in the stack yet goes at the leaf",
		  merged_is(early, 5, sleep_words, sleep_names, 3, sleep_cm,
			    "_start;main;<main>;settle;vm_call_cfunc;Kernel#sleep"));
	/* an extension's C method (its function in another file: not known) */
	static const struct nat ext[] = {
		{ "_start", 0x3000 }, { "main", 0x3100 }, { "rb_vm_exec", 0x1000 }, { "vm_exec_core", 0x2000 },
		{ "vm_call_cfunc", 0x3200 }, { "generate_json", 0x9000 },
	};
	static const struct framemerge_cmethod ext_cm[] = { { 1, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 } };
	static const char *const ext_names[] = { "JSON#generate", "settle", "<main>" };
	test_cond("framemerge: a C method whose function is not known stays after its Ruby frames",
		  merged_is(ext, 6, sleep_words, ext_names, 3, ext_cm,
			    "_start;main;<main>;settle;JSON#generate;vm_call_cfunc;generate_json"));
	return test_report();
}
