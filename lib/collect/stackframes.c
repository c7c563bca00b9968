/* stackframes.c — stack ids and addresses to root-first frames (see stackframes.h). */
#include "stackframes.h"

#include <bpf/bpf.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <libiberty/demangle.h>

#include "debugcopies.h"
#include "framedescriber.h"
#include "hashtab.h"
#include "jitframes.h"
#include "sourceframes.h"
#include "python.h"
#include "stream.h"
#include "util.h"

#define MARPLE_STR2(x) #x
#define MARPLE_STR(x) MARPLE_STR2(x)

struct stackframes {
	struct syms_cache *syms;
	struct ksyms *ksyms;
	struct sourceframes *sources;	/* inline frames and lines, stripped Go names */
	int map_fd;
	const unsigned char *stacks;	/* the stacks array mmapped, or NULL: lookups */
	size_t stacks_len, stack_size;
	uint32_t nstacks, nread;
	int flags;
	const char **frames;
	uint32_t *tags;			/* frames[i]'s identity tag (stream.h), 0 none */
	size_t n, cap, tags_cap;
	size_t after_user;		/* frames count after the user part */
	char comm[MARPLE_COMM_LEN + 1];
	int user_judged;		/* the current stack's user part can be judged whole or not */
	int user_whole;			/* ... and reaches a stack root (is_stack_root) */
	const char *unwind_mode;	/* for the advice on incomplete stacks */
	struct hashtab *names;		/* interned strings: "name_[k]", "[module]" */
	struct hashtab *frame_ids;	/* every frame name a record holds: its index is
					 * its id in the records' keys (stackframes_collect) */
	unsigned char *key;		/* stackframes_collect's scratch */
	size_t key_cap;
	struct framedescriber *descs;	/* what each frame name stands for */
	int split_cpu;			/* stackframes_split_cpu */
	int on_cpu;			/* the current stack's key: 1 an on-CPU sample's,
					 * 2 run-queue time's, 0 off-CPU time's */
	char *scratch;
	size_t scratch_cap;
	struct stackframes_stats st;
	/* stackframes_set_python: the merge of a user stack's Python frames,
	 * and the weight of the stack it was last called for */
	void (*py_merge)(void *arg, struct stackframes *sf, pid_t pid, uint64_t exec_id, size_t first,
			 const uint64_t *ips, size_t n, const uint64_t *words, size_t m);
	void (*py_weigh)(void *arg, uint64_t weight);
	void *py_arg;
	int py_merged;			/* the current stack had Python frames */
	int unwalked;			/* the current stack's unwalked interpreter + 1, or 0 */
	pid_t jit_pid;			/* the current stack's process, and its leaf */
	const char *jit_leaf;		/* when it is a JIT frame named later (jitframes.h) */
};

struct stackframes *stackframes_new(struct syms_cache *syms, struct ksyms *ksyms, int stack_map_fd,
				    int flags)
{
	struct stackframes *sf = marple_calloc(1, sizeof(*sf));
	sf->syms = syms;
	sf->ksyms = ksyms;
	sf->sources = syms && !(flags & SF_NO_SOURCES) ? sourceframes_new() : NULL;
	sf->map_fd = stack_map_fd;
	sf->flags = flags;
	sf->names = hashtab_new();
	sf->frame_ids = hashtab_new();
	sf->descs = framedescriber_new(!!(flags & SF_ADDRESSES));
	return sf;
}

void stackframes_free(struct stackframes *sf)
{
	if (!sf)
		return;
	jitframes_forget(sf->syms);
	sourceframes_free(sf->sources);
	hashtab_free(sf->names);
	hashtab_free(sf->frame_ids);
	free(sf->key);
	framedescriber_free(sf->descs);
	free(sf->scratch);
	free(sf->frames);
	free(sf->tags);
	if (sf->stacks)
		munmap((void *)sf->stacks, sf->stacks_len);
	free(sf);
}

/* The string a followed by b, stored once (for the life of sf). */
static const char *intern2(struct stackframes *sf, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	sf->scratch = marple_grow(sf->scratch, &sf->scratch_cap, la + lb + 1, 1);
	memcpy(sf->scratch, a, la);
	memcpy(sf->scratch + la, b, lb);
	return hashtab_add(sf->names, sf->scratch, la + lb, 0, 0)->key;
}

