/* test_stackframes.c — the records table of lib/collect/stackframes.c: what a
 * distinct stack costs in it (a long capture's table grows by that for every
 * new stack), and that its records come out as they went in; a stack handed
 * as addresses (stackdrain.h) is named as the same stack read by its id. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "stackframes.h"
#include "test.h"

#define FRAMES 40
#define STACKS 3000

/* Frame j of stack i: a C++ compiler's kind of name (~60 bytes); the
 * leaf differs from stack to stack, and 1 stack in 10 has its own frames
 * near the root too, so that there are thousands of distinct names. */
static void frame_name(char *buf, size_t len, int i, int j)
{
	if (j == FRAMES - 1)
		snprintf(buf, len, "clang::Sema::CheckTemplateArgumentsForLeafNumber%d(unsigned)", i);
	else if (j == 3 && i % 10 == 0)
		snprintf(buf, len, "llvm::SmallVectorImpl<clang::TemplateArgument>::grow_%d(unsigned long)", i);
	else
		snprintf(buf, len, "clang::Parser::ParseDeclarationOrFunctionDefinitionAtDepth%d()", j);
}

/* Build stack i (comm, then its frames) in sf. */
static void build(struct stackframes *sf, int i, char names[FRAMES][128])
{
	const char *p[FRAMES];

	stackframes_begin(sf, i % 2 ? "cc1plus" : "clang");
	for (int j = 0; j < FRAMES; j++) {
		frame_name(names[j], sizeof(names[j]), i, j);
		p[j] = names[j];
	}
	stackframes_user_splice(sf, 1, p, FRAMES);
}

/* The record line stack i is written as, with weight w. */
static void expected(char *buf, size_t len, int i, uint64_t w)
{
	char name[128];
	size_t at = (size_t)snprintf(buf, len, "%llu#%s", (unsigned long long)w, i % 2 ? "cc1plus" : "clang");

	for (int j = 0; j < FRAMES && at < len; j++) {
		frame_name(name, sizeof(name), i, j);
		at += (size_t)snprintf(buf + at, len - at, ";%s", name);
	}
	if (at < len)
		snprintf(buf + at, len - at, "\n");
}

static void table_cost_and_contents(void)
{
	struct stackframes *sf = stackframes_new(NULL, NULL, -1, 0);
	struct hashtab *t = hashtab_new();
	char names[FRAMES][128];
	size_t name_bytes = 0, key_bytes = 0;

	for (int round = 0; round < 2; round++)		/* each stack twice: one record, weight 1 + 2 */
		for (int i = 0; i < STACKS; i++) {
			build(sf, i, names);
			if (round == 0)
				for (int j = 0; j < FRAMES; j++)
					name_bytes += strlen(names[j]) + 1;
			stackframes_collect(sf, t, (uint64_t)round + 1);
		}
	for (size_t i = 0; i < hashtab_size(t); i++)
		key_bytes += hashtab_at(t, i)->len;
	test_cond("one record a distinct stack", hashtab_size(t) == STACKS);
	/* the names' bytes were 2.4 KB a stack: the key holds 1-3 bytes a frame */
	test_cond("a distinct stack's key holds at most 3 bytes a frame",
		  key_bytes <= (size_t)STACKS * (FRAMES + 1) * 3);
	if (key_bytes > (size_t)STACKS * (FRAMES + 1) * 3)
		printf("# %zu key bytes for %d stacks (%zu bytes of names)\n", key_bytes, STACKS, name_bytes);

	char *out = NULL, line[8192];
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	uint64_t written = stackframes_write_table(sf, t, f);
	fclose(f);
	int same = written == STACKS, at = 0;
	for (int i = 0; i < STACKS && same; i++) {
		expected(line, sizeof(line), i, 3);
		size_t l = strlen(line);
		same = strncmp(out + at, line, l) == 0;
		if (!same)
			printf("# record %d: expected %.80s..., got %.80s...\n", i, line, out + at);
		at += (int)l;
	}
	test_cond("the records come out with their frames and weights, in order", same && out[at] == 0);
	free(out);
	hashtab_free(t);
	stackframes_free(sf);
}

