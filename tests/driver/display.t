# marple display with stand-in renderers (tests/driver/fake-renderer): the
# renderer chosen per section, overrides, -l, -e, the last capture, the report
# page and its escaping, hostile file names, config errors, marple config.
. "$MARPLE_TOP/tests/lib.sh"
plan 101
D="$MARPLE_TOP/tests/driver"
mkdir -p "$T/bin" "$T/state" "$T/work" "$T/config/marple"
for n in callstack cpusched memtime memevents ipc; do ln -s "$D/fake-collector" "$T/bin/marple-$n"; done
for n in flamegraph treemap cpel eventplot trace heatmap stackplot; do ln -s "$D/fake-renderer" "$T/bin/marple-$n"; done
export MARPLE_LIBEXEC="$T/bin" XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config"
unset MARPLE_CONFIG DISPLAY WAYLAND_DISPLAY
cd "$T/work" || exit 1

marple collect -t 1 -o cap.marple callstack cpusched memtime memevents 2> "$T/err"
check "display: capture for the tests" marple-cat -q marple_out/cap.marple

# --- defaults: the last capture, one picture per section, index.html
marple display > "$T/out" 2> "$T/err"; rc=$?
R=marple_out/cap/index.html
check "display: exit 0" test "$rc" -eq 0
check "display: with no -i shows the last capture; prints the report's path" test "$(cat "$T/out")" = "$R"
check "display: nothing on stderr" test ! -s "$T/err"
check "display: stack -> flame graph, titled INTERFACE on HOST" grep -q 'fake flamegraph --title callstack on fake host' marple_out/cap/00-callstack-flamegraph.svg
check "display: cpusched -> CPEL (g2, track pid) ..." grep -q 'fake cpel --track pid' marple_out/cap/01-cpusched-g2.cpel
check "display: ... and an event plot for the page" test -s marple_out/cap/01-cpusched-plot.html
check "display: memtime -> stack plot, top 10" grep -q 'fake stackplot --top 10' marple_out/cap/02-memtime-stackplot.svg
check "display: hostile interface name made file-name safe" test -s marple_out/cap/03-_script_alert_1___script_____x_-flamegraph.svg
check "display: the report embeds the pictures" test "$(grep -c '<iframe class="pic"' "$R")" -eq 4
check "display: the report links the CPEL file" grep -q 'href="01-cpusched-g2.cpel" download' "$R"
check "display: the report shows each picture's pipeline, quoted" \
	grep -q "made by: marple-cat -s 0 [^ ]*marple_out/cap.marple | marple-flamegraph --title &#39;callstack on fake host&#39; &gt; 00-callstack-flamegraph.svg" "$R"
check "display: the report escapes the interface name" grep -q '&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot;' "$R"
check "display: no raw markup from the data" test "$(grep -c '<script>alert\|<b>h&st' "$R")" -eq 0
if command -v xmllint > /dev/null; then
	check "display: the report parses as HTML" xmllint --html --noout "$R"
fi

# --- overrides, -e, -o, -l, the config
marple display -i marple_out/cap.marple -o "$T/o v" -tm -tcp -hm -e 0,1 -e 2 > /dev/null 2> "$T/err"
check "display: -tm draws stacks as tree maps (depth 25)" grep -q 'fake treemap --depth 25' "$T/o v/00-callstack-treemap.html"
# the report's "made by" lines run in its folder: the picture by its name
# there, the capture (given relative to the working directory) by its full path
check "display: made by: the capture by its full path, the picture beside the page" \
	grep -q "made by: marple-cat -s 0 $T/work/marple_out/cap.marple | marple-treemap --depth 25 .* &gt; 00-callstack-treemap.html" "$T/o v/index.html"