static const char *intern(struct stackframes *sf, const char *s)
{
	return s ? hashtab_add(sf->names, s, strlen(s), 0, 0)->key : NULL;
}

void stackframes_describe(struct stackframes *sf, const char *name, const char *kind, const char *file, int line)
{
	framedescriber_describe(sf->descs, name, kind, file, line);
}

static void push_tagged(struct stackframes *sf, const char *s, uint32_t tag)
{
	sf->frames = marple_grow(sf->frames, &sf->cap, sf->n + 1, sizeof(*sf->frames));
	sf->tags = marple_grow(sf->tags, &sf->tags_cap, sf->n + 1, sizeof(*sf->tags));
	sf->tags[sf->n] = tag;
	sf->frames[sf->n++] = s;
}

static void push(struct stackframes *sf, const char *s)
{
	push_tagged(sf, s, 0);
}

void stackframes_begin(struct stackframes *sf, const char *comm)
{
	size_t n = strnlen(comm, MARPLE_COMM_LEN);	/* comm may be a shorter C string */

	memcpy(sf->comm, comm, n);
	sf->comm[n] = 0;
	sf->n = 0;
	push(sf, sf->comm);
	sf->after_user = 1;
	sf->user_judged = 0;
	sf->jit_pid = 0;
	sf->jit_leaf = NULL;
	sf->py_merged = 0;
	sf->unwalked = 0;
}

const char *const stackframes_unwalked_names[STACKFRAMES_NUNWALKED] = { "Perl", "Ruby", "PHP" };

/* The interpreter whose code a module is (Debian's names: perl5.36.0 holds
 * libperl, libruby-3.1.so.3.1, php8.2, php-fpm8.2, libphp8.2.so) + 1, or 0. */
static int unwalked_interpreter(const char *mod)
{
	if (strncmp(mod, "perl", 4) == 0 || strncmp(mod, "libperl.so", 10) == 0)
		return STACKFRAMES_PERL + 1;
	if (strncmp(mod, "libruby", 7) == 0 || strcmp(mod, "ruby") == 0)
		return STACKFRAMES_RUBY + 1;
	if (strncmp(mod, "php", 3) == 0 || strncmp(mod, "libphp", 6) == 0)
		return STACKFRAMES_PHP + 1;
	return 0;
}

/* Where a whole user stack starts: the program's entry and libc's start
 * functions, thread starts (glibc, musl), Go's goroutine and thread roots.
 * The dynamic loader's entry (before main) is found by its file and
 * address instead (SYMS_FRAME_INTERP_ENTRY): its functions' names
 * (_dl_start) are also those of stacks cut inside it. */
static int is_stack_root(const char *name)
{
	static const char *const roots[] = {
		"_start", "__libc_start_main", "__libc_start_call_main", "clone", "clone3", "__clone",
		"__clone3", "__clone_internal", "start_thread", "thread_start", "runtime.goexit",
		"runtime.rt0_go", "runtime.mstart", "runtime.main",
	};
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		if (strcmp(name, roots[i]) == 0)
			return 1;
	return 0;
}

/* Judge the user stack just built (root first from frames[first], n frames):
 * whole when one of its three outermost frames is a root, when its
 * outermost frame is in libc without a name (without its debug symbols,
 * clone3, start_thread and __libc_start_call_main have none: libc exports
 * only __libc_start_main and clone), or at the entry of the process's
 * dynamic loader (root_at_interp_entry: a program being relocated).
 * A stack cut at the depth limit is not judged. */
