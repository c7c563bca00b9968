/* marple-collect — a collector of collectors: runs several marple collectors at
 * the same time and writes their sections as one stream.  It is what
 * `marple collect` runs.
 *
 *   $ marple-collect -t 5 -o cap.marple callstack marple-callstack -F 99 -- cpusched marple-cpusched
 *   $ marple-collect -t 5 -o cap.marple cpu offcpu:-m,1000
 *
 * Given interface and group names (the second line: no "--" between the
 * operands, the second no program), it plans the capture itself from the
 * registry and the config (lib/format/plan.h: groups, each collector's options,
 * checks) and finds each program; the driver's `marple collect` passes its
 * arguments on that way.
 *
 * Each collector writes its section to a temporary file (unlinked at once, so
 * nothing is left behind) and its messages to memory (a memfd: a disk that
 * fills does not take the reasons with it); a collector dies with us, even of
 * SIGKILL (PR_SET_PDEATHSIG), rather than run on unseen.  One loop waits on a
 * signalfd for SIGINT/SIGTERM/SIGHUP and SIGCHLD and on the deadlines, so the
 * supervision itself starts no process and wakes only when something happens:
 * a signal stops every collector (SIGTERM, again each second in case one was
 * not listening yet), a collector that runs GRACE past its duration is stopped,
 * and one still running GRACE after SIGTERM is killed and named.  When all
 * have ended, each section is checked (an unfinished last line is dropped and
 * counted, a section that does not parse is left out and named) and the
 * sections are joined in the order given; a file is written beside FILE and
 * linked (-f: renamed) into place, so it is never seen half written.  A
 * collector's messages go to stderr, terminal or not, and into its last
 * trailer ("messages"), so a capture from cron keeps them.  A disk that fills
 * while the sections are joined keeps the whole sections that fitted, named.
 *
 * Continuous (-e INTERVAL): the collectors get --every INTERVAL and write a
 * section per interval, cut on the wall clock's multiples of it; as each
 * interval is whole, its sections go into a file of their own
 * (FILE-YYYYmmddTHHMMSSZ.marple, temporary name, fsync, link; each
 * collector's messages since the last file in its trailer), --keep and
 * --keep-bytes remove the oldest, and interval_file_done hands it on
 * (--each-file).
 *
 * A command (--run CMD ARG..., after the collectors): forked and held; each
 * collector gets -p ITS_PID --children and a MARPLE_READY_FILE; once all
 * trace, it execs with our standard input and output, and its end ends the
 * capture (marple record).  The parent's death is a SIGTERM (stop_with_parent).
 *
 * Exit status: 0 every collector ended well and the output is written; 1 some
 * collector failed (named on stderr) and the others' sections are written;
 * 2 usage error; 3 nothing was written (every collector failed, or a signal
 * came before any started; stderr says which).  With --run: the command's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "options.h"
#include "plan.h"
#include "registry.h"
#include "stream.h"
#include "timed.h"
#include "util.h"

enum { EXIT_NOTHING = 3 };
#define NS_PER_S 1000000000ull
/* A collector told to stop before it has its SIGTERM handler would die of it
 * with nothing written, so SIGTERM waits until /proc shows the handler (polled
 * every STOP_POLL_MS), at most STOP_WAIT_NS (or GRACE if shorter): a marple
 * collector sets it first thing, so only one that never will waits that long. */
#define STOP_WAIT_NS (2 * NS_PER_S)
#define STOP_POLL_MS 10

struct collector {
	const char *name;
	char **argv;		/* PROGRAM ARG... DURATION, NULL-terminated */
	pid_t pid;		/* 0: not started */
	int running;
	int status;		/* from waitpid */
	int out_fd;		/* its section: an unlinked temporary file */
	int err_fd;		/* its messages: a memfd */
	int unrunnable;		/* exec failed (named when it did) */
	int overran;		/* stopped for running GRACE past the duration */
	int killed;		/* sent SIGKILL */
	uint64_t first_term_ns;	/* when it was first sent SIGTERM (0: not yet); SIGKILL GRACE later */
	uint64_t term_ns;	/* when it was last sent SIGTERM */
	int watched;		/* its section's size is followed: the duration has passed */
	off_t size_seen;	/* its section's size when last looked at */
	uint64_t grew_ns;	/* when that size was seen to grow (or the duration's end, the
				 * first SIGTERM) */
	int deaf;		/* sent SIGTERM with no handler for it seen (STOP_WAIT_NS passed) */
	int dropped;		/* its section left out at the join to make room on a full disk */
	/* --every: its whole sections found so far in out_fd ([start, end)
	 * offsets, each with its interval), and how far it was read */
	struct section_span *spans;
	size_t nspans, spans_cap;
	size_t spans_done;	/* spans written into interval files (or given up) */
	off_t scanned, section_start;
	int in_section;
	int section_is_samples;		/* the open section holds the times of the one before */
	uint64_t section_wall_ns;	/* the open section's header's */
	off_t err_shown;	/* its messages passed on to stderr so far */
	off_t err_filed;	/* ... and into the trailers of interval files */
};

struct section_span {
	off_t start, end;
	uint64_t interval;	/* which: the wall-clock multiple of INTERVAL it ends at */
};

struct supervisor {
	struct collector *c;
	size_t n, started, running;
	const char *duration;	/* as given, passed on to every collector */
	uint64_t duration_ns;	/* 0: until a signal */
	uint64_t grace_ns;
	const char *out_path;	/* NULL: stdout */
	int force;
	const char *tmpdir;	/* where the sections are kept meanwhile */
	int sigfd;
	int signo;		/* the first SIGINT/SIGTERM/SIGHUP, 0 if none */
	int stopping;		/* every collector is to get SIGTERM */
	uint64_t start_ns, stop_ns;
	pid_t self;		/* our pid: the children call getpid() too */
	pid_t pgid;		/* the collectors' process group */
	int tty;
	uint64_t shown;		/* what the progress line shows: 1 + 2 * seconds + stopping */
	int failed;
	/* --every: one file per interval */
	const char *every;	/* as given, passed on as each collector's --every */
	uint64_t every_ns;	/* 0: one capture */
	uint64_t keep;		/* --keep: files kept (0: all) */
	uint64_t keep_bytes;	/* --keep-bytes: their total size at most (0: any) */
	const char *each_file;	/* --each-file: a command run with each file written */
	size_t files;		/* intervals done (written or not) */
	size_t written;		/* interval files written */
	pid_t *hooks;		/* --each-file commands still running */
	size_t nhooks, hooks_cap;
	/* --run: the command profiled (run_command) */
	char **run_argv;	/* NULL: none */
	pid_t run_pid;		/* 0: not started, or reaped */
	char run_pid_text[24];	/* each collector's -p */
	int run_go;		/* the go pipe's end that lets it exec; -1 once closed */
	int run_status;		/* how it ended, as a shell says it (128 + N: signal N) */
	char *ready_dir;	/* the collectors' MARPLE_READY_FILEs */
	/* interface and group names: planned from the registry and the config */
	int time_given;		/* -t: else the config's [General] time */
	int include_self;	/* --include-self to the collectors that take it */
	const char *registry;	/* --registry, else found beside us */
	int plan_only;		/* --plan: print the collectors' command lines, stop */
};

enum { OPT_SECONDS = 256, OPT_KEEP, OPT_KEEP_BYTES, OPT_EACH_FILE, OPT_INCLUDE_SELF, OPT_REGISTRY, OPT_PLAN };

/* The option table gives both the parse and the help's option lines; the
 * man page's OPTIONS list is checked against them (tests/driver/supervise.t). */
