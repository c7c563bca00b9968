# marple-collect, the supervisor `marple collect` runs, with stand-in
# collectors (tests/driver/fake-collector): -t 0 runs until a signal, Ctrl-C to
# a complete file in well under 200 ms, a collector that hangs is killed and
# named, one that cannot run is named, a stop that comes before the collectors
# have their handlers, MARPLE_SELF_PIDS and MARPLE_SELF_PGID, and no helper
# process of the driver during a capture.  (The real timings are
# in make bench: tests/bench/driver.sh.)
. "$MARPLE_TOP/tests/lib.sh"
plan 34
D="$MARPLE_TOP/tests/driver"
mkdir -p "$T/bin" "$T/state" "$T/work" "$T/env"
for n in callstack cpusched memtime memleak hang deaf slowend; do
	ln -s "$D/fake-collector" "$T/bin/marple-$n"
done
B=$T/bin
export MARPLE_LIBEXEC="$T/bin" XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config"
unset MARPLE_CONFIG DISPLAY WAYLAND_DISPLAY
cd "$T/work" || exit 1
ms() { echo $(( $(date +%s%N) / 1000000 )); }
# Background jobs of a script ignore SIGINT; perl restores it, as a terminal's Ctrl-C finds it.
SIGINT_DFL='$SIG{INT} = "DEFAULT"; exec @ARGV or die'
alive() { kill -0 "$1" 2>/dev/null; }
# watchdog PID: kill PID if it is still there in 20 s (a test never hangs)
watchdog() { (sleep 20; kill -KILL "$1" 2> /dev/null) > /dev/null 2>&1 & wd=$!; }
signal_trailers() { grep -c '"ended":"signal"' "$1"; }
children() { cat /proc/"$1"/task/*/children 2> /dev/null; }
# wait_children PID N: until PID has N children (at most 20 s)
wait_children() {
	_i=0
	while [ "$(children "$1" | wc -w)" -lt "$2" ] && [ $_i -lt 2000 ]; do sleep 0.01; _i=$((_i + 1)); done
}

# --- usage
expect_exit "collect: a NAME without PROGRAM is a usage error" 2 "each collector is NAME PROGRAM .*got 'b' alone" \
	marple-collect -t 1 a "$B/marple-callstack" -- b
expect_exit "collect: a bad duration is a usage error" 2 "bad duration 'ten'" \
	marple-collect -t ten a "$B/marple-callstack"

# --- -h's option lines come from the option table: the man page lists the same
# options with the same argument names, in the same order
marple-collect -h | awk -F '  +' '/^ +-/ { print $2 }' > "$T/h.opts"
sed -n '/^\.SH OPTIONS/,/^\.SH ENVIRONMENT/{/^\.TP/{n;p;}}' "$MARPLE_TOP/collectors/marple-collect.1" |
	sed 's/^\.BR //; s/\\-/-/g; s/\\f[IR]//g; s/"//g; s/ , /, /; s/  */ /g; s/ $//' > "$T/man.opts"
if [ -s "$T/h.opts" ]; then same "usage: -h lists the man page's options" "$T/man.opts" "$T/h.opts"
else fail "usage: -h lists the man page's options" "no option lines in -h"; fi

# --- -t 0: until SIGINT; Ctrl-C to a complete file (best of 3 runs; each file must be complete)
best=999999 ran=0 allok=1 why=''
for r in 1 2 3; do
	rm -f zero.marple
	perl -e "$SIGINT_DFL" marple-collect -t 0 -o zero.marple callstack "$B/marple-callstack" -- cpusched "$B/marple-cpusched" 2> "$T/z.err" &
	p=$!
	sleep 1.5
	alive "$p" && ran=$((ran + 1))
	watchdog "$p"
	s=$(ms)
	kill -INT "$p"
	wait "$p"; rc=$?
	e=$(ms)
	kill "$wd" 2> /dev/null
	[ $((e - s)) -lt "$best" ] && best=$((e - s))
	if [ "$rc" -ne 0 ] || ! marple-cat -q zero.marple 2> /dev/null || [ "$(signal_trailers zero.marple)" -ne 2 ]; then
		allok=0 why="$why run$r: rc=$rc, $(signal_trailers zero.marple 2> /dev/null) trailers say signal, $(tr '\n' ' ' < "$T/z.err");"
	fi
done
check "collect -t 0: still running after 1.5 s in all 3 runs ($ran)" test "$ran" -eq 3
check "collect -t 0: SIGINT ends it, exit 0, a valid file, both trailers say signal ($why)" test "$allok" -eq 1
# how quick is measured, not asserted: make bench (tests/bench/driver.sh) prints it
echo "# collect: SIGINT to a complete file in $best ms (best of 3)"

# --- the same through the driver: marple collect -t 0, Ctrl-C to its process group
rm -f marple_out/zero.marple
setsid perl -e '$SIG{INT} = "DEFAULT"; exec @ARGV or die' marple collect -t 0 -o zero.marple callstack memtime 2> "$T/d.err" &
p=$!
sleep 1.5
ran=0; alive "$p" && ran=1
watchdog "$p"
kill -INT "-$p"
wait "$p"; rc=$?
kill "$wd" 2> /dev/null
check "marple collect -t 0: runs until Ctrl-C, then exit 0 ($(tr '\n' ' ' < "$T/d.err"))" test "$ran" -eq 1 -a "$rc" -eq 0
check "marple collect -t 0: the file is valid, both sections end \"signal\"" \
	sh -c 'marple-cat -q marple_out/zero.marple && test "$(grep -c "\"ended\":\"signal\"" marple_out/zero.marple)" -eq 2'

# --- a collector that hangs past its duration: SIGTERM, then SIGKILL, named; the others kept
s=$(ms)
marple-collect -t 1 -g 1 -o hang.marple callstack "$B/marple-callstack" -- hang "$B/marple-hang" 2> "$T/h.err"; rc=$?
el=$(( $(ms) - s ))
check "hang: exit 1 (a collector was killed)" test "$rc" -eq 1
check "hang: named when it overran" grep -q '^marple-collect: hang ran 1 s past its duration; stopping it (SIGTERM)$' "$T/h.err"
check "hang: named when killed" grep -q '^marple-collect: hang did not stop within 1 s of SIGTERM (nor wrote anything for as long); killed it (SIGKILL)$' "$T/h.err"
check "hang: over in duration + 2 x grace ($el ms)" test "$el" -lt 5000
check "hang: the file is valid, with both sections" \
	sh -c 'marple-cat -q hang.marple && test "$(grep -c "^{\"marple\"" hang.marple)" -eq 2'
check "hang: the killed collector's record is kept" grep -q '^3#hang;main;stuck$' hang.marple

# --- a collector still writing its section long past its duration (3 s, a
#     record every 0.4 s, with a grace of 1 s): not killed while it writes
marple-collect -t 1 -g 1 -o slow.marple callstack "$B/marple-callstack" -- slowend "$B/marple-slowend" 2> "$T/s.err"; rc=$?
check "slowend: exit 0 ($(tr '\n' ' ' < "$T/s.err"))" test "$rc" -eq 0
check "slowend: not killed" sh -c "! grep -q SIGKILL '$T/s.err'"
check "slowend: its whole section kept" sh -c 'marple-cat -q slow.marple && grep -q "^8#slowend;written;out_8$" slow.marple'

# --- a collector that hangs after Ctrl-C: killed GRACE later and named
perl -e "$SIGINT_DFL" marple-collect -t 0 -g 1 -o hang2.marple memtime "$B/marple-memtime" -- hang "$B/marple-hang" 2> "$T/h2.err" &
p=$!
sleep 1
watchdog "$p"
s=$(ms)
kill -INT "$p"
wait "$p"; rc=$?
el=$(( $(ms) - s ))
kill "$wd" 2> /dev/null
check "hang after SIGINT: killed and named, exit 1 ($(tr '\n' ' ' < "$T/h2.err"))" \
	sh -c "test $rc -eq 1 && grep -q 'hang did not stop within 1 s of SIGTERM (nor wrote anything for as long); killed it' '$T/h2.err'"
check "hang after SIGINT: the others' section ends \"signal\"; over in about GRACE ($el ms)" \
	sh -c "marple-cat -q hang2.marple && grep -q '\"ended\":\"signal\"' hang2.marple && test $el -lt 3000"

# --- a stop right after the start, before the collectors have their handlers
# (SIGTERM's default action would end them with nothing written): SIGTERM
# waits until /proc shows a handler; one that never sets one is sent it after
# a while, dies with nothing written, and is named; the others' sections stay.
FAKE_TRAP_DELAY=0.5 marple-collect -t 0 -g 5 -o early.marple callstack "$B/marple-callstack" \
	-- deaf "$B/marple-deaf" -- memtime "$B/marple-memtime" 2> "$T/early.err" &
p=$!
wait_children "$p" 3
watchdog "$p"
kill -TERM "$p"
wait "$p"; rc=$?
kill "$wd" 2> /dev/null
check "early stop: exit 1 ($(tr '\n' ' ' < "$T/early.err"))" test "$rc" -eq 1
check "early stop: the collector with no handler is named" \
	grep -q '^marple-collect: deaf: ended (killed by SIGTERM) before it wrote anything; no section' "$T/early.err"
check "early stop: the others' sections are written, both ended by the signal" \
	sh -c 'marple-cat -q early.marple && test "$(grep -c "^{\"marple\"" early.marple)" -eq 2 &&
		test "$(grep -c "\"ended\":\"signal\"" early.marple)" -eq 2 && ! grep -q "\"interface\":\"deaf\"" early.marple'

