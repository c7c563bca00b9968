# The observer is not the observed (root, real BPF): marple's own processes
# (comm marple or marple-*, the pids in $MARPLE_SELF_PIDS, the collector
# itself) are left out of every capture unless --include-self is given.
# A copy of the hotcold workload named marple-hotcold stands for a busy marple
# program, a copy of dd named marple-dd for one doing disk I/O.
. "$MARPLE_TOP/tests/lib.sh"
plan 18
W="$MARPLE_BIN/workloads"
if ! is_root; then skip_rest "self" "needs root"; fi
expect_exit "self: a bad MARPLE_SELF_PIDS is a usage error" 2 "MARPLE_SELF_PIDS: 'x1' is not a process id" \
	env MARPLE_SELF_PIDS="12 x1" marple-callstack 1

cp "$W/hotcold" "$T/marple-hotcold"
cp "$(command -v dd)" "$T/marple-dd"

# weight of the records whose first frame (comm) matches an awk regex
weight_of() {
	awk -v re="$2" 'index($0, "#") && substr($0, 1, 1) != "{" {
		w = substr($0, 1, index($0, "#") - 1); f = substr($0, index($0, "#") + 1)
		sub(/;.*/, "", f); if (f ~ re) s += w } END { print s + 0 }' "$1"
}
trailer_num() { sed -n "s/.*\"trailer\":1.*\"$2\":\([0-9]*\).*/\1/p" "$1"; }

# 1. Whole system, while marple-hotcold burns a CPU and marple-memleak follows
# every malloc: hotcold is there, no marple-* is.
"$T/marple-hotcold" 30 & mh=$!
"$W/hotcold" 30 & hc=$!
marple-memleak 4 > "$T/ml.out" 2> "$T/ml.err" & ml=$!
sleep 0.3
marple-callstack -F 199 2 > "$T/sys.out" 2> "$T/sys.err"; rc1=$?
marple-callstack --include-self -F 499 1 > "$T/inc.out" 2> "$T/inc.err"; rc2=$?
wait "$ml"; rc3=$?
kill "$mh" "$hc" 2>/dev/null; wait "$mh" "$hc" 2>/dev/null
check "self: the captures ran" test "$rc1$rc2$rc3" = 000
hc_w=$(weight_of "$T/sys.out" '^hotcold$')
self_w=$(weight_of "$T/sys.out" '^marple(-|$)')
excl=$(trailer_num "$T/sys.out" self_excluded)
if [ "$hc_w" -gt 5 ] && [ "$self_w" -eq 0 ] && [ "${excl:-0}" -gt 20 ]; then
	pass "self: system-wide callstack has hotcold ($hc_w) and no marple-* (0; $excl samples left out)"
else
	fail "self: system-wide callstack has no marple-*" "hotcold $hc_w, marple-* $self_w, self_excluded ${excl:-?}"
fi
inc_w=$(weight_of "$T/inc.out" '^marple-hotcold$')
check "self: --include-self shows marple-hotcold ($inc_w samples)" test "$inc_w" -gt 4
check "self: --include-self says 0 left out" grep -q '"self_excluded":0' "$T/inc.out"
n=$(grep -c '^[0-9]*#marple' "$T/ml.out")
check "self: memleak has no stacks of marple programs ($n)" test "$n" -eq 0

# 2. A pid in MARPLE_SELF_PIDS is left out whatever its name.
"$W/hotcold" 30 & hc=$!
sleep 0.2
MARPLE_SELF_PIDS="1 $hc" marple-callstack -F 199 -p "$hc" 1 > "$T/pid.out" 2> "$T/pid.err"
kill "$hc" 2>/dev/null; wait "$hc" 2>/dev/null
w=$(weight_of "$T/pid.out" '.')
excl=$(trailer_num "$T/pid.out" self_excluded)
if [ "$w" -eq 0 ] && [ "${excl:-0}" -gt 5 ]; then pass "self: MARPLE_SELF_PIDS leaves a pid out ($excl samples)"
else fail "self: MARPLE_SELF_PIDS leaves a pid out" "weight $w, self_excluded ${excl:-?}"; fi