static void judge_user_stack(struct stackframes *sf, size_t first, size_t n, const struct syms_frame *root,
			     int root_is_mark)
{
	const char *root_module = root->module;
	int root_named = root->name != NULL;

	sf->user_judged = n > 0 && n < MARPLE_STACK_DEPTH;
	if (!sf->user_judged)
		return;
	sf->user_whole = !root_named && root_module && strncmp(root_module, "libc.so", 7) == 0;
	for (size_t i = first; i < first + n && i < first + 3 && !sf->user_whole; i++)
		sf->user_whole = is_stack_root(sf->frames[i]);
	if (!sf->user_whole)
		sf->user_whole = root->at_interp_entry;
	sf->st.user_stacks++;
	if (sf->user_whole)
		return;
	sf->st.incomplete_user_stacks++;
	if (root_is_mark)
		sf->st.incomplete_at_marker++;
	else if (!root_named)
		sf->st.incomplete_at_unnamed++;
}

void stackframes_weigh(struct stackframes *sf, uint64_t weight)
{
	jitframes_weigh(sf->jit_pid, sf->jit_leaf, weight);
	if (sf->py_merged && sf->py_weigh)
		sf->py_weigh(sf->py_arg, weight);
	if (sf->unwalked)
		sf->st.unwalked_weight[sf->unwalked - 1] += weight;
	if (!sf->user_judged)
		return;
	sf->st.user_weight += weight;
	if (!sf->user_whole)
		sf->st.incomplete_user_weight += weight;
}

void stackframes_set_unwind_mode(struct stackframes *sf, const char *mode)
{
	sf->unwind_mode = mode;
}

const char *stackframes_unwind_mode(const struct stackframes *sf)
{
	return sf->unwind_mode ? sf->unwind_mode : "fp";
}

const char *stackframes_unwind_advice(const struct stackframes *sf)
{
	return sf->flags & SF_DWARF_ACCEPTED ? "--unwind tables, --unwind dwarf or --dwarf" : "--unwind tables";
}

void stackframes_user_ips(struct stackframes *sf, pid_t pid, const uint64_t *ips, size_t n)
{
	stackframes_user_ips_exec(sf, pid, SYMS_EXEC_ANY, ips, n);
}

/* The frame the BPF walker's marker address stands for (bpf/stacks.h). */
static const char *unwind_mark_name(uint64_t mark)
{
	switch (mark) {
	case UNWIND_MARK_NO_TABLE: return "[no unwind table]";
	case UNWIND_MARK_UNSUPPORTED: return "[unsupported unwind rule]";
	case UNWIND_MARK_TRUNCATED: return "[truncated: " MARPLE_STR(MARPLE_STACK_DEPTH) "+ frames]";
	default: return "[unknown marker]";
	}
}

/* An unnamed frame in JIT code (anonymous executable memory) may be named
 * once the JIT has written its map (the JVM's, at exit): a placeholder for
 * now (jitframes.h), else the name it has. */
static const char *jit_pending(struct stackframes *sf, pid_t pid, uint64_t exec_id, uint64_t at,
			       const struct syms_frame *fr, const char *name)
{
	if (fr->module && strcmp(fr->module, "[anon]") != 0)
		return name;
	if (!fr->in_jit_memory)
		return name;
	return jitframes_pending(sf->syms, pid, exec_id, at, name);
}

void stackframes_set_python(struct stackframes *sf,
			    void (*merge)(void *arg, struct stackframes *sf, pid_t pid, uint64_t exec_id, size_t first,
					  const uint64_t *ips, size_t n, const uint64_t *words, size_t m),
			    void (*weigh)(void *arg, uint64_t weight), void *arg)
{
	sf->py_merge = merge;
	sf->py_weigh = weigh;
	sf->py_arg = arg;
}

static void user_ips(struct stackframes *sf, pid_t pid, uint64_t exec_id, const uint64_t *ips, size_t n,
		     int inline_frames);

void stackframes_user_ips_exec(struct stackframes *sf, pid_t pid, uint64_t exec_id, const uint64_t *ips, size_t n)
{
	size_t first = sf->n, native = 0;

	/* a Python process's stack: its native frames, the mark, its Python
	 * frames (bpf/python.h); without a merge, the native frames alone */
	while (native < n && !PY_IS_STACK_MARK(ips[native]))
		native++;
	/* Python frames are merged frame for address: no inline frames there */
	int python = native + 1 < n && sf->py_merge;
	user_ips(sf, pid, exec_id, ips, native, !python);
	if (python) {
		sf->py_merged = 1;
		sf->unwalked = 0;	/* its interpreter's frames are walked (PHP's, Ruby's) */
		sf->py_merge(sf->py_arg, sf, pid, exec_id, first, ips, native, ips + native + 1, n - native - 1);
	}
}

