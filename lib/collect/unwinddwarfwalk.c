/* unwinddwarfwalk.c — libunwind over copied user stacks (see unwinddwarfwalk.h).
 *
 * Remote unwinding: our accessors serve memory reads from the copied stack
 * and, for everything else (.eh_frame_hdr, .eh_frame), from the mmapped ELF
 * files of lib/syms; find_proc_info hands libunwind the binary-search table
 * of the file's .eh_frame_hdr. */
#include "unwinddwarfwalk.h"

#include <libunwind.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Exported by libunwind but not declared in its headers (perf declares it too). */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t *di,
					      unw_proc_info_t *pi, int need_unwind_info, void *arg);
#define dwarf_search_unwind_table UNW_OBJ(dwarf_search_unwind_table)

#define NAS 1024

struct as_entry {
	pid_t pid;
	uint64_t exec_id;
	unw_addr_space_t as;
	struct as_entry *next;
};

struct unwinder {
	struct syms_cache *syms;
	struct as_entry *tab[NAS];
	struct unwind_stats st;
	/* the sample being unwound */
	pid_t pid;
	uint64_t exec_id;
	const struct user_stack *us;
	uint64_t ip;			/* the first frame's PC as libunwind is told it */
	int no_info, past_end;
};

/* DW_EH_PE encodings used by .eh_frame_hdr */
#define DW_EH_PE_udata4 0x03
#define DW_EH_PE_sdata4 0x0b
#define DW_EH_PE_pcrel 0x10
#define DW_EH_PE_datarel 0x30

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, int need_unwind_info,
			  void *arg)
{
	struct unwinder *u = arg;
	struct syms_map m;
	unsigned char hdr[12];

	if (syms_cache_map_exec(u->syms, u->pid, u->exec_id, ip, &m) < 0 || !m.eh_frame_hdr) {
		u->no_info = 1;
		return -UNW_ENOINFO;
	}
	uint64_t hdr_rt = m.eh_frame_hdr + (uint64_t)m.bias;
	if (syms_cache_read_exec(u->syms, u->pid, u->exec_id, hdr_rt, hdr, sizeof(hdr)) < 0 || hdr[0] != 1 ||
	    hdr[2] != DW_EH_PE_udata4 || hdr[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4) ||
	    (hdr[1] & 0x0f) != DW_EH_PE_sdata4) {
		u->no_info = 1;
		return -UNW_ENOINFO;
	}
	uint32_t fde_count;
	memcpy(&fde_count, hdr + 8, 4);
	unw_dyn_info_t di;
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = m.lo;
	di.end_ip = m.hi;
	di.u.rti.segbase = hdr_rt;
	di.u.rti.table_data = hdr_rt + 12;
	di.u.rti.table_len = fde_count * 8 / sizeof(unw_word_t);
	int rc = dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, arg);
	if (rc < 0)
		u->no_info = 1;
	return rc;
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
	return -UNW_ENOINFO;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *valp, int write, void *arg)
{
	struct unwinder *u = arg;
	uint64_t sp = u->us->regs[UREG_SP];

	if (write)
		return -UNW_EINVAL;
	if (addr >= sp && addr + sizeof(*valp) <= sp + u->us->len && addr + sizeof(*valp) > addr) {
		memcpy(valp, u->us->data + (addr - sp), sizeof(*valp));
		return 0;
	}
	if (syms_cache_read_exec(u->syms, u->pid, u->exec_id, addr, valp, sizeof(*valp)) == 0)
		return 0;
	if (addr >= sp && addr < sp + 1024 * 1024)
		u->past_end = 1;
	*valp = 0;
	return -UNW_EINVAL;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *valp, int write, void *arg)
{
	struct unwinder *u = arg;
	int i;

	if (write)
		return -UNW_EINVAL;
	switch (reg) {
	case UNW_X86_64_RIP: i = UREG_IP; break;
	case UNW_X86_64_RSP: i = UREG_SP; break;
	case UNW_X86_64_RBP: i = UREG_BP; break;
	case UNW_X86_64_RBX: i = UREG_BX; break;
	case UNW_X86_64_R12: i = UREG_R12; break;
	case UNW_X86_64_R13: i = UREG_R13; break;
	case UNW_X86_64_R14: i = UREG_R14; break;
	case UNW_X86_64_R15: i = UREG_R15; break;
	default:
		*valp = 0;	/* caller-saved: not needed to find callers */
		return 0;
	}
	*valp = i == UREG_IP ? u->ip : u->us->regs[i];
	return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write, void *arg)
{
	return -UNW_EINVAL;
}

