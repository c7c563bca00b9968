/* stackframes.c — stack ids and addresses to root-first frames (see stackframes.h). */
#include "stackframes.h"

#include <bpf/bpf.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <libiberty/demangle.h>

#include "escape.h"
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
	struct hashtab *described;	/* frame keys described so far (their index in
					 * desc): a name, or a name, NUL and its tag */
	struct frame_desc *desc;
	size_t desc_cap;
	struct hashtab *first_code;	/* 8 bytes of a name's hash -> the identity tag
					 * of the first code of that name the run met:
					 * kept across sections (~60 bytes a name), so
					 * that a name without tag is the same code in
					 * every section of a run */
	struct {			/* names described, by pointer: most frames are */
		const char *name;	/* the same interned strings again, told apart */
		uint32_t tag;		/* here without hashing them; a symbol's name */
	} seen[1024];			/* is its file's: the pointer tells its tag */
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

/* What a frame name stands for: the trailer's "frames" (marple-format(5)). */
struct frame_desc {
	const char *kind;		/* "native", "inline", "kernel", "python", "jit", "marker" */
	const char *file;		/* NULL: none */
	const char *build_id;		/* NULL or "": none */
	uint64_t offset;		/* where the function starts in file */
	int has_offset;
	int line;			/* Python, inline: the line; 0 none */
	const char *source;		/* native: its source file (DWARF, Go table); NULL none */
	int source_line;		/* there, at the first address seen; not its identity */
};

