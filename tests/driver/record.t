# marple record -- CMD (and marple collect IFACE -- CMD): the everyday
# `perf record -- cmd`.  The command runs once the collectors trace, with the
# user's standard input and output, and is profiled with every process it
# starts (a shim that forks the program, as pyenv's python3 does); its end
# ends the capture, its exit status is record's, and the capture is
# remembered and drawn.  Usage errors need no root.
. "$MARPLE_TOP/tests/lib.sh"
. "$MARPLE_TOP/tests/collectors/stacks.sh"
plan 14
unset MARPLE_LIBEXEC MARPLE_CONFIG DISPLAY WAYLAND_DISPLAY
export XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config"
W="$MARPLE_BIN/workloads"
cd "$T" || exit 1

expect_exit "record: no command after -- is a usage error" 2 "record: name the command to run after --" \
	marple record callstack
expect_exit "record: a collector that cannot follow a command is refused" 2 \
	"cpusched cannot follow a command and its children \(no --children" marple record cpusched -- true
expect_exit "record: marple-collect --run needs -o (stdout is the command's)" 2 "name the capture with -o FILE" \
	marple-collect callstack marple-callstack --run true
if ! is_root; then skip_rest "record: BPF cases" "not root"; fi

# a shim: a shell script that forks the program, then reports and fails
cat > "$T/shim" <<'SH'
#!/bin/sh
read -r line
echo "shim read: $line"
"$@"
exit 4
SH
chmod +x "$T/shim"

echo "from the user" | marple record -o rec.marple callstack offcpu -- "$T/shim" "$W/burn" 2000 > "$T/out" 2> "$T/err"; rc=$?
check "record: the exit status is the command's (4; got $rc)" test "$rc" -eq 4
check "record: the command read the user's standard input" grep -q '^shim read: from the user$' "$T/out"
check "record: standard output is the command's alone ($(wc -l < "$T/out") lines)" test "$(wc -l < "$T/out")" -eq 1
check "record: the capture is named on stderr" grep -q '^marple: capture: marple_out/rec.marple$' "$T/err"
check "record: a valid capture, a section per collector" \
	sh -c "marple-cat -q marple_out/rec.marple && test \$(marple-cat -l marple_out/rec.marple | tail -n +2 | wc -l) -ge 2"
burn=$(weight marple_out/rec.marple '^burn;.*main;top;mid;leaf$')
total=$(weight marple_out/rec.marple '.')
check "record: the shim's child is profiled: burn's main;top;mid;leaf has $burn of $total samples" \
	sh -c "[ $burn -ge 20 ] && [ $((burn * 10)) -ge $((total * 7)) ]"
check "record: the header says the target and --children" \
	grep -q '"interface":"callstack".*"pid":[0-9]*,"children":true' marple_out/rec.marple
check "record: the report is drawn, named on stderr" sh -c "test -s marple_out/rec/index.html && grep -q rec/index.html '$T/err'"
check "record: the capture is remembered (marple display -l)" sh -c "marple display -l | grep -q callstack"
check "record: the command's status is said on stderr" grep -q 'exited with status 4' "$T/err"

# marple collect IFACE -- CMD: the same capture, not drawn; a command never
# found is 127 and runs no capture on
marple collect -o col.marple callstack -- "$W/burn" 300 > "$T/cout" 2> "$T/cerr"; rc=$?
check "record: marple collect callstack -- CMD: exit 0, written, not drawn ($(tail -c 200 "$T/cerr" | tr '\n' ' '))" \
	sh -c "[ $rc -eq 0 ] && marple-cat -q marple_out/col.marple && [ ! -e marple_out/col ] && [ ! -s '$T/cout' ]"
