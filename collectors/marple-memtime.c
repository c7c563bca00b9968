/* marple-memtime — memory of every process over time, as marple points.
 *
 * Every interval, for each process in /proc: its proportional set size (PSS,
 * from /proc/PID/smaps_rollup, what smem reports) or, where that is not
 * readable (another user's process when not root), its resident set size
 * (RSS, from /proc/PID/statm).  Kernel threads (no memory) are left out.
 * Writes one point section: x = seconds since the start, y = MiB,
 * info = the process name, fields pid=, comm= and kind=pss|rss.
 *
 *   $ marple-memtime -i 500ms 10 | marple-stackplot > mem.svg
 *   {"marple":1,"interface":"memtime","datatype":"point",...,"units":{"x":"s","y":"MiB"},...}
 *   0.000012,312.5,firefox-esr,pid=2211,comm=firefox-esr,kind=pss
 *
 * Low overhead: /proc/PID/statm is read through a descriptor kept open for the
 * life of the process (one pread per process per interval); smaps_rollup,
 * which walks the page tables, is read for every process in the first sample,
 * and after that for new processes, for processes whose RSS changed (at most
 * every 2 s) and for PSS older than --pss-refresh (staggered), within a CPU
 * budget of 0.5% of one CPU.  In between, PSS moves with RSS (new pages are
 * private); a new process whose PSS could not be read yet is reported as RSS.
 *
 * Exit status: 0 done, 1 /proc unreadable or write error, 2 usage error.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "collector.h"
#include "options.h"
#include "procstat.h"
#include "selffilter.h"
#include "stream.h"
#include "util.h"

static struct {
	uint64_t interval_ns;
	uint64_t refresh_ns;
	int rss_only;
	int verbose;
	int include_self;
	pid_t *pids;
	size_t npids;
} opt = {
	.interval_ns = 1000000000ull,
	.refresh_ns = 30000000000ull,
};

struct proc {
	pid_t pid;
	int fd;			/* /proc/PID/statm, or -1 */
	int nocache;		/* no descriptor could be kept */
	long rss_pages;
	long rss_at_pss;	/* RSS when pss_kb was read */
	uint64_t pss_kb;
	uint64_t pss_at_ns;	/* when pss_kb was read; 0 = never */
	int pss_ok;		/* 1 PSS readable, 0 not (RSS fallback) */
	int marple;		/* marple's own (selffilter.h): no points */
	char comm[64];
};

#define MIN_PSS_AGE_NS 2000000000ull

static struct proc *procs, *next;
static size_t nprocs, nnext, capprocs, capnext;
static int procfd;
static long pagesize;
static size_t fd_budget;
static uint64_t stat_vanished, records_written, pss_reads, pss_deferred, self_excluded_points;
/* Time left for re-reading smaps_rollup: each interval adds its share of
 * PSS_BUDGET (a fraction of one CPU); page-table walks of big, busy processes
 * are what makes a collector like this expensive. */
#define PSS_BUDGET 0.005
static int64_t pss_budget_ns;
static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

enum { O_RSS = 256, O_PSS_REFRESH };
static const struct options_entry options[] = {
	{ 'i', "interval", "TIME", "time between samples: 1 (default), 500ms, 2s, ..." },
	{ 'p', "pid", "PID", "only this process (repeatable)" },
	{ O_RSS, "rss", NULL, "report RSS for all processes (never read smaps_rollup)" },
	{ O_PSS_REFRESH, "pss-refresh", "TIME", "re-read an unchanged process's PSS this often\n(default 30s)" },
	{ 'v', "verbose", NULL, "statistics on stderr" },
	SELF_OPTION,
	OPTIONS_DESCRIBE("kind=collector\tsections=memtime:point:stackplot\tevery=no"
		"\tmeasures=each process's memory over time: PSS, else RSS (bytes)"),
	OPTIONS_HELP,
	{ 0 }
};

static const struct options_help help = {
	.synopsis = "[-i INTERVAL] [-p PID]... [--rss] [--pss-refresh TIME] [-v] [duration]",
	.about = "Sample the memory of every process (PSS, else RSS) as marple points: x = seconds,\n"
	         "y = MiB, info = process name.\n",
	.after = "duration: how long to run (10, 10s, 2m); default until SIGINT/SIGTERM.\n"
	         "No --every (continuous mode): one section a run.\n"
	         "See marple-memtime(1).\n",
};

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = ((const struct proc *)a)->pid, y = ((const struct proc *)b)->pid;
	return x < y ? -1 : x > y;
}

static struct proc *find_old(pid_t pid)
{
	size_t lo = 0, hi = nprocs;
	while (lo < hi) {
		size_t m = (lo + hi) / 2;
		if (procs[m].pid < pid)
			lo = m + 1;
		else if (procs[m].pid > pid)
			hi = m;
		else
			return &procs[m];
	}
	return NULL;
}

