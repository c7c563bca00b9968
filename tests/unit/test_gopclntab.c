/* test_gopclntab — names and lines of a stripped Go binary from its
 * .gopclntab (lib/collect/gopclntab.c): tests/workloads/gospin.go is built
 * here twice, unstripped and with -ldflags="-s -w"; every function symbol
 * of the unstripped build is named the same by the stripped build's table,
 * at its entry; every address of main.leaf and main.middle has the line
 * binutils addr2line reads from the unstripped build's DWARF; a table cut
 * short or with bytes flipped is read without a read outside it (ASan in
 * make check SANITIZE=1) and gives no name from outside it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gopclntab.h"
#include "test.h"

static char dir[] = "/tmp/marple-gopclntab-XXXXXX";

static int go_build(const char *out, const char *flags)
{
	const char *top = getenv("MARPLE_TOP");
	char cmd[2048];
	snprintf(cmd, sizeof(cmd),
		 "cd '%s/tests/workloads' && HOME='%s' GOCACHE='%s/cache' GOPATH='%s/gopath' "
		 "go build %s -o '%s/%s' gospin.go", top ? top : ".", dir, dir, dir, flags, dir, out);
	return system(cmd);
}

/* The table's name for a symtab name: Go writes a type argument list in
 * the table as "[...]" (runtime.FuncForPC's name), the symtab in full. */
static int same_function(const char *symtab, const char *table)
{
	const char *elided = strstr(table, "[...]");
	if (!elided)
		return strcmp(symtab, table) == 0;
	size_t head = (size_t)(elided - table);
	const char *close = strncmp(symtab, table, head) == 0 && symtab[head] == '[' ? strchr(symtab + head, ']') : NULL;
	return close && strcmp(close + 1, elided + 5) == 0;
}

/* Every function symbol of full named alike by g at its address, and its
 * entry there.  The count that differ; *total the symbols. */
static int names_like_symtab(const struct gopclntab *g, const char *full, int *total, int *mains)
{
	char cmd[1024], name[1024];
	unsigned long long addr;
	char type;
	int bad = 0;
	snprintf(cmd, sizeof(cmd), "nm '%s'/%s", dir, full);
	FILE *p = popen(cmd, "r");
	*total = *mains = 0;
	while (p && fscanf(p, "%llx %c %1023[^\n]", &addr, &type, name) == 3) {
		/* runtime.text and runtime.etext mark the text's ends, no function */
		if ((type != 'T' && type != 't') || !strcmp(name, "runtime.text") || !strcmp(name, "runtime.etext"))
			continue;
		/* the symtab marks assembly functions' ABI (ABI0), the table not */
		size_t len = strlen(name);
		if (len > 5 && !strcmp(name + len - 5, ".abi0"))
			name[len - 5] = 0;
		struct gopclntab_frame f;
		int found = gopclntab_lookup(g, addr, &f);
		(*total)++;
		if (!found || !same_function(name, f.function) || f.entry != addr) {
			if (bad++ < 5)
				printf("# %llx: symtab %s, table %s\n", addr, name, found ? f.function : "(none)");
		} else if (!strncmp(name, "main.", 5)) {
			(*mains)++;
		}
	}
	if (p)
		pclose(p);
	return bad;
}

/* Every address of function in full: g's file:line as addr2line reads
 * full's DWARF.  Differences, or -1 if nothing compared. */
static int lines_like_addr2line(const struct gopclntab *g, const char *full, const char *function)
{
	char cmd[2048], where[2048];
	unsigned long long addr, size;
	snprintf(cmd, sizeof(cmd), "nm -S '%s/%s' | awk '$4 == \"%s\" { print $1, $2 }'", dir, full, function);
	FILE *p = popen(cmd, "r");
	int ok = p && fscanf(p, "%llx %llx", &addr, &size) == 2;
	if (p)
		pclose(p);
	if (!ok)
		return -1;
	snprintf(cmd, sizeof(cmd), "addr2line -a -e '%s/%s' $(seq %llu %llu | awk '{ printf \"0x%%x \", $1 }')", dir,
		 full, addr, addr + size - 1);
	p = popen(cmd, "r");
	int bad = 0, compared = 0;
	while (p && fgets(where, sizeof(where), p)) {
		unsigned long long at = strtoull(where, NULL, 16);
		if (!fgets(where, sizeof(where), p))
			break;
		where[strcspn(where, " \n")] = 0;
		struct gopclntab_frame f;
		char ours[2048] = "(none)";
		if (gopclntab_lookup(g, at, &f))
			snprintf(ours, sizeof(ours), "%s:%u", f.file, f.line);
		compared++;
		if (strcmp(ours, where) != 0 && bad++ < 5)
			printf("# %llx: addr2line %s, table %s\n", at, where, ours);
	}
	if (p)
		pclose(p);
	return compared ? bad : -1;
}

