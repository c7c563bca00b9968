/* plan.c — which collectors a capture runs, with which options (see plan.h). */
#include "plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "util.h"

/* A flag set to auto in the config is given when the capture stays under this
 * many samples (its [INTERFACE] frequency x CPUs x seconds, every CPU busy):
 * callstack's sample times take ~45 bytes each, so <= ~45 MB. */
#define AUTO_MAX_SAMPLES 1000000u

static int fail(char **why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(char **why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(why, fmt, ap) < 0)
		*why = NULL;
	va_end(ap);
	return -1;
}

/* Whether a program's options field ("-F|--frequency=HZ --timed ~--old")
 * has option name: -1 no, 0 a flag, 1 it takes a value. */
static int option_takes(const char *options, const char *name)
{
	size_t n = strlen(name);

	for (const char *w = options; *w; w += strspn(w, " ")) {
		size_t len = strcspn(w, " ");
		const char *spell = w + (*w == '~'), *end = w + len;
		const char *eq = memchr(spell, '=', (size_t)(end - spell));
		const char *stop = eq ? eq : end;
		for (const char *a = spell; a < stop; ) {
			const char *bar = memchr(a, '|', (size_t)(stop - a));
			const char *aend = bar ? bar : stop;
			if ((size_t)(aend - a) == n && !strncmp(a, name, n))
				return eq != NULL;
			a = aend + 1;
		}
		w = end;
	}
	return -1;
}

static void add_arg(struct plan_collector *c, const char *arg, size_t len)
{
	c->args = marple_grow(c->args, &c->cap, c->nargs + 2, sizeof(*c->args));
	c->args[c->nargs++] = marple_strndup(arg, len);
	c->args[c->nargs] = NULL;
}

static int capture_is_small(const char *iface, const struct plan_request *rq)
{
	char *hz = config_value(iface, "frequency");
	uint64_t freq = 0;
	int small = hz && marple_parse_u64(hz, 1, UINT32_MAX, &freq) == 0 && rq->capture_s > 0 &&
		    (unsigned __int128)freq * (rq->cpus ? rq->cpus : 1) * rq->capture_s <= AUTO_MAX_SAMPLES;
	free(hz);
	return small;
}

/* The config's [INTERFACE] keys as the collector's registry config= field maps
 * them: KEY:OPTION gives OPTION VALUE; for a flag, yes gives it, no does not,
 * auto gives it when the capture is small (capture_is_small). */
static void config_options(struct plan_collector *c, const struct registry_collector *rc,
			   const struct plan_request *rq)
{
	char *map = marple_strdup(rc->config), *sv;

	for (char *kv = strtok_r(map, ",", &sv); kv; kv = strtok_r(NULL, ",", &sv)) {
		char *opt = strchr(kv, ':');
		if (!opt)
			continue;
		*opt++ = 0;
		char *value = config_value(c->interface, kv);
		int takes = option_takes(rc->options, opt);
		if (value && *value && takes == 1) {
			add_arg(c, opt, strlen(opt));
			add_arg(c, value, strlen(value));
		} else if (value && takes == 0 && (!strcmp(value, "yes") ||
			   (!strcmp(value, "auto") && capture_is_small(c->interface, rq)))) {
			add_arg(c, opt, strlen(opt));
		}
		free(value);
	}
	free(map);
}

/* The collector of an interface, added once, with the config's options. */
static struct plan_collector *plan_add(struct plan *p, const char *iface, const struct registry *reg,
				       const struct plan_request *rq)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->c[i].interface, iface))
			return &p->c[i];
	p->c = marple_grow(p->c, &p->cap, p->n + 1, sizeof(*p->c));
	struct plan_collector *c = &p->c[p->n++];
	const struct registry_collector *rc = registry_collector(reg, iface);
	memset(c, 0, sizeof(*c));
	c->interface = marple_strdup(iface);
	if (rc) {
		c->program = marple_strdup(rc->program);
		config_options(c, rc, rq);
	} else {	/* a group's word the registry does not know: named when not found */
		if (asprintf(&c->program, "marple-%s", iface) < 0)
			marple_fatal(EXIT_DATA, "out of memory");
		for (char *d = c->program; *d; d++)
			if (*d == '_')
				*d = '-';
	}
	return c;
}

static int refused(const char *name, int run)
{
	static const char *const always[] = { "-h", "--help", "--describe", "--every", NULL };
	static const char *const with_run[] = { "-p", "--pid", "-c", "--command", "--children", NULL };

	for (size_t i = 0; always[i]; i++)
		if (!strcmp(name, always[i]))
			return 1;
	for (size_t i = 0; run && with_run[i]; i++)
		if (!strcmp(name, with_run[i]))
			return 1;
	return 0;
}

/* INTERFACE:OPTS, a collector's own options, words separated by commas
 * (callstack:-F999,--timed  offcpu:--state=D,-m,1000), checked against its
 * registry options: a word that is not one, lacks its value or is set by
 * marple itself is refused, named. */
