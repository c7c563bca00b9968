# marple-report: what a person sees of a capture's page: a picture's frame as
# wide as the picture, and a capture of many small sections listed up to
# --max-sections (the rest counted and said to be left out), not a page of
# hundreds of megabytes.
. "$MARPLE_TOP/tests/lib.sh"
plan 28

# A 1200 px flame graph gets a frame of its width (4 px for the border), not
# the page's full width with a blank at its right.
mkdir -p "$T/out"
printf '{"marple":1,"interface":"callstack","datatype":"stack","host":"h1"}\n3#a;b\n{"trailer":1,"records":1,"ended":"eof"}\n' > "$T/one.marple"
printf 'a;b 3\n' | marple-flamegraph > "$T/out/fg.svg"
marple-report -o "$T/out/index.html" "$T/one.marple" 0:picture:fg.svg
frame=$(grep -o '<iframe class="pic"[^>]*>' "$T/out/index.html")
case $frame in *'style="width:1204px;height:'*) pass "report: a 1200 px SVG's frame is 1204 px wide" ;;
*) fail "report: a 1200 px SVG's frame is 1204 px wide" "$frame" ;; esac
check "report: frames never overflow a narrow window" grep -q 'iframe.pic{width:100%;max-width:calc(100% - 2px)' "$T/out/index.html"

# 3000 one-record sections from 3 hosts: the page lists the first 1000.
awk 'BEGIN { for (i = 0; i < 3000; i++) printf "{\"marple\":1,\"interface\":\"disklat\",\"datatype\":\"point\",\"host\":\"h%d\"}\n1,2,x\n", i % 3 }' > "$T/many.marple"
marple-report -o "$T/out/many.html" "$T/many.marple" 2500:note:late > /dev/null 2> "$T/many.err"
check "report: 3000 sections: 1000 listed" test "$(grep -c '<section class="sec"' "$T/out/many.html")" -eq 1000
check "report: the page says how many sections were left out" grep -q 'id="sections-left-out">The capture has 3000 sections: the first 1000 are listed here, the other 2000 left out (with the 1 file named for them) (<code>marple-report --max-sections N</code> lists more)' "$T/out/many.html"
check "report: the capture's totals count every section" grep -q '<td id="capture-sections">3000</td>' "$T/out/many.html"
check "report: every host named once" grep -q '<td id="capture-host">h0, h1, h2</td>' "$T/out/many.html"
check "report: stderr says so" grep -q '^marple-report: .*many.marple: 3000 sections: the page lists the first 1000 (--max-sections N lists more)$' "$T/many.err"
marple-report --max-sections 5000 -o "$T/out/all.html" "$T/many.marple" 2> "$T/all.err"
check "report: --max-sections 5000 lists all 3000, and says nothing" \
	sh -c "test \"\$(grep -c '<section class=\"sec\"' '$T/out/all.html')\" -eq 3000 && ! grep -q 'sections-left-out' '$T/out/all.html' && test ! -s '$T/all.err'"
check "report: --list still lists every section" test "$(marple-report --list "$T/many.marple" | wc -l)" -eq 3000

# "complete" only when it is: stacks lost or mostly cut short, and what the
# collector said (marple-collect keeps it in the trailer's messages)
printf '%s\n' '{"marple":1,"interface":"callstack","datatype":"stack","host":"h"}' '3#a;b' \
	'{"trailer":1,"records":1,"lost":0,"dropped":0,"ended":"duration","stack_errors":{"stack_map_full":0,"map_full":0,"user_weight":100,"incomplete_user_weight":41},"messages":["marple-callstack: 41% of <b>stacks</b> incomplete"]}' > "$T/cut.marple"
marple-report -o "$T/out/cut.html" "$T/cut.marple" 2> /dev/null
check "report: 41% of the stacks cut short: not 'every section complete'" sh -c "grep -q 'have many incomplete stacks' '$T/out/cut.html' && ! grep -q 'every section complete' '$T/out/cut.html'"
check "report: ... the table shows the share, marked" grep -q '<td class="num bad">41.0%</td>' "$T/out/cut.html"
check "report: what the collector said is shown, escaped" grep -q 'marple-callstack: 41% of &lt;b&gt;stacks&lt;/b&gt; incomplete' "$T/out/cut.html"
printf '%s\n' '{"marple":1,"interface":"offcpu","datatype":"stack","host":"h"}' '3#a;b' \
	'{"trailer":1,"records":1,"lost":0,"dropped":0,"ended":"duration","stack_errors":{"stack_map_full":227305,"user_weight":100,"incomplete_user_weight":0}}' > "$T/full.marple"
