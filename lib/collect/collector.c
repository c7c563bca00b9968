/* collector.c — shared lifecycle of the BPF collectors. */
#include "collector.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util.h"

static volatile sig_atomic_t stop_signal;
static uint64_t deadline_ns;
/* why the capture stopped, fixed the first time collector_should_stop saw it */
static const char *stop_cause;
/* -p's processes (pidfds, readable once the process has exited) */
static struct pollfd *targets;
static size_t ntargets, targets_cap;
static int targets_gone;
static int verbose_libbpf;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && !verbose_libbpf)
		return 0;
	if (level == LIBBPF_INFO && !verbose_libbpf)
		return 0;
	/* libbpf's messages begin "libbpf: " already (its pr_warn adds it): the
	 * prefix is added only to one without it, so each says it once */
	fprintf(stderr, strncmp(fmt, "libbpf: ", 8) == 0 ? "%s: " : "%s: libbpf: ", marple_progname);
	return vfprintf(stderr, fmt, ap);
}

/* libbpf reads the kernel's BTF (~5.5 MB here) into one buffer and copies it
 * into another: two fresh mmaps faulted in 4 KiB at a time and unmapped
 * again, about a quarter of a collector's start-up CPU (3000 page faults).
 * (Now only at the first start of a boot, or of a new build: later ones
 * find what they need of it kept, corebtf.h and kernelids.h; this costs
 * them nothing measurable.)
 * Served from the heap instead, on transparent huge pages where the system
 * allows them (madvise mode), the same memory costs a few hundred faults:
 * marple-callstack -p PID 0.1 went from 20.5 to 15.2 ms of CPU.
 * collector_ready gives the memory back (heap_after_btf). */
static void heap_for_btf(void)
{
	const size_t size = 16u << 20;
	struct stat st;

	if (stat("/sys/kernel/btf/vmlinux", &st) != 0 || (size_t)st.st_size * 2 + (2u << 20) > size)
		return;
	mallopt(M_MMAP_THRESHOLD, (int)size * 2);	/* large blocks from the heap... */
	mallopt(M_TRIM_THRESHOLD, (int)size * 4);	/* ...which keeps them once freed */
	mallopt(M_TOP_PAD, (int)size);
	char *p = malloc(size);
	if (!p)
		return;
	uintptr_t a = ((uintptr_t)p + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1);
	if (a < (uintptr_t)p + size)
		madvise((void *)a, (uintptr_t)p + size - a, MADV_HUGEPAGE);
	free(p);
}

/* After loading: malloc's documented defaults again, and what the start-up
 * used given back. */
static void heap_after_btf(void)
{
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	mallopt(M_TRIM_THRESHOLD, 128 * 1024);
	mallopt(M_TOP_PAD, 128 * 1024);
	malloc_trim(0);
}

int collector_start(int verbose)
{
	struct sigaction sa = { 0 };

	if (geteuid() != 0) {
		marple_warn("must be run as root (BPF tracing needs CAP_BPF and CAP_PERFMON)");
		return -1;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		marple_warn("this kernel has no BTF (/sys/kernel/btf/vmlinux): "
			    "collectors need a kernel built with CONFIG_DEBUG_INFO_BTF=y");
		return -1;
	}
	verbose_libbpf = verbose;
	libbpf_set_print(libbpf_log);
	heap_for_btf();
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	return 0;
}

uint64_t collector_duration(int argc, char **argv, int optind)
{
	uint64_t ns = 0;

	if (optind >= argc)
		return 0;
	if (optind + 1 < argc)
		marple_usage_error("unexpected operand '%s' (only a duration may follow the options)", argv[optind + 1]);
	/* 0, as no operand, runs until a signal: `marple collect -t 0` passes it on */
	if (marple_parse_duration_ns(argv[optind], &ns) < 0)
		marple_usage_error("duration '%s' is not a time (e.g. 10, 10s, 500ms, 2m; 0: until SIGINT/SIGTERM)", argv[optind]);
	return ns;
}

void collector_ready(uint64_t duration_ns)
{
	const char *ready = getenv("MARPLE_READY_FILE");

	heap_after_btf();
	deadline_ns = duration_ns ? marple_now_monotonic_ns() + duration_ns : 0;
	if (ready && *ready) {
		int fd = open(ready, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd >= 0)
			close(fd);
	}
}

uint64_t collector_aligned_cut(uint64_t mono_ns, uint64_t interval_ns)
{
	uint64_t now_mono = marple_now_monotonic_ns(), now_wall = marple_now_realtime_ns();
	uint64_t wall = mono_ns + (now_wall - now_mono), r = wall % interval_ns;

	return r < interval_ns / 2 ? mono_ns - r : mono_ns + (interval_ns - r);
}

