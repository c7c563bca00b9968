# Draining: stack collectors read and clear their kernel maps while they run,
# so a store far too small for the capture fills many times over and nothing
# is lost (root, real BPF).  --drain-every 0 (read only at the end) shows the
# same store losing stacks.
. "$MARPLE_TOP/tests/lib.sh"
plan 50
. "$MARPLE_TOP/tests/collectors/stacks.sh"
W="$MARPLE_BIN/workloads"
if ! is_root; then
	skip_rest "drain: BPF cases" "not root"
fi

# trailer FILE NAME: the number NAME has in the first trailer
trailer() {
	sed -n "/^{\"trailer\"/{s/.*\"$2\":\([0-9]*\).*/\1/p;q}" "$1"
}
# total FILE: the summed weight of the first section
total() { weight "$1" '.'; }
# span_us STREAM: from the first header's start to the last trailer's end, us
span_us() {
	awk '/^\{"marple"/ && !s { if (match($0, /"start_ns":[0-9]+/)) s = substr($0, RSTART + 11, RLENGTH - 11) }
	/^\{"trailer"/ { if (match($0, /"end_ns":[0-9]+/)) e = substr($0, RSTART + 9, RLENGTH - 9) }
	END { printf "%d\n", (e - s) / 1000 }' "$1"
}

# A busy machine with many distinct stacks: compressing, listing and starting
# processes (each with its own addresses) over and over.
busy() {
	while :; do
		tar cf - /usr/share/doc 2>/dev/null | gzip -1 > /dev/null
		ls -lR /usr/share/doc > /dev/null 2>&1
	done
}
busy & b1=$!
busy & b2=$!
trap 'kill $b1 $b2 2>/dev/null' EXIT
sleep 0.5

# lost_nothing NAME FILE: nothing dropped, no full map, no lost or missing frame
lost_nothing() {
	check "$1: dropped 0, map_full 0, stack_map_full 0" test \
		"$(trailer "$2" dropped) $(trailer "$2" map_full) $(trailer "$2" stack_map_full)" = "0 0 0"
	check "$1: no [lost: stack map full] or [missing ...] frame" sh -c "! grep -q '\[lost: \|\[missing ' '$2'"
}
# filled NAME FILE: the sets were drained because they filled, again and again
# (the 1 s period alone drains 3 or 4 times in 3 s)
filled() {
	d=$(trailer "$2" drains)
	check "$1: the store filled and was drained many times (${d:-none})" test "${d:-0}" -ge 10
}

# 1. callstack: 256 stacks a set, drained every 100 ms as well as when a set
#    fills (a loaded machine, or a sanitizer build, may wake the drainer late:
#    the default period is for the default size, 16384)
CS="$MARPLE_BIN/marple-callstack"
"$CS" --stack-storage 256 --drain-every 100 -F 499 3 > "$T/cs.out" 2> "$T/cs.err"; rc=$?
check "callstack --stack-storage 256: exit 0 and a valid stream" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/cs.out'"
filled "callstack --stack-storage 256" "$T/cs.out"
lost_nothing "callstack --stack-storage 256" "$T/cs.out"
s=$(trailer "$T/cs.out" samples); w=$(total "$T/cs.out")
check "callstack --stack-storage 256: the weights add up to the samples ($w of $s)" test "$w" -eq "$s" -a "$s" -gt 1000
"$CS" --stack-storage 64 --drain-every 0 -F 499 3 > "$T/cs0.out" 2> /dev/null
full=$(trailer "$T/cs0.out" stack_map_full)
check "callstack --drain-every 0: a store of 64 loses stacks ($full)" test "${full:-0}" -gt 0

# 1b. callstack --timed: each sample's stacks are taken as they come, before
#     their set is cleared: the samples section has them all
"$CS" --timed --stack-storage 256 --drain-every 100 -F 499 3 > "$T/cst.out" 2> /dev/null; rc=$?
check "callstack --timed --stack-storage 256: exit 0 and a valid stream" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/cst.out'"
filled "callstack --timed --stack-storage 256" "$T/cst.out"
s=$(trailer "$T/cst.out" samples); w=$(total "$T/cst.out")
n=$(sed -n '/^{"trailer"/{n;:a;/^{"trailer"/{s/.*"records":\([0-9]*\).*/\1/p;q};n;ba}' "$T/cst.out")
check "callstack --timed --stack-storage 256: nothing dropped, every sample timed ($w weighed, $n timed, of $s)" \
	test "$(grep -c '"dropped":0,' "$T/cst.out") $w $n" = "2 $s $s"

# 2. offcpu: 256 stacks a set; sleeper's reader thread is blocked across
#    many drains (its stacks are kept while it is away): ~3,000,000 us in 3 s
OC="$MARPLE_BIN/marple-offcpu"
"$W/sleeper" 60 & wl=$!
sleep 0.3
"$OC" --stack-storage 256 --drain-every 100 3 > "$T/oc.out" 2> "$T/oc.err"; rc=$?
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
check "offcpu --stack-storage 256: exit 0 and a valid stream" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/oc.out'"
filled "offcpu --stack-storage 256" "$T/oc.out"
lost_nothing "offcpu --stack-storage 256" "$T/oc.out"
# (against the capture's own span, header to trailer: 3 s, and more on a
# loaded machine, where stopping and the last drain take longer; a block
# weighing more than the span would be counted twice)
span=$(span_us "$T/oc.out")
r=$(weight "$T/oc.out" '^sleeper;.*reader;.*read;.*pipe_read')
check "offcpu --stack-storage 256: a block across drains keeps its stack ($r us of a $span us capture)" \
	test "$r" -ge $(( span * 75 / 100 )) -a "$r" -le $(( span * 103 / 100 )) -a "$span" -ge 3000000
n=$(weight "$T/oc.out" '^sleeper;.*main;.*nanosleep.*schedule')
check "offcpu --stack-storage 256: and short blocks add up ($n us of $span us)" \
	test "$n" -ge $(( span * 75 / 100 )) -a "$n" -le $(( span * 103 / 100 ))
# (without draining a quiet machine's offcpu may fit its 3 s in 256 stacks:
# the smallest store shows the loss draining prevents)
"$OC" --stack-storage 64 --drain-every 0 3 > "$T/oc0.out" 2> /dev/null
full=$(( $(trailer "$T/oc0.out" stack_map_full) + $(trailer "$T/oc0.out" map_full) ))
check "offcpu --drain-every 0: a store of 64 loses stacks ($full)" test "$full" -gt 0

# 3. mallocstacks: 1024 stacks a set; treestacks mallocs 100 bytes from each
#    of 16384 distinct stacks, a tree after another, for 3 s
MS="$MARPLE_BIN/marple-mallocstacks"
"$MS" --stack-storage 1024 -c "$W/treestacks 14 3" > "$T/ms.out" 2> "$T/ms.err"; rc=$?
check "mallocstacks --stack-storage 1024: exit 0 and a valid stream" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/ms.out'"
filled "mallocstacks --stack-storage 1024" "$T/ms.out"
lost_nothing "mallocstacks --stack-storage 1024" "$T/ms.out"
c=$(trailer "$T/ms.out" calls); s=$(trailer "$T/ms.out" samples); r=$(trailer "$T/ms.out" records)
check "mallocstacks --stack-storage 1024: every call counted, every stack apart ($c calls of $s, $r records)" \
	test "${c:-0}" -eq "${s:-1}" -a "${r:-0}" -ge 16384
w=$(weight "$T/ms.out" ';branch;(left|right);')
check "mallocstacks --stack-storage 1024: the bytes add up to the calls ($w)" test "$w" -eq $(( ${c:-0} * 100 ))
"$MS" --stack-storage 1024 --drain-every 0 -c "$W/treestacks 14 1" > "$T/ms0.out" 2> /dev/null
full=$(trailer "$T/ms0.out" stack_map_full)
check "mallocstacks --drain-every 0: the same store loses stacks ($full)" test "${full:-0}" -gt 0

# 4. memleak keeps only the stacks of outstanding allocations: the stacks of
#    freed ones are let go as its store fills (treestacks frees every block)
ML="$MARPLE_BIN/marple-memleak"
"$ML" --stack-storage 1024 -c "$W/treestacks 14 2" > "$T/ml.out" 2> "$T/ml.err"; rc=$?
check "memleak --stack-storage 1024: exit 0 and a valid stream" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/ml.out'"
filled "memleak --stack-storage 1024" "$T/ml.out"
check "memleak --stack-storage 1024: no stack lost" test "$(trailer "$T/ml.out" stack_map_full) $(trailer "$T/ml.out" dropped)" = "0 0"
"$ML" --stack-storage 1024 --drain-every 0 -c "$W/treestacks 14 1" > "$T/ml0.out" 2> /dev/null
full=$(trailer "$T/ml0.out" stack_map_full)
check "memleak --drain-every 0: the same store loses stacks ($full)" test "${full:-0}" -gt 0

# 4b. memleak whose outstanding allocations name far more stacks than a set
#    holds: treestacks leaks the block of one leaf in 4, 4096 distinct stacks
#    outstanding against 512 slots a set.  Their stacks move to user space as
#    their sets are cleared; each is named at the end.
"$ML" --stack-storage 1024 -c "$W/treestacks 14 2 16 4" > "$T/mlk.out" 2> "$T/mlk.err"; rc=$?
check "memleak, 4096 stacks outstanding: exit 0 and a valid stream" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/mlk.out'"
filled "memleak, 4096 stacks outstanding" "$T/mlk.out"
lost_nothing "memleak, 4096 stacks outstanding" "$T/mlk.out"
r=$(grep -cE ';branch;(left|right);' "$T/mlk.out")
check "memleak, 4096 stacks outstanding: every leaking stack named ($r records)" test "${r:-0}" -ge 4096
# the trailer says what the kept store holds: of 4096 leaking stacks, all but
# the two sets' 1024 slots moved to user space; 8 bytes a frame (~20) each,
# plus the hash tables' own
ks=$(trailer "$T/mlk.out" kept_stacks); kk=$(trailer "$T/mlk.out" kept_keys); kb=$(trailer "$T/mlk.out" kept_bytes)
check "memleak, 4096 stacks outstanding: the kept store counted ($ks stacks, $kk keys, $kb bytes)" \
	sh -c "[ ${ks:-0} -ge 3072 ] && [ ${kk:-0} -ge ${ks:-0} ] && [ ${kb:-0} -ge $(( ${ks:-0} * 160 )) ] && [ ${kb:-0} -le $(( ${kk:-0} * 1024 )) ]"

# 4c. memleak while half a million allocations stay outstanding: every sweep
#    walks them all, while the tree's distinct stacks fill a store of 1024
#    again and again.  A drain waited for the sweep to be applied on its own
#    thread (3.6 s at load 16 in a system-wide capture), and for the CPU:
#    now the sweep is applied by its thread, and the drains have a real-time
#    thread of their own.  Every held byte is named under its stack.
"$ML" --stack-storage 1024 -c "$W/treestacks 14 3 0 0 500000" > "$T/mlh.out" 2> "$T/mlh.err"; rc=$?
check "memleak, 500000 allocations held: exit 0 and a valid stream" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/mlh.out'"
filled "memleak, 500000 allocations held" "$T/mlh.out"
lost_nothing "memleak, 500000 allocations held" "$T/mlh.out"
a=$(trailer "$T/mlh.out" allocations); w=$(weight "$T/mlh.out" ';hold_blocks$')
check "memleak, 500000 allocations held: each outstanding, 100 bytes under hold_blocks ($a, $w bytes)" \
	test "${a:-0}" -eq 500000 -a "${w:-0}" -eq 50000000

# 6. a long capture folds: every 60 drain periods (here 3 s) what was drained is
#    named and let go, and the processes that had exited are forgotten.
#    Short burns (a process each) are named although forgotten since; the
#    timed samples of a stack drained on both sides of a fold find its record.
( while :; do "$W/burn" 200 > /dev/null; done ) & bl=$!
"$CS" --timed --stack-storage 256 --drain-every 50 -F 499 7 > "$T/csf.out" 2> "$T/csf.err"; rc=$?
kill "$bl" 2>/dev/null; wait "$bl" 2>/dev/null
check "callstack, folding: exit 0 and a valid stream" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/csf.out'"
f=$(trailer "$T/csf.out" folds)
check "callstack, folding: folded while capturing (${f:-none})" test "${f:-0}" -ge 1
s=$(trailer "$T/csf.out" samples); w=$(total "$T/csf.out")
n=$(sed -n '/^{"trailer"/{n;:a;/^{"trailer"/{s/.*"records":\([0-9]*\).*/\1/p;q};n;ba}' "$T/csf.out")
if [ "$(grep -c '"dropped":0,' "$T/csf.out")" -ne 2 ]; then	# what was dropped: say it
	echo "drain: callstack, folding: the trailers' counts:" >&2
	grep '^{"trailer"' "$T/csf.out" | grep -o '"records":[0-9]*,"lost":[0-9]*,"dropped":[0-9]*\|"stack_errors":{[^}]*' >&2
fi
check "callstack, folding: nothing dropped, every sample timed ($w weighed, $n timed, of $s)" \
	test "$(grep -c '"dropped":0,' "$T/csf.out") $w $n" = "2 $s $s"
a=$(weight "$T/csf.out" '^burn;'); l=$(weight "$T/csf.out" '^burn;.*main;top;mid;leaf')
check "callstack, folding: the exited burns named (leaf: $l of $a)" test "$l" -gt 0 -a $((l * 2)) -ge "$a"
# the trailer's "symbols": the images held at the end, and those let go
symbols() { sed -n "/^{\"trailer\"/{s/.*\"symbols\":{\"processes\":\([0-9]*\),\"files\":[0-9]*,\"forgotten\":\([0-9]*\)[,}].*/\1 \2/p;q}" "$1"; }
set -- $(symbols "$T/csf.out")
check "callstack, folding: the exited processes forgotten (${2:-none} forgotten, ${1:-?} held)" \
	test "${2:-0}" -ge 10 -a "${1:-0}" -ge 1
"$W/sleeper" 12 & wl=$!
sleep 0.3
"$OC" --stack-storage 256 --drain-every 50 7 > "$T/ocf.out" 2> "$T/ocf.err"; rc=$?
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
f=$(trailer "$T/ocf.out" folds)
check "offcpu, folding: exit 0, folded (${f:-none})" test "$rc" -eq 0 -a "${f:-0}" -ge 1
lost_nothing "offcpu, folding" "$T/ocf.out"
r=$(weight "$T/ocf.out" '^sleeper;.*reader;.*read;.*pipe_read') span=$(span_us "$T/ocf.out")
check "offcpu, folding: a block across folds keeps its stack ($r us of a $span us capture)" \
	test "$r" -ge $(( span * 75 / 100 )) -a "$r" -le $(( span * 103 / 100 )) -a "$span" -ge 7000000
# memleak names no exited process's allocations (their memory went back):
# it forgets their symbols while it runs, every 60 drain periods (3 s here),
# or a long capture over short processes holds every one's (a loop of
# them here: a quiet machine has few of its own)
( while :; do sh -c 'ls / > /dev/null'; sleep 0.02; done ) & sl=$!
"$ML" --drain-every 50 8 > "$T/mlf.out" 2> "$T/mlf.err"; rc=$?
kill "$sl" 2>/dev/null; wait "$sl" 2>/dev/null
set -- $(symbols "$T/mlf.out")
check "memleak, system-wide: the exited processes forgotten (${2:-none} forgotten, ${1:-?} held)" \
	test "$rc" -eq 0 -a "${2:-0}" -ge 10

# 5. the options
expect_exit "drain: --drain-every x is a usage error" 2 "drain-every" "$CS" --drain-every x 1
check "drain: --drain-every in -h" sh -c "'$MS' -h | grep -q -- --drain-every"
