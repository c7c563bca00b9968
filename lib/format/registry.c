/* registry.c — reading make's marple-registry (see registry.h). */
#include "registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lines.h"
#include "util.h"

char *registry_field(const char *line, const char *key)
{
	size_t k = strlen(key);
	for (const char *p = line; p; p = strchr(p, '\t'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, k) && p[k] == '=') {
			const char *end = strchr(p, '\t');
			return marple_strndup(p + k + 1, end ? (size_t)(end - p - k - 1) : strlen(p + k + 1));
		}
	return NULL;
}

/* ",a,b," from "a,b": a word is then found as ",word,". */
static char *commas(const char *list)
{
	size_t n = strlen(list);
	char *s = marple_malloc(n + 3);
	s[0] = ',';
	memcpy(s + 1, list, n);
	s[n + 1] = ',';
	s[n + 2] = 0;
	return s;
}

static int has_word(const char *commalist, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = strstr(commalist, w); p; p = strstr(p + 1, w))
		if (p > commalist && p[-1] == ',' && p[n] == ',')
			return 1;
	return 0;
}

/* s is one or more words of the characters chars, separated by sep (0: one word). */
static int words_of(const char *s, const char *chars, char sep)
{
	for (;;) {
		size_t n = strspn(s, chars);
		if (n == 0)
			return 0;
		s += n;
		if (!*s)
			return 1;
		if (!sep || *s != sep)
			return 0;
		s++;
	}
}

static int datatypes_of(const char *list)
{
	char *copy = marple_strdup(list), *sv;
	int ok = *list != 0;

	for (char *w = strtok_r(copy, ",", &sv); w && ok; w = strtok_r(NULL, ",", &sv))
		ok = !strcmp(w, "stack") || !strcmp(w, "event") || !strcmp(w, "point") || !strcmp(w, "timed");
	free(copy);
	return ok && list[strlen(list) - 1] != ',' && !strstr(list, ",,");
}

#define NAME_CHARS "abcdefghijklmnopqrstuvwxyz0123456789_-"

