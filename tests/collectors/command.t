# A command and every process it starts (root, real BPF): -c CMD runs it from
# its first instruction to its exit and follows its children through fork and
# exec, so a shim (pyenv's python3 is a shell script that forks the
# interpreter; timeout, sudo) is profiled down to the work it starts; -p PID
# --children does the same for a process already running.  -p alone of such
# a shim sees the shim only, and says that no sample came.
. "$MARPLE_TOP/tests/lib.sh"
. "$MARPLE_TOP/tests/collectors/stacks.sh"
plan 14
W="$MARPLE_BIN/workloads"
CS="$MARPLE_BIN/marple-callstack" OC="$MARPLE_BIN/marple-offcpu"

expect_exit "command: --children without -p is a usage error" 2 "children goes with -p" "$CS" --children 1
expect_exit "command: -p with -c is a usage error" 2 "cannot be used together" "$CS" -p 1 -c true 1
if ! is_root; then skip_rest "command: BPF cases" "not root"; fi

# a shim: a shell script that forks the program (and waits for go, if asked)
cat > "$T/shim" <<SH
#!/bin/sh
while [ -n "\${GO:-}" ] && [ ! -e "\$GO" ]; do sleep 0.05; done
"\$@"
echo "shim: \$1 exited \$?" >&2
SH
chmod +x "$T/shim"

# 1. -c through a shim: burn's stacks, most of the samples, under burn's name
"$CS" -F 499 -c "$T/shim $W/burn 2000" 30 > "$T/c.out" 2> "$T/c.err"; rc=$?
burn=$(weight "$T/c.out" '^burn;.*main;top;mid;leaf$')
total=$(weight "$T/c.out" '.')
check "command: -c ends with the command, exit 0, a valid stream ($(tail -c 200 "$T/c.err" | tr '\n' ' '))" \
	sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/c.out' && grep -q '\"ended\":\"eof\"' '$T/c.out'"
check "command: -c follows the shim's child: burn's main;top;mid;leaf has $burn of $total samples" \
	sh -c "[ $burn -ge 20 ] && [ $((burn * 10)) -ge $((total * 7)) ]"
check "command: the command's status is in the trailer" grep -q '"command_status":0' "$T/c.out"
check "command: the command's output went to stderr, not into the stream" grep -q 'shim: .*burn exited 0' "$T/c.err"
"$CS" -c "sh -c 'exit 3'" 10 > "$T/x.out" 2> /dev/null
check "command: a failing command's status is kept (3)" grep -q '"command_status":3' "$T/x.out"

# 2. -p of a running shim: with --children, from before it forks the work
rm -f "$T/go" "$T/r.children"
GO="$T/go" "$T/shim" "$W/burn" 2000 2> /dev/null & shim=$!
MARPLE_READY_FILE="$T/r.children" "$CS" -F 499 -p "$shim" --children 30 > "$T/p.children" 2> "$T/p.children.err" & col=$!
wait_ready "$T/r.children" 30 "$col" || echo "not ready" >> "$T/p.children.err"
: > "$T/go"
wait "$shim"
wait "$col"
# ... and alone, once it only waits for its child: the case of pyenv's python3
"$T/shim" "$W/burn" 100000 2> /dev/null & shim=$!
sleep 0.5
"$CS" -F 499 -p "$shim" 2 > "$T/p.alone" 2> "$T/p.alone.err"
pkill -P "$shim" burn; wait "$shim"
b=$(weight "$T/p.children" '^burn;.*main;top;mid;leaf$')
check "command: -p SHIM --children follows the child it forks later ($b samples of burn)" test "$b" -ge 20
b=$(weight "$T/p.alone" '^burn;')
check "command: -p SHIM alone sees no burn ($b)" test "$b" -eq 0
check "command: ... and says why it has no sample" grep -q '0 samples: process [0-9]* never ran on a CPU.*add --children' "$T/p.alone.err"
check "command: --children is in the header's options" grep -q '"children":true' "$T/p.children"

# 3. offcpu -c through the shim: sleeper's wait_here blocks ~1 s in all
"$OC" -c "$T/shim $W/sleeper 1" 30 > "$T/o.out" 2> "$T/o.err"; rc=$?
us=$(weight "$T/o.out" '^sleeper;.*wait_here')
check "command: offcpu -c ends with the command, exit 0 ($(tail -c 200 "$T/o.err" | tr '\n' ' '))" \
	sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/o.out' && grep -q '\"ended\":\"eof\"' '$T/o.out'"
check "command: offcpu -c follows the shim's child: sleeper's wait_here blocked $us us (0.5-1.5 s)" \
	sh -c "[ $us -ge 500000 ] && [ $us -le 1500000 ]"

# 4. a traced command stops at each signal it gets until the collector lets
# it go on: 1,000 signals to itself cost it 1,000 waits for the collector's
# poll (about 50 s when each waited for the poll's timeout; well under a
# second when a stop wakes the poll at once; 60 s is only a hang guard)
timeout 60 "$CS" -F 99 -c "$W/sigself 1000" > "$T/sig.out" 2> "$T/sig.err"; rc=$?
check "command: -c with a command that signals itself 1,000 times ends with it (exit $rc: $(tail -c 200 "$T/sig.err" | tr '\n' ' '))" \
	sh -c "[ $rc -eq 0 ] && grep -q '^sigself: 1000 signals handled' '$T/sig.err' && grep -q '\"ended\":\"eof\"' '$T/sig.out'"
