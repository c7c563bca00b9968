# cputime.py FILE COMMAND...: run COMMAND, write its user and system CPU
# seconds to FILE (to the microsecond: time(1) gives hundredths), and its
# start-up's: the CPU its threads had run (schedstat) when it said it was
# ready (MARPLE_READY_FILE, collector(3)), 0 when it did not.  Used by
# tests/bench/python.sh and pythons.sh.
import glob, os, sys, time
ready = sys.argv[1] + ".ready"
if os.path.exists(ready):
    os.unlink(ready)
os.environ["MARPLE_READY_FILE"] = ready
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
start = 0
while True:
    done, status, ru = os.wait4(pid, os.WNOHANG)
    if done:
        break
    if not start and os.path.exists(ready):
        for t in glob.glob("/proc/%d/task/*/schedstat" % pid):
            try:
                start += int(open(t).read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
        start = start or 1
    time.sleep(0.001 if not start else 0.05)
with open(sys.argv[1], "w") as out:
    out.write("%.6f %.6f %.6f\n" % (ru.ru_utime, ru.ru_stime, start / 1e9))
sys.exit(os.waitstatus_to_exitcode(status))