/* Why the value of field key is not one the registry may hold; NULL if it is. */
static const char *bad_value(const char *key, const char *v)
{
	if (!strcmp(key, "program"))
		return strncmp(v, "marple-", 7) || !words_of(v + 7, NAME_CHARS, 0) ? "not marple-NAME" : NULL;
	if (!strcmp(key, "kind"))
		return strcmp(v, "collector") && strcmp(v, "renderer") && strcmp(v, "filter") && strcmp(v, "helper") &&
		       strcmp(v, "supervisor") ? "not collector, renderer, filter, helper or supervisor" : NULL;
	if (!strcmp(key, "display"))
		return words_of(v, NAME_CHARS, ',') ? NULL : "not names (a-z, 0-9, _, -) separated by commas";
	if (!strcmp(key, "ext"))	/* a part of file names the driver makes: no / and no .. */
		return words_of(v, "abcdefghijklmnopqrstuvwxyz0123456789", '.') ? NULL : "not a file name extension (a-z, 0-9, inner dots)";
	if (!strcmp(key, "reads") || !strcmp(key, "default-for"))
		return datatypes_of(v) ? NULL : "not datatypes (stack, event, point, timed) separated by commas";
	if (!strcmp(key, "measures"))	/* a line of text marple list shows */
		return *v ? NULL : "empty";
	if (!strcmp(key, "every"))
		return strcmp(v, "yes") && strcmp(v, "no") ? "not yes or no" : NULL;
	if (!strcmp(key, "sections")) {
		char *copy = marple_strdup(v), *sv;
		const char *why = *v ? NULL : "empty";
		for (char *w = strtok_r(copy, ",", &sv); w && !why; w = strtok_r(NULL, ",", &sv)) {
			char *c1 = strchr(w, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
			if (!c2)
				why = "not INTERFACE:DATATYPE:DISPLAY items separated by commas";
			else {
				*c1 = *c2 = 0;
				if (!words_of(w, NAME_CHARS, 0) || !datatypes_of(c1 + 1) || strchr(c1 + 1, ',') ||
				    !words_of(c2 + 1, NAME_CHARS, 0))
					why = "an item not INTERFACE:DATATYPE:DISPLAY (names a-z, 0-9, _, -)";
			}
		}
		free(copy);
		return why;
	}
	return NULL;	/* options, config and what later programs add: free text */
}

int registry_check_line(const char *path, size_t lineno, const char *line, size_t len)
{
	const char *why = NULL;
	char key[32] = "";

	if (memchr(line, 0, len))
		why = "a NUL byte";
	for (const char *c = line; !why && c < line + len; c++)
		if ((unsigned char)*c < 0x20 && *c != '\t')
			why = "a control character";
	for (const char *f = line; !why && f; f = strchr(f, '\t'), f = f ? f + 1 : NULL) {
		size_t k = strspn(f, "abcdefghijklmnopqrstuvwxyz-");
		if (k == 0 || k >= sizeof(key) || f[k] != '=') {
			why = "a field not KEY=VALUE";
			break;
		}
		memcpy(key, f, k);
		key[k] = 0;
		char *v = registry_field(f, key);
		why = bad_value(key, v);
		free(v);
	}
	char *prog = why ? NULL : registry_field(line, "program"), *kind = why ? NULL : registry_field(line, "kind");
	if (!why && (!prog || !kind))
		why = "no program= or kind=";
	free(prog), free(kind);
	if (!why)
		return 0;
	marple_warn("%s:%zu: not a registry line: %s%s%s", path, lineno, why, key[0] ? " in " : "", key);
	return -1;
}

static void add_display(struct registry *reg, size_t *cap, const char *line, const char *prog, const char *names)
{
	char *reads = registry_field(line, "reads"), *ext = registry_field(line, "ext");
	char *dflt = registry_field(line, "default-for"), *config = registry_field(line, "config");
	char *options = registry_field(line, "options");
	char *opts = commas(options ? options : "");

	for (char *c = opts; *c; c++)	/* "-t|--title=TEXT --x" -> ",-t,--title=TEXT,--x," */
		if (*c == ' ' || *c == '|')
			*c = ',';
	reg->displays = marple_grow(reg->displays, cap, reg->ndisplays + 1, sizeof(*reg->displays));
	struct registry_display *d = &reg->displays[reg->ndisplays++];
	d->program = marple_strdup(prog + strlen("marple-"));
	d->names = commas(names);
	d->name = marple_strndup(names, strcspn(names, ","));
	d->reads = commas(reads ? reads : "");
	d->ext = ext ? ext : marple_strdup("");
	d->default_for = dflt ? dflt : marple_strdup("");
	d->config = config ? config : marple_strdup("");
	d->takes_title = strstr(opts, ",--title=") != NULL;
	d->takes_user_threads = strstr(opts, ",--user-threads-only,") != NULL;
	d->takes_nolineno = strstr(opts, ",--nolineno,") != NULL;
	free(reads), free(options), free(opts);
}

static void add_sections(struct registry *reg, size_t *cap, const char *sections)
{
	char *copy = marple_strdup(sections), *sv;

	for (char *s = strtok_r(copy, ",", &sv); s; s = strtok_r(NULL, ",", &sv)) {
		char *c1 = strchr(s, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		reg->sections = marple_grow(reg->sections, cap, reg->nsections + 1, sizeof(*reg->sections));
		reg->sections[reg->nsections++] = (struct registry_section){
			marple_strndup(s, (size_t)(c1 - s)), marple_strndup(c1 + 1, (size_t)(c2 - c1 - 1)),
			marple_strdup(c2 + 1) };
	}
	free(copy);
}

static void add_collector(struct registry *reg, size_t *cap, const char *line, const char *prog)
{
	char *every = registry_field(line, "every"), *options = registry_field(line, "options");
	char *config = registry_field(line, "config");

	reg->collectors = marple_grow(reg->collectors, cap, reg->ncollectors + 1, sizeof(*reg->collectors));
	struct registry_collector *c = &reg->collectors[reg->ncollectors++];
	c->program = marple_strdup(prog);
	c->interface = marple_strdup(prog + strlen("marple-"));
	for (char *p = c->interface; *p; p++)
		if (*p == '-')
			*p = '_';
	c->options = options ? options : marple_strdup("");
	c->config = config ? config : marple_strdup("");
	c->every = every && !strcmp(every, "yes");
	free(every);
}

int registry_read(struct registry *reg, const char *path)
{
	size_t n, dcap = 0, scap = 0, ccap = 0;
	char **lines = lines_of_file(path, "the registry of programs", &n);

	memset(reg, 0, sizeof(*reg));
	for (size_t i = 0; i < n; i++) {
		const char *line = lines[i];
		if (registry_check_line(path, i + 1, line, strlen(line)) < 0) {
			for (size_t j = i; j < n; j++)
				free(lines[j]);
			free(lines);
			return -1;
		}
		char *kind = registry_field(line, "kind"), *prog = registry_field(line, "program");
		char *display = registry_field(line, "display"), *sections = registry_field(line, "sections");
		if (kind && prog && !strncmp(prog, "marple-", 7)) {
			if (!strcmp(kind, "renderer") && display && *display)
				add_display(reg, &dcap, line, prog, display);
			if (!strcmp(kind, "collector"))
				add_collector(reg, &ccap, line, prog);
			if (!strcmp(kind, "collector") && sections)
				add_sections(reg, &scap, sections);
		}
		free(kind), free(prog), free(display), free(sections), free(lines[i]);
	}
	free(lines);
	return 0;
}

const struct registry_display *registry_display(const struct registry *reg, const char *name)
{
	if (!name || !*name || strchr(name, ','))
		return NULL;
	for (size_t i = 0; i < reg->ndisplays; i++)
		if (has_word(reg->displays[i].names, name))
			return &reg->displays[i];
	return NULL;
}

char *registry_interface(const char *name, size_t len)
{
	if (len == 11 && !strncmp(name, "perf-malloc", len))
		return marple_strdup("perf_malloc");
	if (len == 8 && !strncmp(name, "memusage", len))
		return marple_strdup("memleak");
	return marple_strndup(name, len);
}

const struct registry_collector *registry_collector(const struct registry *reg, const char *interface)
{
	for (size_t i = 0; i < reg->ncollectors; i++)
		if (!strcmp(reg->collectors[i].interface, interface))
			return &reg->collectors[i];
	return NULL;
}

int registry_reads(const struct registry_display *d, const char *datatype)
{
	return d && has_word(d->reads, datatype);
}