uint64_t collector_cut_wall_ns(uint64_t cut_mono_ns, uint64_t interval_ns)
{
	uint64_t wall = cut_mono_ns + (marple_now_realtime_ns() - marple_now_monotonic_ns());

	return (wall + interval_ns / 2) / interval_ns * interval_ns;
}

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

void collector_watch_target(pid_t pid, int thread)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, thread ? PIDFD_THREAD : 0);

	if (fd < 0) {
		if (errno == ESRCH)	/* gone between the check and here */
			targets_gone = 1;
		else
			marple_warn("cannot watch %s %d for its exit (%s): the capture runs its whole duration",
				    thread ? "thread" : "process", (int)pid, strerror(errno));
		return;
	}
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	targets = marple_grow(targets, &targets_cap, ntargets + 1, sizeof(*targets));
	targets[ntargets++] = (struct pollfd){ .fd = fd, .events = POLLIN };
}

int collector_target_exited(void)
{
	if (targets_gone || !ntargets)
		return targets_gone;
	if (poll(targets, ntargets, 0) < 0)
		return 0;
	for (size_t i = 0; i < ntargets; i++)
		if (!(targets[i].revents & (POLLIN | POLLHUP | POLLERR)))
			return 0;
	return targets_gone = 1;
}

int collector_should_stop(void)
{
	if (stop_signal)
		return 1;
	if (!stop_cause && deadline_ns && marple_now_monotonic_ns() >= deadline_ns)
		stop_cause = "duration";
	if (!stop_cause && collector_target_exited())
		stop_cause = "target exited";
	return stop_cause != NULL;
}

int collector_poll_timeout_ms(int max_ms)
{
	uint64_t now;

	if (collector_should_stop())
		return 0;
	if (!deadline_ns)
		return max_ms;
	now = marple_now_monotonic_ns();
	uint64_t left = (deadline_ns - now + 999999) / 1000000;
	return left < (uint64_t)max_ms ? (int)left : max_ms;
}

const char *collector_end_reason(void)
{
	return stop_signal ? "signal" : stop_cause ? stop_cause : "duration";
}

/* Lines of "prog: statistics: name: key N, ..." for obj's whole-number
 * members (not its objects), ten to a line. */
static void counts_lines(json_t *obj, const char *name)
{
	char buf[1024] = "";
	size_t len = 0;
	int n = 0;
	const char *key;
	json_t *v;

	json_object_foreach(obj, key, v) {
		if (!json_is_integer(v) || strcmp(key, "end_ns") == 0 || strcmp(key, "trailer") == 0)
			continue;
		if (len < sizeof(buf))
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s %lld", len ? ", " : "", key,
						(long long)json_integer_value(v));
		if (++n % 10 == 0) {
			marple_warn("statistics: %s%s%s", name, *name ? ": " : "", buf);
			len = 0;
			buf[0] = 0;
		}
	}
	if (len)
		marple_warn("statistics: %s%s%s", name, *name ? ": " : "", buf);
}

/* A line for an object of the trailer ("python: ..."), and one for each
 * object in it ("python.bpf: ..."). */
static void verbose_group(json_t *obj, const char *name)
{
	char sub[128];
	const char *key;
	json_t *v;

	counts_lines(obj, name);
	json_object_foreach(obj, key, v)
		if (json_is_object(v)) {
			snprintf(sub, sizeof(sub), "%s.%s", name, key);
			verbose_group(v, sub);
		}
}

/* Lines for the trailer's own counts and for each object in it
 * (stack_errors, sampling, unwind ...): the one line of 67 pairs it was
 * (1.9 KB) could not be read. */
void collector_verbose_trailer(json_t *trailer)
{
	const char *key;
	json_t *v;

	counts_lines(trailer, "");
	json_object_foreach(trailer, key, v)
		if (json_is_object(v) && strcmp(key, "frames") != 0)
			verbose_group(v, key);
}

/* VmRSS and VmHWM of /proc/self/status, in bytes (0 unknown), in one read. */
static void status_rss(uint64_t *rss, uint64_t *peak)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[128];

	*rss = *peak = 0;
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "VmRSS:", 6) == 0)
			*rss = strtoull(line + 6, NULL, 10) * 1024;
		else if (strncmp(line, "VmHWM:", 6) == 0)
			*peak = strtoull(line + 6, NULL, 10) * 1024;
	if (f)
		fclose(f);
}

/* The maps shared with other collectors (unwindtablesshared.h), by id */
static uint32_t shared_ids[8];
static unsigned nshared_ids;

void collector_memory_shared(uint32_t map_id)
{
	if (nshared_ids < sizeof(shared_ids) / sizeof(shared_ids[0]))
		shared_ids[nshared_ids++] = map_id;
}

static int is_shared(uint32_t id)
{
	for (unsigned i = 0; i < nshared_ids; i++)
		if (shared_ids[i] == id)
			return 1;
	return 0;
}