/* The stripped build's table bytes (objcopy), or NULL. */
static unsigned char *table_bytes(const char *bin, size_t *size)
{
	char cmd[1024], out[600];
	snprintf(out, sizeof(out), "%s/table", dir);
	snprintf(cmd, sizeof(cmd), "objcopy -O binary --only-section=.gopclntab '%s/%s' '%s'", dir, bin, out);
	FILE *f = system(cmd) == 0 ? fopen(out, "rb") : NULL;
	unsigned char *buf = NULL;
	if (f && fseek(f, 0, SEEK_END) == 0 && (*size = (size_t)ftell(f)) > 0 && (buf = malloc(*size))) {
		rewind(f);
		if (fread(buf, 1, *size, f) != *size) {
			free(buf);
			buf = NULL;
		}
	}
	if (f)
		fclose(f);
	return buf;
}

/* Tables cut at every 1/32 of their length and with one byte in 64 flipped:
 * each is refused or answers lookups across text (no read outside it: ASan
 * says so under SANITIZE=1).  The number of tables that answered a lookup. */
static int hostile_tables(const unsigned char *table, size_t size, uint64_t text, uint64_t text_end,
			  int *refused)
{
	unsigned char *copy = malloc(size);
	int answered = 0;
	*refused = 0;
	for (int variant = 0; variant < 64 && copy; variant++) {
		size_t len = variant < 32 ? size * (size_t)variant / 32 : size;
		memcpy(copy, table, size);
		for (size_t i = (size_t)variant; variant >= 32 && i < size; i += 64)
			copy[i] ^= (unsigned char)(0x5a + variant);
		struct gopclntab *g = gopclntab_parse(copy, len, text);
		if (!g) {
			(*refused)++;
			continue;
		}
		int any = 0;
		for (uint64_t a = text; a < text_end; a += 61) {
			struct gopclntab_frame f;
			any |= gopclntab_lookup(g, a, &f);
		}
		answered += any;
		gopclntab_close(g);
	}
	free(copy);
	return answered;
}

int main(void)
{
	if (system("go version >/dev/null 2>&1") != 0) {
		printf("SKIP: gopclntab: no go (golang-go, scripts/install-deps)\nPLAN: skip the rest\n");
		return 0;
	}
	test_plan(6);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	int built = go_build("full", "") == 0 && go_build("stripped", "-ldflags='-s -w'") == 0;
	char path[600];
	snprintf(path, sizeof(path), "%s/stripped", dir);
	struct gopclntab *g = built ? gopclntab_open(path) : NULL;
	test_cond("a stripped Go binary's table opens", g && gopclntab_functions(g) > 500);

	int total = 0, mains = 0, bad = g ? names_like_symtab(g, "full", &total, &mains) : -1;
	printf("# %d function symbols of the unstripped build, %d named otherwise by the stripped table\n", total,
	       bad);
	test_cond("every function named as the unstripped symtab names it, at its entry",
		  bad == 0 && total > 500 && mains >= 3);
	int leaf = g ? lines_like_addr2line(g, "full", "main.leaf") : -1;
	int middle = g ? lines_like_addr2line(g, "full", "main.middle") : -1;
	test_cond("main.leaf's lines as addr2line reads the DWARF", leaf == 0);
	test_cond("main.middle's lines as addr2line reads the DWARF", middle == 0);

	struct gopclntab_frame f;
	test_cond("an address before the text is no function", g && !gopclntab_lookup(g, 0x1000, &f));

	size_t size = 0;
	unsigned char *table = table_bytes("stripped", &size);
	int refused = 0, answered = table ? hostile_tables(table, size, 0x401000, 0x401000 + (4u << 20), &refused) : -1;
	printf("# hostile tables: %d refused, %d answered lookups\n", refused, answered);
	test_cond("cut and flipped tables are refused or read within bounds", table && refused + answered > 0 && refused > 0);
	free(table);
	gopclntab_close(g);
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "chmod -R u+w '%s' 2>/dev/null; rm -rf '%s'", dir, dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	return test_report();
}
