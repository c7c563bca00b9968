# The capture survives its own failures (issue: long captures): collectors die
# with a SIGKILLed supervisor, a disk that fills keeps the whole sections that
# fitted under a name the user is told, collectors' messages reach stderr and
# the trailers when stderr is no terminal (cron), and two captures started in
# the same second get two names.
. "$MARPLE_TOP/tests/lib.sh"
plan 19
D="$MARPLE_TOP/tests/driver"
mkdir -p "$T/bin" "$T/state" "$T/work"
for n in callstack cpusched memtime; do ln -s "$D/fake-collector" "$T/bin/marple-$n"; done
B=$T/bin
# a collector that writes N records of 100 bytes, says something on stderr, ends
cat > "$B/marple-chatty" <<'SH'
#!/bin/sh
n=$1
echo "marple-chatty: 3 samples lost (ring buffer full)" >&2
printf '{"marple":1,"interface":"chatty","datatype":"stack","host":"h"}\n'
awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) printf "1#%s;f%d\n", sprintf("%090d", 0), i }'
printf '{"trailer":1,"records":%d,"ended":"eof"}\n' "$n"
SH
chmod +x "$B/marple-chatty"
export MARPLE_LIBEXEC="$T/bin" XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config"
unset MARPLE_CONFIG DISPLAY WAYLAND_DISPLAY
cd "$T/work" || exit 1

# --- SIGKILL of the supervisor (the OOM killer's way): its collectors end too
FAKE_ENV_DIR=$T marple-collect -t 0 -o k.marple callstack "$B/marple-callstack" -- cpusched "$B/marple-cpusched" 2> /dev/null &
sup=$!
i=0; while { [ ! -s "$T/callstack" ] || [ ! -s "$T/cpusched" ]; } && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
c1=$(cut -d' ' -f1 "$T/callstack"); c2=$(cut -d' ' -f1 "$T/cpusched")
check "sigkill: both collectors were running" sh -c "kill -0 $c1 && kill -0 $c2"
kill -KILL "$sup"; wait "$sup" 2> /dev/null
i=0; while { kill -0 "$c1" || kill -0 "$c2"; } 2> /dev/null && [ $i -lt 200 ]; do sleep 0.01; i=$((i + 1)); done
check "sigkill: the collectors died with it (within 2 s)" sh -c "! kill -0 $c1 2> /dev/null && ! kill -0 $c2 2> /dev/null"
check "sigkill: no empty k.marple.XXXXXX left ($(ls -A | tr '\n' ' '))" test -z "$(ls -A | grep '^k\.marple')"
kill -KILL "$c1" "$c2" 2> /dev/null

# --- kill -9 of the driver: marple-collect notices, stops its collectors and
# writes the file (it ran on for ever, BPF attached, SIGINT ignored)
mkdir -p "$T/k9" && cd "$T/k9" || exit 1
FAKE_ENV_DIR=$T marple collect -t 0 -o k9.marple callstack cpusched > /dev/null 2> "$T/k9.err" &
drv=$!
rm -f "$T/callstack" "$T/cpusched"
i=0; while { [ ! -s "$T/callstack" ] || [ ! -s "$T/cpusched" ]; } && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
c1=$(cut -d' ' -f1 "$T/callstack"); c2=$(cut -d' ' -f1 "$T/cpusched")
sleep 0.3
sup=$(pgrep -P "$drv" -x marple-collect)
kill -KILL "$drv"; wait "$drv" 2> /dev/null
i=0; while { kill -0 "$c1" || kill -0 "$c2"; } 2> /dev/null && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
check "driver killed (-9): its collectors were stopped (within 5 s)" sh -c "[ -n '$c1' ] && ! kill -0 '$c1' 2> /dev/null && ! kill -0 '$c2' 2> /dev/null"
kill -KILL "$c1" "$c2" 2> /dev/null
i=0; while running "${sup:-0}" && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
sup_ended=0; [ -n "$sup" ] && ! running "$sup" && sup_ended=1
check "driver killed (-9): marple-collect ($sup) ended too" test "$sup_ended" -eq 1
check "driver killed (-9): the capture is written, both sections" \
	sh -c "marple-cat -q marple_out/k9.marple && test \$(grep -c '^{\"marple\"' marple_out/k9.marple) -eq 2"
