/* pyframes.c — Python functions in the stacks (see pyframes.h). */
#include "pyframes.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bpfmap.h"
#include "framemerge.h"
#include "hashtab.h"
#include "mappedfiles.h"
#include "perllayout.h"
#include "phplayout.h"
#include "procmaps.h"
#include "procnewsring.h"
#include "pycodes.h"
#include "pyelf.h"
#include "pylayout.h"
#include "rubylayout.h"
#include "runtimelayouts.h"
#include "stackframes.h"
#include "stacks.h"
#include "util.h"

#include <linux/types.h>
#include "python.h"
#include "tsdblock.h"

struct pyframes {
	struct syms_cache *syms;
	int procs_fd, counters_fd, stacks_fd, files_fd;
	int seen_fd;			/* pids_seen (stacks.bpf.h): an image's answer kept */
	int seen_gen_fd;		/* pids_seen_gen: bumped when one is cleared */
	uint32_t walks;			/* enum py_walks: the interpreters the BPF side walks */
	uint32_t tsd_block;
	/* what a file tells about Python: pyframes' slot in the model
	 * (mappedfiles.h), each such file held */
	struct mappedfiles *model;
	struct mappedfile **held;
	size_t nheld, held_cap;
	struct hashtab *procs;		/* pid -> index in proc[] */
	struct pyproc *proc;
	size_t nproc, proc_cap;
	struct pycodes *codes;		/* the code objects named */
	struct hashtab *names;		/* interned frame names */
	struct hashtab *files;		/* their files, interned */
	struct pyname { const char *file; int line; } *name_of;	/* by names' index */
	size_t name_cap;
	struct hashtab *refused;	/* "pid version" said once */
	json_t *interpreters;		/* "3.12.1 table" -> processes (the trailer's) */
	uint64_t asked, walked, not_python, refused_n;
	int debug_answers;		/* MARPLE_DEBUG_ANSWERS: each answer said on stderr */
	const char *lose_comm;		/* MARPLE_TEST_LOSE_REQUESTS=COMM: its requests lost */
	/* images looked at before they were whole ((pid, exec id) -> looks),
	 * how many were, and how many were answered though they still did
	 * not look whole after LOOKS_MAX looks */
	struct hashtab *looks;
	uint64_t looked_again, answered_unready;
	uint64_t looked_when_merged;	/* stacks of a process never asked about */
	/* images answered native for want of an interpreter ((pid, exec id) ->
	 * looks since), looked at again when the unwinder finds a file mapped
	 * since (dlopen: uwsgi, vim, a program embedding libpython); those
	 * looked at again, and those then walked */
	struct hashtab *natives;
	uint64_t natives_again, natives_walked;
	uint64_t merged, mismatched, unpaired_activations, dropped_frames, unnamed_code;
	uint64_t placed_outside;	/* samples with Python frames put before a cut native stack */
	uint64_t trampolines;		/* -X perf trampoline frames left out (the Python frames say them) */
	/* new stacks the BPF side told of; those whose code objects it knew
	 * named (PY_REQUEST_KNOWN); those that were new */
	uint64_t stacks_told, stacks_told_known, stacks_named;
	uint64_t cpu_ns;		/* this side's CPU: looking, naming, merging */
	uint64_t from_file;		/* Python processes walked from their first sample */
	uint64_t before_known;		/* user stacks of Python processes stored native only,
					 * before they were looked at */
	/* what the last stack merged gave, per sample: weighed by on_weigh */
	struct { uint64_t merged, mismatched, unpaired, dropped, outside, trampolines; } last;
	/* the counts the last trailer showed, and those the next subtracts
	 * (pyframes_next_section: continuous mode) */
	struct pycounts {
		uint64_t bpf[PY_NCOUNTERS];
		uint64_t walked, refused_n, looked_again, answered_unready, looked_when_merged, natives_again, natives_walked, merged, mismatched, unpaired_activations, dropped_frames,
			placed_outside, trampolines, code_reread, from_file, before_known, cpu_ns, stacks_told, stacks_told_known,
			stacks_named;
	} reported, before;
	struct hashtab *stacks;		/* pid and Python words -> index in stack_names[] */
	struct stack_names { size_t first, n; } *stack_names;
	size_t nstack_names, stack_names_cap;
	const char **name_pool;		/* the names of each stack told, leaf first */
	size_t npool, pool_cap;
};

/* Each interpreter's name (in messages), frame kind, and frame for a
 * function gone before it was named */
static const struct { const char *name, *kind, *gone; uint32_t walk; } langs[] = {
	[PYPROC_PYTHON] = { "Python", "python", "[python: code object gone]", PY_WALKS_CPYTHON },
	[PYPROC_PHP] = { "PHP", "php", "[php: function gone]", PY_WALKS_PHP },
	[PYPROC_PERL] = { "Perl", "perl", "[perl: sub gone]", PY_WALKS_PERL },
	[PYPROC_RUBY] = { "Ruby", "ruby", "[ruby: method gone]", PY_WALKS_RUBY },
};

struct pyframes *pyframes_open(void)
{
	uint32_t tsd;

	if (tsdblock_find(&tsd) != 0) {
		marple_warn("cannot find glibc's thread-specific data: Python processes are profiled natively");
		return NULL;
	}
	elf_version(EV_CURRENT);
	struct pyframes *pf = marple_calloc(1, sizeof(*pf));
	pf->procs_fd = pf->counters_fd = pf->stacks_fd = pf->files_fd = pf->seen_fd = pf->seen_gen_fd = -1;
	pf->walks = PY_WALKS_ALL;
	pf->tsd_block = tsd;
	pf->model = mappedfiles_shared();
	pf->procs = hashtab_new();
	pf->names = hashtab_new();
	pf->refused = hashtab_new();
	pf->looks = hashtab_new();
	pf->natives = hashtab_new();
	pf->stacks = hashtab_new();
	pf->interpreters = json_object();
	const char *debug = getenv("MARPLE_DEBUG_ANSWERS");
	pf->debug_answers = debug && *debug;
	pf->lose_comm = getenv("MARPLE_TEST_LOSE_REQUESTS");
	return pf;
}