check "display: -tcp draws events as event plots only" test -s "$T/o v/01-cpusched-plot.html" -a ! -e "$T/o v/01-cpusched-g2.cpel"
check "display: -hm draws points as heat maps" grep -q 'fake heatmap --latency --color linear' "$T/o v/02-memtime-heatmap.svg"
check "display: -e chooses the sections" test ! -e "$T/o v/03-_script_alert_1___script_____x_-treemap.html"
check "display: -e: the report still lists every section" grep -q 'not drawn (not selected)' "$T/o v/index.html"
marple display -i marple_out/cap.marple -l > "$T/list"
check "display: -l lists the sections" test "$(grep -c 'duration' "$T/list")" -eq 4
marple -d -i marple_out/cap.marple -o "$T/dd" --trace -e 1 > /dev/null 2>&1
check "display: -d is display; --trace writes trace JSON" test -s "$T/dd/01-cpusched-trace.json"

printf '[DisplayInterfaces]\ncallstack = treemap\nmemtime: heatmap\nmemevents = fg\n[flamegraph]\ncoloring = aqua\n[treemap]\ndepth = 3\n[heatmap]\nmode = offset\ncolor = rank\nrows = 40\n' > "$T/config/marple/config"
marple display -i marple_out/cap.marple -o "$T/cfg" -e 0,2,3 > /dev/null 2> "$T/err"
check "display: [flamegraph] coloring reaches the flame graph" grep -q 'fake flamegraph --colors aqua --title' "$T/cfg/03-_script_alert_1___script_____x_-flamegraph.svg"
check "display: [DisplayInterfaces] picks the renderer, [treemap] its depth" grep -q 'fake treemap --depth 3' "$T/cfg/00-callstack-treemap.html"
check "display: [heatmap] settings reach the heat map" grep -q 'fake heatmap --offset --color rank --rows 40' "$T/cfg/02-memtime-heatmap.svg"
marple config > "$T/cfgout"
check "config: prints the effective values" grep -q '^callstack = treemap' "$T/cfgout"
check "config: names the file it read" grep -q "^# read: $T/config/marple/config" "$T/cfgout"
check "config: shows the built-in defaults too" grep -q '^top = 10' "$T/cfgout"
rm -f "$T/config/marple/config"

# --- config errors: one line naming file and line, exit 2
C="$T/bad.conf"
bad_config() { # NAME LINE REGEX TEXT
	printf '%b' "$4" > "$C"
	MARPLE_CONFIG="$C" expect_exit "config: $1" 2 "^marple: $C:$2: $3" marple config
	check "config: $1: one line" test "$(wc -l < "$T/ee.err")" -eq 1
}
bad_config "unknown section" 3 'unknown section \[Nope\]' '[General]\ntime = 5\n[Nope]\n'
bad_config "an empty section name" 1 'unknown section \[\]' '[]\ntime = 5\n'
bad_config "unknown key" 2 'unknown key "colour" in \[flamegraph\]' '[flamegraph]\ncolour = hot\n'
bad_config "bad coloring" 2 'unknown flame graph coloring "rainbow"' '[flamegraph]\ncoloring = rainbow\n'
bad_config "bad time" 2 'time must be a duration' '[General]\ntime = soon\n'
bad_config "zero top" 2 'top must be a whole number above 0' '[stackplot]\ntop = 0\n'
bad_config "key outside a section" 1 '"time" is outside any \[section\]' 'time = 5\n'
bad_config "not an ini line" 2 'not a \[section\] or key = value line' '[General]\njust words\n'
bad_config "group of unknown interface" 2 'group "g": unknown interface "cpuu"' '[Aliases]\ng = cpusched,cpuu\n'
bad_config "unknown display" 2 'unknown display "pie"' '[DisplayInterfaces]\ncallstack = pie\n'
bad_config "bad track" 2 'track must be pid or cpu' '[g2]\ntrack = tid\n'
# found by tests/fuzz/config.py: a NUL in a value was accepted, and printed
# back without it (marple config's output did not read back the same)
bad_config "NUL byte" 3 'control character in the line' '[g2]\ntrack = cpu\npath = 0\0\n'
bad_config "escape character" 2 'control character in the line' '[g2]\npath = a\033[2Jb\n'
bad_config "tab inside a value" 3 'a tab inside a key or value' '[g2]\ntrack = cpu\npath = boot =\tflamegraph\n'
printf '# the original MARPLE config.txt, as shipped\n[General]\n    time:10\n    frequency:99\n    system_wide: -a\n[DisplayInterfaces]\n    memusage:treemap\n    ipc:plot\n[heatmap]\n    figure_size: 10.0\n[g2]\n    track: pid\n    path: ~/vpp/g2\n[Aliases]\n    boot: memleak,cpusched,disklat\n[Aggregate]\n    cpusched,ipc: plot\n' > "$C"
MARPLE_CONFIG="$C" check "config: the original's config.txt is accepted" marple config
MARPLE_CONFIG="$C" marple config > "$T/orig.out" 2> "$T/orig.err"
check "config: the original's keys that do nothing are named, once, in one line" \
	test "$(cat "$T/orig.err")" = "marple: $C: ignored (settings of the original MARPLE that do nothing here): [General] system_wide, [heatmap] figure_size, [g2] path, [Aggregate] cpusched,ipc"