static const struct options_entry options[] = {
	{ 't', "time", "DURATION", "how long (10, 500ms, 2m, 1h, 1d; default 0: until SIGINT,\n"
				   "SIGTERM or SIGHUP, which stop every collector\ncleanly)" },
	{ 'o', "output", "FILE", "write FILE (made beside it, then linked into place)\ninstead of standard output" },
	{ 'f', "force", NULL, "replace FILE if it exists" },
	{ 'g', "grace", "GRACE", "a collector running GRACE past DURATION, writing\n"
				 "nothing for as long, gets SIGTERM, and SIGKILL\n"
				 "GRACE after SIGTERM if as silent (default 10s)" },
	{ 'n', "name", "NAME", "call this program NAME in messages" },
	{ 'e', "every", "INTERVAL", "continuous: every collector writes a whole section\n"
				    "every INTERVAL (their --every), and each interval\n"
				    "becomes its own file, FILE-YYYYmmddTHHMMSSZ.marple\n"
				    "(FILE less .marple; -o is needed)" },
	{ OPT_KEEP, "keep", "N", "--every: keep the newest N interval files, remove older" },
	{ OPT_KEEP_BYTES, "keep-bytes", "SIZE", "--every: keep the newest interval files that fit in\n"
						"SIZE bytes (or 500K, 20M, 1G), remove older" },
	{ OPT_EACH_FILE, "each-file", "CMD", "--every: run sh -c 'CMD \"$1\"' with each interval file\n"
					     "once it is written (not waited for)" },
	{ OPT_INCLUDE_SELF, "include-self", NULL, "names: record marple's own processes too (passed to\n"
						  "the collectors that take it)" },
	{ OPT_REGISTRY, "registry", "FILE", "names: what the programs are (default: marple-registry\n"
					    "beside this program, or ../share/marple/registry)" },
	{ OPT_PLAN, "plan", NULL, "names: print each collector's command line (INTERFACE,\n"
				  "PROGRAM, its options; tab-separated) and stop" },
	{ OPT_SECONDS, "seconds", "DURATION", "print DURATION in whole seconds, rounded up, and\n"
					      "stop (the driver checks durations with it: one grammar)" },
	OPTIONS_DESCRIBE("kind=supervisor"),
	OPTIONS_HELP,
	{ 0 }
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [-t DURATION] [-o FILE] [-f] [-g GRACE] [-n NAME]\n"
		"           [-e INTERVAL [--keep N] [--keep-bytes SIZE] [--each-file CMD]]\n"
		"           NAME PROGRAM [ARG...] [-- NAME PROGRAM [ARG...]]... [--run CMD [ARG...]]\n"
		"       %s [OPTION...] INTERFACE|GROUP|INTERFACE:OPTS... [--run CMD [ARG...]]\n"
		"Run collectors at the same time and write their sections as one stream.\n"
		"Each PROGRAM is run with DURATION appended as its last operand.\n"
		"Names: the registry and the config say which programs run, with which options\n"
		"(the config's, then INTERFACE:OPTS, words separated by commas); groups come\n"
		"from the config's [Aliases]; -t defaults to its [General] time.\n"
		"--run: start CMD, with each PROGRAM given -p ITS_PID --children and started\n"
		"first; CMD runs once they are all tracing, and its end ends the capture.\n"
		"\n",
		marple_progname, marple_progname);
	options_usage(f, options);
	fputs("\n"
	      "Collectors see MARPLE_SELF_PIDS and MARPLE_SELF_PGID (see marple-collect(1)).\n"
	      "Exit status: 0 ok; 1 a collector failed (named), the rest written;\n"
	      "2 usage error; 3 nothing written.  With --run: CMD's exit status\n"
	      "(128+N: killed by signal N; 127: CMD not found, 126: not runnable).\n",
	      f);
}

/* A duration, what for the message: "bad duration 'ten' (...)". */
static uint64_t duration_arg(const char *what, const char *arg)
{
	uint64_t ns;

	if (marple_parse_duration_ns(arg, &ns) < 0)
		marple_usage_error("bad %s '%s' (want seconds, or 500ms, 2m, 1h, 1d; -t 0: until a signal)", what, arg);
	return ns;
}

/* --keep-bytes SIZE: bytes, or a number ending in K, M or G (powers of 1024) */
static uint64_t size_arg(const char *opt, const char *arg)
{
	char *end;
	unsigned long long v = strtoull(arg, &end, 10);
	uint64_t unit = 1;

	if (end != arg && *end && strchr("kK", *end))
		unit = 1ull << 10, end++;
	else if (end != arg && *end && strchr("mM", *end))
		unit = 1ull << 20, end++;
	else if (end != arg && *end && strchr("gG", *end))
		unit = 1ull << 30, end++;
	if (end == arg || *end || arg[0] == '-' || v == 0 || v > UINT64_MAX / unit)
		marple_usage_error("%s: '%s' is not a size (e.g. 500000, 500K, 20M, 1G)", opt, arg);
	return (uint64_t)v * unit;
}

/* A collector's command line: PROGRAM ARG..., what the capture adds (-p PID
 * --children for a command, --every), then DURATION. */
static void collector_argv(struct supervisor *s, struct collector *c, const char *name, char *const *args, size_t n)
{
	size_t a = 0;

	c->name = name;
	c->argv = marple_calloc(n + 6, sizeof(char *));
	for (size_t k = 0; k < n; k++)
		c->argv[a++] = args[k];
	if (s->run_argv) {	/* the pid is known once the command is started */
		c->argv[a++] = "-p";
		c->argv[a++] = s->run_pid_text;
		c->argv[a++] = "--children";
	}
	if (s->every) {	/* before the operand, where every collector takes options */
		c->argv[a++] = "--every";
		c->argv[a++] = (char *)s->every;
	}
	c->argv[a] = (char *)s->duration;
	c->out_fd = c->err_fd = -1;
}

/* NAME PROGRAM [ARG...] groups separated by "--"; DURATION goes after each. */
static void parse_collectors(struct supervisor *s, int argc, char **argv)
{
	int i = 0;

	s->c = marple_calloc((size_t)argc / 2 + 1, sizeof(*s->c));
	while (i < argc) {
		int end = i;
		while (end < argc && strcmp(argv[end], "--") != 0)
			end++;
		if (end - i < 2)
			marple_usage_error("each collector is NAME PROGRAM [ARG...]%s%s%s",
				    i < argc ? " (got '" : "", i < argc ? argv[i] : "", i < argc ? "' alone)" : "");
		collector_argv(s, &s->c[s->n++], argv[i], argv + i + 1, (size_t)(end - i - 1));
		i = end + 1;
		if (end + 1 == argc)
			marple_usage_error("a '--' with no collector after it");
	}
	if (s->n == 0)
		marple_usage_error("name at least one collector: NAME PROGRAM [ARG...]");
}

/* Whether the operands are interface and group names (callstack cpu
 * offcpu:-m,1000), not NAME PROGRAM [ARG...]: no "--" between them, and the
 * second is no program (a path, or marple-...). */
static int names_given(int argc, char **argv)
{
	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], "--"))
			return 0;
	return argc <= 1 || (!strchr(argv[1], '/') && strncmp(argv[1], "marple-", 7) != 0);
}

/* The directory this program is in ("" if /proc cannot say). */
static void own_dir(char *dir, size_t cap)
{
	ssize_t n = readlink("/proc/self/exe", dir, cap - 1);
	dir[n > 0 ? n : 0] = 0;
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	else
		dir[0] = 0;
}

/* make's marple-registry beside us, or the installed one; NULL if neither. */
static char *find_registry(const char *dir)
{
	char *path;

	if (asprintf(&path, "%s/marple-registry", dir) >= 0 && access(path, R_OK) == 0)
		return path;
	free(path);
	if (asprintf(&path, "%s/../share/marple/registry", dir) >= 0 && access(path, R_OK) == 0)
		return path;
	marple_fatal(EXIT_DATA, "the registry of programs is missing (looked for %s/marple-registry and "
		     "%s/../share/marple/registry; run make)", dir, dir);
}

/* A collector's program: in $MARPLE_LIBEXEC when set (tests), else beside
 * us, else on PATH; NULL (named) when there is none. */
static char *find_program(const char *program, const char *iface, const char *dir)
{
	const char *libexec = getenv("MARPLE_LIBEXEC");
	char *path;

	if (asprintf(&path, "%s/%s", libexec && *libexec ? libexec : dir, program) < 0)
		marple_fatal(EXIT_DATA, "out of memory");
	if (access(path, X_OK) == 0)
		return path;
	free(path);
	if (!(libexec && *libexec)) {
		char *search = marple_strdup(getenv("PATH") ? getenv("PATH") : ""), *sv;
		for (char *d = strtok_r(search, ":", &sv); d; d = strtok_r(NULL, ":", &sv))
			if (asprintf(&path, "%s/%s", d, program) >= 0 && access(path, X_OK) == 0) {
				free(search);
				return path;
			} else
				free(path);
		free(search);
	}
	marple_warn("%s: not built here (no %s in %s or PATH)", iface, program, libexec && *libexec ? libexec : dir);
	return NULL;
}

/* --plan: each collector's command line, one a line, words separated by tabs. */
static noreturn void print_plan(const struct plan *plan)
{
	for (size_t i = 0; i < plan->n; i++) {
		printf("%s\t%s", plan->c[i].interface, plan->c[i].program);
		for (size_t k = 0; k < plan->c[i].nargs; k++)
			printf("\t%s", plan->c[i].args[k]);
		putchar('\n');
	}
	marple_close_stdout();
	exit(EXIT_OK);
}

/* Interface and group names: the registry and the config say which
 * programs run, with which options (lib/format/plan.h). */
