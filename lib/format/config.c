/* config.c — marple's configuration, read once (see config.h): the built-in
 * defaults, then the files, every line checked against the registry. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lines.h"
#include "registry.h"
#include "util.h"

/* The original MARPLE's defaults (marple(1) documents each). */
static const char default_config[] =
	"[General]\ntime = 10\nrecord = callstack\n\n"
	"[callstack]\nfrequency = 99\ntimed = auto\n\n"
	"[g2]\ntrack = pid\n\n"
	"[stackplot]\ntop = 10\n\n"
	"[treemap]\ndepth = 25\n\n"
	"[flamegraph]\ncoloring =\n\n"
	"[heatmap]\nmode = latency\ncolor = linear\nrows =\n\n"
	"[Aliases]\nboot = memleak,cpusched,disklat\ncpu = callstack,offcpu,cpusched\n"
	"memory = mallocstacks,memleak,memtime\ndisk = disklat,diskblockrq\n";

/* What the registry says, as space-separated words: " a b c ". */
static struct {
	char *interfaces;	/* collectors: marple collect's names */
	char *sections;		/* every section interface a collector writes */
	char *displays;		/* each display's own name */
	char *aliases;		/* every name a display answers to */
	char *keys;		/* "DISPLAY:KEY" of the renderers' config keys */
	char *builtin;		/* [DisplayInterfaces] lines of each collector's own section */
} reg;

/* The setting lines, and the original MARPLE's keys that do nothing here. */
static char *settings, *ignored;
static int quiet_load;	/* the original's settings that do nothing are not named */

