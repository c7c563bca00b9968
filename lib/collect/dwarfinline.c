/* dwarfinline.c — an address to its inline chain and lines, from DWARF
 * (see dwarfinline.h).  dwfl finds the DWARF (the file's, or its debug file
 * by build-id or debug link).  Opening reads only the index of compile
 * units (each unit's DW_AT_low_pc/high_pc or DW_AT_ranges; .debug_aranges
 * for a unit that has neither); the first lookup in a unit reads that unit
 * into two sorted tables, so a lookup is three binary searches and no DIE
 * walk (dwarf_getscopes per lookup ran 8,400 lookups/s on libc).  Reading
 * every unit at open cost 0.14-1.3 s of CPU for libc with libc6-dbg, in the
 * collector's thread, for every capture that sampled libc once.  A unit's
 * tables:
 *  - ranges: the unit's code cut where the innermost function changes, each
 *    piece naming a node: a DW_TAG_subprogram, or a
 *    DW_TAG_inlined_subroutine with the node it is inlined in and where it
 *    was called from there (DW_AT_call_file/call_line);
 *  - lines: every row of the unit's line table (the innermost frame's
 *    file:line; at one address, the last row, as addr2line takes it).
 * Function names and absolute source paths are kept once each. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "debugcopies.h"
#include "dwarfinline.h"
#include "hashtab.h"
#include "procmaps.h"
#include "util.h"

/* DIE trees nested deeper are cut there (hostile DWARF), and counted */
#define MAX_DIE_DEPTH 256
#define NO_NODE UINT32_MAX
#define NO_FILE UINT32_MAX	/* a line row that ends a sequence */
/* The units' DIE bytes read between two opens of libdw (read_unit).  With
 * libdw kept open, reading every unit of python3.12's libpython peaked at
 * 67.9 MB (libc with libc6-dbg: 34.1), reopened every 8 units 31.0 MB, at a
 * MiB 32.2 (20.6) for 1% more CPU (7%); every 8 of libc's small units took
 * 2.5x the CPU (a reopened libdw finds a unit past all those before it). */
#define DWARFINLINE_BYTES_PER_OPEN (1u << 20)

/* One function instance: a subprogram, or a function inlined into one. */
struct fn_node {
	uint32_t name;		/* string id */
	uint32_t call_file;	/* string id: the call site in the parent */
	uint32_t call_line;
	uint32_t parent;	/* NO_NODE: a subprogram, a chain's end */
};

enum unit_state { UNIT_UNREAD, UNIT_READ, UNIT_BAD };

/* One compile unit: read into its tables the first time an address in it
 * is looked up. */
struct unit_table {
	Dwarf_Off die_off;		/* the unit's DIE */
	enum unit_state state;
	uint64_t *range_lo;		/* from range_lo[i] on, range_node[i] */
	uint32_t *range_node;
	size_t nranges;
	uint64_t *line_addr;		/* from line_addr[i] on, file:line */
	uint32_t *line_file, *line_no;
	size_t nlines;
};

struct dwarfinline {
	Dwfl_Callbacks callbacks;	/* dwfl keeps a pointer to it */
	char *debugpath;		/* dwfl's debuginfo_path: "-:.debug:ROOT" */
	char *debugroot;		/* ROOT: where debug files are (find_debuginfo_safe) */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf *dw;			/* libdw's reader while open (NULL: closed, see read_unit) */
	char *path;			/* the file, opened again as fd_again for each read */
	int fd_again;			/* a copy of the descriptor it was opened by, or -1 */
	int by_path;			/* opened by its path, not a descriptor */
	uint64_t bytes_open;		/* DIE bytes of the units read since libdw was opened */
	char *debugfile;
	int has_table;			/* 0: no DWARF, or too big */
	uint64_t max_bytes;		/* the bound on its debug sections */
	uint64_t to_dwarf;		/* file vaddr + to_dwarf = DWARF address */
	struct hashtab *strings;	/* names and paths: id = index */
	struct fn_node *nodes;		/* of every unit read */
	size_t nnodes, cap_nodes;
	struct unit_table *units;
	size_t nunits, cap_units;
	uint64_t *span_lo, *span_hi;	/* the units' address ranges, sorted by lo */
	uint32_t *span_unit;
	size_t nspans;
	uint64_t unit_bytes;		/* the read units' tables */
	struct dwarfinline_stats stats;
};

