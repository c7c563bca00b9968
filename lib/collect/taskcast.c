/* taskcast.c — does this kernel take bpf_rdonly_cast to void (see taskcast.h)? */
#include "taskcast.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bpfmap.h"
#include "taskcast.skel.h"

static const char *used = "trusted";

/* 1 if it does, 0 if not: a load of the probe, once a boot */
static int taskcast_works(struct unwindtablescache *cache)
{
	static int works = -1;

	if (works >= 0)
		return works;
	if (unwindtablescache_kernel_fact(cache, "rdonly-cast-void", &works) == 0)
		return works;
	libbpf_print_fn_t old = libbpf_set_print(NULL);	/* a refusal is an answer, not an error */
	struct taskcast_bpf *probe = taskcast_bpf__open_and_load();
	libbpf_set_print(old);
	works = probe != NULL;
	taskcast_bpf__destroy(probe);
	unwindtablescache_kernel_fact_set(cache, "rdonly-cast-void", works);
	return works;
}

void taskcast_configure(struct bpf_object *obj, struct unwindtablescache *cache)
{
	const char *env = getenv("MARPLE_TASK_CAST");

	if (bpfmap_rodata_get(obj, "task_cast_ok", UINT32_MAX) == UINT32_MAX)
		return;
	int cast = !(env && strcmp(env, "off") == 0) && taskcast_works(cache);
	bpfmap_rodata_set(obj, "task_cast_ok", cast);
	used = cast ? "cast" : "trusted";
}

void taskcast_trailer(json_t *trailer)
{
	json_object_set_new(trailer, "task_fields", json_string(used));
}