check "driver killed (-9): the last capture names it" grep -q 'marple_out/k9.marple$' "$T/state/marple/last"
cd "$T/work" || exit 1

# --- from cron: stderr a file, no terminal; the collector's message is kept twice
setsid marple-collect -t 1 -o cron.marple chatty "$B/marple-chatty" 5 < /dev/null > /dev/null 2> "$T/cron.err"
check "cron: the collector's message reaches stderr" grep -q '3 samples lost (ring buffer full)' "$T/cron.err"
check "cron: ... and the trailer, as messages" grep -q '"messages":\["marple-chatty: 3 samples lost (ring buffer full)"\]' cron.marple
check "cron: the capture is still a valid stream" marple-cat -q cron.marple

# --- a disk that fills while the sections are joined (tmpfs of 600 KiB):
# the small section fits, the large one does not; the small one is kept
if is_root && mkdir -p "$T/small" && mount -t tmpfs -o size=600k tmpfs "$T/small" 2> /dev/null; then
	marple-collect -t 1 -o "$T/small/cap.marple" little "$B/marple-chatty" 10 -- big "$B/marple-chatty" 4000 2> "$T/full.err"; rc=$?
	check "full disk at the join: exit 1 ($(tr '\n' ' ' < "$T/full.err" | head -c 300))" test "$rc" -eq 1
	check "full disk at the join: says which section it left out" grep -q '^marple-collect: big: its section (.* bytes) left out: the disk is full, the others are kept' "$T/full.err"
	check "full disk at the join: the whole section is there, valid" sh -c "marple-cat -q '$T/small/cap.marple' && test \$(grep -c '^{\"marple\"' '$T/small/cap.marple') -eq 1"
	check "full disk at the join: no temporary file left" test "$(ls -A "$T/small" | wc -l)" -eq 1
	# the disk full while collecting (big's own file fills it): the small
	# section that finished is still kept (it was lost, "nothing written")
	rm -f "$T/small/cap.marple"
	marple-collect -t 1 -o "$T/small/cap.marple" little "$B/marple-chatty" 10 -- big "$B/marple-chatty" 8000 2> "$T/full2.err"; rc=$?
	check "full disk while collecting: exit 1, the finished section kept ($(tr '\n' ' ' < "$T/full2.err" | head -c 200))" \
		sh -c "test $rc -eq 1 && marple-cat -q '$T/small/cap.marple' && test \$(grep -c '^1#' '$T/small/cap.marple') -eq 10"
	umount "$T/small"
else
	for c in "exit 1" "says which section" "the whole section" "no temporary file"; do skip "full disk at the join: $c" "needs root to mount a small tmpfs"; done
	skip "full disk while collecting" "needs root to mount a small tmpfs"
fi

# --- two captures started in the same second: two names, both kept
mkdir -p "$T/same" && cd "$T/same" || exit 1
marple collect -t 1 memtime > "$T/a.out" 2> "$T/a.err" &
pa=$!
marple collect -t 1 memtime > "$T/b.out" 2> "$T/b.err"; rb=$?
wait "$pa"; ra=$?
check "same second: both exit 0 ($(cat "$T/a.err" "$T/b.err" | tr '\n' ' '))" test "$ra$rb" = 00
check "same second: two different files, both valid" sh -c "test \"\$(cat '$T/a.out')\" != \"\$(cat '$T/b.out')\" && marple-cat -q \"\$(cat '$T/a.out')\" && marple-cat -q \"\$(cat '$T/b.out')\""
# a capture that writes nothing gives its reserved name back
before=$(cat "$T/state/marple/last")
marple collect -t 1 -o gone.marple ipc > /dev/null 2>&1
check "a capture that wrote nothing leaves no empty file" test ! -e marple_out/gone.marple
check "... and the last capture is the one before again" test "$(cat "$T/state/marple/last")" = "$before"