marple-report -o "$T/out/full.html" "$T/full.marple" 2> /dev/null
check "report: a full stack map is no complete section (227305 stack errors shown)" sh -c "grep -q '<td class=\"num bad\">227305</td>' '$T/out/full.html' && ! grep -q 'every section complete' '$T/out/full.html'"
check "report: a whole section is still called complete" sh -c "marple-report '$T/one.marple' | grep -q 'every section complete'"

# --plan: what marple display draws, one line a picture, from the headers,
# the registry and the config (marple-report(1), PLAN).
R="$MARPLE_BIN/marple-registry"
: > "$T/none"
MARPLE_CONFIG="$T/none" marple-config --registry "$R" > "$T/cfg"
TAB=$(printf '\t')
marple-report --plan --registry "$R" --config "$T/cfg" "$DATA/sample.marple" > "$T/plan"
tr '|' '\t' > "$T/plan.want" <<'EOF2'
0|picture|0|callstack|00-callstack-flamegraph.svg|flamegraph|--title|callstack on sample
1|link|1|cpusched|01-cpusched-g2.cpel|cpel|--track|pid
1|picture|1|cpusched|01-cpusched-plot.html|eventplot|--title|cpusched
2|picture|2|disklat|02-disklat-heatmap.svg|heatmap|--latency|--color|linear|--title|disklat
EOF2
same "plan: a picture per section, the CPEL file with its page, the config's options" "$T/plan.want" "$T/plan"
marple-report --plan --registry "$R" --config "$T/cfg" "$DATA/timed.marple" | cut -f1-6 > "$T/tplan"
check "plan: a timed stack section adds its flame scope, made from both sections" \
	grep -qx "0${TAB}picture${TAB}0,1${TAB}callstack${TAB}00-callstack-flamescope.html${TAB}flamescope" "$T/tplan"
# --every: a collector's intervals (each ended "interval"), another collector
# between them, the first interval without records: one flame scope of them all
{
	for i in 0 1 2; do
		ended=interval; [ "$i" -lt 2 ] || ended=duration
		n=1; [ "$i" -gt 0 ] || n=0
		t=$((i * 1000000000 + 7))
		echo "{\"marple\":1,\"interface\":\"callstack\",\"datatype\":\"stack\",\"timed\":\"stacks\",\"host\":\"h\",\"start_ns\":$t}"
		[ "$n" -eq 0 ] || echo "1#w;main;f$i"
		echo "{\"trailer\":1,\"records\":$n,\"end_ns\":$((t + 1000000000)),\"ended\":\"$ended\"}"
		echo "{\"marple\":1,\"interface\":\"callstack\",\"datatype\":\"event\",\"timed\":\"samples\",\"host\":\"h\",\"start_ns\":$t}"
		[ "$n" -eq 0 ] || echo "$((t + 100)),sample,cpu0,stack=0,pid=1,tid=1"
		echo "{\"trailer\":1,\"records\":$n,\"ended\":\"$ended\"}"
		[ "$i" -ne 1 ] || printf '%s\n' '{"marple":1,"interface":"cpusched","datatype":"event","host":"h"}' '5,switch,cpu0'
	done
} > "$T/every.marple"
marple-report --plan --registry "$R" --config "$T/cfg" "$T/every.marple" > "$T/eplan"
check "plan: --every intervals: one flame scope of every interval with records" sh -c "
	grep -qx '2${TAB}picture${TAB}2,3,5,6${TAB}callstack${TAB}02-callstack-flamescope.html${TAB}flamescope${TAB}--title${TAB}callstack on h' '$T/eplan' &&
	[ \$(grep -c 'flamescope${TAB}' '$T/eplan') -eq 1 ]"
check "plan: --every intervals: a later interval has its flame graph and a note" sh -c "
	grep -q '^5${TAB}picture${TAB}5${TAB}callstack${TAB}05-callstack-flamegraph.svg' '$T/eplan' &&
	grep -q '^5${TAB}note${TAB}the flamescope of this interval is section 2.s, of all 2 intervals' '$T/eplan'"