int pyframes_bind(struct pyframes *pf, struct bpf_object *obj, struct syms_cache *syms)
{
	struct bpf_map *procs = bpf_object__find_map_by_name(obj, "py_procs");
	struct bpf_map *ctr = bpf_object__find_map_by_name(obj, "py_counters");
	struct bpf_map *stacks = bpf_object__find_map_by_name(obj, "stacks");
	struct bpf_map *files = bpf_object__find_map_by_name(obj, "py_files");
	struct bpf_map *codes = bpf_object__find_map_by_name(obj, "py_codes");
	if (!procs || !ctr || !stacks || !files || !codes || pf->codes)
		return -1;
	pf->syms = syms;
	pf->procs_fd = bpf_map__fd(procs);
	pf->counters_fd = bpf_map__fd(ctr);
	pf->stacks_fd = bpf_map__fd(stacks);
	pf->files_fd = bpf_map__fd(files);
	struct bpf_map *seen = bpf_object__find_map_by_name(obj, "pids_seen");
	pf->seen_fd = seen ? bpf_map__fd(seen) : -1;
	struct bpf_map *seen_gen = bpf_object__find_map_by_name(obj, "pids_seen_gen");
	pf->seen_gen_fd = seen_gen ? bpf_map__fd(seen_gen) : -1;
	pf->codes = pycodes_new(bpf_map__fd(codes));
	return 0;
}

void pyframes_free(struct pyframes *pf)
{
	if (!pf)
		return;
	pycodes_free(pf->codes);
	for (size_t i = 0; i < pf->nheld; i++) {
		mappedfile_set_slot(pf->held[i], pf, NULL, NULL);	/* frees its pyelf */
		mappedfile_put(pf->held[i]);
	}
	free(pf->held);
	if (pf->model)
		mappedfiles_release(pf->model);
	free(pf->proc);
	hashtab_free(pf->procs);
	hashtab_free(pf->names);
	hashtab_free(pf->files);
	free(pf->name_of);
	hashtab_free(pf->refused);
	hashtab_free(pf->looks);
	hashtab_free(pf->natives);
	json_decref(pf->interpreters);
	hashtab_free(pf->stacks);
	free(pf->stack_names);
	free(pf->name_pool);
	free(pf);
}

/* What the file pid maps at l tells about Python, read the first time
 * (a file that cannot be opened tells nothing). */
static const struct pyelf *elf_of(struct pyframes *pf, pid_t pid, const struct procmaps_line *l)
{
	static const struct pyelf nothing;
	struct mappedfile *f = mappedfiles_open_line(pf->model, pid, l);
	struct pyelf *e = f ? mappedfile_slot(f, pf) : NULL;

	if (!f || e) {
		mappedfile_put(f);
		return e ? e : &nothing;
	}
	e = marple_calloc(1, sizeof(*e));
	pyelf_read(e, f);
	mappedfile_release_pages(f);
	mappedfile_set_slot(f, pf, e, free);
	pf->held = marple_grow(pf->held, &pf->held_cap, pf->nheld + 1, sizeof(*pf->held));
	pf->held[pf->nheld++] = f;
	return e;
}

static void set_proc(struct pyframes *pf, uint32_t pid, const struct py_proc *v)
{
	bpf_map_update_elem(pf->procs_fd, &pid, v, BPF_ANY);
}

static struct pyproc *proc_of(struct pyframes *pf, uint32_t pid)
{
	size_t before = hashtab_size(pf->procs);
	const struct hashtab_entry *he = hashtab_add(pf->procs, &pid, sizeof(pid), 0, 0);
	size_t idx = hashtab_index(pf->procs, he);
	if (idx >= before) {
		pf->proc = marple_grow(pf->proc, &pf->proc_cap, pf->nproc + 1, sizeof(*pf->proc));
		memset(&pf->proc[pf->nproc++], 0, sizeof(*pf->proc));
	}
	return &pf->proc[idx];
}

/* pid's entry, or NULL if it was never looked at */
static struct pyproc *proc_found(const struct pyframes *pf, uint32_t pid)
{
	const struct hashtab_entry *e = hashtab_find(pf->procs, &pid, sizeof(pid));
	return e ? &pf->proc[hashtab_index(pf->procs, e)] : NULL;
}

static void comm_of(pid_t pid, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	FILE *f = fopen(path, "r");
	buf[0] = 0;
	if (f) {
		if (fgets(buf, (int)len, f))
			buf[strcspn(buf, "\n")] = 0;
		fclose(f);
	}
}

/* Say once per process and version what about its Python (why it is
 * profiled natively, or a table the interpreter contradicts). */
static void say_once(struct pyframes *pf, const struct pyproc *p, const char *what)
{
	char key[64], comm[32];
	snprintf(key, sizeof(key), "%u %s", p->pid, p->version);
	size_t before = hashtab_size(pf->refused);
	if (hashtab_index(pf->refused, hashtab_add(pf->refused, key, strlen(key), 0, 0)) < before)
		return;
	comm_of((pid_t)p->pid, comm, sizeof(comm));
	marple_warn("process %u (%s) runs %s %s: %s", p->pid, comm, langs[p->lang].name, p->version, what);
}

/* Count a process in the trailer's "interpreters": version and how its
 * layout was found (or "refused"). */
static void count_interpreter(struct pyframes *pf, const struct pyproc *p, const char *how)
{
	char key[96];
	snprintf(key, sizeof(key), "%s%s%s %s", p->lang != PYPROC_PYTHON ? langs[p->lang].kind : "",
		 p->lang != PYPROC_PYTHON ? " " : "", p->version, how);
	json_t *n = json_object_get(pf->interpreters, key);
	json_object_set_new(pf->interpreters, key, json_integer(n ? json_integer_value(n) + 1 : 1));
}

/* A program that runs a shared libpython (struct py_file.launch_slot): its
 * facts and identity. */
struct pylauncher {
	const struct pyelf *elf;
	struct mappedfile_id id;
	int files, program;	/* the executable file mappings looked at; the program among them */
	int alive;		/* its /proc/PID/exe was there (a process that exited has none) */
};

