# Stacks that say what they are (root, real BPF): an address outside every
# function is not named after the symbol below it, and a capture whose user
# stacks mostly stop short says so on stderr and counts them in the trailer.
. "$MARPLE_TOP/tests/lib.sh"
plan 15
W="$MARPLE_BIN/workloads"
if ! is_root; then skip_rest "honest" "needs root"; fi

trailer_num() { sed -n "s/.*\"trailer\":1.*\"$2\":\([0-9]*\).*/\1/p" "$1"; }

# 1. Debian's python3 has no frame pointers: a frame-pointer walk of its loop
# goes astray, but its frames are never _init or _fini (addresses past the
# last function of libpython used to be named _fini).
# (Debian's, not a pyenv shim; captured once it is in its loop: a sample of
# its start-up can truly be in _init, its page faulted in on first use)
/usr/bin/python3 -c 'import sys; open(sys.argv[1], "w").close()
while 1: pass' "$T/py.ready" & py=$!
i=0; while [ ! -e "$T/py.ready" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
marple-callstack -F 499 -p "$py" 2 > "$T/py.out" 2> "$T/py.err"; rc=$?
kill "$py" 2>/dev/null; wait "$py" 2>/dev/null
n=$(grep -Ec '^[0-9]+#.*;_(init|fini)(;|$)' "$T/py.out")
check "honest: python3 ran and no frame is _init or _fini ($n)" test "$rc" -eq 0 -a "$n" -eq 0

# 2. nofp (built -fomit-frame-pointer): its stacks stop at chain_c; stderr
# names the share, the reason and the cure, the trailer counts them.
# A handful of samples (49 Hz for 200 ms: 10 at most) is no evidence: no line.
"$W/nofp" 30 & wl=$!
sleep 0.2
marple-callstack --unwind fp -F 499 -p "$wl" 1 > "$T/fp.out" 2> "$T/fp.err"
marple-callstack --dwarf -F 499 -p "$wl" 1 > "$T/dw.out" 2> "$T/dw.err"
marple-callstack --unwind fp -F 49 -p "$wl" 200ms > "$T/few.out" 2> "$T/few.err"
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
check "honest: frame pointers on nofp: stderr says most stacks stop short and what helps" \
	grep -Eq '^marple-callstack: [0-9]+% of the user stacks .* stop before _start.*without frame pointers.*--unwind' "$T/fp.err"
uw=$(trailer_num "$T/fp.out" user_weight) iw=$(trailer_num "$T/fp.out" incomplete_user_weight)
check "honest: the trailer counts them ($iw of $uw samples)" test "${uw:-0}" -gt 0 -a "${iw:-0}" -gt $(( ${uw:-0} / 2 ))
check "honest: --dwarf on nofp: no such line" test "$(grep -c 'of the user stacks' "$T/dw.err")" -eq 0
# (CI once saw 1 incomplete sample of ~500 at load, never reproduced in 70
# runs here: at most 1% may stop short, and those stacks are printed)
uw=$(trailer_num "$T/dw.out" user_weight) iw=$(trailer_num "$T/dw.out" incomplete_user_weight)
[ "${iw:-0}" -gt 0 ] && echo "honest: --dwarf: incomplete stacks: $(grep -v '^{' "$T/dw.out" | grep -v '^[0-9]*#nofp;_start;' | cut -c1-200 | tr '\n' ' ')" >&2
check "honest: --dwarf: whole stacks (${iw:-?} of ${uw:-?} incomplete)" \
	test "${uw:-0}" -gt 0 -a $(( ${iw:-1} * 100 )) -le "${uw:-0}"
few=$(sed -n 's/.*"stack_errors":{"samples":\([0-9]*\).*/\1/p' "$T/few.out")
check "honest: $few samples, all incomplete: no line under 20 events" \
	test "${few:-99}" -lt 20 -a "$(grep -c 'of the user stacks' "$T/few.err")" -eq 0

# 3. hotcold keeps its frame pointers: nothing to say.
"$W/hotcold" 3 & wl=$!
sleep 0.2
marple-callstack -F 499 -p "$wl" 1 > "$T/hc.out" 2> "$T/hc.err"
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
check "honest: frame pointers on hotcold: no line about incomplete stacks" \
	test "$(grep -c 'of the user stacks' "$T/hc.err")" -eq 0

# 4. Samples asked for against samples delivered: the trailer's "sampling"
# has both, from the cpu-clock events' own time, and stderr speaks exactly
# when they differ by more than 2% (or its rounding slack).
ncpu=$(getconf _NPROCESSORS_ONLN)
# hotcold outlives both captures (killed after them): on a loaded machine the
# first one's start-up took long enough that a 4 s hotcold exited during -p's
"$W/hotcold" 30 & wl=$!
# the kernel's BPF statistics on for the first capture (the program's runs:
# marple reads them, never switches them on), off for the second
stats=/proc/sys/kernel/bpf_stats_enabled
old_stats=$(cat "$stats" 2>/dev/null || echo 0)
echo 1 > "$stats" 2>/dev/null
marple-callstack -F 499 1 > "$T/all.out" 2> "$T/all.err"
echo 0 > "$stats" 2>/dev/null
marple-callstack -F 499 -p "$wl" 1 > "$T/one.out" 2> "$T/one.err"
echo "$old_stats" > "$stats" 2>/dev/null
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
sampling_num() { sed -n "s/.*\"sampling\":{[^}]*\"$2\":\([0-9]*\).*/\1/p" "$1"; }
clock=$(sampling_num "$T/all.out" cpu_clock_ns) asked=$(sampling_num "$T/all.out" asked)
got=$(sampling_num "$T/all.out" delivered) runs=$(sampling_num "$T/all.out" program_runs)
idle=$(sampling_num "$T/all.out" idle_ns)
if awk -v c="${clock:-0}" -v n="$ncpu" -v a="${asked:-0}" -v i="${idle:-x}" 'BEGIN {
	exit !(i != "x" && c > 0.9e9 * n && c < 2e9 * n && a == int((c > i ? c - i : 0) * 499 / 1e9)) }'; then
	pass "honest: asked = 499 Hz x the busy cpu-clock time of $ncpu CPUs ($asked for $clock ns, $idle idle)"
