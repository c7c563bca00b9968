/* test_stackcollector.c — the option table of the stack collectors: usage
 * lines laid out as the programs always printed them, shared and own options
 * parsed, defaults, the duration operand. */
#include <stdlib.h>
#include <string.h>

#include "stackcollector.h"
#include "stackframes.h"
#include "test.h"
#include "util.h"

static int bytes;
static const char *dev;

static void own_option(int key, const char *arg)
{
	switch (key) {
	case 'b': bytes = 1; break;
	case 300: dev = arg; break;
	}
}

static const struct sc_option options[] = {
	SC_PID("only this process"),
	{ 0, 'b', "bytes", NULL, "weight by bytes" },
	{ 0, 300, "device", "DEV", "only this disk: one\ntwo" },
	SC_STACK_OPTIONS,
	{ 0 }
};

static const char usage[] =
	"Usage: test_stackcollector [-p PID] [DURATION]\n"
	"Count.\n"
	"\n"
	"  -p, --pid PID           only this process\n"
	"  -b, --bytes             weight by bytes\n"
	"      --device DEV        only this disk: one\n"
	"                          two\n"
	"      --unwind MODE       user stacks: tables (default; in the kernel with tables\n"
	"                          built from .eh_frame), fp (frame pointers only)\n"
	"      --unwind-memory SIZE\n"
	"                          --unwind tables: kernel memory for the tables, MB\n"
	"                          (or 512K, 2G); default 32 (~7.3 M rows)\n"
	"      --no-cache          --unwind tables: build every file's table, and keep none\n"
	"                          on disk (default: cached in MARPLE_CACHE_DIR, else\n"
	"                          /var/cache/marple for root, ~/.cache/marple)\n"
	"      --no-python         Python, PHP and Perl processes' stacks native only\n"
	"                          (default: their functions in place of the interpreter's)\n"
	"      --no-inline         native frames as their symbols name them: no functions\n"
	"                          inlined into them (default: those DWARF names, each\n"
	"                          described with its file:line)\n"
	"  -U, --user-only         user stacks only\n"
	"  -K, --kernel-only       kernel stacks only\n"
	"  -a, --annotations       kernel frames end in _[k]\n"
	"  -d, --delimited         a \"-\" frame between user and kernel frames\n"
	"      --stack-storage N   stack map entries (offcpu, lock, diskblockrq:\n"
	"                          default 4096; memevents, mallocstacks, memleak:\n"
	"                          8192; a sampling collector's sized to its rate)\n"
	"      --drain-every MS    read and clear the kernel maps every MS ms while capturing,\n"
	"                          and whenever they pass half full (default 1000; 0: only\n"
	"                          at the end, so a full map loses samples)\n"
	"      --every DURATION    continuous: one whole section (header, records, trailer)\n"
	"                          every DURATION (10s, 1m...), symbols kept warm, until\n"
	"                          the end (the last one ends with it)\n"
	"      --addresses         unresolved frames as [module+0xoffset]\n"
	"      --include-self      marple's own processes too (left out by default)\n"
	"  -v, --verbose           statistics on stderr; -vv: libbpf's messages too\n"
	"  -h, --help              this help\n"
	"\n"
	"DURATION: seconds or 500ms, 10s, 2m; none: until SIGINT/SIGTERM.\n"
	"Needs root.\n";

int main(int argc, char **argv)
{
	test_plan(11);
	struct stackcollector sc = { .synopsis = "[-p PID] [DURATION]", .about = "Count.\n", .footer = "Needs root.\n" };
	char *args[] = { "test_stackcollector", "-p", "42", "-b", "--dev", "vda", "-Ua", "--stack-storage", "64",
			 "--addr", "--no-cache", "--delimit", "2s", NULL };
	char *text = NULL;
	size_t len = 0;

	marple_init(argc, argv);
	sc.options = options;
	FILE *f = open_memstream(&text, &len);
	stackcollector_usage(&sc, f);
	fclose(f);
	test_cond("stackcollector: usage laid out in columns", !strcmp(text, usage));
	free(text);

	stackcollector_parse(&sc, options, own_option, 13, args);
	test_cond("stackcollector: -p", sc.pid == 42);
	test_cond("stackcollector: own options, abbreviated long ones", bytes && dev && !strcmp(dev, "vda"));
	test_cond("stackcollector: -U -a together", sc.user_only && sc.annotate && !sc.kernel_only);
	test_cond("stackcollector: --delimit, the old spelling of -d", sc.delimit);
	test_cond("stackcollector: --stack-storage, --addresses", sc.stack_storage == 64 && sc.addresses);
	test_cond("stackcollector: --drain-every defaults to 1000 ms", sc.drain_ms == 1000);
	test_cond("stackcollector: --no-cache", sc.no_cache);
	test_cond("stackcollector: defaults", sc.sample_every == 1 && !sc.verbose && !sc.cmd);
	test_cond("stackcollector: duration operand", sc.duration == 2000000000ull);
	test_cond("stackcollector: frame flags", stackcollector_sf_flags(&sc) == (SF_ANNOTATE_KERNEL | SF_ADDRESSES | SF_DELIMIT));
	stackcollector_free(&sc);
	return test_report();
}
