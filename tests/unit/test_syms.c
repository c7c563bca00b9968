/* test_syms — unit tests of lib/syms and lib/stackframes against this very
 * process: its own functions (PIE bias), libc's (.dynsym of a shared
 * library), demangling of C++ and Rust names, a JIT map, a process that has
 * exited since its snapshot, kernel symbols, and root-first frames. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stackframes.h"
#include "elfsyms.h"
#include "syms.h"
#include "test.h"
#include "util.h"

__attribute__((noinline)) int probe_target(int x) { return x * 3 + 1; }
__attribute__((noinline)) int frame_a(int x) { return probe_target(x) + 1; }
__attribute__((noinline)) int frame_b(int x) { return frame_a(x) + 2; }
int cxx_fn(int x) __asm__("_ZN3foo3barEi");
__attribute__((noinline)) int cxx_fn(int x) { return x + 7; }
int rust_fn(int x) __asm__("_ZN4core3fmt5write17h0123456789abcdefE");
__attribute__((noinline)) int rust_fn(int x) { return x + 9; }
/* A symbol of 10,000 bytes (issue 40: one 70 MB JIT name dropped a whole
 * section): named cut at ELFSYMS_NAME_MAX, and counted. */
#define X10(s) s s s s s s s s s s
int long_fn(int x) __asm__(X10(X10(X10("long_name_"))) X10(X10(X10("long_name_"))));
__attribute__((noinline)) int long_fn(int x) { return x + 11; }

static uint64_t addr_of(void *f, int off)
{
	return (uint64_t)(uintptr_t)f + (uint64_t)off;
}

/* The asm labels crti.o puts at the start of .init and .fini: functions
 * without a size, in sections a few bytes long.  Past them come .plt (after
 * .init), the end of the code mapping and .rodata (after .fini). */
extern void _init(void), _fini(void);
static const char rodata_bytes[64] = "read-only data, no function here";

/* An address outside every function is no function's, even where the nearest
 * symbol below it has no size (it ends with its section). */
static void check_honest_names(struct syms_cache *c, pid_t me)
{
	const char *mod = NULL, *n;

	n = syms_cache_lookup(c, me, addr_of((void *)_fini, 4), &mod, NULL);
	test_cond("unsized symbol inside its section", n && strcmp(n, "_fini") == 0);
	n = syms_cache_lookup(c, me, addr_of((void *)_fini, 64), &mod, NULL);
	test_cond("past .fini: no name", n == NULL && mod && strcmp(mod, "test_syms") == 0);
	n = syms_cache_lookup(c, me, (uint64_t)(uintptr_t)&rodata_bytes[8], &mod, NULL);
	test_cond("in .rodata: no name", n == NULL && mod && strcmp(mod, "test_syms") == 0);
	n = syms_cache_lookup(c, me, addr_of((void *)_init, 0x30), &mod, NULL);
	test_cond("in .plt past .init: not _init", !n || strcmp(n, "_init") != 0);
}

/* Exported by libc, declared by no header: where the main thread's stack starts. */
extern int __libc_start_main(void);

/* User stacks are judged whole when they reach a stack root; the trailer
 * counts the others, by stack and by weight written. */