static void plan_collectors(struct supervisor *s, int argc, char **argv)
{
	static struct registry reg;
	static struct plan plan;
	char dir[PATH_MAX], *why;

	own_dir(dir, sizeof(dir));
	if (!s->registry)
		s->registry = find_registry(dir);
	int status;
	if (registry_read(&reg, s->registry) < 0)
		exit(EXIT_DATA);
	if ((status = config_load(s->registry, s->plan_only)))
		exit(status);
	static char *config_time;	/* the config's [General] time, kept for the run */

	if (!s->time_given && !s->run_argv && !s->every) {
		free(config_time);
		s->duration = config_time = config_value("General", "time");
		s->duration_ns = duration_arg("[General] time", s->duration);
	}
	uint64_t span_ns = s->every ? s->every_ns : s->duration_ns;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct plan_request rq = {
		.names = argv, .nnames = (size_t)argc, .every = s->every != NULL, .run = s->run_argv != NULL,
		.include_self = s->include_self, .capture_s = (span_ns + NS_PER_S - 1) / NS_PER_S,
		.cpus = cpus > 0 ? (uint64_t)cpus : 1,
	};
	if (plan_make(&plan, &reg, &rq, &why) < 0)
		marple_usage_error("%s", why ? why : "out of memory");
	if (s->plan_only)
		print_plan(&plan);
	s->c = marple_calloc(plan.n + 1, sizeof(*s->c));
	for (size_t i = 0; i < plan.n; i++) {
		struct plan_collector *pc = &plan.c[i];
		char *path = find_program(pc->program, pc->interface, dir);
		if (!path) {
			s->failed = 1;
			continue;
		}
		free(pc->program);
		pc->program = path;
		pc->args = marple_grow(pc->args, &pc->cap, pc->nargs + 2, sizeof(*pc->args));
		memmove(pc->args + 1, pc->args, (pc->nargs + 1) * sizeof(*pc->args));
		pc->args[0] = path;
		collector_argv(s, &s->c[s->n++], pc->interface, pc->args, pc->nargs + 1);
	}
	if (s->n == 0)
		marple_fatal(EXIT_NOTHING, "no collector could start");
}

static void parse_args(struct supervisor *s, int argc, char **argv)
{
	int ch;

	s->duration = "0";
	s->grace_ns = 10 * NS_PER_S;
	/* in order: the collectors' own options follow their NAME PROGRAM;
	 * --run ends the options too (marple record names no interface) */
	while (!(optind > 0 && optind < argc && !strcmp(argv[optind], "--run")) &&
	       (ch = options_getopt_inorder(options, argc, argv)) != -1) {
		switch (ch) {
		case 't':
			s->duration_ns = duration_arg("duration", optarg);
			s->duration = optarg;
			s->time_given = 1;
			break;
		case OPT_INCLUDE_SELF: s->include_self = 1; break;
		case OPT_REGISTRY: s->registry = optarg; break;
		case OPT_PLAN: s->plan_only = 1; break;
		case 'o': s->out_path = strcmp(optarg, "-") == 0 ? NULL : optarg; break;
		case 'f': s->force = 1; break;
		case 'g': s->grace_ns = duration_arg("grace", optarg); break;
		case 'n': marple_progname = optarg; break;
		case 'e':
			s->every_ns = duration_arg("--every", optarg);
			s->every = optarg;
			if (s->every_ns < 100000000ull)
				marple_usage_error("--every: '%s' is shorter than 100ms", optarg);
			break;
		case OPT_KEEP: s->keep = marple_opt_u64("--keep", optarg, 1, UINT32_MAX); break;
		case OPT_KEEP_BYTES: s->keep_bytes = size_arg("--keep-bytes", optarg); break;
		case OPT_EACH_FILE: s->each_file = optarg; break;
		case OPT_SECONDS: {
			uint64_t ns = duration_arg("duration", optarg);
			printf("%llu\n", (unsigned long long)((ns + NS_PER_S - 1) / NS_PER_S));
			marple_close_stdout();
			exit(EXIT_OK);
		}
		case 'h': usage(stdout); exit(EXIT_OK);
		default: marple_usage_try();
		}
	}
	if ((s->keep || s->keep_bytes || s->each_file) && !s->every)
		marple_usage_error("--keep, --keep-bytes and --each-file go with --every");
	if (s->every && !s->out_path)
		marple_usage_error("--every writes one file per interval: name them with -o FILE");
	int ops = argc - optind;
	for (int i = 0; i < argc - optind; i++)
		if (strcmp(argv[optind + i], "--run") == 0) {
			ops = i;
			s->run_argv = argv + optind + i + 1;
			if (!*s->run_argv)
				marple_usage_error("--run: name the command to run");
			if (!s->out_path)
				marple_usage_error("--run: the command's output is standard output: name the capture with -o FILE");
			break;
		}
	if (names_given(ops, argv + optind))
		plan_collectors(s, ops, argv + optind);
	else
		parse_collectors(s, ops, argv + optind);
}

/* ------------------------------------------------------------ signals */

static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };

/* SIGINT, SIGTERM, SIGHUP and SIGCHLD arrive on a signalfd.  A stop signal
 * ignored when we started (nohup, a background job) stays ignored. */
