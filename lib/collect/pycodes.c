/* pycodes.c — the frame walker's cache of code objects (see pycodes.h). */
#include "pycodes.h"

#include <bpf/bpf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "hashtab.h"
#include "perllayout.h"
#include "phplayout.h"
#include "pyelf.h"
#include "rubylayout.h"
#include "util.h"

#include <linux/types.h>
#include "python.h"

int pycodes_read_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

int pycodes_read_u64(pid_t pid, uint64_t addr, uint64_t *v)
{
	return pycodes_read_mem(pid, addr, v, sizeof(*v));
}

/* A str object's text as UTF-8 (malloc'ed), cut after PY_NAME_MAX
 * characters ("[...]" then), or NULL. */
static char *read_str(pid_t pid, const struct pyproc *p, uint64_t addr)
{
	unsigned char h[80];
	uint64_t type, length;
	uint32_t state;

	if (!addr || p->lay.str_compact_data > sizeof(h) || pycodes_read_mem(pid, addr, h, p->lay.str_compact_data) != 0)
		return NULL;
	memcpy(&type, h + OB_TYPE, 8);
	memcpy(&length, h + STR_LENGTH, 8);
	memcpy(&state, h + STR_STATE, 4);
	unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
	if (type != p->unicode_type || !compact || (kind != 1 && kind != 2 && kind != 4))
		return NULL;
	int cut = length > PY_NAME_MAX;
	if (cut)
		length = PY_NAME_MAX;
	unsigned char *raw = marple_malloc(length * kind + 1);
	if (pycodes_read_mem(pid, addr + (ascii ? p->lay.str_ascii_data : p->lay.str_compact_data), raw, length * kind) != 0) {
		free(raw);
		return NULL;
	}
	char *out = marple_malloc(length * 4 + sizeof("[...]")), *o = out;
	for (uint64_t i = 0; i < length; i++) {
		uint32_t c = kind == 1 ? raw[i] : kind == 2 ? ((uint16_t *)raw)[i] : ((uint32_t *)raw)[i];
		if (c < 0x80) {
			*o++ = (char)c;
		} else if (c < 0x800) {
			*o++ = (char)(0xc0 | c >> 6), *o++ = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			*o++ = (char)(0xe0 | c >> 12), *o++ = (char)(0x80 | ((c >> 6) & 0x3f));
			*o++ = (char)(0x80 | (c & 0x3f));
		} else {
			*o++ = (char)(0xf0 | (c >> 18 & 7)), *o++ = (char)(0x80 | ((c >> 12) & 0x3f));
			*o++ = (char)(0x80 | ((c >> 6) & 0x3f)), *o++ = (char)(0x80 | (c & 0x3f));
		}
	}
	strcpy(o, cut ? "[...]" : "");
	free(raw);
	return out;
}

/* Tell the BPF side that code object addr of pid is named, as it is now: its
 * stacks need not wake us (py_codes).  A full map leaves it unknown. */
static void tell_known(struct pycodes *cc, uint32_t pid, uint64_t addr, const struct pycode *c)
{
	struct py_code_key k = { .tgid = pid, .code = addr };
	struct py_code_id v = { .qualname = c->qualname_ptr, .linetable = c->linetable_ptr };

	if (c->ok)
		bpf_map_update_elem(cc->codes_fd, &k, &v, BPF_ANY);
}

