/* test_collector.c — libbpf's messages through the collectors' print callback
 * (collector_start installs it): each says "PROG: libbpf: " once, whether
 * libbpf's text begins with "libbpf: " (all of its own do) or not. */
#include <bpf/libbpf.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector.h"
#include "test.h"
#include "util.h"

static libbpf_print_fn_t installed;

static void say(enum libbpf_print_level level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	installed(level, fmt, ap);
	va_end(ap);
}

/* What the callback printed while fn ran: stderr into a file, read back. */
static char *stderr_of(void (*fn)(void))
{
	char path[] = "/tmp/marple-test-collector.XXXXXX";
	int fd = mkstemp(path), saved = dup(2);
	static char buf[4096];
	ssize_t n;

	if (fd < 0 || saved < 0)
		return "";
	fflush(stderr);
	dup2(fd, 2);
	fn();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = 0;
	close(fd);
	unlink(path);
	return buf;
}

static void open_junk(void)
{
	static char junk[64] = { 1, 2, 3 };
	struct bpf_object *o = bpf_object__open_mem(junk, sizeof(junk), NULL);
	if (o)
		bpf_object__close(o);
}

static void own_prefix(void)
{
	say(LIBBPF_WARN, "libbpf: map '%s': failed\n", "events");
}

static void no_prefix(void)
{
	say(LIBBPF_WARN, "%s\n", "verifier says no");
}

static void debug_quiet(void)
{
	say(LIBBPF_DEBUG, "libbpf: %s\n", "loading");
}

int main(int argc, char **argv)
{
	test_plan(5);
	marple_init(argc, argv);
	if (geteuid() != 0 || access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		printf("SKIP: collector: collector_start needs root and a kernel with BTF\n");
		printf("PLAN: skip the rest\n");
		return 0;
	}
	collector_start(0);
	installed = libbpf_set_print(NULL);
	test_cond("collector_start installs a libbpf print callback", installed != NULL);
	if (!installed)
		return test_report();
	libbpf_set_print(installed);

	/* a real warning of libbpf's: a buffer that is no ELF object */
	const char *got = stderr_of(open_junk);
	test_cond("a libbpf warning says \"test_collector: libbpf: \" once",
		  strncmp(got, "test_collector: libbpf: elf: ", 29) == 0 && !strstr(got, "libbpf: libbpf:"));
	got = stderr_of(own_prefix);
	test_cond("a message with libbpf's prefix keeps it alone",
		  strcmp(got, "test_collector: libbpf: map 'events': failed\n") == 0);
	got = stderr_of(no_prefix);
	test_cond("a message without it gets it", strcmp(got, "test_collector: libbpf: verifier says no\n") == 0);
	got = stderr_of(debug_quiet);
	test_cond("debug messages only when verbose", strcmp(got, "") == 0);
	return test_report();
}