/* What reading a unit gathers, sorted into its tables after. */
struct fn_range {
	uint64_t lo, hi;
	uint32_t node, depth;
};
struct line_row {
	uint64_t addr;
	uint32_t file, line;
	size_t order;		/* the table's order: the last row at an address wins */
};
struct builder {
	struct dwarfinline *d;
	struct fn_range *ranges;
	size_t nranges, cap_ranges;
	struct line_row *rows;
	size_t nrows, cap_rows;
	Dwarf_Files *files;	/* the unit's file table */
	size_t nfiles;
	uint32_t *file_ids;	/* its entries' string ids, NO_FILE until asked */
	const char *comp_dir;
};

static uint32_t intern(struct dwarfinline *d, const char *s, size_t len)
{
	return (uint32_t)hashtab_index(d->strings, hashtab_add(d->strings, s, len, 0, 0));
}

static const char *string_of(const struct dwarfinline *d, uint32_t id)
{
	return hashtab_at(d->strings, id)->key;
}

/* The unit's file idx as an absolute path (relative: to DW_AT_comp_dir). */
static uint32_t unit_file(struct builder *b, Dwarf_Word idx)
{
	const char *f = b->files && idx < b->nfiles ? dwarf_filesrc(b->files, idx, NULL, NULL) : NULL;
	if (!f)
		return intern(b->d, "??", 2);
	if (b->file_ids[idx] != NO_FILE)
		return b->file_ids[idx];
	char path[4096];
	int len = f[0] != '/' && b->comp_dir ? snprintf(path, sizeof(path), "%s/%s", b->comp_dir, f) : -1;
	if (len < 0 || (size_t)len >= sizeof(path))
		len = snprintf(path, sizeof(path), "%s", f);
	if ((size_t)len >= sizeof(path))
		len = sizeof(path) - 1;
	return b->file_ids[idx] = intern(b->d, path, (size_t)len);
}
/* The size of the .debug_* sections libdw will hold, decompressed. */
static uint64_t debug_section_bytes(Elf *elf)
{
	size_t shstrndx;
	uint64_t total = 0;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || (strncmp(name, ".debug_", 7) != 0 && strncmp(name, ".zdebug_", 8) != 0))
			continue;
		uint64_t size = sh.sh_size;
		GElf_Chdr ch;
		if ((sh.sh_flags & SHF_COMPRESSED) && gelf_getchdr(scn, &ch))
			size += ch.ch_size;	/* the compressed and the inflated copy */
		total += size;
	}
	return total;
}

/* One candidate debug file, opened as every file of a traced process is
 * (procmaps_open_safe: a FIFO or a device is refused, never waited on); its
 * inflated copy instead if its sections are compressed (debugcopies.h). */
static int try_debug_file(const struct dwarfinline *d, const char *path, char **found)
{
	struct stat st;
	int fd = procmaps_open_safe(AT_FDCWD, path, &st);
	if (fd >= 0) {
		*found = marple_strdup(path);
		fd = debugcopies_open(fd, d && d->max_bytes ? d->max_bytes : DWARFINLINE_DEFAULT_MAX_BYTES);
	}
	return fd;
}

/* dwfl's find_debuginfo: the separate debug file by build id under the
 * debug root, then by .gnu_debuglink beside the file, in its .debug/ and
 * under the debug root, as libdwfl's own search looks (no CRC check, as
 * its "-" said).  libdwfl's own opened a FIFO planted at the debug link
 * with a blocking open(): the collector hung for ever. */
