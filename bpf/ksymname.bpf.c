// SPDX-License-Identifier: GPL-2.0
/* ksymname.bpf.c — kernel addresses to function names, asked of the kernel
 * itself (lib/collect/syms.c).
 *
 * Why: reading /proc/kallsyms costs ~37 ms of kernel CPU on every run (the
 * kernel formats all ~120,000 symbols), which was most of what a whole
 * capture cost marple-callstack.  A profile names a few hundred to a few
 * thousand distinct addresses; bpf_snprintf("%pB") looks each up in the
 * kernel's own sorted tables (binary search), including modules, BPF
 * programs and trampolines as they are now.
 *
 * User space fills addrs[0..count) through the mmapped .bss, runs the
 * program with BPF_PROG_RUN and reads names[i] ("func+0x1c/0x80 [module]",
 * or "0x..." for an address that is no symbol).  %pB looks up address-1 (it
 * is meant for return addresses), so user space passes address+1 to name
 * exactly the address it has. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "ksymname.h"

__u64 addrs[KSYMNAME_BATCH];
char names[KSYMNAME_BATCH][KSYMNAME_LEN];
__u32 count;

SEC("syscall")
int name_addrs(void *ctx)
{
	/* static const: the format must live in a read-only map */
	static const char fmt[] = "%pB";

	for (__u32 i = 0; i < KSYMNAME_BATCH; i++) {
		if (i >= count)
			break;
		__u64 a = addrs[i];
		bpf_snprintf(names[i], KSYMNAME_LEN, fmt, &a, sizeof(a));
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