static int wanted(pid_t pid)
{
	if (!opt.npids)
		return 1;
	for (size_t i = 0; i < opt.npids; i++)
		if (opt.pids[i] == pid)
			return 1;
	return 0;
}

/* RSS in pages from /proc/PID/statm, through a descriptor kept open while
 * the budget allows: it stays bound to the process, so a read that fails
 * means the process is gone, even if its pid was reused since.
 * 1 read (p->fresh set if this is a new process), 0 gone. */
static int read_rss(struct proc *p, const char *dname)
{
	char buf[256];
	ssize_t n = -1;

	if (p->fd >= 0) {
		n = pread(p->fd, buf, sizeof(buf) - 1, 0);
		if (n <= 0) {
			close(p->fd);
			p->fd = -1;
			fd_budget++;
			*p = (struct proc){ .pid = p->pid, .fd = -1 };	/* pid reused? start afresh */
		}
	}
	if (n <= 0) {
		char path[300];
		snprintf(path, sizeof(path), "%s/statm", dname);
		int fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return 0;
		n = read(fd, buf, sizeof(buf) - 1);
		if (n <= 0) {
			close(fd);
			return 0;
		}
		if (fd_budget && !p->nocache) {
			p->fd = fd;
			fd_budget--;
		} else {
			close(fd);
			p->nocache = 1;	/* no descriptor: identity by comm only */
		}
	}
	buf[n] = 0;
	char *sp = strchr(buf, ' ');
	p->rss_pages = sp ? strtol(sp + 1, NULL, 10) : 0;
	return 1;
}

/* The process name from /proc/PID/comm; "?" if it cannot be read. */
static void read_comm(struct proc *p, const char *dname)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/comm", dname);
	int fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, p->comm, sizeof(p->comm) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		strcpy(p->comm, "?");
		return;
	}
	if (p->comm[n - 1] == '\n')
		n--;
	p->comm[n] = 0;
}

/* The process group from /proc/PID/stat (after the comm's closing paren); 0 if unreadable. */
static pid_t read_pgid(const char *dname)
{
	char path[300], buf[512];
	int ppid, pgid;

	snprintf(path, sizeof(path), "%s/stat", dname);
	const char *rest = procstat_read(procfd, path, buf, sizeof(buf));
	if (!rest || sscanf(rest, " %*c %d %d", &ppid, &pgid) != 2)
		return 0;
	return (pid_t)pgid;
}

/* PSS in kB from /proc/PID/smaps_rollup: 0, or -1 if not readable. */
static int read_pss(const char *dname, uint64_t *kb)
{
	char path[300], buf[4096];
	snprintf(path, sizeof(path), "%s/smaps_rollup", dname);
	int fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	char *p = strstr(buf, "\nPss:");
	if (!p)
		return -1;
	*kb = strtoull(p + 5, NULL, 10);
	return 0;
}