static size_t code_bytes(const struct pycode *c)
{
	return sizeof(*c) + (c->qualname ? strlen(c->qualname) + 1 : 0) + (c->filename ? strlen(c->filename) + 1 : 0) +
	       c->linetable_len;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Over PY_CODE_BUDGET: the least recently used half of the code objects
 * cached let go (their entries stay, read again if asked; a process gone
 * meanwhile names them "code object gone") */
static void evict_codes(struct pycodes *cc)
{
	uint64_t *used = marple_malloc(sizeof(*used) * (cc->n + 1));
	size_t n = 0;
	for (size_t i = 0; i < cc->n; i++)
		if (!cc->code[i].evicted)
			used[n++] = cc->code[i].used;
	qsort(used, n, sizeof(*used), cmp_u64);
	uint64_t cut = n ? used[n / 2] : 0;
	free(used);
	for (size_t i = 0; i < cc->n; i++) {
		struct pycode *c = &cc->code[i];
		if (c->evicted || c->used > cut)
			continue;
		cc->bytes -= code_bytes(c) - sizeof(*c);
		free(c->qualname);
		free(c->filename);
		free(c->linetable);
		c->qualname = c->filename = NULL;
		c->linetable = NULL;
		c->linetable_len = 0;
		c->ok = 0;
		c->evicted = 1;
		cc->evicted++;
	}
}

/* A Perl sub (CV) addr of p: ids its body (XPVCV), its GV (or name) and
 * the body again (what the BPF side checks, at the CV's start), first its
 * CvFLAGS; as code_ids returns */
static int perl_code_ids(const struct pyproc *p, uint64_t addr, uint64_t ids[3], int32_t *first)
{
	pid_t pid = (pid_t)p->pid;
	uint64_t head[2], gv;
	uint32_t flags;

	if (pycodes_read_mem(pid, addr, head, sizeof(head)) != 0 || !head[0] ||
	    pycodes_read_u64(pid, head[0] + p->perl->cv_gv, &gv) != 0 ||
	    pycodes_read_mem(pid, head[0] + p->perl->cv_flags, &flags, 4) != 0)
		return -1;
	ids[0] = ids[2] = head[0];
	ids[1] = gv;
	*first = (int32_t)flags;
	return ((head[1] >> 32) & 0xff) == PERL_SVT_PVCV;
}

/* What identifies Ruby code addr (code_ids): an iseq (its body, its
 * wrapper) or a method entry (its definition, its defined class), as the
 * BPF side checks them (py_known_step), told apart by the imemo's kind;
 * ids[1] addr.  *first the kind, RUBY_CODE_METHOD for the entry of a
 * method defined in Ruby. */
static int ruby_code_ids(const struct pyproc *p, uint64_t addr, uint64_t ids[3], int32_t *first)
{
	uint64_t o[3];
	uint32_t def_type;

	if (pycodes_read_mem((pid_t)p->pid, addr, o, sizeof(o)) != 0)
		return -1;
	ids[0] = o[2];
	ids[1] = addr;
	ids[2] = o[1];
	*first = (int32_t)(o[0] >> RUBY_IMEMO_SHIFT) & 0xf;
	if ((o[0] & RUBY_FLAGS_TYPE) != RUBY_T_IMEMO || (*first != RUBY_IMEMO_ISEQ && *first != RUBY_IMEMO_MENT))
		return 0;
	if (*first == RUBY_IMEMO_ISEQ)
		return 1;
	if (pycodes_read_mem((pid_t)p->pid, o[p->ruby->me_def / 8], &def_type, 4) != 0)
		return -1;
	if ((def_type & RUBY_METHOD_TYPE_MASK) == RUBY_METHOD_TYPE_ISEQ)
		*first = RUBY_CODE_METHOD;
	return 1;
}

/* What identifies code object addr of p as it is now: ids the objects it
 * points at (qualname, filename, line table), first its first line.  A PHP
 * function (zend_function) likewise: its function_name, op_array filename
 * (a user function's) and scope, first its type.  -1: unreadable (gone);
 * 0: not one (freed, its memory reused); 1: one. */
static int code_ids(const struct pyproc *p, uint64_t addr, uint64_t ids[3], int32_t *first)
{
	pid_t pid = (pid_t)p->pid;
	unsigned char o[256];
	uint64_t type = 0;

	ids[0] = ids[1] = ids[2] = 0;
	*first = 0;
	if (p->lang == PYPROC_PERL)
		return perl_code_ids(p, addr, ids, first);
	if (p->lang == PYPROC_PHP) {
		const struct phplayout *l = p->php;
		if (l->fn_name > 16 || l->fn_scope > 16 || pycodes_read_mem(pid, addr, o, 24) != 0)
			return -1;
		*first = o[0];
		memcpy(&ids[0], o + l->fn_name, 8);
		memcpy(&ids[2], o + l->fn_scope, 8);
		if (o[0] != PHP_INTERNAL_FUNCTION && pycodes_read_u64(pid, addr + l->fn_filename, &ids[1]) != 0)
			return -1;
		return o[0] == PHP_INTERNAL_FUNCTION || o[0] == PHP_USER_FUNCTION || o[0] == PHP_EVAL_CODE;
	}
	if (p->lang == PYPROC_RUBY)
		return ruby_code_ids(p, addr, ids, first);
	if (pycodes_read_mem(pid, addr, o, sizeof(o)) != 0)
		return -1;
	memcpy(&type, o + OB_TYPE, 8);
	memcpy(&ids[0], o + p->lay.code_qualname, 8);
	memcpy(&ids[1], o + p->lay.code_filename, 8);
	memcpy(&ids[2], o + p->lay.code_linetable, 8);
	memcpy(first, o + p->lay.code_firstlineno, 4);
	return type == p->code_type;
}

/* len bytes at addr of pid, cut after PY_NAME_MAX ("[...]" then), or
 * NULL; a NUL in them ends them. */
static char *counted_str(pid_t pid, uint64_t addr, uint64_t len)
{
	int cut = len > PY_NAME_MAX;
	if (cut)
		len = PY_NAME_MAX;
	char *out = marple_malloc(len + sizeof("[...]"));
	if (pycodes_read_mem(pid, addr, out, len) != 0) {
		free(out);
		return NULL;
	}
	strcpy(out + strnlen(out, len), cut ? "[...]" : "");
	return out;
}

/* A PHP string (zend_string) as its bytes (counted_str), or NULL */
static char *php_str(pid_t pid, uint64_t addr)
{
	uint64_t len;
	if (!addr || pycodes_read_u64(pid, addr + PHP_STR_LEN, &len) != 0)
		return NULL;
	return counted_str(pid, addr + PHP_STR_VAL, len);
}

/* A Perl HEK's key (counted_str), or NULL */
static char *perl_hek(pid_t pid, uint64_t addr)
{
	int32_t len;
	if (!addr || pycodes_read_mem(pid, addr + PERL_HEK_LEN, &len, 4) != 0 || len < 0)
		return NULL;
	return counted_str(pid, addr + PERL_HEK_KEY, (uint64_t)len);
}

/* A C string at addr of pid, cut after PY_NAME_MAX bytes ("[...]" then),
 * read a page at a time (one that ends on the last mapped page), or NULL */
static char *c_str(pid_t pid, uint64_t addr)
{
	char buf[PY_NAME_MAX + sizeof("[...]")];
	size_t have = 0;

	if (!addr)
		return NULL;
	while (have < PY_NAME_MAX) {
		size_t chunk = 4096 - (size_t)((addr + have) % 4096);
		if (chunk > PY_NAME_MAX - have)
			chunk = PY_NAME_MAX - have;
		if (pycodes_read_mem(pid, addr + have, buf + have, chunk) != 0)
			return NULL;
		size_t nul = strnlen(buf + have, chunk);
		have += nul;
		if (nul < chunk)
			break;
	}
	strcpy(buf + have, have == PY_NAME_MAX ? "[...]" : "");
	return marple_strdup(buf);
}

/* A Perl stash's name (HvNAME: in its aux part, the first of its names
 * when it has several), or NULL */
static char *perl_stash_name(const struct pyproc *p, uint64_t hv)
{
	pid_t pid = (pid_t)p->pid;
	uint64_t head[2], name;
	int32_t count;
	uint64_t aux;

	if (!hv || pycodes_read_mem(pid, hv, head, sizeof(head)) != 0 || !((head[1] >> 32) & PERL_SVF_OOK))
		return NULL;
	aux = head[0] + p->perl->hv_aux;
	if (pycodes_read_u64(pid, aux + p->perl->aux_name, &name) != 0 ||
	    pycodes_read_mem(pid, aux + p->perl->aux_name_count, &count, 4) != 0)
		return NULL;
	if (name && count && pycodes_read_u64(pid, name, &name) != 0)
		return NULL;
	return perl_hek(pid, name);
}

/* The member at offset off of a Perl's main interpreter: 0, or -1 */
static int perl_interp_u64(const struct pyproc *p, uint16_t off, uint64_t *v)
{
	uint64_t interp;
	if (pycodes_read_u64((pid_t)p->pid, p->runtime, &interp) != 0 || !interp)
		return -1;
	return pycodes_read_u64((pid_t)p->pid, interp + off, v);
}

/* A Perl sub's names: "Package::sub" (its GV's name and stash, or a
 * lexical sub's own name and CvSTASH), and its file (CvFILE); "{main}"
 * for PL_main_cv (the script's file, PL_origfilename), "(eval)" for an
 * eval's or a require's code (as caller() says; its CV has no file) */
static void perl_names(const struct pyproc *p, struct pycode *c, uint64_t addr)
{
	pid_t pid = (pid_t)p->pid;
	const struct perllayout *l = p->perl;
	uint64_t body = c->qualname_ptr, gv = c->filename_ptr, stash = 0, file = 0, gvbody = 0, name = 0;
	char *fn = NULL, *pkg = NULL;

	if (pycodes_read_u64(pid, body + l->cv_file, &file) != 0)
		return;
	c->filename = c_str(pid, file);
	if ((uint32_t)c->firstlineno & PERL_CVF_NAMED) {
		fn = perl_hek(pid, gv);
		if (pycodes_read_u64(pid, body + l->cv_stash, &stash) == 0)
			pkg = perl_stash_name(p, stash);
	} else if (gv && pycodes_read_u64(pid, gv, &gvbody) == 0 && gvbody &&
		   pycodes_read_u64(pid, gvbody + l->gv_name, &name) == 0) {
		fn = perl_hek(pid, name);
		if (pycodes_read_u64(pid, gvbody + l->gv_stash, &stash) == 0)
			pkg = perl_stash_name(p, stash);
	} else if (!gv) {
		uint64_t main_cv = 0, script = 0;
		int is_main = perl_interp_u64(p, l->interp_main_cv, &main_cv) == 0 && main_cv == addr;
		fn = marple_strdup(is_main ? "{main}" : "(eval)");
		free(c->filename);
		c->filename = is_main && perl_interp_u64(p, l->interp_origfilename, &script) == 0 ? c_str(pid, script) : NULL;
	}
	if (fn && pkg) {
		c->qualname = marple_malloc(strlen(pkg) + strlen(fn) + 3);
		sprintf(c->qualname, "%s::%s", pkg, fn);
		free(fn);
	} else {
		c->qualname = fn;
	}
	free(pkg);
}

/* A PHP function's names: "Class::function" (or the function's own; a
 * script's or an included file's code is "{main}") and its file (none
 * for an internal function) */
static void php_names(const struct pyproc *p, struct pycode *c)
{
	pid_t pid = (pid_t)p->pid;
	uint64_t class_name = 0;
	char *fn = c->qualname_ptr ? php_str(pid, c->qualname_ptr) : marple_strdup("{main}");
	char *cls = c->linetable_ptr && pycodes_read_u64(pid, c->linetable_ptr + p->php->ce_name, &class_name) == 0
			    ? php_str(pid, class_name)
			    : NULL;
	if (fn && cls) {
		c->qualname = marple_malloc(strlen(cls) + strlen(fn) + 3);
		sprintf(c->qualname, "%s::%s", cls, fn);
		free(fn);
	} else {
		c->qualname = fn;
	}
	free(cls);
	c->filename = php_str(pid, c->filename_ptr);
}

/* A Ruby String's bytes (embedded, or on the heap; counted_str), or NULL
 * if it is no String */
static char *ruby_str(pid_t pid, uint64_t addr)
{
	uint64_t h[4], len, at;
	if (!addr || (addr & 7) || pycodes_read_mem(pid, addr, h, sizeof(h)) != 0 ||
	    (h[0] & RUBY_FLAGS_TYPE) != RUBY_T_STRING)
		return NULL;
	if (h[0] & RUBY_STR_NOEMBED) {
		len = h[RUBY_STR_LEN / 8];
		at = h[RUBY_STR_PTR / 8];
	} else {
		len = (h[0] >> RUBY_STR_EMBED_SHIFT) & RUBY_STR_EMBED_MASK;
		at = addr + RUBY_STR_EMBED;
		if (len > RUBY_STR_EMBED_MAX)	/* a hostile length reads no further than its object */
			len = RUBY_STR_EMBED_MAX;
	}
	return counted_str(pid, at, len);
}

/* Element i of Ruby Array ary (embedded, or on the heap) into *v: 0, or -1 */
static int ruby_ary_at(pid_t pid, uint64_t ary, uint64_t i, uint64_t *v)
{
	uint64_t h[5];
	if (!ary || (ary & 7) || pycodes_read_mem(pid, ary, h, sizeof(h)) != 0 ||
	    (h[0] & RUBY_FLAGS_TYPE) != RUBY_T_ARRAY)
		return -1;
	if (h[0] & RUBY_ARY_EMBED)
		return i < ((h[0] >> RUBY_ARY_EMBED_SHIFT) & RUBY_ARY_EMBED_MASK) ? (*v = h[RUBY_ARY_ELEMS / 8 + i], 0) : -1;
	return i < h[RUBY_ARY_LEN / 8] ? pycodes_read_u64(pid, h[RUBY_ARY_PTR / 8] + i * 8, v) : -1;
}

/* The name of Ruby ID id (global_symbols.ids: an Array of Arrays of 512
 * entries of two, a String and a Symbol, by the ID's serial number), or
 * NULL; an operator's ID is its own serial number. */
static char *ruby_id_name(const struct pyproc *p, uint64_t id)
{
	pid_t pid = (pid_t)p->pid;
	uint64_t serial = id > RUBY_LAST_OP_ID ? id >> RUBY_ID_SCOPE_SHIFT : id, ids, chunk, str;
	uint32_t last = 0;
	if (!p->ruby_symbols || pycodes_read_mem(pid, p->ruby_symbols, &last, 4) != 0 || !serial || serial > last ||
	    pycodes_read_u64(pid, p->ruby_symbols + 16, &ids) != 0 || ruby_ary_at(pid, ids, serial / 512, &chunk) != 0 ||
	    ruby_ary_at(pid, chunk, serial % 512 * 2, &str) != 0)
		return NULL;
	return ruby_str(pid, str);
}

/* Instance variable name of Ruby class klass into *v (its iv_tbl, an
 * st_table, its first RUBY_IVARS_SCANNED entries): 0, or -1 */
#define RUBY_IVARS_SCANNED 32
static int ruby_class_ivar(const struct pyproc *p, uint64_t klass, const char *name, uint64_t *v)
{
	pid_t pid = (pid_t)p->pid;
	uint64_t ext, tbl, range[3], e[RUBY_IVARS_SCANNED * RUBY_ST_ENTRY / 8];

	if (pycodes_read_u64(pid, klass + p->ruby->class_ext, &ext) != 0 ||
	    pycodes_read_u64(pid, ext + p->ruby->ext_iv_tbl, &tbl) != 0 || !tbl ||
	    pycodes_read_mem(pid, tbl + RUBY_ST_START, range, sizeof(range)) != 0 || range[1] <= range[0])
		return -1;
	uint64_t n = range[1] - range[0] < RUBY_IVARS_SCANNED ? range[1] - range[0] : RUBY_IVARS_SCANNED;
	if (pycodes_read_mem(pid, range[2] + range[0] * RUBY_ST_ENTRY, e, n * RUBY_ST_ENTRY) != 0)
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		const uint64_t *entry = e + i * (RUBY_ST_ENTRY / 8);	/* its hash, key, value */
		char *key = entry[0] != UINT64_MAX ? ruby_id_name(p, entry[1]) : NULL;	/* ~0: deleted */
		int found = key && strcmp(key, name) == 0;
		free(key);
		if (found) {
			*v = entry[2];
			return 0;
		}
	}
	return -1;
}

