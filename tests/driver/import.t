# marple-import: files of the original Python MARPLE (tests/driver/python-marple.marple,
# written by make-python-capture.py the way its data_io.Writer wrote them), older
# layouts, bad lines, and marple display reading such a file.
. "$MARPLE_TOP/tests/lib.sh"
plan 26
export TZ=UTC
P="$MARPLE_TOP/tests/driver/python-marple.marple"

marple-import "$P" > "$T/out" 2> "$T/err"; rc=$?
check "import: exit 0, no message" test "$rc" -eq 0 -a ! -s "$T/err"
check "import: the output is a valid stream" marple-cat -q "$T/out"
marple-cat -l "$T/out" > "$T/list"
check "import: four sections with their interfaces (memusage -> memleak)" \
	test "$(tail -n +2 "$T/list" | awk '{print $2 ":" $3 ":" $(NF-3)}' | tr '\n' ' ')" = "callstack:stack:3 cpusched:event:2 ipc:event:1 memleak:point:2 "
check "import: start and end time from the header" grep -Eq '^0 +callstack +stack +2018-08-14 10:20:30 +10.00 ' "$T/list"
check "import: stack frames split at \$\$\$, hostile names escaped" grep -qx '3#a%2Cb%3Bc%23d;std::map<int%2C char>::find;café' "$T/out"
check "import: event time us -> ns, track from the cpu, dict as fields" \
	grep -qx '363654881950000,sched:sched_switch,cpu3,pid=311,comm=bash,cpu=003' "$T/out"
check "import: Python string escapes decoded (quotes, \\x01, commas)" \
	grep -qx "363654881990000,sched:sched_wakeup,cpu1,pid=412,comm=it's \"q\"%2Cx%01,cpu=1" "$T/out"
check "import: connected pairs kept" grep -q ',connected=source_->dest_$' "$T/out"
check "import: point labels and units" grep -q '"labels":{"x":"Time","y":"Memory"},"units":{"x":"s","y":"MB"}' "$T/out"
marple-import --time-unit ns "$P" | grep -q '^363654881950,' && pass "import: --time-unit ns" || fail "import: --time-unit ns" "times changed"

# the oldest layout: no metaheader, "#" and "," separators, tuple datums
printf '{"interface":"callstack","datatype":"stack","start time":"2018-07-01 09:00:00","end time":"2018-07-01 09:00:02"}\n5#bash;main;f\n\n{"interface":"tcp","datatype":"event"}\n12$$$accept$$$(10, '\''cli ent'\'', 5000, 11, '\''srv'\'', 80, 99)\n' > "$T/old"
marple-import "$T/old" > "$T/oldout" 2> "$T/err"
check "import: oldest layout: valid, two sections" test "$(marple-cat -l "$T/oldout" | tail -n +2 | wc -l)" -eq 2
check "import: '#' and ';' stacks" grep -qx '5#bash;main;f' "$T/oldout"
check "import: the tcptracer tuple gets its names" grep -qx '12000,accept,10,source_pid=10,source_comm=cli ent,source_port=5000,dest_pid=11,dest_comm=srv,dest_port=80,net_ns=99' "$T/oldout"

# bad lines are named and skipped; nothing usable is an error
printf '{"0":{"interface":"a","datatype":"stack"}}\n{"interface":"a","datatype":"stack"}\nx$$$f\n7$$$ok\n\n{"interface":"e","datatype":"event"}\n1$$$t$$${'\''a'\'': '\''unterminated}$$$None\n' > "$T/bad"
marple-import "$T/bad" > "$T/badout" 2> "$T/err"; rc=$?
check "import: bad lines: still exit 0 with the good ones" test "$rc" -eq 0 -a "$(grep -c '^7#ok$' "$T/badout")" -eq 1
check "import: a bad weight is named with its line" grep -q "^marple-import: $T/bad:3: stack weight is not a number" "$T/err"
check "import: a bad datum is named with its line" grep -q "^marple-import: $T/bad:7: unterminated string" "$T/err"
check "import: the count of skipped lines" grep -q '2 bad lines skipped' "$T/err"
check "import: metaheader count checked" grep -q 'the metaheader lists 1 sections, the file holds 2' "$T/err"
printf 'hello\n' > "$T/notmarple"
expect_exit "import: not a MARPLE file" 1 'not a MARPLE file' marple-import "$T/notmarple"
expect_exit "import: a marple stream is refused" 1 'marple stream already' marple-import "$DATA/sample.marple"
expect_exit "import: empty input" 1 'no MARPLE section' marple-import /dev/null
expect_exit "import: bad --time-unit" 2 "not ns, us, ms or s" marple-import --time-unit days "$P"

# marple display reads such files
D="$MARPLE_TOP/tests/driver"
mkdir -p "$T/bin"
for n in flamegraph treemap cpel eventplot trace heatmap stackplot; do ln -s "$D/fake-renderer" "$T/bin/marple-$n"; done
cd "$T" || exit 1
MARPLE_LIBEXEC="$T/bin" XDG_STATE_HOME="$T/state" marple display -n -i "$P" -o "$T/rep" > "$T/out" 2> "$T/err"; rc=$?
check "import: marple display shows a Python MARPLE file" test "$rc" -eq 0 -a -s "$T/rep/index.html"
check "import: ... every section drawn (5 files)" test "$(ls "$T/rep" | grep -c -v index.html)" -eq 5
check "import: ... memusage points drawn as a heat map" test -s "$T/rep/03-memleak-heatmap.svg"
MARPLE_LIBEXEC="$T/bin" marple display -i "$P" -l > "$T/l"
check "import: marple display -l lists it" test "$(tail -n +2 "$T/l" | wc -l)" -eq 4