check "config: the original's [General] frequency is callstack's sampling rate" \
	sh -c "sed -n '/^\[callstack\]/,/^\$/p' '$T/orig.out' | grep -qx 'frequency = 99'"
printf '[General]\nfrequency: 499\n' > "$T/freq.conf"
MARPLE_CONFIG="$T/freq.conf" marple config > "$T/freq.out" 2> "$T/freq.err"
check "config: ... 499 there makes callstack sample at 499 Hz, with no remark" \
	sh -c "sed -n '/^\[callstack\]/,/^\$/p' '$T/freq.out' | grep -qx 'frequency = 499' && test ! -s '$T/freq.err'"
MARPLE_CONFIG="$C" expect_exit "config: a bad config stops collect too" 2 '' sh -c "printf '[x]\n' > '$C'; marple collect -t 1 callstack"

# --- hostile file names, as capture and as output folder
hostile='d ir;$(touch PWNED)`touch PWNED2`&|<>'\''"'
mkdir -p "$hostile"
cp marple_out/cap.marple "$hostile/c a\$p;<x>.marple"
marple display -i "$hostile/c a\$p;<x>.marple" -o "$hostile/out &;" > "$T/out" 2> "$T/err"; rc=$?
check "display: hostile capture and folder names work" test "$rc" -eq 0 -a -s "$hostile/out &;/index.html"
check "display: hostile names: nothing is run" test ! -e PWNED -a ! -e PWNED2
check "display: hostile capture name escaped in the report" grep -q 'c a\$p;&lt;x&gt;.marple' "$hostile/out &;/index.html"

# --- a bare -i name is looked for in marple_out/, where collect -o put it
mkdir -p "$T/bare"
(cd "$T/work" && marple display -n -i cap.marple -o "$T/bare/o" -e 0) > "$T/out" 2> "$T/err"; rc=$?
check "display: -i NAME.marple finds marple_out/NAME.marple (marple(1)'s cron example)" test "$rc" -eq 0 -a -s "$T/bare/o/00-callstack-flamegraph.svg"
cp marple_out/cap.marple "$T/bare/here.marple"
(cd "$T/bare" && marple display -n -i here.marple -o o2 -e 1) > /dev/null 2> "$T/err"; rc=$?
check "display: -i NAME with no marple_out/NAME is the file here" test "$rc" -eq 0 -a -s "$T/bare/o2/01-cpusched-plot.html"

# --- -o FILE.svg: one picture asked for, that file written (the original's -o)
marple display -i marple_out/cap.marple -e 0 -o "$T/one.svg" > "$T/out" 2> "$T/err"; rc=$?
check "display: -e 0 -o FILE.svg writes the flame graph to FILE.svg" test "$rc" -eq 0 -a -f "$T/one.svg"
check "display: ... with the renderer's options and title" grep -q 'fake flamegraph --title callstack on fake host' "$T/one.svg"
check "display: ... and prints its path" test "$(cat "$T/out")" = "$T/one.svg"
marple display -i marple_out/cap.marple -e 1 -o "$T/one.cpel" > /dev/null 2>&1
check "display: -e 1 -o FILE.cpel writes the CPEL file" grep -q 'fake cpel --track pid' "$T/one.cpel"
marple display -i marple_out/cap.marple -e 1 -o "$T/one.html" > /dev/null 2>&1
check "display: -e 1 -o FILE.html writes the event plot" grep -q 'fake eventplot' "$T/one.html"
expect_exit "display: -o FILE.svg with several sections is a usage error" 2 \
	'-o .*/many.svg names one .svg file, but the sections chosen make 4 pictures' marple display -i marple_out/cap.marple -o "$T/many.svg"