static void check_whole_stacks(struct syms_cache *c, pid_t me)
{
	struct stackframes *sf = stackframes_new(c, NULL, -1, 0);
	uint64_t whole[3] = { addr_of((void *)frame_a, 2), addr_of((void *)frame_b, 2),
			      addr_of((void *)__libc_start_main, 10) };
	uint64_t cut[2] = { addr_of((void *)frame_a, 2), addr_of((void *)frame_b, 2) };
	uint64_t deep[MARPLE_STACK_DEPTH];
	struct stackframes_stats st;
	FILE *devnull = fopen("/dev/null", "w");

	for (size_t i = 0; i < MARPLE_STACK_DEPTH; i++)
		deep[i] = addr_of((void *)frame_a, 2);
	stackframes_begin(sf, "w");
	stackframes_user_ips(sf, me, whole, 3);
	stackframes_write(sf, devnull, 30);
	stackframes_begin(sf, "c");
	stackframes_user_ips(sf, me, cut, 2);
	stackframes_write(sf, devnull, 10);
	stackframes_begin(sf, "d");
	stackframes_user_ips(sf, me, deep, MARPLE_STACK_DEPTH);
	stackframes_write(sf, devnull, 500);
	stackframes_begin(sf, "k");	/* no user stack: not judged */
	stackframes_write(sf, devnull, 7);
	stackframes_stats(sf, &st);
	test_cond("stacks reaching __libc_start_main are whole, others not, cut ones not judged",
		  st.user_stacks == 2 && st.incomplete_user_stacks == 1);
	test_cond("incomplete stacks weighed as written", st.user_weight == 40 && st.incomplete_user_weight == 10);

	/* The dynamic loader (our PT_INTERP, mapped at AT_BASE) relocating a
	 * program: a stack that ends at its entry, where _start called
	 * _dl_start, is whole; one that ends elsewhere in it is not, named or
	 * not. */
	uint64_t base = getauxval(AT_BASE);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)(uintptr_t)base;
	uint64_t at_entry[2] = { addr_of((void *)frame_a, 2), base + eh->e_entry + 8 };
	uint64_t in_loader[2] = { addr_of((void *)frame_a, 2), 0 };
	struct syms_map sm;
	const char *mod = NULL;
	if (base && syms_cache_map(c, me, base + eh->e_entry, &sm) == 0)
		for (uint64_t a = sm.start; a < sm.end && !in_loader[1]; a += 16)	/* code without a name */
			if ((a < base + eh->e_entry || a >= base + eh->e_entry + SYMS_ENTRY_CODE) &&
			    !syms_cache_lookup(c, me, a, &mod, NULL) && mod && strncmp(mod, "ld-linux", 8) == 0)
				in_loader[1] = a + 1;
	stackframes_begin(sf, "r");
	stackframes_user_ips(sf, me, at_entry, 2);
	stackframes_write(sf, devnull, 1);
	stackframes_begin(sf, "l");
	stackframes_user_ips(sf, me, in_loader, 2);
	stackframes_write(sf, devnull, 1);
	stackframes_stats(sf, &st);
	test_cond("a stack ending at the dynamic loader's entry is whole", base && st.user_stacks == 4);
	test_cond("a stack ending elsewhere in the dynamic loader is not", in_loader[1] && st.incomplete_user_stacks == 2);
	fclose(devnull);
	stackframes_free(sf);
}

static uint64_t kallsyms_addr(const char *want)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], name[256], t;
	unsigned long long a;
	uint64_t r = 0;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &t, name) == 3 && strcmp(name, want) == 0) {
			r = a;
			break;
		}
	if (f)
		fclose(f);
	return r;
}

/* The kernel's names (BPF %pB) against /proc/kallsyms read whole, for every
 * 53rd text symbol at a few offsets: the same function start, and a name that
 * kallsyms lists at that start (aliases share an address). */
static void compare_kernel_namers(struct ksyms *fast)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], name[256], t;
	unsigned long long a;
	struct { uint64_t addr; char name[64]; } *s = NULL;
	size_t ns = 0, cap = 0, checked = 0, agree = 0;

	while (f && fgets(line, sizeof(line), f))
		/* not "[bpf]" and module symbols: BPF programs come and go while
		 * other tests run */
		if (sscanf(line, "%llx %c %255s", &a, &t, name) == 3 && strchr("tTwW", t) && a &&
		    strlen(name) < 64 && !strchr(line, '[')) {
			if (ns == cap)
				s = realloc(s, (cap = cap ? 2 * cap : 4096) * sizeof(*s));
			s[ns].addr = a;
			strcpy(s[ns].name, name);
			ns++;
		}
	if (f)
		fclose(f);
	setenv("MARPLE_KSYMS", "kallsyms", 1);
	struct ksyms *table = syms_kernel_load();
	unsetenv("MARPLE_KSYMS");
	test_cond("MARPLE_KSYMS=kallsyms reads the table", table && !syms_kernel_by_address(table));
	for (size_t i = 0; table && i + 1 < ns; i += 53) {
		uint64_t want = s[i].addr + (i % 5), o1 = 99, o2 = 98;
		const char *n1 = syms_kernel_lookup(fast, want, &o1), *n2 = syms_kernel_lookup(table, want, &o2);
		checked++;
		if (!n1 || !n2 || o1 != o2) {
			if (checked - agree < 5)
				printf("# %#llx: kernel %s+%llu, kallsyms %s+%llu\n", (unsigned long long)want,
				       n1 ? n1 : "-", (unsigned long long)o1, n2 ? n2 : "-", (unsigned long long)o2);
			continue;
		}
		int listed = 0;
		for (size_t j = 0; j < ns && !listed; j++)
			listed = s[j].addr == want - o1 && strcmp(s[j].name, n1) == 0;
		agree += listed;
	}
	printf("# kernel namers agree on %zu of %zu addresses\n", agree, checked);
	test_cond("kernel namers agree", checked > 500 && agree == checked);
	syms_kernel_free(table);
	free(s);
}

