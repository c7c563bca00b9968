# A collector's own options through the driver: marple collect IFACE:OPTS
# (words separated by commas, as gcc's -Wl,) passes them to that collector
# after the config's, checked against the registry's options of its program
# first: an unknown option, a missing value, an option marple sets itself,
# or a bare word is a usage error naming it, before anything runs.
. "$MARPLE_TOP/tests/lib.sh"
plan 10
unset MARPLE_LIBEXEC MARPLE_CONFIG DISPLAY WAYLAND_DISPLAY
export XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config"
cd "$T" || exit 1

expect_exit "options: an option the collector does not have" 2 \
	"^marple: collect: callstack:-Q: -Q is not an option of marple-callstack" marple collect -t 1 callstack:-Q
expect_exit "options: an option without its value" 2 "callstack:-F: -F needs a value" marple collect -t 1 callstack:-F
expect_exit "options: a flag given a value" 2 "offcpu:--both=1: --both takes no value" marple collect -t 1 offcpu:--both=1
expect_exit "options: --every is marple's" 2 "cpusched:--every=1s: --every is set by marple itself" \
	marple collect -t 1 cpusched:--every=1s
expect_exit "options: -p goes with no command of record" 2 "callstack:-p,1: -p is set by marple itself" \
	marple record callstack:-p,1 -- true
expect_exit "options: a bare word is not an option" 2 'callstack:99: "99" is not an option' marple collect -t 1 callstack:99
check "options: nothing was written by the refused runs" test ! -e marple_out
if ! is_root; then skip_rest "options: BPF cases" "not root"; fi

# the config says no times: the user's --timed is what keeps them
mkdir -p "$T/config/marple" && printf '[callstack]\ntimed = no\n' > "$T/config/marple/config"
marple collect -t 1 -o opts.marple callstack:-F199,--timed offcpu:--state=D,-m,1000 > "$T/out" 2> "$T/err"; rc=$?
check "options: callstack:-F199,--timed offcpu:--state=D,-m,1000: exit 0 ($(tail -c 200 "$T/err" | tr '\n' ' '))" \
	sh -c "[ $rc -eq 0 ] && marple-cat -q marple_out/opts.marple"
check "options: callstack ran at 199 Hz and timed (over the config's 99 Hz and timed = no)" \
	sh -c "grep '^{\"marple\":1,\"interface\":\"callstack\",\"datatype\":\"stack\"' marple_out/opts.marple | grep -q '\"frequency\":199.*\"timed\":\"stacks\"'"
check "options: offcpu took --state D and -m 1000" \
	sh -c "grep '^{\"marple\":1,\"interface\":\"offcpu\"' marple_out/opts.marple | grep -q '\"min_block_us\":1000,.*\"state\":\"D\"'"