static int find_debuginfo_safe(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			       const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			       char **debuginfo_file_name)
{
	const struct dwarfinline *d = *userdata;
	const char *root = d && d->debugroot ? d->debugroot : "/usr/lib/debug";
	char path[4096], hex[129];
	const unsigned char *id;
	GElf_Addr vaddr;
	int fd, n = dwfl_module_build_id(mod, &id, &vaddr);

	if (n >= 2 && n <= 64) {
		for (int i = 1; i < n; i++)
			snprintf(hex + 2 * (i - 1), 3, "%02x", id[i]);
		snprintf(path, sizeof(path), "%s/.build-id/%02x/%s.debug", root, id[0], hex);
		if ((fd = try_debug_file(d, path, debuginfo_file_name)) >= 0)
			return fd;
	}
	if (!debuglink_file || !file_name)
		return -1;
	const char *slash = strrchr(file_name, '/');
	int dirlen = slash ? (int)(slash - file_name) : 0;
	const char *fmts[] = { "%.*s/%s", "%.*s/.debug/%s" };
	for (size_t i = 0; i < 3; i++) {
		if (i < 2)
			snprintf(path, sizeof(path), fmts[i], dirlen, file_name, debuglink_file);
		else
			snprintf(path, sizeof(path), "%s%.*s/%s", root, dirlen, file_name, debuglink_file);
		if (strcmp(path, file_name) != 0 && (fd = try_debug_file(d, path, debuginfo_file_name)) >= 0)
			return fd;
	}
	return -1;
}

static int report_file(struct dwarfinline *d, const char *path, int fd)
{
	d->callbacks = (Dwfl_Callbacks){
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = find_debuginfo_safe,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &d->debugpath,
	};
	d->dwfl = dwfl_begin(&d->callbacks);
	if (!d->dwfl) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	d->mod = dwfl_report_offline(d->dwfl, "", path, fd);	/* fd: libdwfl's now */
	if (dwfl_report_end(d->dwfl, NULL, NULL) != 0 || !d->mod)
		return -1;
	void **userdata;	/* find_debuginfo_safe's d */
	dwfl_module_info(d->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	*userdata = d;
	return 0;
}


/* The unit's line table into b->rows; a sequence starting at address 0 is
 * code the linker dropped (its functions' addresses were zeroed), left out. */
static void add_unit_lines(struct builder *b, Dwarf_Die *cu)
{
	Dwarf_Lines *lines;
	size_t n;
	if (dwarf_getsrclines(cu, &lines, &n) != 0)
		return;
	int in_sequence = 0, dropped = 0;
	for (size_t i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr addr;
		bool end = false;
		int lineno = 0;
		Dwarf_Files *files;
		size_t idx;
		if (!l || dwarf_lineaddr(l, &addr) != 0 || dwarf_lineendsequence(l, &end) != 0)
			continue;
		if (!in_sequence)
			dropped = addr == 0;
		in_sequence = !end;
		if (dropped)
			continue;
		b->rows = marple_grow(b->rows, &b->cap_rows, b->nrows + 1, sizeof(*b->rows));
		struct line_row *r = &b->rows[b->nrows];
		*r = (struct line_row){ addr, NO_FILE, 0, b->nrows };
		b->nrows++;
		if (end)
			continue;
		r->file = dwarf_line_file(l, &files, &idx) == 0 && files == b->files ?
				  unit_file(b, idx) : intern(b->d, "??", 2);
		r->line = dwarf_lineno(l, &lineno) == 0 && lineno > 0 ? (unsigned)lineno : 0;
	}
}

/* A function DIE's name as addr2line -f prints it: the linkage name if it
 * has one (through its abstract origin or specification), else its name. */
static const char *die_function_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
	return name ? name : "??";
}

/* A node for the function DIE die inside parent, its address ranges to
 * b->ranges; NO_NODE if it has no code (a declaration, an abstract
 * instance). */
static uint32_t add_function(struct builder *b, Dwarf_Die *die, uint32_t parent, uint32_t depth)
{
	struct dwarfinline *d = b->d;
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	uint32_t node = (uint32_t)d->nnodes;
	size_t before = b->nranges;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (lo == 0 || hi <= lo)	/* dropped by the linker, or empty */
			continue;
		b->ranges = marple_grow(b->ranges, &b->cap_ranges, b->nranges + 1, sizeof(*b->ranges));
		b->ranges[b->nranges++] = (struct fn_range){ lo, hi, node, depth };
	}
	if (b->nranges == before || d->nnodes >= NO_NODE)
		return NO_NODE;
	d->nodes = marple_grow(d->nodes, &d->cap_nodes, d->nnodes + 1, sizeof(*d->nodes));
	struct fn_node *fn = &d->nodes[d->nnodes++];
	const char *name = die_function_name(die);
	*fn = (struct fn_node){ intern(d, name, strlen(name)), intern(d, "??", 2), 0, NO_NODE };
	if (dwarf_tag(die) != DW_TAG_inlined_subroutine)
		return node;
	Dwarf_Attribute attr;
	Dwarf_Word file, line;
	fn->parent = parent;
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &file) == 0)
		fn->call_file = unit_file(b, file);
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &line) == 0 && line <= UINT32_MAX)
		fn->call_line = (uint32_t)line;
	return node;
}

