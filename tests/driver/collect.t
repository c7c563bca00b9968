# marple collect with stand-in collectors (tests/driver/fake-collector):
# concurrency into one valid file, groups, naming, refusing to overwrite,
# failures, half-written lines, SIGINT/SIGTERM at random moments, cron.
. "$MARPLE_TOP/tests/lib.sh"
plan 45
D="$MARPLE_TOP/tests/driver"
mkdir -p "$T/bin" "$T/state" "$T/work"
for n in callstack cpusched memtime ipc memleak memevents offcpu; do
	ln -s "$D/fake-collector" "$T/bin/marple-$n"
done
export MARPLE_LIBEXEC="$T/bin" XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config"
unset MARPLE_CONFIG DISPLAY WAYLAND_DISPLAY
cd "$T/work" || exit 1

sections() { marple-cat -l "$1" | tail -n +2 | awk '{print $2}' | tr '\n' ' '; }

# --- concurrency: three 2-second collectors take about 2 seconds, not 6
t0=$(date +%s)
marple collect -t 2 -o three.marple callstack cpusched memtime > "$T/out" 2> "$T/err"; rc=$?
el=$(( $(date +%s) - t0 ))
check "collect: exit 0" test "$rc" -eq 0
check "collect: without a terminal, only the file's path on stdout" test "$(cat "$T/out")" = marple_out/three.marple -a ! -s "$T/err"
check "collect: a bare -o name goes into marple_out/" test -f marple_out/three.marple
check "collect: the file is a valid stream" marple-cat -q marple_out/three.marple
check "collect: one section per collector, in order" test "$(sections marple_out/three.marple)" = "callstack cpusched memtime "
check "collect: collectors run at the same time ($el s for 3 x 2 s)" test "$el" -le 4
check "collect: every section has its trailer" test "$(grep -c '"trailer":1.*"ended":"duration"' marple_out/three.marple)" -eq 3
check "collect: remembers the last file in XDG_STATE_HOME" test "$(cat "$T/state/marple/last")" = "$T/work/marple_out/three.marple"

# --- marple-collect's spellings: --output, -g/--grace (passed on to it)
marple collect -t 1 --output out-long.marple memtime > /dev/null 2> "$T/err"
check "collect: --output is -o" marple-cat -q marple_out/out-long.marple
marple collect -t 1 --output=out-eq.marple memtime > /dev/null 2> "$T/err"
check "collect: --output=FILE is -o" marple-cat -q marple_out/out-eq.marple
expect_exit "collect: a bad grace is a usage error" 2 "^marple: collect: bad grace 'soon'" \
	marple collect -t 1 -g soon -o g.marple memtime
marple collect -t 2 -g 3s -o grace.marple memtime > /dev/null 2> "$T/err" & gp=$!
args=; i=0
while [ -z "$args" ] && [ $i -lt 100 ]; do
	args=$(pgrep -a -f '^[^ ]*marple-collect .*grace\.marple' | head -n 1); [ -n "$args" ] || sleep 0.05; i=$((i + 1))
done
wait "$gp"; rc=$?
check "collect: -g reaches marple-collect ($args)" sh -c 'case "$1" in *" -g 3s "*) exit 0 ;; esac; exit 1' sh "$args"
check "collect: with -g the capture is written" test "$rc" -eq 0 -a "$(sections marple_out/grace.marple)" = "memtime "

# --- default name, refusing to overwrite, -f, a path used as given
marple collect -t 1 callstack 2> "$T/err"
check "collect: default name marple_out/YYYY-MM-DD_HHMMSS.marple, no colon (scp, rsync, make, SMB)" \
	sh -c 'ls marple_out | grep -Eq "^[0-9]{4}-[0-9]{2}-[0-9]{2}_[0-9]{6}(_[0-9]+)?\.marple$" && ! ls marple_out | grep -q :'
cp marple_out/three.marple "$T/before"
expect_exit "collect: refuses to overwrite without -f" 1 '^marple: collect: marple_out/three.marple exists \(use -f' \
	marple collect -t 1 -o three.marple callstack
