/* test_perfmap.c — reading a perf map within limits (lib/collect/perfmap.h):
 * a perf map is any traced process's file, so a line, a name and the file
 * are cut at their limits and what was cut is counted; a 2 GiB sparse file
 * (one line of zeros) must not become 2 GB of memory (issue 40). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hashtab.h"
#include "perfmap.h"
#include "test.h"

static const char *keep(void *ctx, const char *name)
{
	return hashtab_add(ctx, name, strlen(name), 1, 0)->key;
}

static struct perfmap *read_text(const char *text, size_t len, struct hashtab *names)
{
	FILE *f = fmemopen((void *)text, len, "r");
	return f ? perfmap_read(f, NULL, keep, names) : NULL;
}

static const char *name_at(const struct perfmap *pm, uint64_t addr)
{
	const struct perfmap_sym *s = perfmap_find(pm, addr);
	return s ? s->name : "";
}

static void lines_and_overlaps(struct hashtab *names)
{
	const char *text = "1000 100 first\n"
			   "not a line at all\n"
			   "1080 10 later wins\n"
			   "2000 0 empty\n"
			   "ffffffffffffff00 200 wraps\n"
			   "3000 10 last";
	struct perfmap *pm = read_text(text, strlen(text), names);

	test_cond("perfmap: lines read, a later line wins where they overlap",
		  pm && strcmp(name_at(pm, 0x1000), "first") == 0 && strcmp(name_at(pm, 0x1085), "later wins") == 0 &&
			  strcmp(name_at(pm, 0x1095), "first") == 0 && perfmap_find(pm, 0x1095)->origin == 0x1000 &&
			  strcmp(name_at(pm, 0x3000), "last") == 0 && !perfmap_find(pm, 0x2000));
	test_cond("perfmap: malformed lines counted (no numbers, size 0, a range past 2^64)",
		  pm && pm->skipped.bad_lines == 3);
	perfmap_free(pm);
}

static void long_names(struct hashtab *names)
{
	size_t len = PERFMAP_LINE_MAX * 3;
	char *text = malloc(len + 64);
	int n = snprintf(text, 64, "4000 10 ");

	/* a name of two-byte UTF-8 characters, "é", longer than the limit */
	for (size_t i = (size_t)n; i + 2 <= len; i += 2)
		text[i] = (char)0xc3, text[i + 1] = (char)0xa9;
	strcpy(text + len - ((len - (size_t)n) % 2), "\n5000 10 short\n");
	struct perfmap *pm = read_text(text, strlen(text), names);
	const char *got = name_at(pm, 0x4000);
	test_cond("perfmap: a long name is cut at its limit, not inside a character, and counted",
		  pm && strlen(got) <= PERFMAP_NAME_MAX && strlen(got) >= PERFMAP_NAME_MAX - 1 &&
			  strlen(got) % 2 == 0 && pm->skipped.long_lines == 1 && pm->skipped.long_names == 1 &&
			  strcmp(name_at(pm, 0x5000), "short") == 0);
	perfmap_free(pm);
	free(text);
}

/* A 2 GiB sparse perf map, read in a child: its peak RSS and what was left. */
static void sparse_file(void)
{
	char path[] = "/tmp/test_perfmap.XXXXXX";
	int fd = mkstemp(path), status = -1, pipefd[2];
	struct { long maxrss_kb; uint64_t unread; } got = { -1, 0 };

	if (fd < 0 || ftruncate(fd, 2ll << 30) != 0 || pipe(pipefd) != 0)
		return;
	pid_t child = fork();
	if (child == 0) {
		struct stat st;
		struct hashtab *names = hashtab_new();
		struct rusage ru;
		FILE *f = fdopen(fd, "r");
		fstat(fd, &st);
		struct perfmap *pm = f ? perfmap_read(f, &st, keep, names) : NULL;
		getrusage(RUSAGE_SELF, &ru);
		got.maxrss_kb = ru.ru_maxrss;
		got.unread = pm ? pm->skipped.bytes_unread : 0;
		_exit(write(pipefd[1], &got, sizeof(got)) == sizeof(got) ? 0 : 1);
	}
	close(pipefd[1]);
	if (child < 0 || read(pipefd[0], &got, sizeof(got)) != sizeof(got))
		got.maxrss_kb = -1;
	waitpid(child, &status, 0);
	close(fd);
	unlink(path);
	test_cond("perfmap: a 2 GiB sparse map is read to its limit in bounded memory, the rest counted",
		  got.maxrss_kb > 0 && got.maxrss_kb < 64 * 1024 && got.unread == (2ull << 30) - PERFMAP_BYTES_MAX);
	if (got.maxrss_kb >= 64 * 1024)
		printf("# peak RSS %ld KiB\n", got.maxrss_kb);
}

int main(void)
{
	struct hashtab *names = hashtab_new();

	test_plan(4);
	lines_and_overlaps(names);
	long_names(names);
	sparse_file();
	hashtab_free(names);
	return test_report();
}
