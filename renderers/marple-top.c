/* marple-top — the functions that cost most, as text: self and total per
 * function, heaviest first, for an ssh session (perf report, pprof -top).
 *
 * Reads marple stack sections or folded text (files or stdin), as
 * marple-flamegraph does, and writes a table: a function's self weight (the
 * stacks it is the leaf of), its total (the stacks it is on, once a stack
 * however deep it recurses), their shares of all, and the running sum of
 * self.  A stack's first frame names its process, not a function: not listed.
 *
 *   $ marple-callstack -F 99 10 | marple-top -T 3
 *   # callstack on db1: 1888 samples
 *         self   self%    sum%      total  total%  function
 *          612  32.42%  32.42%        612  32.42%  _PyEval_EvalFrameDefault
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "stacktree.h"
#include "util.h"

static struct {
	const char *out;
	uint64_t top;
	int by_total, user_threads, nolineno;
} opt = { .top = 20 };

enum { O_SORT = 256, O_NOLINENO };
static const struct options_entry options[] = {
	{ 'T', "top", "N", "the N heaviest functions (default 20; 0: all)" },
	{ O_SORT, "sort", "KEY", "self (default) or total" },
	{ O_NOLINENO, "nolineno", NULL, "frames \"NAME (FILE:LINE)\" (Python's) as \"NAME (FILE)\":\n"
				    "a function's lines count as one" },
	OPTIONS_USER_THREADS_ONLY,
	OPTIONS_OUTPUT,
	OPTIONS_DESCRIBE("kind=renderer\treads=stack\text=txt"),
	OPTIONS_HELP,
	{ 0 }
};

static const struct options_help help = {
	.synopsis = "[OPTION]... [FILE]...",
	.about = "The heaviest functions of stack data (marple stack sections or folded text)\n"
	         "as a text table: self and total weight per function.\n",
	.after = "With no FILE, or FILE '-', read stdin.  Exit: 0 ok, 1 bad or unusable input,\n"
	         "2 usage.  See marple-top(1).\n",
};

struct fn {
	double self, total;
	uint32_t name;
};

/* Self and total of every name: a walk of the tree keeping how often each
 * name is on the path already (a recursion counts its stacks once).  Depth
 * 1 is the process: no function. */
static void weigh(struct stree *t, struct fn *fns, uint32_t *onpath)
{
	struct frame { uint32_t node; size_t next; } *stack = NULL;
	size_t depth = 0, cap = 0;

	stack = marple_grow(stack, &cap, 1, sizeof(*stack));
	stack[depth++] = (struct frame){ 0, 0 };
	while (depth) {
		size_t n;
		const uint32_t *kids = stacktree_children(t, stack[depth - 1].node, 0, &n);
		if (stack[depth - 1].next == n) {
			uint32_t name = stacktree_node(t, stack[depth - 1].node)->name;
			if (depth > 2)
				onpath[name]--;
			depth--;
			continue;
		}
		uint32_t k = kids[stack[depth - 1].next++];
		uint32_t name = stacktree_node(t, k)->name;
		double v = stacktree_weight2(t, k), below = 0;
		const uint32_t *grandkids = stacktree_children(t, k, 0, &n);
		for (size_t i = 0; i < n; i++)
			below += stacktree_weight2(t, grandkids[i]);
		if (depth >= 2) {	/* k is a function, below a process */
			if (!onpath[name]++)
				fns[name].total += v;
			fns[name].self += v - below;
		}
		stack = marple_grow(stack, &cap, depth + 1, sizeof(*stack));
		stack[depth++] = (struct frame){ k, 0 };
	}
	free(stack);
}

static int heavier(const void *a, const void *b)
{
	const struct fn *x = a, *y = b;
	double kx = opt.by_total ? x->total : x->self, ky = opt.by_total ? y->total : y->self;
	if (kx != ky)
		return kx < ky ? 1 : -1;
	return x->name < y->name ? -1 : x->name > y->name;
}

static void write_table(FILE *f, struct stree *t, const struct stacktree_input *in)
{
	size_t nn = stacktree_names(t), shown = 0;
	struct fn *fns = marple_calloc(nn, sizeof(*fns));
	uint32_t *onpath = marple_calloc(nn, sizeof(*onpath));
	double all = stacktree_weight2(t, 0), sum = 0;

	for (size_t i = 0; i < nn; i++)
		fns[i].name = (uint32_t)i;
	weigh(t, fns, onpath);
	qsort(fns, nn, sizeof(*fns), heavier);
	fprintf(f, "# %s%s%s: %.0f %s\n", in->interface ? in->interface : "stacks", in->host ? " on " : "",
		in->host ? in->host : "", all, in->unit ? in->unit : "samples");
	fprintf(f, "%12s %7s %7s %12s %7s  %s\n", "self", "self%", "sum%", "total", "total%", "function");
	for (size_t i = 0; i < nn && (!opt.top || shown < opt.top); i++) {
		if (fns[i].total <= 0)
			continue;	/* a process name, or no weight */
		sum += fns[i].self;
		fprintf(f, "%12.0f %6.2f%% %6.2f%% %12.0f %6.2f%%  ", fns[i].self, 100 * fns[i].self / all,
			100 * sum / all, fns[i].total, 100 * fns[i].total / all);
		escape_show(f, stacktree_name(t, fns[i].name));
		putc('\n', f);
		shown++;
	}
	free(fns);
	free(onpath);
}

int main(int argc, char **argv)
{
	int ch;

	marple_init(argc, argv);
	while ((ch = options_getopt(options, argc, argv)) != -1) {
		switch (ch) {
		case 'T': opt.top = marple_opt_u64("--top", optarg, 0, UINT32_MAX); break;
		case O_SORT:
			if (strcmp(optarg, "self") && strcmp(optarg, "total"))
				marple_usage_error("--sort: '%s': self or total", optarg);
			opt.by_total = !strcmp(optarg, "total");
			break;
		case O_NOLINENO: opt.nolineno = 1; break;
		case 'u': opt.user_threads = 1; break;
		case 'o': opt.out = optarg; break;
		case 'h': options_help(stdout, options, &help); marple_close_stdout(); return EXIT_OK;
		default: marple_usage_try();
		}
	}

	struct stree *t = stacktree_new(0);
	struct stacktree_input in = { .user_threads = opt.user_threads, .nolineno = opt.nolineno };
	int rc = EXIT_OK;
	if (stacktree_read_operands(t, argc - optind, argv + optind, &in) < 0) {
		rc = EXIT_DATA;
		goto cleanup;
	}
	if (in.two_counts)
		marple_warn("differential input: the second count of each line is used");
	if (in.stacks == 0 || stacktree_weight2(t, 0) <= 0) {
		marple_warn_at(marple_operands_name(argc - optind, argv + optind), 0, "no usable stacks in the input");
		rc = EXIT_DATA;
		goto cleanup;
	}
	struct outfile *o = marple_outfile_open(opt.out);
	write_table(marple_outfile_stream(o), t, &in);
	if (marple_outfile_commit(o) < 0)
		rc = EXIT_DATA;
cleanup:
	stacktree_free(t);
	free(in.unit);
	free(in.measure);
	free(in.interface);
	free(in.host);
	return rc;
}
