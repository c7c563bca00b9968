# unwind.sh — --unwind tables vs fp (and dwarf) on Debian's python3 (no
# frame pointers) in a busy loop, with -p at 999 Hz (and perl's and xz's
# stacks reaching their start, at the end):
#  - cost per sample: (BPF run time, from the trailer's sampling.program_ns,
#    + the collector's own CPU, perf stat's task-clock, every thread, start-up
#    and table building included) / samples delivered; tables/fp on the same
#    run, over 4 s and 20 s captures, several runs each (the ratio's spread);
#  - the share of samples whose stack reaches _start, per mode;
#  - the top stacks against perf record --call-graph dwarf's on the same workload;
#  - samples delivered against asked (the trailer's sampling);
#  - table rows, memory and build time for python3, and for a python3 that
#    imported every lib-dynload extension module.
# UNWIND_RUNS=N runs of each capture length (default 3).
set -u
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
PY=/usr/bin/python3
RUNS=${UNWIND_RUNS:-3}
[ -x "$PY" ] && [ "$(id -u)" = 0 ] && command -v perf >/dev/null ||
	{ echo "bench: unwind: skipped (needs root, $PY and perf)"; exit 0; }
cat > "$T/busy.py" <<'PYEOF'
import sys, time
t0 = time.time()
def work(n):
    return sum(i * i for i in range(n))
while time.time() - t0 < float(sys.argv[1]):
    work(10000)
PYEOF
# num FILE SECTION KEY: a number of the trailer's SECTION object; ms: one decimal
num() { grep -o "\"$2\":{[^}]*}" "$1" | tail -n 1 | sed -n "s/.*\"$3\":\([0-9.]*\).*/\1/p"; }
ms() { awk -v v="$(num "$@")" 'BEGIN { printf "%.1f", v }'; }

# capture MODE SECONDS NAME: the collector on a fresh busy python3; leaves
# NAME.out, NAME.err and NAME.cost ("cost_us delivered asked bpf_ns cpu_ms")
capture() {
	"$PY" "$T/busy.py" $(($2 + 3)) & wl=$!
	sleep 0.3
	perf stat -x, -e task-clock -o "$T/$3.stat" \
		marple-callstack --unwind "$1" -p "$wl" -F 999 "$2" > "$T/$3.out" 2> "$T/$3.err"
	kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
	cpu=$(awk -F, '$3 == "task-clock" { print $1 }' "$T/$3.stat")
	got=$(num "$T/$3.out" sampling delivered) asked=$(num "$T/$3.out" sampling asked)
	bpf=$(num "$T/$3.out" sampling program_ns)
	awk -v c="${cpu:-0}" -v g="${got:-0}" -v a="${asked:-0}" -v b="${bpf:-0}" \
		'BEGIN { printf "%.1f %d %d %d %.1f\n", (g > 0 ? (b / 1e3 + c * 1e3) / g : 0), g, a, b, c }' > "$T/$3.cost"
}