# --- a program that cannot run: named, the others kept
expect_exit "cannot run: named, exit 1" 1 '^marple-collect: gone: cannot run .*/no-such-collector: No such file' \
	marple-collect -t 1 -o gone.marple callstack "$B/marple-callstack" -- gone "$T/no-such-collector"
check "cannot run: one line for it" test "$(grep -c gone "$T/ee.err")" -eq 1
check "cannot run: the other section is written" test "$(grep -c '^{"marple"' gone.marple)" -eq 1

# --- standard output, and no file replaced without -f
marple-collect -t 1 memtime "$B/marple-memtime" > "$T/stdout.marple" 2> "$T/s.err"; rc=$?
check "stdout: exit 0, a valid stream" sh -c "test $rc -eq 0 && marple-cat -q '$T/stdout.marple'"
echo precious > kept.marple
expect_exit "an existing FILE: not replaced without -f, exit 3" 3 'kept.marple: cannot write: File exists' \
	marple-collect -t 1 -o kept.marple memtime "$B/marple-memtime"
check "an existing FILE: untouched, no temporary file left" \
	sh -c 'test "$(cat kept.marple)" = precious && test -z "$(ls -A | grep "^kept.marple.\|^\.marple-collect")"'
marple-collect -t 1 -f -o kept.marple memtime "$B/marple-memtime" 2> "$T/s.err"
check "-f replaces it" marple-cat -q kept.marple