/* One map's id and memlock from its fd's fdinfo: 0, or -1. */
static int map_fdinfo(const char *fd_name, uint32_t *id, uint64_t *bytes)
{
	char path[300], line[96];
	int found = 0;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%s", fd_name);
	FILE *f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "memlock:", 8) == 0)
			*bytes = strtoull(line + 8, NULL, 10), found |= 1;
		else if (strncmp(line, "map_id:", 7) == 0)
			*id = (uint32_t)strtoul(line + 7, NULL, 10), found |= 2;
	}
	if (f)
		fclose(f);
	return found == 3 ? 0 : -1;
}

/* The kernel memory of the BPF maps open here: each map's memlock, once
 * however many descriptors it has, those shared with other collectors
 * apart (*shared: of the total). */
static uint64_t bpf_map_bytes(uint64_t *maps, uint64_t *shared)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	uint64_t bytes = 0;
	uint32_t *seen = NULL;
	size_t nseen = 0, cap = 0;

	*maps = *shared = 0;
	while (d && (e = readdir(d))) {
		char path[300], target[32];
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		ssize_t n = readlink(path, target, sizeof(target) - 1);
		uint32_t id;
		uint64_t b;
		if (n <= 0)
			continue;
		target[n] = 0;
		if (strcmp(target, "anon_inode:bpf-map") != 0 || map_fdinfo(e->d_name, &id, &b) != 0)
			continue;
		size_t i = 0;
		while (i < nseen && seen[i] != id)
			i++;
		if (i < nseen)
			continue;	/* a second descriptor of it */
		seen = marple_grow(seen, &cap, nseen + 1, sizeof(*seen));
		seen[nseen++] = id;
		bytes += b;
		*shared += is_shared(id) ? b : 0;
		(*maps)++;
	}
	if (d)
		closedir(d);
	free(seen);
	return bytes;
}

int collector_thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t chld, old;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &chld, &old);
	int rc = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

static void child_changed(int sig)
{
	(void)sig;	/* its delivery is the point: epoll_wait returns EINTR */
}

void collector_wake_on_child(void)
{
	struct sigaction sa = { 0 };

	sa.sa_handler = child_changed;
	sa.sa_flags = SA_RESTART;	/* no SA_NOCLDSTOP: a stop is what we wait for */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
}

void collector_memory_trailer(json_t *trailer)
{
	uint64_t maps, shared, map_bytes = bpf_map_bytes(&maps, &shared), rss, peak;
	json_t *o = json_object();

	status_rss(&rss, &peak);

	json_object_set_new(o, "rss_bytes", json_integer((json_int_t)rss));
	json_object_set_new(o, "peak_rss_bytes", json_integer((json_int_t)peak));
	json_object_set_new(o, "bpf_map_bytes", json_integer((json_int_t)map_bytes));
	json_object_set_new(o, "bpf_maps", json_integer((json_int_t)maps));
	json_object_set_new(o, "bpf_map_shared_bytes", json_integer((json_int_t)shared));
	json_object_set_new(o, "bpf_map_private_bytes", json_integer((json_int_t)(map_bytes - shared)));
	json_object_set_new(trailer, "memory", o);
}

const char *collector_strerror(int err)
{
	static char buf[128];
	libbpf_strerror(err, buf, sizeof(buf));
	return buf;
}

/* A classic tracepoint (SEC("tracepoint/...")) is attached by the id libbpf
 * reads from tracefs; tp_btf, raw_tp, uprobes and perf events need no tracefs.
 * A freshly booted machine may not have it mounted yet (nothing has asked for
 * it): mount it where the kernel provides the mount point, once, as perf
 * does.  This was why marple-ipc failed on a fresh machine's first run
 * ("failed to determine tracepoint 'sock/inet_sock_set_state' perf event ID")
 * and passed once some other tool had mounted it. */
static int tracefs_mounted(const char *events)
{
	static int tried;

	if (access(events, F_OK) == 0)
		return 1;
	if (tried++ || access("/sys/kernel/tracing", F_OK) != 0)
		return 0;
	if (mount("tracefs", "/sys/kernel/tracing", "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
		return 0;
	return access(events, F_OK) == 0;
}

int collector_tracepoint_exists(const char *category, const char *name)
{
	static const char *const roots[] = { "/sys/kernel/tracing/events", "/sys/kernel/debug/tracing/events" };
	char path[512];

	static struct btf *vmlinux;
	int found;

	tracefs_mounted(roots[0]);
	for (size_t i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s/%s", roots[i], category, name);
		if (access(path, F_OK) == 0)
			return 1;
	}
	/* tracefs not mounted: the kernel's BTF names every tracepoint too */
	if (!vmlinux && !(vmlinux = btf__load_vmlinux_btf()))
		return 0;
	snprintf(path, sizeof(path), "btf_trace_%s", name);
	found = btf__find_by_name_kind(vmlinux, path, BTF_KIND_TYPEDEF) >= 0;
	return found;
}
