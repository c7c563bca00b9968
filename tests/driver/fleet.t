# marple display of several captures (a fleet), with the real renderers: a
# folder of hosts' captures (or several files) gives one report with every
# host's sections, one flame graph per collector merged over the hosts with
# the host as the root frame, and the merge as a pprof profile.
. "$MARPLE_TOP/tests/lib.sh"
plan 33
unset MARPLE_LIBEXEC MARPLE_CONFIG DISPLAY WAYLAND_DISPLAY
export XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config"
mkdir -p "$T/fleet/db1" "$T/fleet/web1" "$T/work" "$T/empty"
cd "$T/work" || exit 1
cap() { # HOST HOUR STACKS...: one capture with a callstack section
	h=$1 w=$2; shift 2
	printf '{"marple":1,"interface":"callstack","datatype":"stack","start_ns":1000,"wall_ns":%s,"host":"%s","kernel":"6.1","units":{"weight":"samples"},"frequency":99}\n' "1700${w}0000000000000" "$h"
	for s in "$@"; do echo "$s"; done
	printf '{"trailer":1,"records":%d,"end_ns":5000001000}\n' $#
}
cap db1 00 '30#postgres;main;exec_query' '10#postgres;main;idle' > "$T/fleet/db1/2026-11-23_00:00.marple"
printf '{"marple":1,"interface":"cpusched","datatype":"event","track":"cpu","start_ns":1000,"host":"db1"}\n2000,sched_switch,cpu0,comm=a,pid=10,next_comm=a,next_pid=10\n{"trailer":1,"records":1,"end_ns":9000}\n' >> "$T/fleet/db1/2026-11-23_00:00.marple"
cap db1 36 '5#postgres;main;exec_query' > "$T/fleet/db1/2026-11-23_01:00.marple"
cap 'web1<b>' 00 '20#nginx;main;serve' > "$T/fleet/web1/2026-11-23_00:00.marple"

marple display -n "$T/fleet" > "$T/out" 2> "$T/err"; rc=$?
R=marple_out/fleet/index.html
check "fleet: a folder of hosts' captures: exit 0" test "$rc" -eq 0
check "fleet: the report's path on stdout (marple_out/fleet/)" test "$(cat "$T/out")" = "$R"
check "fleet: nothing on stderr" test ! -s "$T/err"
check "fleet: titled with the number of captures and hosts" grep -q '<title>marple report: 3 captures from 2 hosts</title>' "$R"
check "fleet: every host's sections in the report (4)" test "$(grep -c '<section class="sec" id="s[0-9]' "$R")" -eq 4
check "fleet: each host's own flame graphs" test -s marple_out/fleet/00-callstack-flamegraph.svg -a -s marple_out/fleet/02-callstack-flamegraph.svg -a -s marple_out/fleet/03-callstack-flamegraph.svg
check "fleet: the joined capture is kept beside the report, a valid stream" marple-cat -q marple_out/fleet/fleet.marple
check "fleet: the joined capture has the report's mode" \
	test "$(stat -c %a marple_out/fleet/fleet.marple)" = "$(stat -c %a marple_out/fleet/index.html)"