/* Ruby class or module klass's name: one libruby exports (rb_cObject's
 * "Object"), its path ("Foo::Bar"), or an anonymous one's as Ruby says it
 * ("#<Class:0x...>"); NULL when klass is no class or module. */
static char *ruby_class_path(const struct pyproc *p, uint64_t klass)
{
	pid_t pid = (pid_t)p->pid;
	uint64_t flags, v, path;

	for (int i = 0; p->ruby_elf && i < p->ruby_elf->nruby_class; i++)
		if (pycodes_read_u64(pid, p->ruby_elf->ruby_class[i].addr + p->ruby_bias, &v) == 0 && v == klass)
			return marple_strdup(p->ruby_elf->ruby_class[i].name);
	if (!klass || (klass & 7) || pycodes_read_u64(pid, klass, &flags) != 0 ||
	    ((flags & RUBY_FLAGS_TYPE) != RUBY_T_CLASS && (flags & RUBY_FLAGS_TYPE) != RUBY_T_MODULE))
		return NULL;
	char *name = ruby_class_ivar(p, klass, "__classpath__", &path) == 0 ? ruby_str(pid, path) : NULL;
	if (name)
		return name;
	name = marple_malloc(sizeof("#<Module:0x>") + 16);
	sprintf(name, "#<%s:0x%016" PRIx64 ">", (flags & RUBY_FLAGS_TYPE) == RUBY_T_MODULE ? "Module" : "Class", klass);
	return name;
}

