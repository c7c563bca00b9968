/* jitloop — a JIT in miniature, for the JIT map tests: it writes machine
 * code into anonymous executable memory (a function with a frame-pointer
 * prologue and a counting loop), runs it hot for SECONDS, and like the JVM
 * with -XX:+DumpPerfMapAtExit lists it in /tmp/perf-PID.map only as it
 * exits.  The map has an older, overlapping line first (a lower tier of the
 * same code, as the JVM lists), so the newest line must win.
 * Usage: jitloop SECONDS [nomap]   (x86-64; elsewhere it only sleeps)
 * WORKLOAD_CFLAGS: -O2 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

typedef void (*jit_fn)(unsigned long n);

static const unsigned char code[] = {
	0x55,				/* push %rbp */
	0x48, 0x89, 0xe5,		/* mov %rsp,%rbp */
	0x48, 0x89, 0xf9,		/* mov %rdi,%rcx */
	0x48, 0xff, 0xc9,		/* 1: dec %rcx */
	0x75, 0xfb,			/* jnz 1b */
	0x5d,				/* pop %rbp */
	0xc3,				/* ret */
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void run_jit(jit_fn f, double seconds)
{
	double end = now() + seconds;
	while (now() < end)
		f(2000000);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2;
	int map = !(argc > 2 && strcmp(argv[2], "nomap") == 0);
#if defined(__x86_64__)
	unsigned char *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	memset(mem, 0xcc, 4096);
	memcpy(mem + 256, code, sizeof(code));
	if (mprotect(mem, 4096, PROT_READ | PROT_EXEC) < 0)
		return 1;
	run_jit((jit_fn)(void *)(mem + 256), seconds);
	if (map) {
		char path[64];
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
		FILE *f = fopen(path, "w");
		if (!f)
			return 1;
		/* the interpreted tier first, over the same code, then the compiled one */
		fprintf(f, "%lx %x Interpreter\n", (unsigned long)(mem), 4096);
		fprintf(f, "%lx %zx LJitLoop;::hot_loop\n", (unsigned long)(mem + 256), sizeof(code));
		fclose(f);
	}
#else
	sleep((unsigned)seconds);
#endif
	return 0;
}