# --- MARPLE_SELF_PIDS and MARPLE_SELF_PGID: the supervisor, the collectors before, itself; one group
FAKE_ENV_DIR=$T/env MARPLE_SELF_PIDS=4242 marple-collect -t 1 -o self.marple callstack "$B/marple-callstack" \
	-- cpusched "$B/marple-cpusched" -- memtime "$B/marple-memtime" 2> "$T/e.err" &
sup=$!
wait "$sup"
read -r p1 g1 sg1 sp1 < "$T/env/callstack"
read -r p2 g2 sg2 sp2 < "$T/env/cpusched"
read -r p3 g3 sg3 sp3 < "$T/env/memtime"
check "self: the first collector's MARPLE_SELF_PIDS: those given, the supervisor and itself ($sp1)" test "$sp1" = "4242 $sup $p1"
check "self: the third's names all before it and itself ($sp3)" test "$sp3" = "4242 $sup $p1 $p2 $p3"
check "self: every collector is in the group MARPLE_SELF_PGID, led by the first ($g1 $g2 $g3 / $sg1 $sg2 $sg3)" \
	test "$g1:$g2:$g3:$sg1:$sg2:$sg3" = "$p1:$p1:$p1:$p1:$p1:$p1"

# --- no helper process of the driver during a capture: sampled every 50 ms
# while marple-collect runs, the driver's only child is marple-collect, whose
# only children are the collectors (the same processes throughout).
# The capture runs until 20 samples are taken (-t 0, then SIGTERM to the
# driver): a loaded machine takes fewer samples a second, not fewer in all.
comm_of() { cat /proc/"$1"/comm 2> /dev/null; }
marple collect -t 0 -o quiet.marple callstack cpusched 2> "$T/q.err" &
drv=$!
seen='' other='' samples=0
i=0
while [ $i -lt 400 ] && [ $samples -lt 20 ]; do
	kids=$(children "$drv")
	sup=''
	for c in $kids; do [ "$(comm_of "$c")" = marple-collect ] && sup=$c; done
	# (a marple-collect before it, the driver's check of the line
	# (--plan), is not the capture's: a sanitizer build's lives long enough
	# to be seen, and the loop took its end for the capture's)
	if [ -n "$sup" ] && [ "$sup" != "${last_sup:-}" ]; then
		last_sup=$sup seen='' other='' samples=0 sups=$((${sups:-0} + 1))
	fi
	if [ -n "$sup" ]; then
		samples=$((samples + 1))
		for c in $kids; do [ "$c" = "$sup" ] || other="$other $(comm_of "$c")"; done
		for g in $(children "$sup"); do
			case " $seen " in *" $g "*) ;; *) seen="$seen $g" ;; esac
		done
	elif ! kill -0 "$drv" 2> /dev/null; then
		break	# the driver has ended
	fi
	sleep 0.05
	i=$((i + 1))
done
kill -TERM "$drv" 2> /dev/null
wait "$drv"
check "no helpers: the driver starts nothing but marple-collect during a capture ($samples samples; ${other:-nothing else}; ${sups:-0} marple-collect, the check's and the capture's)" test -z "$other" -a "$samples" -ge 20 -a "${sups:-0}" -le 2
check "no helpers: marple-collect's children are the 2 collectors, throughout (pids:$seen)" test "$(echo $seen | wc -w)" -eq 2
check "no helpers: the capture is complete" marple-cat -q marple_out/quiet.marple