static void append(char **s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void append(char **s, const char *fmt, ...)
{
	va_list ap;
	size_t old = *s ? strlen(*s) : 0, cap = 0;

	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	*s = marple_grow(*s, &cap, old + (size_t)n + 1, 1);
	va_start(ap, fmt);
	vsnprintf(*s + old, (size_t)n + 1, fmt, ap);
	va_end(ap);
}

static int is_word(const char *list, const char *w)
{
	size_t n = strlen(w);
	if (n == 0)	/* "[]": no word (strstr would find "" everywhere, and past the end) */
		return 0;
	for (const char *p = list ? strstr(list, w) : NULL; p; p = strstr(p + 1, w))
		if (p[-1] == ' ' && p[n] == ' ')
			return 1;
	return 0;
}

/* 0, or -1 with a bad line said. */
static int read_registry(const char *path)
{
	size_t n;
	char **lines = lines_of_file(path, "the registry of programs", &n);

	reg.interfaces = strdup(" "), reg.sections = strdup(" "), reg.displays = strdup(" ");
	reg.aliases = strdup(" "), reg.keys = strdup(" "), reg.builtin = strdup("[DisplayInterfaces]\n");
	for (size_t i = 0; i < n; i++) {
		const char *line = lines[i];
		char none[1] = "";
		if (registry_check_line(path, i + 1, line, strlen(line)) < 0) {
			for (size_t j = i; j < n; j++)
				free(lines[j]);
			free(lines);
			return -1;
		}
		char *kind = registry_field(line, "kind"), *prog = registry_field(line, "program");
		char *sections = registry_field(line, "sections"), *display = registry_field(line, "display"), *config = registry_field(line, "config");
		if (kind && prog && !strcmp(kind, "collector") && !strncmp(prog, "marple-", 7)) {
			for (char *c = prog; *c; c++)
				if (*c == '-')
					*c = '_';
			append(&reg.interfaces, "%s ", prog + 7);
			for (char *sv, *s = strtok_r(sections ? sections : none, ",", &sv); s; s = strtok_r(NULL, ",", &sv)) {
				char *iface = s, *c1 = strchr(s, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
				if (!c2)
					continue;
				*c1 = 0;
				append(&reg.sections, "%s ", iface);
				if (s == sections)	/* the collector's own section */
					append(&reg.builtin, "%s = %s\n", iface, c2 + 1);
			}
		}
		if (kind && display && !strcmp(kind, "renderer")) {
			char *first = NULL;
			for (char *sv, *d = strtok_r(display, ",", &sv); d; d = strtok_r(NULL, ",", &sv)) {
				if (!first) {
					first = d;
					append(&reg.displays, "%s ", d);
				}
				append(&reg.aliases, "%s ", d);
			}
			for (char *sv, *c = strtok_r(config ? config : none, ",", &sv); first && c; c = strtok_r(NULL, ",", &sv))
				append(&reg.keys, "%s:%.*s ", first, (int)strcspn(c, ":"), c);
		}
		free(kind), free(prog), free(sections), free(display), free(config), free(lines[i]);
	}
	free(lines);
	return 0;
}

static const char *config_name, *registry_path;
static unsigned long config_line;

/* config_load's status: 0, or what the program exits with. */
static int load_status;

/* A bad config line: said, -1, and the program exits 2.  One of the
 * built-in defaults can only be refused for what the registry lacks (a
 * collector they name): that is the registry's fault, named, exit 1. */
static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad(const char *fmt, ...)
{
	va_list ap;
	int builtin = !strcmp(config_name, "built-in");

	if (builtin)
		fprintf(stderr, "%s: %s: the registry lacks what the built-in defaults name (their line %lu): ",
			marple_progname, registry_path, config_line);
	else
		fprintf(stderr, "%s: %s:%lu: ", marple_progname, config_name, config_line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	load_status = builtin ? EXIT_DATA : EXIT_USAGE;
	return -1;
}

/* A whole number at least lo, as the config takes them (nine digits at most). */
static int is_count(const char *v, long lo)
{
	size_t n = strlen(v);
	return n > 0 && n < 10 && strspn(v, "0123456789") == n && atol(v) >= lo;
}

static int is_one_of(const char *v, const char *list)
{
	char words[256];
	snprintf(words, sizeof(words), " %s ", list);
	return *v && !strchr(v, ' ') && is_word(words, v);
}

static int ignore(const char *s, const char *k)
{
	char item[512];
	snprintf(item, sizeof(item), "[%s] %s", s, k);
	if (!ignored || !strstr(ignored, item))
		append(&ignored, "%s%s", ignored ? ", " : "", item);
	return 0;
}

/* Whether every word of a group (split at commas) is an interface: 0, or
 * -1 (bad). */
static int check_group(const char *k, const char *v)
{
	char *copy = marple_strdup(v);
	int rc = 0;
	for (char *sv, *w = strtok_r(copy, ",", &sv); w && !rc; w = strtok_r(NULL, ",", &sv)) {
		w += strspn(w, " \t");
		w[strcspn(w, " \t")] = 0;
		if (!is_word(reg.interfaces, w) && !is_word(reg.sections, w) && strcmp(w, "perf-malloc"))
			rc = bad("group \"%s\": unknown interface \"%s\"", k, w);
	}
	free(copy);
	return rc;
}

/* One setting: 0, or -1 (bad). */
static int check(const char *s, const char *k, const char *v)
{
	uint64_t ns;

	if (!strcmp(s, "General")) {
		if (!strcmp(k, "time")) {
			if (marple_parse_duration_ns(v, &ns) < 0 || ns == 0)
				return bad("time must be a duration above 0 (10, 500ms, 2m, 1d), not \"%s\"", v);
			return 0;
		}
		if (!strcmp(k, "frequency")) {
			if (!is_count(v, 1))
				return bad("frequency must be a whole number of Hz");
			return 0;
		}
		if (!strcmp(k, "record")) {	/* marple record's interfaces, a group */
			if (!*v)
				return bad("record names no interface");
			return check_group(k, v);
		}
		if (is_one_of(k, "system_wide warnings top_stacks"))
			return ignore(s, k);
	} else if (!strcmp(s, "DisplayInterfaces")) {
		if (!is_word(reg.interfaces, k) && !is_word(reg.sections, k) && strcmp(k, "perf-malloc"))
			return bad("unknown interface \"%s\" (known:%.*s)", k, (int)strlen(reg.interfaces) - 1, reg.interfaces);
		if (!*v || !is_word(reg.aliases, v))
			return bad("unknown display \"%s\" for %s (known:%.*s)", v, k, (int)strlen(reg.displays) - 1, reg.displays);
		return 0;
	} else if (!strcmp(s, "Aliases")) {
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", k[0]) ||
		    strspn(k, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != strlen(k))
			return bad("group name \"%s\" must be letters, digits, _ or -", k);
		if (is_word(reg.interfaces, k))
			return bad("group \"%s\" has the name of an interface", k);
		if (!*v)
			return bad("group \"%s\" is empty", k);
		return check_group(k, v);
	} else if (!strcmp(s, "callstack")) {
		if (!strcmp(k, "frequency")) {
			if (!is_count(v, 1))
				return bad("frequency must be a whole number of Hz");
			return 0;
		}
		if (!strcmp(k, "timed")) {
			if (!is_one_of(v, "auto yes no"))
				return bad("timed must be auto, yes or no");
			return 0;
		}
	} else if (!strcmp(s, "g2")) {
		if (!strcmp(k, "track")) {
			if (!is_one_of(v, "pid cpu"))
				return bad("track must be pid or cpu");
			return 0;
		}
		if (!strcmp(k, "path"))
			return ignore(s, k);
	} else if (!strcmp(s, "stackplot") && !strcmp(k, "top")) {
		if (!is_count(v, 1))
			return bad("top must be a whole number above 0");
		return 0;
	} else if (!strcmp(s, "treemap") && !strcmp(k, "depth")) {
		if (!is_count(v, 1))
			return bad("depth must be a whole number above 0");
		return 0;
	} else if (!strcmp(s, "flamegraph") && !strcmp(k, "coloring")) {
		if (*v && !is_one_of(v, "hot mem io wakeup chain java js perl red green blue aqua yellow purple orange"))
			return bad("unknown flame graph coloring \"%s\"", v);
		return 0;
	} else if (!strcmp(s, "heatmap")) {
		if (!strcmp(k, "mode")) {
			if (!is_one_of(v, "latency offset"))
				return bad("mode must be latency or offset");
			return 0;
		}
		if (!strcmp(k, "color")) {
			if (!is_one_of(v, "linear rank"))
				return bad("color must be linear or rank");
			return 0;
		}
		if (!strcmp(k, "rows")) {
			if (*v && !is_count(v, 1))
				return bad("rows must be a whole number above 0, or empty");
			return 0;
		}
		if (is_one_of(k, "figure_size scale y_res normalised"))
			return ignore(s, k);
	} else if (!strcmp(s, "Aggregate")) {
		return ignore(s, k);
	}
	/* a renderer's own key, from the registry (its config= field) */
	char dk[512];
	snprintf(dk, sizeof(dk), "%s:%s", s, k);
	if (!strchr(dk, ' ') && is_word(reg.keys, dk))
		return 0;
	return bad("unknown key \"%s\" in [%s]", k, s);
}

static char *trim(char *s)
{
	s += strspn(s, " \t");
	size_t n = strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = 0;
	return s;
}

/* One line of a config: a comment, a [section], or key = value (or key: value). */
/* One line of a config text: 0, or -1 (bad). */
static int config_line_read(char *line, size_t len, char **section)
{
	if (len && line[len - 1] == '\r')
		line[--len] = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)line[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return bad("control character in the line (NUL, escape, ...)");
	}
	char *p = line + strspn(line, " \t");
	if (!*p || *p == '#' || *p == ';')
		return 0;
	if (*p == '[') {
		char *close = strchr(p, ']');
		if (!close || close[strspn(close + 1, " \t") + 1] != 0)
			return bad("bad section line (want [Section])");
		*close = 0;
		char *sec = p + 1;
		if (!is_one_of(sec, "General DisplayInterfaces Aliases callstack Aggregate") && !is_word(reg.displays, sec))
			return bad("unknown section [%s]", sec);
		free(*section);
		*section = strdup(sec);
		return 0;
	}
	size_t at = strcspn(line, "=:");
	if (!line[at])
		return bad("not a [section] or key = value line");
	line[at] = 0;
	char *k = trim(line), *v = trim(line + at + 1);
	if (!*section)
		return bad("\"%s\" is outside any [section]", k);
	if (!*k)
		return bad("empty key");
	if (check(*section, k, v) < 0)
		return -1;
	char *key = NULL;
	if (!strcmp(*section, "DisplayInterfaces"))	/* the original's names */
		k = key = registry_interface(k, strlen(k));
	if (strchr(k, '\t') || strchr(v, '\t')) {
		free(key);
		return bad("a tab inside a key or value");
	}
	char *value = strdup(v);
	if (!strcmp(*section, "Aliases")) {	/* "a , b" as "a,b" */
		char *w = value;
		for (char *r = value; *r; r++)
			if (*r == ',') {
				while (w > value && (w[-1] == ' ' || w[-1] == '\t'))
					w--;
				*w++ = ',';
				r += strspn(r + 1, " \t");
			} else
				*w++ = *r;
		*w = 0;
	}
	append(&settings, "%s\t%s\t%s\n", *section, k, value);
	/* the original's [General] frequency was the sampling rate: callstack's */
	if (!strcmp(*section, "General") && !strcmp(k, "frequency"))
		append(&settings, "callstack\tfrequency\t%s\n", value);
	free(value);
	free(key);
	return 0;
}

/* One config text, named name (a file, or "built-in"): 0, or -1 at its
 * first bad line. */
static int config_read(const char *name, FILE *f)
{
	char *line = NULL, *section = NULL;
	size_t cap = 0;
	ssize_t len;
	int rc = 0;

	config_name = name, config_line = 0, ignored = NULL;
	while (rc == 0 && (len = getline(&line, &cap, f)) > 0) {
		config_line++;
		if (line[len - 1] == '\n')
			line[--len] = 0;
		rc = config_line_read(line, (size_t)len, &section);
	}
	if (rc == 0 && ignored && !quiet_load)
		marple_warn("%s: ignored (settings of the original MARPLE that do nothing here): %s", name, ignored);
	free(ignored), free(line), free(section);
	return rc;
}

/* The config files, lowest precedence first; $MARPLE_CONFIG: only it. */
static size_t files_to_read(char **files)
{
	const char *only = getenv("MARPLE_CONFIG"), *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	size_t n = 0;

	if (only && *only) {
		files[n++] = strdup(only);
		return n;
	}
	if (access("/etc/marple/config", F_OK) == 0)
		files[n++] = strdup("/etc/marple/config");
	if ((xdg && *xdg) || (home && *home)) {
		char *user = marple_asprintf(xdg && *xdg ? "%s/marple/config" : "%s/.config/marple/config",
					     xdg && *xdg ? xdg : home);
		if (access(user, F_OK) == 0)
			files[n++] = user;
		else
			free(user);
	}
	return n;
}

/* marple config's page: the files read, then each section's keys once, in
 * the order first set, with the value that won. */
static void print_effective(FILE *out, char **files, size_t nfiles)
{
	fprintf(out, "# marple: effective configuration\n");
	for (size_t i = 0; i < nfiles; i++)
		fprintf(out, "# read: %s\n", files[i]);
	if (!nfiles)
		fprintf(out, "# read: no config file (built-in defaults)\n");
	char *seen = strdup("\n");
	int sections = 0;
	for (char *l = settings; l && *l; l = strchr(l, '\n') + 1) {
		size_t slen = strcspn(l, "\t");
		char sec[512];
		snprintf(sec, sizeof(sec), "\n%.*s\n", (int)slen, l);
		if (strstr(seen, sec))
			continue;
		append(&seen, "%s", sec + 1);
		fprintf(out, "%s[%.*s]\n", sections++ ? "\n" : "", (int)slen, l);
		char *keys = strdup("\n");
		for (char *m = l; *m; m = strchr(m, '\n') + 1) {
			size_t ms = strcspn(m, "\t"), mk = strcspn(m + ms + 1, "\t");
			if (ms != slen || strncmp(m, l, slen))
				continue;
			char key[512];
			snprintf(key, sizeof(key), "\n%.*s\n", (int)mk, m + ms + 1);
			if (strstr(keys, key))
				continue;
			append(&keys, "%s", key + 1);
			const char *value = "";	/* the last setting of the key wins */
			size_t vlen = 0;
			for (char *q = m; *q; q = strchr(q, '\n') + 1) {
				size_t qs = strcspn(q, "\t"), qk = strcspn(q + qs + 1, "\t");
				if (qs == slen && !strncmp(q, l, slen) && qk == mk && !strncmp(q + qs + 1, m + ms + 1, mk))
					value = q + qs + 1 + qk + 1, vlen = strcspn(value, "\n");
			}
			fprintf(out, "%.*s = %.*s\n", (int)mk, m + ms + 1, (int)vlen, value);
		}
		free(keys);
	}
	free(seen);
}


static char *files_read[2];
static size_t nfiles_read;

int config_load(const char *path, int quiet)
{
	quiet_load = quiet;
	registry_path = path;
	load_status = 0;
	if (read_registry(path) < 0)
		return EXIT_DATA;
	FILE *builtin = fmemopen((void *)default_config, sizeof(default_config) - 1, "r");
	FILE *displays = fmemopen(reg.builtin, strlen(reg.builtin), "r");
	int rc = config_read("built-in", builtin);
	if (rc == 0)
		rc = config_read("built-in", displays);
	fclose(displays), fclose(builtin);
	if (rc < 0)
		return load_status;
	nfiles_read = files_to_read(files_read);
	for (size_t i = 0; i < nfiles_read; i++) {
		FILE *f = fopen(files_read[i], "r");
		if (!f) {
			marple_warn("config: cannot read %s: %s", files_read[i], strerror(errno));
			return EXIT_DATA;
		}
		rc = config_read(files_read[i], f);
		fclose(f);
		if (rc < 0)
			return load_status;
	}
	return 0;
}

const char *config_settings(void)
{
	return settings ? settings : "";
}

char *config_value(const char *section, const char *key)
{
	size_t ns = strlen(section), nk = strlen(key);
	const char *value = NULL;

	for (const char *l = config_settings(); *l; l = strchr(l, '\n') + 1)
		if (!strncmp(l, section, ns) && l[ns] == '\t' && !strncmp(l + ns + 1, key, nk) && l[ns + 1 + nk] == '\t')
			value = l + ns + nk + 2;
	return value ? marple_strndup(value, strcspn(value, "\n")) : NULL;
}

void config_print(FILE *f)
{
	print_effective(f, files_read, nfiles_read);
}