/* The source frames of the frame fr (sourceframes: DWARF inline chains, a
 * stripped Go binary's table) into src, innermost first; their count. */
static int source_frames(struct stackframes *sf, pid_t pid, const struct syms_frame *fr,
			 struct sourceframes_frame *src)
{
	if (!sf->sources || fr->kind != SYMS_KIND_NATIVE || !fr->path || fr->path[0] != '/')
		return 0;
	return sourceframes_lookup(sf->sources, pid, fr->path, fr->file, fr->file_offset, src,
				   DWARFINLINE_MAX_DEPTH);
}

/* The inline frames of src[0..n-1) (src[n-1] is the function itself),
 * outermost first after it, each described "inline" at its file:line. */
static void push_inline(struct stackframes *sf, const struct sourceframes_frame *src, int n)
{
	for (int k = n - 2; k >= 0; k--) {
		char *pretty = strncmp(src[k].function, "_Z", 2) == 0 ?
				       cplus_demangle(src[k].function, DMGL_ANSI) : NULL;
		const char *name = intern(sf, pretty ? pretty : src[k].function);
		free(pretty);
		sf->st.inline_frames++;
		push_tagged(sf, name, framedescriber_inline(sf->descs, name, src[k].file, src[k].line));
	}
}

static void user_ips(struct stackframes *sf, pid_t pid, uint64_t exec_id, const uint64_t *ips, size_t n,
		     int inline_frames)
{
	char buf[64];
	size_t first = sf->n;
	struct syms_frame fr, root = { 0 };

	for (size_t i = n; i-- > 0;) {
		if (UNWIND_IS_MARK(ips[i])) {	/* where the walk stopped, and why */
			framedescriber_marker(sf->descs, unwind_mark_name(ips[i]));
			push(sf, unwind_mark_name(ips[i]));
			if (i == n - 1)
				root = (struct syms_frame){ 0 };
			continue;
		}
		/* return addresses (all but the leaf) are looked up at ip-1: the
		 * call; one question a frame, the root's with where stacks start */
		uint64_t at = ips[i] - (i > 0);
		syms_cache_frame(sf->syms, pid, exec_id, at, i == n - 1 ? SYMS_FRAME_INTERP_ENTRY : 0, &fr);
		if (i == n - 1)
			root = fr;
		const char *name = fr.name, *mod = fr.module;
		if (mod && !sf->unwalked && (sf->unwalked = unwalked_interpreter(mod)))
			sf->st.unwalked_pid[sf->unwalked - 1] = pid;
		struct sourceframes_frame src[DWARFINLINE_MAX_DEPTH];
		int nsrc = source_frames(sf, pid, &fr, src);
		if (!name && nsrc > 0 && strcmp(src[nsrc - 1].function, "??") != 0) {	/* stripped Go */
			name = intern(sf, src[nsrc - 1].function);
			sf->st.go_frames++;
		}
		if (!name) {
			sf->st.unknown_frames++;
			if (mod && (sf->flags & SF_ADDRESSES)) {
				snprintf(buf, sizeof(buf), "+0x%" PRIx64 "]", fr.file_offset);
				name = intern2(sf, intern2(sf, "[", mod), buf);
			} else if (mod && strcmp(mod, "[anon]") != 0 && strncmp(mod, "[stack", 6) != 0 &&
				   strcmp(mod, "[heap]") != 0) {
				name = mod[0] == '[' ? mod : intern2(sf, intern2(sf, "[", mod), "]");
			} else {
				name = "[unknown]";
			}
			name = jit_pending(sf, pid, exec_id, at, &fr, name);
			if (i == 0 && jitframes_is_pending(name))
				sf->jit_leaf = name;
		}
		push_tagged(sf, name, framedescriber_user(sf->descs, name, &fr, nsrc > 0 ? &src[nsrc - 1] : NULL));
		if (inline_frames && !(sf->flags & SF_NO_INLINE))
			push_inline(sf, src, nsrc);
	}
	sf->jit_pid = pid;
	sf->after_user = sf->n;
	judge_user_stack(sf, first, n, &root, n > 0 && UNWIND_IS_MARK(ips[n - 1]));
}