check "display: ... and makes no directory FILE.svg" test ! -e "$T/many.svg"
expect_exit "display: -o FILE.svg for a point section drawn as a stack plot: error" 2 'of another kind' \
	marple display -i marple_out/cap.marple -e 2 -o "$T/kind.html"

# --- errors
expect_exit "display: -e past the last section: exit 2" 2 '^marple: display: -e 9: .* has 4 sections \(0 to 3' \
	marple display -i marple_out/cap.marple -o "$T/e9" -e 9
check "display: ... and nothing drawn" test ! -e "$T/e9"
expect_exit "display: -fg and -tm together: exit 2" 2 'display: -tm contradicts an earlier flag' marple display -i marple_out/cap.marple -fg -tm
expect_exit "display: -g2 and -tcp together: exit 2" 2 'display: -tcp contradicts' marple display -i marple_out/cap.marple -g2 -tcp
expect_exit "display: -hm and -sp together: exit 2" 2 'display: -sp contradicts' marple display -i marple_out/cap.marple -hm -sp
check "display: the same flag twice is fine" sh -c "marple display -n -i marple_out/cap.marple -o '$T/twice' -fg -fg -e 0 > /dev/null"
expect_exit "display: missing capture" 1 '^marple: display: cannot read /nonexistent: no such file' marple display -i /nonexistent
expect_exit "display: a bare name not found says why and where it looked" 1 \
	'^marple: display: cannot read nosuch.marple: no such file \(looked for marple_out/nosuch.marple and ./nosuch.marple in /' \
	marple display -i nosuch.marple
expect_exit "display: unknown option" 2 "unknown option '-zz'" marple display -zz
expect_exit "display: bad -e" 2 'section numbers or interfaces' marple display -e 'a;b'
XDG_STATE_HOME="$T/empty" expect_exit "display: nothing remembered" 2 'none remembered' marple display
rm "$T/bin/marple-flamegraph"
marple display -i marple_out/cap.marple -o "$T/nofg" > /dev/null 2> "$T/err"; rc=$?
check "display: a missing renderer: exit 1 ..." test "$rc" -eq 1
check "display: ... named in one line ..." grep -q '^marple: display: section 0 (callstack): marple-flamegraph is not built here' "$T/err"
check "display: ... and in the report, the rest still drawn" sh -c "grep -q 'could not draw this section: marple-flamegraph is not built here' '$T/nofg/index.html' && test -s '$T/nofg/02-memtime-stackplot.svg'"

# --- a display: the report is opened with xdg-open; without one it is not
mkdir -p "$T/xdg"
printf '#!/bin/sh\nprintf "%%s\\n" "$1" > "%s/opened"\n' "$T" > "$T/xdg/xdg-open"
chmod +x "$T/xdg/xdg-open"
PATH="$T/xdg:$PATH" DISPLAY=:99 marple display -i marple_out/cap.marple -o "$T/x y" > "$T/out" 2>&1
sleep 0.5
check "display: with a display, xdg-open gets the report" test "$(cat "$T/opened" 2>/dev/null)" = "$T/x y/index.html"
rm -f "$T/opened"
PATH="$T/xdg:$PATH" DISPLAY=:99 marple display -n -i marple_out/cap.marple -o "$T/x y" > "$T/out" 2>&1
PATH="$T/xdg:$PATH" marple display -i marple_out/cap.marple -o "$T/x y" > "$T/out" 2> /dev/null
sleep 0.5
check "display: -n, or no DISPLAY/WAYLAND_DISPLAY: not opened, path printed" test ! -e "$T/opened" -a "$(cat "$T/out")" = "$T/x y/index.html"

