# marple-flamegraph: exit codes, error SVG, bad lines, options, --cp.
. "$MARPLE_TOP/tests/lib.sh"
plan 44
G="$MARPLE_TOP/tests/flamegraph"

marple-flamegraph /dev/null > "$T/e.svg" 2> "$T/e.err"; rc=$?
check "flamegraph: empty input exits 1 (a data error)" test $rc -eq 1
check "flamegraph: empty input: no SVG on stdout" test ! -s "$T/e.svg"
marple-flamegraph -o "$T/e2.svg" /dev/null 2> /dev/null
check "flamegraph: empty input: no -o file left" test ! -e "$T/e2.svg"
check "flamegraph: empty input explained on stderr" grep -q 'no valid input' "$T/e.err"
# not one line usable: unusable input as marple-format(5) says, exit 1 and no SVG
printf 'junk\nmore junk\n' | expect_exit "flamegraph: unusable input exits 1" 1 '<stdin>: unusable input: 2 malformed lines' marple-flamegraph
check "flamegraph: unusable input writes no SVG" test ! -s "$T/ee.out"
printf 'a;b 3\nbad line\na;c 2\n' > "$T/bad"
marple-flamegraph "$T/bad" > "$T/bad.svg" 2> "$T/bad.err"; rc=$?
check "flamegraph: bad line skipped, exit 0" test $rc -eq 0
check "flamegraph: bad line named with its line number" grep -q "^marple-flamegraph: $T/bad:2: " "$T/bad.err"
check "flamegraph: bad lines counted" grep -q '1 malformed line skipped' "$T/bad.err"
# a capture's mixed sections (memleak's stacks then points): the others named and skipped
marple-flamegraph "$DATA/sample.marple" > "$T/mixed.svg" 2> "$T/mixed.err"; rc=$?
check "flamegraph: mixed input: exit 0, the stack section drawn" sh -c "[ $rc -eq 0 ] && grep -q '>_PyEval_EvalFrameDefault<' '$T/mixed.svg'"
check "flamegraph: mixed input: one line per skipped section" \
	test "$(grep -c '^marple-flamegraph: .*sample.marple:[0-9]*: section [12] holds \(event\|point\) data, not stacks: skipped$' "$T/mixed.err")" -eq 2 -a "$(wc -l < "$T/mixed.err")" -eq 2
# a timed capture: its samples section holds the stack section's weight
# again, one sample a record; it is left out without a word
printf '%s\n' \
	'{"marple":1,"interface":"callstack","datatype":"stack","timed":"stacks","start_ns":0,"units":{"weight":"samples"}}' \
	'2#burn;main;spin' '{"trailer":1,"records":1}' \
	'{"marple":1,"interface":"callstack","datatype":"event","timed":"samples","start_ns":0,"units":{"time":"ns"}}' \
	'1000,sample,cpu0,stack=0,pid=7,tid=7' '2000,sample,cpu0,stack=0,pid=7,tid=7' '{"trailer":1,"records":2}' > "$T/timed.marple"
marple-flamegraph "$T/timed.marple" > "$T/timed.svg" 2> "$T/timed.err"; rc=$?
check "flamegraph: a timed capture drawn, its samples section left out silently" \
	sh -c "[ $rc -eq 0 ] && grep -q '>spin<' '$T/timed.svg' && test ! -s '$T/timed.err'"
# a file that shrinks while it is drawn (it is mapped, so reading its lost
# tail is SIGBUS): a clear error naming it, exit 1, never a crash
awk 'BEGIN { for (i = 0; i < 200000; i++) printf "main;run_%d;work_%d;leaf_%d %d\n", i % 50, i % 997, i, 1 + i % 7 }' > "$T/shrink"
marple-flamegraph "$T/shrink" > "$T/shrink.svg" 2> "$T/shrink.err" & fg=$!
i=0
while ! grep -q "$T/shrink\$" "/proc/$fg/maps" 2>/dev/null && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
kill -STOP "$fg" 2>/dev/null; : > "$T/shrink"; kill -CONT "$fg" 2>/dev/null
wait "$fg"; rc=$?
if [ $i -lt 500 ] && [ $rc -eq 1 ] && grep -q "^marple-flamegraph: $T/shrink: the file shrank while it was read\$" "$T/shrink.err"; then
	pass "flamegraph: an input that shrinks while drawn: exit 1 naming it"