void stackframes_user_splice(struct stackframes *sf, size_t first, const char *const *names, size_t n)
{
	if (first > sf->n)
		first = sf->n;
	/* the native frames kept, in their order among the names, keep their tags */
	size_t nold = sf->n - first, old = 0;	/* the next native frame to match */
	uint32_t *old_tags = marple_malloc((nold + 1) * sizeof(*old_tags));
	const char **old_names = marple_malloc((nold + 1) * sizeof(*old_names));
	memcpy(old_tags, sf->tags + first, nold * sizeof(*old_tags));
	memcpy(old_names, sf->frames + first, nold * sizeof(*old_names));
	sf->n = first;
	for (size_t i = 0; i < n; i++) {
		size_t j = old;
		while (j < nold && old_names[j] != names[i])
			j++;
		if (j < nold) {		/* native: the frames before it were left out */
			push_tagged(sf, names[i], old_tags[j]);
			old = j + 1;
			continue;
		}
		framedescriber_marker(sf->descs, names[i]);	/* any not described yet is a marker */
		push(sf, names[i]);
	}
	free(old_tags);
	free(old_names);
	sf->after_user = sf->n;
}

int stackframes_user_whole(const struct stackframes *sf)
{
	return sf->user_judged && sf->user_whole;
}

static void delimit(struct stackframes *sf)
{
	if ((sf->flags & SF_DELIMIT) && sf->n == sf->after_user)
		push(sf, "-");
}

void stackframes_kernel_ips(struct stackframes *sf, const uint64_t *ips, size_t n)
{
	/* return addresses name the call: look up the byte before them */
	uint64_t at[MARPLE_STACK_DEPTH] = { 0 };
	if (n > MARPLE_STACK_DEPTH)
		n = MARPLE_STACK_DEPTH;
	for (size_t i = 0; i < n; i++)
		at[i] = ips[i] - (i > 0);
	syms_kernel_resolve(sf->ksyms, at, n);
	/* leave out the tracing machinery at the leaf (a tracepoint's BPF program) */
	size_t skip = 0;
	while (skip < n) {
		const char *name = syms_kernel_lookup(sf->ksyms, at[skip], NULL);
		if (!name || (strncmp(name, "bpf_prog_", 9) && strncmp(name, "bpf_trace_run", 13) &&
			      strncmp(name, "__traceiter_", 12) && strncmp(name, "__bpf_trace_", 12)))
			break;
		skip++;
	}
	if (skip == n)
		return;
	delimit(sf);
	for (size_t i = n; i-- > skip;) {
		const char *name = syms_kernel_lookup(sf->ksyms, at[i], NULL);
		int named = name != NULL;
		if (!name) {
			sf->st.unknown_frames++;
			name = "[unknown]";
		}
		if (sf->flags & SF_ANNOTATE_KERNEL)
			name = intern2(sf, name, "_[k]");
		if (named)
			framedescriber_kernel(sf->descs, name);
		else
			framedescriber_marker(sf->descs, name);
		push(sf, name);
	}
}

/* Read stacks straight from the map's memory once there are many to read:
 * one bpf() call per stack was the larger part of writing a big profile, but
 * mapping 16 MB costs ~3 ms, more than a few hundred lookups. */
static void map_stacks(struct stackframes *sf)
{
	struct bpf_map_info info = { 0 };
	uint32_t ilen = sizeof(info);

	if (sf->map_fd < 0 || bpf_obj_get_info_by_fd(sf->map_fd, &info, &ilen) != 0 ||
	    !(info.map_flags & BPF_F_MMAPABLE) || info.type != BPF_MAP_TYPE_ARRAY)
		return;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	sf->stack_size = (info.value_size + 7) & ~7u;
	sf->stacks_len = (sf->stack_size * info.max_entries + page - 1) / page * page;
	void *m = mmap(NULL, sf->stacks_len, PROT_READ, MAP_SHARED, sf->map_fd, 0);
	if (m != MAP_FAILED) {
		sf->stacks = m;
		sf->nstacks = info.max_entries;
	}
}

