/* test_mappedfiles.c — the model of mapped files (lib/collect/mappedfiles.h):
 * one entry per file identity, a slot per analyzer, a replaced file a new
 * entry; and what a traced process can do to the files we read: a FIFO
 * where a file should be is refused without blocking, a file truncated
 * under our mapping is counted, not a SIGBUS. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mappedfiles.h"
#include "procmaps.h"
#include "test.h"

static int owner_a, owner_b;	/* two analyzers: their addresses are their slots' owners */
static int freed;

static void count_free(void *p)
{
	freed++;
	free(p);
}

/* Copy file from to to; 0 or -1. */
static int copy(const char *from, const char *to)
{
	char buf[65536];
	ssize_t n;
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600), rc = 0;

	if (in < 0 || out < 0)
		rc = -1;
	while (rc == 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			rc = -1;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return rc;
}

static void identity_and_slots(struct mappedfiles *mf, const char *self)
{
	struct mappedfile *a = mappedfiles_open_path(mf, self), *b = mappedfiles_open_path(mf, self);
	struct stat st;
	char id[129] = "";
	Elf *elf = a && a->data ? elf_memory((char *)a->data, a->size) : NULL;

	test_cond("mappedfiles: a file opened twice is one entry, mapped once",
		  a && a == b && a->data && stat(self, &st) == 0 &&
			  mappedfile_id_equal(a->id, mappedfile_id_of_stat(&st)) && a->size == (size_t)st.st_size);
	test_cond("mappedfiles: its build-id is read once, as procmaps_build_id reads it",
		  elf && procmaps_build_id(elf, id, sizeof(id)) == 0 && strcmp(mappedfile_build_id(a), id) == 0 &&
			  mappedfile_build_id(a) == mappedfile_build_id(b));
	if (elf)
		elf_end(elf);
	struct mappedfile *c = mappedfiles_find(mf, mappedfile_id_of_stat(&st));
	test_cond("mappedfiles: found by identity alone", c == a);
	mappedfile_set_slot(a, &owner_a, strdup("symbols"), count_free);
	mappedfile_set_slot(a, &owner_b, strdup("rows"), count_free);
	test_cond("mappedfiles: one slot per analyzer",
		  a && strcmp(mappedfile_slot(a, &owner_a), "symbols") == 0 &&
			  strcmp(mappedfile_slot(a, &owner_b), "rows") == 0 && !mappedfile_slot(a, &freed));
	mappedfile_put(a);
	mappedfile_put(b);
	test_cond("mappedfiles: held while referenced", freed == 0 && mappedfiles_find(mf, a->id) == c);
	mappedfile_put(c);
	mappedfile_put(c);
	test_cond("mappedfiles: the last reference frees it and its slots", freed == 2);
}

static void replaced_file(struct mappedfiles *mf, const char *self, const char *dir)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/replaced", dir);
	copy(self, path);
	struct mappedfile *old = mappedfiles_open_path(mf, path);
	int fd = open(path, O_WRONLY | O_APPEND);
	if (fd >= 0) {
		if (write(fd, "more", 4) != 4)
			perror("write");
		close(fd);
	}
	struct mappedfile *now = mappedfiles_open_path(mf, path);
	test_cond("mappedfiles: a file changed in place is a new entry, not the old one's facts",
		  old && now && old != now && mappedfile_id_equal(old->id, now->id) &&
			  now->size == old->size + 4);
	mappedfile_put(old);
	mappedfile_put(now);
}

static void fifo_refused(struct mappedfiles *mf, const char *dir)
{
	char path[512];
	const char *first = NULL;
	uint64_t before = procmaps_refused(NULL);

	snprintf(path, sizeof(path), "%s/fifo.debug", dir);
	mkfifo(path, 0600);
	alarm(10);	/* a blocking open would hang here: the alarm ends the test */
	struct mappedfile *f = mappedfiles_open_path(mf, path);
	alarm(0);
	test_cond("mappedfiles: a FIFO is refused without blocking, counted and named",
		  !f && procmaps_refused(&first) == before + 1 && first && strcmp(first, path) == 0);
	snprintf(path, sizeof(path), "%s/notelf", dir);
	FILE *o = fopen(path, "w");
	for (int i = 0; o && i < 100; i++)
		fputs("not an ELF file at all\n", o);
	if (o)
		fclose(o);
	struct mappedfiles_stats st;
	mappedfiles_stats(mf, &st);
	uint64_t not_elf = st.not_elf;
	f = mappedfiles_open_path(mf, path);
	mappedfiles_stats(mf, &st);
	test_cond("mappedfiles: a file that is no ELF is known but not mapped",
		  f && !f->data && st.not_elf == not_elf + 1);
	mappedfile_put(f);
}

/* The owner of a file truncates it while we read its mapping (as a traced
 * process can): the read finds zeros, the file is counted truncated. */
static void truncated_file(struct mappedfiles *mf, const char *self, const char *dir)
{
	char path[512];
	int status = -1;

	snprintf(path, sizeof(path), "%s/truncated", dir);
	copy(self, path);
	pid_t child = fork();
	if (child == 0) {
		struct mappedfile *f = mappedfiles_open_path(mf, path);
		if (!f || !f->data || f->size < 3 * 4096)
			_exit(3);
		if (truncate(path, 4096) != 0)
			_exit(4);
		volatile unsigned char sum = 0;
		for (size_t i = 0; i < f->size; i += 512)
			sum += f->data[i];	/* pages past 4096 fault */
		struct mappedfiles_stats st;
		mappedfiles_stats(mf, &st);
		_exit(mappedfile_truncated(f) && st.truncated == 1 && f->data[f->size - 1] == 0 ? 0 : 5);
	}
	if (child > 0)
		waitpid(child, &status, 0);
	test_cond("mappedfiles: a file truncated under the mapping is counted, not a SIGBUS",
		  WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0))
		printf("# child: %s %d\n", WIFSIGNALED(status) ? "signal" : "exit",
		       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

int main(void)
{
	char dir[] = "/tmp/test_mappedfiles.XXXXXX", self[512] = "", cmd[600];
	struct mappedfiles *mf = mappedfiles_shared();

	test_plan(10);
	if (!mkdtemp(dir) || readlink("/proc/self/exe", self, sizeof(self) - 1) <= 0)
		return 1;
	identity_and_slots(mf, self);
	replaced_file(mf, self, dir);
	fifo_refused(mf, dir);
	truncated_file(mf, self, dir);
	mappedfiles_release(mf);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		perror("rm");
	return test_report();
}