/* stackframes_read_id: by bpf() lookups, then (after many reads) from the
 * mmapped map; both must give what was stored, zero-terminated. */
static void check_stack_reads(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);
	enum { N = 3000 };
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "stacks", 4, MARPLE_STACK_DEPTH * 8, N, &o);
	if (fd < 0) {
		printf("SKIP: stack reads: no BPF map (%s)\n", strerror(errno));
		return;
	}
	uint64_t ips[MARPLE_STACK_DEPTH];
	for (uint32_t id = 0; id < N; id++) {
		memset(ips, 0, sizeof(ips));
		for (uint32_t j = 0; j < id % 100 + 1; j++)
			ips[j] = 0xffffffff81000000ull + id * 1000 + j;
		bpf_map_update_elem(fd, &id, ips, BPF_ANY);
	}
	struct stackframes *sf = stackframes_new(NULL, NULL, fd, 0);
	int bad = 0;
	for (int round = 0; round < 2; round++)
		for (int id = 0; id < N; id++) {
			int n = stackframes_read_id(sf, id, ips);
			bad += n != id % 100 + 1 || ips[0] != 0xffffffff81000000ull + (uint64_t)id * 1000 ||
			       ips[n - 1] != 0xffffffff81000000ull + (uint64_t)id * 1000 + (uint64_t)n - 1;
		}
	test_cond("stacks read by lookups and from the mapped map alike", bad == 0);
	test_cond("an id past the map is no stack", stackframes_read_id(sf, N + 5, ips) < 0);
	stackframes_free(sf);
	close(fd);
}

/* a JIT map (perf-PID.map) names anonymous executable memory */
static void check_jit_map(pid_t me)
{
	const char *mod = NULL, *n;
	uint64_t off = 0;
	struct syms_cache *raw;

	void *jit = mmap(NULL, 8192, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char path[64];
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)me);
	FILE *pm = fopen(path, "w");
	if (pm) {
		fprintf(pm, "%llx 100 jitted::function, with spaces\n", (unsigned long long)(uintptr_t)jit);
		fclose(pm);
	}
	raw = syms_cache_new(SYMS_DEMANGLE);
	n = syms_cache_lookup(raw, me, addr_of(jit, 0x20), &mod, &off);
	test_cond("perf-PID.map", n && strcmp(n, "jitted::function, with spaces") == 0 && off == 0x20);
	n = syms_cache_lookup(raw, me, addr_of(jit, 0x200), &mod, &off);
	test_cond("perf-PID.map: past the size", n == NULL && mod && strcmp(mod, "[anon]") == 0);
	syms_cache_free(raw);
	unlink(path);

}

/* a process that exits after its snapshot keeps its names */
static void check_exited_process(void)
{
	const char *n;
	struct syms_cache *raw;

	pid_t child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	raw = syms_cache_new(SYMS_DEMANGLE);
	test_cond("snapshot child", syms_cache_snapshot(raw, child) == 0);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	n = syms_cache_lookup(raw, child, addr_of((void *)frame_a, 1), NULL, NULL);
	test_cond("exited process still named", n && strcmp(n, "frame_a") == 0);
	test_cond("snapshot of an exited process is kept", syms_cache_snapshot(raw, child) == 0);
	syms_cache_free(raw);
	struct syms_cache *g = syms_cache_new(0);
	test_cond("never-seen gone process", syms_cache_snapshot(g, child) == -1);
	syms_cache_free(g);

}

/* kernel names (as root where kallsyms shows addresses); NULL otherwise */
static struct ksyms *check_kernel(uint64_t *kap)
{
	const char *n;
	uint64_t off = 0;