/* The identity of the program pid runs (its /proc/PID/exe): 0, or -1 (gone). */
static int program_id(pid_t pid, struct mappedfile_id *id)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (stat(path, &st) != 0)
		return -1;
	*id = mappedfile_id_of_stat(&st);
	return 0;
}

/* The ELF mapped by pid that is a CPython, and its load bias there (the
 * device and inode it was mapped from in *l); NULL if none.  A program
 * seen before it that launches a shared libpython: into *launcher. */
static const struct pyelf *python_elf(struct pyframes *pf, uint32_t pid, uint64_t *bias, struct procmaps_line *l,
				      struct pylauncher *launcher)
{
	struct procmaps pm;
	const struct pyelf *py = NULL;
	struct mappedfile_id exe;
	int have_exe = program_id((pid_t)pid, &exe) == 0;

	launcher->elf = NULL;
	launcher->files = launcher->program = 0;
	launcher->alive = have_exe;
	procmaps_open(&pm, (pid_t)pid);
	while (!py && procmaps_next(&pm, l)) {
		if (!procmaps_is_exec(l) || !procmaps_is_file(l))
			continue;
		int is_program = have_exe && mappedfile_id_equal(exe, mappedfile_id_of_line(l));
		launcher->files++;
		launcher->program |= is_program;
		const struct pyelf *e = elf_of(pf, (pid_t)pid, l);
		if (!e->python && !e->php && !e->perl && !e->ruby && e->launch_slot && !launcher->elf && is_program) {
			launcher->elf = e;
			launcher->id = mappedfile_id_of_line(l);
		}
		if (!e->python && !e->php && !e->perl && !e->ruby)
			continue;
		for (int i = 0; i < e->nload; i++) {
			if (l->pgoff >= e->load[i].offset && l->pgoff < e->load[i].offset + e->load[i].filesz) {
				*bias = l->start - (e->load[i].vaddr + (l->pgoff - e->load[i].offset));
				py = e;
				break;
			}
		}
	}
	procmaps_close(&pm);
	return py;
}

uint32_t pyframes_walks_for(struct pyframes *pf, pid_t pid)
{
	struct pylauncher launcher;
	struct procmaps_line l;
	uint64_t bias = 0;
	const struct pyelf *py = python_elf(pf, (uint32_t)pid, &bias, &l, &launcher);

	pf->walks = !py ? PY_WALKS_ALL : py->php ? PY_WALKS_PHP : py->perl ? PY_WALKS_PERL :
		    py->ruby ? PY_WALKS_RUBY : PY_WALKS_CPYTHON;
	return pf->walks;
}

/* The facts of p's Python file (and of its launcher, if it has one) into
 * py_files, for the next process whose program it is or launches it (the
 * kernel's s_dev: major << 20 | minor, as the maps print them); only a
 * layout of the built-in table: debug offsets are in the process's own
 * writable memory, a word on itself, not on other processes */
static void publish_file(struct pyframes *pf, const struct pyproc *p, const struct py_proc *v,
			 const struct pyelf *py, const struct procmaps_line *l, const struct pylauncher *launcher)
{
	if (!l->inode || !py->text_vaddr || !p->by_table)
		return;
	struct unwind_file_key k = { .dev = mappedfile_id_kernel_dev(mappedfile_id_of_line(l)), .ino = l->inode };
	struct py_file f = { .proc = *v, .text_vaddr = py->text_vaddr, .text_offset = py->text_offset,
			     .stamp = py->file->stamp };
	f.proc.runtime = py->runtime;
	f.proc.pidns_dev = f.proc.pidns_ino = 0;
	bpf_map_update_elem(pf->files_fd, &k, &f, BPF_ANY);
	if (!launcher->elf || !launcher->elf->text_vaddr)
		return;
	struct unwind_file_key lk = { .dev = mappedfile_id_kernel_dev(launcher->id), .ino = launcher->id.ino };
	struct py_file lf = { .text_vaddr = launcher->elf->text_vaddr, .text_offset = launcher->elf->text_offset,
			      .launch_slot = launcher->elf->launch_slot, .stamp = launcher->elf->file->stamp };
	bpf_map_update_elem(pf->files_fd, &lk, &lf, BPF_ANY);
}

/* p, whose layout is chosen, is walked: its offsets into py_procs, and its
 * file's into py_files */
static void walk_proc(struct pyframes *pf, struct pyproc *p, const struct py_proc *seen, const struct pyelf *py,
		      const struct procmaps_line *l, const struct pylauncher *launcher)
{
	struct py_proc v = { .exec_id = p->exec_id, .state = PY_WALK, .runtime = p->runtime,
			     .tsd_block = pf->tsd_block };

	p->walked = 1;
	pf->walked++;
	if (seen->state == PY_WALK)
		pf->from_file++;
	pf->before_known += seen->unknown_samples;
	if (p->php)
		phplayout_to_proc(p->php, &v);
	else if (p->perl)
		perllayout_to_proc(p->perl, &v);
	else if (p->ruby)
		rubylayout_to_proc(p->ruby, p->ruby_threads ? (int32_t)(py->ruby_tls_slot - py->runtime) : 0,
				   (uint32_t)py->ruby_tls_offset, &v);
	else
		pylayout_to_proc(&p->lay, &v);
	/* in another pid namespace than ours, its thread ids are that one's */
	char ns[64];
	struct stat theirs, ours;
	snprintf(ns, sizeof(ns), "/proc/%u/ns/pid", p->pid);
	if (stat(ns, &theirs) == 0 && stat("/proc/self/ns/pid", &ours) == 0 &&
	    (theirs.st_ino != ours.st_ino || theirs.st_dev != ours.st_dev)) {
		v.pidns_dev = theirs.st_dev;
		v.pidns_ino = theirs.st_ino;
	}
	set_proc(pf, p->pid, &v);
	publish_file(pf, p, &v, py, l, launcher);
}

/* MARPLE_DEBUG_ANSWERS: one line on stderr for each request answered (or
 * not), to see why a process was walked or not */