/* Every function DIE of the unit, depth first: a node each (an inlined
 * instance's parent the function DIE around it).  -1 if libdw failed. */
static int walk_unit(struct builder *b, Dwarf_Die *cu)
{
	Dwarf_Die stack[MAX_DIE_DEPTH];
	uint32_t node[MAX_DIE_DEPTH + 1] = { NO_NODE };
	int depth = 0, r = dwarf_child(cu, &stack[0]);
	while (r == 0) {
		Dwarf_Die *die = &stack[depth];
		int tag = dwarf_tag(die);
		node[depth + 1] = node[depth];
		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
			uint32_t n = add_function(b, die, tag == DW_TAG_subprogram ? NO_NODE : node[depth],
						  (uint32_t)depth);
			if (n != NO_NODE)
				node[depth + 1] = n;
		}
		if (depth + 1 < MAX_DIE_DEPTH && (r = dwarf_child(die, &stack[depth + 1])) == 0) {
			depth++;
			continue;
		}
		if (r < 0)
			return -1;
		if (depth + 1 == MAX_DIE_DEPTH && dwarf_haschildren(die))
			b->d->stats.cut++;
		/* the next sibling, going up until there is one; a sibling
		 * pointer backwards (hostile) would loop: stop there */
		for (;;) {
			Dwarf_Off at = dwarf_dieoffset(&stack[depth]);
			Dwarf_Die next;
			if ((r = dwarf_siblingof(&stack[depth], &next)) == 0)
				stack[depth] = next;
			if (r < 0 || (r == 0 && dwarf_dieoffset(&stack[depth]) <= at))
				return -1;
			if (r == 0 || depth == 0)
				break;
			depth--;
		}
	}
	return r < 0 ? -1 : 0;
}

/* Whether base[0..n) is in cmp's order already: libdw hands a unit's line
 * rows sorted by address (542,749 rows sorted again cost 23 ms of a 10 s
 * capture's 0.4 s of CPU), and qsort would sort them anyway. */
static int in_order(const void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	const char *p = base;
	for (size_t i = 1; i < n; i++)
		if (cmp(p + (i - 1) * size, p + i * size) > 0)
			return 0;
	return 1;
}

static int by_lo_then_outer(const void *a, const void *b)
{
	const struct fn_range *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return x->hi > y->hi ? -1 : x->hi < y->hi;
}

/* From lo on, the innermost function is node (a piece starting where the
 * last did replaces it; one naming the same node is not needed). */
static void cut_at(struct unit_table *u, uint64_t lo, uint32_t node)
{
	size_t n = u->nranges;
	if (n && u->range_lo[n - 1] == lo) {
		u->range_node[n - 1] = node;
		return;
	}
	if (n && u->range_node[n - 1] == node)
		return;
	u->range_lo[n] = lo, u->range_node[n] = node;
	u->nranges++;
}

/* The nested ranges into pieces where the innermost function changes: a
 * sweep in address order with the ranges open at each point on a stack
 * (an inner range reaching past the one around it is cut at its end). */