int stackframes_read_id(struct stackframes *sf, int id, uint64_t *ips)
{
	if (id < 0)
		return -1;
	if (++sf->nread == 1000)
		map_stacks(sf);
	if (sf->stacks && (uint32_t)id < sf->nstacks) {
		size_t len = MARPLE_STACK_DEPTH * sizeof(uint64_t);
		memcpy(ips, sf->stacks + (size_t)id * sf->stack_size, len < sf->stack_size ? len : sf->stack_size);
	} else if (bpf_map_lookup_elem(sf->map_fd, &id, ips) != 0) {
		return -1;
	}
	int n = 0;
	while (n < MARPLE_STACK_DEPTH && ips[n])
		n++;
	return n;
}

/* Stack id read from the store into ips: the addresses, or why there are none. */
static struct stack_ips read_stack(struct stackframes *sf, int id, uint64_t *ips)
{
	if (id == STACK_ID_NONE || id == STACK_ID_LOST)
		return (struct stack_ips){ NULL, id };
	return (struct stack_ips){ ips, stackframes_read_id(sf, id, ips) };
}

void stackframes_user_stack(struct stackframes *sf, pid_t pid, uint64_t exec_id, struct stack_ips s)
{
	if (s.n == STACK_ID_NONE)
		return;
	if (s.n == STACK_ID_LOST) {	/* counted by the kernel side (samples_stack_map_full) */
		push(sf, "[lost: stack map full]");
		sf->after_user = sf->n;
		return;
	}
	if (s.n < 0) {
		sf->st.missing_user++;
		push(sf, "[missing user stack]");
		sf->after_user = sf->n;
		return;
	}
	stackframes_user_ips_exec(sf, pid, exec_id, s.ips, (size_t)s.n);
}

void stackframes_kernel_stack(struct stackframes *sf, struct stack_ips s)
{
	if (s.n == STACK_ID_NONE)
		return;
	if (s.n == STACK_ID_LOST) {
		delimit(sf);
		push(sf, sf->flags & SF_ANNOTATE_KERNEL ? "[lost: stack map full]_[k]" : "[lost: stack map full]");
		return;
	}
	if (s.n < 0) {
		sf->st.missing_kernel++;
		delimit(sf);
		push(sf, sf->flags & SF_ANNOTATE_KERNEL ? "[missing kernel stack]_[k]" : "[missing kernel stack]");
		return;
	}
	stackframes_kernel_ips(sf, s.ips, (size_t)s.n);
}

void stackframes_user_id(struct stackframes *sf, pid_t pid, int id)
{
	stackframes_user_id_exec(sf, pid, SYMS_EXEC_ANY, id);
}

void stackframes_user_id_exec(struct stackframes *sf, pid_t pid, uint64_t exec_id, int id)
{
	uint64_t ips[MARPLE_STACK_DEPTH];

	stackframes_user_stack(sf, pid, exec_id, read_stack(sf, id, ips));
}

void stackframes_kernel_id(struct stackframes *sf, int id)
{
	uint64_t ips[MARPLE_STACK_DEPTH];

	stackframes_kernel_stack(sf, read_stack(sf, id, ips));
}

void stackframes_split_cpu(struct stackframes *sf, int on)
{
	sf->split_cpu = on;
}

void stackframes_key_stacks(struct stackframes *sf, const struct stack_key *k, struct stack_ips user,
			    struct stack_ips kern)
{
	stackframes_begin(sf, k->comm);
	sf->on_cpu = k->exec_id & STACK_EXEC_ID_ON_CPU ? 1 : k->exec_id & STACK_EXEC_ID_RUNQ ? 2 : 0;
	stackframes_user_stack(sf, (pid_t)k->pid, k->exec_id & ~(STACK_EXEC_ID_ON_CPU | STACK_EXEC_ID_RUNQ), user);
	stackframes_kernel_stack(sf, kern);
}