/* The name of the class owning a method and what goes between it and the
 * method's name, as Ruby's profilers say them: "Foo" and "#"; a singleton
 * class's, its object's: "Foo" and "." (a class method), or an object's
 * class "#<Foo:0x...>" and "."; NULL when unknown. */
static char *ruby_owner_name(const struct pyproc *p, uint64_t owner, const char **sep)
{
	pid_t pid = (pid_t)p->pid;
	uint64_t flags, obj, klass;

	*sep = "#";
	if (!owner || (owner & 7) || pycodes_read_u64(pid, owner, &flags) != 0)
		return NULL;
	if ((flags & RUBY_FLAGS_TYPE) != RUBY_T_CLASS || !(flags & RUBY_FL_SINGLETON))
		return ruby_class_path(p, owner);
	*sep = ".";
	if (ruby_class_ivar(p, owner, "__attached__", &obj) != 0)
		return NULL;
	char *name = ruby_class_path(p, obj), *cls;
	/* an object's own class: its superclass is the object's class */
	if (name || pycodes_read_u64(pid, owner + RUBY_CLASS_SUPER, &klass) != 0 || !(cls = ruby_class_path(p, klass)))
		return name;
	name = marple_malloc(strlen(cls) + sizeof("#<:0x>") + 16);
	sprintf(name, "#<%s:0x%016" PRIx64 ">", cls, obj);
	free(cls);
	return name;
}