same "collect: the refused file is untouched" "$T/before" marple_out/three.marple
marple collect -t 1 -f -o three.marple memtime 2> "$T/err"
check "collect: -f overwrites" test "$(sections marple_out/three.marple)" = "memtime "
mkdir -p "sub dir"
marple collect -t 1 -o "sub dir/x.marple" callstack 2> "$T/err"
check "collect: an -o path is used as given" marple-cat -q "sub dir/x.marple"
check "collect: no temporary files are left behind" test -z "$(ls -A "sub dir" | grep -v '^x.marple$')"

# --- names with spaces and shell metacharacters
hostile='we ird;$(touch PWNED)`touch PWNED2`&|<>*?'\''"'
mkdir -p "$hostile"
marple collect -t 1 -o "$hostile/c ap\$x;.marple" callstack cpusched 2> "$T/err"
check "collect: hostile directory and file names work" marple-cat -q "$hostile/c ap\$x;.marple"
check "collect: nothing in a name is ever run" test ! -e PWNED -a ! -e PWNED2 -a ! -e "$hostile/PWNED"

# --- groups from the config
mkdir -p "$T/config/marple"
printf '[Aliases]\n    pair: cpusched , callstack\n' > "$T/config/marple/config"
marple collect -t 1 -o group.marple pair memtime callstack 2> "$T/err"
check "collect: a group expands, duplicates once" test "$(sections marple_out/group.marple)" = "cpusched callstack memtime "
check "collect: the built-in group boot exists" sh -c 'marple config | grep -q "^boot = memleak,cpusched,disklat"'
rm -f "$T/config/marple/config"

# --- unknown and unbuilt interfaces, usage errors
expect_exit "collect: unknown interface: one line, exit 2" 2 "^marple: collect: unknown interface or group 'frobnicate'" \
	marple collect -t 1 frobnicate
check "collect: the unknown-interface error is one line (+ hint)" test "$(wc -l < "$T/ee.err")" -le 2
expect_exit "collect: no interface is a usage error" 2 'name at least one' marple collect -t 1
expect_exit "collect: bad duration is a usage error" 2 "bad duration 'ten'" marple collect -t ten callstack
expect_exit "collect: not built here: exit 1" 1 '^marple: collect: disklat: not built here' marple collect -t 1 -o nb.marple disklat
expect_exit "collect: -c is collect" 2 'unknown interface' marple -c -t 1 nope

# --- a failing collector: the others' data is written, the status says so
expect_exit "collect: a failing collector exits 1, named in one line" 1 '^marple: collect: ipc failed \(exit 1\): marple-ipc: not supported' \
	marple collect -t 1 -o fail.marple callstack ipc memtime
check "collect: the others' sections are still written" test "$(sections marple_out/fail.marple)" = "callstack memtime "
check "collect: one line per failure" test "$(grep -c . "$T/ee.err")" -eq 1

# --- a collector killed mid-line: the half line never reaches the file
expect_exit "collect: an unfinished last line is dropped and reported" 1 'memleak: dropped an unfinished last line \(14 bytes\)' \
	marple collect -t 1 -o half.marple callstack memleak
check "collect: the file with the cut section is valid" marple-cat -q marple_out/half.marple
check "collect: the cut section keeps its complete lines" test "$(grep -c '^5#leaky' marple_out/half.marple)" -eq 2
check "collect: no half line" test "$(grep -c half marple_out/half.marple)" -eq 0

# --- SIGINT and SIGTERM at random moments: the file is always complete and valid.
# Background jobs of a script ignore SIGINT; perl restores it, as a terminal's Ctrl-C would find it.
# On a busy machine the driver may still be starting its collectors when the
# signal comes: then it writes the sections of those it started (each ending
# "signal"), naming the others, or nothing with "nothing written" — never a
# silent exit, a cut section or a left-over temporary directory.
seed=$(date +%s); echo "# random seed $seed"
# what an interrupted run must not leave: the file being written, a scratch file
leftover='^intr\.marple\.\|^\.marple-collect'

