# marple-mallocstacks against a workload allocating from two known paths (root, real BPF).
. "$MARPLE_TOP/tests/lib.sh"
plan 32
. "$MARPLE_TOP/tests/collectors/stacks.sh"
W="$MARPLE_BIN/workloads"
MS="$MARPLE_BIN/marple-mallocstacks"

expect_exit "mallocstacks: bad --sample-every" 2 "" "$MS" --sample-every 0 1
libc_cases mallocstacks "$MS"

ratio() {	# ratio NAME A B WANT PERCENT
	if [ "$3" -gt 0 ] && awk -v a="$2" -v b="$3" -v w="$4" -v p="$5" 'BEGIN { r = a / b; d = r - w; if (d < 0) d = -d; exit !(d <= w * p / 100) }'; then
		pass "$1 ($2:$3)"
	else
		fail "$1" "got $2:$3, wanted $4:1 +-$5%"
	fi
}

# 1. -c: per round, path_small 3000 x 1000 bytes, path_big 1000 x 6000 bytes
"$MS" -c "$W/mallocpaths 3" > "$T/c.out" 2> "$T/c.err"; rc=$?
check "mallocstacks -c: exit 0 and a valid stream" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/c.out'"
small=$(weight "$T/c.out" '^mallocpaths;(.*;)?main;path_small;alloc_small;')
big=$(weight "$T/c.out" '^mallocpaths;(.*;)?main;path_big;alloc_big;')
ratio "mallocstacks -c: path_big:path_small bytes are 2:1" "$big" "$small" 2 1
check "mallocstacks -c: path_small is 9000000 bytes" test "$small" -eq 9000000
check "mallocstacks -c: units are bytes allocated" grep -q '"units":{"weight":"bytes","measure":"alloc_space","over_time":"sum"}' "$T/c.out"
check "mallocstacks -c: the immediate caller is kept" grep -q ';path_big;alloc_big;[^;]*malloc$' "$T/c.out"

# 1b. calloc and realloc, one program attached to the three functions
# (told apart by the uprobe's cookie): calloc(10, 100) counts 1000 bytes,
# realloc to 3000 bytes 3000, realloc(NULL, 700) 700 (through malloc)
"$MS" -c "$W/mallocpaths 2 0 0 grow" > "$T/g.out" 2>/dev/null
w=$(weight "$T/g.out" ';path_grow;grow_calloc;')
check "mallocstacks: calloc(10, 100) counts 1000 bytes a call ($w for 1000 calls)" test "$w" -eq 1000000
w=$(weight "$T/g.out" ';path_grow;grow_realloc;')
check "mallocstacks: realloc(p, 3000) counts 3000 bytes a call ($w for 1000 calls)" test "$w" -eq 3000000
w=$(weight "$T/g.out" ';path_grow;grow_new;')
check "mallocstacks: realloc(NULL, 700) counts 700 bytes once ($w for 1000 calls)" test "$w" -eq 700000

# 2. --sample-every 7: still the right ratio, weighted by 7
"$MS" --sample-every 7 -c "$W/mallocpaths 3" > "$T/s.out" 2>/dev/null
small=$(weight "$T/s.out" 'path_small')
big=$(weight "$T/s.out" 'path_big')
ratio "mallocstacks --sample-every 7: ratio still 2:1" "$big" "$small" 2 5
if awk -v s="$small" 'BEGIN { exit !(s > 8000000 && s < 10000000) }'; then pass "mallocstacks --sample-every 7: bytes estimated ($small)"
else fail "mallocstacks --sample-every 7: bytes estimated" "$small, wanted about 9000000"; fi

# 3. -p with a duration; SIGTERM ends a run with no duration
"$W/mallocpaths" 200 wait & wl=$!
libc_mapped "$wl"
MARPLE_READY_FILE="$T/pr" "$MS" -p "$wl" 2 > "$T/p.out" 2>/dev/null & ms=$!
if wait_ready "$T/pr" 30; then kill -USR1 "$wl"; fi
wait "$ms"; rc=$?
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
small=$(weight "$T/p.out" 'path_small')
big=$(weight "$T/p.out" 'path_big')
check "mallocstacks -p: exit 0" test "$rc" -eq 0
# a capture of a running process starts and ends inside a round: the paths
# alternate, so path_big's bytes are twice path_small's give or take one
# round's 6,000,000 bytes (a 2% ratio failed ~1 run in 10)
if [ "$big" -gt 20000000 ] && awk -v b="$big" -v s="$small" 'BEGIN { d = b - 2 * s; exit !(d <= 6000000 && d >= -6000000) }'; then
	pass "mallocstacks -p: path_big twice path_small, +- one round ($big:$small)"
