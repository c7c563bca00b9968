# marple-pprof: what the real client (go tool pprof, Debian's golang-go) reads
# from its output: totals equal to marple-fold's, the hot function, hosts as
# labels, sample types from the units, kernel frames in [kernel.kallsyms], a
# fleet merged, mismatched inputs refused naming both.
. "$MARPLE_TOP/tests/lib.sh"
plan 59
if ! command -v go >/dev/null 2>&1; then
	fail "pprof: go" "go missing (scripts/install-deps installs golang-go)"; exit 0
fi
# go writes its caches under HOME and GOCACHE: keep them in the test's directory
export HOME="$T/home" GOCACHE="$T/gocache" GOPATH="$T/gopath" GOFLAGS= GOTOOLCHAIN=local GOPROXY=off
mkdir -p "$HOME"
pprof() { go tool pprof "$@" 2>"$T/pprof.err"; }
# the sum of the first value of every sample in -raw output
raw_total() { awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 } s && /^ *[0-9]+( +[0-9]+)*:/ { t += $1 } END { print t + 0 }'; }
fold_total() { awk '{ t += $NF } END { print t + 0 }'; }

# Two hosts of a CPU profile at 99 Hz, as marple-callstack writes them.
cpu() {	# HOST WALL_S
	echo '{"marple":1,"interface":"callstack","datatype":"stack","start_ns":1000000000,"wall_ns":'"$2"'000000000,"clock":"monotonic","host":"'"$1"'","kernel":"6.1.0","units":{"weight":"samples"},"options":{"frequency":99,"stacks":"both"}}'
	echo '297#python3;_start;main;Py_RunMain;_PyEval_EvalFrameDefault;compute_hot'
	echo '41#python3;_start;main;Py_RunMain;PyObject_Malloc'
	echo '12#bash;main;execute_command;waitpid;do_syscall_64_[k];schedule_[k]'
	echo '3#sshd;main;std::map<int%2C char>::find;operator new(unsigned long)'
	echo '{"trailer":1,"end_ns":11000000000,"records":4,"lost":0,"dropped":0,"ended":"duration"}'
}
cpu db1 1795262400 > "$T/db1.marple"
cpu db2 1795262405 | sed 's/^297#/100#/' > "$T/db2.marple"

marple-pprof "$T/db1.marple" > "$T/db1.pb.gz"
check "pprof: exit 0 on a CPU section" test $? -eq 0
check "pprof: output is gzip" sh -c "gzip -t '$T/db1.pb.gz'"
pprof -raw "$T/db1.pb.gz" > "$T/db1.raw"
check "pprof: go tool pprof reads it" test -s "$T/db1.raw"
want=$(marple-fold "$T/db1.marple" | fold_total); got=$(raw_total < "$T/db1.raw")
check "pprof: -raw total $got equals marple-fold's $want" test "$got" = "$want" -a "$want" = 353
check "pprof: sample types samples/count then cpu/nanoseconds" grep -qx 'samples/count cpu/nanoseconds' "$T/db1.raw"
# 297 samples at 99 Hz: 297 * 10^9 / 99 ns
check "pprof: cpu value is samples x the period (297 -> 3000000000 ns)" grep -Eq '^ +297 +3000000000: ' "$T/db1.raw"
check "pprof: period type cpu/nanoseconds, period 10101010" sh -c "grep -qx 'PeriodType: cpu nanoseconds' '$T/db1.raw' && grep -qx 'Period: 10101010' '$T/db1.raw'"
check "pprof: time and duration from the header and trailer" sh -c "grep -q '^Time: 2026-11-21 12:00:00' '$T/db1.raw' && grep -qx 'Duration: 10s' '$T/db1.raw'"
check "pprof: one location per distinct frame (15)" test "$(awk '/^Locations/ { l = 1; next } /^Mappings/ { l = 0 } l' "$T/db1.raw" | wc -l)" -eq 15
check "pprof: kernel frames in [kernel.kallsyms], _[k] dropped from the name" sh -c "
	grep -Eq '^ +[0-9]+: 0x0 M=2 schedule :0' '$T/db1.raw' && grep -Eq '^2: .*\[kernel\.kallsyms\]' '$T/db1.raw'"
