/* registry.h — reading make's marple-registry: one line a program of
 * tab-separated KEY=VALUE fields, as each program's --describe prints it
 * (options.h OPTIONS_DESCRIBE lists the keys). */
#ifndef MARPLE_REGISTRY_H
#define MARPLE_REGISTRY_H

#include <stddef.h>

/* A field of a registry line ("KEY=VALUE" between tabs), copied; NULL if none. */
char *registry_field(const char *line, const char *key);

/* A renderer that is a display of the driver (its display= field). */
struct registry_display {
	char *program;		/* "flamegraph": marple-flamegraph */
	char *names;		/* ",flamegraph,fg,": its own name first, then aliases */
	char *name;		/* its own name ("flamegraph") */
	char *reads;		/* ",stack," */
	char *ext;		/* "svg" */
	char *default_for;	/* "stack", or "" */
	char *config;		/* "coloring:--colors,...", or "" */
	int takes_title;	/* its options include --title */
	int takes_user_threads;	/* ... and --user-threads-only */
	int takes_nolineno;	/* ... and --nolineno */
};

/* A section a collector writes, and the display it gets by default. */
struct registry_section {
	char *interface, *datatype, *display;
};

/* A collector: "marple collect NAME" runs its program (NAME's _ as -). */
struct registry_collector {
	char *interface;	/* "perf_malloc" */
	char *program;		/* "marple-perf-malloc" */
	char *options;		/* its options field: "-F|--frequency=HZ --timed ..." */
	char *config;		/* "frequency:-F,timed:--timed": [INTERFACE] KEY as OPTION */
	int every;		/* writes a section per --every interval (every=yes) */
};

struct registry {
	struct registry_collector *collectors;	/* in the registry's order */
	size_t ncollectors;
	struct registry_display *displays;	/* in the registry's order */
	size_t ndisplays;
	struct registry_section *sections;	/* every collector's, in order */
	size_t nsections;
};

/* 0 if line (len bytes) is a registry line: tab-separated KEY=VALUE fields
 * with program=marple-NAME and kind=, no control character, and the fields
 * the driver builds names and file names from (display, ext, reads,
 * default-for, sections, every) well formed: ext=../../x or
 * default-for=banana never reaches a plan.  Else -1, path:lineno and why
 * said (the program exits 1). */
int registry_check_line(const char *path, size_t lineno, const char *line, size_t len);
/* Reads the registry at path (each line checked as above): 0, or -1 with
 * a bad line said; exits 1 naming it if it cannot be read. */
int registry_read(struct registry *reg, const char *path);
/* The display answering to name (its own or an alias), or NULL. */
const struct registry_display *registry_display(const struct registry *reg, const char *name);
/* The first len bytes of name as the registry names an interface, copied:
 * perf-malloc is perf_malloc, memusage (the original MARPLE's name) memleak. */
char *registry_interface(const char *name, size_t len);
/* The collector of an interface name, or NULL. */
const struct registry_collector *registry_collector(const struct registry *reg, const char *interface);
/* Whether the display draws datatype ("stack", "timed", ...). */
int registry_reads(const struct registry_display *d, const char *datatype);

#endif
