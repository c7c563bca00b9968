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

void registry_read(struct registry *reg, const char *path)
{
	size_t n, dcap = 0, scap = 0;
	char **lines = lines_of_file(path, "the registry of programs", &n);

	memset(reg, 0, sizeof(*reg));
	for (size_t i = 0; i < n; i++) {
		const char *line = lines[i];
		char *kind = registry_field(line, "kind"), *prog = registry_field(line, "program");
		char *display = registry_field(line, "display"), *sections = registry_field(line, "sections");
		if (kind && prog && !strncmp(prog, "marple-", 7)) {
			if (!strcmp(kind, "renderer") && display && *display)
				add_display(reg, &dcap, line, prog, display);
			if (!strcmp(kind, "collector") && sections)
				add_sections(reg, &scap, sections);
		}
		free(kind), free(prog), free(display), free(sections), free(lines[i]);
	}
	free(lines);
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

int registry_reads(const struct registry_display *d, const char *datatype)
{
	return d && has_word(d->reads, datatype);
}
