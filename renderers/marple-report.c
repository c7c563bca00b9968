/* marple-report — one HTML page showing every section of a capture.
 *
 * Reads a marple stream (the capture) and a list of files already made from
 * its sections (pictures, CPEL files, ...), and writes index.html: the
 * capture's metadata, a table of its sections, and for each section its
 * details, its pictures inline (iframes, so interactive SVG and HTML keep
 * working) and links to the other files.  Every name from the data is escaped;
 * the page uses no network.  The `marple display` driver calls it.
 *
 *   $ marple-report -o out/index.html cap.marple 0:picture:00-callstack-flamegraph.svg \
 *         1:link:01-cpusched-g2.cpel 1:picture:01-cpusched-plot.html
 *   $ marple-report --list cap.marple
 *   0	stack	callstack
 *   1	event	cpusched
 *
 * Exit status: 0 ok, 1 bad input or write error, 2 usage error.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lines.h"
#include "options.h"
#include "registry.h"
#include "stackfilter.h"
#include "stackunits.h"
#include "stream.h"
#include "timed.h"
#include "util.h"
#include "xml.h"

struct section {
	char *interface, *datatype, *host, *kernel, *units, *ended;
	int64_t start_ns, wall_ns, end_ns;
	uint64_t records;
	int64_t lost, dropped;
	int trailer;
	enum timed_role timed;
	int64_t stack_errors;	/* stacks not stored or not read (trailer's stack_errors) */
	double incomplete;	/* share of user-stack weight cut short; < 0: not said */
	size_t messages;	/* lines the collector said (trailer's messages) */
	int off_cpu;		/* an off-CPU stack section (its header's "cpu":"off") */
	int lines;		/* a stack section with frames "NAME (FILE:LINE)" */
	char *weight_unit;
	struct stackfilter_count kthreads;	/* off_cpu: its kernel threads' stacks */
	char *said;		/* those lines, joined by '\n' */
	double weight;		/* a stack section's records' */
	struct wakers *wakers;	/* off-wake stacks (a "--" frame): who ended the waits */
	json_t *locks;		/* marple-lock's trailer "locks": the locks waited on longest */
};

/* The waker view: an off-wake stack's last frame names what ended the wait
 * (a thread, [interrupt], a lock's [timed out]...); weight by that name. */
struct wakers {
	char **names;
	double *weight;
	size_t n, cap;
	double with;		/* the weight of off-wake records */
};

/* Of a section's user stacks (by weight), a share above this cut short is
 * no complete section: the collectors warn at the same share. */
#define INCOMPLETE_SHARE 0.10

struct artifact {
	long index;
	char kind;		/* 'p'icture, 'l'ink, 'e'rror, 'n'ote */
	const char *text;	/* file name relative to the page, or the message */
};

static struct {
	const char *out, *title, *source;
	int list;
	uint64_t max_sections;
} opt = { .max_sections = 1000 };

/* The sections listed (all of them with --list, else the first
 * --max-sections), and what the page says of the whole capture. */
static struct section *secs;
static size_t nsecs, capsecs;
static struct {
	uint64_t sections, records, problems;
	int64_t first_wall;
	double longest;
	char **hosts, **kernels;	/* distinct, in order of appearance */
	size_t nhosts, nkernels, caphosts, capkernels;
} all = { .first_wall = -1 };
static unsigned long bad_lines;

/* --plan (see there) */
static struct {
	int on;
	const char *registry, *config, *single;
	char *entries;		/* the -e lists, joined by ',' */
	const char **flags;	/* display flags as typed (-fg, --treemap) */
	size_t nflags, capflags;
	uint64_t fleet;		/* captures joined (0: not a fleet) */
} plan;

enum { OPT_TITLE = 256, OPT_SOURCE, OPT_MAX_SECTIONS, OPT_PLAN, OPT_REGISTRY, OPT_CONFIG, OPT_DISPLAY, OPT_SINGLE, OPT_FLEET };
static const struct options_entry options[] = {
	{ 'o', "output", "FILE", "write the page to FILE (default stdout); the files\n"
				 "named by the operands are relative to its folder" },
	{ OPT_TITLE, "title", "TITLE", "the page's title (default: marple report: NAME)" },
	{ 't', "", "TITLE", NULL },	/* the old spelling: -t is a thread's */
	{ OPT_SOURCE, "source", "NAME", "the capture's name to show (default: CAPTURE)" },
	{ OPT_MAX_SECTIONS, "max-sections", "N", "list the first N sections on the page (default 1000;\n"
						 "the others are counted, and said to be left out)" },
	{ 'l', "list", NULL, "print 'index<TAB>datatype<TAB>interface<TAB>records<TAB>\n"
			     "seconds<TAB>timed<TAB>title<TAB>host' per section (the\n"
			     "interface reduced to [A-Za-z0-9_.-]; seconds from\n"
			     "start_ns to end_ns or '-'; timed 'stacks', 'samples' or\n"
			     "'-'; the title 'INTERFACE on HOST'), and stop" },
	{ OPT_PLAN, "plan", NULL, "print what marple display draws, one line a picture\n"
				  "(marple-report(1), PLAN), and stop; without CAPTURE,\n"
				  "check the options and stop" },
	{ OPT_REGISTRY, "registry", "FILE", "--plan: what the programs are (make's marple-registry)" },
	{ OPT_CONFIG, "config", "FILE", "--plan: the configuration, as marple-config prints it" },
	{ 'e', "entry", "LIST", "--plan: only these sections (numbers or interfaces,\n"
				"comma-separated; repeatable)" },
	{ OPT_DISPLAY, "display", "FLAG", "--plan: draw its datatype with the display FLAG names\n"
					  "(-fg, --treemap, ...; repeatable)" },
	{ OPT_SINGLE, "single", "FILE", "--plan: the one picture FILE is, by its extension" },
	{ OPT_FLEET, "fleet", "N", "--plan: the capture joins N hosts' captures: merge\n"
				   "each collector's stacks over the hosts" },
	{ 'n', "name", "NAME", "call this program NAME in messages" },
	OPTIONS_DESCRIBE("kind=renderer\text=html"),
	OPTIONS_HELP,
	{ 0 }
};

static const struct options_help help = {
	.synopsis = "[-o FILE] [-t TITLE] [--source NAME] CAPTURE [INDEX:KIND:FILE]...\n"
	            "--list CAPTURE",
	.about = "Write one self-contained HTML report of a capture's sections.\n",
	.after = "Operands after CAPTURE: INDEX:picture:FILE (shown inline), INDEX:link:FILE\n"
	         "(linked), INDEX:error:MESSAGE (shown as a failure of that section),\n"
	         "INDEX:note:TEXT (a remark).  INDEX all: of the whole capture, shown first\n"
	         "(marple display of several hosts: the merged flame graphs).\n"
	         "See marple-report(1).\n",
};

static char *dup_str(json_t *obj, const char *key)
{
	const char *s = obj ? stream_header_str(obj, key, NULL) : NULL;
	return s ? marple_strdup(s) : NULL;
}

/* What a stack collector's trailer says of its stacks: the errors that lost or
 * cut stacks, and the share of user-stack weight that ends short. */