static void say_answer(const struct pyframes *pf, uint32_t pid, uint32_t exec_id, const char *fmt, ...)
{
	char comm[32], what[200];
	va_list ap;

	if (!pf->debug_answers)
		return;
	comm_of((pid_t)pid, comm, sizeof(comm));
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	marple_warn("answer: pid %u exec %u (%s): %s", pid, exec_id, comm, what);
}

/* An image looked at this many times and still not whole is answered as
 * it looks: its process's samples ask again one at a time (64 samples: at
 * 499 Hz 0.13 s of its CPU, where ld.so takes milliseconds).  The looks
 * are counted for the last LOOKS_KEPT images (then counted anew). */
#define LOOKS_MAX 64
#define LOOKS_KEPT 4096

/* Image exec_id of pid is not whole yet (its exec under way, ld.so not
 * done mapping or relocating its libraries): its entry let go, so that its
 * next sample asks again (1), unless it was looked at LOOKS_MAX times:
 * then answered as it is (0), counted. */
static int look_again(struct pyframes *pf, uint32_t pid, uint32_t exec_id, const char *why)
{
	uint32_t key[2] = { pid, exec_id };
	struct py_proc now;

	if (hashtab_size(pf->looks) >= LOOKS_KEPT) {
		hashtab_free(pf->looks);
		pf->looks = hashtab_new();
	}
	const struct hashtab_entry *e = hashtab_add(pf->looks, key, sizeof(key), 1, 0);

	if (e->count[0] >= LOOKS_MAX) {
		pf->answered_unready++;
		say_answer(pf, pid, exec_id, "answered after %d looks, though %s", LOOKS_MAX, why);
		return 0;
	}
	/* (unless it has moved on to another image, asked about already) */
	if (bpf_map_lookup_elem(pf->procs_fd, &pid, &now) == 0 && now.exec_id == exec_id)
		bpf_map_delete_elem(pf->procs_fd, &pid);
	pf->looked_again += e->count[0] == 1;
	say_answer(pf, pid, exec_id, "asked again: %s", why);
	return 1;
}

/* Images answered native kept for a look again: the last NATIVES_KEPT
 * (then kept anew), each looked at again at most NATIVES_LOOKS times (the
 * unwinder tells a file VMA once, UNWIND_LEARNED_VMAS a process at most,
 * until its mappings are read again) */
#define NATIVES_KEPT 65536
#define NATIVES_LOOKS 8

static void keep_native(struct pyframes *pf, uint32_t pid, uint32_t exec_id)
{
	uint32_t key[2] = { pid, exec_id };
	if (hashtab_size(pf->natives) >= NATIVES_KEPT) {
		hashtab_free(pf->natives);
		pf->natives = hashtab_new();
	}
	hashtab_add(pf->natives, key, sizeof(key), 0, 0);
}

/* The BPF side asks about image exec_id of pid: 1 if it is walked now. */
static int look_at(struct pyframes *pf, uint32_t pid, uint32_t exec_id)
{
	struct py_proc v = { .exec_id = exec_id, .state = PY_NATIVE }, seen;
	struct procmaps_line l;
	uint64_t bias = 0;
	const char *how = NULL;

	pf->asked++;
	/* what the BPF side made of it meanwhile: walked from its first sample
	 * (its program a Python file known), or its stacks native so far; or
	 * it has moved on to another image (exec'ed since: asked again), and
	 * this answer would be about the wrong one */
	if (bpf_map_lookup_elem(pf->procs_fd, &pid, &seen) != 0)
		memset(&seen, 0, sizeof(seen));
	else if (seen.exec_id != exec_id) {
		say_answer(pf, pid, exec_id, "none: it runs image %u now", seen.exec_id);
		return 0;
	}
	struct pylauncher launcher = { 0 };
	const struct pyelf *py = python_elf(pf, pid, &bias, &l, &launcher);
	/* a launcher looked at before ld.so mapped its libpython, or an
	 * image sampled in its exec, before the kernel mapped its program */
	if (!py && launcher.elf && look_again(pf, pid, exec_id, "a launcher whose library is not mapped yet"))
		return 0;
	if (!py && !launcher.files && launcher.alive && look_again(pf, pid, exec_id, "nothing executable mapped yet"))
		return 0;
	if (!py) {
		pf->not_python++;
		set_proc(pf, pid, &v);
		keep_native(pf, pid, exec_id);
		say_answer(pf, pid, exec_id, "native: no interpreter in %d executable files (the program %s)",
			   launcher.files, launcher.program ? "among them" : "not among them");
		return 0;
	}
	struct pyproc *p = proc_of(pf, pid);
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->exec_id = exec_id;
	p->runtime = py->runtime + bias;
	p->code_type = py->code_type + bias;
	p->unicode_type = py->unicode_type + bias;
	p->bytes_type = py->bytes_type + bias;
	p->eval_lo = py->eval_lo + bias;
	p->eval_hi = py->eval_hi + bias;
	if (py->cold_hi)
		p->cold_lo = py->cold_lo + bias, p->cold_hi = py->cold_hi + bias;
	if (py->loop_hi)
		p->loop_lo = py->loop_lo + bias, p->loop_hi = py->loop_hi + bias;
	char note[224];
	p->lang = py->php ? PYPROC_PHP : py->perl ? PYPROC_PERL : py->ruby ? PYPROC_RUBY : PYPROC_PYTHON;
	const char *why = runtimelayouts_choose(p, py, bias, &how, note, sizeof(note));
	if (note[0])
		say_once(pf, p, note);
	if (!why && !(pf->walks & langs[p->lang].walk))
		why = "not walked: the capture began for another interpreter's process and loaded its walk alone";
	if (why && p->refused_early && look_again(pf, pid, exec_id, why))
		return 0;
	if (why) {
		char msg[160];
		pf->refused_n++;
		snprintf(msg, sizeof(msg), "%s; profiled natively", why);
		say_once(pf, p, msg);
		count_interpreter(pf, p, "refused");
		set_proc(pf, pid, &v);
		say_answer(pf, pid, exec_id, "native: %s %s refused: %s", langs[p->lang].name, p->version, why);
		return 0;
	}
	count_interpreter(pf, p, how);
	if (p->ruby && !p->ruby_threads)
		say_once(pf, p, "its threads but the main one are profiled natively (no thread-local ruby_current_ec found)");
	walk_proc(pf, p, &seen, py, &l, &launcher);
	say_answer(pf, pid, exec_id, "walked: %s %s (%s; the BPF side %s, %u samples before)", langs[p->lang].name,
		   p->version, how, seen.state == PY_WALK ? "walked it already" : "waited",
		   (unsigned)seen.unknown_samples);
	return 1;
}