check "fleet: the merged flame graph comes first, in 'All sections together'" python3 -c "
import sys; h=open('$R').read(); a=h.find('id=\"all\"'); g=h.find('fleet-callstack-flamegraph.svg'); s=h.find('id=\"s0\"')
sys.exit(0 if 0 <= a < g < s else 1)"
# the merged graph's frames: names N and, per frame, name, depth, start, count in D
P="import re,sys; t=open('marple_out/fleet/fleet-callstack-flamegraph.svg').read()
N=eval(re.search(r'var N=(\[.*?\]);', t).group(1)); D=eval(re.search(r'var D=(\[.*?\]);', t).group(1))
F=[(N[D[i]], D[i+1], D[i+3]) for i in range(0, len(D), 4)]
def ok(c): sys.exit(0 if c else 1)"
check "fleet: merged graph: the hosts are the root frames (db1 45 = 30+10+5 over two captures, web1 20)" python3 -c "$P
ok(sorted((n, c) for n, d, c in F if d == 1) == [('db1', 45), ('web1<b>', 20)])"
check "fleet: merged graph: each host's stacks above it (db1;postgres;main;exec_query 35)" python3 -c "$P
ok(('exec_query', 4, 35) in F and ('serve', 4, 20) in F)"
check "fleet: the hostile host name is escaped in the graph and the page" sh -c "! grep -q 'web1<b>' marple_out/fleet/fleet-callstack-flamegraph.svg '$R'"
check "fleet: the merged pprof profile is linked" grep -q 'href="fleet-callstack.pb.gz" download' "$R"
if command -v go > /dev/null 2>&1; then
	go tool pprof -tags marple_out/fleet/fleet-callstack.pb.gz > "$T/tags" 2> "$T/tags.err"
	check "fleet: go tool pprof: the merge's samples by host (db1 45, web1 20)" sh -c "grep -Eq '^ *45(\.0)? .*: db1\$' '$T/tags' && grep -Eq '^ *20(\.0)? .*: web1<b>\$' '$T/tags'"
else
	skip "fleet: go tool pprof: the merge's samples by host" "no go here (scripts/install-deps installs golang-go)"
fi

# several files, with -i or as operands: the same report
marple display -n -o "$T/two" -i "$T/fleet/db1/2026-11-23_01:00.marple" "$T/fleet/web1/2026-11-23_00:00.marple" > /dev/null 2> "$T/err"
check "fleet: -i FILE FILE: one report of both" grep -q '<title>marple report: 2 captures from 2 hosts</title>' "$T/two/index.html"
check "fleet: ... with the merged graph" test -s "$T/two/fleet-callstack-flamegraph.svg"
marple display -n -o "$T/one" "$T/fleet/db1/2026-11-23_01:00.marple" > /dev/null 2> "$T/err"
check "fleet: one capture as an operand is shown as with -i (no merge)" sh -c "test -s '$T/one/00-callstack-flamegraph.svg' && ! grep -q 'id=\"all\"' '$T/one/index.html'"
marple display -n -l "$T/fleet" > "$T/l"
check "fleet: -l lists the sections of every capture (4)" test "$(grep -c callstack "$T/l")" -eq 3
expect_exit "fleet: a folder without captures" 1 'no capture \(\*\.marple\) in' marple display -n "$T/empty"
expect_exit "fleet: a capture that cannot be read" 1 'cannot read .*/nope.marple' marple display -n "$T/fleet" "$T/nope.marple"
printf '{"marple":1,"interface":"callstack","datatype":"stack","host":"x"}\n1#a\n' > "$T/x.marple"
marple display -n -o "$T/x" "$T/fleet/web1/2026-11-23_00:00.marple" "$T/x.marple" > /dev/null 2>&1
check "fleet: a section without trailer still merges (report written)" grep -q 'fleet-callstack-flamegraph.svg' "$T/x/index.html"
marple display -n -o "$T/fleet/report" "$T/fleet" > /dev/null 2>&1
marple display -n -o "$T/again" "$T/fleet" > /dev/null 2>&1
check "fleet: a report inside the folder is not taken as a capture the next time" grep -q '<title>marple report: 3 captures from 2 hosts</title>' "$T/again/index.html"
# a timed callstack capture has an event section of the same interface (its samples): not merged
mkdir -p "$T/t2"
cp "$T/fleet/web1/2026-11-23_00:00.marple" "$T/t2/a.marple"
{ cap db2 00 '7#java;main;run'; printf '{"marple":1,"interface":"callstack","datatype":"event","start_ns":1000,"host":"db2"}\n2000,sample,cpu0,stack=0\n{"trailer":1,"records":1,"end_ns":9000}\n'; } > "$T/t2/b.marple"
marple display -n -o "$T/t2r" "$T/t2" > /dev/null 2> "$T/err"; rc=$?
check "fleet: an event section of a stack interface is left out of the merge (exit 0, pprof made)" sh -c "test $rc -eq 0 && test -s '$T/t2r/fleet-callstack.pb.gz' && grep -q 'marple-cat -s 0,1 fleet.marple | marple-pprof' '$T/t2r/index.html'"

