/* task.bpf.h — the current task's pointer fields, read without costing the
 * verifier a search of the kernel's BTF.
 *
 * bpf_get_current_task_btf's pointer is trusted: at each load of a pointer
 * field from it (t->mm, t->utask) the verifier looks for the trust the load
 * may pass on, with up to four linear searches of the kernel's BTF for types
 * named like "task_struct__safe_trusted" (~0.9 ms each on 6.18, again at
 * every state it checks the load in: ~5 ms of callstack's 52-64 ms start).
 * The same memory read through bpf_rdonly_cast's untrusted pointer (to
 * void: Linux 6.17) is a load the JIT guards, as cheap, and costs no search.
 * task_cast_ok is set before load where the kernel takes such a cast
 * (lib/collect/taskcast.c probes it); elsewhere the trusted loads are made.
 * Helpers that take a task (bpf_task_pt_regs, bpf_find_vma) still get the
 * trusted pointer. */
#ifndef MARPLE_TASK_BPF_H
#define MARPLE_TASK_BPF_H

#include "kfuncs.bpf.h"

const volatile __u32 task_cast_ok = 0;

/* The word at offset off of kernel object p (0 where p is not readable):
 * only where task_cast_ok */
static __always_inline __u64 task_cast_word(const void *p, __u64 off)
{
	return *(const __u64 *)(kfunc_rdonly_cast(p, 0) + off);
}

/* The current task's mm (0: a kernel thread, or a task exiting) */
static __always_inline __u64 current_task_mm(void)
{
	struct task_struct *t = bpf_get_current_task_btf();

	if (task_cast_ok)
		return task_cast_word(t, bpf_core_field_offset(t->mm));
	return (__u64)t->mm;
}

/* The current task's mm, and its stack's start in *start_stack */
static __always_inline __u64 current_task_mm_stack(__u64 *start_stack)
{
	struct task_struct *t = bpf_get_current_task_btf();

	*start_stack = 0;
	if (task_cast_ok) {
		struct mm_struct *mm = (struct mm_struct *)task_cast_word(t, bpf_core_field_offset(t->mm));
		if (mm)
			*start_stack = task_cast_word(mm, bpf_core_field_offset(mm->start_stack));
		return (__u64)mm;
	}
	struct mm_struct *mm = t->mm;
	if (mm)
		*start_stack = mm->start_stack;
	return (__u64)mm;
}

/* The current task's uprobe state (utask), or 0 */
static __always_inline __u64 current_task_utask(void)
{
	struct task_struct *t = bpf_get_current_task_btf();

	if (task_cast_ok)
		return task_cast_word(t, bpf_core_field_offset(t->utask));
	return (__u64)t->utask;
}

#endif