static void sample(FILE *out, uint64_t now, double x, int first_scan)
{
	DIR *d = fdopendir(dup(procfd));
	struct dirent *de;
	int sorted = 1;

	if (!d)
		marple_fatal(EXIT_DATA, "/proc: %s", strerror(errno));
	rewinddir(d);	/* the dup shares the offset the last scan left at the end */
	nnext = 0;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0 || !wanted((pid_t)pid))
			continue;
		struct proc *old = find_old((pid_t)pid), p;
		if (old) {
			p = *old;
			old->fd = -2;	/* carried over */
		} else {
			p = (struct proc){ .pid = (pid_t)pid, .fd = -1 };
		}
		long prev_rss = p.rss_pages;
		if (!read_rss(&p, de->d_name)) {
			if (old)
				stat_vanished++;
			continue;
		}
		if (p.rss_pages <= 0)	/* kernel thread or zombie: no memory */
			goto keep;
		if (!p.comm[0] || p.nocache || p.rss_pages != prev_rss) {
			read_comm(&p, de->d_name);	/* new, or changed: exec renames */
			p.marple = selffilter_is_marple(p.pid, p.comm, selffilter_wants_pgid() ? read_pgid(de->d_name) : 0);
		}
		if (p.marple) {
			self_excluded_points++;
			goto keep;
		}
		if (!opt.rss_only) {
			/* Re-read PSS (a page-table walk) when RSS changed, at most every
			 * MIN_PSS_AGE, and anyway every refresh period, staggered by pid.
			 * In between, PSS follows RSS: new pages are private. */
			uint64_t age = now - p.pss_at_ns;
			uint64_t stagger = opt.refresh_ns / 64 * (uint64_t)(p.pid % 64);
			int due = !p.pss_at_ns || (p.rss_pages != p.rss_at_pss && age >= MIN_PSS_AGE_NS) ||
				  age >= opt.refresh_ns + stagger;
			if (due && (first_scan || pss_budget_ns > 0)) {
				uint64_t t0 = marple_now_monotonic_ns();
				p.pss_ok = read_pss(de->d_name, &p.pss_kb) == 0;
				if (!first_scan)	/* all but the first scan are paid from the budget */
					pss_budget_ns -= (int64_t)(marple_now_monotonic_ns() - t0);
				pss_reads++;
				p.pss_at_ns = now;
				p.rss_at_pss = p.rss_pages;
			} else if (due) {
				pss_deferred++;
			}
		}
		{
			int pss = !opt.rss_only && p.pss_ok;
			double mib = (double)p.rss_pages * (double)pagesize / 1048576.0;
			if (pss) {
				double est = (double)p.pss_kb / 1024.0 +
					     (double)(p.rss_pages - p.rss_at_pss) * (double)pagesize / 1048576.0;
				mib = est > 0 ? est : 0;
			}
			char pidbuf[16];
			snprintf(pidbuf, sizeof(pidbuf), "%d", (int)p.pid);
			struct field f[3] = {
				{ MSTR("pid"), escape_mstr_c(pidbuf) },
				{ MSTR("comm"), escape_mstr_c(p.comm) },
				{ MSTR("kind"), pss ? MSTR("pss") : MSTR("rss") },
			};
			stream_write_point(out, x, mib, escape_mstr_c(p.comm), f, 3);
			records_written++;
		}
	keep:
		next = marple_grow(next, &capnext, nnext + 1, sizeof(*next));
		if (nnext && next[nnext - 1].pid > p.pid)
			sorted = 0;
		next[nnext++] = p;
	}
	closedir(d);
	/* processes that are gone: close their descriptors */
	for (size_t i = 0; i < nprocs; i++)
		if (procs[i].fd >= 0) {
			close(procs[i].fd);
			fd_budget++;
		}
	if (!sorted)
		qsort(next, nnext, sizeof(*next), cmp_pid);
	struct proc *t = procs;
	size_t tc = capprocs;
	procs = next;
	capprocs = capnext;
	nprocs = nnext;
	next = t;
	capnext = tc;
}

/* Keep up to (soft limit - 64) descriptors of /proc/PID/stat open. */
static void setup_fd_budget(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		if (rl.rlim_cur < rl.rlim_max && rl.rlim_cur < 65536) {
			rlim_t want = rl.rlim_max < 65536 ? rl.rlim_max : 65536;
			struct rlimit nl = { want, rl.rlim_max };
			if (setrlimit(RLIMIT_NOFILE, &nl) == 0)
				rl.rlim_cur = want;
		}
		fd_budget = rl.rlim_cur > 128 ? (size_t)(rl.rlim_cur - 64) : 0;
	}
}

static uint64_t cpu_ns(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
}

static void parse_options(int argc, char **argv)
{
	int c;
	while ((c = options_getopt(options, argc, argv)) != -1) {
		switch (c) {
		case 'i':
			if (marple_parse_duration_ns(optarg, &opt.interval_ns) < 0 || opt.interval_ns < 1000000)
				marple_usage_error("-i: '%s' is not a time of at least 1ms (e.g. 1, 500ms, 2s)", optarg);
			break;
		case 'p':
			opt.pids = realloc(opt.pids, (opt.npids + 1) * sizeof(pid_t));
			if (!opt.pids)
				marple_fatal(EXIT_DATA, "out of memory");
			opt.pids[opt.npids++] = (pid_t)marple_opt_u64("-p", optarg, 1, 4194304);
			break;
		case O_RSS: opt.rss_only = 1; break;
		case 'v': opt.verbose = 1; break;
		case SELF_OPTION_KEY: opt.include_self = 1; break;
		case O_PSS_REFRESH:
			if (marple_parse_duration_ns(optarg, &opt.refresh_ns) < 0)
				marple_usage_error("--pss-refresh: '%s' is not a time (e.g. 30s, 1m)", optarg);
			break;
		case 'h': options_help(stdout, options, &help); marple_close_stdout(); exit(EXIT_OK);
		default: marple_usage_try();
		}
	}
}