/* Is the file of VMA note n an interpreter (as elf_of reads it, once a
 * file)?  Only then is its process looked at again: a system-wide
 * capture's compilers meet a dozen libraries each after their first
 * sample, and reading their maps each time would hold the news up. */
static int note_is_interpreter(struct pyframes *pf, const struct unwind_vma_note *n)
{
	struct procmaps_line l = { .start = n->start, .end = n->end, .pgoff = n->pgoff, .perms = "r-xp",
				   .dev_major = n->key.dev >> 20, .dev_minor = n->key.dev & 0xfffff,
				   .inode = n->key.ino, .path = "" };
	const struct pyelf *e = elf_of(pf, (pid_t)n->tgid, &l);
	return e->python || e->php || e->perl || e->ruby;
}

/* Image exec_id of pid, answered native, looked at again (why): a file
 * mapped since may be an interpreter (a libpython dlopen'ed later). */
static void look_native_again(struct pyframes *pf, uint32_t pid, uint32_t exec_id, const char *why)
{
	uint32_t key[2] = { pid, exec_id };

	hashtab_add(pf->natives, key, sizeof(key), 1, 0);
	pf->natives_again++;
	say_answer(pf, pid, exec_id, "looked at again: %s", why);
	int walked = look_at(pf, pid, exec_id);
	pf->natives_walked += (uint64_t)walked;
	/* its samples, told it is not Python (pids_seen), read the new
	 * answer: walked, native again, or asked again at the next sample
	 * (its library not relocated yet).  Only once it is given: a sample
	 * in between read the old one, PY_NATIVE, and told them again for
	 * good (walked, yet none of 777 samples merged) */
	__u64 k = STACKS_SEEN_KEY(pid, exec_id);
	__u8 v;
	if (pf->seen_fd >= 0 && bpf_map_lookup_elem(pf->seen_fd, &k, &v) == 0) {
		v = (__u8)(v & ~(STACKS_SEEN_PY_ANSWERED | STACKS_SEEN_NOT_PYTHON));
		bpf_map_update_elem(pf->seen_fd, &k, &v, BPF_EXIST);
	}
	/* and the CPUs that remember the old answer (up to STACKS_SEEN_RECHECK
	 * samples each: 15 of 241 native in python.t's dlopen case) forget it */
	__u32 zero = 0, gen;
	if (pf->seen_gen_fd >= 0 && bpf_map_lookup_elem(pf->seen_gen_fd, &zero, &gen) == 0) {
		gen++;
		bpf_map_update_elem(pf->seen_gen_fd, &zero, &gen, BPF_ANY);
	}
	say_answer(pf, pid, exec_id, "its samples read the new answer: %s", walked ? "walked" : "not walked");
}

/* Is image exec_id of pid one answered native, and native still (not
 * walked since: both the note and the request below come of one dlopen),
 * to be looked at again? */
static int native_to_look_at(struct pyframes *pf, uint32_t pid, uint32_t exec_id)
{
	uint32_t key[2] = { pid, exec_id };
	const struct hashtab_entry *e = hashtab_find(pf->natives, key, sizeof(key));
	struct py_proc now;
	return e && e->count[0] < NATIVES_LOOKS && bpf_map_lookup_elem(pf->procs_fd, &pid, &now) == 0 &&
	       now.exec_id == exec_id && now.state == PY_NATIVE;
}

/* A file VMA the unwinder found outside the mappings it had read
 * (PROCNEWS_UNWIND_VMA, also the symbolizer's news): a process answered
 * native for want of an interpreter may have dlopen'ed one. */
static int on_mapped(void *ctx, void *data, size_t len)
{
	const struct unwind_vma_note *n = data;
	struct pyframes *pf = ctx;

	if (len < sizeof(*n) || !native_to_look_at(pf, n->tgid, n->exec_id))
		return 0;
	uint64_t start = marple_thread_cpu_ns();
	if (note_is_interpreter(pf, n))
		look_native_again(pf, n->tgid, n->exec_id, "a file mapped since it was answered native");
	pf->cpu_ns += marple_thread_cpu_ns() - start;
	return 0;
}

/* The unwinder asks for a process's mappings to be read again
 * (PROCNEWS_UNWIND_REQUEST): it met a file they do not hold.  Read again,
 * they hold the dlopen'ed interpreter too, whose frames then need no VMA
 * lookup, so that no note (on_mapped) ever tells of it: in 1 run of 12 of
 * ruby.t's dlopen case the first sample in libruby came during a page
 * fault (bpf_find_vma busy), and the process stayed native. */
static int on_unwind_request(void *ctx, void *data, size_t len)
{
	struct pyframes *pf = ctx;
	struct py_proc now;
	uint32_t pid;

	if (len < sizeof(pid))
		return 0;
	memcpy(&pid, data, sizeof(pid));
	if (bpf_map_lookup_elem(pf->procs_fd, &pid, &now) != 0 || !native_to_look_at(pf, pid, now.exec_id))
		return 0;
	uint64_t start = marple_thread_cpu_ns();
	look_native_again(pf, pid, now.exec_id, "its unwinder met a file mapped since it was answered native");
	pf->cpu_ns += marple_thread_cpu_ns() - start;
	return 0;
}

static const char *frame_name(struct pyframes *pf, const struct pyproc *p, uint64_t word, int recheck);

/* The Python words of a stored stack (those after PY_STACK_MARK), into
 * words: how many. */
static int python_words(const uint64_t *stack, uint64_t *words)
{
	int i = 0, m = 0;
	while (i < MARPLE_STACK_DEPTH && stack[i] && !PY_IS_STACK_MARK(stack[i]))
		i++;
	for (i++; i < MARPLE_STACK_DEPTH && stack[i]; i++)
		words[m++] = stack[i];
	return m;
}

