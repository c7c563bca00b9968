/* runtimelayouts.c — which frame layout a process's interpreter uses
 * (see runtimelayouts.h). */
#include "runtimelayouts.h"

#include <stdio.h>
#include <string.h>

#include "perllayout.h"
#include "phplayout.h"
#include "pycodes.h"
#include "pyelf.h"
#include "pylayout.h"
#include "rubylayout.h"

#include <linux/types.h>
#include "python.h"

static int read_cstr(pid_t pid, uint64_t addr, char *buf, size_t len)
{
	if (pycodes_read_mem(pid, addr, buf, len) != 0)
		return -1;
	buf[len - 1] = 0;
	return 0;
}

/* Does PyCode_Type's member table put the members we read where the
 * layout does?  (The process's own word on the code object, whichever way
 * the layout was found; before 3.11 co_name stands for co_qualname.) */
static int layout_checks(pid_t pid, const struct pyproc *p)
{
	const char *const names[] = { "co_filename", p->lay.minor >= 11 ? "co_qualname" : "co_name",
				      p->lay.lines == PYLAYOUT_LNOTAB ? "co_lnotab" : "co_linetable",
				      "co_firstlineno" };
	const uint16_t want[] = { p->lay.code_filename, p->lay.code_qualname, p->lay.code_linetable,
				  p->lay.code_firstlineno };
	int found = 0;
	uint64_t members;

	if (pycodes_read_u64(pid, p->code_type + TYPE_MEMBERS, &members) != 0 || !members)
		return -1;
	for (int i = 0; i < 64; i++) {
		uint64_t m[5];		/* PyMemberDef: name, type, offset, flags, doc */
		char name[32];
		if (pycodes_read_mem(pid, members + i * 40, m, sizeof(m)) != 0 || !m[0])
			break;
		if (read_cstr(pid, m[0], name, sizeof(name)) != 0)
			continue;
		for (int k = 0; k < 4; k++) {
			if (strcmp(name, names[k]) == 0) {
				if (m[2] != want[k])
					return -1;
				found++;
			}
		}
	}
	return found == 4 ? 0 : -1;
}

/* p's version (Py_Version from 3.11, else what its symbols say): its major
 * and minor, or NULL with why not. */
static const char *version_of(struct pyproc *p, const struct pyelf *py, uint64_t bias, unsigned *major,
			      unsigned *minor)
{
	uint64_t hex = 0;
	int by_symbols = pylayout_minor_of(py->syms);

	if (py->version) {
		if (pycodes_read_u64((pid_t)p->pid, py->version + bias, &hex) != 0) {
			snprintf(p->version, sizeof(p->version), "3");
			p->refused_early = 1;
			return "its Py_Version cannot be read";
		}
		*major = (unsigned)(hex >> 24) & 0xff, *minor = (unsigned)(hex >> 16) & 0xff;
		snprintf(p->version, sizeof(p->version), "%u.%u.%u", *major, *minor, (unsigned)(hex >> 8) & 0xff);
		return NULL;
	}
	if (by_symbols <= 0) {
		snprintf(p->version, sizeof(p->version), "2");
		return "Python 2 is not walked";
	}
	*major = 3, *minor = (unsigned)by_symbols;
	snprintf(p->version, sizeof(p->version), "3.%d", by_symbols);
	return NULL;
}

/* p's layout: the built-in table of its version, the _Py_DebugOffsets the
 * interpreter keeps (3.13+) when there is none, both checked one against
 * the other when there are both (the interpreter's own word wins).  NULL,
 * or why it is not walked. */
