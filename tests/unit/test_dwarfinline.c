/* test_dwarfinline — inline chains and lines from DWARF (lib/collect/
 * dwarfinline.c) agree with `addr2line -a -f -i` at every address of the
 * inline fixture's pipeline (tests/workloads/inlinechain.c, mix inlined in
 * stage2 in stage1 in pipeline), built here as DWARF 4, DWARF 5 and with
 * compressed sections; the DWARF found in a separate debug file by build-id
 * and by debug link; a file without DWARF counted, not guessed; the memory
 * bound refuses a file over it; a compile unit is read only when an address
 * in it is asked; a separate debug file with compressed sections is copied
 * inflated into the cache once, read from there after, made again when cut. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <unistd.h>

#include "debugcopies.h"
#include "dwarfinline.h"
#include "test.h"

static char dir[] = "/tmp/marple-dwarfinline-XXXXXX";

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* pipeline's first and last address, from nm. */
static int pipeline_range(const char *file, uint64_t *lo, uint64_t *hi)
{
	char cmd[1024];
	unsigned long long a, size;
	snprintf(cmd, sizeof(cmd), "nm -S '%s' | awk '$4 == \"pipeline\" { print $1, $2 }'", file);
	FILE *p = popen(cmd, "r");
	int ok = p && fscanf(p, "%llx %llx", &a, &size) == 2;
	if (p)
		pclose(p);
	*lo = a, *hi = a + size;
	return ok ? 0 : -1;
}

/* Compare our chain with addr2line's at every byte of pipeline in file
 * (DWARF read from dwarf_of).  Returns mismatches, -1 if nothing compared;
 * *deepest: the longest chain seen. */
static int compare_with_addr2line(struct dwarfinline *d, const char *dwarf_of, uint64_t lo, uint64_t hi,
				  int *deepest)
{
	char cmd[1024], line[4096];
	snprintf(cmd, sizeof(cmd), "addr2line -a -f -i -e '%s' $(seq %llu %llu | awk '{ printf \"0x%%x \", $1 }')",
		 dwarf_of, (unsigned long long)lo, (unsigned long long)hi - 1);
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	struct dwarfinline_frame f[DWARFINLINE_MAX_DEPTH];
	int bad = 0, n = 0, i = 0, compared = 0;
	*deepest = 0;
	while (fgets(line, sizeof(line), p)) {
		line[strcspn(line, "\n")] = 0;
		if (strncmp(line, "0x", 2) == 0) {
			bad += i != n;	/* the previous address had more frames */
			n = dwarfinline_lookup(d, strtoull(line, NULL, 16), f, DWARFINLINE_MAX_DEPTH);
			*deepest = n > *deepest ? n : *deepest;
			i = 0, compared++;
			continue;
		}
		char where[4096];
		if (!fgets(where, sizeof(where), p))
			break;
		where[strcspn(where, " \n")] = 0;
		char *colon = strrchr(where, ':');
		if (colon)
			*colon++ = 0;
		if (i >= n || strcmp(f[i].function, line) != 0 || strcmp(base(f[i].file), base(where)) != 0 ||
		    f[i].line != (colon ? strtoul(colon, NULL, 10) : 0)) {
			if (bad++ < 5)
				printf("# addr2line says %s %s:%s, we say %s %s:%u\n", line, where, colon,
				       i < n ? f[i].function : "-", i < n ? f[i].file : "-", i < n ? f[i].line : 0);
		}
		i++;
	}
	bad += i != n;
	pclose(p);
	return compared ? bad : -1;
}

/* Build the fixture with flags into dir/name; its pipeline's range. */
static int build(const char *name, const char *flags, uint64_t *lo, uint64_t *hi)
{
	const char *top = getenv("MARPLE_TOP");
	char out[512], cmd[2048];
	snprintf(out, sizeof(out), "%s/%s", dir, name);
	snprintf(cmd, sizeof(cmd), "cc -O2 -g -fno-omit-frame-pointer %s -o '%s' '%s/tests/workloads/inlinechain.c'",
		 flags, out, top ? top : ".");
	if (system(cmd) != 0)
		return -1;
	return pipeline_range(out, lo, hi);
}

/* Build name with flags; every address of pipeline agrees with addr2line on
 * the DWARF of dwarf_of (the same file, or its split-off debug file). */
static void check_variant(const char *name, const char *flags)
{
	char path[512], label[256];
	uint64_t lo, hi;
	int deepest = 0, bad = -1;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (build(name, flags, &lo, &hi) == 0) {
		struct dwarfinline *d = dwarfinline_open(path, dir, 0);
		if (d) {
			bad = compare_with_addr2line(d, path, lo, hi, &deepest);
			printf("# %s: %llu addresses, deepest chain %d, %d differ\n", name,
			       (unsigned long long)(hi - lo), deepest, bad);
			dwarfinline_close(d);
		}
	}
	snprintf(label, sizeof(label), "%s: chains and lines as addr2line -i says, mix 4 deep", name);
	test_cond(label, bad == 0 && deepest == 4);
}