/* The names given to the Python words of pid when first seen (n 0: not
 * yet), by content: the same stack id names other stacks after a drain. */
static struct stack_names *names_of(struct pyframes *pf, uint32_t pid, const uint64_t *words, int m)
{
	uint64_t key[MARPLE_STACK_DEPTH + 1];
	key[0] = pid;
	memcpy(key + 1, words, (size_t)m * sizeof(*words));
	size_t before = hashtab_size(pf->stacks);
	size_t i = hashtab_index(pf->stacks, hashtab_add(pf->stacks, key, (size_t)(m + 1) * 8, 0, 0));
	if (i >= before) {
		pf->stack_names = marple_grow(pf->stack_names, &pf->stack_names_cap, i + 1, sizeof(*pf->stack_names));
		pf->nstack_names = i + 1;
		pf->stack_names[i].first = pf->npool;
		pf->stack_names[i].n = 0;
	}
	return &pf->stack_names[i];
}

/* Name the code objects of a new stack now, while its process lives; known:
 * the BPF side found them all named, as they still are (PY_REQUEST_KNOWN),
 * so the cache names them as they were then. */
static void name_stack(struct pyframes *pf, uint32_t pid, uint32_t exec_id, int32_t id, int known)
{
	uint64_t stack[MARPLE_STACK_DEPTH], words[MARPLE_STACK_DEPTH];
	const struct pyproc *p = proc_found(pf, pid);	/* never looked at: nothing to name with */

	if (!p || !p->walked || p->exec_id != exec_id || bpf_map_lookup_elem(pf->stacks_fd, &id, stack) != 0)
		return;
	int m = python_words(stack, words);
	struct stack_names *sn = m ? names_of(pf, pid, words, m) : NULL;
	if (!sn || sn->n)
		return;		/* named before */
	pf->stacks_named++;
	sn->first = pf->npool;
	pf->name_pool = marple_grow(pf->name_pool, &pf->pool_cap, pf->npool + (size_t)m, sizeof(*pf->name_pool));
	for (int i = m; i-- > 0;)	/* from the root: a Ruby block's method is named first */
		pf->name_pool[pf->npool + (size_t)i] = frame_name(pf, p, words[i], !known);
	pf->npool += (size_t)m;
	sn->n = m;
}

/* Are pid's frames named by their code objects and words alone (Perl's,
 * PHP's: the line is in the word; Ruby's: its position, in the line table
 * read with the iseq's names), none of its memory read once the code
 * objects are?  Then a stack whose code objects are all named, as they
 * still are (PY_REQUEST_KNOWN), is named by the merge, from the cache: it
 * need not be read now (a Perl capture told a fifth of its samples'
 * stacks so, each a lookup of 2 KiB and two clock reads; a Ruby one a
 * third).  Python's line tables are read as lines are asked for: named
 * now. */
static int named_by_words(const struct pyframes *pf, uint32_t pid)
{
	const struct pyproc *p = proc_found(pf, pid);
	return p && p->walked && p->lang != PYPROC_PYTHON;
}

/* Was image exec_id of pid answered by a merge that met its stacks before
 * this request came (merge_stack)?  Then it is not looked at again. */
static int answered_when_merged(struct pyframes *pf, uint32_t pid, uint32_t exec_id)
{
	struct pyproc *p = proc_found(pf, pid);
	int was = p && p->request_owed && p->merge_looked == exec_id + 1;

	if (was)
		p->request_owed = 0;
	return was;
}

static int on_request(void *ctx, void *data, size_t len)
{
	const struct py_request *r = data;
	struct pyframes *pf = ctx;
	char comm[32];
	if (len < sizeof(*r))
		return 0;
	pf->stacks_told += r->stack_id >= 0;
	pf->stacks_told_known += r->stack_id >= 0 && (r->flags & PY_REQUEST_KNOWN);
	if (r->stack_id >= 0 && (r->flags & PY_REQUEST_KNOWN) && named_by_words(pf, r->pid))
		return 0;
	uint64_t start = marple_thread_cpu_ns();
	if (r->stack_id >= 0)
		name_stack(pf, r->pid, r->exec_id, r->stack_id, (r->flags & PY_REQUEST_KNOWN) != 0);
	else if (pf->lose_comm && (comm_of((pid_t)r->pid, comm, sizeof(comm)), !strcmp(comm, pf->lose_comm)))
		say_answer(pf, r->pid, r->exec_id, "request lost (MARPLE_TEST_LOSE_REQUESTS)");
	else if (!answered_when_merged(pf, r->pid, r->exec_id))
		look_at(pf, r->pid, r->exec_id);
	pf->cpu_ns += marple_thread_cpu_ns() - start;
	return 0;
}

void pyframes_listen(struct pyframes *pf, struct procnewsring *news)
{
	procnewsring_on(news, PROCNEWS_PYTHON, on_request, pf);
	procnewsring_on(news, PROCNEWS_UNWIND_VMA, on_mapped, pf);
	procnewsring_on(news, PROCNEWS_UNWIND_REQUEST, on_unwind_request, pf);
}

static const char *intern(struct pyframes *pf, const char *s)
{
	return hashtab_add(pf->names, s, strlen(s), 0, 0)->key;
}

/* A frame name interned with the file and line it stands for (told to
 * stackframes_describe when the name goes into a stack). */
static const char *intern_frame(struct pyframes *pf, const char *s, const char *file, int line)
{
	size_t before = hashtab_size(pf->names);
	const char *name = intern(pf, s);
	size_t i = hashtab_size(pf->names) - 1;
	if (i >= before) {
		pf->name_of = marple_grow(pf->name_of, &pf->name_cap, i + 1, sizeof(*pf->name_of));
		if (file && !pf->files)
			pf->files = hashtab_new();
		pf->name_of[i].file = file ? hashtab_add(pf->files, file, strlen(file), 0, 0)->key : NULL;
		pf->name_of[i].line = line;
	}
	return name;
}