static void trailer_stacks(struct section *s, json_t *t)
{
	static const char *const errors[] = { "map_full", "stack_map_full", "stack_collisions", "user_stack_errors",
					      "kernel_stack_errors", "ringbuf_full" };
	json_t *e = json_object_get(t, "stack_errors");

	s->incomplete = -1;
	json_t *m = json_object_get(t, "messages");
	s->messages = json_array_size(m);
	for (size_t i = 0; i < s->messages; i++) {
		const char *line = json_string_value(json_array_get(m, i));
		if (!line)
			continue;
		size_t old = s->said ? strlen(s->said) : 0;
		s->said = realloc(s->said, old + strlen(line) + 2);
		if (!s->said)
			marple_fatal(EXIT_DATA, "out of memory");
		sprintf(s->said + old, "%s%s", old ? "\n" : "", line);
	}
	if (!json_is_object(e))
		return;
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		s->stack_errors += stream_header_int(e, errors[i], 0);
	int64_t w = stream_header_int(e, "user_weight", 0), cut = stream_header_int(e, "incomplete_user_weight", 0);
	if (w > 0 && cut >= 0)
		s->incomplete = (double)cut / (double)w;
}

/* Whether a section is less than whole: cut off, events lost, samples
 * dropped, stacks lost or too many of them short. */
static int section_trouble(const struct section *s)
{
	return !s->trailer || s->lost || s->dropped || s->stack_errors || s->incomplete > INCOMPLETE_SHARE;
}

static void free_section(struct section *s)
{
	free(s->interface);
	free(s->datatype);
	free(s->host);
	free(s->kernel);
	free(s->units);
	free(s->ended);
	free(s->said);
	free(s->weight_unit);
	if (s->wakers) {
		for (size_t i = 0; i < s->wakers->n; i++)
			free(s->wakers->names[i]);
		free(s->wakers->names);
		free(s->wakers->weight);
		free(s->wakers);
	}
	json_decref(s->locks);
}

/* v into the distinct values *list (n of them) unless it is there already. */
static void add_distinct(char ***list, size_t *n, size_t *cap, const char *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*list)[i], v))
			return;
	*list = marple_grow(*list, cap, *n + 1, sizeof(**list));
	(*list)[(*n)++] = marple_strdup(v);
}

/* A section read to its end: into the capture's totals; kept for the page
 * while fewer than --max-sections are (always with --list). */
static void section_done(struct section *s)
{
	all.sections++;
	all.records += s->records;
	if (section_trouble(s))
		all.problems++;
	if (s->wall_ns > 0 && (all.first_wall < 0 || s->wall_ns < all.first_wall))
		all.first_wall = s->wall_ns;
	if (s->end_ns >= 0 && s->start_ns >= 0 && s->end_ns > s->start_ns &&
	    (double)(s->end_ns - s->start_ns) / 1e9 > all.longest)
		all.longest = (double)(s->end_ns - s->start_ns) / 1e9;
	add_distinct(&all.hosts, &all.nhosts, &all.caphosts, s->host);
	add_distinct(&all.kernels, &all.nkernels, &all.capkernels, s->kernel);
	if (opt.list || plan.on || nsecs < opt.max_sections) {
		secs = marple_grow(secs, &capsecs, nsecs + 1, sizeof(*secs));
		secs[nsecs++] = *s;
	} else {
		free_section(s);
	}
}

/* An off-wake record (frames;--;waker frames leaf first;its name) into
 * sec's waker view. */
static void waker_add(struct section *sec, const struct stack_rec *s)
{
	size_t i = 1;
	struct wakers *w = sec->wakers;

	while (i < s->nframes && !(s->frames[i].len == 2 && !memcmp(s->frames[i].s, "--", 2)))
		i++;
	if (i + 1 >= s->nframes)
		return;
	if (!w)
		w = sec->wakers = marple_calloc(1, sizeof(*w));
	const struct mstr *name = &s->frames[s->nframes - 1];
	for (i = 0; i < w->n; i++)
		if (strlen(w->names[i]) == name->len && !memcmp(w->names[i], name->s, name->len))
			break;
	if (i == w->n) {
		size_t cap = w->cap;
		w->names = marple_grow(w->names, &w->cap, w->n + 1, sizeof(*w->names));
		w->weight = marple_grow(w->weight, &cap, w->n + 1, sizeof(*w->weight));
		w->names[w->n] = marple_strndup(name->s, name->len);
		w->weight[w->n++] = 0;
	}
	w->weight[i] += (double)s->weight;
	w->with += (double)s->weight;
}

/* What the report's pictures of a stack section leave out, from its records. */
static void section_stack(struct section *sec, const struct stack_rec *s)
{
	sec->weight += (double)s->weight;
	waker_add(sec, s);
	if (sec->off_cpu && stackfilter_kernel_thread(s->frames, s->nframes))
		stackfilter_count_add(&sec->kthreads, s->frames[0], (double)s->weight);
	for (size_t i = s->nframes; i-- > 0 && !sec->lines;)
		sec->lines = stackfilter_line_at(s->frames[i].s, s->frames[i].len) != 0;
}

static void read_capture(const char *path)
{
	FILE *f = marple_open_input(path);
	struct stream_reader *r = stream_reader_new(f, marple_input_name(path));
	enum stream_item it;
	struct section sec, *cur = NULL;

	while ((it = stream_reader_next(r)) != STREAM_EOF) {
		if (it == STREAM_ERROR) {
			if (bad_lines++ < 5)
				stream_reader_warn(r);
			continue;
		}
		if (it == STREAM_HEADER) {
			json_t *h = stream_reader_header(r);
			if (cur)
				section_done(cur);
			cur = &sec;
			memset(cur, 0, sizeof(*cur));
			cur->interface = dup_str(h, "interface");
			cur->datatype = marple_strdup(stream_datatype_name(stream_reader_datatype(r)));
			cur->host = dup_str(h, "host");
			cur->kernel = dup_str(h, "kernel");
			cur->start_ns = stream_header_int(h, "start_ns", -1);
			cur->wall_ns = stream_header_int(h, "wall_ns", -1);
			cur->end_ns = -1;
			cur->timed = timed_role(h);
			json_t *u = json_object_get(h, "units");
			if (json_is_object(u) && json_object_size(u))
				cur->units = json_dumps(u, JSON_COMPACT | JSON_PRESERVE_ORDER);
			cur->off_cpu = stream_reader_datatype(r) == DATATYPE_STACK &&
				       !strcmp(stream_header_str(h, "cpu", ""), "off");
			cur->weight_unit = marple_strdup(stackunits_of(h));
		} else if (it == STREAM_RECORD && cur && stream_reader_datatype(r) == DATATYPE_STACK) {
			section_stack(cur, stream_reader_stack(r));
		} else if (it == STREAM_TRAILER && cur) {
			json_t *t = stream_reader_trailer(r);
			cur->trailer = 1;
			cur->end_ns = stream_header_int(t, "end_ns", -1);
			cur->lost = stream_header_int(t, "lost", 0);
			cur->dropped = stream_header_int(t, "dropped", 0);
			cur->ended = dup_str(t, "ended");
			trailer_stacks(cur, t);
			if (json_is_array(json_object_get(t, "locks")))
				cur->locks = json_incref(json_object_get(t, "locks"));
		}
		if (cur)
			cur->records = stream_reader_records(r);
	}
	if (cur)
		section_done(cur);
	if (bad_lines > 5)
		marple_warn_at(marple_input_name(path), 0, "%lu malformed lines in all (first five shown)", bad_lines);
	const char *why = stream_reader_unusable(r);	/* marple-format(5): no report of it */
	if (why) {
		marple_warn_at(marple_input_name(path), 0, "%s", why);
		exit(EXIT_DATA);
	}
	stream_reader_free(r);
	if (f != stdin)
		fclose(f);
	if (nsecs == 0)
		marple_fatal(EXIT_DATA, "%s: no marple section in input", marple_input_name(path));
}

/* A section's interface as a file name's part: [A-Za-z0-9_.-], at most 40
 * bytes, no leading '.'; "section" if it has none. */