/* marple-offcpu --both: the same frames on and off CPU are two records,
 * each written with its own side. */
static void split_cpu(void)
{
	struct stackframes *sf = stackframes_new(NULL, NULL, -1, SF_DELIMIT);
	struct hashtab *t = hashtab_new();
	const char *user[] = { "main", "work" };
	struct stack_key k;

	stackframes_split_cpu(sf, 1);
	for (int on = 0; on < 2; on++) {
		memset(&k, 0, sizeof(k));
		memcpy(k.comm, "app", 4);
		k.user_stack_id = STACK_ID_NONE;
		k.kern_stack_id = STACK_ID_NONE;
		k.exec_id = on ? STACK_EXEC_ID_ON_CPU : 0;
		stackframes_key(sf, &k);
		stackframes_user_splice(sf, 1, user, 2);
		stackframes_collect(sf, t, on ? 5 : 7);
	}
	char *off = NULL, *on = NULL;
	size_t l1 = 0, l2 = 0;
	FILE *f = open_memstream(&off, &l1);
	stackframes_write_table_cpu(sf, t, f, 0);
	fclose(f);
	f = open_memstream(&on, &l2);
	stackframes_write_table_cpu(sf, t, f, 1);
	fclose(f);
	test_cond("on- and off-CPU records stay apart", off && on && strcmp(off, "7#app;main;work\n") == 0 &&
							     strcmp(on, "5#app;main;work\n") == 0);
	free(off);
	free(on);
	hashtab_free(t);
	stackframes_free(sf);
}

/* The frames of the stack just built, joined by ';'. */
static void joined(struct stackframes *sf, char *buf, size_t len)
{
	size_t n, at = 0;
	const char *const *fr = stackframes_frames(sf, &n);

	buf[0] = 0;
	for (size_t i = 0; i < n && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ";" : "", fr[i]);
}

/* A stack without addresses says why, the same whether handed by the drain
 * (stackframes_key_stacks) or read by its id from a store (no store here:
 * an id is missing). */
static void stacks_without_addresses(void)
{
	struct stackframes *sf = stackframes_new(NULL, NULL, -1, SF_DELIMIT | SF_ANNOTATE_KERNEL);
	struct stack_key k = { .pid = 1 };
	struct stackframes_stats st;
	char by_ips[256], by_id[256];
	static const struct {
		int user, kern;
		const char *frames;
	} cases[] = {
		{ STACK_ID_NONE, STACK_ID_NONE, "app" },
		{ STACK_ID_LOST, STACK_ID_NONE, "app;[lost: stack map full]" },
		{ STACK_ID_NONE, STACK_ID_LOST, "app;-;[lost: stack map full]_[k]" },
		{ -2, -2, "app;[missing user stack];-;[missing kernel stack]_[k]" },
	};
	int same = 1;

	memcpy(k.comm, "app", 4);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		stackframes_key_stacks(sf, &k, (struct stack_ips){ NULL, cases[i].user },
				       (struct stack_ips){ NULL, cases[i].kern });
		joined(sf, by_ips, sizeof(by_ips));
		k.user_stack_id = cases[i].user;
		k.kern_stack_id = cases[i].kern;
		stackframes_key(sf, &k);
		joined(sf, by_id, sizeof(by_id));
		if (strcmp(by_ips, cases[i].frames) || strcmp(by_id, cases[i].frames)) {
			printf("# case %zu: by addresses %s, by id %s, wanted %s\n", i, by_ips, by_id, cases[i].frames);
			same = 0;
		}
	}
	stackframes_stats(sf, &st);
	test_cond("a stack without addresses is named alike by addresses and by id",
		  same && st.missing_user == 2 && st.missing_kernel == 2);
	stackframes_free(sf);
}

int main(void)
{
	test_plan(5);
	table_cost_and_contents();
	split_cpu();
	stacks_without_addresses();
	return test_report();
}