else
	fail "flamegraph: an input that shrinks while drawn: exit 1 naming it" "exit $rc after $i polls: $(head -c 300 "$T/shrink.err")"
fi
marple-cat -s 1 "$DATA/sample.marple" > "$T/ev.marple"
expect_exit "flamegraph: only an event section: exit 1" 1 'no stack section, nothing to draw' marple-flamegraph "$T/ev.marple"
marple-cat -s 0 "$DATA/sample.marple" | marple-flamegraph > "$T/s.svg"
check "flamegraph: stack section drawn" grep -q '>_PyEval_EvalFrameDefault<' "$T/s.svg"
expect_exit "flamegraph: unknown palette is a usage error" 2 'colors' marple-flamegraph --colors pink "$G/basic.in"
expect_exit "flamegraph: bad width" 2 'width' marple-flamegraph --width abc "$G/basic.in"
expect_exit "flamegraph: bad minwidth" 2 'minwidth' marple-flamegraph --minwidth 5x "$G/basic.in"
expect_exit "flamegraph: bad bgcolors" 2 'bgcolors' marple-flamegraph --bgcolors '#zz' "$G/basic.in"
expect_exit "flamegraph: missing file" 1 '/nonexistent' marple-flamegraph /nonexistent
marple-flamegraph -o "$T/o.svg" "$G/basic.in"; same_ok "flamegraph -o FILE" $? "$G/basic.out" "$T/o.svg"
marple-flamegraph --minwidth 50% "$G/basic.in" > "$T/m.svg"
check "flamegraph --minwidth %: narrow frames omitted" test "$(grep -c '^<rect' "$T/m.svg")" -lt "$(grep -c '^<rect' "$G/basic.out")"
(cd "$T" && marple-flamegraph --cp "$G/basic.in" > cp1.svg && marple-flamegraph --cp --hash "$G/basic.in" > cp2.svg)
check "flamegraph --cp: palette.map written" grep -q '^waitpid->rgb(' "$T/palette.map"
check "flamegraph --cp: colours reused on the next run" cmp -s "$T/cp1.svg" "$T/cp2.svg"
marple-flamegraph --random "$G/basic.in" > "$T/r.svg"
check "flamegraph --random: still well-formed" xmllint --noout "$T/r.svg"
if [ -w /dev/full ]; then
	expect_exit "flamegraph: full disk is a write error" 1 'write error' sh -c "marple-flamegraph '$G/basic.in' > /dev/full"
fi

# per-interface defaults, as Gregg's tools: off-CPU time blue and titled so,
# memory green, the interface and unit under the title; options given win
printf '{"marple":1,"interface":"offcpu","datatype":"stack","units":{"weight":"us"}}\n5000#app;main;read;__schedule\n3000#app;main;sleep;__schedule\n' > "$T/off.marple"
marple-flamegraph "$T/off.marple" > "$T/off.svg"
check "flamegraph: offcpu: titled Off-CPU Time" grep -q '<text id="title"[^>]*>Off-CPU Time</text>' "$T/off.svg"
check "flamegraph: offcpu: interface and unit in the subtitle" grep -q '<text id="subtitle"[^>]*>offcpu, weights in us</text>' "$T/off.svg"
blue=$(grep -o 'fill="#[0-9a-f]\{6\}"/><text[^>]*>\(app\|main\|read\|sleep\)<' "$T/off.svg" | sed 's/fill="#\(..\)\(..\)\(..\)".*/\1 \2 \3/' |
	while read -r r g b; do [ $((0x$b)) -ge 190 ] && [ $((0x$r)) -eq $((0x$g)) ] && echo ok; done | wc -l)