# 3. mallocstacks (uprobes on every process) while memleak runs and a copy of
# the leaky workload named marple-leaky calls malloc again and again: none of
# theirs.  (marple-leaky is what makes calls to leave out in a sanitizer build,
# where ASan's own malloc means marple-memleak never calls libc's.)
cp "$W/leaky" "$T/marple-leaky"
marple-memleak 3 > /dev/null 2>&1 & ml=$!
"$W/leaky" > /dev/null 2>&1 & lk=$!
(while :; do "$T/marple-leaky" 0 0 > /dev/null 2>&1; sleep 0.05; done) & mlk=$!
marple-mallocstacks 2 > "$T/ms.out" 2> "$T/ms.err"; rc=$?
kill "$mlk" 2>/dev/null; wait "$mlk" 2>/dev/null
wait "$ml"; kill "$lk" 2>/dev/null; wait "$lk" 2>/dev/null
n=$(grep -c '^[0-9]*#marple' "$T/ms.out")
excl=$(trailer_num "$T/ms.out" self_excluded)
check "self: mallocstacks without marple-* ($n records; $excl calls left out)" \
	test "$rc" -eq 0 -a "$n" -eq 0 -a "${excl:-0}" -gt 0

# 4. offcpu: marple-memleak blocks in poll all the time, and is not shown.
marple-memleak 3 > /dev/null 2>&1 & ml=$!
sleep 0.3
marple-offcpu 1 > "$T/off.out" 2> "$T/off.err"; rc=$?
wait "$ml"
n=$(grep -c '^[0-9]*#marple' "$T/off.out")
check "self: offcpu without marple-* ($n records)" test "$rc" -eq 0 -a "$n" -eq 0
check "self: offcpu counts what it left out" test "$(trailer_num "$T/off.out" self_excluded)" -gt 0

# 5. memtime: the collectors' memory is not counted, unless asked for.
marple-memleak 3 > /dev/null 2>&1 & ml=$!
sleep 0.5
marple-memtime -i 200ms 1 > "$T/mt.out" 2> "$T/mt.err"; rc1=$?
marple-memtime --include-self -i 200ms 1 > "$T/mt2.out" 2> "$T/mt2.err"; rc2=$?
wait "$ml"
n=$(grep -c ',comm=marple' "$T/mt.out")
check "self: memtime without marple-* points ($n)" test "$rc1" -eq 0 -a "$n" -eq 0
check "self: memtime counts what it left out" test "$(trailer_num "$T/mt.out" self_excluded)" -gt 0
n=$(grep -c ',comm=marple-memleak,' "$T/mt2.out")
check "self: memtime --include-self shows marple-memleak ($n points)" test "$rc2" -eq 0 -a "$n" -gt 0

# 6. disklat: O_DIRECT reads by marple-dd are left out, by dd are not.
F="$T/data"
dd if=/dev/urandom of="$F" bs=1M count=2 2>/dev/null && sync
for mode in default include; do
	rm -f "$T/ready"
	if [ "$mode" = include ]; then set -- --include-self; else set --; fi
	MARPLE_READY_FILE="$T/ready" marple-disklat "$@" > "$T/dl.$mode" 2> "$T/dl.$mode.err" & dl=$!
	if wait_ready "$T/ready" 20; then
		"$T/marple-dd" if="$F" of=/dev/null bs=4k iflag=direct count=100 2>/dev/null
		dd if="$F" of=/dev/null bs=4k iflag=direct count=100 2>/dev/null
	fi
	kill -INT "$dl"; wait "$dl"
done
mine=$(grep -c ',comm=marple-dd,' "$T/dl.default") theirs=$(grep -c ',comm=dd,.*bytes=4096' "$T/dl.default")
check "self: disklat leaves marple-dd out ($mine) and keeps dd ($theirs of 100)" test "$mine" -eq 0 -a "$theirs" -ge 95
check "self: disklat counts what it left out" test "$(trailer_num "$T/dl.default" self_excluded)" -ge 95
# (a request plugged and later issued by a kernel worker under other I/O is
# that worker's: 58 of 100 were marple-dd's once, beside a busy test run; what
# shows --include-self is that nothing is left out)
mine=$(grep -c ',comm=marple-dd,' "$T/dl.include") left=$(trailer_num "$T/dl.include" self_excluded)
check "self: disklat --include-self keeps marple-dd ($mine of 100) and leaves nothing out ($left)" test "$mine" -ge 20 -a "$left" = 0

# 7. The driver: a capture of callstack and memtime shows neither collector.
marple collect -t 2 -o "$T/c.marple" callstack memtime > "$T/c.err" 2>&1; rc=$?
n=$(grep -c -e '^[0-9]*#marple' -e ',comm=marple' "$T/c.marple" 2>/dev/null)
check "self: marple collect callstack memtime: no marple records ($n)" test "$rc" -eq 0 -a "${n:-1}" -eq 0
marple collect --include-self -t 1 -o "$T/c2.marple" memtime > "$T/c2.err" 2>&1; rc=$?
n=$(grep -c ',comm=marple-memtime,' "$T/c2.marple" 2>/dev/null)
check "self: marple collect --include-self passes it on ($n points)" test "$rc" -eq 0 -a "${n:-0}" -gt 0