static void flatten_ranges(struct unit_table *u, struct builder *b)
{
	if (b->nranges)
		if (!in_order(b->ranges, b->nranges, sizeof(*b->ranges), by_lo_then_outer))
			qsort(b->ranges, b->nranges, sizeof(*b->ranges), by_lo_then_outer);
	struct fn_range *open = marple_malloc((b->nranges + 1) * sizeof(*open));
	size_t nopen = 0;
	/* each range starts a piece and ends at most one */
	u->range_lo = marple_malloc((2 * b->nranges + 1) * sizeof(*u->range_lo));
	u->range_node = marple_malloc((2 * b->nranges + 1) * sizeof(*u->range_node));
	for (size_t i = 0; i <= b->nranges; i++) {
		uint64_t lo = i < b->nranges ? b->ranges[i].lo : UINT64_MAX;
		while (nopen && open[nopen - 1].hi <= lo) {
			nopen--;
			cut_at(u, open[nopen].hi, nopen ? open[nopen - 1].node : NO_NODE);
		}
		if (i == b->nranges)
			break;
		struct fn_range r = b->ranges[i];
		if (nopen && r.hi > open[nopen - 1].hi)
			r.hi = open[nopen - 1].hi;
		open[nopen++] = r;
		cut_at(u, r.lo, r.node);
	}
	free(open);
}

static int by_addr_then_order(const void *a, const void *b)
{
	const struct line_row *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* at one address a sequence's end before another's rows */
	if ((x->file == NO_FILE) != (y->file == NO_FILE))
		return x->file == NO_FILE ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static void sort_lines(struct unit_table *u, struct builder *b)
{
	if (b->nrows && !in_order(b->rows, b->nrows, sizeof(*b->rows), by_addr_then_order))
		qsort(b->rows, b->nrows, sizeof(*b->rows), by_addr_then_order);
	u->line_addr = marple_malloc((b->nrows + 1) * sizeof(*u->line_addr));
	u->line_file = marple_malloc((b->nrows + 1) * sizeof(*u->line_file));
	u->line_no = marple_malloc((b->nrows + 1) * sizeof(*u->line_no));
	for (size_t i = 0; i < b->nrows; i++)
		u->line_addr[i] = b->rows[i].addr, u->line_file[i] = b->rows[i].file,
		u->line_no[i] = b->rows[i].line;
	u->nlines = b->nrows;
}

/* The bytes the tables and strings hold. */
static uint64_t table_bytes(const struct dwarfinline *d)
{
	return d->nnodes * sizeof(*d->nodes) + d->nunits * sizeof(*d->units) +
	       d->nspans * (sizeof(*d->span_lo) + sizeof(*d->span_hi) + sizeof(*d->span_unit)) +
	       d->unit_bytes + hashtab_bytes(d->strings);
}

/* libdw let go of: what it keeps of each unit read (its line table, the
 * abbreviations: 13 MB of a second's capture, until dwfl_end) and its
 * mappings of the file and the debug file (their pages faulted in). */
static void close_libdw(struct dwarfinline *d)
{
	if (d->dwfl)
		dwfl_end(d->dwfl);
	d->dwfl = NULL;
	d->mod = NULL;
	d->dw = NULL;
	d->bytes_open = 0;
}

/* libdw, opened again for a unit to read (closed after the index and after
 * units, see read_unit): the same file by a copy of its descriptor, else by
 * its path.  0, or -1 (the units not read then count as bad). */
static int open_libdw(struct dwarfinline *d)
{
	GElf_Addr elf_bias, dwarf_bias;
	int fd = d->by_path ? -1 : fcntl(d->fd_again, F_DUPFD_CLOEXEC, 0);
	if ((!d->by_path && fd < 0) || report_file(d, d->path, fd) != 0 ||
	    !dwfl_module_getelf(d->mod, &elf_bias) || !(d->dw = dwfl_module_getdwarf(d->mod, &dwarf_bias)) ||
	    elf_bias - dwarf_bias != d->to_dwarf) {
		close_libdw(d);
		return -1;
	}
	return 0;
}

/* Read unit u into its tables (the first lookup in it); UNIT_BAD if libdw
 * failed on it.  Its cost is counted in build_ns.  Every
 * DWARFINLINE_BYTES_PER_OPEN of units read libdw is closed, opened again for
 * the next: what it holds stays a few units' worth, for a reopen's cost. */
static void read_unit(struct dwarfinline *d, struct unit_table *u)
{
	uint64_t t0 = marple_thread_cpu_ns();
	struct builder b = { .d = d };
	Dwarf_Attribute attr;
	Dwarf_Die die;
	if ((!d->dw && open_libdw(d) != 0) || !dwarf_offdie(d->dw, u->die_off, &die)) {
		u->state = UNIT_BAD;
		d->stats.units_bad++;
		d->stats.build_ns += marple_thread_cpu_ns() - t0;
		return;
	}
	b.comp_dir = dwarf_formstring(dwarf_attr(&die, DW_AT_comp_dir, &attr));
	if (dwarf_getsrcfiles(&die, &b.files, &b.nfiles) != 0)
		b.files = NULL, b.nfiles = 0;
	b.file_ids = marple_malloc((b.nfiles + 1) * sizeof(*b.file_ids));
	memset(b.file_ids, 0xff, (b.nfiles + 1) * sizeof(*b.file_ids));
	if (dwarf_tag(&die) == DW_TAG_compile_unit)
		add_unit_lines(&b, &die);
	u->state = walk_unit(&b, &die) == 0 ? UNIT_READ : UNIT_BAD;
	if (u->state == UNIT_READ) {
		flatten_ranges(u, &b);
		sort_lines(u, &b);
		d->unit_bytes += u->nranges * (sizeof(*u->range_lo) + sizeof(*u->range_node)) +
				 u->nlines * (sizeof(*u->line_addr) + sizeof(*u->line_file) + sizeof(*u->line_no));
		d->stats.units_read++;
	} else {
		d->stats.units_bad++;
	}
	free(b.file_ids);
	free(b.ranges);
	free(b.rows);
	size_t i = (size_t)(u - d->units);	/* its bytes: to the next unit's DIE */
	d->bytes_open += i + 1 < d->nunits ? d->units[i + 1].die_off - u->die_off : DWARFINLINE_BYTES_PER_OPEN;
	if (d->bytes_open >= DWARFINLINE_BYTES_PER_OPEN)
		close_libdw(d);
	d->stats.table_bytes = table_bytes(d);
	d->stats.build_ns += marple_thread_cpu_ns() - t0;
}

/* A unit's address range, while the index is gathered. */
struct span {
	uint64_t lo, hi;
	uint32_t unit;
};
struct spans {
	struct span *at;
	size_t n, cap;
};

static void add_span(struct spans *sp, uint64_t lo, uint64_t hi, size_t unit)
{
	if (lo == 0 || hi <= lo)	/* dropped by the linker, or empty */
		return;
	sp->at = marple_grow(sp->at, &sp->cap, sp->n + 1, sizeof(*sp->at));
	sp->at[sp->n++] = (struct span){ lo, hi, (uint32_t)unit };
}

/* Units whose DIE gives no range (only a line table, or an old compiler's
 * bare DW_AT_low_pc): their spans from .debug_aranges, if the file has it. */
static void add_arange_spans(struct dwarfinline *d, struct spans *sp, const char *ranged)
{
	Dwarf_Aranges *ar;
	size_t n;
	if (dwarf_getaranges(d->dw, &ar, &n) != 0)
		return;
	for (size_t i = 0; i < n; i++) {
		Dwarf_Addr start;
		Dwarf_Word len;
		Dwarf_Off die_off;
		if (dwarf_getarangeinfo(dwarf_onearange(ar, i), &start, &len, &die_off) != 0)
			continue;
		size_t lo = 0, hi = d->nunits;	/* the units are in DIE offset order */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (d->units[mid].die_off < die_off)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < d->nunits && d->units[lo].die_off == die_off && !ranged[lo])
			add_span(sp, start, start + len, lo);
	}
}