/* Describe to sf the Python frame name: one intern_frame made, or the
 * literal for a code object gone (no file). */
static const char *described(struct pyframes *pf, struct stackframes *sf, const struct pyproc *p, const char *name)
{
	const char *kind = langs[p->lang].kind;
	if (strcmp(name, langs[p->lang].gone) == 0) {
		stackframes_describe(sf, name, kind, NULL, 0);
		return name;
	}
	size_t i = hashtab_index(pf->names, hashtab_add(pf->names, name, strlen(name), 0, 0));
	stackframes_describe(sf, name, kind, pf->name_of[i].file, pf->name_of[i].line);
	return name;
}

static const char *frame_name(struct pyframes *pf, const struct pyproc *p, uint64_t word, int recheck)
{
	struct pycode *c = pycodes_get(pf->codes, p, PY_FRAME_CODE(word), recheck);
	char buf[1024];
	if (!c->ok) {
		pf->unnamed_code++;
		return langs[p->lang].gone;
	}
	unsigned lasti = (unsigned)PY_FRAME_LASTI(word);
	/* a PHP or Perl frame's word holds its line; a function built into
	 * PHP has none; a Ruby iseq's is found from its position */
	int python = p->lang == PYPROC_PYTHON;
	int line = python || p->lang == PYPROC_RUBY ? pycodes_line(pf->codes, p, c, lasti)
			: lasti == PY_LASTI_UNKNOWN || !c->filename ? 0 : (int)lasti;
	if (!python && !c->filename)
		snprintf(buf, sizeof(buf), "%s", c->qualname);
	else if (line > 0)
		snprintf(buf, sizeof(buf), "%s (%s:%d)", c->qualname, c->filename ? c->filename : "?", line);
	else
		snprintf(buf, sizeof(buf), "%s (%s)", c->qualname, c->filename ? c->filename : "?");
	return intern_frame(pf, buf, c->filename, line);
}

int pyframes_from_root(int na, int ns, int complete, int native_whole)
{
	return native_whole && complete && na > ns;
}

int pyframes_pair(int na, int ns, int complete, int native_whole, int *pair)
{
	int pairs = na < ns ? na : ns;
	for (int a = 0; a < na; a++)
		pair[a] = -1;
	if (na == ns && complete)
		for (int a = 0; a < na; a++)
			pair[a] = a;
	else if (pyframes_from_root(na, ns, complete, native_whole))
		for (int r = 0; r < pairs; r++)
			pair[na - 1 - r] = ns - 1 - r;
	else
		for (int r = 0; r < pairs; r++)
			pair[r] = r;
	return pairs;
}

/* Is Ruby word a C method's (Array#sort, Integer#times)?  Its C function's
 * extent, if known, into *c. */
static void ruby_cmethod(struct pyframes *pf, const struct pyproc *p, uint64_t word, struct framemerge_cmethod *c)
{
	const struct pycode *code = pycodes_get(pf->codes, p, PY_FRAME_CODE(word), 0);
	c->is = code->ok && code->firstlineno == RUBY_IMEMO_MENT;
	c->lo = c->is ? code->native_lo : 0;
	c->hi = c->is ? code->native_hi : 0;
}

/* Put p's frames (words, named pynames if told before) in place of the
 * eval loop's activations in the native frames sf has from first on
 * (framemerge.h), what it gave into pf->last. */
static void merge(struct pyframes *pf, struct stackframes *sf, const struct pyproc *p, size_t first,
		  const uint64_t *ips, int n, const uint64_t *words, int m, const char *const *pynames)
{
	size_t nf;
	const char *const *frames = stackframes_frames(sf, &nf);
	struct framemerge_cmethod cm[PY_MAX_FRAMES];

	if (nf - first != (size_t)n)
		return;
	for (int j = 0; p->lang == PYPROC_RUBY && j < m; j++)
		ruby_cmethod(pf, p, words[j], &cm[j]);
	struct framemerge_stack s = { .ips = ips, .n = n, .native = frames + first, .words = words, .m = m,
				      .cmethod = p->lang == PYPROC_RUBY ? cm : NULL,
				      .eval_lo = p->eval_lo, .eval_hi = p->eval_hi, .cold_lo = p->cold_lo,
				      .cold_hi = p->cold_hi, .loop_lo = p->loop_lo, .loop_hi = p->loop_hi,
				      .native_whole = stackframes_user_whole(sf) };
	struct framemerge_result r;
	framemerge_run(&s, &r);
	pf->last.merged = (uint64_t)r.merged;
	pf->last.mismatched = (uint64_t)r.mismatched;
	pf->last.unpaired = (uint64_t)r.unpaired;
	pf->last.dropped = (uint64_t)r.dropped;
	pf->last.outside = (uint64_t)r.outside;
	pf->last.trampolines = (uint64_t)r.trampolines;
	const char **names = marple_malloc(sizeof(*names) * (r.nout + 1));
	for (size_t i = 0; i < r.nout; i++) {
		int j = r.out[i].word;
		names[i] = j < 0 ? r.out[i].native
			 : described(pf, sf, p, pynames ? pynames[j] : frame_name(pf, p, words[j], 0));
	}
	stackframes_user_splice(sf, first, names, r.nout);
	free(names);
	free(r.out);
}

/* One stack's merge: its native frames are in sf from first on; its Python
 * words go in their place. */
static void merge_stack(struct pyframes *pf, struct stackframes *sf, pid_t pid, uint64_t exec_id, size_t first,
			const uint64_t *ips, size_t n, const uint64_t *words, size_t m)
{
	uint32_t upid = (uint32_t)pid;
	struct pyproc *p = proc_of(pf, upid);

	memset(&pf->last, 0, sizeof(pf->last));
	if ((!p->walked || p->exec_id != (uint32_t)exec_id) && p->merge_looked != (uint32_t)exec_id + 1) {
		/* walked by the BPF side (its file known), this image not answered: its
		 * request lost (ring full) or unread; an answer of the image before is not it */
		pf->looked_when_merged++;
		look_at(pf, upid, (uint32_t)exec_id);
		p = proc_of(pf, upid);
		p->merge_looked = (uint32_t)exec_id + 1;
		p->request_owed = 1;
	}
	if (!p->walked || p->exec_id != (uint32_t)exec_id || n == 0 || m == 0 || m > PY_MAX_FRAMES) {
		pf->last.mismatched = 1;
		return;
	}
	/* the names given when the stack was first seen, if it was told */
	const struct stack_names *sn = names_of(pf, upid, words, (int)m);
	const char *const *pynames = sn && sn->n == m ? pf->name_pool + sn->first : NULL;
	merge(pf, sf, p, first, ips, (int)n, words, (int)m, pynames);
}