check "pprof: escaped names decoded (std::map<int, char>::find)" grep -q 'std::map<int, char>::find' "$T/db1.raw"
# '%' is a name's own byte once decoded, as every renderer shows it; a name that
# is not UTF-8 is %XX-escaped whole (pprof's strings are UTF-8)
printf '{"marple":1,"interface":"x","datatype":"stack","units":{"weight":"samples"}}\n3#foo%%25bar;100%%25%%25;bad%%FF%%25x\n' > "$T/pct.marple"
marple-pprof "$T/pct.marple" > "$T/pct.pb.gz" && pprof -raw "$T/pct.pb.gz" > "$T/pct.raw"
check "pprof: '%' in names decoded (foo%bar, 100%%), not %25" sh -c "
	grep -Eq ' foo%bar :0' '$T/pct.raw' && grep -Eq ' 100%% :0' '$T/pct.raw' && grep -q 'comm:\[foo%bar\]' '$T/pct.raw' && ! grep -q '%25bar\|100%25' '$T/pct.raw'"
check "pprof: a name that is not UTF-8 %XX-escaped whole" grep -Eq ' bad%FF%25x :0' "$T/pct.raw"

pprof -top -sample_index=samples "$T/db1.pb.gz" > "$T/db1.top"
check "pprof: -top names the hot function first" sh -c "awk '/flat%/ { getline; print \$NF; exit }' '$T/db1.top' | grep -qx compute_hot"
check "pprof: -top total 353 samples" grep -q 'Total samples = 353' "$T/db1.top"
pprof -top "$T/db1.pb.gz" > "$T/db1.topcpu"
check "pprof: default sample type cpu: 3.57s in total" grep -q 'Total samples = 3.57s' "$T/db1.topcpu"

# A fleet: two hosts in one profile.
marple-pprof "$T/db1.marple" "$T/db2.marple" > "$T/fleet.pb.gz"
check "pprof: two files merge (exit 0)" test $? -eq 0
pprof -tags -sample_index=samples "$T/fleet.pb.gz" > "$T/fleet.tags"
check "pprof: -tags shows both hosts with their totals" sh -c "
	grep -Eq ' 353(\.0)? .*: db1$' '$T/fleet.tags' && grep -Eq ' 156(\.0)? .*: db2$' '$T/fleet.tags'"
check "pprof: -tags shows the processes (comm)" sh -c "grep -Eq ' 479(\.0)? .*: python3$' '$T/fleet.tags' && grep -q ': sshd' '$T/fleet.tags'"
pprof -raw "$T/fleet.pb.gz" > "$T/fleet.raw"
want=$(cat "$T/db1.marple" "$T/db2.marple" | marple-fold | fold_total); got=$(raw_total < "$T/fleet.raw")
check "pprof: merged -raw total $got equals marple-fold's $want" test "$got" = "$want" -a "$want" = 509
check "pprof: merged locations shared (still 15)" test "$(awk '/^Locations/ { l = 1; next } /^Mappings/ { l = 0 } l' "$T/fleet.raw" | wc -l)" -eq 15
check "pprof: merged duration spans both hosts (15s)" grep -qx 'Duration: 15s' "$T/fleet.raw"
pprof -top -sample_index=samples -tagfocus=host=db2 "$T/fleet.pb.gz" > "$T/db2.top"
check "pprof: -tagfocus=host=db2 keeps db2's 156 samples" grep -q 'accounting for 156, 30.65% of 509 total' "$T/db2.top"