static int by_span_lo(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The spans sorted into d's arrays (the lookup searches span_lo alone). */
static void sort_spans(struct dwarfinline *d, struct spans *sp)
{
	if (sp->n)
		qsort(sp->at, sp->n, sizeof(*sp->at), by_span_lo);
	d->span_lo = marple_malloc((sp->n + 1) * sizeof(*d->span_lo));
	d->span_hi = marple_malloc((sp->n + 1) * sizeof(*d->span_hi));
	d->span_unit = marple_malloc((sp->n + 1) * sizeof(*d->span_unit));
	for (size_t i = 0; i < sp->n; i++)
		d->span_lo[i] = sp->at[i].lo, d->span_hi[i] = sp->at[i].hi, d->span_unit[i] = sp->at[i].unit;
	d->nspans = sp->n;
	free(sp->at);
}

/* The index of compile units: each unit's DIE and the address ranges it
 * says it covers, sorted.  Reading it touches each unit's first DIE only. */
static void index_units(struct dwarfinline *d)
{
	uint64_t t0 = marple_thread_cpu_ns();
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, subdie;
	uint8_t unit_type;
	Dwarf_Half version;
	struct spans sp = { 0 };
	size_t ranged_cap = 0;
	char *ranged = NULL;	/* units whose DIE gave a span */
	int r, unranged = 0;
	while ((r = dwarf_get_units(d->dw, cu, &cu, &version, &unit_type, &cudie, &subdie)) == 0) {
		if (unit_type != DW_UT_compile && unit_type != DW_UT_partial)
			continue;	/* type units have no code */
		if (d->nunits >= UINT32_MAX)
			break;
		d->units = marple_grow(d->units, &d->cap_units, d->nunits + 1, sizeof(*d->units));
		d->units[d->nunits] = (struct unit_table){ .die_off = dwarf_dieoffset(&cudie) };
		ranged = marple_grow(ranged, &ranged_cap, d->nunits + 1, 1);
		size_t before = sp.n;
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;
		while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0)
			add_span(&sp, lo, hi, d->nunits);
		ranged[d->nunits] = sp.n > before;
		unranged += sp.n == before;
		d->nunits++;
	}
	if (r < 0)
		d->stats.units_bad++;	/* the units after it are not indexed */
	if (unranged)
		add_arange_spans(d, &sp, ranged);
	free(ranged);
	sort_spans(d, &sp);
	d->stats.units = d->nunits;
	d->stats.table_bytes = table_bytes(d);
	d->stats.build_ns += marple_thread_cpu_ns() - t0;
}