check "flamegraph: offcpu: its frames blue, the io palette ($blue of 4)" test "$blue" -eq 4
marple-flamegraph --title Mine --colors hot "$T/off.marple" > "$T/off2.svg"
check "flamegraph: offcpu: --title and --colors still win" sh -c "grep -q '>Mine</text>' '$T/off2.svg' && ! grep -q 'Off-CPU' '$T/off2.svg' && grep -q 'stop-color=\"#eeeeb0\"' '$T/off2.svg'"
printf '{"marple":1,"interface":"memleak","datatype":"stack","units":{"weight":"bytes"}}\n5000#app;main;leak\n' | marple-flamegraph > "$T/mem.svg"
check "flamegraph: memory: green background, memleak and bytes in the subtitle" \
	sh -c "grep -q 'stop-color=\"#e0ffe0\"' '$T/mem.svg' && grep -q '>memleak, weights in bytes</text>' '$T/mem.svg'"

# the weight's meaning comes from the header (units.measure), not the
# interface's name: any collector's off-CPU time is drawn as off-CPU time
printf '{"marple":1,"interface":"waits","datatype":"stack","units":{"weight":"us","measure":"off_cpu"}}\n5000#app;main;read\n' > "$T/waits.marple"
marple-flamegraph "$T/waits.marple" > "$T/waits.svg"
check "flamegraph: a section measuring off_cpu, whatever its interface: titled Off-CPU Time, io palette" \
	sh -c "grep -q '<text id=\"title\"[^>]*>Off-CPU Time</text>' '$T/waits.svg' && grep -q 'fill=\"#[0-9a-f]\{4\}[c-f][0-9a-f]\"/><text[^>]*>read<' '$T/waits.svg'"

# offcpu --both from before its sections said "cpu": a frame's name decides
# nothing (__schedule once did): the section is off-CPU time, all blue
printf '{"marple":1,"interface":"offcpu","datatype":"stack","units":{"weight":"us"},"options":{"on_cpu":true}}\n50000#app;main;compute\n80000#app;main;wait;read;__schedule\n' > "$T/both.marple"
marple-flamegraph "$T/both.marple" > "$T/both.svg"
hue_of() { grep -o "fill=\"#[0-9a-f]\{6\}\"/><text[^>]*>$1<" "$T/both.svg" | sed 's/fill="#\(..\)\(..\)\(..\)".*/\1 \2 \3/' |
	while read -r r g b; do if [ $((0x$b)) -gt $((0x$r)) ]; then echo blue; else echo warm; fi; done; }
check "flamegraph: offcpu --both, no \"cpu\": not split by a frame named __schedule ($(hue_of compute) compute, $(hue_of read) read, $(hue_of app) app)" \
	test "$(hue_of compute)$(hue_of read)$(hue_of __schedule)$(hue_of app)" = blueblueblueblue
check "flamegraph: offcpu --both: titled and subtitled so" \
	sh -c "grep -q '>Off- and On-CPU Time</text>' '$T/both.svg' && grep -q 'blue: off the CPU, warm: on it' '$T/both.svg'"

# offcpu --both -U: no kernel frames, no __schedule; the sections' "cpu" says
# which stacks were off the CPU (before, every frame was drawn warm)
{ printf '{"marple":1,"interface":"offcpu","datatype":"stack","units":{"weight":"us"},"options":{"on_cpu":true},"cpu":"off"}\n80000#app;main;wait;read\n'
  printf '{"marple":1,"interface":"offcpu","datatype":"stack","units":{"weight":"us"},"options":{"on_cpu":true},"cpu":"on"}\n50000#app;main;compute\n'; } > "$T/both.marple"
marple-flamegraph "$T/both.marple" > "$T/both.svg"
check "flamegraph: offcpu --both -U: off-CPU section blue, on-CPU section warm ($(hue_of compute) compute, $(hue_of read) read, $(hue_of app) app)" \
	test "$(hue_of compute)$(hue_of wait)$(hue_of read)$(hue_of app)" = warmblueblueblue