else
	fail "honest: asked = 499 Hz x the cpu-clock time" "cpu_clock_ns ${clock:-?}, asked ${asked:-?}, $ncpu CPUs"
fi
# (the rule of lib/collect/cpuclock.c: 2%, or 2% of a second's samples and
# one a CPU when that is more: a capture's rounding is no loss; 50 at least)
off=$(awk -v a="${asked:-0}" -v g="${got:-0}" -v n="$ncpu" 'BEGIN {
	s = (499 * 0.02 + 1) * n; lo = a * 0.98; if (a - s < lo) lo = a - s
	hi = a * 1.02; if (a + s > hi) hi = a + s
	print (a >= 50 && (g < lo || g > hi)) ? 1 : 0 }')
said=$(grep -c 'asked for [0-9]* samples' "$T/all.err")
check "honest: delivered ($got, of $runs runs) vs asked ($asked): stderr says so exactly when off" \
	test "${runs:-0}" -gt 0 -a "$said" -eq "$off"
check "honest: the statistics off, the trailer says so and gives no runs" \
	sh -c 'grep -q "\"bpf_stats\":false" "$1" && ! grep -q "\"program_runs\"" "$1" && grep -q "\"bpf_stats\":true" "$2"' \
	sh "$T/one.out" "$T/all.out"
tcpu=$(sampling_num "$T/one.out" target_cpu_ns) asked=$(sampling_num "$T/one.out" asked)
got=$(sampling_num "$T/one.out" delivered)
check "honest: -p asks for 499 Hz x the process's CPU time (${tcpu:-?} ns: $asked asked, $got delivered)" \
	awk -v t="${tcpu:-0}" -v a="${asked:-0}" -v g="${got:-0}" 'BEGIN {
		exit !(t > 0 && a == int(t * 499 / 1e9) && g > 0.8 * a && g < 1.2 * a + 5) }'

# The memory the collector held, in its trailer (issue 38): resident now and
# at most, and its BPF maps as the kernel charges them (callstack's stack
# store alone is tens of MB)
mem=$(grep -o '"memory":{[^}]*}' "$T/all.out")
mem_num() { echo "$mem" | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }
check "honest: the trailer says the memory held ($mem)" awk -v r="$(mem_num rss_bytes)" \
	-v p="$(mem_num peak_rss_bytes)" -v b="$(mem_num bpf_map_bytes)" -v m="$(mem_num bpf_maps)" \
	'BEGIN { exit !(r > 1048576 && p >= r && b > 8388608 && m >= 5) }'

# 5. A machine not fully busy: the cpu-clock timer fires on idle CPUs too
# and the program runs there, to return at once; those runs are not set
# against the busy time ("asked for 100 samples, got 195 (+95%)" on a
# machine half idle).  No workload of ours: the more idle, the more it shows.
# (A loaded machine may still fall short, by steal time: only more samples
# than asked would be this fault.)
marple-callstack 1 > "$T/idle.out" 2> "$T/idle.err"
check "honest: an idle-ish machine, 1 s: no 'got more than asked' line ($(grep 'asked for' "$T/idle.err"))" \
	test "$(grep -c 'asked for [0-9]* samples.*got [0-9]* (+' "$T/idle.err")" -eq 0
# -I: every CPU's whole time asked for, every sample counted
marple-callstack -I 1 > "$T/allI.out" 2> "$T/allI.err"
clock=$(sampling_num "$T/allI.out" cpu_clock_ns) asked=$(sampling_num "$T/allI.out" asked)
got=$(sampling_num "$T/allI.out" delivered)
# (a tickless kernel may not sample an idle CPU at all: at least the busy
# time's samples, at most all the time's; no warning either way)
idle=$(sampling_num "$T/allI.out" idle_ns)
check "honest: -I asks for 99 Hz x all the cpu-clock time (${clock:-?} ns, ${idle:-?} idle: $asked asked, $got delivered)" \
	awk -v c="${clock:-0}" -v a="${asked:-0}" -v g="${got:-0}" -v i="${idle:-0}" 'BEGIN {
		exit !(c > 0 && a == int(c * 99 / 1e9) && g > 0.9 * (c - i) * 99 / 1e9 - 4 && g < 1.02 * a + 2) }'
check "honest: -I on a machine partly idle: no 'asked for' warning ($(grep 'asked for' "$T/allI.err"))" \
	test "$(grep -c 'asked for [0-9]* samples' "$T/allI.err")" -eq 0