/* owner's name, sep, then the method's: a new string; method is freed */
static char *ruby_qualified(const struct pyproc *p, uint64_t owner, char *method)
{
	const char *sep;
	char *cls = method ? ruby_owner_name(p, owner, &sep) : NULL;
	if (!cls)
		return method;
	char *out = marple_malloc(strlen(cls) + strlen(method) + 2);
	sprintf(out, "%s%s%s", cls, sep, method);
	free(cls);
	free(method);
	return out;
}

/* A C method's name: "Class#method" (Integer#times, Kernel#sleep), else
 * the method's alone */
static char *ruby_cmethod_name(const struct pyproc *p, uint64_t me)
{
	pid_t pid = (pid_t)p->pid;
	uint64_t owner = 0, def = 0, id = 0;
	char *name = pycodes_read_u64(pid, me + p->ruby->me_def, &def) == 0 &&
			pycodes_read_u64(pid, def + p->ruby->def_original_id, &id) == 0 ? ruby_id_name(p, id) : NULL;

	if (!name)
		return marple_strdup("[ruby: C method]");
	if (pycodes_read_u64(pid, me + p->ruby->me_owner, &owner) != 0)
		return name;
	return ruby_qualified(p, owner, name);
}

/* The extent of the C function of Ruby C method entry me, into c: the FDE
 * holding it in libruby's .eh_frame_hdr, as the file says (pyelf.c): the
 * process is read for the function's address only. */
static void ruby_cfunc_extent(const struct pyproc *p, uint64_t me, struct pycode *c)
{
	pid_t pid = (pid_t)p->pid;
	uint64_t def, func, lo, hi;
	uint32_t type;

	if (!p->ruby_elf || pycodes_read_u64(pid, me + p->ruby->me_def, &def) != 0 ||
	    pycodes_read_mem(pid, def, &type, 4) != 0 || (type & RUBY_METHOD_TYPE_MASK) != RUBY_METHOD_TYPE_CFUNC ||
	    pycodes_read_u64(pid, def + p->ruby->def_iseq, &func) != 0 || func < p->ruby_bias)
		return;
	if (pyelf_fde_extent(p->ruby_elf, func - p->ruby_bias, &lo, &hi) == 0)
		c->native_lo = lo + p->ruby_bias, c->native_hi = hi + p->ruby_bias;
}