struct stackframes *stackframes_new(struct syms_cache *syms, struct ksyms *ksyms, int stack_map_fd,
				    int flags)
{
	struct stackframes *sf = marple_calloc(1, sizeof(*sf));
	sf->syms = syms;
	sf->ksyms = ksyms;
	sf->sources = syms ? sourceframes_new() : NULL;
	sf->map_fd = stack_map_fd;
	sf->flags = flags;
	sf->names = hashtab_new();
	sf->frame_ids = hashtab_new();
	sf->described = hashtab_new();
	sf->first_code = hashtab_new();
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
	hashtab_free(sf->described);
	hashtab_free(sf->first_code);
	free(sf->desc);
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

static size_t seen_slot(const char *name)
{
	return ((uintptr_t)name >> 4) % 1024;
}

/* The described slot of key[0..len), and whether it was added just now. */
static struct frame_desc *desc_slot(struct stackframes *sf, const char *key, size_t len, int *added)
{
	size_t before = hashtab_size(sf->described);
	size_t i = hashtab_index(sf->described, hashtab_add(sf->described, key, len, 0, 0));
	*added = i >= before;
	if (*added) {
		sf->desc = marple_grow(sf->desc, &sf->desc_cap, i + 1, sizeof(*sf->desc));
		memset(&sf->desc[i], 0, sizeof(sf->desc[i]));
	}
	return &sf->desc[i];
}

/* The description slot of name if it has none yet (the first description of
 * a name wins), else NULL. */
static struct frame_desc *undescribed(struct stackframes *sf, const char *name)
{
	int added;

	sf->seen[seen_slot(name)].name = name;
	sf->seen[seen_slot(name)].tag = 0;
	struct frame_desc *d = desc_slot(sf, name, strlen(name), &added);
	return added || !d->kind ? d : NULL;	/* no kind: kept for the run's first code */
}

/* Describe name as a marker unless it is described: its slot if it was
 * not, to be told more, else NULL. */
static struct frame_desc *describe_new(struct stackframes *sf, const char *name)
{
	if (sf->seen[seen_slot(name)].name == name)
		return NULL;
	struct frame_desc *d = undescribed(sf, name);
	if (d)
		d->kind = "marker";
	return d;
}

void stackframes_describe(struct stackframes *sf, const char *name, const char *kind, const char *file, int line)
{
	struct frame_desc *d = undescribed(sf, name);
	if (!d)
		return;
	d->kind = kind;
	d->file = intern(sf, file);
	d->line = line;
}

/* What a user frame named name is (fr: what the symbolizer answered for its
 * address; at: where its source says it is, or NULL): native code of a
 * file, JIT code named by a perf map, or (no mapping) a marker. */
static struct frame_desc user_desc(struct stackframes *sf, const char *name, const struct syms_frame *fr,
				   const struct sourceframes_frame *at)
{
	struct frame_desc d = { .kind = "marker" };
	int named = fr->name != NULL;

	if (!fr->module)
		return d;	/* no mapping: [unknown] */
	if (fr->kind == SYMS_KIND_JIT && named) {
		d.kind = "jit";
		d.file = fr->path[0] == '[' ? NULL : intern(sf, fr->path);
		return d;
	}
	if (!named && (fr->path[0] == '[' || strcmp(name, "[unknown]") == 0))
		return d;	/* [unknown] in anonymous memory, [vdso]: no file to name */
	d.kind = "native";
	/* copies: the cache lets go of an unused file's strings */
	d.file = intern(sf, fr->path);
	d.build_id = intern(sf, fr->build_id);
	if (named || (sf->flags & SF_ADDRESSES)) {
		d.offset = fr->file_offset - (named ? fr->sym_offset : 0);
		d.has_offset = 1;
	}
	if (at && at->file && strcmp(at->file, "??") != 0) {
		d.source = intern(sf, at->file);
		d.source_line = (int)at->line;
	}
	return d;
}

static uint32_t fnv1a(uint32_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return (h ^ 0xff) * 16777619u;	/* ends each string: "ab","c" is not "a","bc" */
}

/* The identity tag of code described as d: a hash of all it says, so that
 * the same code has the same tag in every section and capture. */
static uint32_t identity_tag(const struct frame_desc *d)
{
	char nums[48];

	snprintf(nums, sizeof(nums), "%d:%" PRIu64 ":%d", d->has_offset, d->offset, d->line);
	uint32_t h = fnv1a(fnv1a(fnv1a(fnv1a(2166136261u, d->kind), d->file), d->build_id), nums);
	return h ? h : 1;
}

/* Do a and b describe the same code?  Files and build ids are interned
 * (intern): equal strings are one pointer. */
static int same_code(const struct frame_desc *a, const struct frame_desc *b)
{
	return strcmp(a->kind, b->kind) == 0 && a->file == b->file && a->build_id == b->build_id &&
	       a->has_offset == b->has_offset && a->offset == b->offset && a->line == b->line;
}

static const char *frame_key(struct stackframes *sf, const char *name, uint32_t tag, size_t *len);

/* Is tag the first code of name the run met (this one, if none yet)? */
static int run_first_code(struct stackframes *sf, const char *name, uint32_t tag)
{
	uint64_t h = hashtab_hash(name, strlen(name));
	const struct hashtab_entry *e = hashtab_find(sf->first_code, &h, sizeof(h));

	if (!e)
		e = hashtab_add(sf->first_code, &h, sizeof(h), tag, 0);
	return e->count[0] == tag;
}

/* Describe name as d: 0 when the name stands for d (the first code of that
 * name the run met, described under the name), else d's identity tag, the
 * frame described under the name and the tag (marple-format(5), Frame
 * identity). */
static uint32_t describe_as(struct stackframes *sf, const char *name, const struct frame_desc *d)
{
	size_t len;
	int added;
	struct frame_desc *first = desc_slot(sf, name, strlen(name), &added);

	if (first->kind && same_code(first, d)) {
		if (!first->source)	/* told first without its source line */
			first->source = d->source, first->source_line = d->source_line;
		return 0;
	}
	uint32_t tag = identity_tag(d);
	if (!first->kind && run_first_code(sf, name, tag)) {
		*first = *d;
		return 0;
	}
	const char *key = frame_key(sf, name, tag, &len);
	struct frame_desc *other = desc_slot(sf, key, len, &added);
	if (added)
		*other = *d;
	return tag;
}

/* Describe a user frame named name (fr: the symbolizer's answer; at: its
 * source, or NULL); returns its identity tag.  A symbol's name is its
 * file's string: seen by pointer, it is the same code (other names, such as
 * "[module]", are looked up each time). */
static uint32_t describe_user(struct stackframes *sf, const char *name, const struct syms_frame *fr,
			      const struct sourceframes_frame *at)
{
	size_t slot = seen_slot(name);
	int named = fr->name != NULL;

	if (named && sf->seen[slot].name == name)
		return sf->seen[slot].tag;
	struct frame_desc d = user_desc(sf, name, fr, at);
	uint32_t tag = describe_as(sf, name, &d);
	if (named) {
		sf->seen[slot].name = name;
		sf->seen[slot].tag = tag;
	}
	return tag;
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
		stackframes_describe(sf, name, "inline", src[k].file, (int)src[k].line);
		sf->st.inline_frames++;
		push(sf, name);
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
			describe_new(sf, unwind_mark_name(ips[i]));
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
		int nsrc = inline_frames ? source_frames(sf, pid, &fr, src) : 0;
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
		push_tagged(sf, name, describe_user(sf, name, &fr, nsrc > 0 ? &src[nsrc - 1] : NULL));
		if (!(sf->flags & SF_NO_INLINE))
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
		describe_new(sf, names[i]);	/* any not described yet is a marker */
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
		struct frame_desc *d = describe_new(sf, name);
		if (d && named) {
			d->kind = "kernel";
			d->file = "[kernel.kallsyms]";
		}
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
	hashtab_free(sf->described);
	sf->described = hashtab_new();
	free(sf->desc);
	sf->desc = NULL;
	sf->desc_cap = 0;
	memset(sf->seen, 0, sizeof(sf->seen));
	sf->n = 0;
	sf->jit_leaf = NULL;
}

void stackframes_syms_forgotten(struct stackframes *sf)
{
	memset(sf->seen, 0, sizeof(sf->seen));
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

/* A frame's key in frame_ids and described: its name, and for a tagged
 * frame a NUL and the tag after it (stream.h's stream_frame_key), in
 * sf->scratch. */
static const char *frame_key(struct stackframes *sf, const char *name, uint32_t tag, size_t *len)
{
	*len = strlen(name);
	if (!tag)
		return name;
	sf->scratch = marple_grow(sf->scratch, &sf->scratch_cap, *len + STREAM_TAG_KEY_LEN, 1);
	memcpy(sf->scratch, name, *len);
	sf->scratch[*len] = 0;
	memcpy(sf->scratch + *len + 1, &tag, sizeof(tag));
	*len += STREAM_TAG_KEY_LEN;
	return sf->scratch;
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
		const char *k = frame_key(sf, sf->frames[i], sf->tags[i], &klen);
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
	json_object_set_new(o, "inline_frames", json_integer((json_int_t)sf->st.inline_frames));
	json_object_set_new(o, "go_frames", json_integer((json_int_t)sf->st.go_frames));
	json_object_set_new(trailer, "sources", o);
}

void stackframes_trailer_add(const struct stackframes *sf, json_t *trailer)
{
	json_t *all = json_object(), *ids = json_object();
	size_t n = hashtab_size(sf->described);

	for (size_t i = 0; i < n; i++) {
		const struct hashtab_entry *e = hashtab_at(sf->described, i);
		const struct frame_desc *d = &sf->desc[i];
		if (!d->kind)	/* a name only other code of had in the section (tagged) */
			continue;
		json_t *o = json_object();
		const char *kind = d->kind;
		json_object_set_new(o, "kind", json_string(kind));
		json_t *file = d->file ? stream_json_string_bytes(d->file, strlen(d->file)) : NULL;
		/* a file's build id once, in "build_ids", not in each of its frames */
		if (file && d->build_id && d->build_id[0])
			json_object_set_new(ids, json_string_value(file), json_string(d->build_id));
		if (file && strcmp(kind, "kernel") != 0)	/* kernel: [kernel.kallsyms], said by the kind */
			json_object_set_new(o, "file", file);
		else
			json_decref(file);
		if (d->has_offset)
			json_object_set_new(o, "offset", json_integer((json_int_t)d->offset));
		if (d->line > 0)
			json_object_set_new(o, "line", json_integer(d->line));
		if (d->source)
			json_object_set_new(o, "source", stream_json_string_bytes(d->source, strlen(d->source)));
		if (d->source && d->source_line > 0)
			json_object_set_new(o, "source_line", json_integer(d->source_line));
		size_t name_len;
		uint32_t tag = stream_frame_key_split(e->key, e->len, &name_len);
		char *name = escape_dup(e->key, name_len), *key = name;
		if (tag)	/* as the records write it */
			key = marple_asprintf("%s#%08" PRIx32, name, tag);
		json_object_set_new(all, key, o);
		if (key != name)
			free(key);
		free(name);
	}
	json_object_set_new(trailer, "frames", all);
	json_object_set_new(trailer, "build_ids", ids);
	if (sf->sources)
		sources_trailer_add(sf, trailer);
}
