/* test_folded.c — folded line parsing, the unique-stack table and the perf
 * script parser's buffer entry point. */
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "folded.h"
#include "hashtab.h"
#include "lines.h"
#include "perfscript.h"
#include "test.h"

static char got[256];
static unsigned long long got_w;

static void on_sample(void *ctx, const char *s, size_t n, uint64_t w)
{
	(void)ctx;
	snprintf(got, sizeof(got), "%.*s", (int)n, s);
	got_w += w;
}

static char all[512];
static int nbad;

static void on_each(void *ctx, const char *s, size_t n, uint64_t w)
{
	(void)ctx;
	size_t used = strlen(all);
	snprintf(all + used, sizeof(all) - used, "%.*s %llu\n", (int)n, s, (unsigned long long)w);
}

static void on_bad(void *ctx, unsigned long lineno, const char *why)
{
	(void)ctx, (void)lineno, (void)why;
	nbad++;
}

/* a digest of every sample and bad line, in order */
struct digest {
	uint64_t h, samples, bad;
};

static void digest_bytes(struct digest *d, const void *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		d->h = (d->h ^ ((const unsigned char *)s)[i]) * 1099511628211ull;
}

static void on_digest(void *ctx, const char *s, size_t n, uint64_t w)
{
	struct digest *d = ctx;
	digest_bytes(d, s, n);
	digest_bytes(d, &w, sizeof(w));
	d->samples++;
}

static void on_digest_bad(void *ctx, unsigned long lineno, const char *why)
{
	struct digest *d = ctx;
	digest_bytes(d, &lineno, sizeof(lineno));
	digest_bytes(d, why, strlen(why));
	d->bad++;
}

/* text as marple-fold reads it: whole samples at once where they can be,
 * other lines one by one */
static void digest_as_read(char *text, size_t len, struct digest *d)
{
	FILE *f = fmemopen(text, len, "r");
	struct lines *l = lines_new(f, "t");
	struct perfscript *p = perfscript_new(NULL, on_digest, on_digest_bad, d);
	const char *s;
	size_t n;
	unsigned long lines;

	for (;;) {
		s = lines_buffered(l, &n);
		n = perfscript_whole_samples(p, s, n, lines_lineno(l) + 1, &lines);
		lines_skip(l, n, lines);
		if (lines_next(l, &s, &n) != 1)
			break;
		perfscript_line(p, s, n, lines_lineno(l));
	}
	perfscript_finish(p);
	perfscript_free(p);
	lines_free(l);
	fclose(f);
}

/* 3,000 samples, each its own stack: the memo of whole samples rests
 * after its first window, and the odd samples come while it rests (a bad
 * line, a CR, another event's, one with no frames: not counted) */
static void test_resting_memo(void)
{
	size_t cap = 1 << 20, len = 0;
	char *text = malloc(cap);
	for (int i = 0; i < 3000; i++) {
		const char *odd = i == 2000 ? "\t?\n" : i == 2001 ? "\t9 crlf (/x)\r\n" : "";
		const char *head = i == 2002 ? "other 1 1.0: cycles:\n" : "p 1 1.0: 5 cpu-clock:\n";
		len += (size_t)snprintf(text + len, cap - len, "%s\t1 f%d (/x)\n%s\t2 main (/x)\n\n%s", head, i, odd,
					i == 2003 ? "p 1 1.0: cpu-clock:\n\n" : "");
	}
	struct digest byline = { 14695981039346656037ull, 0, 0 }, whole = byline;
	struct perfscript *p = perfscript_new(NULL, on_digest, on_digest_bad, &byline);
	perfscript_parse_buffer(p, text, len);
	perfscript_free(p);
	digest_as_read(text, len, &whole);
	test_cond("perf: while the memo of whole samples rests, samples fold as line by line",
		  byline.samples == 2999 && byline.bad == 2 && whole.samples == byline.samples &&
		  whole.bad == byline.bad && whole.h == byline.h);
	free(text);
}