# --- an empty section (no TCP traffic during the capture, say) is a remark, not a failure
ln -sf "$D/fake-renderer" "$T/bin/marple-flamegraph"
{ cat marple_out/cap.marple; printf '{"marple":1,"interface":"ipc","datatype":"event"}\n{"trailer":1,"records":0,"lost":0,"dropped":0,"ended":"duration"}\n'; } > "$T/empty.marple"
marple display -n -i "$T/empty.marple" -o "$T/empty" > /dev/null 2> "$T/err"; rc=$?
check "display: an empty section is no failure" test "$rc" -eq 0 -a ! -s "$T/err"
check "display: ... the report says it has no records" grep -q '<p class="meta note">no records in this section: nothing to draw</p>' "$T/empty/index.html"

# --- -e takes an interface too; a choice that makes no picture names its sections
marple display -n -i marple_out/cap.marple -o "$T/sched.cpel" -e cpusched > "$T/out" 2> "$T/err"; rc=$?
check "display: -e INTERFACE: its section alone, one file (-o x.cpel)" sh -c "test $rc -eq 0 && grep -q 'fake cpel' '$T/sched.cpel'"
expect_exit "display: -e of an interface the capture lacks names those it has" 2 \
	'-e disklat: .* has no disklat section \(it has: .*callstack.*cpusched' marple display -n -i marple_out/cap.marple -o "$T/d" -e disklat
expect_exit "display: -o FILE that the sections cannot make names their interface and datatype" 2 \
	'sections chosen make 1 picture of another kind: section 0 \(callstack, stack\)' marple display -n -i marple_out/cap.marple -o "$T/x.cpel" -e 0

# --- an interface named v1..2: the picture's name has ".." inside a name, not a path
printf '{"marple":1,"interface":"v1..2","datatype":"stack","host":"h"}\n5#a;b\n{"trailer":1,"records":1}\n' > "$T/dots.marple"
marple display -n -i "$T/dots.marple" -o "$T/dots" > /dev/null 2> "$T/err"; rc=$?
check "display: interface v1..2: exit 0, the report shows its picture" sh -c "test $rc -eq 0 && grep -q '00-v1..2-flamegraph.svg' '$T/dots/index.html'"

# --- a header whose "marple" member comes last is a header (marple-format(5): a JSON object)
printf '{"interface":"callstack","datatype":"stack","host":"h","marple":1}\n5#a;b\n{"trailer":1,"records":1}\n' > "$T/last.marple"
marple display -n -i "$T/last.marple" -o "$T/last" > /dev/null 2> "$T/err"; rc=$?
check "display: \"marple\" as the header's last member: shown (exit 0)" sh -c "test $rc -eq 0 && test -s '$T/last/00-callstack-flamegraph.svg'"

# --- a small file of many sections: the first 100 are drawn, the rest counted
awk 'BEGIN { for (i = 0; i < 103; i++) printf "{\"marple\":1,\"interface\":\"callstack\",\"datatype\":\"stack\",\"host\":\"h\"}\n1#a;b\n{\"trailer\":1,\"records\":1}\n" }' > "$T/many.marple"
marple display -n -i "$T/many.marple" -o "$T/manyr" > /dev/null 2> "$T/err"; rc=$?
check "display: 103 sections: exit 0, 100 pictures drawn" sh -c "test $rc -eq 0 && test \$(ls '$T/manyr' | grep -c flamegraph) -eq 100"
check "display: ... stderr and the report say 3 more were not drawn" sh -c "grep -q 'drew the first 100 sections with records; 3 more not drawn' '$T/err' && grep -q '3 more sections with records are not drawn' '$T/manyr/index.html'"
marple display -n --max-sections 2 -i "$T/many.marple" -o "$T/manytwo" > /dev/null 2>&1
check "display: --max-sections 2 draws 2" test "$(ls "$T/manytwo" | grep -c flamegraph)" -eq 2