void stackframes_key(struct stackframes *sf, const struct stack_key *k)
{
	uint64_t user[MARPLE_STACK_DEPTH], kern[MARPLE_STACK_DEPTH];

	stackframes_key_stacks(sf, k, read_stack(sf, k->user_stack_id, user), read_stack(sf, k->kern_stack_id, kern));
}

const char *const *stackframes_frames(struct stackframes *sf, size_t *n)
{
	*n = sf->n;
	return sf->frames;
}

void stackframes_jit_names(struct stackframes *sf)
{
	if (jitframes_any())
		for (size_t i = 0; i < sf->n; i++)
			sf->frames[i] = jitframes_name_now(sf->frames[i]);
}

void stackframes_write(struct stackframes *sf, FILE *f, uint64_t weight)
{
	stackframes_weigh(sf, weight);
	stackframes_jit_names(sf);
	stream_write_stack_tagged(f, weight, sf->frames, sf->tags, sf->n);
}

const uint32_t *stackframes_tags(const struct stackframes *sf)
{
	return sf->tags;
}

void stackframes_stats(const struct stackframes *sf, struct stackframes_stats *out)
{
	*out = sf->st;
}

void stackframes_stats_reset(struct stackframes *sf)
{
	memset(&sf->st, 0, sizeof(sf->st));
}

void stackframes_next_section(struct stackframes *sf)
{
	hashtab_free(sf->names);
	sf->names = hashtab_new();
	hashtab_free(sf->frame_ids);
	sf->frame_ids = hashtab_new();
	framedescriber_next_section(sf->descs);
	sf->n = 0;
	sf->jit_leaf = NULL;
}

void stackframes_syms_forgotten(struct stackframes *sf)
{
	framedescriber_forget_names(sf->descs);
}

/* A record's key holds its frames' ids (their index in frame_ids), each a
 * LEB128 number (7 bits a byte, the high bit set on all but the last), not
 * their names: a distinct stack costs 1-3 bytes a frame instead of its names'
 * bytes (a C++ compiler's stacks: 39 frames, 1 KB of names, ~60 bytes of
 * ids).  A long capture's table grows with every distinct stack it meets;
 * this is what each one costs. */
#define FRAME_ID_BYTES_MAX 5		/* an id below 2^32 */

static size_t put_frame_id(unsigned char *p, uint32_t id)
{
	size_t n = 0;

	while (id >= 0x80) {
		p[n++] = (unsigned char)(id | 0x80);
		id >>= 7;
	}
	p[n++] = (unsigned char)id;
	return n;
}

/* The id at *p (< end), p moved past it; UINT32_MAX if cut. */
static uint32_t get_frame_id(const unsigned char **p, const unsigned char *end)
{
	uint32_t id = 0;

	for (unsigned shift = 0; *p < end && shift < 35; shift += 7) {
		unsigned char b = *(*p)++;
		id |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return id;
	}
	return UINT32_MAX;
}

size_t stackframes_collect(struct stackframes *sf, struct hashtab *t, uint64_t weight)
{
	size_t len = 0;

	stackframes_weigh(sf, weight);
	sf->key = marple_grow(sf->key, &sf->key_cap, 1 + sf->n * FRAME_ID_BYTES_MAX, 1);
	if (sf->split_cpu)	/* on- and off-CPU stacks stay apart: a byte before the frames */
		sf->key[len++] = (char)('0' + sf->on_cpu);
	for (size_t i = 0; i < sf->n; i++) {
		size_t klen;
		const char *k = framedescriber_key(sf->descs, sf->frames[i], sf->tags[i], &klen);
		size_t id = hashtab_index(sf->frame_ids, hashtab_add(sf->frame_ids, k, klen, 0, 0));
		len += put_frame_id(sf->key + len, (uint32_t)id);
	}
	return hashtab_index(t, hashtab_add(t, sf->key, len, weight, 0));
}

uint64_t stackframes_write_table(const struct stackframes *sf, const struct hashtab *t, FILE *f)
{
	return stackframes_write_table_cpu(sf, t, f, -1);
}

