# unwind.sh — --unwind tables vs fp vs dwarf on Debian's python3 (no frame
# pointers) in a busy loop, 4 s at 999 Hz with -p: the share of samples whose
# stack reaches _start, the BPF program's time per run (kernel.bpf_stats_enabled
# and bpftool prog show), the collector's CPU time per sample, samples delivered
# and the table memory and build time from the trailer.
set -u
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
PY=/usr/bin/python3
[ -x "$PY" ] && [ -w /proc/sys/kernel/bpf_stats_enabled ] && command -v bpftool >/dev/null ||
	{ echo "bench: unwind: skipped (needs root, $PY and bpftool)"; exit 0; }
cat > "$T/busy.py" <<'PYEOF'
import sys, time
t0 = time.time()
def work(n):
    return sum(i * i for i in range(n))
while time.time() - t0 < float(sys.argv[1]):
    work(10000)
PYEOF
old=$(cat /proc/sys/kernel/bpf_stats_enabled)
echo 1 > /proc/sys/kernel/bpf_stats_enabled
for mode in tables fp dwarf; do
	"$PY" "$T/busy.py" 6 & wl=$!
	sleep 0.3
	/usr/bin/time -f "%U %S" -o "$T/$mode.time" marple-callstack --unwind "$mode" -p "$wl" -F 999 4 > "$T/$mode.out" 2>/dev/null & cs=$!
	sleep 3.5
	bpftool prog show name do_sample | sed -n 's/.* run_time_ns \([0-9]*\) run_cnt \([0-9]*\).*/\1 \2/p' | head -n 1 > "$T/$mode.stats"
	wait "$cs"; wait "$wl"
	all=$(awk -F'#' '/^[0-9]+#python3;/ { t += $1 } END { print t + 0 }' "$T/$mode.out")
	ok=$(awk -F'#' '/^[0-9]+#python3;_start;/ { t += $1 } END { print t + 0 }' "$T/$mode.out")
	read -r ns cnt < "$T/$mode.stats" || { ns=0; cnt=0; }
	read -r u s < "$T/$mode.time"
	echo "bench: unwind: $mode: python3 samples reaching _start: $ok of $all; BPF $(( ns / (cnt > 0 ? cnt : 1) )) ns a run ($cnt runs); collector CPU $(awk -v u="$u" -v s="$s" -v n="$all" 'BEGIN { printf "%.1f", (n > 0 ? (u + s) * 1e6 / n : 0) }') us a sample ($u s user, $s s system, start-up and tables included)"
	[ "$mode" = tables ] && echo "bench: unwind: tables for python3 and its libraries: $(grep -o '"unwind":{[^}]*}' "$T/$mode.out" | sed 's/.*"files":\([0-9]*\).*"rows":\([0-9]*\).*"table_bytes":\([0-9]*\).*"build_ms":\([0-9.]*\).*/\1 files, \2 rows, \3 bytes, built in \4 ms/')"
done
echo "$old" > /proc/sys/kernel/bpf_stats_enabled

# a python3 with many shared libraries: every extension module of lib-dynload imported
"$PY" -c '
import glob, importlib, os, sys, time
for f in glob.glob(sys.base_prefix + "/lib/python3*/lib-dynload/*.so"):
    try: importlib.import_module(os.path.basename(f).split(".")[0])
    except Exception: pass
t0 = time.time()
while time.time() - t0 < 3: sum(i * i for i in range(10000))
' & wl=$!
sleep 1
nlib=$(awk '$2 ~ /x/ && $6 ~ /\.so/ { print $6 }' "/proc/$wl/maps" | sort -u | wc -l)
marple-callstack -p "$wl" -F 999 1 > "$T/many.out" 2>/dev/null
wait "$wl"
echo "bench: unwind: python3 with $nlib shared libraries mapped: $(grep -o '"unwind":{[^}]*}' "$T/many.out" | sed 's/.*"files":\([0-9]*\).*"rows":\([0-9]*\).*"table_bytes":\([0-9]*\).*"build_ms":\([0-9.]*\).*/\1 files, \2 rows, \3 bytes of tables, built in \4 ms/')"