static char *section_name(size_t i)
{
	const char *s = secs[i].interface ? secs[i].interface : "";
	size_t n = 0;
	char *out = marple_malloc(48);

	for (; s[n] && n < 40; n++) {
		char c = s[n];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			 c == '_' || c == '-' || c == '.';
		out[n] = ok && !(n == 0 && c == '.') ? c : '_';
	}
	strcpy(out + n, n ? "" : "section");
	return out;
}

/* A title for the picture: "INTERFACE on HOST", control bytes as '?'. */
static char *section_title(size_t i)
{
	const char *iface = secs[i].interface ? secs[i].interface : "section";
	char *t;

	if (asprintf(&t, "%s%s%s", iface, secs[i].host ? " on " : "", secs[i].host ? secs[i].host : "") < 0)
		marple_fatal(EXIT_DATA, "out of memory");
	for (char *c = t; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return t;
}

/* A samples section belongs to the timed stack section just before it. */
static enum timed_role section_role(size_t i)
{
	enum timed_role role = secs[i].timed;
	if (role == TIMED_SAMPLES && (i == 0 || secs[i - 1].timed != TIMED_STACKS))
		role = TIMED_NONE;
	return role;
}

static void list_sections(void)
{
	for (size_t i = 0; i < nsecs; i++) {
		char *name = section_name(i), *title = section_title(i);
		enum timed_role role = section_role(i);
		printf("%zu\t%s\t%s\t%llu", i, secs[i].datatype, name, (unsigned long long)secs[i].records);
		if (secs[i].start_ns >= 0 && secs[i].end_ns > secs[i].start_ns)
			printf("\t%.3f", (double)(secs[i].end_ns - secs[i].start_ns) / 1e9);
		else
			fputs("\t-", stdout);
		fputs(role == TIMED_STACKS ? "\tstacks" : role == TIMED_SAMPLES ? "\tsamples" : "\t-", stdout);
		printf("\t%s\t", title);
		for (const char *h = secs[i].host ? secs[i].host : ""; *h; h++)
			putchar((unsigned char)*h < 0x20 || *h == 0x7f ? '?' : *h);
		putchar('\n');
		free(name), free(title);
	}
}

/* ---------------------------------------------------------------- --plan
 * What `marple display` draws, one line a picture (marple-report(1), PLAN):
 * the displays come from the registry, the config and the display flags, the
 * sections from the capture; the driver runs the lines as they are. */


static struct registry reg;
static char **cfg_lines;	/* "SECTION\tKEY\tVALUE", later ones winning */
static size_t ncfg;

static const char *const plan_types[] = { "stack", "event", "point" };
static const struct registry_display *chosen[3];	/* by a flag, per datatype */

static int type_slot(const char *datatype)
{
	for (int t = 0; t < 3; t++)
		if (!strcmp(datatype, plan_types[t]))
			return t;
	return -1;
}

/* The effective value of [section] key, NULL if unset. */
static const char *cfg_get(const char *section, const char *key)
{
	size_t ls = strlen(section), lk = strlen(key);
	for (size_t i = ncfg; i-- > 0;) {
		const char *l = cfg_lines[i];
		if (!strncmp(l, section, ls) && l[ls] == '\t' && !strncmp(l + ls + 1, key, lk) && l[ls + 1 + lk] == '\t')
			return l + ls + lk + 2;
	}
	return NULL;
}

static int is_page(const struct registry_display *d)
{
	return !strcmp(d->ext, "svg") || !strcmp(d->ext, "html");
}

/* "-a or -b" of the displays drawing datatype; with page, the first making a page. */
static const struct registry_display *reading(const char *datatype, int page, char *list, size_t n)
{
	if (list)
		*list = 0;
	for (size_t i = 0; i < reg.ndisplays; i++) {
		const struct registry_display *d = &reg.displays[i];
		if (!registry_reads(d, datatype) || (page && !is_page(d)))
			continue;
		if (!list)
			return d;
		size_t at = strlen(list);
		snprintf(list + at, n - at, "%s-%s", at ? " or " : "", d->name);
	}
	return NULL;
}

/* A display flag (-NAME or --NAME, any name of a display) for the datatype it
 * draws first; two different ones for a datatype contradict each other. */
static void choose_display(const char *flag)
{
	const char *n = flag + (flag[0] == '-') + (flag[0] == '-' && flag[1] == '-');
	const struct registry_display *d = registry_display(&reg, n);
	char type[32] = "", list[1024];

	if (d)
		snprintf(type, sizeof(type), "%.*s", (int)strcspn(d->reads + 1, ","), d->reads + 1);
	int t = type_slot(type);
	if (t < 0)
		marple_usage_error("display: unknown option '%s'", flag);
	if (chosen[t] && chosen[t] != d) {
		reading(type, 0, list, sizeof(list));
		marple_usage_error("display: %s contradicts an earlier flag: one renderer per datatype (%s: %s)",
				   flag, type, list);
	}
	chosen[t] = d;
}

/* Section i's displays, the chosen one first: the flag, [DisplayInterfaces]
 * (built in: what the collector declares), the datatype's default.  One of
 * another datatype falls back on the default; one making a file to download
 * (CPEL, a Perfetto trace) adds the datatype's page; a timed stack section
 * adds the pages of its samples (the flame scope). */
static size_t displays_of(size_t i, const char *iface, const struct registry_display **out)
{
	const char *dt = secs[i].datatype;
	int t = type_slot(dt);
	size_t n = 0;

	if (t < 0)
		return 0;
	const struct registry_display *d = chosen[t];
	if (!d)
		d = registry_display(&reg, cfg_get("DisplayInterfaces", iface));
	for (size_t k = 0; !d && k < reg.nsections; k++)
		if (!strcmp(reg.sections[k].interface, iface)) {
			d = registry_display(&reg, reg.sections[k].display);
			break;
		}
	if (!d || !registry_reads(d, dt))
		for (size_t k = 0, found = 0; !found && k < reg.ndisplays; k++)
			if (!strcmp(reg.displays[k].default_for, dt))
				d = &reg.displays[k], found = 1;
	if (!d || !registry_reads(d, dt))
		return 0;
	out[n++] = d;
	if (!is_page(d) && (d = reading(dt, 1, NULL, 0)))
		out[n++] = d;
	if (section_role(i) == TIMED_STACKS)
		for (size_t k = 0; k < reg.ndisplays && n < 8; k++)
			if (registry_reads(&reg.displays[k], "timed"))
				out[n++] = &reg.displays[k];
	return n;
}

/* A word of a plan line: tabs and newlines would split it. */
static void put_word(const char *w)
{
	putchar('\t');
	for (; *w; w++)
		putchar(*w == '\t' || *w == '\n' ? ' ' : *w);
}

/* One picture of section i by display d into file out; of the sections in
 * the list sel (NULL: i, and its samples section for a timed display). */
static void plan_picture(size_t i, const char *iface, const struct registry_display *d, const char *out,
			 const char *sel)
{
	char *config = marple_strdup(d->config), *sv, *title = section_title(i);

	printf("%zu\t%s\t", i, is_page(d) ? "picture" : "link");
	if (sel)
		fputs(sel, stdout);
	else if (registry_reads(d, "timed"))
		printf("%zu,%zu", i, i + 1);
	else
		printf("%zu", i);
	put_word(iface);
	put_word(out);
	put_word(d->program);
	for (char *c = strtok_r(config, ",", &sv); c; c = strtok_r(NULL, ",", &sv)) {
		char *colon = strchr(c, ':');
		if (!colon)
			continue;
		*colon = 0;
		const char *v = cfg_get(d->name, c);
		if (!v || !*v)
			continue;
		if (!strcmp(colon + 1, "--")) {
			char *o;
			if (asprintf(&o, "--%s", v) < 0)
				marple_fatal(EXIT_DATA, "out of memory");
			put_word(o);
			free(o);
		} else {
			put_word(colon + 1);
			put_word(v);
		}
	}
	if (d->takes_title) {
		put_word("--title");
		put_word(title);
	}
	if (secs[i].kthreads.stacks && d->takes_user_threads)	/* kernel threads asleep: a sliver left */
		put_word("--user-threads-only");
	if (secs[i].lines && d->takes_nolineno)	/* a function one box, not a box a line */
		put_word("--nolineno");
	putchar('\n');
	free(config), free(title);
}

static char *out_name(size_t i, const char *iface, const struct registry_display *d)
{
	char *f;
	if (asprintf(&f, "%02zu-%s-%s.%s", i, iface, d->name, d->ext) < 0)
		marple_fatal(EXIT_DATA, "out of memory");
	return f;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sections -e chooses (numbers, or interfaces: their sections), as
 * selected[i]; all when none is named. */
static void select_entries(const char *capture, char *selected, char **names)
{
	char *list = marple_strdup(plan.entries ? plan.entries : ""), *sv;
	int any = 0;

	for (char *e = strtok_r(list, ",", &sv); e; e = strtok_r(NULL, ",", &sv)) {
		any = 1;
		if (strspn(e, "0123456789") == strlen(e)) {
			uint64_t k;
			if (marple_parse_u64(e, 0, UINT64_MAX, &k) != 0 || k >= nsecs)
				marple_usage_error("display: -e %s: %s has %zu section%s (0 to %zu; -l lists them)", e, capture,
						   nsecs, nsecs == 1 ? "" : "s", nsecs - 1);
			selected[k] = 1;
			continue;
		}
		int found = 0;
		for (size_t i = 0; i < nsecs; i++)
			if (!strcmp(names[i], e))
				selected[i] = found = 1;
		if (!found) {
			char **sorted = marple_calloc(nsecs, sizeof(*sorted)), *has = marple_calloc(nsecs, 48);
			memcpy(sorted, names, nsecs * sizeof(*sorted));
			qsort(sorted, nsecs, sizeof(*sorted), cmp_str);
			for (size_t i = 0; i < nsecs; i++)
				if (i == 0 || strcmp(sorted[i], sorted[i - 1]))
					sprintf(has + strlen(has), "%s%s", *has ? " " : "", sorted[i]);
			marple_usage_error("display: -e %s: %s has no %s section (it has: %s; -l lists them)", e, capture, e, has);
		}
	}
	if (!any)
		memset(selected, 1, nsecs);
	free(list);
}

static int same_str(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

/* The next interval of the timed stack section rows[r]: a collector's
 * continuous mode (--every) ends a section "interval", and its next timed
 * stack section (the same interface, host and units) goes on from there.
 * Its place in rows, or nrows when there is none. */
static size_t next_interval(const size_t *rows, size_t nrows, size_t r, char **names)
{
	size_t i = rows[r];

	if (!same_str(secs[i].ended, "interval"))
		return nrows;
	for (size_t k = r + 1; k < nrows; k++) {
		size_t j = rows[k];
		if (section_role(j) == TIMED_STACKS && !strcmp(names[j], names[i]) && same_str(secs[j].host, secs[i].host) &&
		    same_str(secs[j].units, secs[i].units))
			return j + 1 < nsecs && section_role(j + 1) == TIMED_SAMPLES ? k : nrows;
	}
	return nrows;
}

/* A flame scope draws a collector's intervals on one time axis: runs of
 * intervals, found once.  head[r]: the place in rows of the first timed stack
 * section with records of rows[r]'s run (r itself for the first, nrows for a
 * section that is not timed); len[r], for a first one, how many intervals its
 * run has. */
static void interval_runs(const size_t *rows, size_t nrows, char **names, size_t *head, size_t *len)
{
	for (size_t r = 0; r < nrows; r++)
		head[r] = nrows, len[r] = 0;
	for (size_t r = 0; r < nrows; r++) {
		/* an interval with no records (the first is often short) is none's first */
		if (head[r] != nrows || section_role(rows[r]) != TIMED_STACKS || !secs[rows[r]].records)
			continue;
		for (size_t q = r; q < nrows; q = next_interval(rows, nrows, q, names))
			head[q] = r, len[r]++;
	}
}

/* The sections a run's flame scope cuts: each interval's and its samples'. */
static char *run_selection(const size_t *rows, size_t nrows, const size_t *head, size_t r)
{
	char *sel = NULL;
	size_t at = 0, cap = 0;

	for (size_t q = r; q < nrows; q++)
		if (head[q] == r) {
			sel = marple_grow(sel, &cap, at + 48, 1);
			at += (size_t)sprintf(sel + at, "%s%zu,%zu", at ? "," : "", rows[q], rows[q] + 1);
		}
	return sel;
}

/* -o FILE.EXT when every chosen section with records is an interval of one
 * run: the run's flame scope, if that is the kind of FILE.  1 if planned. */
static int single_run(char **names, const size_t *rows, size_t nrows, const char *ext)
{
	const struct registry_display *ds[8];
	size_t *head = marple_calloc(nrows + 1, sizeof(*head)), *len = marple_calloc(nrows + 1, sizeof(*len));
	size_t first = nrows;
	int one = 1, done = 0;

	interval_runs(rows, nrows, names, head, len);
	for (size_t r = 0; r < nrows && one; r++)
		if (secs[rows[r]].records) {
			if (first == nrows)
				first = head[r];
			one = head[r] != nrows && head[r] == first;
		}
	if (one && first < nrows) {
		size_t i = rows[first], n = displays_of(i, names[i], ds);
		char *sel = run_selection(rows, nrows, head, first);
		for (size_t k = 0; k < n && !done; k++)
			if (registry_reads(ds[k], "timed") && !strcmp(ds[k]->ext, ext)) {
				plan_picture(i, names[i], ds[k], plan.single, sel);
				done = 1;
			}
		free(sel);
	}
	free(head), free(len);
	return done;
}

/* -o FILE.EXT: the one picture of that kind the chosen sections make. */
static void plan_single(const char *selected, char **names, const size_t *rows, size_t nrows)
{
	const char *ext = strrchr(plan.single, '.') ? strrchr(plan.single, '.') + 1 : "";
	const struct registry_display *ds[8];
	size_t drawn = 0, row = 0;

	for (size_t r = 0; r < nrows; r++)
		if (secs[rows[r]].records)
			drawn++, row = rows[r];
	if (drawn == 1) {
		size_t n = displays_of(row, names[row], ds);
		for (size_t k = 0; k < n; k++)
			if (!strcmp(ds[k]->ext, ext)) {
				plan_picture(row, names[row], ds[k], plan.single, NULL);
				return;
			}
	}
	if (drawn > 1 && single_run(names, rows, nrows, ext))
		return;
	char *which = marple_calloc(nsecs, 200);
	size_t listed = 0;
	for (size_t i = 0; i < nsecs; i++) {
		if (!selected[i])
			continue;
		sprintf(which + strlen(which), "%s%zu (%s, %s%s%s)", listed++ ? ", " : "", i, names[i], secs[i].datatype,
			section_role(i) == TIMED_SAMPLES ? ": the samples of the timed stack section before it" : "",
			secs[i].records ? "" : ": no records");
	}
	marple_usage_error("display: -o %s names one .%s file, but the sections chosen make %zu picture%s: section%s %s "
			   "(choose one with -e N or -e INTERFACE, or give a folder)", plan.single, ext, drawn,
			   drawn == 1 ? " of another kind" : "s", listed > 1 ? "s" : "", which);
}

/* A fleet: one flame graph of all the hosts' stacks per collector, the host
 * the root frame, and the merge as one pprof profile. */
static void plan_fleet(char **names)
{
	size_t hosts = 0;
	char **seen = marple_calloc(nsecs, sizeof(*seen));

	for (size_t i = 0; i < nsecs; i++) {
		char *h = secs[i].host ? marple_strdup(secs[i].host) : section_title(i);
		for (char *c = h; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
		size_t k = 0;
		while (k < hosts && strcmp(seen[k], h))
			k++;
		if (k == hosts)
			seen[hosts++] = h;
		else
			free(h);
	}
	printf("all\ttitle\tmarple report: %llu captures from %zu host%s\n", (unsigned long long)plan.fleet, hosts,
	       hosts == 1 ? "" : "s");
	for (size_t i = 0; i < nsecs; i++) {
		if (strcmp(secs[i].datatype, "stack") || !secs[i].records)
			continue;
		int done = 0;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(secs[j].datatype, "stack") && secs[j].records && !strcmp(names[j], names[i]))
				done = 1;
		if (done)
			continue;
		char *sel = marple_calloc(nsecs, 24), *title, *svg, *pb;
		for (size_t j = 0; j < nsecs; j++)	/* a timed one's samples are an event section */
			if (!strcmp(secs[j].datatype, "stack") && !strcmp(names[j], names[i]))
				sprintf(sel + strlen(sel), "%s%zu", *sel ? "," : "", j);
		if (asprintf(&title, "%s, all hosts (the host is the root frame)", names[i]) < 0 ||
		    asprintf(&svg, "fleet-%s-flamegraph.svg", names[i]) < 0 || asprintf(&pb, "fleet-%s.pb.gz", names[i]) < 0)
			marple_fatal(EXIT_DATA, "out of memory");
		printf("all\tpicture\t%s", sel);
		put_word(names[i]), put_word(svg), put_word("fold"), put_word("--host-frame"), put_word("--to-stream");
		put_word("|"), put_word("flamegraph"), put_word("--title"), put_word(title);
		printf("\nall\tlink\t%s", sel);
		put_word(names[i]), put_word(pb), put_word("pprof");
		printf("\nall\tnote\t%s's merged pprof profile opens in go tool pprof, Parca, Pyroscope; the label host tells the hosts apart\n",
		       names[i]);
		free(sel), free(title), free(svg), free(pb);
	}
	for (size_t k = 0; k < hosts; k++)
		free(seen[k]);
	free(seen);
}

static void plan_sections(const size_t *rows, size_t nrows, char **names);

static void plan_display(const char *capture)
{
	/* static: a usage error exits from within, and they are still ours */
	static char **names, *selected;
	static size_t *rows;
	size_t nrows = 0;
	const struct registry_display *ds[8];

	names = marple_calloc(nsecs, sizeof(*names)), selected = marple_calloc(nsecs, 1);
	rows = marple_calloc(nsecs, sizeof(*rows));

	for (size_t i = 0; i < nsecs; i++)
		names[i] = section_name(i);
	select_entries(capture, selected, names);
	for (size_t i = 0; i < nsecs; i++)
		if (selected[i] && section_role(i) != TIMED_SAMPLES && displays_of(i, names[i], ds))
			rows[nrows++] = i;
	if (plan.single)
		plan_single(selected, names, rows, nrows);
	else
		plan_sections(rows, nrows, names);
	if (plan.fleet && !plan.single)
		plan_fleet(names);
	for (size_t i = 0; i < nsecs; i++)
		free(names[i]);
	free(names), free(selected), free(rows);
}

/* System-wide off-CPU time is mostly kernel threads asleep for the whole
 * capture (kworker, ksoftirqd, migration, rcu_*): the pictures leave them
 * out, and the page says what and how much. */
static void plan_kthreads_note(size_t i)
{
	const struct stackfilter_count *k = &secs[i].kthreads;
	const char *name;
	uint64_t ns = stream_time_unit_ns(secs[i].weight_unit, &name);

	if (!k->stacks)
		return;
	printf("%zu\tnote\tkernel threads left out of the pictures: %llu stacks, ", i, (unsigned long long)k->stacks);
	if (ns)
		printf("%.2f s off the CPU", k->weight * (double)ns / 1e9);
	else
		printf("%.0f %s", k->weight, secs[i].weight_unit);
	printf(" (%s%s); marple-flamegraph without --user-threads-only draws them\n", k->comms, k->more ? ", ..." : "");
}

/* Every picture of the sections in rows; the first --max-sections with records. */
static void plan_sections(const size_t *rows, size_t nrows, char **names)
{
	const struct registry_display *ds[8];
	size_t drawn = 0, *head = marple_calloc(nrows + 1, sizeof(*head)), *len = marple_calloc(nrows + 1, sizeof(*len));

	interval_runs(rows, nrows, names, head, len);
	for (size_t r = 0; r < nrows; r++) {
		size_t i = rows[r];
		if (!secs[i].records) {
			printf("%zu\tnote\tno records in this section: nothing to draw\n", i);
			continue;
		}
		/* small files can hold a million sections: a picture each would
		 * take hours and gigabytes; the first ones are drawn, the rest counted */
		if (opt.max_sections && drawn >= opt.max_sections) {
			size_t left = 0;
			for (size_t k = r; k < nrows; k++)
				left += secs[rows[k]].records != 0;
			marple_warn("display: drew the first %llu sections with records; %zu more not drawn "
				    "(--max-sections N to draw more, 0 for all)", (unsigned long long)opt.max_sections, left);
			printf("all\tnote\t%zu more sections with records are not drawn: the first %llu are "
			       "(marple display --max-sections N draws more)\n", left, (unsigned long long)opt.max_sections);
			break;
		}
		drawn++;
		size_t n = displays_of(i, names[i], ds);
		int later = head[r] < r;	/* a later interval: its run's flame scope is drawn */
		char *sel = head[r] == r && len[r] > 1 ? run_selection(rows, nrows, head, r) : NULL;
		for (size_t k = 0; k < n; k++) {
			int timed = registry_reads(ds[k], "timed");
			if (timed && later) {
				printf("%zu\tnote\tthe %s of this interval is section %zu's, of all %zu intervals\n", i,
				       ds[k]->name, rows[head[r]], len[head[r]]);
				continue;
			}
			char *out = out_name(i, names[i], ds[k]);
			plan_picture(i, names[i], ds[k], out, timed ? sel : NULL);
			free(out);
		}
		plan_kthreads_note(i);
		if (sel)
			printf("%zu\tnote\tthe flamescope draws the %zu intervals of %s from here on one time axis\n", i,
			       len[r], names[i]);
		free(sel);
	}
	free(head), free(len);
}

/* A relative file name as a URL path: unreserved bytes as they are, others %XX. */
static void url_write(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
		    c == '_' || c == '.' || c == '~' || c == '/')
			fputc(c, f);
		else
			fprintf(f, "%%%02X", c);
	}
}

/* The value of the attribute name (e.g. "height=") of the element's text el,
 * in whole pixels; 0 if absent or out of reason. */
static long svg_attr(const char *el, const char *name)
{
	size_t n = strlen(name);
	for (const char *a = el; (a = strstr(a, name)); a += n)
		if (a > el && (a[-1] == ' ' || a[-1] == '\n' || a[-1] == '\t') && (a[n] == '"' || a[n] == '\'')) {
			long v = strtol(a + n + 1, NULL, 10);
			return v > 0 && v < 100000 ? v : 0;
		}
	return 0;
}

/* The width and height an SVG asks for (its root's attributes), 0 if
 * unknown; file is relative to the page's folder. */
static void svg_size(const char *file, long *width, long *height)
{
	char buf[4096], *path;
	const char *slash = opt.out ? strrchr(opt.out, '/') : NULL;
	size_t dirlen = slash ? (size_t)(slash - opt.out + 1) : 0;
	FILE *f;

	*width = *height = 0;

	path = marple_malloc(dirlen + strlen(file) + 1);
	memcpy(path, opt.out ? opt.out : "", dirlen);
	strcpy(path + dirlen, file);
	f = fopen(path, "r");
	free(path);
	if (!f)
		return;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	char *svg = strstr(buf, "<svg");
	char *end = svg ? strchr(svg, '>') : NULL;
	if (!end)
		return;
	*end = 0;
	*width = svg_attr(svg, "width=");
	*height = svg_attr(svg, "height=");
}

static void esc(FILE *f, const char *s)
{
	xml_escape_cstr(f, s ? s : "-");
}

static void wall_time(char *buf, size_t n, int64_t wall_ns)
{
	time_t t = (time_t)(wall_ns / 1000000000);
	struct tm tm;
	if (wall_ns <= 0 || !localtime_r(&t, &tm) || !strftime(buf, n, "%Y-%m-%d %H:%M:%S %Z", &tm))
		snprintf(buf, n, "-");
}

static void seconds(char *buf, size_t n, const struct section *s)
{
	if (s->end_ns >= 0 && s->start_ns >= 0 && s->end_ns >= s->start_ns)
		snprintf(buf, n, "%.2f s", (double)(s->end_ns - s->start_ns) / 1e9);
	else
		snprintf(buf, n, "-");
}

static const char *kind_label(const char *file)
{
	const char *dot = strrchr(file, '.');
	if (!dot)
		return "file";
	if (!strcmp(dot, ".cpel"))
		return "CPEL event log (open with G2)";
	if (!strcmp(dot, ".json"))
		return "trace JSON (open in ui.perfetto.dev)";
	if (!strcmp(dot, ".svg"))
		return "SVG";
	if (!strcmp(dot, ".html"))
		return "HTML page";
	if (!strcmp(dot, ".gz") && dot - file >= 3 && !strncmp(dot - 3, ".pb", 3))
		return "pprof profile (go tool pprof, Parca, Pyroscope)";
	if (!strcmp(dot, ".pftrace"))
		return "Perfetto trace (open in ui.perfetto.dev)";
	return "file";
}

static const char CSS[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:0 auto;max-width:1500px;padding:0 16px 40px;color:#222}"
	"h1{font-size:22px;margin:18px 0 6px}h2{font-size:18px;margin:28px 0 6px;border-bottom:1px solid #ccc}"
	"table{border-collapse:collapse;margin:8px 0}td,th{padding:2px 10px 2px 0;text-align:left;vertical-align:top}"
	"th{color:#555;font-weight:600}table.secs td,table.secs th{border-bottom:1px solid #eee;padding-right:14px}"
	".num{text-align:right}.bad{color:#b00020;font-weight:600}.ok{color:#1b5e20}"
	"iframe.pic{width:100%;max-width:calc(100% - 2px);height:620px;border:1px solid #ccc;resize:vertical;overflow:auto;display:block;margin:6px 0}"
	".meta{color:#444}.links a{margin-right:14px}code{background:#f4f4f4;padding:0 3px}";

/* The pictures, links and remarks of one section (index -1: of the whole
 * capture); how many there were. */
static int write_artifacts(FILE *f, long index, const struct artifact *a, size_t na)
{
	int shown = 0;

	for (size_t k = 0; k < na; k++) {
		if (a[k].index != index)
			continue;
		shown++;
		if (a[k].kind == 'n') {
			fputs("<p class=\"meta note\">", f);
			esc(f, a[k].text);
			fputs("</p>\n", f);
		} else if (a[k].kind == 'e') {
			fputs("<p class=\"bad err\">could not draw this section: ", f);
			esc(f, a[k].text);
			fputs("</p>\n", f);
		} else if (a[k].kind == 'p') {
			long w = 0, h = 0;
			if (strlen(a[k].text) > 4 && !strcmp(a[k].text + strlen(a[k].text) - 4, ".svg"))
				svg_size(a[k].text, &w, &h);
			/* an SVG gets its own height (flame graphs grow upwards: show
			 * their base) and width (a 1200 px flame graph in a frame as
			 * wide as the page left a blank at its right), room for a
			 * scroll bar when it is taller than the frame */
			fputs("<iframe class=\"pic\" loading=\"lazy\"", f);
			if (h || w) {
				fputs(" style=\"", f);
				if (w)
					fprintf(f, "width:%ldpx;", w + (h > 3000 ? 20 : 4));
				if (h)
					fprintf(f, "height:%ldpx", (h > 3000 ? 3000 : h) + 24);
				fputc('"', f);
			}
			fputs(" src=\"", f);
			url_write(f, a[k].text);
			fputs("\" title=\"", f);
			esc(f, a[k].text);
			fputs("\"></iframe>\n<p class=\"links\"><a href=\"", f);
			url_write(f, a[k].text);
			fputs("\" target=\"_blank\">open ", f);
			esc(f, a[k].text);
			fputs(" on its own</a></p>\n", f);
		} else {
			fputs("<p class=\"links\"><a class=\"file\" href=\"", f);
			url_write(f, a[k].text);
			fputs("\" download>", f);
			esc(f, a[k].text);
			fputs("</a> &mdash; ", f);
			esc(f, kind_label(a[k].text));
			fputs("</p>\n", f);
		}
	}
	return shown;
}

/* The waker view: what ended the waits (the last frame of off-wake stacks),
 * the WAKERS_SHOWN heaviest, with their share of the section's weight. */
#define WAKERS_SHOWN 10
static void write_wakers(FILE *f, const struct section *s)
{
	const struct wakers *w = s->wakers;
	size_t *order = marple_malloc(w->n * sizeof(*order));

	for (size_t i = 0; i < w->n; i++) {	/* by weight (insertion: few) */
		size_t j = i;
		for (; j > 0 && w->weight[order[j - 1]] < w->weight[i]; j--)
			order[j] = order[j - 1];
		order[j] = i;
	}
	fprintf(f, "<p class=\"meta\">who ended the waits (off-wake stacks: %.1f%% of the weight; the rest: no "
		"waker recorded):</p>\n<table class=\"wakers\"><tr><th>waker</th><th class=\"num\">", 100 * w->with / s->weight);
	esc(f, s->weight_unit ? s->weight_unit : "weight");
	fputs("</th><th class=\"num\">share</th></tr>\n", f);
	for (size_t k = 0; k < w->n && k < WAKERS_SHOWN; k++) {
		fputs("<tr><td>", f);
		esc(f, w->names[order[k]]);
		fprintf(f, "</td><td class=\"num\">%.0f</td><td class=\"num\">%.1f%%</td></tr>\n", w->weight[order[k]],
			100 * w->weight[order[k]] / s->weight);
	}
	if (w->n > WAKERS_SHOWN)
		fprintf(f, "<tr><td colspan=\"3\">and %zu more</td></tr>\n", w->n - WAKERS_SHOWN);
	fputs("</table>\n", f);
	free(order);
}

/* marple-lock's lock view: the locks waited on longest (its trailer's "locks"). */
static void write_locks(FILE *f, const struct section *s)
{
	size_t i;
	json_t *l;

	fputs("<p class=\"meta\">the locks waited on longest:</p>\n<table class=\"locks\"><tr><th>lock</th><th "
	      "class=\"num\">pid</th><th class=\"num\">contended waits</th><th class=\"num\">total wait (us)</th><th "
	      "class=\"num\">longest (us)</th></tr>\n", f);
	json_array_foreach(s->locks, i, l) {
		fputs("<tr><td>", f);
		esc(f, stream_header_str(l, "lock", "?"));
		fprintf(f, "</td><td class=\"num\">%lld</td><td class=\"num\">%lld</td><td class=\"num\">%lld</td><td "
			"class=\"num\">%lld</td></tr>\n", (long long)stream_header_int(l, "pid", 0),
			(long long)stream_header_int(l, "waits", 0), (long long)stream_header_int(l, "wait_us", 0),
			(long long)stream_header_int(l, "max_us", 0));
	}
	fputs("</table>\n", f);
}

static void write_section(FILE *f, size_t i, const struct section *s, const struct artifact *a, size_t na)
{
	char when[64], secs_buf[32];
	int shown = 0;

	wall_time(when, sizeof(when), s->wall_ns);
	seconds(secs_buf, sizeof(secs_buf), s);
	fprintf(f, "<section class=\"sec\" id=\"s%zu\" data-index=\"%zu\" data-datatype=\"", i, i);
	esc(f, s->datatype);
	fputs("\" data-interface=\"", f);
	esc(f, s->interface);
	fprintf(f, "\">\n<h2>%zu. ", i);
	esc(f, s->interface);
	fputs(" <small>(", f);
	esc(f, s->datatype);
	fputs(")</small></h2>\n<p class=\"meta\">started ", f);
	esc(f, when);
	fprintf(f, ", %s, %llu records", secs_buf, (unsigned long long)s->records);
	if (s->trailer) {
		fprintf(f, ", lost %lld, dropped %lld, ended: ", (long long)s->lost, (long long)s->dropped);
		esc(f, s->ended);
	} else {
		fputs(", <span class=\"bad\">no trailer (the collector was cut off)</span>", f);
	}
	if (s->host) {
		fputs("; host ", f);
		esc(f, s->host);
	}
	if (s->units) {
		fputs("; units <code>", f);
		esc(f, s->units);
		fputs("</code>", f);
	}
	fputs("</p>\n", f);
	if (s->stack_errors || s->incomplete > INCOMPLETE_SHARE) {
		fprintf(f, "<p class=\"bad\">%lld stack%s lost or unreadable", (long long)s->stack_errors,
			s->stack_errors == 1 ? "" : "s");
		if (s->incomplete >= 0)
			fprintf(f, "; %.1f%% of the user-stack weight in stacks cut short", 100 * s->incomplete);
		fputs(" (the trailer's <code>stack_errors</code>)</p>\n", f);
	}
	if (s->said) {
		fputs("<p class=\"meta\">the collector said:</p>\n<pre class=\"said\">", f);
		esc(f, s->said);
		fputs("</pre>\n", f);
	}
	if (s->locks && json_array_size(s->locks))
		write_locks(f, s);
	if (s->wakers && s->weight > 0)
		write_wakers(f, s);
	shown = write_artifacts(f, (long)i, a, na);
	if (!shown)
		fputs("<p class=\"meta\">not drawn (not selected)</p>\n", f);
	fputs("</section>\n", f);
}

static void write_report(FILE *f, const char *capture, const struct artifact *a, size_t na)
{
	const char *name = opt.source ? opt.source : capture;
	const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
	double longest = all.longest;
	uint64_t records = all.records, problems = all.problems;
	char when[64], buf[32];

	wall_time(when, sizeof(when), all.first_wall);

	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'self' 'unsafe-inline' data: file:\">\n<title>", f);
	if (opt.title)
		esc(f, opt.title);
	else {
		fputs("marple report: ", f);
		esc(f, base);
	}
	fprintf(f, "</title>\n<style>%s</style></head>\n<body>\n<h1>", CSS);
	if (opt.title)
		esc(f, opt.title);
	else {
		fputs("marple report: ", f);
		esc(f, base);
	}
	fputs("</h1>\n<table class=\"capture\">\n<tr><th>capture</th><td id=\"capture-file\">", f);
	esc(f, name);
	fputs("</td></tr>\n<tr><th>host</th><td id=\"capture-host\">", f);
	/* distinct hosts and kernels, in order of appearance */
	for (int pass = 0; pass < 2; pass++) {
		char **v = pass ? all.kernels : all.hosts;
		size_t n = pass ? all.nkernels : all.nhosts;
		for (size_t i = 0; i < n; i++) {
			if (i)
				fputs(", ", f);
			esc(f, v[i]);
		}
		if (!n)
			fputs("-", f);
		if (!pass)
			fputs("</td></tr>\n<tr><th>kernel</th><td>", f);
	}
	fputs("</td></tr>\n<tr><th>started</th><td>", f);
	esc(f, when);
	snprintf(buf, sizeof(buf), "%.2f s", longest);
	fprintf(f, "</td></tr>\n<tr><th>longest section</th><td>%s</td></tr>\n"
		   "<tr><th>sections</th><td id=\"capture-sections\">%llu</td></tr>\n"
		   "<tr><th>records</th><td>%llu</td></tr>\n",
		longest > 0 ? buf : "-", (unsigned long long)all.sections, (unsigned long long)records);
	if (bad_lines)
		fprintf(f, "<tr><th>malformed lines</th><td class=\"bad\">%lu (skipped)</td></tr>\n", bad_lines);
	fprintf(f, "<tr><th>status</th><td class=\"%s\">%s</td></tr>\n</table>\n", problems ? "bad" : "ok",
		problems ? "some sections lost data, were cut off or have many incomplete stacks (see below)" : "every section complete");

	fputs("<table class=\"secs\"><tr><th>#</th><th>interface</th><th>datatype</th><th class=\"num\">records</th>"
	      "<th class=\"num\">lost</th><th class=\"num\">dropped</th><th class=\"num\">stack errors</th>"
	      "<th class=\"num\">incomplete stacks</th><th>ended</th><th>seconds</th><th class=\"num\">messages</th></tr>\n", f);
	for (size_t i = 0; i < nsecs; i++) {
		const struct section *s = &secs[i];
		seconds(buf, sizeof(buf), s);
		fprintf(f, "<tr><td>%zu</td><td><a href=\"#s%zu\">", i, i);
		esc(f, s->interface);
		fputs("</a></td><td>", f);
		esc(f, s->datatype);
		fprintf(f, "</td><td class=\"num\">%llu</td>", (unsigned long long)s->records);
		if (s->trailer) {
			char share[32] = "-";
			if (s->incomplete >= 0)
				snprintf(share, sizeof(share), "%.1f%%", 100 * s->incomplete);
			fprintf(f, "<td class=\"num%s\">%lld</td><td class=\"num%s\">%lld</td><td class=\"num%s\">%lld</td>"
				   "<td class=\"num%s\">%s</td><td>",
				s->lost ? " bad" : "", (long long)s->lost, s->dropped ? " bad" : "", (long long)s->dropped,
				s->stack_errors ? " bad" : "", (long long)s->stack_errors,
				s->incomplete > INCOMPLETE_SHARE ? " bad" : "", share);
			esc(f, s->ended);
		} else {
			fputs("<td class=\"num\">-</td><td class=\"num\">-</td><td class=\"num\">-</td><td class=\"num\">-</td>"
			      "<td class=\"bad\">no trailer", f);
		}
		fprintf(f, "</td><td>%s</td><td class=\"num\">%zu</td></tr>\n", buf, s->messages);
	}
	fputs("</table>\n", f);
	if (all.sections > nsecs) {
		size_t unshown = 0;
		for (size_t k = 0; k < na; k++)
			unshown += a[k].index >= 0 && (size_t)a[k].index >= nsecs;
		fprintf(f, "<p class=\"bad\" id=\"sections-left-out\">The capture has %llu sections: the first %zu are "
			   "listed here, the other %llu left out", (unsigned long long)all.sections, nsecs,
			(unsigned long long)(all.sections - nsecs));
		if (unshown)
			fprintf(f, " (with the %zu file%s named for them)", unshown, unshown == 1 ? "" : "s");
		fputs(" (<code>marple-report --max-sections N</code> lists more).</p>\n", f);
	}
	for (size_t k = 0; k < na; k++)
		if (a[k].index < 0) {	/* pictures of all the sections together: before each one's */
			fputs("<section class=\"sec\" id=\"all\">\n<h2>All sections together</h2>\n", f);
			write_artifacts(f, -1, a, na);
			fputs("</section>\n", f);
			break;
		}
	for (size_t i = 0; i < nsecs; i++)
		write_section(f, i, &secs[i], a, na);
	fputs("<p class=\"meta\">Written by marple-report. Pictures are the files beside this page; "
	      "CPEL files open in G2, trace JSON in the Perfetto UI.</p>\n"
	      /* a page that knows its height (the event timeline) says so: its
	       * frame takes it instead of 620 px with a blank under the tracks */
	      "<script>window.addEventListener(\"message\",function(e){"
	      "var h=e.data&&e.data.marple_height,f=document.querySelectorAll(\"iframe.pic\");"
	      "if(typeof h!==\"number\"||!(h>0))return;"
	      "for(var i=0;i<f.length;i++)if(f[i].contentWindow===e.source)f[i].style.height=Math.min(h,3000)+4+\"px\";});"
	      "</script>\n</body></html>\n", f);
}

/* Whether a relative path leaves its folder: a ".." component.  ".." inside
 * a name ("00-v1..2-flamegraph.svg", from an interface "v1..2") does not. */
static int climbs_out(const char *path)
{
	for (const char *p = path; p; p = strchr(p, '/'), p = p ? p + 1 : NULL)
		if (p[0] == '.' && p[1] == '.' && (p[2] == '/' || p[2] == '\0'))
			return 1;
	return 0;
}

static void parse_artifact(const char *arg, struct artifact *a)
{
	const char *c1 = strchr(arg, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	uint64_t idx;
	char *num;

	if (!c1 || !c2)
		marple_usage_error("'%s': want INDEX:KIND:FILE", arg);
	num = marple_strndup(arg, (size_t)(c1 - arg));
	if (!strcmp(num, "all"))
		idx = (uint64_t)-1;
	else if (marple_parse_u64(num, 0, 1u << 30, &idx) != 0)
		marple_usage_error("'%s': bad section index", arg);
	free(num);
	a->index = (long)idx;
	if (!strncmp(c1 + 1, "picture:", 8))
		a->kind = 'p';
	else if (!strncmp(c1 + 1, "link:", 5))
		a->kind = 'l';
	else if (!strncmp(c1 + 1, "error:", 6))
		a->kind = 'e';
	else if (!strncmp(c1 + 1, "note:", 5))
		a->kind = 'n';
	else
		marple_usage_error("'%s': KIND must be picture, link, error or note", arg);
	a->text = c2 + 1;
	if (a->kind != 'e' && a->kind != 'n' && (!*a->text || a->text[0] == '/' || climbs_out(a->text)))
		marple_usage_error("'%s': FILE must be a name relative to the report's folder", arg);
}

static char *join_entries(char *list, const char *more)
{
	char *j;
	if (asprintf(&j, "%s,%s", list ? list : "", more) < 0)
		marple_fatal(EXIT_DATA, "out of memory");
	free(list);
	return j;
}

int main(int argc, char **argv)
{
	int c, have_max = 0;

	marple_init(argc, argv);
	while ((c = options_getopt(options, argc, argv)) != -1) {
		switch (c) {
		case 'o': opt.out = optarg; break;
		case 't':
		case OPT_TITLE: opt.title = optarg; break;
		case OPT_SOURCE: opt.source = optarg; break;
		case 'l': opt.list = 1; break;
		case OPT_MAX_SECTIONS:
			opt.max_sections = marple_opt_u64("--max-sections", optarg, 0, UINT32_MAX);
			have_max = 1;
			break;
		case OPT_PLAN: plan.on = 1; break;
		case OPT_REGISTRY: plan.registry = optarg; break;
		case OPT_CONFIG: plan.config = optarg; break;
		case 'e': plan.entries = join_entries(plan.entries, optarg); break;
		case OPT_DISPLAY:
			plan.flags = marple_grow(plan.flags, &plan.capflags, plan.nflags + 1, sizeof(*plan.flags));
			plan.flags[plan.nflags++] = optarg;
			break;
		case OPT_SINGLE: plan.single = optarg; break;
		case OPT_FLEET: plan.fleet = marple_opt_u64("--fleet", optarg, 1, UINT32_MAX); break;
		case 'n': marple_progname = optarg; break;
		case 'h': options_help(stdout, options, &help); marple_close_stdout(); return EXIT_OK;
		default: marple_usage_try();
		}
	}
	if (plan.on) {
		if (!plan.registry)
			marple_usage_error("--plan needs --registry FILE");
		if (!have_max)
			opt.max_sections = 100;
		if (registry_read(&reg, plan.registry) < 0)
			return EXIT_DATA;
		if (plan.config)
			cfg_lines = lines_of_file(plan.config, "the configuration", &ncfg);
		for (size_t i = 0; i < plan.nflags; i++)
			choose_display(plan.flags[i]);
		if (optind + 1 < argc)
			marple_usage_error("--plan takes only the capture");
		if (optind < argc) {
			read_capture(argv[optind]);
			plan_display(opt.source ? opt.source : argv[optind]);
		}
		marple_close_stdout();
		return EXIT_OK;
	}
	if (opt.max_sections == 0)
		marple_usage_error("--max-sections: want 1 or more");
	if (optind >= argc)
		marple_usage_error("name the capture");
	const char *capture = argv[optind++];
	size_t na = (size_t)(argc - optind);
	struct artifact *arts = marple_calloc(na ? na : 1, sizeof(*arts));
	if (opt.list && na)
		marple_usage_error("--list takes only the capture");
	for (size_t i = 0; i < na; i++)
		parse_artifact(argv[optind + i], &arts[i]);

	read_capture(capture);
	if (opt.list) {
		list_sections();
		marple_close_stdout();
		free(arts);
		return EXIT_OK;
	}
	for (size_t i = 0; i < na; i++)
		if (arts[i].index >= 0 && (uint64_t)arts[i].index >= all.sections)
			marple_fatal(EXIT_USAGE, "section %ld named, but the capture has %llu", arts[i].index,
				     (unsigned long long)all.sections);
	if (all.sections > nsecs)
		marple_warn_at(marple_input_name(capture), 0, "%llu sections: the page lists the first %zu "
			       "(--max-sections N lists more)", (unsigned long long)all.sections, nsecs);

	struct outfile *o = marple_outfile_open(opt.out);
	int rc = EXIT_OK;
	if (!o)
		rc = EXIT_DATA;
	else {
		write_report(marple_outfile_stream(o), capture, arts, na);
		if (marple_outfile_commit(o) != 0)
			rc = EXIT_DATA;
	}
	free(arts);
	return rc;
}