uint64_t stackframes_write_table_cpu(const struct stackframes *sf, const struct hashtab *t, FILE *f, int on_cpu)
{
	size_t cap = 0, tcap = 0, records = hashtab_size(t), names = hashtab_size(sf->frame_ids);
	uint64_t written = 0;
	const char **fr = NULL;
	uint32_t *tags = NULL;
	int jit = jitframes_any();

	/* JIT frames named as late as can be: now.  One record still for each
	 * of t's (--timed's samples point to them by position), though some
	 * may now have the same frames (readers add them up). */
	if (jit)
		jitframes_resolve();

	for (size_t i = 0; i < records; i++) {
		const struct hashtab_entry *e = hashtab_at(t, i);
		const unsigned char *p = (const unsigned char *)e->key, *end = p + e->len;
		size_t n = 0;
		if (on_cpu >= 0) {
			if (*p++ != '0' + on_cpu)
				continue;
		}
		written++;
		while (p < end) {
			uint32_t id = get_frame_id(&p, end);
			const struct hashtab_entry *k = id < names ? hashtab_at(sf->frame_ids, id) : NULL;
			const char *name = k ? k->key : "[unknown]";
			size_t name_len;
			fr = marple_grow(fr, &cap, n + 1, sizeof(*fr));
			tags = marple_grow(tags, &tcap, n + 1, sizeof(*tags));
			tags[n] = k ? stream_frame_key_split(k->key, k->len, &name_len) : 0;
			fr[n++] = jit ? jitframes_name(name) : name;
		}
		stream_write_stack_tagged(f, e->count[0], fr, tags, n);
	}
	free(fr);
	free(tags);
	return written;
}

/* What DWARF and Go tables told: the trailer's "sources". */
static void sources_trailer_add(const struct stackframes *sf, json_t *trailer)
{
	struct sourceframes_stats st;
	sourceframes_stats(sf->sources, &st);
	json_t *o = json_object();
	json_object_set_new(o, "files", json_integer((json_int_t)st.files));
	json_object_set_new(o, "files_refused", json_integer((json_int_t)st.files_refused));
	json_object_set_new(o, "dwarf_refused", json_integer((json_int_t)st.dwarf_refused));
	json_object_set_new(o, "lookups", json_integer((json_int_t)st.lookups));
	json_object_set_new(o, "by_dwarf", json_integer((json_int_t)st.dwarf_resolved));
	json_object_set_new(o, "by_go_table", json_integer((json_int_t)st.go_resolved));
	json_object_set_new(o, "unresolved", json_integer((json_int_t)st.unresolved));
	json_object_set_new(o, "dwarf_bytes", json_integer((json_int_t)st.dwarf_bytes));
	json_object_set_new(o, "table_bytes", json_integer((json_int_t)st.table_bytes));
	json_object_set_new(o, "units", json_integer((json_int_t)st.units));
	json_object_set_new(o, "units_read", json_integer((json_int_t)st.units_read));
	json_object_set_new(o, "build_ns", json_integer((json_int_t)st.build_ns));
	struct debugcopies_stats copies;
	debugcopies_stats(&copies);
	json_object_set_new(o, "debug_copies_read", json_integer((json_int_t)copies.read));
	json_object_set_new(o, "debug_copies_written", json_integer((json_int_t)copies.written));
	json_object_set_new(o, "debug_copies_failed", json_integer((json_int_t)copies.failed));
	json_object_set_new(o, "inline_frames", json_integer((json_int_t)sf->st.inline_frames));
	json_object_set_new(o, "go_frames", json_integer((json_int_t)sf->st.go_frames));
	json_object_set_new(o, "go_inline_cut", json_integer((json_int_t)st.go_cut));
	json_object_set_new(o, "go_inline_bad", json_integer((json_int_t)st.go_bad_inline));
	json_object_set_new(o, "go_no_inline_tables", json_integer((json_int_t)st.go_no_inline_tables));
	json_object_set_new(o, "go_bytes", json_integer((json_int_t)st.go_bytes));
	json_object_set_new(trailer, "sources", o);
}

void stackframes_trailer_add(const struct stackframes *sf, json_t *trailer)
{
	framedescriber_trailer_add(sf->descs, trailer);
	if (sf->sources)
		sources_trailer_add(sf, trailer);
}