static void signals_setup(struct supervisor *s)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++) {
		struct sigaction old;
		if (sigaction(stop_signals[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaddset(&set, stop_signals[i]);
	}
	signal(SIGCHLD, SIG_DFL);	/* ignored, children would reap themselves */
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		marple_fatal(EXIT_NOTHING, "sigprocmask: %s", strerror(errno));
	s->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (s->sigfd < 0)
		marple_fatal(EXIT_NOTHING, "signalfd: %s", strerror(errno));
}

/* The one who started us killed (kill -9 of the driver) or gone: its death
 * comes to us as SIGTERM, so the collectors are stopped and the file written
 * as on any stop, never left running unseen with their BPF attached.  A
 * parent already gone before the prctl (reparented) counts the same. */
static void stop_with_parent(void)
{
	pid_t parent = getppid();

	if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
		raise(SIGTERM);
}

/* A bit of a /proc/PID/status signal mask line ("SigCgt:\t0000000000004002"). */
static int status_mask_has(const char *status, const char *field, int sig)
{
	const char *line = strstr(status, field);
	if (!line)
		return 0;
	unsigned long long mask = strtoull(line + strlen(field), NULL, 16);
	return (int)(mask >> (sig - 1) & 1);
}

/* Has pid decided what SIGTERM does to it (caught or ignored)?  Until it has,
 * SIGTERM's default action kills it before it writes a thing.  A pid whose
 * status cannot be read (ended meanwhile) is as good as ready. */
static int handles_sigterm(pid_t pid)
{
	char path[64], status[4096];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	ssize_t n = read(fd, status, sizeof(status) - 1);
	close(fd);
	if (n <= 0)
		return 1;
	status[n] = 0;
	return status_mask_has(status, "\nSigCgt:", SIGTERM) || status_mask_has(status, "\nSigIgn:", SIGTERM);
}

static uint64_t stop_wait_ns(const struct supervisor *s)
{
	return s->grace_ns < STOP_WAIT_NS ? s->grace_ns : STOP_WAIT_NS;
}

/* While stopping: SIGTERM to each running collector once it handles it (or
 * STOP_WAIT_NS after the stop), and again each second in case a handler set
 * meanwhile missed it. */
/* When c is killed for not stopping: GRACE after it last wrote to its
 * section since its first SIGTERM.  As for overrunning the duration, a
 * collector writing out a long capture's stacks on a loaded machine (memleak
 * and offcpu took over 20 s at a load of 20) is not cut off while it makes
 * progress. */
static uint64_t kill_at(const struct supervisor *s, const struct collector *c)
{
	return c->grew_ns + s->grace_ns;
}

static off_t section_size(const struct collector *c)
{
	struct stat st;

	return c->out_fd >= 0 && fstat(c->out_fd, &st) == 0 ? st.st_size : 0;
}

/* Whether c's section grew since last looked at (then grew_ns is now). */
static int still_writing(struct collector *c, uint64_t now)
{
	off_t size = section_size(c);

	if (size == c->size_seen)
		return 0;
	c->size_seen = size;
	c->grew_ns = now;
	return 1;
}

static void send_terms(struct supervisor *s, uint64_t now)
{
	for (size_t i = 0; i < s->started; i++) {
		struct collector *c = &s->c[i];
		if (!c->running || c->killed || (c->term_ns && now < c->term_ns + NS_PER_S))
			continue;
		if (!c->term_ns && !handles_sigterm(c->pid)) {
			if (now < s->stop_ns + stop_wait_ns(s))
				continue;
			c->deaf = 1;
		}
		kill(c->pid, SIGTERM);
		c->term_ns = now;
		if (!c->first_term_ns) {
			c->first_term_ns = now;
			c->grew_ns = now;
			c->size_seen = section_size(c);
		}
	}
}

static void stop_all(struct supervisor *s, uint64_t now)
{
	if (s->stopping)
		return;
	s->stopping = 1;
	s->stop_ns = now;
	send_terms(s, now);
}

static void reap_hooks(struct supervisor *s);
static void reap_command(struct supervisor *s);
static int ended_badly(const struct supervisor *s, const struct collector *c, char *how, size_t cap);

/* --every: a collector that ended well while the capture goes on (one that
 * stops cleanly on a SIGTERM someone else sent) is missing from every later
 * file: said now, and the exit status 1.  One that failed is said at the
 * end (finish_every); an end near the duration is not early. */
static void say_ended_early(struct supervisor *s, const struct collector *c)
{
	uint64_t now = marple_now_monotonic_ns(), slack = s->every_ns > NS_PER_S ? s->every_ns : NS_PER_S;
	char how[64];

	if (!s->every_ns || s->stopping || (s->duration_ns && now + slack >= s->start_ns + s->duration_ns) ||
	    ended_badly(s, c, how, sizeof(how)))
		return;
	marple_warn("%s ended (%s) %.1f s into the capture: the interval files after it have no %s section",
		    c->name, how, (double)(now - s->start_ns) / NS_PER_S, c->name);
	s->failed = 1;
}

static void reap(struct supervisor *s)
{
	for (size_t i = 0; i < s->started; i++) {
		struct collector *c = &s->c[i];
		if (c->running && waitpid(c->pid, &c->status, WNOHANG) == c->pid) {
			c->running = 0;
			s->running--;
			say_ended_early(s, c);
		}
	}
	reap_hooks(s);
	reap_command(s);
}

/* Everything the signalfd holds: stop signals stop the capture, SIGCHLD reaps. */
static void read_signals(struct supervisor *s)
{
	struct signalfd_siginfo si;

	while (read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if ((int)si.ssi_signo == SIGCHLD)
			continue;
		if (!s->signo)
			s->signo = (int)si.ssi_signo;
		if (s->started)
			stop_all(s, marple_now_monotonic_ns());
	}
	reap(s);
}

/* ------------------------------------------------------------ starting */

/* An unlinked temporary file in dir: gone with us, whatever ends us. */
static int scratch_file(const char *dir)
{
	char *path = marple_malloc(strlen(dir) + 32);
	sprintf(path, "%s/.marple-collect.XXXXXX", dir);
	int fd = mkostemp(path, O_CLOEXEC);	/* dup2 makes the child's copy inheritable */
	if (fd < 0)
		marple_warn("cannot make a temporary file in %s: %s", dir, strerror(errno));
	else
		unlink(path);
	free(path);
	return fd;
}

/* Those given to us (the driver's) first, then ours. */
static char *self_pids_text(const struct supervisor *s, pid_t self)
{
	const char *given = getenv("MARPLE_SELF_PIDS");
	size_t glen = given && *given ? strlen(given) + 1 : 0;
	char *text = marple_malloc(glen + (s->started + 2) * 24);
	size_t len = (size_t)sprintf(text, "%s%s%d", glen ? given : "", glen ? " " : "", (int)s->self);

	for (size_t i = 0; i < s->started; i++)
		len += (size_t)sprintf(text + len, " %d", (int)s->c[i].pid);
	sprintf(text + len, " %d", (int)self);
	return text;
}

/* The child between fork and exec: its own process group (the first
 * collector's), files, default signals, the MARPLE_SELF_* environment. */
static noreturn void exec_collector(const struct supervisor *s, const struct collector *c, int errpipe)
{
	sigset_t none;
	char pgid[24];
	int null = open("/dev/null", O_RDONLY);

	setpgid(0, s->pgid);
	/* ended with us, whatever ends us (the OOM killer's SIGKILL included):
	 * never reparented to init with its BPF attached, writing unseen */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != s->self)
		goto fail;
	if (null < 0 || dup2(null, 0) < 0 || dup2(c->out_fd, 1) < 0 || dup2(c->err_fd, 2) < 0)
		goto fail;
	if (null > 2)
		close(null);
	for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
		signal(stop_signals[i], SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	snprintf(pgid, sizeof(pgid), "%d", (int)getpgrp());
	setenv("MARPLE_SELF_PIDS", self_pids_text(s, getpid()), 1);
	setenv("MARPLE_SELF_PGID", pgid, 1);
	if (s->ready_dir) {
		char ready[PATH_MAX];
		snprintf(ready, sizeof(ready), "%s/%zu", s->ready_dir, (size_t)(c - s->c));
		setenv("MARPLE_READY_FILE", ready, 1);
	}
	execvp(c->argv[0], c->argv);
fail:;
	int err = errno;
	if (write(errpipe, &err, sizeof(err)) < 0)
		_exit(127);
	_exit(127);
}

/* fork, not posix_spawn: the first collector leads the process group, and
 * only a child can learn its group's id before exec, for MARPLE_SELF_PGID. */
static int start_collector(struct supervisor *s, struct collector *c)
{
	int pipefd[2], err = 0;

	c->out_fd = scratch_file(s->tmpdir);
	c->err_fd = c->out_fd < 0 ? -1 : memfd_create("marple-collect-messages", MFD_CLOEXEC);
	if (c->out_fd >= 0 && c->err_fd < 0)
		marple_warn("cannot make a memfd for %s's messages: %s", c->name, strerror(errno));
	if (c->err_fd < 0 || pipe2(pipefd, O_CLOEXEC) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0)
		exec_collector(s, c, pipefd[1]);
	close(pipefd[1]);
	if (pid < 0) {
		err = errno;
	} else {
		setpgid(pid, s->pgid ? s->pgid : pid);	/* whoever runs first */
		if (read(pipefd[0], &err, sizeof(err)) != (ssize_t)sizeof(err))
			err = 0;
		c->pid = pid;
		c->running = 1;
		s->running++;
		if (!s->pgid)
			s->pgid = pid;
	}
	close(pipefd[0]);
	if (err) {
		marple_warn("%s: cannot run %s: %s", c->name, c->argv[0], strerror(err));
		c->unrunnable = 1;
		s->failed = 1;
	}
	return pid < 0 ? -1 : 0;
}

/* Start them in order; a signal meanwhile leaves the rest unstarted, named. */
static void start_all(struct supervisor *s)
{
	size_t i;

	read_signals(s);
	for (i = 0; i < s->n && !s->signo; i++) {
		if (start_collector(s, &s->c[i]) < 0) {
			s->failed = 1;
			break;
		}
		s->started = i + 1;
		read_signals(s);
	}
	s->start_ns = marple_now_monotonic_ns();
	if (i < s->n && s->signo) {
		char names[4096] = "";
		for (size_t k = i; k < s->n; k++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), " %s", s->c[k].name);
		if (s->started)
			marple_warn("interrupted while starting the collectors; not started:%s", names);
		s->failed = 1;
	}
	if (s->signo && s->started)
		stop_all(s, s->start_ns);
}

/* ------------------------------------------------------------ --run */

/* The command between fork and exec: our standard input and output (the
 * user's), default signals, held until run_go writes (or, closed unwritten,
 * never run: 125). */
static noreturn void exec_command(struct supervisor *s, int go)
{
	sigset_t none;
	char c;

	for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
		signal(stop_signals[i], SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (read(go, &c, 1) != 1)
		_exit(125);
	execvp(s->run_argv[0], s->run_argv);
	int err = errno;
	fprintf(stderr, "%s: cannot run %s: %s\n", marple_progname, s->run_argv[0], strerror(err));
	_exit(err == ENOENT ? 127 : 126);
}

/* Fork the command, held: its pid is every collector's -p before they start. */
static void start_command(struct supervisor *s)
{
	int go[2];
	const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	s->ready_dir = marple_malloc(strlen(tmp) + 32);
	sprintf(s->ready_dir, "%s/marple-collect-ready.XXXXXX", tmp);
	if (!mkdtemp(s->ready_dir))
		marple_fatal(EXIT_NOTHING, "cannot make a folder in %s: %s", tmp, strerror(errno));
	if (pipe2(go, O_CLOEXEC) < 0)
		marple_fatal(EXIT_NOTHING, "pipe: %s", strerror(errno));
	fflush(NULL);
	s->run_pid = fork();
	if (s->run_pid < 0)
		marple_fatal(EXIT_NOTHING, "fork: %s", strerror(errno));
	if (s->run_pid == 0)
		exec_command(s, go[0]);
	close(go[0]);
	s->run_go = go[1];
	s->run_status = -1;
	snprintf(s->run_pid_text, sizeof(s->run_pid_text), "%d", (int)s->run_pid);
}

/* Is collector i tracing (its ready file made), or ended? */
static int collector_settled(const struct supervisor *s, size_t i)
{
	char ready[PATH_MAX];

	snprintf(ready, sizeof(ready), "%s/%zu", s->ready_dir, i);
	return !s->c[i].running || access(ready, F_OK) == 0;
}

/* Let the command run once every collector traces (a collector that failed
 * is named as usual; the rest still record), or never if a stop came first.
 * A collector not tracing after STOP_WAIT_NS * 30 is not waited for. */
static void release_command(struct supervisor *s)
{
	struct pollfd pfd = { .fd = s->sigfd, .events = POLLIN };
	uint64_t give_up = marple_now_monotonic_ns() + 30 * STOP_WAIT_NS;
	size_t i = 0;

	while (!s->signo && marple_now_monotonic_ns() < give_up) {
		while (i < s->started && collector_settled(s, i))
			i++;
		if (i == s->started)
			break;
		if (poll(&pfd, 1, STOP_POLL_MS) < 0 && errno != EINTR)
			marple_fatal(EXIT_DATA, "poll: %s", strerror(errno));
		read_signals(s);
	}
	if (i < s->started && !s->signo)
		marple_warn("%s is not tracing after %llu s; running the command anyway", s->c[i].name,
			    (unsigned long long)(30 * STOP_WAIT_NS / NS_PER_S));
	if (!s->signo && s->running && write(s->run_go, "g", 1) != 1)
		marple_warn("cannot start the command: %s", strerror(errno));
	else if (s->signo || !s->running)
		marple_warn("%s: not run (%s)", s->run_argv[0], s->signo ? "interrupted" : "no collector is running");
	close(s->run_go);	/* unwritten: it ends without running */
	s->run_go = -1;
}

/* The command ended: the capture ends with it (collectors given -p end by
 * themselves; any other is stopped). */
static void reap_command(struct supervisor *s)
{
	int st;

	if (!s->run_pid || waitpid(s->run_pid, &st, WNOHANG) != s->run_pid)
		return;
	s->run_pid = 0;
	s->run_status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	if (s->started)
		stop_all(s, marple_now_monotonic_ns());
}

/* After the capture: wait for a command still running (stopped by a signal
 * it handles slowly), say how it ended; its status is ours. */
static int command_status(struct supervisor *s)
{
	int st;

	if (s->run_pid && waitpid(s->run_pid, &st, 0) == s->run_pid)
		s->run_status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	s->run_pid = 0;
	for (size_t i = 0; i < s->n; i++) {
		char ready[PATH_MAX];
		snprintf(ready, sizeof(ready), "%s/%zu", s->ready_dir, i);
		unlink(ready);
	}
	rmdir(s->ready_dir);
	if (s->run_status > 0)
		marple_warn("%s exited with status %d", s->run_argv[0], s->run_status);
	return s->run_status < 0 ? 125 : s->run_status;
}

/* ------------------------------------------------------------ supervising */

static void write_due_intervals(struct supervisor *s, int final);

static void show_progress(struct supervisor *s, uint64_t now)
{
	uint64_t el = (now - s->start_ns) / NS_PER_S, total = (s->duration_ns + NS_PER_S - 1) / NS_PER_S;
	char names[512] = "", bar[31];

	if (!s->tty || s->shown == 1 + 2 * el + (uint64_t)s->stopping)
		return;
	s->shown = 1 + 2 * el + (uint64_t)s->stopping;
	for (size_t i = 0; i < s->started; i++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? " " : "", s->c[i].name);
	if (s->stopping) {
		fprintf(stderr, "\r\033[K%s: stopping %s", marple_progname, names);
	} else if (total) {
		uint64_t fill = el >= total ? 30 : el * 30 / total;
		for (int k = 0; k < 30; k++)
			bar[k] = (uint64_t)k < fill ? '#' : '-';
		bar[30] = 0;
		fprintf(stderr, "\r\033[K%s: [%s] %llus left  %s", marple_progname, bar,
			(unsigned long long)(el >= total ? 0 : total - el), names);
	} else {
		fprintf(stderr, "\r\033[K%s: collecting for %llus, Ctrl-C to stop  %s", marple_progname,
			(unsigned long long)el, names);
	}
}

/* The deadlines: GRACE past the duration, SIGTERM as send_terms says while
 * stopping, SIGKILL GRACE after a collector's first SIGTERM. */
static void enforce_deadlines(struct supervisor *s, uint64_t now)
{
	uint64_t grace_s = s->grace_ns / NS_PER_S;

	if (!s->stopping && s->duration_ns && now >= s->start_ns + s->duration_ns) {
		int overdue = 0;
		for (size_t i = 0; i < s->started; i++) {
			struct collector *c = &s->c[i];
			if (!c->running)
				continue;
			if (!c->watched) {	/* from the duration's end on */
				c->watched = 1;
				c->grew_ns = s->start_ns + s->duration_ns;
				c->size_seen = section_size(c);
			}
			if (still_writing(c, now) || now < c->grew_ns + s->grace_ns)
				continue;
			c->overran = overdue = 1;
			marple_warn("%s ran %llu s past its duration; stopping it (SIGTERM)", c->name,
				(unsigned long long)grace_s);
		}
		if (overdue)
			stop_all(s, now);
	}
	if (!s->stopping)
		return;
	for (size_t i = 0; i < s->started; i++) {
		struct collector *c = &s->c[i];
		if (!c->running || c->killed || !c->first_term_ns || now < kill_at(s, c))
			continue;
		if (still_writing(c, now))
			continue;
		c->killed = 1;
		marple_warn("%s did not stop within %llu s of SIGTERM (nor wrote anything for as long); "
			    "killed it (SIGKILL)", c->name, (unsigned long long)grace_s);
		kill(c->pid, SIGKILL);
	}
	send_terms(s, now);
}

/* Milliseconds until the next thing to do, -1 for none. */
static int next_wakeup_ms(const struct supervisor *s, uint64_t now)
{
	uint64_t at = UINT64_MAX;

	if (s->tty)
		at = now + NS_PER_S - (now - s->start_ns) % NS_PER_S;
	if (s->every_ns) {	/* sections are looked for this often */
		uint64_t scan = s->every_ns / 4 < NS_PER_S ? s->every_ns / 4 : NS_PER_S;
		if (now + scan < at)
			at = now + scan;
	}
	if (!s->stopping && s->duration_ns) {	/* the end, then a look every second */
		uint64_t end = s->start_ns + s->duration_ns;
		uint64_t look = now < end ? end : now + NS_PER_S;
		if (look < at)
			at = look;
	}
	for (size_t i = 0; s->stopping && i < s->started; i++) {
		const struct collector *c = &s->c[i];
		uint64_t next;
		if (!c->running || c->killed)
			continue;
		if (!c->term_ns)	/* its handler is awaited */
			next = now + STOP_POLL_MS * 1000000ull;
		else if (c->term_ns + NS_PER_S < kill_at(s, c))
			next = c->term_ns + NS_PER_S;
		else
			next = kill_at(s, c);
		if (next < at)
			at = next;
	}
	if (at == UINT64_MAX)
		return -1;
	if (at <= now)
		return 0;
	return at - now > 1000000 * NS_PER_S ? 1000000000 : (int)((at - now + 999999) / 1000000);
}

static void supervise(struct supervisor *s)
{
	struct pollfd pfd = { .fd = s->sigfd, .events = POLLIN };

	read_signals(s);
	while (s->running) {
		uint64_t now = marple_now_monotonic_ns();
		enforce_deadlines(s, now);
		show_progress(s, now);
		if (poll(&pfd, 1, next_wakeup_ms(s, now)) < 0 && errno != EINTR)
			marple_fatal(EXIT_DATA, "poll: %s", strerror(errno));
		read_signals(s);
		if (s->every_ns)
			write_due_intervals(s, 0);
	}
	if (s->tty)
		fputs("\r\033[K", stderr);
}

/* ------------------------------------------------------------ joining */

/* Cut an unfinished last line (a collector stopped mid-write); its length. */
static off_t trim_partial(int fd)
{
	off_t size = lseek(fd, 0, SEEK_END), end = size;
	char buf[4096];

	while (end > 0) {
		size_t len = end < (off_t)sizeof(buf) ? (size_t)end : sizeof(buf);
		if (pread(fd, buf, len, end - (off_t)len) != (ssize_t)len)
			return 0;
		char *nl = memrchr(buf, '\n', len);
		if (nl) {
			end = end - (off_t)len + (nl - buf) + 1;
			break;
		}
		end -= (off_t)len;
	}
	if (end < size && ftruncate(fd, end) < 0)
		return 0;
	return size - end;
}

/* The last line of a collector's messages that is not blank. */
static void last_line(int fd, char *line, size_t cap)
{
	off_t size = lseek(fd, 0, SEEK_END);
	size_t len = size > (off_t)cap - 1 ? cap - 1 : (size_t)size;
	ssize_t got = pread(fd, line, len, size - (off_t)len);
	char *end, *start;

	line[got > 0 ? got : 0] = 0;
	end = line + strlen(line);
	while (end > line && (end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		*--end = 0;
	start = memrchr(line, '\n', (size_t)(end - line));
	if (start)
		memmove(line, start + 1, strlen(start + 1) + 1);
}

/* Parse a section file; its records (-1 if it is not a valid stream, why in err). */
static long long count_records(int fd, char *err, size_t cap)
{
	FILE *f = fdopen(dup(fd), "r");
	long long records = 0;
	int headers = 0;
	enum stream_item it;

	if (!f || fseeko(f, 0, SEEK_SET) < 0) {
		snprintf(err, cap, "%s", strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	struct stream_reader *r = stream_reader_new(f, "section");
	while ((it = stream_reader_next(r)) != STREAM_EOF && it != STREAM_ERROR) {
		headers += it == STREAM_HEADER;
		records += it == STREAM_RECORD;
	}
	if (it == STREAM_ERROR)
		snprintf(err, cap, "line %lu: %s", stream_reader_line(r), stream_reader_error(r));
	else if (!headers)
		snprintf(err, cap, "no section header");
	stream_reader_free(r);
	fclose(f);
	return it == STREAM_ERROR || !headers ? -1 : records;
}

/* Bytes [from, to) of fd into out; 0, or -1 with errno set. */
static int copy_range(int fd, off_t from, off_t to, FILE *out)
{
	char buf[65536];

	while (from < to) {
		size_t want = to - from < (off_t)sizeof(buf) ? (size_t)(to - from) : sizeof(buf);
		ssize_t got = pread(fd, buf, want, from);
		if (got <= 0)
			return got < 0 ? -1 : (errno = EIO, -1);
		if (fwrite(buf, 1, (size_t)got, out) != (size_t)got)
			return -1;
		from += got;
	}
	return 0;
}

static int copy_section(int fd, FILE *out)
{
	return copy_range(fd, 0, lseek(fd, 0, SEEK_END), out);
}

/* A collector's messages as a JSON array of its lines that are not blank (at
 * most MESSAGE_LINES, each at most MESSAGE_BYTES, then how many more); NULL if
 * it said nothing. */
#define MESSAGE_LINES 50
#define MESSAGE_BYTES 1000
static json_t *messages_from(int fd, off_t from)
{
	FILE *f = lseek(fd, 0, SEEK_END) > from ? fdopen(dup(fd), "r") : NULL;
	json_t *a = json_array();
	char *line = NULL;
	size_t cap = 0, more = 0;
	ssize_t n;

	if (!f || fseeko(f, from, SEEK_SET) < 0)
		goto done;
	while ((n = getline(&line, &cap, f)) > 0) {
		while (n > 0 && strchr("\n\r \t", line[n - 1]))
			n--;
		if (n == 0)
			continue;
		if (json_array_size(a) == MESSAGE_LINES) {
			more++;
			continue;
		}
		json_t *v = json_stringn(line, n < MESSAGE_BYTES ? (size_t)n : MESSAGE_BYTES);
		json_array_append_new(a, v ? v : json_string("(a line that is not UTF-8)"));
	}
	if (more) {
		char tail[64];
		snprintf(tail, sizeof(tail), "(%zu more lines)", more);
		json_array_append_new(a, json_string(tail));
	}
done:
	free(line);
	if (f)
		fclose(f);
	if (json_array_size(a) == 0) {
		json_decref(a);
		return NULL;
	}
	return a;
}

/* The section into out, its last trailer with the collector's messages added
 * ("messages": a capture from cron keeps what the collector said).  A last
 * line that is no trailer (a collector cut short) is copied as it is. */
static int copy_section_with_messages(int fd, json_t *messages, FILE *out)
{
	off_t size = lseek(fd, 0, SEEK_END), start = size - 1;
	char c;

	if (!messages)
		return copy_section(fd, out);
	while (start > 0 && pread(fd, &c, 1, start - 1) == 1 && c != '\n')
		start--;
	size_t len = (size_t)(size - start);
	char *last = marple_malloc(len + 1);
	json_t *t = NULL;
	int rc = -1;

	if (pread(fd, last, len, start) == (ssize_t)len)
		t = json_loadb(last, len, 0, NULL);
	if (json_is_object(t) && json_object_get(t, "trailer")) {
		json_object_set(t, "messages", messages);
		rc = copy_range(fd, 0, start, out) < 0 ? -1 : stream_write_json(out, t) < 0 ? (errno = EILSEQ, -1) : 0;
	} else {
		rc = copy_section(fd, out);
	}
	json_decref(t);
	free(last);
	return rc;
}

/* How a collector ended, and whether that is a failure. */
static int ended_badly(const struct supervisor *s, const struct collector *c, char *how, size_t cap)
{
	int code = WIFEXITED(c->status) ? WEXITSTATUS(c->status) : 0;
	int sig = WIFSIGNALED(c->status) ? WTERMSIG(c->status) : 0;

	if (sig)
		snprintf(how, cap, "killed by SIG%s", sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
	else
		snprintf(how, cap, "exit %d", code);
	if (c->killed || c->overran || c->unrunnable)
		return 1;
	/* told to stop by a signal of ours: dying of it (or exit 128+N) is stopping */
	if (s->signo && (sig == SIGTERM || sig == SIGINT || code > 128))
		return 0;
	return sig || code;
}

/* One collector's section into out; 1 if it had one, 0 if not, -1 (errno
 * set) when out could not take it. */
static int join_one(struct supervisor *s, struct collector *c, FILE *out)
{
	char how[64], msg[1024];
	int bad = ended_badly(s, c, how, sizeof(how));
	off_t cut = trim_partial(c->out_fd);

	if (cut > 0) {
		marple_warn("%s: dropped an unfinished last line (%lld bytes) of its output", c->name, (long long)cut);
		s->failed = 1;
	}
	if (bad) {
		last_line(c->err_fd, msg, sizeof(msg));
		/* the killed, the overrunning and the unrunnable were named already */
		if (!c->killed && !c->overran && !c->unrunnable)
			marple_warn("%s failed (%s)%s%s", c->name, how, *msg ? ": " : "", msg);
		s->failed = 1;
	} else if (lseek(c->err_fd, 0, SEEK_END) > 0) {
		/* remarks on success (lost samples...): shown, terminal or not (cron
		 * mails stderr), and kept in the trailer */
		fflush(stderr);
		copy_section(c->err_fd, stderr);
	}
	off_t size = lseek(c->out_fd, 0, SEEK_END);
	long long records = size ? count_records(c->out_fd, msg, sizeof(msg)) : 0;
	if (records < 0) {
		marple_warn("%s: its output is not a valid stream, left out: %s", c->name, msg);
		s->failed = 1;
		return 0;
	}
	/* nothing, or a header cut short: its data is lost, which is a failure
	 * even when our own SIGTERM ended it (the failed were named above) */
	if (size == 0 || (records == 0 && (bad || WIFSIGNALED(c->status) || WEXITSTATUS(c->status)))) {
		if (!bad)
			marple_warn("%s: ended (%s) before it wrote %s; no section%s", c->name, how,
				    size ? "a record" : "anything",
				    c->deaf ? " (it had no SIGTERM handler when the stop's wait for one ran out)" : "");
		s->failed = 1;
		return 0;
	}
	json_t *messages = messages_from(c->err_fd, 0);
	int rc = copy_section_with_messages(c->out_fd, messages, out);
	json_decref(messages);
	return rc < 0 ? -1 : 1;
}

/* out (a file) cut back to its first whole bytes: 0, or -1. */
static int rewind_out(const struct supervisor *s, FILE *out, off_t whole)
{
	__fpurge(out);		/* what did not fit, still buffered */
	clearerr(out);
	return s->out_path && ftruncate(fileno(out), whole) == 0 && fseeko(out, whole, SEEK_SET) == 0 ? 0 : -1;
}

/* A full disk at the join, while the collectors' own files hold it: the
 * largest section not joined yet (c[from] on) is left out and its space
 * freed, so that the others fit (they were all lost: issue 40).  0, or -1
 * when there is none to leave out. */
static int drop_largest(struct supervisor *s, size_t from)
{
	size_t best = SIZE_MAX;
	off_t most = 0;

	for (size_t j = from; j < s->started; j++) {
		off_t size = s->c[j].dropped ? 0 : lseek(s->c[j].out_fd, 0, SEEK_END);
		if (size > most)
			most = size, best = j;
	}
	if (best == SIZE_MAX || ftruncate(s->c[best].out_fd, 0) < 0)
		return -1;
	marple_warn("%s: its section (%lld bytes) left out: the disk is full, the others are kept", s->c[best].name,
		    (long long)most);
	s->c[best].dropped = 1;
	s->failed = 1;
	return 0;
}

/* out could not take a section (a full disk): cut it back to the sections
 * that were whole, which stay.  0, or -1 when none can be kept. */
static int keep_whole_sections(struct supervisor *s, FILE *out, off_t whole, int sections, int err)
{
	const char *name = s->out_path ? s->out_path : "<stdout>";

	if (!sections || rewind_out(s, out, whole) < 0) {
		marple_warn("%s: write error: %s; nothing written", name, strerror(err));
		return -1;
	}
	marple_warn("%s: write error: %s; kept the %d whole section%s that fitted (of %zu collectors)", name,
		    strerror(err), sections, sections == 1 ? "" : "s", s->started);
	s->failed = 1;
	return 0;
}

static int join_all(struct supervisor *s, struct outfile *o)
{
	FILE *out = marple_outfile_stream(o);
	int sections = 0;
	off_t whole = 0;

	for (size_t i = 0; i < s->started; i++) {
		if (s->c[i].dropped)
			continue;
		int got = join_one(s, &s->c[i], out);
		if (got > 0 && fflush(out) == 0) {
			sections++;
			whole = ftello(out);
		} else if (got != 0) {
			int err = errno;
			if (err == ENOSPC && rewind_out(s, out, whole) == 0 && drop_largest(s, i) == 0) {
				i--;	/* c[i] again, unless it was the one left out */
				continue;
			}
			if (keep_whole_sections(s, out, whole, sections, err) < 0) {
				marple_outfile_abort(o);
				return EXIT_NOTHING;
			}
			break;
		}
	}
	if (!sections) {
		if (s->signo && !s->started)
			marple_warn("interrupted before any collector started; nothing written");
		else
			marple_warn("no collector produced data; nothing written");
		marple_outfile_abort(o);	/* stdout: only frees it */
		return EXIT_NOTHING;
	}
	if ((s->force ? marple_outfile_commit(o) : marple_outfile_commit_new(o)) < 0)
		return EXIT_NOTHING;
	return s->failed ? EXIT_DATA : EXIT_OK;
}


/* ------------------------------------------------------------ --every */

/* A line of a collector's output: a header opens a section, a trailer
 * closes it (then it is whole: a span).  Collectors cut their sections on
 * the wall clock's multiples of the interval (collector_aligned_cut): a
 * section is known by the multiple it ends at, from its start — the first
 * starts anywhere before it, the others at the one before (give or take the
 * clocks' conversion). */
static void classify_line(const struct supervisor *s, struct collector *c, const char *line, size_t len, off_t start,
			  off_t end)
{
	json_t *j = json_loadb(line, len, 0, NULL);

	if (json_is_object(j) && json_object_get(j, "trailer")) {
		struct section_span *last = c->nspans > c->spans_done ? &c->spans[c->nspans - 1] : NULL;
		if (c->in_section && c->section_is_samples && last && last->end == c->section_start) {
			/* a timed stack section's samples: in its interval's file */
			last->end = end;
		} else if (c->in_section) {
			c->spans = marple_grow(c->spans, &c->spans_cap, c->nspans + 1, sizeof(*c->spans));
			uint64_t w = c->section_wall_ns, every = s->every_ns;
			uint64_t which = c->nspans ? (w + every / 2) / every + 1 : w / every + 1;
			c->spans[c->nspans++] = (struct section_span){ c->section_start, end, which };
		}
		c->in_section = 0;
	} else if (json_is_object(j) && json_object_get(j, "marple")) {
		c->in_section = 1;
		c->section_is_samples = timed_role(j) == TIMED_SAMPLES;
		c->section_start = start;
		c->section_wall_ns = (uint64_t)json_integer_value(json_object_get(j, "wall_ns"));
	}
	json_decref(j);
}

/* The whole lines c wrote since the last scan; only those that begin with
 * '{' are parsed (headers and trailers), records are skipped over. */
static void scan_sections(const struct supervisor *s, struct collector *c)
{
	size_t cap = 65536;
	char *buf = marple_malloc(cap);

	for (;;) {
		ssize_t got = pread(c->out_fd, buf, cap, c->scanned);
		if (got <= 0)
			break;
		size_t used = 0;
		char *nl;
		while ((nl = memchr(buf + used, '\n', (size_t)got - used))) {
			size_t len = (size_t)(nl - (buf + used));
			if (len && buf[used] == '{')
				classify_line(s, c, buf + used, len, c->scanned + (off_t)used, c->scanned + (off_t)(used + len + 1));
			used += len + 1;
		}
		if (used == 0) {	/* a line longer than buf, or one not finished yet */
			if ((size_t)got < cap)
				break;
			buf = marple_grow(buf, &cap, cap * 2, 1);
			continue;
		}
		c->scanned += (off_t)used;
	}
	free(buf);
}

/* What the collectors said since the last time, on stderr as it comes: a
 * week-long capture does not keep its remarks until the end. */
static void pass_messages_on(struct collector *c)
{
	off_t size = lseek(c->err_fd, 0, SEEK_END);

	if (size <= c->err_shown)
		return;
	fflush(stderr);
	copy_range(c->err_fd, c->err_shown, size, stderr);
	fflush(stderr);
	c->err_shown = size;
}

/* Messages shown and kept in a file: their memory given back but for the
 * last page or so, which names a failure at the end (last_line). */
static void forget_messages(struct collector *c)
{
	off_t done = c->err_shown < c->err_filed ? c->err_shown : c->err_filed;
	off_t keep_from = (lseek(c->err_fd, 0, SEEK_END) - 4096) & ~(off_t)4095;

	if (keep_from > done)
		keep_from = done & ~(off_t)4095;
	if (keep_from > 0)
		fallocate(c->err_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, keep_from);
}

/* Span sp of c into out, its trailer with the messages c wrote since its
 * last interval file ("messages": a capture from cron keeps them). */
static int copy_span(struct collector *c, const struct section_span *sp, FILE *out)
{
	off_t size = lseek(c->err_fd, 0, SEEK_END);
	json_t *messages = size > c->err_filed ? messages_from(c->err_fd, c->err_filed) : NULL;
	off_t last = sp->end - 1;
	char ch;
	int rc;

	c->err_filed = size;
	if (!messages)
		return copy_range(c->out_fd, sp->start, sp->end, out);
	while (last > sp->start && pread(c->out_fd, &ch, 1, last - 1) == 1 && ch != '\n')
		last--;
	size_t len = (size_t)(sp->end - last);
	char *line = marple_malloc(len + 1);
	json_t *t = pread(c->out_fd, line, len, last) == (ssize_t)len ? json_loadb(line, len, 0, NULL) : NULL;
	if (json_is_object(t)) {
		json_object_set(t, "messages", messages);
		rc = copy_range(c->out_fd, sp->start, last, out) < 0 ? -1
		     : stream_write_json(out, t) < 0			 ? (errno = EILSEQ, -1)
									 : 0;
	} else {
		rc = copy_range(c->out_fd, sp->start, sp->end, out);
	}
	json_decref(t);
	json_decref(messages);
	free(line);
	return rc;
}

/* FILE less its .marple: what the interval files' names begin with. */
static char *every_base(const struct supervisor *s)
{
	size_t len = strlen(s->out_path);

	if (len > 7 && strcmp(s->out_path + len - 7, ".marple") == 0)
		len -= 7;
	return marple_strndup(s->out_path, len);
}

static void reap_hooks(struct supervisor *s)
{
	for (size_t i = 0; i < s->nhooks;) {
		int status;
		if (waitpid(s->hooks[i], &status, WNOHANG) != s->hooks[i]) {
			i++;
			continue;
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			marple_warn("--each-file: '%s' ended with %s %d", s->each_file,
				    WIFEXITED(status) ? "status" : "signal",
				    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
			s->failed = 1;	/* a file not handed on (--push: not sent) */
		}
		s->hooks[i] = s->hooks[--s->nhooks];
	}
}

/* The one place a finished interval file is handed on (--each-file: a
 * command run with its path, not waited for, so a slow or hung receiver
 * never holds up the capture; a later --push can hook in here). */
static void interval_file_done(struct supervisor *s, const char *path)
{
	if (!s->each_file)
		return;
	char *script = marple_malloc(strlen(s->each_file) + 8);
	sprintf(script, "%s \"$1\"", s->each_file);
	pid_t pid = fork();
	if (pid == 0) {
		sigset_t none;
		for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
			signal(stop_signals[i], SIG_DFL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		int null = open("/dev/null", O_RDONLY);
		if (null >= 0)
			dup2(null, 0);
		execl("/bin/sh", "sh", "-c", script, "sh", path, (char *)NULL);
		_exit(127);
	}
	free(script);
	if (pid < 0) {
		marple_warn("--each-file: cannot run '%s': %s", s->each_file, strerror(errno));
		return;
	}
	s->hooks = marple_grow(s->hooks, &s->hooks_cap, s->nhooks + 1, sizeof(*s->hooks));
	s->hooks[s->nhooks++] = pid;
}

struct kept_file {
	char *name;
	off_t size;
};

static int kept_file_cmp(const void *a, const void *b)
{
	return strcmp(((const struct kept_file *)a)->name, ((const struct kept_file *)b)->name);
}

/* Is name one of ours: PREFIX-YYYYmmddTHHMMSSZ[-N].marple? */
static int interval_file_name(const char *name, const char *prefix)
{
	size_t pl = strlen(prefix);

	if (strncmp(name, prefix, pl) != 0 || name[pl] != '-')
		return 0;
	const char *t = name + pl + 1;
	for (int i = 0; i < 16; i++) {
		int want_digit = i != 8 && i != 15;
		if (want_digit ? !(t[i] >= '0' && t[i] <= '9') : t[i] != (i == 8 ? 'T' : 'Z'))
			return 0;
	}
	t += 16;
	if (*t == '-')
		for (t++; *t >= '0' && *t <= '9'; t++)
			;
	return strcmp(t, ".marple") == 0;
}

/* --keep, --keep-bytes: the oldest interval files in the directory (this
 * capture's or an earlier one's of the same name) removed until the newest
 * fit; the newest is always kept. */
static void apply_retention(struct supervisor *s, const char *base)
{
	if (!s->keep && !s->keep_bytes)
		return;
	const char *slash = strrchr(base, '/');
	char *dir = slash ? marple_strndup(base, (size_t)(slash - base) + (slash == base)) : marple_strdup(".");
	const char *prefix = slash ? slash + 1 : base;
	DIR *d = opendir(dir);
	struct kept_file *f = NULL;
	size_t n = 0, cap = 0;
	uint64_t bytes = 0;
	struct dirent *e;

	while (d && (e = readdir(d))) {
		struct stat st;
		if (!interval_file_name(e->d_name, prefix) || fstatat(dirfd(d), e->d_name, &st, 0) != 0)
			continue;
		f = marple_grow(f, &cap, n + 1, sizeof(*f));
		f[n++] = (struct kept_file){ marple_strdup(e->d_name), st.st_size };
		bytes += (uint64_t)st.st_size;
	}
	qsort(f, n, sizeof(*f), kept_file_cmp);
	for (size_t i = 0; i + 1 < n && ((s->keep && n - i > s->keep) || (s->keep_bytes && bytes > s->keep_bytes)); i++) {
		if (unlinkat(dirfd(d), f[i].name, 0) != 0)
			marple_warn("--keep: cannot remove %s/%s: %s", dir, f[i].name, strerror(errno));
		bytes -= (uint64_t)f[i].size;
	}
	for (size_t i = 0; i < n; i++)
		free(f[i].name);
	free(f);
	if (d)
		closedir(d);
	free(dir);
}

/* Interval `which`'s file: the section of every collector that has one for
 * it, written beside the others under a temporary name, synced, then linked
 * to its own name (the interval's start): a crash leaves the intervals before
 * it whole and named.  0, or -1 when it could not be written (said why; the
 * capture goes on). */
static int write_interval_file(struct supervisor *s, uint64_t which)
{
	char *base = every_base(s), stamp[32], *path, *tmp;
	int rc = -1;

	time_t t = (time_t)((which - 1) * s->every_ns / NS_PER_S);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	path = marple_malloc(strlen(base) + 64);
	tmp = marple_malloc(strlen(base) + 64);
	const char *slash = strrchr(base, '/');
	sprintf(tmp, "%.*s.%s-%s.marple.XXXXXX", slash ? (int)(slash - base + 1) : 0, base, slash ? slash + 1 : base,
		stamp);
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd >= 0) {	/* as any file the user makes, not mkostemp's 0600 */
		mode_t um = umask(0);
		umask(um);
		fchmod(fd, 0666 & ~um);
	}
	FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!out) {
		marple_warn("%s: cannot make a temporary file: %s; the interval at %s left out", tmp, strerror(errno), stamp);
		if (fd >= 0)
			close(fd);
		goto done;
	}
	int err = 0;
	for (size_t i = 0; i < s->started && !err; i++) {
		struct collector *c = &s->c[i];
		if (c->spans_done < c->nspans && c->spans[c->spans_done].interval == which &&
		    copy_span(c, &c->spans[c->spans_done], out) < 0)
			err = errno ? errno : EIO;
	}
	if (!err && (fflush(out) != 0 || fsync(fileno(out)) != 0))
		err = errno;
	if (fclose(out) != 0 && !err)
		err = errno;
	if (err) {
		marple_warn("%s: write error: %s; the interval at %s left out", tmp, strerror(err), stamp);
		unlink(tmp);
		goto done;
	}
	/* linked, not renamed: an existing file (intervals shorter than a
	 * second, another capture's) is never replaced */
	sprintf(path, "%s-%s.marple", base, stamp);
	for (int n = 1; link(tmp, path) != 0; n++) {
		if (errno != EEXIST || n > 1000) {
			marple_warn("%s: %s; the interval at %s left out", path, strerror(errno), stamp);
			unlink(tmp);
			goto done;
		}
		sprintf(path, "%s-%s-%d.marple", base, stamp, n);
	}
	unlink(tmp);
	rc = 0;
	s->written++;
	interval_file_done(s, path);
	apply_retention(s, base);
done:
	/* what was written (or could not be) needs no disk any more */
	for (size_t i = 0; i < s->started; i++) {
		struct collector *c = &s->c[i];
		if (c->spans_done < c->nspans && c->spans[c->spans_done].interval == which) {
			fallocate(c->out_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, c->spans[c->spans_done].end);
			c->spans_done++;
		}
	}
	free(path);
	free(tmp);
	free(base);
	return rc;
}

/* Write every interval that is whole: the earliest interval any collector
 * has a section for, once every collector still running has written a
 * section past it (or for it).  final: every collector has ended. */
static void write_due_intervals(struct supervisor *s, int final)
{
	for (size_t i = 0; i < s->started; i++) {
		scan_sections(s, &s->c[i]);
		pass_messages_on(&s->c[i]);
	}
	for (;;) {
		uint64_t which = UINT64_MAX;
		int waiting = 0;
		for (size_t i = 0; i < s->started; i++) {
			const struct collector *c = &s->c[i];
			if (c->spans_done < c->nspans && c->spans[c->spans_done].interval < which)
				which = c->spans[c->spans_done].interval;
			else if (c->spans_done == c->nspans && c->running && !final)
				waiting = 1;
		}
		if (which == UINT64_MAX || waiting)
			return;
		if (write_interval_file(s, which) < 0)
			s->failed = 1;
		s->files++;
		for (size_t i = 0; i < s->started; i++)
			forget_messages(&s->c[i]);
	}
}

/* The end of a --every capture: the last intervals, and how each collector
 * ended.  The exit status. */
static int finish_every(struct supervisor *s)
{
	write_due_intervals(s, 1);
	for (size_t i = 0; i < s->started; i++) {
		struct collector *c = &s->c[i];
		char how[64], msg[1024];
		if (ended_badly(s, c, how, sizeof(how))) {
			last_line(c->err_fd, msg, sizeof(msg));
			if (!c->killed && !c->overran && !c->unrunnable)
				marple_warn("%s failed (%s)%s%s", c->name, how, *msg ? ": " : "", msg);
			s->failed = 1;
		}
		off_t size = lseek(c->out_fd, 0, SEEK_END);
		off_t whole = c->nspans ? c->spans[c->nspans - 1].end : 0;
		if (size > whole) {
			marple_warn("%s: an unfinished section (%lld bytes) left out: the intervals before it are whole",
				    c->name, (long long)(size - whole));
			s->failed = 1;
		}
	}
	/* the hand-overs of the last files end, or GRACE passes */
	uint64_t until = marple_now_monotonic_ns() + s->grace_ns;
	while (s->nhooks && marple_now_monotonic_ns() < until) {
		reap_hooks(s);
		if (s->nhooks)
			poll(NULL, 0, 10);
	}
	if (s->nhooks)
		marple_warn("--each-file: %zu command%s still running, left to finish", s->nhooks, s->nhooks == 1 ? "" : "s");
	if (!s->written) {
		marple_warn("no collector finished an interval; nothing written");
		return EXIT_NOTHING;
	}
	return s->failed ? EXIT_DATA : EXIT_OK;
}


/* The collectors, and with --run the command: held, then let go. */
static void start_capture(struct supervisor *s)
{
	if (s->run_argv)
		start_command(s);
	start_all(s);
	if (s->run_argv)
		release_command(s);
}

static void supervisor_free(struct supervisor *s, char *dir)
{
	free(s->ready_dir);
	for (size_t i = 0; i < s->n; i++) {
		if (s->c[i].out_fd >= 0)
			close(s->c[i].out_fd);
		if (s->c[i].err_fd >= 0)
			close(s->c[i].err_fd);
		free(s->c[i].argv);
		free(s->c[i].spans);
	}
	free(s->c);
	free(s->hooks);
	free(dir);
}

int main(int argc, char **argv)
{
	struct supervisor s = { .sigfd = -1, .self = getpid() };
	struct outfile *o;
	char *dir = NULL;
	int rc;

	marple_init(argc, argv);
	signals_setup(&s);	/* first: a Ctrl-C from now on is a stop, never a death */
	stop_with_parent();
	parse_args(&s, argc, argv);
	if (s.out_path) {
		dir = marple_strdup(s.out_path);
		char *slash = strrchr(dir, '/');
		if (!slash)
			strcpy(dir, ".");
		else
			slash[slash == dir] = 0;
		s.tmpdir = dir;
	} else {
		s.tmpdir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	}
	s.tty = isatty(2);
	if (s.every_ns) {	/* one file per interval, each written whole */
		start_capture(&s);
		supervise(&s);
		rc = finish_every(&s);
		if (s.run_argv)
			rc = command_status(&s);
		supervisor_free(&s, dir);
		return rc;
	}
	/* the output can be made: tried now, before any collector runs, and
	 * made again for the join, so a kill -9 meanwhile leaves no empty
	 * NAME.marple.XXXXXX behind */
	o = marple_outfile_try_open(s.out_path);
	if (o)
		marple_outfile_abort(o);
	if (o) {
		start_capture(&s);
		supervise(&s);
		o = marple_outfile_try_open(s.out_path);
	}
	if (!o) {
		supervisor_free(&s, dir);
		return EXIT_NOTHING;
	}
	rc = join_all(&s, o);
	if (s.run_argv)
		rc = command_status(&s);
	supervisor_free(&s, dir);
	return rc;
}