static int user_options(struct plan_collector *c, const struct registry_collector *rc, const char *opts,
			int run, char **why)
{
	char *copy = marple_strdup(opts), *words[256], reason[512] = "";
	size_t n = 0;

	for (char *w = copy, *comma; ; w = comma + 1) {
		if (n == sizeof(words) / sizeof(words[0])) {
			free(copy);
			return fail(why, "%s:%s: more than %zu words", c->interface, opts, n);
		}
		words[n++] = w;
		if (!(comma = strchr(w, ',')))
			break;
		*comma = 0;
	}
	for (size_t k = 0; k < n && !*reason; k++) {
		const char *x = words[k];
		if (x[0] != '-' || !x[1]) {
			snprintf(reason, sizeof(reason), "\"%s\" is not an option (the words after : are options and their values)", x);
			break;
		}
		size_t nlen = x[1] == '-' ? strcspn(x, "=") : 2;
		int has_value = x[1] == '-' ? x[nlen] == '=' : x[2] != 0;
		char name[128];
		snprintf(name, sizeof(name), "%.*s", (int)nlen, x);
		int takes = option_takes(rc->options, name);
		if (takes < 0)
			snprintf(reason, sizeof(reason), "%s is not an option of %s", name, rc->program);
		else if (refused(name, run))
			snprintf(reason, sizeof(reason), "%s is set by marple itself here", name);
		else if (takes && !has_value && k + 1 == n)
			snprintf(reason, sizeof(reason), "%s needs a value", name);
		else if (!takes && has_value)
			snprintf(reason, sizeof(reason), "%s takes no value", name);
		else if (takes && !has_value) {
			add_arg(c, x, strlen(x));
			x = words[++k];
		}
		if (!*reason)
			add_arg(c, x, strlen(x));
	}
	free(copy);
	if (*reason)
		return fail(why, "%s:%s: %s (see %s -h)", c->interface, opts, reason, rc->program);
	return 0;
}

static int is_group_name(const char *n)
{
	return *n && strspn(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == strlen(n);
}

/* Each interface of a list (a group's: "cpusched,perf-malloc"). */
static void add_list(struct plan *p, const struct registry *reg, const struct plan_request *rq, char *list)
{
	char *sv;

	for (char *w = strtok_r(list, ", \t", &sv); w; w = strtok_r(NULL, ", \t", &sv)) {
		char *iface = registry_interface(w, strlen(w));
		plan_add(p, iface, reg, rq);
		free(iface);
	}
}

/* A group of the config's [Aliases]: each of its interfaces. */
static int add_group(struct plan *p, const struct registry *reg, const struct plan_request *rq, const char *n,
		     char **why)
{
	char *list = is_group_name(n) ? config_value("Aliases", n) : NULL;
	int known = list && *list;

	if (known)
		add_list(p, reg, rq, list);
	free(list);
	return known ? 0 : fail(why, "unknown interface or group '%s' (see 'marple list')", n);
}

/* One name: an interface, INTERFACE:OPTS, or a group. */
static int add_name(struct plan *p, const struct registry *reg, const struct plan_request *rq, const char *n,
		    char **why)
{
	const char *colon = strchr(n, ':');
	char *iface = registry_interface(n, colon ? (size_t)(colon - n) : strlen(n));
	const struct registry_collector *rc = registry_collector(reg, iface);
	int rv = 0;

	if (colon && colon[1]) {
		if (!rc)
			rv = fail(why, "unknown interface '%.*s' (options after : go with an interface; see 'marple list')",
				  (int)(colon - n), n);
		else
			rv = user_options(plan_add(p, iface, reg, rq), rc, colon + 1, rq->run, why);
	} else if (rc) {
		plan_add(p, iface, reg, rq);
	} else {
		rv = add_group(p, reg, rq, n, why);
	}
	free(iface);
	return rv;
}

/* What the capture asks of every collector: --every, a command's children. */
static int check_collectors(struct plan *p, const struct registry *reg, const struct plan_request *rq, char **why)
{
	for (size_t i = 0; i < p->n; i++) {
		struct plan_collector *c = &p->c[i];
		const struct registry_collector *rc = registry_collector(reg, c->interface);
		if (rq->every && !(rc && rc->every))
			return fail(why, "--every: %s writes one section a run (no --every; see %s -h)", c->interface,
				    c->program);
		if (rq->run && !(rc && option_takes(rc->options, "--children") >= 0))
			return fail(why, "%s cannot follow a command and its children (no --children; see %s -h)",
				    c->interface, c->program);
		if (rq->include_self && rc && option_takes(rc->options, "--include-self") >= 0)
			add_arg(c, "--include-self", strlen("--include-self"));
	}
	return 0;
}

int plan_make(struct plan *p, const struct registry *reg, const struct plan_request *rq, char **why)
{
	memset(p, 0, sizeof(*p));
	*why = NULL;
	if (rq->nnames == 0 && rq->run) {	/* marple record's: the config's [General] record */
		char *list = config_value("General", "record");
		if (list)
			add_list(p, reg, rq, list);
		free(list);
	}
	if (rq->nnames == 0 && p->n == 0)
		return fail(why, "name at least one interface or group");
	for (size_t i = 0; i < rq->nnames; i++)
		if (add_name(p, reg, rq, rq->names[i], why) < 0)
			return -1;
	return check_collectors(p, reg, rq, why);
}