# Real perf stacks (iperf with pid/tid, kernel frames annotated) through marple-fold.
I="$MARPLE_TOP/tests/fold/conformance/stackcollapse-perf/input/perf-iperf-stacks-pidtid-01.txt"
marple-fold --to-stream --kernel --tid "$I" > "$T/iperf.marple"
marple-pprof -o "$T/iperf.pb.gz" "$T/iperf.marple"
check "pprof -o: exit 0 and the file written" test $? -eq 0 -a -s "$T/iperf.pb.gz"
pprof -raw "$T/iperf.pb.gz" > "$T/iperf.raw"
want=$(marple-fold --kernel --tid "$I" | fold_total); got=$(raw_total < "$T/iperf.raw")
check "pprof: perf iperf -raw total $got equals marple-fold's $want" test "$got" = "$want" -a "$want" -gt 100
check "pprof: samples/count only (no frequency in the header)" grep -qx 'samples/count' "$T/iperf.raw"
hot=$(marple-fold --kernel --tid "$I" | awk '{ n = split($1, f, ";"); leaf = f[n]; sub(/_\[k\]$/, "", leaf); w[leaf] += $NF }
	END { for (l in w) if (w[l] > best) { best = w[l]; name = l } print name }')
pprof -top "$T/iperf.pb.gz" > "$T/iperf.top"
check "pprof: -top's first function is marple-fold's hottest leaf ($hot)" sh -c "
	awk '/flat%/ { getline; print \$NF; exit }' '$T/iperf.top' | grep -qx -- '$hot'"
pprof -tags "$T/iperf.pb.gz" > "$T/iperf.tags"
check "pprof: pid and tid labels from comm-PID/TID root frames" sh -c "
	grep -q '^ pid: Total 201' '$T/iperf.tags' && grep -Eq ': 28741$' '$T/iperf.tags' && grep -Eq ': iperf$' '$T/iperf.tags'"

# Sample types from the units.
st() {	# INTERFACE UNIT -> the sample types line of -raw
	printf '{"marple":1,"interface":"%s","datatype":"stack","host":"h","units":{"weight":"%s"}}\n7#a;b\n' "$1" "$2" > "$T/st.marple"
	marple-pprof "$T/st.marple" > "$T/st.pb.gz" && pprof -raw "$T/st.pb.gz" | sed -n '/^Samples:/{n;p;q}'
}
check "pprof: offcpu us -> off_cpu/microseconds" test "$(st offcpu us)" = off_cpu/microseconds
check "pprof: mallocstacks bytes -> alloc_space/bytes" test "$(st mallocstacks bytes)" = alloc_space/bytes
check "pprof: memleak bytes -> inuse_space/bytes" test "$(st memleak bytes)" = inuse_space/bytes
check "pprof: diskblockrq requests -> requests/count" test "$(st diskblockrq requests)" = requests/count
check "pprof: other bytes -> space/bytes" test "$(st diskblockrq bytes)" = space/bytes
# a collector says what its weight measures (lib/format/weight.h): the type
# follows the header, whatever the interface is called
stm() {	# INTERFACE UNIT MEASURE -> the sample types line of -raw
	printf '{"marple":1,"interface":"%s","datatype":"stack","host":"h","units":{"weight":"%s","measure":"%s"}}\n7#a;b\n' "$1" "$2" "$3" > "$T/st.marple"
	marple-pprof "$T/st.marple" > "$T/st.pb.gz" && pprof -raw "$T/st.pb.gz" | sed -n '/^Samples:/{n;p;q}'
}
check "pprof: any interface's us measuring off_cpu -> off_cpu/microseconds" test "$(stm waits us off_cpu)" = off_cpu/microseconds
check "pprof: any interface's bytes measuring inuse_space -> inuse_space/bytes" test "$(stm heldmem bytes inuse_space)" = inuse_space/bytes
check "pprof: an offcpu section measuring time is time (the header wins)" test "$(stm offcpu us time)" = time/microseconds

# Errors.
printf '{"marple":1,"interface":"offcpu","datatype":"stack","host":"db3","units":{"weight":"us"}}\n5#a;b\n' > "$T/off.marple"
expect_exit "pprof: CPU and off-CPU inputs refused, naming both" 1 \
	"^marple-pprof: .*off\.marple:1: section 0 \(offcpu\) has sample types off_cpu/microseconds, but .*db1\.marple section 0 \(callstack\) has samples/count,cpu/nanoseconds" \
	marple-pprof "$T/db1.marple" "$T/off.marple"
marple-pprof -o "$T/none.pb.gz" "$T/db1.marple" "$T/off.marple" 2>/dev/null
check "pprof -o: no file after a refused merge" test ! -e "$T/none.pb.gz"
printf '{"marple":1,"interface":"cpusched","datatype":"event"}\n1,sched_switch,cpu0\n' > "$T/ev.marple"
expect_exit "pprof: an event section is an error" 1 "^marple-pprof: .*ev\.marple:1: section 0 holds event data, not stacks" marple-pprof "$T/ev.marple"
# Folded text, as marple-fold writes it (and flamegraph, treemap, fold take it).
marple-fold "$T/db1.marple" | marple-pprof > "$T/folded.pb.gz"
check "pprof: folded text on stdin: exit 0" test $? -eq 0
pprof -top "$T/folded.pb.gz" > "$T/folded.top"
check "pprof: folded text: go tool pprof -top reads it, 353 samples, compute_hot first" sh -c "
	grep -q 'accounting for 353, 100% of 353 total' '$T/folded.top' && awk '/flat%/ { getline; print \$NF; exit }' '$T/folded.top' | grep -qx compute_hot"
pprof -raw "$T/folded.pb.gz" > "$T/folded.raw"
check "pprof: folded text: samples/count, comm the root frame, schedule_[k] in [kernel.kallsyms]" sh -c "
	grep -qx 'samples/count' '$T/folded.raw' && grep -q 'comm:\[python3\]' '$T/folded.raw' && grep -Eq '^ +[0-9]+: 0x0 M=2 schedule :0' '$T/folded.raw'"
if command -v protoc >/dev/null 2>&1; then
	gzip -dc "$T/folded.pb.gz" | protoc --decode_raw > "$T/folded.proto" 2>&1
	check "pprof: folded text: protoc --decode_raw reads it, the frames in its string table" sh -c "
		grep -q '^6: \"compute_hot\"' '$T/folded.proto' && grep -q '^6: \"Py_RunMain\"' '$T/folded.proto'"
else
	skip "pprof: folded text: protoc --decode_raw" "no protoc"
fi
printf 'a;b 3\na;c 2.5\na;d 1 2\nno count\na;e 1\na;f 1\n' > "$T/folded.txt"
expect_exit "pprof: folded lines with a decimal count, two counts or none named and skipped (exit 0)" 0 \
	"folded\.txt:2: count is not a whole number" marple-pprof -o "$T/folded3.pb.gz" "$T/folded.txt"
check "pprof: ... the good lines kept (5 samples)" test "$(pprof -raw "$T/folded3.pb.gz" | raw_total)" = 5
printf 'no count\n' > "$T/nocount.txt"
expect_exit "pprof: folded text without a usable line exits 1" 1 "nocount\.txt: unusable input" marple-pprof "$T/nocount.txt"
printf 'a;b 3\n\0\n' > "$T/nul.txt"
expect_exit "pprof: folded text with a NUL byte is unusable (exit 1)" 1 "nul\.txt: unusable input: a NUL byte at line 2" marple-pprof "$T/nul.txt"
{ cat "$T/db1.marple"; } | sed '3s/.*/x#bad/' > "$T/part.marple"
expect_exit "pprof: a malformed line is named and skipped" 0 "^marple-pprof: .*part\.marple:3: " marple-pprof -o "$T/part.pb.gz" "$T/part.marple"
got=$(pprof -raw "$T/part.pb.gz" | raw_total)
check "pprof: the rest kept (353 - 41 = $got)" test "$got" = 312
expect_exit "pprof: unknown option exits 2" 2 "" marple-pprof --bogus
# -o onto a pipe writes into it (a temporary file renamed over it once replaced /dev/null)
mkfifo "$T/fifo"
cat "$T/fifo" > "$T/fromfifo" &
marple-pprof -o "$T/fifo" "$T/db1.marple"
wait
check "pprof -o FIFO: the pipe stays a pipe and carries the profile" sh -c "test -p '$T/fifo' && gzip -t '$T/fromfifo' && cmp -s '$T/fromfifo' '$T/db1.pb.gz'"
# A timed stack section: its samples section (the times) is skipped, the stacks' weights kept.
marple-cat -s 0,1 "$DATA/timed.marple" | marple-pprof > "$T/timed.pb.gz"
check "pprof: a timed section's samples section is skipped (exit 0)" test $? -eq 0
got=$(pprof -raw "$T/timed.pb.gz" | raw_total)
check "pprof: a timed section's total is its stacks' (8)" test "$got" = 8

# The trailer's "frames" (marple-format(5)): Python frames become their
# function, file and line; native frames go in their file's mapping with its
# build id, at their function's offset; frames it calls kernel frames go in
# [kernel.kallsyms] without "_[k]".
{ echo '{"marple":1,"interface":"callstack","datatype":"stack","host":"h","units":{"weight":"samples"}}'
  echo '7#python3;_start;<module> (/app/x.py:12);Tree.walk (/app/x.py:8);fib (/app/x.py:3);PyNumber_Add'
  echo '5#python3;_start;<module> (/app/x.py:12);Tree.walk (/app/x.py:9);fib (/app/x.py:4);do_syscall_64'
  echo '{"trailer":1,"records":2,"frames":{"_start":{"kind":"native","file":"/usr/bin/python3.11","build_id":"571d98e0","offset":2259888},"<module> (/app/x.py:12)":{"kind":"python","file":"/app/x.py","line":12},"Tree.walk (/app/x.py:8)":{"kind":"python","file":"/app/x.py","line":8},"Tree.walk (/app/x.py:9)":{"kind":"python","file":"/app/x.py","line":9},"fib (/app/x.py:3)":{"kind":"python","file":"/app/x.py","line":3},"fib (/app/x.py:4)":{"kind":"python","file":"/app/x.py","line":4},"PyNumber_Add":{"kind":"native","file":"/usr/bin/python3.11","offset":1234},"do_syscall_64":{"kind":"kernel"}},"build_ids":{"/usr/bin/python3.11":"571d98e0"}}'
} > "$T/py.marple"
marple-pprof "$T/py.marple" > "$T/py.pb.gz"
pprof -lines -traces "$T/py.pb.gz" > "$T/py.traces"
check "pprof: Python frames by function with file:line (go tool pprof -lines -traces)" sh -c "
	grep -q '^ *7 *PyNumber_Add\$' '$T/py.traces' && grep -q '^ *fib /app/x.py:3\$' '$T/py.traces' &&
	grep -q '^ *Tree.walk /app/x.py:9\$' '$T/py.traces' && grep -q '^ *fib /app/x.py:4\$' '$T/py.traces'"
# Inlined native frames (kind inline, from DWARF): their source file:line,
# not a mapping of a source file
{ echo '{"marple":1,"interface":"callstack","datatype":"stack","host":"h","units":{"weight":"samples"}}'
  echo '9#inl;main;pipeline;stage1;stage2;mix'
  echo '{"trailer":1,"records":1,"frames":{"main":{"kind":"native","file":"/w/inl","offset":4160},"pipeline":{"kind":"native","file":"/w/inl","offset":4400,"source":"/src/inl.c","source_line":20},"stage1":{"kind":"inline","file":"/src/inl.c","line":17},"stage2":{"kind":"inline","file":"/src/inl.c","line":12},"mix":{"kind":"inline","file":"/src/inl.c","line":6}}}'
} > "$T/inl.marple"
marple-pprof "$T/inl.marple" > "$T/inl.pb.gz"
pprof -lines -traces "$T/inl.pb.gz" > "$T/inl.traces"
pprof -raw "$T/inl.pb.gz" > "$T/inl.raw"
check "pprof: inlined native frames with their file:line (go tool pprof -lines -traces), no source-file mapping" sh -c "
	grep -q '^ *9 *mix /src/inl.c:6\$' '$T/inl.traces' && grep -q '^ *stage2 /src/inl.c:12\$' '$T/inl.traces' &&
	grep -q '^ *stage1 /src/inl.c:17\$' '$T/inl.traces' && ! grep -q 'inl.c \[' '$T/inl.raw' &&
	grep -q '/w/inl' '$T/inl.raw'"
# a native frame told its source file:line: a Line there, its location still
# in its file's mapping at its offset; one told none (old streams): no line
check "pprof: a native frame at its source file:line, in its file's mapping; one without, no line" sh -c "
	grep -q '^ *pipeline /src/inl.c:20\$' '$T/inl.traces' && grep -q '^ *main\$' '$T/inl.traces' &&
	m=\$(sed -n 's/^\([0-9]*\): .* \/w\/inl .*/\1/p' '$T/inl.raw') && test -n \"\$m\" &&
	grep -q \": 0x1130 M=\$m pipeline /src/inl.c:20\" '$T/inl.raw'"
pprof -top "$T/py.pb.gz" > "$T/py.top"
check "pprof: one function per Python function (-top: fib and Tree.walk, all their lines)" sh -c "
	grep -q ' 12 *100% *fib\$' '$T/py.top' && grep -q ' 12 *100% *Tree.walk\$' '$T/py.top'"
pprof -raw "$T/py.pb.gz" > "$T/py.raw"
check "pprof: native frames in their file's mapping (one), with its build id and their offsets" sh -c "
	grep -q '^[0-9]*: 0x0/0x227bb1/0x0 /usr/bin/python3.11 571d98e0 \[FN\]' '$T/py.raw' &&
	test \$(grep -c '^[0-9]*: 0x.*python3.11' '$T/py.raw') -eq 1 &&
	grep -q ': 0x227bb0 M=[0-9]* _start ' '$T/py.raw' && grep -q ': 0x4d2 M=[0-9]* PyNumber_Add ' '$T/py.raw'"
check "pprof: a frame described as kernel is in [kernel.kallsyms]" sh -c "
	m=\$(sed -n 's/^\([0-9]*\): .*\[kernel.kallsyms\].*/\1/p' '$T/py.raw'); grep -q \": 0x0 M=\$m do_syscall_64 \" '$T/py.raw'"