/* The innermost frames at an address in mix's loop of file are
 * mix <- stage2 <- stage1 <- pipeline. */
static int chain_is_fixture(struct dwarfinline *d, const char *file)
{
	char cmd[1024];
	unsigned long long a = 0;
	snprintf(cmd, sizeof(cmd), "objdump -d --no-show-raw-insn '%s' | sed -n '/<pipeline>:/,/^$/p' | "
		 "awk '/imul/ { sub(\":\", \"\", $1); print $1; exit }'", file);
	FILE *p = popen(cmd, "r");
	if (!p || fscanf(p, "%llx", &a) != 1)
		a = 0;
	if (p)
		pclose(p);
	struct dwarfinline_frame f[8];
	int n = a ? dwarfinline_lookup(d, a, f, 8) : 0;
	return n == 4 && !strcmp(f[0].function, "mix") && !strcmp(f[1].function, "stage2") &&
	       !strcmp(f[2].function, "stage1") && !strcmp(f[3].function, "pipeline") &&
	       !strcmp(base(f[0].file), "inlinechain.c") && f[0].line > 0;
}

/* Split name's DWARF into a debug file: by build-id under dir/.build-id,
 * or beside it with a .gnu_debuglink.  The debug file's path in debugfile. */
static int split_debug(const char *name, int by_link, char *debugfile, size_t size)
{
	char path[512], cmd[4096], id[128] = "";
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(cmd, sizeof(cmd), "readelf -n '%s' | awk '/Build ID/ { print $3 }'", path);
	FILE *p = popen(cmd, "r");
	if (!p || !fgets(id, sizeof(id), p) || strlen(id) < 4) {
		if (p)
			pclose(p);
		return -1;
	}
	pclose(p);
	id[strcspn(id, "\n")] = 0;
	if (by_link)
		snprintf(debugfile, size, "%s/%s.debug", dir, name);
	else
		snprintf(debugfile, size, "%s/.build-id/%.2s/%s.debug", dir, id, id + 2);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\" && objcopy --only-keep-debug '%s' '%s' && strip -g '%s'",
		 debugfile, path, debugfile, path);
	if (system(cmd) != 0)
		return -1;
	snprintf(cmd, sizeof(cmd), "cd '%s' && objcopy --add-gnu-debuglink='%s.debug' '%s'", dir, name, name);
	if (by_link && system(cmd) != 0)
		return -1;
	return 0;
}

static void check_separate(const char *name, int by_link)
{
	char path[512], debugfile[512], root[600], label[256];
	uint64_t lo, hi;
	int ok = 0;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	/* the linked file's root has no .build-id: only its link can find it */
	snprintf(root, sizeof(root), "%s%s", dir, by_link ? "/nothing" : "");
	if (build(name, "", &lo, &hi) == 0 &&
	    split_debug(name, by_link, debugfile, sizeof(debugfile)) == 0) {
		struct dwarfinline *d = dwarfinline_open(path, root, 0);
		const char *found = d ? dwarfinline_debugfile(d) : NULL;
		printf("# %s: DWARF from %s\n", name, found ? found : "(none)");
		ok = d && found && strcmp(base(found), base(debugfile)) == 0 && chain_is_fixture(d, path);
		dwarfinline_close(d);
	}
	snprintf(label, sizeof(label), "%s: separate debug file by %s", name, by_link ? "debug link" : "build-id");
	test_cond(label, ok);
}

/* Open path's DWARF (root: its debug root) and say whether it answers as the
 * fixture does; *copies: the debug copies' counts after. */
static int open_as_fixture(const char *path, const char *root, struct debugcopies_stats *copies)
{
	struct dwarfinline *d = dwarfinline_open(path, root, 0);
	int ok = d && chain_is_fixture(d, path);
	dwarfinline_close(d);
	debugcopies_stats(copies);
	printf("# %s: copies read %llu written %llu failed %llu\n", path, (unsigned long long)copies->read,
	       (unsigned long long)copies->written, (unsigned long long)copies->failed);
	return ok;
}

/* A debug file by build-id, its sections compressed: the first open makes
 * its inflated copy (0600), the next reads it, one cut short is made again;
 * every time the chain is the fixture's. */
