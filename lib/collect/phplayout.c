/* phplayout.c — PHP's struct offsets by module API number (see phplayout.h). */
#include "phplayout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>
#include "python.h"

/* From php8.2-dev's Zend headers (offsetof, x86-64, non-ZTS) */
static const struct phplayout tables[] = {
	{ .api = 20220829, .minor = "8.2", .eg_current = 488, .ex_opline = 0, .ex_func = 24, .ex_prev = 48,
	  .ex_call_top_bit = 40 * 8 + 17, .op_lineno = 24, .fn_name = 8, .fn_scope = 16, .fn_filename = 152,
	  .ce_name = 8 },
};

void phplayout_version_of(const char *elf, size_t n, unsigned *api, char *version, size_t len)
{
	static const char id[] = "API", powered[] = "X-Powered-By: PHP/";
	const char *end = elf + n;

	*api = 0;
	snprintf(version, len, "?");
	/* "API" then 8 digits then ",NTS" and its NUL */
	for (const char *at = elf; at && at + 16 <= end; at++) {
		at = memmem(at, (size_t)(end - at), id, 3);
		if (!at || at + 16 > end)
			break;
		unsigned v = 0;
		int k = 3;
		while (k < 11 && at[k] >= '0' && at[k] <= '9')
			v = v * 10 + (unsigned)(at[k++] - '0');
		if (k == 11 && memcmp(at + 11, ",NTS", 5) == 0) {
			*api = v;
			break;
		}
	}
	const char *v = memmem(elf, n, powered, sizeof(powered) - 1);
	if (v) {
		v += sizeof(powered) - 1;
		size_t k = 0;
		while (v + k < end && k + 1 < len && ((v[k] >= '0' && v[k] <= '9') || v[k] == '.'))
			k++;
		if (k)
			snprintf(version, len, "%.*s", (int)k, v);
	}
}

const struct phplayout *phplayout_table(unsigned api)
{
	const char *no_table = getenv("MARPLE_TEST_PHP_NO_TABLE");

	if (no_table && *no_table)
		return NULL;
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		if (tables[i].api == api)
			return &tables[i];
	return NULL;
}

void phplayout_to_proc(const struct phplayout *l, struct py_proc *v)
{
	v->flags = PY_F_PHP;
	v->tstate_frame = l->eg_current;
	v->frame_code = l->ex_func;
	v->frame_previous = l->ex_prev;
	v->frame_instr = l->ex_opline;
	v->frame_entry = l->ex_call_top_bit;
	v->code_adaptive = l->op_lineno;
	v->code_qualname = l->fn_name;
	v->code_linetable = l->fn_scope;
}
