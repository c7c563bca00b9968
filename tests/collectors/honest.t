# Stacks that say what they are (root, real BPF): an address outside every
# function is not named after the symbol below it, and a capture whose user
# stacks mostly stop short says so on stderr and counts them in the trailer.
. "$MARPLE_TOP/tests/lib.sh"
plan 6
W="$MARPLE_BIN/workloads"
if ! is_root; then skip_rest "honest" "needs root"; fi

trailer_num() { sed -n "s/.*\"trailer\":1.*\"$2\":\([0-9]*\).*/\1/p" "$1"; }

# 1. Debian's python3 has no frame pointers: a frame-pointer walk of its loop
# goes astray, but its frames are never _init or _fini (addresses past the
# last function of libpython used to be named _fini).
python3 -c 'while 1: pass' & py=$!
sleep 0.3
marple-callstack -F 499 -p "$py" 2 > "$T/py.out" 2> "$T/py.err"; rc=$?
kill "$py" 2>/dev/null; wait "$py" 2>/dev/null
n=$(grep -Ec '^[0-9]+#.*;_(init|fini)(;|$)' "$T/py.out")
check "honest: python3 ran and no frame is _init or _fini ($n)" test "$rc" -eq 0 -a "$n" -eq 0

# 2. nofp (built -fomit-frame-pointer): its stacks stop at chain_c; stderr
# names the share, the reason and the cure, the trailer counts them.
"$W/nofp" 4 & wl=$!
sleep 0.2
marple-callstack -F 499 -p "$wl" 1 > "$T/fp.out" 2> "$T/fp.err"
marple-callstack --dwarf -F 499 -p "$wl" 1 > "$T/dw.out" 2> "$T/dw.err"
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
check "honest: frame pointers on nofp: stderr says most stacks stop short and what helps" \
	grep -Eq '^marple-callstack: [0-9]+% of the user stacks .* stop before _start.*without frame pointers.*--unwind' "$T/fp.err"
uw=$(trailer_num "$T/fp.out" user_weight) iw=$(trailer_num "$T/fp.out" incomplete_user_weight)
check "honest: the trailer counts them ($iw of $uw samples)" test "${uw:-0}" -gt 0 -a "${iw:-0}" -gt $(( ${uw:-0} / 2 ))
check "honest: --dwarf on nofp: no such line" test "$(grep -c 'of the user stacks' "$T/dw.err")" -eq 0
iw=$(trailer_num "$T/dw.out" incomplete_user_weight)
check "honest: --dwarf: whole stacks (${iw:-?} incomplete)" test "${iw:-1}" -eq 0

# 3. hotcold keeps its frame pointers: nothing to say.
"$W/hotcold" 3 & wl=$!
sleep 0.2
marple-callstack -F 499 -p "$wl" 1 > "$T/hc.out" 2> "$T/hc.err"
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
check "honest: frame pointers on hotcold: no line about incomplete stacks" \
	test "$(grep -c 'of the user stacks' "$T/hc.err")" -eq 0
