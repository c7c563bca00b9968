# cputime.py FILE COMMAND...: run COMMAND, write its user and system CPU
# seconds to FILE (to the microsecond: time(1) gives hundredths), and its
# start-up's: the CPU its threads had run (schedstat) when it said it was
# ready (MARPLE_READY_FILE, collector(3)), 0 when it did not.  With
# CPUTIME_MARK=S (seconds) a fourth: the CPU its threads had run S seconds
# after it was ready (a collector's while it samples, before its end's
# work), 0 when it had ended by then.  Used by tests/bench/python.sh,
# pythons.sh and lib/interpbench.sh.
import glob, os, sys, time
ready = sys.argv[1] + ".ready"
if os.path.exists(ready):
    os.unlink(ready)
os.environ["MARPLE_READY_FILE"] = ready
mark_after = float(os.environ.pop("CPUTIME_MARK", "0") or 0)


def cpu_ns(pid):
    total = 0
    for t in glob.glob("/proc/%d/task/*/schedstat" % pid):
        try:
            total += int(open(t).read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total


pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
start = mark = 0
ready_at = None
while True:
    done, status, ru = os.wait4(pid, os.WNOHANG)
    if done:
        break
    if not start and os.path.exists(ready):
        start = cpu_ns(pid) or 1
        ready_at = time.monotonic()
    if mark_after and start and not mark and time.monotonic() - ready_at >= mark_after:
        mark = cpu_ns(pid) or 1
    time.sleep(0.001 if not start else 0.05)
with open(sys.argv[1], "w") as out:
    out.write("%.6f %.6f %.6f" % (ru.ru_utime, ru.ru_stime, start / 1e9))
    out.write(" %.6f\n" % (mark / 1e9) if mark_after else "\n")
sys.exit(os.waitstatus_to_exitcode(status))
