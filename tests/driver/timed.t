# The driver and timed stack sections: marple collect asks marple-callstack for
# --timed when the capture stays small ([callstack] timed = auto|yes|no), and
# marple display adds a flame scope page for every timed section.
. "$MARPLE_TOP/tests/lib.sh"
plan 9
mkdir -p "$T/bin" "$T/state" "$T/work" "$T/config/marple"
# a stand-in marple-callstack: records its arguments, writes a timed capture
cat > "$T/bin/marple-callstack" <<EOS
#!/bin/sh
printf '%s\n' "\$*" > "$T/args"
cat "$DATA/timed.marple"
EOS
chmod +x "$T/bin/marple-callstack"
export MARPLE_LIBEXEC="$T/bin" XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config"
unset MARPLE_CONFIG DISPLAY WAYLAND_DISPLAY
cd "$T/work" || exit 1
cfg() { printf '[callstack]\n%s\n' "$1" > "$T/config/marple/config"; }

marple collect -t 2 -o short.marple callstack > /dev/null 2> "$T/err"
check "collect: a short capture keeps sample times (--timed)" grep -q -- '--timed' "$T/args"
printf '[callstack]\nfrequency = 999\n' > "$T/config/marple/config"
marple collect -t 2h -o long.marple callstack > /dev/null 2>&1 &
cs=$!; sleep 1; kill -INT "$cs" 2>/dev/null; wait "$cs"
check "collect: 999 Hz for 2 hours would be too big: no --timed" sh -c "! grep -q -- '--timed' '$T/args'"
cfg 'timed = no'
marple collect -t 1 -o no.marple callstack > /dev/null 2>&1
check "collect: [callstack] timed = no" sh -c "! grep -q -- '--timed' '$T/args'"
cfg 'timed = yes'
marple collect -t 2h -o yes.marple callstack > /dev/null 2>&1 &
cs=$!; sleep 1; kill -INT "$cs" 2>/dev/null; wait "$cs"
check "collect: [callstack] timed = yes, whatever the length" grep -q -- '--timed' "$T/args"
cfg 'timed = sometimes'
expect_exit "collect: a bad [callstack] timed is named" 2 'timed must be auto, yes or no' marple collect -t 1 callstack
rm -f "$T/config/marple/config"

MARPLE_LIBEXEC= marple display -i short.marple -o shown > "$T/out" 2> "$T/err"; rc=$?
check "display: exit 0 for a timed capture" test "$rc" -eq 0
check "display: a flame scope page for the timed section" grep -q '"rows":50' shown/00-callstack-flamescope.html
check "display: the report shows it, made from both sections" grep -q 'marple-cat -s 0,1 .*marple-flamescope' shown/index.html
check "display: the samples section is not drawn by itself" sh -c "! ls shown | grep -q '^01-'"