/* The iseq that Ruby code c runs (its rb_iseq_t) and that iseq's body:
 * c's own (its address is c->filename_ptr), or its method entry's
 * definition's.  0, or -1 */
static int ruby_iseq_of(const struct pyproc *p, const struct pycode *c, uint64_t *iseq, uint64_t *body)
{
	pid_t pid = (pid_t)p->pid;
	uint64_t def;

	*iseq = c->filename_ptr;
	*body = c->qualname_ptr;
	if (c->firstlineno != RUBY_CODE_METHOD)
		return 0;
	return pycodes_read_u64(pid, c->filename_ptr + p->ruby->me_def, &def) == 0 &&
			pycodes_read_u64(pid, def + p->ruby->def_iseq, iseq) == 0 &&
			pycodes_read_u64(pid, *iseq + p->ruby->iseq_body, body) == 0 ? 0 : -1;
}

/* A block's label with its method's name as its entry named it ("block in
 * crunch" becomes "block in Object#crunch"): the method whose iseq is the
 * block's local iseq, if it was named before (stacks are named from their
 * root, so a method is named before the blocks run under it); else the
 * label as it is. */
static char *ruby_block_name(struct pycodes *cc, const struct pyproc *p, uint64_t body, char *label)
{
	uint64_t key[2] = { p->pid, 0 };
	const char *in = label ? strstr(label, " in ") : NULL;
	const struct hashtab_entry *e;

	if (!in || !cc->ruby_methods || pycodes_read_u64((pid_t)p->pid, body + p->ruby->body_local_iseq, &key[1]) != 0 ||
	    !(e = hashtab_find(cc->ruby_methods, key, sizeof(key))))
		return label;
	const struct pycode *m = &cc->code[cc->ruby_method_code[hashtab_index(cc->ruby_methods, e)]];
	if (!m->ok || m->evicted || m->firstlineno != RUBY_CODE_METHOD)
		return label;
	size_t head = (size_t)(in - label) + 4;
	char *out = marple_malloc(head + strlen(m->qualname) + 1);
	memcpy(out, label, head);
	strcpy(out + head, m->qualname);
	free(label);
	return out;
}

/* Ruby code c's names.  An iseq's: its label as Ruby's backtraces give it
 * ("block in settle", "<main>"), a block's with its method's class
 * (ruby_block_name), and its file (the path of its pathobj, a String or an
 * Array [path, realpath]).  A method defined in Ruby's: its iseq's, after
 * its class ("Object#settle", remembered for its blocks).  A C method's by
 * ruby_cmethod_name. */
static void ruby_names(struct pycodes *cc, const struct pyproc *p, struct pycode *c, uint64_t addr)
{
	pid_t pid = (pid_t)p->pid;
	const struct rubylayout *l = p->ruby;
	uint64_t iseq, body, label = 0, path = 0, owner = 0, in_array;

	if (c->firstlineno == RUBY_IMEMO_MENT) {
		c->qualname = ruby_cmethod_name(p, addr);
		ruby_cfunc_extent(p, addr, c);
		return;
	}
	if (ruby_iseq_of(p, c, &iseq, &body) != 0 || pycodes_read_u64(pid, body + l->body_label, &label) != 0 ||
	    pycodes_read_u64(pid, body + l->body_pathobj, &path) != 0)
		return;
	c->qualname = ruby_str(pid, label);
	if (ruby_ary_at(pid, path, 0, &in_array) == 0)
		path = in_array;
	c->filename = ruby_str(pid, path);
	if (c->firstlineno != RUBY_CODE_METHOD) {
		c->qualname = ruby_block_name(cc, p, body, c->qualname);
		return;
	}
	if (c->qualname && pycodes_read_u64(pid, addr + l->me_owner, &owner) == 0)
		c->qualname = ruby_qualified(p, owner, c->qualname);
	uint64_t key[2] = { p->pid, iseq };
	if (!cc->ruby_methods)
		cc->ruby_methods = hashtab_new();
	size_t i = hashtab_index(cc->ruby_methods, hashtab_add(cc->ruby_methods, key, sizeof(key), 0, 0));
	cc->ruby_method_code = marple_grow(cc->ruby_method_code, &cc->ruby_method_cap, i + 1, sizeof(*cc->ruby_method_code));
	cc->ruby_method_code[i] = (size_t)(c - cc->code);
}

/* A Ruby iseq's line table, read whole when it is named (code_of) or,
 * failing that, the first time a line is asked of it (the code-object
 * cache keeps it, as a code object's): into
 * c->linetable, a struct ruby_lines, then the lines of its entries (4
 * bytes each), then its positions (4 bytes each) or its succinct index
 * (rubylayout.h).  -1 when it cannot be read or is over RUBY_LINES_MAX. */