int main(void)
{
	test_plan(24);
	struct folded_line fl;
	const char *why;

	test_cond("folded: one count", folded_parse_line("a;b c 12", 8, 1, &fl, &why) == 0 && fl.len == 5 &&
		  fl.ncounts == 1 && fl.icount[0] == 12 && fl.integral);
	test_cond("folded: two counts", folded_parse_line("a;b 3 4", 7, 2, &fl, &why) == 0 && fl.len == 3 &&
		  fl.ncounts == 2 && fl.icount[0] == 3 && fl.icount[1] == 4);
	test_cond("folded: one count when two not allowed", folded_parse_line("a;b 3 4", 7, 1, &fl, &why) == 0 &&
		  fl.len == 5 && fl.icount[0] == 4);
	test_cond("folded: decimal count", folded_parse_line("a 1.5", 5, 1, &fl, &why) == 0 && !fl.integral &&
		  fl.count[0] == 1.5);
	test_cond("folded: no count", folded_parse_line("abc", 3, 2, &fl, &why) < 0);
	test_cond("folded: CR ignored", folded_parse_line("a 7\r", 4, 1, &fl, &why) == 0 && fl.icount[0] == 7);
	test_cond("folded: looks folded", folded_line_looks_folded("x;y 5", 5) && !folded_line_looks_folded("\tffff x (y)", 11));

	struct hashtab *a = hashtab_new();
	char key[32];
	for (int i = 0; i < 5000; i++) {
		int n = snprintf(key, sizeof(key), "s%d", i % 1000);
		hashtab_add(a, key, (size_t)n, 1, 2);
	}
	struct hashtab_entry **e = hashtab_sorted(a);
	test_cond("agg: unique stacks", hashtab_size(a) == 1000);
	test_cond("agg: summed", e[0]->count[0] == 5 && e[0]->count[1] == 10);
	test_cond("agg: byte order", e[0]->len == 2 && memcmp(e[0]->key, "s0", 2) == 0 && memcmp(e[1]->key, "s1", 2) == 0 &&
		  e[1]->len == 2 && memcmp(e[2]->key, "s10", 3) == 0);
	hashtab_free(a);

	static const char perf[] = "java 1/2 [000] 1.0:   7 cpu-clock: \n"
				   "\t7f Lcom/x/Y;.run(I)V (/tmp/perf-1.map)\n"
				   "\tffff a->b+0x1f ([kernel.kallsyms])\n";
	struct perfscript_opts o = { .kernel = 1, .jit = 1 };
	struct perfscript *p = perfscript_new(&o, on_sample, NULL, NULL);
	test_cond("perf: buffer without final blank line counts", perfscript_parse_buffer(p, perf, strlen(perf)) == 1);
	test_cond("perf: folded sample", strcmp(got, "java;a_[k];b_[i];com/x/Y:.run_[j]") == 0);
	test_cond("perf: period weight", got_w == 7);
	test_cond("perf: event remembered", strcmp(perfscript_event(p), "cpu-clock") == 0);
	perfscript_free(p);
	/* the same frame lines again (parsed once, then remembered): as a Java
	 * program's, then another's, then Java's again, each tidied as its own;
	 * a bad line reported each time */
	static const char again[] = "java 1 1.0: cpu-clock:\n\t7f Lcom/x/Y;.run(I)V (/a.so)\n\t8f main (/a.so)\n\n"
				    "sh 2 1.0: cpu-clock:\n\t7f Lcom/x/Y;.run(I)V (/a.so)\n\t8f main (/a.so)\n\t?\n\n"
				    "java 3 1.0: cpu-clock:\n\t7f Lcom/x/Y;.run(I)V (/a.so)\n\t8f main (/a.so)\n\t?\n";
	p = perfscript_new(NULL, on_each, on_bad, NULL);
	test_cond("perf: frames seen before fold as when first seen, by the sample's program",
		  perfscript_parse_buffer(p, again, strlen(again)) == 3 &&
		  strcmp(all, "java;main;com/x/Y:.run 1\nsh;main;Lcom/x/Y:.run 1\njava;main;com/x/Y:.run 1\n") == 0);
	test_cond("perf: a bad line seen again is reported again", nbad == 2);
	perfscript_free(p);
	/* whole samples taken from a buffer, memoized by their frame lines as
	 * they lie there: the same lines of other programs (a name that the
	 * first one's key begins with too) fold under their own names */
	static const char names[] = " 1 1.0: cpu-clock:\n\t1 f (/x)\n\t2 g (/x)\n\n";
	static const char *const comms[] = { "ax", "ax", "ax", "ax;g", "ax;g", "ax;g", "axb", "axb", "ax", "ax" };
	char whole[1024];
	size_t wl = 0;
	for (size_t i = 0; i < sizeof(comms) / sizeof(comms[0]); i++)
		wl += (size_t)snprintf(whole + wl, sizeof(whole) - wl, "%s%s", comms[i], names);
	unsigned long nl;
	all[0] = 0;
	p = perfscript_new(NULL, on_each, NULL, NULL);
	size_t took = perfscript_whole_samples(p, whole, wl, 1, &nl);
	perfscript_finish(p);
	test_cond("perf: whole samples memoized apart by program",
		  took == wl && nl == 40 && perfscript_samples(p) == 10 &&
		  strcmp(all, "ax;g;f 1\nax;g;f 1\nax;g;f 1\nax;g;g;f 1\nax;g;g;f 1\nax;g;g;f 1\n"
			      "axb;g;f 1\naxb;g;f 1\nax;g;f 1\nax;g;f 1\n") == 0);
	perfscript_free(p);
	/* an input of folded text read as stack records (marple-pprof, marple-speedscope) */
	static char text[] = "a;b;c 3\n\n\r\nbad\nx 2.5\n";
	FILE *f = fmemopen(text, strlen(text), "r");
	struct lines *l = lines_new(f, "t");
	struct mstr *fr = NULL;
	size_t cap = 0, n;
	test_cond("folded input: not a stream", !folded_input_is_stream(l));
	test_cond("folded input: a line, split into its frames",
		  folded_next_line(l, 2, &fl, &why) == 1 && fl.icount[0] == 3 &&
		  (n = folded_split_frames(fl.stack, fl.len, &fr, &cap)) == 3 && escape_mstr_eq(fr[0], "a") &&
		  escape_mstr_eq(fr[2], "c"));
	test_cond("folded input: blank lines passed over, a bad line named by its number",
		  folded_next_line(l, 2, &fl, &why) == -1 && lines_lineno(l) == 4);
	test_cond("folded input: reading goes on, then the end",
		  folded_next_line(l, 2, &fl, &why) == 1 && fl.count[0] == 2.5 && folded_next_line(l, 2, &fl, &why) == 0);
	test_cond("folded input: an empty stack has no frames", folded_split_frames("", 0, &fr, &cap) == 0);
	free(fr);
	lines_free(l);
	fclose(f);
	test_resting_memo();
	/* headers that end alike take the period and event of the one before:
	 * one that differs in its period or event does not */
	static const char tails[] = "a 1 1.0: 5 cpu-clock: \n\t1 f (/x)\n\na 1 1.5: 5 cpu-clock: \n\t1 f (/x)\n\n"
				    "a 1 2.0: 7 cpu-clock: \n\t1 f (/x)\n\na 1 2.5: 5 cycles: \n\t1 f (/x)\n\n"
				    "a 1 3.0: 5 cpu-clock: \n\t1 f (/x)\n\na 1 3.5: 15 cpu-clock: \n\t1 f (/x)\n\n";
	got_w = 0;
	p = perfscript_new(NULL, on_sample, NULL, NULL);
	test_cond("perf: each header's own period and event",
		  perfscript_parse_buffer(p, tails, strlen(tails)) == 5 && got_w == 37 && perfscript_filtered(p) == 1);
	perfscript_free(p);
	return test_report();
}