# collectors_of PID: the collectors of the marple-collect the driver PID runs
collectors_of() {
	for _c in $(cat /proc/"$1"/task/*/children 2> /dev/null); do
		[ "$(cat /proc/"$_c"/comm 2> /dev/null)" = marple-collect ] && cat /proc/"$_c"/task/*/children 2> /dev/null
	done
}
ok=0 full=0 nofile=0 bad='' started=0 started_full=0
for r in $(seq 1 20); do
	# every 4th run SIGTERM; every 3rd SIGINT to the whole process group, as a
	# terminal's Ctrl-C sends it (to the driver and everything it runs)
	sig=INT to=''; [ $((r % 4)) -eq 0 ] && sig=TERM
	[ $((r % 3)) -eq 0 ] && [ "$sig" = INT ] && command -v setsid > /dev/null && to=-
	delay=$(awk -v s="$seed" -v r="$r" 'BEGIN { srand(s + r); printf "%.2f", 0.3 + rand() * 1.2 }')
	rm -f marple_out/intr.marple
	if [ -n "$to" ]; then
		setsid perl -e '$SIG{INT} = "DEFAULT"; exec @ARGV or die' marple collect -t 30 -o intr.marple callstack cpusched memleak memtime 2> "$T/intr.err" &
	else
		perl -e '$SIG{INT} = "DEFAULT"; exec @ARGV or die' marple collect -t 30 -o intr.marple callstack cpusched memleak memtime 2> "$T/intr.err" &
	fi
	p=$!
	# even runs: the delay counts from when the 4 collectors have started (a
	# loaded machine can take longer than 1.5 s to get there); odd runs: from now
	if [ $((r % 2)) -eq 0 ]; then
		i=0
		while [ "$(collectors_of "$p" | wc -w)" -lt 4 ] && [ $i -lt 2000 ]; do sleep 0.01; i=$((i + 1)); done
		delay=$(awk -v d="$delay" 'BEGIN { printf "%.2f", d - 0.3 }')
		started=$((started + 1))
	fi
	sleep "$delay"
	kill -"$sig" "$to$p"
	wait "$p"; rc=$?
	if ls -A marple_out | grep -q "$leftover"; then
		bad="$bad run$r($to$sig@$delay:left $(ls -A marple_out | grep "$leftover"))"
		rm -rf marple_out/.marple-collect* marple_out/intr.marple.*
	elif [ ! -f marple_out/intr.marple ]; then
		nofile=$((nofile + 1))
		if grep -q '^marple: collect: .*nothing written$' "$T/intr.err" && [ "$rc" -ne 0 ]; then ok=$((ok + 1))
		else bad="$bad run$r($to$sig@$delay:no file,rc=$rc:$(tr '\n' ' ' < "$T/intr.err"))"; fi
	elif marple-cat -q marple_out/intr.marple && ! grep -q half marple_out/intr.marple && [ "$rc" -le 1 ] &&
		[ "$(grep -c '"ended":"signal"' marple_out/intr.marple)" -eq "$(grep '^{"marple"' marple_out/intr.marple | grep -vc '"interface":"memleak"')" ]; then
		ok=$((ok + 1))
		if [ "$(grep -c '"ended":"signal"' marple_out/intr.marple)" -eq 3 ] && [ "$rc" -eq 1 ]; then
			full=$((full + 1))
			[ $((r % 2)) -eq 0 ] && started_full=$((started_full + 1))
		fi
	else
		bad="$bad run$r($to$sig@$delay:rc=$rc:$(marple-cat -q marple_out/intr.marple 2>&1 | head -n 1):$(grep -c '"ended":"signal"' marple_out/intr.marple) trailers say signal)"
	fi
done
check "collect: 20 random SIGINT/SIGTERM (to the driver or its process group): every file valid, trailers say signal, or nothing written and said so ($ok ok, $full with every section, $nofile without a file;$bad)" test "$ok" -eq 20
# once they have started, a stop keeps every collector's section: SIGTERM waits
# for a collector's handler (memleak's half line makes the status 1)
check "collect: a stop after the collectors started keeps every section ($started_full of $started runs; $full of 20 in all)" \
	test "$started_full" -eq "$started"

# --- a signal in every phase of starting up (0 to 150 ms after the driver
# began, as its process group gets a Ctrl-C): never a silent exit
ok=0 bad=''
for r in $(seq 1 16); do
	delay=$(awk -v r="$r" 'BEGIN { printf "%.3f", (r - 1) * 0.01 }')
	rm -rf marple_out/intr.marple
	setsid perl -e '$SIG{INT} = "DEFAULT"; exec @ARGV or die' marple collect -t 30 -o intr.marple callstack cpusched memtime 2> "$T/intr.err" &
	p=$!
	# from the moment perl has become the driver (SIGINT no longer ignored)
	i=0
	while [ "$(cat "/proc/$p/comm" 2>/dev/null)" != marple ] && [ $i -lt 1000 ]; do sleep 0.005; i=$((i + 1)); done
	sleep "$delay"
	kill -INT "-$p"
	wait "$p"; rc=$?
	if ls -A marple_out | grep -q "$leftover"; then
		bad="$bad run$r(@$delay:left a temporary file)"; rm -rf marple_out/.marple-collect* marple_out/intr.marple.*
	elif [ -f marple_out/intr.marple ]; then
		if marple-cat -q marple_out/intr.marple && [ "$rc" -le 1 ] &&
			[ "$(grep -c '"ended":"signal"' marple_out/intr.marple)" -eq "$(grep -c '^{"marple"' marple_out/intr.marple)" ]; then ok=$((ok + 1))
		else bad="$bad run$r(@$delay:rc=$rc:$(grep -c '"ended":"signal"' marple_out/intr.marple) trailers say signal)"; fi
	elif [ "$rc" -ne 0 ] && grep -q '^marple: .*interrupted\|nothing written' "$T/intr.err"; then ok=$((ok + 1))
	else bad="$bad run$r(@$delay:no file, rc=$rc, $(tr '\n' ' ' < "$T/intr.err"))"; fi
done
check "collect: Ctrl-C while starting up: a valid file or a message ($ok of 16 ok;$bad)" test "$ok" -eq 16

# --- cron: no terminal, no HOME, no XDG: nothing printed, the file written
root_last=''
h=$(getent passwd "$(id -u)" | cut -d: -f6)
[ -f "$h/.local/state/marple/last" ] && root_last=$(cat "$h/.local/state/marple/last")
env -i PATH="$PATH" MARPLE_LIBEXEC="$T/bin" sh -c 'cd "$1" && marple collect -t 1 -o cron.marple callstack cpusched' sh "$T/work" \
	< /dev/null > "$T/cron.out" 2> "$T/cron.err"; rc=$?
check "cron: exit 0" test "$rc" -eq 0
check "cron: prints the file's path on stdout, nothing else" test "$(cat "$T/cron.out")" = marple_out/cron.marple -a ! -s "$T/cron.err"
check "cron: the file is written" marple-cat -q marple_out/cron.marple
if [ -n "$root_last" ]; then printf '%s\n' "$root_last" > "$h/.local/state/marple/last"; else rm -f "$h/.local/state/marple/last"; fi
env -i PATH="$PATH" MARPLE_LIBEXEC="$T/bin" HOME=/nonexistent sh -c 'cd "$1" && marple collect -t 1 -o cron2.marple callstack' sh "$T/work" \
	< /dev/null > "$T/cron.out" 2> "$T/cron.err"; rc=$?
check "cron: an unusable HOME is no error either" test "$rc" -eq 0 -a ! -s "$T/cron.err"

# --- "lib" was never an interface (MARPLE dropped it in 2018 unimplemented)
marple list > "$T/list" 2>&1
check "list: no 'lib' interface" sh -c "! grep -q '^  lib ' '$T/list' && grep -q '^  callstack ' '$T/list'"
expect_exit "collect: 'lib' is an unknown interface" 2 "unknown interface or group 'lib'" marple collect -t 1 lib