static int resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len, unw_word_t *off,
			 void *arg)
{
	return -UNW_EINVAL;
}

static unw_accessors_t accessors = {
	.find_proc_info = find_proc_info,
	.put_unwind_info = put_unwind_info,
	.get_dyn_info_list_addr = get_dyn_info_list_addr,
	.access_mem = access_mem,
	.access_reg = access_reg,
	.access_fpreg = access_fpreg,
	.resume = resume,
	.get_proc_name = get_proc_name,
};

struct unwinder *unwind_new(struct syms_cache *syms)
{
	struct unwinder *u = marple_calloc(1, sizeof(*u));
	u->syms = syms;
	return u;
}

void unwind_free(struct unwinder *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < NAS; i++)
		for (struct as_entry *e = u->tab[i], *n; e; e = n) {
			n = e->next;
			unw_destroy_addr_space(e->as);
			free(e);
		}
	free(u);
}

/* One address space (and libunwind cache) per image of a process. */
static unw_addr_space_t addr_space(struct unwinder *u, pid_t pid, uint64_t exec_id)
{
	size_t b = (uint32_t)pid % NAS;
	for (struct as_entry *e = u->tab[b]; e; e = e->next)
		if (e->pid == pid && e->exec_id == exec_id)
			return e->as;
	struct as_entry *e = marple_calloc(1, sizeof(*e));
	e->pid = pid;
	e->exec_id = exec_id;
	e->as = unw_create_addr_space(&accessors, 0);
	if (!e->as) {
		marple_warn("libunwind: cannot create an address space");
		free(e);
		return NULL;
	}
	unw_set_caching_policy(e->as, UNW_CACHE_GLOBAL);
	e->next = u->tab[b];
	u->tab[b] = e;
	return e->as;
}

/* ips from the copied stack's first frame on; that frame's rules are
 * looked up at lookup_ip */
static int walk(struct unwinder *u, pid_t pid, uint64_t exec_id, const struct user_stack *us, uint64_t lookup_ip,
		uint64_t *ips, int max)
{
	unw_cursor_t cur;
	int n = 0;
	uint64_t t0 = marple_now_monotonic_ns();
	unw_addr_space_t as = NULL;

	if (max <= 0 || us->regs[UREG_IP] == 0)
		return 0;
	if (us->len > 0 && !(as = addr_space(u, pid, exec_id)))
		return -1;
	u->pid = pid;
	u->exec_id = exec_id;
	u->us = us;
	u->ip = lookup_ip;
	u->no_info = u->past_end = 0;
	ips[n++] = us->regs[UREG_IP];
	if (us->len > 0 && unw_init_remote(&cur, as, u) == 0) {
		while (n < max && unw_step(&cur) > 0) {
			unw_word_t ip = 0;
			if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 || ip == 0)
				break;
			ips[n++] = ip;
		}
	}
	u->st.stacks++;
	u->st.frames += (uint64_t)n;
	u->st.stopped_no_info += u->no_info;
	u->st.stopped_stack_end += u->past_end;
	u->st.ns += marple_now_monotonic_ns() - t0;
	return n;
}

int unwind_stack(struct unwinder *u, pid_t pid, uint64_t exec_id, const struct user_stack *us, uint64_t *ips,
		 int max)
{
	return walk(u, pid, exec_id, us, us->regs[UREG_IP], ips, max);
}

int unwind_stack_caller(struct unwinder *u, pid_t pid, uint64_t exec_id, const struct user_stack *us,
			uint64_t *ips, int max)
{
	/* the call instruction's rules, before the return address: a call
	 * last in its function returns to the next function's first byte */
	return walk(u, pid, exec_id, us, us->regs[UREG_IP] - 1, ips, max);
}

void unwind_stats(const struct unwinder *u, struct unwind_stats *out)
{
	*out = u->st;
}
