# marple-collect plans a capture itself: given interface and group names (as
# `marple collect` takes them) it reads the registry and the config and runs
# each collector with its options -- the config's ([callstack] frequency,
# timed = auto|yes|no), then the user's INTERFACE:OPTS, then --include-self
# to those that take it -- with no driver in between.  --plan prints that
# plan; a real run with stand-in collectors shows the same command lines.
. "$MARPLE_TOP/tests/lib.sh"
plan 20
mkdir -p "$T/bin" "$T/fake" "$T/state" "$T/work" "$T/config/marple"
# stand-in collectors: record their arguments, write a fake section
for n in callstack offcpu cpusched memleak; do
	ln -s "$MARPLE_TOP/tests/driver/fake-collector" "$T/fake/marple-$n"
	cat > "$T/bin/marple-$n" <<EOS
#!/bin/sh
printf '%s\n' "\$*" > "$T/args.$n"
exec "$T/fake/marple-$n" "\$@"
EOS
	chmod +x "$T/bin/marple-$n"
done
export XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config"
unset MARPLE_LIBEXEC MARPLE_CONFIG
cd "$T/work" || exit 1
cfg() { printf '%s\n' "$@" > "$T/config/marple/config"; }
# planned WORDS...: the plan, one collector a line, words separated by spaces
planned() { marple-collect --plan "$@" | tr '\t' ' '; }

printf 'callstack marple-callstack -F 99 --timed\noffcpu marple-offcpu\ncpusched marple-cpusched\n' > "$T/cpu.want"
planned -t 5 cpu > "$T/cpu.got"
same "plan: the built-in group cpu, callstack at the config's 99 Hz, timed (5 s x 99 Hz)" "$T/cpu.want" "$T/cpu.got"

cfg '[Aliases]' 'mine = cpusched , perf-malloc,memusage' '[callstack]' 'frequency = 250' 'timed = no'
check "plan: a group of the user's config, its old names made the registry's" \
	test "$(planned mine | cut -d' ' -f1 | paste -sd' ')" = "cpusched perf_malloc memleak"
check "plan: [callstack] frequency and timed = no" test "$(planned -t 1 callstack)" = "callstack marple-callstack -F 250"
check "plan: INTERFACE:OPTS after the config's, so the user's word wins" \
	test "$(planned -t 1 callstack:-F999,--timed)" = "callstack marple-callstack -F 250 -F999 --timed"
cfg '[callstack]' 'timed = yes'
check "plan: timed = yes, whatever the length" test "$(planned -t 0 callstack)" = "callstack marple-callstack -F 99 --timed"
cfg '[callstack]' 'timed = auto' 'frequency = 999'
check "plan: timed = auto: 999 Hz for 2 h is too big, no --timed" test "$(planned -t 2h callstack)" = "callstack marple-callstack -F 999"
check "plan: timed = auto: until a signal has no known length, no --timed" test "$(planned -t 0 callstack)" = "callstack marple-callstack -F 999"
check "plan: timed = auto with --every 1s: an interval is small, --timed" \
	test "$(planned -t 1h -e 1s -o x callstack)" = "callstack marple-callstack -F 999 --timed"
rm -f "$T/config/marple/config"
check "plan: --include-self only to the collectors that take it" \
	test "$(planned --include-self callstack cpusched | paste -sd'|')" = "callstack marple-callstack -F 99 --timed --include-self|cpusched marple-cpusched"
check "plan: a name given twice runs once" test "$(planned callstack cpu | cut -d' ' -f1 | paste -sd' ')" = "callstack offcpu cpusched"

check "plan: a command and no name: the config's [General] record, callstack" \
	test "$(planned -o x --run true)" = "callstack marple-callstack -F 99"
cfg '[General]' 'record = callstack,cpusched'
check "plan: [General] record = callstack,cpusched: each must follow a command" \
	sh -c "marple-collect --plan -o x --run true 2>&1 | grep -q 'cpusched cannot follow a command'"
rm -f "$T/config/marple/config"
expect_exit "plan: an unknown name is a usage error, named" 2 "^marple-collect: unknown interface or group 'frob' \\(see 'marple list'\\)" \
	marple-collect --plan frob
expect_exit "plan: a bad INTERFACE:OPTS is named" 2 "^marple-collect: offcpu:--both=1: --both takes no value" \
	marple-collect --plan offcpu:--both=1
expect_exit "plan: --every refuses a collector without it" 2 "memleak writes one section a run" \
	marple-collect --plan -e 1s -o x cpu memleak
expect_exit "plan: --run refuses a collector without --children" 2 "cpusched cannot follow a command" \
	marple-collect --plan -o x cpusched --run true

# a real run: the config's [General] time, the programs from MARPLE_LIBEXEC,
# each given the planned options, the sections in the order named
cfg '[General]' 'time = 1' '[callstack]' 'frequency = 199'
MARPLE_LIBEXEC="$T/bin" marple-collect -o cap.marple cpu > /dev/null 2> "$T/err"; rc=$?
got=$(grep -o '"interface":"[a-z]*"' cap.marple | cut -d'"' -f4 | paste -sd' ')
check "run: exit 0, the group's sections in order ($got; $(tr '\n' ' ' < "$T/err"))" \
	test "$rc $got" = "0 callstack offcpu cpusched"
check "run: callstack got the config's options and the config's time (1 s)" \
	test "$(cat "$T/args.callstack")" = "-F 199 --timed 1"
expect_exit "run: a collector not built here is named" 3 "^marple-collect: memleak: not built here" \
	env MARPLE_LIBEXEC="$T/nowhere" marple-collect -t 1 -o nb.marple memleak
# the driver passes names on, after a --plan check: a setting of the original
# MARPLE that does nothing here is named once, not by both
cfg '[General]' 'time = 1' 'system_wide: -a'
MARPLE_LIBEXEC="$T/bin" marple collect -o drv.marple cpusched > /dev/null 2> "$T/drv.err"
check "driver: the original's idle setting named once ($(tr '\n' ' ' < "$T/drv.err"))" \
	test "$(grep -c 'ignored (settings of the original MARPLE' "$T/drv.err")" -eq 1