	struct ksyms *k = NULL;
	uint64_t ka = *kap = kallsyms_addr("schedule");
	if (getuid() != 0 || ka == 0) {
		printf("SKIP: kernel symbols: not root or kallsyms hidden\n");
	} else {
		k = syms_kernel_load();
		test_cond("syms_kernel_load", k != NULL);
		n = syms_kernel_lookup(k, ka + 4, &off);
		test_cond("kernel symbol", n && strcmp(n, "schedule") == 0 && off == 4);
		struct utsname u;
		int major = 0, minor = 0;
		uname(&u);
		sscanf(u.release, "%d.%d", &major, &minor);
		if (major > 5 || (major == 5 && minor >= 15)) {	/* syscall programs, %pB */
			test_cond("kernel names come from the kernel (BPF), not a kallsyms read",
				  syms_kernel_by_address(k));
			if (syms_kernel_by_address(k))
				compare_kernel_namers(k);
		} else {
			printf("SKIP: kernel %s: names come from /proc/kallsyms\n", u.release);
		}
	}

	return k;
}

/* frames, root first */
static struct stackframes *check_frames(struct syms_cache *c, struct ksyms *k, uint64_t ka, pid_t me)
{
	struct stackframes *sf = stackframes_new(c, k, -1, SF_DELIMIT | SF_ANNOTATE_KERNEL);
	uint64_t ips[4] = { addr_of((void *)probe_target, 2), addr_of((void *)frame_a, 2),
			    addr_of((void *)frame_b, 2), 16 };
	size_t nf;
	stackframes_begin(sf, "my comm;x");
	stackframes_user_ips(sf, me, ips, 4);
	if (k) {
		uint64_t kips[1] = { ka + 8 };
		stackframes_kernel_ips(sf, kips, 1);
	}
	const char *const *fr = stackframes_frames(sf, &nf);
	test_cond("frames: comm first", nf >= 5 && strcmp(fr[0], "my comm;x") == 0);
	test_cond("frames: unknown outermost", nf >= 5 && strcmp(fr[1], "[unknown]") == 0);
	test_cond("frames: root first", nf >= 5 && strcmp(fr[2], "frame_b") == 0 && strcmp(fr[3], "frame_a") == 0 &&
					     strcmp(fr[4], "probe_target") == 0);
	if (k)
		test_cond("frames: delimiter and _[k]", nf == 7 && strcmp(fr[5], "-") == 0 &&
							   strcmp(fr[6], "schedule_[k]") == 0);
	stackframes_begin(sf, "x");
	stackframes_user_id(sf, me, -14);
	fr = stackframes_frames(sf, &nf);
	test_cond("frames: missing stack", nf == 2 && strcmp(fr[1], "[missing user stack]") == 0);
	struct stackframes_stats ss;
	stackframes_stats(sf, &ss);
	test_cond("frames: missing counted", ss.missing_user == 1 && ss.unknown_frames == 1);

	return sf;
}

/* speed: 10,000 unique stacks of 12 frames from a fresh cache */
static void time_symbolizing(struct ksyms *k, uint64_t ka, pid_t me)
{
	struct syms_cache *s2 = syms_cache_new(SYMS_DEMANGLE);
	struct stackframes *sf2 = stackframes_new(s2, k, -1, SF_ANNOTATE_KERNEL);
	void *fns[] = { (void *)probe_target, (void *)frame_a, (void *)frame_b, (void *)cxx_fn,
			(void *)getppid, (void *)printf, (void *)qsort, (void *)fopen, (void *)malloc };
	uint64_t t0 = marple_now_monotonic_ns();
	for (int i = 0; i < 10000; i++) {
		uint64_t u[12];
		for (int j = 0; j < 12; j++)
			u[j] = addr_of(fns[(i / (j + 1) + j) % 9], (i * 7 + j) % 16);
		stackframes_begin(sf2, "bench");
		stackframes_user_ips(sf2, me, u, 12);
		if (k) {
			uint64_t kk[4] = { ka + (uint64_t)(i % 50), ka + 1, ka + 2, ka + 3 };
			stackframes_kernel_ips(sf2, kk, 4);
		}
	}
	double ms = (double)(marple_now_monotonic_ns() - t0) / 1e6;
	printf("# 10000 stacks symbolized in %.1f ms\n", ms);	/* make bench reports it */
	stackframes_free(sf2);
	syms_cache_free(s2);
}