marple-report --plan --registry "$R" --config "$T/cfg" --single scope.html -e callstack "$T/every.marple" | cut -f1-6 > "$T/esingle"
check "plan: --every intervals: --single FILE.html is their one flame scope" \
	grep -qx "2${TAB}picture${TAB}2,3,5,6${TAB}callstack${TAB}scope.html${TAB}flamescope" "$T/esingle"
marple-report --plan --registry "$R" --config "$T/cfg" --display=-tm --single x.html -e 0 "$DATA/sample.marple" | cut -f1-6 > "$T/one"
check "plan: --single x.html -e 0 with -tm: the treemap into x.html" \
	grep -qx "0${TAB}picture${TAB}0${TAB}callstack${TAB}x.html${TAB}treemap" "$T/one"
expect_exit "plan: two displays for one datatype contradict each other" 2 '^marple: display: -fg contradicts an earlier flag' \
	marple-report -n marple --plan --registry "$R" --display=-tm --display=-fg
expect_exit "plan: -e past the last section" 2 'display: -e 7: .*sample.marple has 3 sections \(0 to 2' \
	marple-report --plan --registry "$R" -e 7 "$DATA/sample.marple"
printf '{"marple":1,"interface":"callstack","datatype":"stack","host":"a"}\n3#x;y\n{"marple":1,"interface":"callstack","datatype":"stack","host":"b"}\n2#x\n' > "$T/fleet.marple"
marple-report --plan --registry "$R" --fleet 2 "$T/fleet.marple" | grep '^all' | cut -f1-8 > "$T/fplan"
check "plan: --fleet: the title, and one flame graph of both hosts through marple-fold" sh -c "
	grep -qx 'all${TAB}title${TAB}marple report: 2 captures from 2 hosts' '$T/fplan' &&
	grep -qx 'all${TAB}picture${TAB}0,1${TAB}callstack${TAB}fleet-callstack-flamegraph.svg${TAB}fold${TAB}--host-frame${TAB}--to-stream' '$T/fplan'"
printf '{"marple":1,"interface":"callstack","datatype":"stack","host":"db on rack 2"}\n3#x\n' > "$T/on.marple"
check "--list: the host, exactly, in its own field (the driver's fleet reads it)" \
	test "$(marple-report --list "$T/on.marple" | cut -f7-)" = "callstack on db on rack 2${TAB}db on rack 2"

# The waker view: off-wake stacks (blocked;--;waker leaf first;its name)
# tabled by what ended the waits, heaviest first, with their share; the
# lock view: marple-lock's "locks".  Names from traced programs escaped.
printf '%s\n' '{"marple":1,"interface":"lock","datatype":"stack","units":{"weight":"us"}}' \
	'700#[futex 0x10];w;want;--;unlock;hold;<b>h</b>' '200#[futex 0x10];w;want;--;[timed out]' \
	'100#[rwsem 0x20];w;fault' \
	'{"trailer":1,"records":3,"ended":"eof","locks":[{"lock":"futex 0x10","pid":7,"waits":5,"wait_us":900,"max_us":300},{"lock":"rwsem <i>","pid":0,"waits":1,"wait_us":100,"max_us":100}]}' > "$T/lock.marple"
marple-report -o "$T/out/lock.html" "$T/lock.marple"
check "report: the waker view tables who ended the waits, heaviest first" \
	sh -c "tr -d '\n' < '$T/out/lock.html' | grep -q '<tr><td>&lt;b&gt;h&lt;/b&gt;</td><td class=\"num\">700</td><td class=\"num\">70.0%</td></tr><tr><td>\[timed out\]</td><td class=\"num\">200</td><td class=\"num\">20.0%</td></tr></table>'"
check "report: the waker view says how much had a waker" grep -q 'off-wake stacks: 90.0% of the weight' "$T/out/lock.html"
check "report: the lock view lists the trailer's locks, escaped" \
	sh -c "tr -d '\n' < '$T/out/lock.html' | grep -q '<tr><td>futex 0x10</td><td class=\"num\">7</td><td class=\"num\">5</td><td class=\"num\">900</td><td class=\"num\">300</td></tr><tr><td>rwsem &lt;i&gt;</td>'"
check "report: no waker view without off-wake stacks" sh -c "! grep -q 'who ended the waits' '$T/out/index.html'"