# Python frames (the trailer's "frames" says so) in green, C frames warm
printf '{"marple":1,"interface":"callstack","datatype":"stack","units":{"weight":"samples"}}\n90#python3;_start;main (/x.py:3);fib (/x.py:9);PyNumber_Add\n{"trailer":1,"records":1,"frames":{"main (/x.py:3)":{"kind":"python","file":"/x.py","line":3},"fib (/x.py:9)":{"kind":"python","file":"/x.py","line":9},"_start":{"kind":"native","file":"/usr/bin/python3.11"}}}\n' > "$T/py.marple"
marple-flamegraph "$T/py.marple" > "$T/py.svg"
green_of() { grep -o "fill=\"#[0-9a-f]\{6\}\"/><text[^>]*>$1<" "$T/py.svg" | sed 's/fill="#\(..\)\(..\)\(..\)".*/\1 \2 \3/' |
	while read -r r g b; do if [ $((0x$g)) -gt $((0x$r)) ]; then echo green; else echo warm; fi; done; }
check "flamegraph: Python frames green, C frames warm ($(green_of 'fib (/x.py:9)') fib, $(green_of PyNumber_Add) PyNumber_Add, $(green_of _start) _start)" \
	test "$(green_of 'main (/x.py:3)')$(green_of 'fib (/x.py:9)')$(green_of PyNumber_Add)$(green_of _start)" = greengreenwarmwarm
# the same frames without the trailer: all warm, as before
sed '$d' "$T/py.marple" | marple-flamegraph > "$T/py.svg"
check "flamegraph: without frame descriptions Python frames stay warm" test "$(green_of 'fib (/x.py:9)')" = warm

# Small inputs, huge outputs: one stack of 200,000 frames (1.4 MB) was an SVG
# of 25 MB; frames past --maxdepth (5000) are cut and said so, and frames
# narrower than --minwidth are counted on stderr.
awk 'BEGIN { printf "1#"; for (i = 0; i < 200000; i++) printf "%sf%d", i ? ";" : "", i % 1000; print "" }' > "$T/tower.body"
{ echo '{"marple":1,"interface":"callstack","datatype":"stack"}'; cat "$T/tower.body"; } > "$T/tower.marple"
marple-flamegraph "$T/tower.marple" > "$T/tower.svg" 2> "$T/tower.err"
check "flamegraph: a 200,000-frame stack: an SVG under 2 MB ($(wc -c < "$T/tower.svg") bytes)" test "$(wc -c < "$T/tower.svg")" -lt 2000000
check "flamegraph: the tower is drawn 5000 frames tall" test "$(grep -c '^<rect [^>]*/><text' "$T/tower.svg")" -eq 5001
check "flamegraph: and in the picture's subtitle" grep -q '<text id="subtitle" [^>]*>callstack, weights in samples; 1 stack cut at 5000 frames (--maxdepth)</text>' "$T/tower.svg"
check "flamegraph: the cut said on stderr" grep -q '^marple-flamegraph: 1 stack taller than 5000 frames cut there (100.0% of the samples); --maxdepth N draws more$' "$T/tower.err"
sed 's/^1#//; s/$/ 1/' "$T/tower.body" | marple-flamegraph --maxdepth 20000 > "$T/tower2.svg" 2> /dev/null
check "flamegraph: --maxdepth 20000 draws 20000 (folded input)" test "$(grep -c '^<rect [^>]*/><text' "$T/tower2.svg")" -eq 20001
printf 'a;b 1000000\na;c 1\na;d;e 2\n' | marple-flamegraph > "$T/thin.svg" 2> "$T/thin.err"
check "flamegraph: a few hairlines under --minwidth (0.0003% of the samples) are no news: nothing on stderr" test ! -s "$T/thin.err"
awk 'BEGIN { print "a;b 100000"; for (i = 0; i < 5000; i++) printf "a;c%d 1\n", i }' | marple-flamegraph > "$T/thin2.svg" 2> "$T/thin2.err"
check "flamegraph: frames under --minwidth worth 1% or more counted on stderr" grep -q '^marple-flamegraph: 5000 frames narrower than 0.1 px left out, with what is above them (4.8% of the samples); --minwidth 0 draws them$' "$T/thin2.err"
