/* selffilter.c — which processes are marple's own (see selffilter.h). */
#include "selffilter.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfmap.h"
#include "self.h"
#include "util.h"

static struct {
	int on;
	pid_t pgid;
	pid_t pids[SELF_MAX_PIDS];
	size_t npids;
} rule;

/* $MARPLE_SELF_PIDS and $MARPLE_SELF_PGID into rule; exit 2 if malformed. */
static void read_environment(void)
{
	const char *list = getenv("MARPLE_SELF_PIDS"), *pg = getenv("MARPLE_SELF_PGID");
	uint64_t v;

	rule.pids[rule.npids++] = getpid();
	for (const char *p = list ? list : ""; *p;) {
		size_t len = strcspn(p, " ,");
		if (len && (marple_parse_u64_span(p, len, &v) < 0 || v == 0 || v > 0x7fffffff))
			marple_usage_error("MARPLE_SELF_PIDS: '%.*s' is not a process id", (int)len, p);
		if (len && rule.npids == SELF_MAX_PIDS)
			marple_usage_error("MARPLE_SELF_PIDS: more than %d process ids", SELF_MAX_PIDS - 1);
		if (len)
			rule.pids[rule.npids++] = (pid_t)v;
		p += len;
		p += strspn(p, " ,");
	}
	if (pg && *pg && (marple_parse_u64(pg, 1, 0x7fffffff, &v) < 0))
		marple_usage_error("MARPLE_SELF_PGID: '%s' is not a process group id", pg);
	rule.pgid = pg && *pg ? (pid_t)v : 0;
}

void selffilter_rule_init(int include_self)
{
	rule.npids = 0;
	rule.on = !include_self;
	read_environment();
}

int selffilter_wants_pgid(void)
{
	return rule.on && rule.pgid;
}

int selffilter_is_marple(pid_t pid, const char *comm, pid_t pgid)
{
	if (!rule.on)
		return 0;
	if (strncmp(comm, "marple", 6) == 0 && (comm[6] == 0 || comm[6] == '-'))
		return 1;
	if (rule.pgid && pgid == rule.pgid)
		return 1;
	for (size_t i = 0; i < rule.npids; i++)
		if (rule.pids[i] == pid)
			return 1;
	return 0;
}

int selffilter_setup(struct bpf_object *obj, int include_self)
{
	int cfg_fd = bpfmap_fd(obj, "self_config"), pids_fd = bpfmap_fd(obj, "self_tgids");
	struct self_config cfg = { 0 };
	__u32 zero = 0;
	__u8 one = 1;

	selffilter_rule_init(include_self);
	if (cfg_fd < 0 || pids_fd < 0) {
		marple_warn("internal error: the BPF object has no self_config/self_tgids map");
		return -1;
	}
	for (size_t i = 0; rule.on && i < rule.npids; i++) {
		__u32 tgid = (__u32)rule.pids[i];
		if (bpf_map_update_elem(pids_fd, &tgid, &one, BPF_ANY) != 0) {
			marple_warn("cannot fill the BPF map self_tgids");
			return -1;
		}
	}
	cfg.off = (__u32)!rule.on;
	cfg.pgid = (__u32)rule.pgid;
	if (bpf_map_update_elem(cfg_fd, &zero, &cfg, BPF_ANY) != 0) {
		marple_warn("cannot fill the BPF map self_config");
		return -1;
	}
	return 0;
}

uint64_t selffilter_excluded(struct bpf_object *obj)
{
	int fd = bpfmap_fd(obj, "self_excluded");
	return fd < 0 ? 0 : bpfmap_percpu_sum(fd, 0);
}

void selffilter_trailer_add(json_t *trailer, struct bpf_object *obj)
{
	json_object_set_new(trailer, "self_excluded", json_integer((json_int_t)selffilter_excluded(obj)));
}