struct ruby_lines {
	uint32_t n;			/* entries */
	uint32_t positions;		/* 1: a plain table of positions follows, else the index */
	uint32_t index_len;		/* the index's bytes */
};
#define RUBY_LINES_MAX (1u << 20)

static int ruby_read_lines(struct pycodes *cc, const struct pyproc *p, struct pycode *c)
{
	pid_t pid = (pid_t)p->pid;
	const struct rubylayout *l = p->ruby;
	uint64_t iseq, body, entries = 0, positions = 0, succ = 0;
	uint32_t n = 0, iseq_size = 0;

	if (ruby_iseq_of(p, c, &iseq, &body) != 0 || pycodes_read_u64(pid, body + l->body_insns, &entries) != 0 ||
	    pycodes_read_u64(pid, body + l->body_positions, &positions) != 0 ||
	    pycodes_read_mem(pid, body + l->body_insns_size, &n, 4) != 0 ||
	    pycodes_read_u64(pid, body + l->body_succ, &succ) != 0 ||
	    pycodes_read_mem(pid, body + l->body_iseq_size, &iseq_size, 4) != 0 || !entries || !n || !iseq_size ||
	    n > RUBY_LINES_MAX / 8 || (!positions && !succ && n > 1))
		return -1;
	size_t idx = 0, last_len;
	if (!positions && n > 1)	/* up to the part that holds the last position */
		idx = rubylayout_succ_at(iseq_size - 1, &last_len) + last_len;
	size_t len = sizeof(struct ruby_lines) + (size_t)n * 4 + (positions ? (size_t)n * 4 : idx);
	if (len > RUBY_LINES_MAX)
		return -1;
	unsigned char *t = marple_calloc(1, len), *entry = marple_malloc((size_t)n * l->insn_entry_size);
	struct ruby_lines h = { .n = n, .positions = positions != 0, .index_len = (uint32_t)idx };
	uint32_t *lines = (uint32_t *)(t + sizeof(h));
	int rc = pycodes_read_mem(pid, entries, entry, (size_t)n * l->insn_entry_size);
	for (uint32_t i = 0; rc == 0 && i < n; i++)
		memcpy(&lines[i], entry + (size_t)i * l->insn_entry_size, 4);	/* line_no, first */
	if (rc == 0 && positions)
		rc = pycodes_read_mem(pid, positions, lines + n, (size_t)n * 4);
	else if (rc == 0 && idx)
		rc = pycodes_read_mem(pid, succ, lines + n, idx);
	free(entry);
	if (rc != 0) {
		free(t);
		return -1;
	}
	memcpy(t, &h, sizeof(h));
	free(c->linetable);
	cc->bytes += len - c->linetable_len;
	c->linetable = t;
	c->linetable_len = c->linetable_size = len;
	return 0;
}

/* The line of Ruby iseq c at position pos (the instruction before the one
 * its pc points at, as Ruby's own backtraces take it): its line table's
 * entry whose range holds it, by the plain table of positions when the
 * iseq keeps one, else by the succinct index; 0 when unknown. */
static int ruby_line(struct pycodes *cc, const struct pyproc *p, struct pycode *c, unsigned pos)
{
	struct ruby_lines h;
	if (!c->linetable && ruby_read_lines(cc, p, c) != 0)
		return 0;
	memcpy(&h, c->linetable, sizeof(h));
	const uint32_t *lines = (const uint32_t *)(c->linetable + sizeof(h)), *tail = lines + h.n;
	uint32_t rank = 1;
	pos = pos ? pos - 1 : 0;
	if (h.n > 1 && h.positions) {
		/* the last entry starting at or before pos (a sorted table) */
		uint32_t lo = 0, hi = h.n;
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			if (tail[mid] <= pos)
				lo = mid + 1;
			else
				hi = mid;
		}
		rank = lo;
	} else if (h.n > 1) {
		size_t len, at = rubylayout_succ_at(pos, &len);
		rank = at + len <= h.index_len ? rubylayout_succ_rank((const unsigned char *)tail + at, len, pos) : 0;
	}
	return rank >= 1 && rank <= h.n && (int32_t)lines[rank - 1] > 0 ? (int)lines[rank - 1] : 0;
}

/* A Python code object's names and its line table's size */
static void py_names(const struct pyproc *p, struct pycode *c)
{
	unsigned char b[BYTES_DATA];
	uint64_t btype, blen;

	c->qualname = read_str((pid_t)p->pid, p, c->qualname_ptr);
	c->filename = read_str((pid_t)p->pid, p, c->filename_ptr);
	if (c->linetable_ptr && pycodes_read_mem((pid_t)p->pid, c->linetable_ptr, b, sizeof(b)) == 0) {
		memcpy(&btype, b + OB_TYPE, 8);
		memcpy(&blen, b + OB_SIZE, 8);
		if (btype == p->bytes_type && blen <= 1 << 20)
			c->linetable_size = blen;
	}
}

/* Code object (or PHP function) addr of p, read on first sight; with
 * recheck, read again if what it points at changed (the object was freed
 * and its memory given to another: the cache would name it wrongly). */