int main(int argc, char **argv)
{
	test_plan(43);
	pid_t me = getpid();
	const char *mod = NULL, *n;
	uint64_t off = 0;
	struct syms_cache *c = syms_cache_new(SYMS_DEMANGLE);

	marple_init(argc, argv);
	test_cond("snapshot self", syms_cache_snapshot(c, me) == 0);
	n = syms_cache_lookup(c, me, addr_of((void *)probe_target, 3), &mod, &off);
	test_cond("own function (PIE)", n && strcmp(n, "probe_target") == 0);
	test_cond("own module", mod && strcmp(mod, "test_syms") == 0);
	test_cond("own offset", off == 3);
	n = syms_cache_lookup(c, me, addr_of((void *)getppid, 1), &mod, NULL);
	test_cond("libc function (.dynsym)", n && strstr(n, "getppid"));
	test_cond("libc module", mod && strncmp(mod, "libc", 4) == 0);
	n = syms_cache_lookup(c, me, addr_of((void *)cxx_fn, 0), NULL, NULL);
	test_cond("C++ demangled", n && strcmp(n, "foo::bar") == 0);
	n = syms_cache_lookup(c, me, addr_of((void *)rust_fn, 0), NULL, NULL);
	test_cond("Rust demangled", n && strcmp(n, "core::fmt::write") == 0);
	n = syms_cache_lookup(c, me, 16, &mod, NULL);
	test_cond("unmapped address", n == NULL && mod == NULL);
	n = syms_cache_lookup(c, me, addr_of((void *)long_fn, 0), NULL, NULL);
	struct syms_stats sst;
	syms_cache_stats(c, &sst);
	test_cond("a 20,000-byte symbol name: cut at ELFSYMS_NAME_MAX, counted",
		  n && strlen(n) == ELFSYMS_NAME_MAX && strncmp(n, "long_name_", 10) == 0 && sst.symbol_names_cut == 1);
	check_honest_names(c, me);
	check_whole_stacks(c, me);
	/* several names at one address: the public one (no leading '_', then
	 * the shorter), as perf names them: malloc, not __libc_malloc */
	n = syms_cache_lookup(c, me, addr_of((void *)malloc, 0), NULL, NULL);
	test_cond("one address, the public name: malloc", n && strcmp(n, "malloc") == 0);
	if (n && strcmp(n, "malloc"))
		printf("# got %s\n", n);
	n = syms_cache_lookup(c, me, addr_of((void *)calloc, 0), NULL, NULL);
	test_cond("one address, the public name: calloc", n && strcmp(n, "calloc") == 0);
	test_cond("public name: no leading _ first", syms_name_preferred("malloc", "__libc_malloc") &&
		  !syms_name_preferred("__libc_malloc", "malloc"));
	test_cond("public name: then the shorter", syms_name_preferred("__memcpy_erms", "__memcpy_erms_x") &&
		  syms_name_preferred("puts", "_IO_puts"));

	struct syms_cache *raw = syms_cache_new(SYMS_DEMANGLE | SYMS_DEMANGLE_PARAMS);
	n = syms_cache_lookup(raw, me, addr_of((void *)cxx_fn, 0), NULL, NULL);
	test_cond("C++ with parameters", n && strcmp(n, "foo::bar(int)") == 0);
	syms_cache_free(raw);
	raw = syms_cache_new(0);
	n = syms_cache_lookup(raw, me, addr_of((void *)cxx_fn, 0), NULL, NULL);
	test_cond("raw names kept", n && strcmp(n, "_ZN3foo3barEi") == 0);
	syms_cache_free(raw);

	check_jit_map(me);
	check_exited_process();
	uint64_t ka = 0;
	struct ksyms *k = check_kernel(&ka);
	struct stackframes *sf = check_frames(c, k, ka, me);
	time_symbolizing(k, ka, me);
	stackframes_free(sf);
	if (getuid() == 0)
		check_stack_reads();
	syms_kernel_free(k);
	syms_cache_free(c);
	return test_report();
}
