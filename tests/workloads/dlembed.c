/* dlembed — a native program that runs Python (or Ruby) only later, by
 * dlopen()ing a shared libpython or libruby (as uwsgi, vim or a C program
 * embedding one do): it burns CPU natively in spin_natively until GO_FILE
 * exists (60 s at most), then loads LIB and, in the interpreter's own code,
 * burns CPU until RUN_FILE exists (60 s at most: a collector is to meet LIB
 * and walk the process meanwhile), then sets SECS ($secs) and runs SCRIPT's
 * code with PyRun_SimpleString (Ruby: load), its frames named by SCRIPT's
 * path.  No headers: the functions are looked up by name.
 * python.t's and ruby.t's "dlopen'ed" cases.
 * Usage: dlembed LIB SCRIPT SECONDS GO_FILE RUN_FILE
 * Exit: 0, 1 (LIB not loaded, no GO_FILE in 60 s, the script failed), 2 usage.
 * WORKLOAD_CFLAGS: -O1 -g -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls -ldl
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Burn CPU natively until go exists: 0, or -1 after 60 s. */
static int spin_natively(const char *go)
{
	double end = now() + 60;
	while (access(go, F_OK) != 0) {
		if (now() > end)
			return -1;
		for (unsigned long i = 0; i < 200000; i++)
			sink += i ^ (sink >> 3);
	}
	return 0;
}

/* Run script's Ruby code for secs seconds in libruby h: 0, or -1. */
static int run_ruby(void *h, const char *script, const char *secs)
{
	void (*init_stack)(volatile void *) = (void (*)(volatile void *))dlsym(h, "ruby_init_stack");
	int (*setup)(void) = (int (*)(void))dlsym(h, "ruby_setup");
	void (*loadpath)(void) = (void (*)(void))dlsym(h, "ruby_init_loadpath");
	unsigned long (*eval)(const char *, int *) = (unsigned long (*)(const char *, int *))dlsym(h, "rb_eval_string_protect");
	volatile unsigned long stack_start = 0;
	char code[256];
	int state = 0;

	if (!init_stack || !setup || !loadpath || !eval) {
		fprintf(stderr, "dlembed: no ruby_setup, ruby_init_loadpath or rb_eval_string_protect\n");
		return -1;
	}
	init_stack(&stack_start);
	if (setup() != 0)
		return -1;
	loadpath();
	snprintf(code, sizeof(code),
		 "run, ends = ENV['DLEMBED_RUN'], Process.clock_gettime(Process::CLOCK_MONOTONIC) + 60\n"
		 "nil until File.exist?(run) || Process.clock_gettime(Process::CLOCK_MONOTONIC) > ends\n"
		 "$secs = %s; load ENV['DLEMBED_SCRIPT']\n", secs);
	eval(code, &state);
	return state == 0 ? 0 : -1;
}

/* Load lib and, once run_file exists, run script's code (Python's, or
 * Ruby's in a libruby) for secs seconds: 0, or -1. */
static int run_library(const char *lib, const char *script, const char *secs, const char *run_file)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
	if (!h) {
		fprintf(stderr, "dlembed: %s\n", dlerror());
		return -1;
	}
	if (setenv("DLEMBED_SCRIPT", script, 1) != 0 || setenv("DLEMBED_RUN", run_file, 1) != 0)
		return -1;
	if (dlsym(h, "ruby_setup"))
		return run_ruby(h, script, secs);
	void (*init)(int) = (void (*)(int))dlsym(h, "Py_InitializeEx");
	int (*run)(const char *, void *) = (int (*)(const char *, void *))dlsym(h, "PyRun_SimpleStringFlags");
	if (!init || !run) {
		fprintf(stderr, "dlembed: %s: no Py_InitializeEx or PyRun_SimpleStringFlags\n", lib);
		return -1;
	}
	char code[4096];
	snprintf(code, sizeof(code),
		 "import os, time\n"
		 "run, ends = os.environ['DLEMBED_RUN'], time.monotonic() + 60\n"
		 "while not os.path.exists(run) and time.monotonic() < ends: pass\n"
		 "SECS = %s\n"
		 "exec(compile(open(os.environ['DLEMBED_SCRIPT']).read(), os.environ['DLEMBED_SCRIPT'], 'exec'))\n",
		 secs);
	init(0);
	return run(code, NULL) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: dlembed LIB SCRIPT SECONDS GO_FILE RUN_FILE\n");
		return 2;
	}
	if (spin_natively(argv[4]) != 0) {
		fprintf(stderr, "dlembed: no %s after 60 s\n", argv[4]);
		return 1;
	}
	return run_library(argv[1], argv[2], argv[3], argv[5]) == 0 ? 0 : 1;
}