static struct pycode *code_of(struct pycodes *cc, const struct pyproc *p, uint64_t addr, int recheck)
{
	uint64_t key[2] = { p->pid, addr };
	size_t before = hashtab_size(cc->index);
	size_t idx = hashtab_index(cc->index, hashtab_add(cc->index, key, sizeof(key), 0, 0));
	if (idx < before && !recheck && !cc->code[idx].evicted) {
		cc->code[idx].used = ++cc->clock;
		return &cc->code[idx];
	}
	uint64_t ids[3];
	int32_t firstline;
	int is = code_ids(p, addr, ids, &firstline);
	struct pycode *c;
	if (idx < before) {
		c = &cc->code[idx];
		/* unreadable now (exited): keep what was read while it lived */
		if (!c->evicted && (is < 0 || (c->ok && c->qualname_ptr == ids[0] && c->filename_ptr == ids[1] &&
					       c->linetable_ptr == ids[2] && c->firstlineno == firstline && is == 1)))
			return c;
		cc->reread += !c->evicted;
		struct py_code_key gone = { .tgid = p->pid, .code = addr };
		bpf_map_delete_elem(cc->codes_fd, &gone);
		cc->bytes -= code_bytes(c);
		free(c->qualname);
		free(c->filename);
		free(c->linetable);
	} else {
		cc->code = marple_grow(cc->code, &cc->cap, cc->n + 1, sizeof(*cc->code));
		c = &cc->code[cc->n++];
	}
	memset(c, 0, sizeof(*c));
	c->used = ++cc->clock;
	/* a code object freed and its memory reused is no longer of PyCode_Type,
	 * or points at other names */
	if (is != 1)
		return c;
	c->qualname_ptr = ids[0];
	c->filename_ptr = ids[1];
	c->linetable_ptr = ids[2];
	c->firstlineno = firstline;
	if (p->lang == PYPROC_PHP)
		php_names(p, c);
	else if (p->lang == PYPROC_PERL)
		perl_names(p, c, addr);
	else if (p->lang == PYPROC_RUBY)
		ruby_names(cc, p, c, addr);
	else
		py_names(p, c);
	c->ok = c->qualname != NULL;
	cc->bytes += code_bytes(c);
	/* a Ruby iseq's lines now, while it lives: its stacks told known
	 * are named at their merge (pyframes.c's named_by_words) */
	if (c->ok && p->lang == PYPROC_RUBY && c->firstlineno != RUBY_IMEMO_MENT)
		ruby_read_lines(cc, p, c);
	tell_known(cc, p->pid, addr, c);
	return c;
}

/* More of c's line table read (twice as much, 256 bytes at least): 0, or
 * -1 when there is no more or it cannot be read (the process is gone). */
static int more_linetable(struct pycodes *cc, const struct pyproc *p, struct pycode *c)
{
	size_t want = c->linetable_len * 2 > 256 ? c->linetable_len * 2 : 256;
	if (want > c->linetable_size)
		want = c->linetable_size;
	if (want <= c->linetable_len)
		return -1;
	unsigned char *t = marple_malloc(want);
	if (pycodes_read_mem((pid_t)p->pid, c->linetable_ptr + BYTES_DATA, t, want) != 0) {
		free(t);
		return -1;
	}
	cc->bytes += want - c->linetable_len;
	free(c->linetable);
	c->linetable = t;
	c->linetable_len = want;
	return 0;
}

int pycodes_line(struct pycodes *cc, const struct pyproc *p, struct pycode *c, unsigned lasti)
{
	int line;
	if (p->lang == PYPROC_RUBY)
		return lasti == PY_LASTI_UNKNOWN || c->firstlineno == RUBY_IMEMO_MENT ? 0 : ruby_line(cc, p, c, lasti);
	if (lasti == PY_LASTI_UNKNOWN || (!c->linetable && more_linetable(cc, p, c) != 0))
		return 0;
	while ((line = pylayout_line(&p->lay, c->linetable, c->linetable_len, c->linetable_len == c->linetable_size,
				     c->firstlineno, lasti)) < 0)
		if (more_linetable(cc, p, c) != 0)
			return 0;
	return line;
}

struct pycode *pycodes_get(struct pycodes *cc, const struct pyproc *p, uint64_t addr, int recheck)
{
	if (cc->bytes > PY_CODE_BUDGET)
		evict_codes(cc);
	return code_of(cc, p, addr, recheck);
}

struct pycodes *pycodes_new(int codes_fd)
{
	struct pycodes *cc = marple_calloc(1, sizeof(*cc));
	cc->codes_fd = codes_fd;
	cc->index = hashtab_new();
	return cc;
}

void pycodes_free(struct pycodes *cc)
{
	if (!cc)
		return;
	for (size_t i = 0; i < cc->n; i++) {
		free(cc->code[i].qualname);
		free(cc->code[i].filename);
		free(cc->code[i].linetable);
	}
	free(cc->code);
	hashtab_free(cc->index);
	hashtab_free(cc->ruby_methods);
	free(cc->ruby_method_code);
	free(cc);
}