echo "bench: unwind: load average $(cut -d' ' -f1-3 /proc/loadavg), $(getconf _NPROCESSORS_ONLN) CPUs"
for secs in 4 20; do
	: > "$T/ratios"
	for run in $(seq "$RUNS"); do
		for mode in tables fp; do
			capture "$mode" "$secs" "$mode.$secs.$run"
			read -r cost got asked bpf cpu < "$T/$mode.$secs.$run.cost"
			echo "bench: unwind: ${secs} s run $run: $mode: $cost us a sample ($got samples of $asked asked; BPF $((bpf / 1000)) us, collector CPU $cpu ms)"
		done
		read -r ct _ < "$T/tables.$secs.$run.cost"
		read -r cf _ < "$T/fp.$secs.$run.cost"
		awk -v t="$ct" -v f="$cf" 'BEGIN { if (f > 0) printf "%.2f\n", t / f }' >> "$T/ratios"
	done
	sort -n "$T/ratios" | awk -v s="$secs" -v n="$RUNS" '{ r[NR] = $1 } END {
		printf "bench: unwind: COST RATIO tables/fp over %s s: median %.2f (min %.2f, max %.2f, %d runs; floor: <= 1.5)\n",
			s, r[int((NR + 1) / 2)], r[1], r[NR], NR }'
	# samples delivered against asked, both modes, every run
	cat "$T"/*."$secs".*.cost | awk -v s="$secs" '{ g += $2; a += $3; if (a1 == "" || ($3 > 0 && $2 / $3 < a1)) a1 = ($3 > 0 ? $2 / $3 : 0) }
		END { printf "bench: unwind: %s s: samples delivered %d of %d asked (%.1f%%; worst run %.1f%%; floor: >= 98%%)\n", s, g, a, 100 * g / (a > 0 ? a : 1), 100 * a1 }'
done

# stacks reaching _start, per mode (the 4 s runs; dwarf once)
capture dwarf 4 dwarf.4.1
for mode in tables fp dwarf; do
	f="$T/$mode.4.1.out"
	all=$(awk -F'#' '/^[0-9]+#python3;/ { t += $1 } END { print t + 0 }' "$f")
	ok=$(awk -F'#' '/^[0-9]+#python3;_start;/ { t += $1 } END { print t + 0 }' "$f")
	echo "bench: unwind: $mode: python3 samples reaching _start: $ok of $all; $(cut -d' ' -f1 "$T/$mode.4.1.cost") us a sample"
done
echo "bench: unwind: tables for python3 and its libraries: $(num "$T/tables.4.1.out" unwind files) files, $(num "$T/tables.4.1.out" unwind rows) rows, $(num "$T/tables.4.1.out" unwind table_bytes) bytes ($(awk -v b="$(num "$T/tables.4.1.out" unwind bytes_per_row)" 'BEGIN { printf "%.2f", b }') a row), built in $(ms "$T/tables.4.1.out" unwind build_cpu_ms) ms of CPU ($(ms "$T/tables.4.1.out" unwind build_ms) ms elapsed), $(num "$T/tables.4.1.out" unwind fdes_by_libdw) FDEs left to libdw"

# top stacks against perf record --call-graph dwarf on the same workload:
# user frames only (kernel frames dropped, [module] frames and libc's
# __libc_start_main_impl alias named alike), as shares of all samples;
# native frames only (--no-python): perf does not see Python's
"$PY" "$T/busy.py" 12 & wl=$!
sleep 0.3
marple-callstack --no-python -p "$wl" -F 999 4 > "$T/ours.out" 2>/dev/null
perf record -q -F 999 --call-graph dwarf -o "$T/perf.data" -p "$wl" -- sleep 4 2>/dev/null >/dev/null
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
marple-fold -k "$T/ours.out" > "$T/ours.fold" 2>/dev/null
perf script -i "$T/perf.data" 2>/dev/null | marple-fold -k > "$T/perf.fold" 2>/dev/null
norm() {
	awk '{ n = split($0, w, " "); c = w[n]; s = substr($0, 1, length($0) - length(c) - 1)
		k = split(s, f, ";"); out = ""
		for (i = 1; i <= k; i++) {
			if (f[i] ~ /_\[k\]$/) continue
			if (f[i] ~ /^\[/) f[i] = "[?]"
			sub(/^__libc_start_main(_impl|@@[A-Z_0-9.]+)$/, "__libc_start_main", f[i])
			out = out (out == "" ? "" : ";") f[i]
		}
		print out "\t" c }' "$1" | awk -F'\t' '{ w[$1] += $2; t += $2 } END { for (s in w) printf "%.6f\t%s\n", w[s] / t, s }' | sort -rn
}
norm "$T/ours.fold" > "$T/ours.share"
norm "$T/perf.fold" > "$T/perf.share"
awk -F'\t' 'NR == FNR { p[$2] = $1; next } { o[$2] = $1; ov += ($1 < p[$2] ? $1 : p[$2]) }
	END { printf "bench: unwind: stacks against perf --call-graph dwarf: %.1f%% of the samples agree (the sum over stacks of the smaller share)\n", 100 * ov }' \
	"$T/perf.share" "$T/ours.share"
head -n 5 "$T/ours.share" | while IFS="$(printf '\t')" read -r share stack; do
	theirs=$(awk -F'\t' -v s="$stack" '$2 == s { print $1 }' "$T/perf.share")
	leaf=$(echo "$stack" | awk -F';' '{ print $(NF - 1) ";" $NF }')
	awk -v a="$share" -v b="${theirs:-0}" -v l="$leaf" 'BEGIN { printf "bench: unwind:   top stack ...%s: ours %.1f%%, perf %.1f%%\n", l, 100 * a, 100 * b }'
done
for f in ours perf; do
	echo "bench: unwind: $f: $(awk -F'\t' '$2 ~ /^python3;_start;/ { s += $1 } END { printf "%.1f%%", 100 * s }' "$T/$f.share") of python3's samples reach _start"
done

# a python3 with many shared libraries: every extension module of lib-dynload imported
"$PY" -c '
import glob, importlib, os, sys, time
for f in glob.glob(sys.base_prefix + "/lib/python3*/lib-dynload/*.so"):
    try: importlib.import_module(os.path.basename(f).split(".")[0])
    except Exception: pass
open(sys.argv[1], "w").close()
t0 = time.time()
while time.time() - t0 < 30: sum(i * i for i in range(10000))
' "$T/imported" & wl=$!
while [ ! -e "$T/imported" ] && kill -0 "$wl" 2>/dev/null; do sleep 0.1; done
nlib=$(awk '$2 ~ /x/ && $6 ~ /\.so/ { print $6 }' "/proc/$wl/maps" | sort -u | wc -l)
for run in 1 2 3; do
	perf stat -x, -e task-clock -o "$T/many.stat" marple-callstack -p "$wl" -F 999 1 > "$T/many.out" 2>/dev/null
	echo "bench: unwind: python3 with $nlib shared libraries mapped, run $run: $(num "$T/many.out" unwind files) files, $(num "$T/many.out" unwind rows) rows, $(num "$T/many.out" unwind table_bytes) bytes of tables, built in $(ms "$T/many.out" unwind build_cpu_ms) ms of CPU ($(ms "$T/many.out" unwind build_ms) ms elapsed); the collector's CPU for 1 s: $(awk -F, '$3 == "task-clock" { printf "%.0f", $1 }' "$T/many.stat") ms"
done
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null

# Debian's perl and xz (no frame pointers either), the defaults: the share of
# samples whose stack reaches the program's start (_start, or
# __libc_start_main where a stripped binary's _start has no name)
for prog in perl xz; do
	command -v "$prog" > /dev/null || { echo "bench: unwind: $prog: not installed"; continue; }
	case $prog in
	perl) perl -e '$x = 0; while (1) { $x++ for 1 .. 1000 }' & wl=$! ;;
	xz) xz -9 -T1 -c /dev/urandom > /dev/null & wl=$! ;;
	esac
	sleep 0.3
	marple-callstack -p "$wl" -F 999 3 > "$T/$prog.out" 2> /dev/null
	kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
	awk -F'#' -v p="$prog" '/^[0-9]+#/ { t += $1; if ($2 ~ /;(_start|__libc_start_main);/) ok += $1 }
		END { printf "bench: unwind: %s (defaults, -p, 999 Hz, 3 s): %d of %d samples reach _start/__libc_start_main (%.1f%%; floor >= 99%%)\n", p, ok, t, 100 * ok / (t > 0 ? t : 1) }' "$T/$prog.out"
done
exit 0