static const char *choose_layout(struct pyproc *p, unsigned major, unsigned minor, const char **how,
				 char *note, size_t note_len)
{
	const struct pylayout *table = pylayout_table(major, minor);
	struct pylayout own;
	const char *own_why = NULL;
	int own_rc = -1;

	if (major == 3 && minor >= 13) {
		unsigned char buf[PYLAYOUT_DEBUG_BYTES];
		uint64_t hex;
		if (pycodes_read_mem((pid_t)p->pid, p->runtime, buf, sizeof(buf)) != 0)
			own_why = "its _PyRuntime cannot be read", p->refused_early = 1;
		else
			own_rc = pylayout_from_debug_offsets(buf, sizeof(buf), &own, &hex, &own_why);
	}
	if (own_rc == -2)
		return own_why;		/* free-threaded: no table is right either */
	if (own_rc == 0 && table) {
		char what[96];
		if (!pylayout_differ(table, &own, what, sizeof(what))) {
			p->lay = *table;
			p->by_table = 1;
			*how = "table+debug_offsets";
			return NULL;
		}
		snprintf(note, note_len, "its _Py_DebugOffsets disagree with marple's table (%s); walked with its own",
			 what);
		p->lay = own;
		*how = "debug_offsets(disagreeing)";
		return NULL;
	}
	if (own_rc == 0) {
		p->lay = own;
		*how = "debug_offsets";
		return NULL;
	}
	if (table) {
		p->lay = *table;
		p->by_table = 1;
		*how = "table";
		return NULL;
	}
	return own_why ? own_why : "no frame layout is known for that version";
}

/* A PHP's version and layout, its file's: the built-in table's for its
 * module API number.  NULL, or why it is not walked. */
static const char *php_choose(struct pyproc *p, const struct pyelf *py)
{
	snprintf(p->version, sizeof(p->version), "%s", py->php_version);
	if (!py->php_api)
		return "its module API number cannot be found (a thread-safe build?)";
	p->php = phplayout_table(py->php_api);
	p->by_table = 1;
	return p->php ? NULL : "no frame layout is known for its module API";
}

/* Does the process's interpreter look as p's layout says (a build of the
 * same version with other options, -DDEBUGGING's, moves its members)?
 * Its stack info's context stack is there and its index in range, and its
 * main CV, once perl_parse has made one, is a CV: 0, or -1 when not. */
static int perl_layout_checks(const struct pyproc *p)
{
	const struct perllayout *l = p->perl;
	pid_t pid = (pid_t)p->pid;
	uint64_t interp, si, cxstack, main_cv, head[2];
	int32_t ix;

	if (pycodes_read_u64(pid, p->runtime, &interp) != 0 || !interp)
		return 0;	/* not made yet: nothing to contradict the table */
	if (pycodes_read_u64(pid, interp + l->interp_curstackinfo, &si) != 0 || !si ||
	    pycodes_read_u64(pid, si + l->si_cxstack, &cxstack) != 0 || !cxstack ||
	    pycodes_read_mem(pid, si + l->si_cxix, &ix, 4) != 0 || ix < -1 || ix > 1 << 20 ||
	    pycodes_read_u64(pid, interp + l->interp_main_cv, &main_cv) != 0)
		return -1;
	if (main_cv && (pycodes_read_mem(pid, main_cv, head, sizeof(head)) != 0 ||
			((head[1] >> 32) & 0xff) != PERL_SVT_PVCV))
		return -1;
	return 0;
}

/* A Perl's version and layout, its file's: the built-in table's for its
 * version.  NULL, or why it is not walked. */
static const char *perl_choose(struct pyproc *p, const struct pyelf *py)
{
	const unsigned *v = py->perl_version;
	snprintf(p->version, sizeof(p->version), "%u.%u.%u", v[0], v[1], v[2]);
	if (!py->perl_threads)
		return "built without ithreads (its interpreter's variables are not one struct)";
	p->perl = perllayout_table(v[0], v[1]);
	p->by_table = 1;
	if (!p->perl)
		return "no frame layout is known for that version";
	if (perl_layout_checks(p) == 0)
		return NULL;
	p->refused_early = 1;
	return "its interpreter is not laid out as expected";
}

/* Is a CRuby's thread-local ruby_current_ec where its file says (py's
 * GOT slot holds its TLS module id; glibc's dtv at the thread pointer +
 * 8)?  Tried on the main thread th, whose pthread_t (its thread pointer)
 * and ec its VM holds: 1, or 0 when it is not, or not known yet (no VM). */