/* Find the DWARF, unless its sections are over the bound, and index its
 * units; libdw's reader is kept to read a unit when it is first asked. */
static void load_dwarf(struct dwarfinline *d, uint64_t max_bytes)
{
	GElf_Addr elf_bias, dwarf_bias;
	uint64_t t0 = marple_thread_cpu_ns();
	if (!dwfl_module_getelf(d->mod, &elf_bias))
		return;
	Dwarf *dw = dwfl_module_getdwarf(d->mod, &dwarf_bias);	/* inflates compressed sections */
	d->stats.build_ns += marple_thread_cpu_ns() - t0;
	if (!dw)
		return;
	d->stats.dwarf_bytes = debug_section_bytes(dwarf_getelf(dw));
	if (d->stats.dwarf_bytes > max_bytes) {
		d->stats.too_big = 1;
		return;
	}
	d->dw = dw;
	d->to_dwarf = elf_bias - dwarf_bias;
	const char *mainfile = NULL, *debugfile = NULL;
	dwfl_module_info(d->mod, NULL, NULL, NULL, NULL, NULL, &mainfile, &debugfile);
	d->debugfile = marple_strdup(debugfile ? debugfile : mainfile ? mainfile : "");
	index_units(d);
	d->has_table = 1;
}

struct dwarfinline *dwarfinline_open(const char *path, const char *debugroot, uint64_t max_bytes)
{
	return dwarfinline_open_fd(path, -1, debugroot, max_bytes);
}

struct dwarfinline *dwarfinline_open_fd(const char *path, int fd, const char *debugroot, uint64_t max_bytes)
{
	struct dwarfinline *d = calloc(1, sizeof(*d));
	if (!d) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	d->fd_again = -1;
	const char *root = debugroot ? debugroot : "/usr/lib/debug";
	size_t len = strlen(root) + sizeof("-:.debug:");
	d->debugpath = malloc(len);
	if (d->debugpath)
		snprintf(d->debugpath, len, "-:.debug:%s", root);
	d->debugroot = marple_strdup(root);
	d->max_bytes = max_bytes ? max_bytes : DWARFINLINE_DEFAULT_MAX_BYTES;
	if (!d->debugpath || !(d->strings = hashtab_new())) {
		if (fd >= 0)
			close(fd);
		dwarfinline_close(d);
		return NULL;
	}
	d->path = marple_strdup(path);
	d->fd_again = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;	/* none: no unit read */
	d->by_path = fd < 0;
	if (report_file(d, path, fd) != 0) {
		dwarfinline_close(d);
		return NULL;
	}
	load_dwarf(d, max_bytes ? max_bytes : DWARFINLINE_DEFAULT_MAX_BYTES);
	close_libdw(d);	/* the index's units and abbreviations: opened again to read a unit */
	return d;
}