/* stackframes' merge (stackframes_set_python), its CPU counted: the native
 * part costs as much without Python, so only this is Python's */
static void on_merge(void *arg, struct stackframes *sf, pid_t pid, uint64_t exec_id, size_t first,
		     const uint64_t *ips, size_t n, const uint64_t *words, size_t m)
{
	struct pyframes *pf = arg;
	uint64_t start = marple_thread_cpu_ns();

	merge_stack(pf, sf, pid, exec_id, first, ips, n, words, m);
	pf->cpu_ns += marple_thread_cpu_ns() - start;
}

/* stackframes' weigh: what the last merge gave, times the samples (or
 * microseconds, bytes) its stack is counted with. */
static void on_weigh(void *arg, uint64_t weight)
{
	struct pyframes *pf = arg;
	pf->merged += pf->last.merged * weight;
	pf->mismatched += pf->last.mismatched * weight;
	pf->unpaired_activations += pf->last.unpaired * weight;
	pf->dropped_frames += pf->last.dropped * weight;
	pf->placed_outside += pf->last.outside * weight;
	pf->trampolines += pf->last.trampolines * weight;
}

void pyframes_merge_into(struct pyframes *pf, struct stackframes *sf)
{
	stackframes_set_python(sf, on_merge, on_weigh, pf);
}

void pyframes_trailer_add(struct pyframes *pf, json_t *tr)
{
	static const char *const names[] = PY_COUNTER_NAMES;
	json_t *o = json_object();
	json_t *c = json_object();
	struct pycounts *r = &pf->reported;
	const struct pycounts *b = &pf->before;

	*r = (struct pycounts){ .walked = pf->walked, .refused_n = pf->refused_n,
				.looked_again = pf->looked_again, .answered_unready = pf->answered_unready,
				.looked_when_merged = pf->looked_when_merged,
				.natives_again = pf->natives_again, .natives_walked = pf->natives_walked, .merged = pf->merged,
				.mismatched = pf->mismatched, .unpaired_activations = pf->unpaired_activations,
				.dropped_frames = pf->dropped_frames, .placed_outside = pf->placed_outside, .trampolines = pf->trampolines,
				.code_reread = pf->codes->reread, .from_file = pf->from_file,
				.before_known = pf->before_known, .cpu_ns = pf->cpu_ns,
				.stacks_told = pf->stacks_told, .stacks_told_known = pf->stacks_told_known,
				.stacks_named = pf->stacks_named };
	for (uint32_t i = 0; i < PY_NCOUNTERS; i++) {
		r->bpf[i] = bpfmap_percpu_sum(pf->counters_fd, i);
		uint64_t v = r->bpf[i] >= b->bpf[i] ? r->bpf[i] - b->bpf[i] : 0;
		json_object_set_new(c, names[i], json_integer((json_int_t)v));
	}
#define SECTION_COUNT(m) json_integer((json_int_t)(r->m - b->m))
	json_object_set_new(o, "processes_walked", SECTION_COUNT(walked));
	json_object_set_new(o, "processes_refused", SECTION_COUNT(refused_n));
	json_object_set_new(o, "bpf", c);
	json_object_set_new(o, "processes_walked_from_first_sample", SECTION_COUNT(from_file));
	json_object_set_new(o, "samples_native_before_known", SECTION_COUNT(before_known));
	json_object_set_new(o, "processes_looked_at_again", SECTION_COUNT(looked_again));
	json_object_set_new(o, "processes_looked_at_when_merged", SECTION_COUNT(looked_when_merged));
	json_object_set_new(o, "processes_answered_unready", SECTION_COUNT(answered_unready));
	json_object_set_new(o, "native_processes_looked_at_again", SECTION_COUNT(natives_again));
	json_object_set_new(o, "native_processes_walked_later", SECTION_COUNT(natives_walked));
	json_object_set_new(o, "samples_merged", SECTION_COUNT(merged));
	json_object_set_new(o, "samples_mismatched", SECTION_COUNT(mismatched));
	json_object_set_new(o, "activations_left_native", SECTION_COUNT(unpaired_activations));
	json_object_set_new(o, "python_frames_left_out", SECTION_COUNT(dropped_frames));
	json_object_set_new(o, "samples_python_before_cut_stack", SECTION_COUNT(placed_outside));
	json_object_set_new(o, "perf_trampolines_left_out", SECTION_COUNT(trampolines));
	json_object_set_new(o, "stacks_told", SECTION_COUNT(stacks_told));
	json_object_set_new(o, "stacks_told_known", SECTION_COUNT(stacks_told_known));
	json_object_set_new(o, "stacks_named", SECTION_COUNT(stacks_named));
	json_object_set_new(o, "code_objects", json_integer((json_int_t)pf->codes->n));
	json_object_set_new(o, "code_objects_unnamed", json_integer((json_int_t)pf->unnamed_code));
	json_object_set_new(o, "code_objects_reused", json_integer((json_int_t)(r->code_reread - b->code_reread)));
	json_object_set_new(o, "code_cache_bytes", json_integer((json_int_t)pf->codes->bytes));
	json_object_set_new(o, "code_objects_evicted", json_integer((json_int_t)pf->codes->evicted));
	json_object_set_new(o, "interpreters", json_deep_copy(pf->interpreters));
	json_object_set_new(o, "collector_cpu_ns", SECTION_COUNT(cpu_ns));
#undef SECTION_COUNT
	json_object_set_new(tr, "python", o);
}

void pyframes_next_section(struct pyframes *pf)
{
	pf->before = pf->reported;
}