else
	fail "mallocstacks -p: path_big twice path_small" "got $big:$small, wanted 2:1 +- 6000000 bytes"
fi
MARPLE_READY_FILE="$T/r4" "$MS" > "$T/term.out" 2>/dev/null & ms=$!
if wait_ready "$T/r4" 20; then sleep 0.3; kill -TERM "$ms"; fi
wait "$ms"; rc=$?
check "mallocstacks SIGTERM: exit 0, valid, ended signal" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/term.out' && grep -q '\"ended\":\"signal\"' '$T/term.out'"

# 4. --stack-storage: too small a store loses stacks, and says so (trailer,
#    stderr, dropped); their bytes stay, under "[lost: stack map full]" (not
#    "[missing user stack]": the stack was there, the map full).  manystacks 100 2:
#    100 distinct stacks, 100 bytes each, twice.
#    --drain-every 0: read at the end only (draining would make room).
"$MS" --stack-storage 64 --drain-every 0 -c "$W/manystacks 100 2" > "$T/st.out" 2> "$T/st.err"; rc=$?
check "mallocstacks --stack-storage 64: exit 0 and a valid stream" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/st.out'"
full=$(sed -n 's/^{"trailer".*"stack_map_full":\([0-9]*\).*/\1/p' "$T/st.out")
check "mallocstacks --stack-storage 64: stacks lost, in the trailer (${full:-none})" test "${full:-0}" -ge 36
check "mallocstacks --stack-storage 64: and on stderr" grep -q "stacks lost: [1-9][0-9]* (stack map full [1-9].*raise --stack-storage" "$T/st.err"
missing=$(weight "$T/st.out" '^manystacks;\[lost: stack map full\]$')
check "mallocstacks --stack-storage 64: lost stacks' bytes under [lost: stack map full] ($missing)" \
	test "$missing" -eq $(( ${full:-0} * 100 ))
dropped=$(sed -n 's/^{"trailer".*"dropped":\([0-9]*\).*"samples_stack_map_full":\([0-9]*\).*/\1 \2/p' "$T/st.out")
check "mallocstacks --stack-storage 64: the samples with a lost stack are dropped ($dropped; $full lost)" \
	test "$dropped" = "$full $full"
check "mallocstacks --stack-storage 64: no byte left out" \
	test $(( $(weight "$T/st.out" ';main;descend;') + missing )) -eq 20000
"$MS" -c "$W/manystacks 100 2" > "$T/st2.out" 2> "$T/st2.err"
check "mallocstacks default --stack-storage: none lost" grep -q '"stack_map_full":0,' "$T/st2.out"

# 5. a new program's first allocations come before its unwind table is
#    built (a file's is built when first met): the walk stops at its frames,
#    and the collector walks on from there in user space (unwindcut.c).  A
#    fresh copy of mallocpaths, one round, system-wide: every stack through
#    its paths whole, what could not be walked on ([no unwind table]: the
#    ring buffer full, counted cuts_not_sent) still counted, no byte lost.
MARPLE_READY_FILE="$T/cr" "$MS" 0 > "$T/cut.out" 2> "$T/cut.err" & ms=$!
if wait_ready "$T/cr" 20 "$ms"; then
	cp "$W/mallocpaths" "$T/freshmp"
	"$T/freshmp" 1
	rm -f "$T/freshmp"
fi
kill -INT "$ms"; wait "$ms"
cuts() { sed -n "s/.*\"unwind\":{[^}]*\"$1\":\([0-9]*\).*/\1/p" "$T/cut.out" | tail -n 1; }
sent=$(cuts cuts_sent) finished=$(cuts cuts_finished) left=$(cuts cuts_left)
check "mallocstacks: a new program's cut stacks sent ($sent), walked on ($finished) or left ($left)" \
	test "${sent:-0}" -gt 0 -a "${finished:-0}" -gt 0 -a "$((${finished:-0} + ${left:-0}))" -eq "${sent:-0}"
whole=$(weight "$T/cut.out" '^freshmp;_start;__libc_start_main;(.*;)?main;path_(small;alloc_small|big;alloc_big);')
check "mallocstacks: a new program: every stack through its paths whole ($whole bytes)" \
	test "$whole" -gt 0 -a "$whole" -eq "$(weight "$T/cut.out" '^freshmp;.*path_(small|big)')"
check "mallocstacks: a new program: no byte lost, whole or cut ($whole + $(weight "$T/cut.out" '^freshmp;\[no unwind table\];alloc_(small|big)'))" \
	test $((whole + $(weight "$T/cut.out" '^freshmp;\[no unwind table\];alloc_(small|big)'))) -eq 9000000