# --- the README's fleet report, run again when the next hour's captures come:
# "fleet" is the folder of captures given, not the report it wrote last time
mkdir -p "$T/rerun/fleet/db1" && cd "$T/rerun" || exit 1
cp "$T/fleet/db1/2026-11-23_00:00.marple" fleet/db1/
marple display -n fleet > /dev/null 2> "$T/err1"; rc1=$?
cp "$T/fleet/db1/2026-11-23_01:00.marple" fleet/db1/
marple display -n fleet > /dev/null 2> "$T/err2"; rc2=$?
check "fleet: run twice on the folder 'fleet': both exit 0" test "$rc1$rc2" = 00
check "fleet: ... the second report has the new capture (2 captures)" grep -q '<title>marple report: 2 captures from 1 host</title>' marple_out/fleet/index.html
rm -rf fleet
expect_exit "fleet: the error names the folder it looked in" 1 'no capture \(\*\.marple\) in marple_out/fleet' marple display -n fleet
cd "$T/work" || exit 1

# --- a symlink planted at any file the report writes is replaced, never written through
mkdir -p "$T/planted"
echo precious > "$T/target"
for f in fleet.marple index.html fleet-callstack-flamegraph.svg fleet-callstack.pb.gz 00-callstack-flamegraph.svg 01-cpusched-g2.cpel 01-cpusched-plot.html; do
	ln -s "$T/target" "$T/planted/$f"
done
marple display -n -o "$T/planted" "$T/fleet" > /dev/null 2> "$T/err"; rc=$?
check "fleet: planted symlinks: exit 0" test "$rc" -eq 0
check "fleet: planted symlinks: their target is untouched" test "$(cat "$T/target")" = precious
check "fleet: planted symlinks: each replaced by a file" sh -c "cd '$T/planted' && ! find . -type l | grep -q . && test -s fleet.marple"

# --- two cloned machines that both call themselves "vm", each in its own folder
mkdir -p "$T/clones/vm-a" "$T/clones/vm-b"
cap vm 00 '3#app;main;a' > "$T/clones/vm-a/1.marple"
cap vm 00 '4#app;main;b' > "$T/clones/vm-b/1.marple"
marple display -n -o "$T/clones-r" "$T/clones" > /dev/null 2> "$T/err"; rc=$?
check "fleet: hosts of the same name in two folders: 2 hosts" grep -q '<title>marple report: 2 captures from 2 hosts</title>' "$T/clones-r/index.html"
check "fleet: ... the report says the folders name them" grep -q 'host vm: captures in the folders vm-a, vm-b all call themselves vm; each is named by its folder' "$T/clones-r/index.html"
check "fleet: ... the merged graph's roots are the folders (vm-a 3, vm-b 4)" python3 -c "
import re,sys; t=open('$T/clones-r/fleet-callstack-flamegraph.svg').read()
N=eval(re.search(r'var N=(\[.*?\]);', t).group(1)); D=eval(re.search(r'var D=(\[.*?\]);', t).group(1))
F=sorted((N[D[i]], D[i+3]) for i in range(0, len(D), 4) if D[i+1] == 1)
sys.exit(0 if F == [('vm-a', 3), ('vm-b', 4)] else 1)"
check "fleet: the merged graph's subtitle names the interface, not 'fold'" sh -c "grep -q 'callstack, weights in samples' '$T/clones-r/fleet-callstack-flamegraph.svg' && ! grep -q 'fold, weights' '$T/clones-r/fleet-callstack-flamegraph.svg'"