static int ruby_tls_checks(const struct pyproc *p, const struct pyelf *py, uint64_t th, uint64_t ec)
{
	pid_t pid = (pid_t)p->pid;
	uint64_t self, modid, dtv, block, found;

	if (!py->ruby_tls_slot || py->ruby_tls_slot - py->runtime + (1ull << 31) >= 1ull << 32)
		return 0;
	if (!th || !ec)
		return 1;	/* not made yet: each sample checks its own (bpf) */
	return pycodes_read_u64(pid, th + p->ruby->thread_id, &self) == 0 &&
	       pycodes_read_u64(pid, py->ruby_tls_slot + p->ruby_bias, &modid) == 0 &&
	       pycodes_read_u64(pid, self + 8, &dtv) == 0 && modid && modid < 1 << 16 &&
	       pycodes_read_u64(pid, dtv + modid * 16, &block) == 0 &&
	       pycodes_read_u64(pid, block + py->ruby_tls_offset, &found) == 0 && found == ec;
}

/* A CRuby's version and layout: the built-in table's for its version,
 * checked against its VM when it has one yet (its main thread's control
 * frames lie in its VM stack, its first frame not pushed yet at the
 * stack's end).  NULL, or why it is not walked. */
static const char *ruby_choose(struct pyproc *p, const struct pyelf *py)
{
	const struct rubylayout *l = rubylayout_table(py->ruby_major, py->ruby_minor);
	pid_t pid = (pid_t)p->pid;
	uint64_t vm = 0, th = 0, ec = 0, stack = 0, size = 0, cfp = 0;

	snprintf(p->version, sizeof(p->version), "%s", py->ruby_version);
	if (!l)
		return "no frame layout is known for that version";
	p->refused_early = 1;	/* from here on: what its memory says */
	if (pycodes_read_u64(pid, p->runtime, &vm) != 0)
		return "its ruby_current_vm_ptr cannot be read";
	/* a VM being made (ruby's first samples) has no main thread, no ec,
	 * no frame yet: what there is must fit */
	if ((vm && pycodes_read_u64(pid, vm + l->vm_main_thread, &th) != 0) ||
	    (th && pycodes_read_u64(pid, th + l->thread_ec, &ec) != 0) ||
	    (ec && (pycodes_read_u64(pid, ec + l->ec_vm_stack, &stack) != 0 ||
		    pycodes_read_u64(pid, ec + l->ec_vm_stack_size, &size) != 0 ||
		    pycodes_read_u64(pid, ec + l->ec_cfp, &cfp) != 0)) ||
	    (stack && cfp && (cfp < stack || cfp > stack + size * 8)))
		return "its VM is not laid out as expected";
	p->refused_early = 0;
	p->ruby = l;
	p->by_table = 1;
	p->ruby_elf = py;
	p->ruby_bias = p->runtime - py->runtime;
	/* global_symbols as found in the file, checked as each name is read
	 * (its ids an Array; early on it is not yet) */
	p->ruby_symbols = py->ruby_symbols ? py->ruby_symbols + p->ruby_bias : 0;
	p->ruby_threads = ruby_tls_checks(p, py, th, ec);
	return NULL;
}

const char *runtimelayouts_choose(struct pyproc *p, const struct pyelf *py, uint64_t bias, const char **how,
				  char *note, size_t note_len)
{
	unsigned major = 0, minor = 0;
	const char *why;

	note[0] = 0;
	if (p->lang != PYPROC_PYTHON) {
		*how = "table";
		return p->lang == PYPROC_PHP ? php_choose(p, py) : p->lang == PYPROC_PERL ? perl_choose(p, py)
											: ruby_choose(p, py);
	}
	why = version_of(p, py, bias, &major, &minor);
	if (!why)
		why = choose_layout(p, major, minor, how, note, note_len);
	if (!why && layout_checks((pid_t)p->pid, p) != 0) {
		p->refused_early = 1;	/* (PyCode_Type's members not relocated yet?) */
		why = "its code objects are not laid out as expected";
	}
	return why;
}