/* The section header, written; returns the section's start time. */
static uint64_t write_header(void)
{
	json_t *hdr = stream_section_header_new("memtime", DATATYPE_POINT);
	json_t *units = json_pack("{s:s, s:s}", "x", "s", "y", "MiB");
	json_t *labels = json_pack("{s:s, s:s, s:s}", "x", "time", "y",
				   opt.rss_only ? "memory (RSS)" : "memory (PSS, else RSS)", "info", "process");
	json_t *hdr_options = json_pack("{s:I, s:I, s:b}", "interval_ns", (json_int_t)opt.interval_ns,
					"pss_refresh_ns", (json_int_t)opt.refresh_ns, "rss_only", opt.rss_only);
	if (opt.npids) {
		json_t *a = json_array();
		for (size_t i = 0; i < opt.npids; i++)
			json_array_append_new(a, json_integer(opt.pids[i]));
		json_object_set_new(hdr_options, "pids", a);
	}
	json_object_set_new(hdr, "units", units);
	json_object_set_new(hdr, "labels", labels);
	json_object_set_new(hdr, "options", hdr_options);
	uint64_t start = (uint64_t)stream_header_int(hdr, "start_ns", (int64_t)marple_now_monotonic_ns());
	if (stream_write_json(stdout, hdr) < 0)
		exit(EXIT_DATA);
	json_decref(hdr);
	fflush(stdout);
	return start;
}

/* Samples every interval from start until the duration, a signal, the -p
 * targets' exit or a write error; counts the samples and the ticks skipped
 * because a sample took longer than the interval.  Returns why it ended. */
static const char *sample_until_done(uint64_t start, uint64_t duration, uint64_t *ticks, uint64_t *late)
{
	uint64_t next_tick = start;
	for (;;) {
		uint64_t now = marple_now_monotonic_ns();
		pss_budget_ns += (int64_t)((double)opt.interval_ns * PSS_BUDGET);
		if (pss_budget_ns > (int64_t)(1e9 * PSS_BUDGET * 5))	/* save up at most 5 s worth */
			pss_budget_ns = (int64_t)(1e9 * PSS_BUDGET * 5);
		sample(stdout, now, (double)(now - start) / 1e9, *ticks == 0);
		(*ticks)++;
		fflush(stdout);
		if (ferror(stdout))
			return "duration";
		next_tick += opt.interval_ns;
		now = marple_now_monotonic_ns();
		if (now > next_tick) {	/* a sample took longer than the interval: skip ticks */
			uint64_t missed = (now - next_tick) / opt.interval_ns + 1;
			*late += missed;
			next_tick += missed * opt.interval_ns;
		}
		if (duration && next_tick > start + duration)
			return "duration";
		if (collector_target_exited())	/* every -p process gone: nothing left to sample */
			return "target exited";
		struct timespec ts = { (time_t)(next_tick / 1000000000ull), (long)(next_tick % 1000000000ull) };
		while (!got_signal && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		if (got_signal)
			return "signal";
	}
}

static void write_trailer(const char *ended, uint64_t ticks, uint64_t late)
{
	json_t *trailer = stream_section_trailer_new(records_written, 0, 0, got_signal ? "signal" : ended);
	collector_memory_trailer(trailer);
	json_object_set_new(trailer, "samples", json_integer((json_int_t)ticks));
	json_object_set_new(trailer, "late_samples", json_integer((json_int_t)late));
	json_object_set_new(trailer, "vanished", json_integer((json_int_t)stat_vanished));
	json_object_set_new(trailer, "pss_reads", json_integer((json_int_t)pss_reads));
	json_object_set_new(trailer, "pss_deferred", json_integer((json_int_t)pss_deferred));
	json_object_set_new(trailer, "cpu_ns", json_integer((json_int_t)cpu_ns()));
	json_object_set_new(trailer, "self_excluded", json_integer((json_int_t)self_excluded_points));
	stream_write_json(stdout, trailer);
	if (opt.verbose)
		collector_verbose_trailer(trailer);
	json_decref(trailer);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { 0 };
	uint64_t ticks = 0, late = 0;

	marple_init(argc, argv);
	parse_options(argc, argv);
	uint64_t duration = collector_duration(argc, argv, optind);
	selffilter_rule_init(opt.include_self);

	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	pagesize = sysconf(_SC_PAGESIZE);
	procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (procfd < 0)
		marple_fatal(EXIT_DATA, "/proc: %s", strerror(errno));
	setup_fd_budget();
	for (size_t i = 0; i < opt.npids; i++) {
		char path[32];
		snprintf(path, sizeof(path), "%d", (int)opt.pids[i]);
		if (faccessat(procfd, path, F_OK, 0) != 0)
			marple_fatal(EXIT_DATA, "no process with PID %d", (int)opt.pids[i]);
	}
	uint64_t start = write_header();
	for (size_t i = 0; i < opt.npids; i++)
		collector_watch_target(opt.pids[i], 0);
	collector_ready(duration);
	const char *ended = sample_until_done(start, duration, &ticks, &late);
	write_trailer(ended, ticks, late);
	free(opt.pids);
	free(procs);
	free(next);
	marple_close_stdout();
	return EXIT_OK;
}