/* The last i with keys[i] <= key, or -1. */
static ptrdiff_t last_at_or_before(const uint64_t *keys, size_t n, uint64_t key)
{
	size_t lo = 0, hi = n;	/* keys[0..lo) <= key < keys[hi..n) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (keys[mid] <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (ptrdiff_t)lo - 1;
}

/* How many spans before the last one starting at or before an address are
 * looked at for one covering it (a unit's span around another's). */
#define SPAN_LOOKBACK 8

/* The unit covering addr, read if it was not; NULL if none does. */
static struct unit_table *unit_at(struct dwarfinline *d, uint64_t addr)
{
	ptrdiff_t s = last_at_or_before(d->span_lo, d->nspans, addr);
	for (ptrdiff_t stop = s - SPAN_LOOKBACK; s >= 0 && s > stop; s--) {
		if (addr >= d->span_hi[s])
			continue;
		struct unit_table *u = &d->units[d->span_unit[s]];
		if (u->state == UNIT_UNREAD)
			read_unit(d, u);
		return u;
	}
	return NULL;
}

int dwarfinline_lookup(struct dwarfinline *d, uint64_t vaddr, struct dwarfinline_frame *out, int max)
{
	d->stats.lookups++;
	if (!d->has_table) {
		d->stats.no_dwarf++;
		return 0;
	}
	uint64_t addr = vaddr + d->to_dwarf;
	struct unit_table *u = unit_at(d, addr);
	if (u && u->state == UNIT_BAD) {
		d->stats.bad_dwarf++;
		return 0;
	}
	ptrdiff_t r = u ? last_at_or_before(u->range_lo, u->nranges, addr) : -1;
	ptrdiff_t l = u ? last_at_or_before(u->line_addr, u->nlines, addr) : -1;
	uint32_t node = r >= 0 ? u->range_node[r] : NO_NODE;
	int has_line = l >= 0 && u->line_file[l] != NO_FILE;
	const char *file = has_line ? string_of(d, u->line_file[l]) : "??";
	unsigned line = has_line ? u->line_no[l] : 0;
	if (node == NO_NODE) {
		/* code without a function DIE (assembler): its line, as addr2line */
		if (!has_line || max < 1) {
			d->stats.no_unit++;
			return 0;
		}
		d->stats.no_function++;
		out[0] = (struct dwarfinline_frame){ "??", file, line };
		return 1;
	}
	int depth = 0;
	for (; node != NO_NODE; node = d->nodes[node].parent) {
		if (depth == max || depth == DWARFINLINE_MAX_DEPTH) {
			d->stats.cut++;
			break;
		}
		const struct fn_node *fn = &d->nodes[node];
		out[depth++] = (struct dwarfinline_frame){ string_of(d, fn->name), file, line };
		file = string_of(d, fn->call_file);
		line = fn->call_line;
	}
	d->stats.resolved++;
	return depth;
}

const char *dwarfinline_debugfile(const struct dwarfinline *d)
{
	return d->debugfile;
}

const struct dwarfinline_stats *dwarfinline_stats(const struct dwarfinline *d)
{
	return &d->stats;
}

void dwarfinline_close(struct dwarfinline *d)
{
	if (!d)
		return;
	close_libdw(d);
	if (d->fd_again >= 0)
		close(d->fd_again);
	free(d->path);
	free(d->debugpath);
	free(d->debugroot);
	free(d->debugfile);
	hashtab_free(d->strings);
	free(d->nodes);
	for (size_t i = 0; i < d->nunits; i++) {
		free(d->units[i].range_lo);
		free(d->units[i].range_node);
		free(d->units[i].line_addr);
		free(d->units[i].line_file);
		free(d->units[i].line_no);
	}
	free(d->units);
	free(d->span_lo);
	free(d->span_hi);
	free(d->span_unit);
	free(d);
}