static void check_copies(void)
{
	char path[512], debugfile[512], cache[600], copy[900] = "", cmd[1400];
	uint64_t lo, hi;
	struct debugcopies_stats c1 = { 0 }, c2 = { 0 }, c3 = { 0 };
	struct stat st;
	int ok = 0;
	snprintf(path, sizeof(path), "%s/zbyid", dir);
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	setenv("MARPLE_CACHE_DIR", cache, 1);
	if (build("zbyid", "", &lo, &hi) == 0 && split_debug("zbyid", 0, debugfile, sizeof(debugfile)) == 0) {
		snprintf(cmd, sizeof(cmd), "objcopy --compress-debug-sections=zlib '%s'", debugfile);
		ok = system(cmd) == 0 && open_as_fixture(path, dir, &c1) && c1.written == 1 && c1.failed == 0;
		snprintf(cmd, sizeof(cmd), "ls '%s'/debug/i-* 2>/dev/null", cache);
		FILE *p = popen(cmd, "r");
		if (!p || !fgets(copy, sizeof(copy), p))
			ok = 0;
		if (p)
			pclose(p);
		copy[strcspn(copy, "\n")] = 0;
		ok = ok && stat(copy, &st) == 0 && (st.st_mode & 0777) == 0600;
	}
	test_cond("a compressed debug file: copied inflated once, 0600, the chain as the fixture's", ok);
	/* (libdw is opened again for the units read after the index: the
	 * copy is read then too, never written again) */
	ok = ok && open_as_fixture(path, dir, &c2) && c2.read > c1.read && c2.written == c1.written;
	test_cond("... read from its copy by the next open, the chain the same", ok);
	ok = ok && truncate(copy, st.st_size - 100) == 0 && open_as_fixture(path, dir, &c3) &&
	     c3.written == c2.written + 1 && stat(copy, &st) == 0 && st.st_size > 100;
	test_cond("... a copy cut short: made again, the chain the same", ok);
	unsetenv("MARPLE_CACHE_DIR");
}

/* The fixture linked with a second unit (other.c, its function other):
 * opening reads no unit, a lookup in pipeline reads one, a lookup in other
 * the second, each answering as addr2line does. */
static void check_lazy(void)
{
	const char *top = getenv("MARPLE_TOP");
	char path[512], other[512], cmd[2048];
	int ok = 0;
	snprintf(path, sizeof(path), "%s/twounits", dir);
	snprintf(other, sizeof(other), "%s/other.c", dir);
	FILE *f = fopen(other, "w");
	if (f) {
		fputs("unsigned other(unsigned x)\n{\n\treturn x * 3 + 1;\n}\n", f);
		fclose(f);
	}
	snprintf(cmd, sizeof(cmd), "cc -O2 -g '%s/tests/workloads/inlinechain.c' '%s' -o '%s' && "
		 "nm '%s' | awk '$3 == \"other\" { print $1 }'", top ? top : ".", other, path, path);
	FILE *p = f ? popen(cmd, "r") : NULL;
	unsigned long long at = 0;
	if (p && fscanf(p, "%llx", &at) != 1)
		at = 0;
	if (p)
		pclose(p);
	struct dwarfinline *d = at ? dwarfinline_open(path, dir, 0) : NULL;
	if (d) {
		const struct dwarfinline_stats *st = dwarfinline_stats(d);
		struct dwarfinline_frame fr[8];
		uint64_t units = st->units, read_at_open = st->units_read;
		int fixture = chain_is_fixture(d, path);
		uint64_t read_after_one = st->units_read;
		int n = dwarfinline_lookup(d, at, fr, 8);
		printf("# twounits: %llu units, %llu read at open, %llu after pipeline, %llu after other; "
		       "build %llu ns\n", (unsigned long long)units, (unsigned long long)read_at_open,
		       (unsigned long long)read_after_one, (unsigned long long)st->units_read,
		       (unsigned long long)st->build_ns);
		ok = units == 2 && read_at_open == 0 && fixture && read_after_one == 1 && n == 1 &&
		     !strcmp(fr[0].function, "other") && !strcmp(base(fr[0].file), "other.c") &&
		     fr[0].line == 3 && st->units_read == 2 && st->build_ns > 0;
		dwarfinline_close(d);
	}
	test_cond("a unit is read when an address in it is first asked", ok);
}

/* No DWARF: every lookup 0 and counted; over the bound: refused. */
static void check_refusals(void)
{
	char path[512];
	struct dwarfinline_frame f[4];
	struct dwarfinline *d = dwarfinline_open("/bin/true", dir, 0);
	int n = d ? dwarfinline_lookup(d, 0x1000, f, 4) : -1;
	test_cond("a file without DWARF: nothing guessed, counted",
		  d && n == 0 && dwarfinline_stats(d)->no_dwarf == 1 && !dwarfinline_debugfile(d));
	dwarfinline_close(d);

	snprintf(path, sizeof(path), "%s/dwarf5", dir);
	d = dwarfinline_open(path, dir, 1);
	n = d ? dwarfinline_lookup(d, 0x1000, f, 4) : -1;
	test_cond("over the memory bound: refused and said so",
		  d && n == 0 && dwarfinline_stats(d)->too_big && dwarfinline_stats(d)->dwarf_bytes > 1);
	dwarfinline_close(d);

	test_cond("a file that is not there: NULL", dwarfinline_open("/nonexistent/x", dir, 0) == NULL);
}

int main(void)
{
	test_plan(12);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	check_variant("dwarf4", "-gdwarf-4");
	check_variant("dwarf5", "-gdwarf-5");
	check_variant("compressed", "-gdwarf-5 -gz=zlib");
	check_separate("byid", 0);
	check_separate("linked", 1);
	check_copies();
	check_refusals();
	check_lazy();
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	return test_report();
}
