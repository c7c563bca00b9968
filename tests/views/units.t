# Stacks of different units never add (marple-format(5), UNITS): a capture
# of callstack (samples) and offcpu (microseconds) drew 1,284 samples +
# 221,473,093 us as one total.  Every reader of stacks keeps the first stack
# section's unit, names each section of another unit and skips it.
. "$MARPLE_TOP/tests/lib.sh"
plan 12

cap() {	# a callstack section (samples) then an offcpu section (us)
	printf '%s\n' \
	'{"marple":1,"interface":"callstack","datatype":"stack","host":"h","units":{"weight":"samples"}}' \
	'3#app;main;spin' \
	'{"trailer":1,"records":1}' \
	'{"marple":1,"interface":"offcpu","datatype":"stack","host":"h","units":{"weight":"us"}}' \
	'5000000#app;main;sleep' \
	'{"trailer":1,"records":1}'
}
cap > "$T/cap.marple"
# the same sections the other way round: the first unit wins
{ sed -n 4,6p "$T/cap.marple"; sed -n 1,3p "$T/cap.marple"; } > "$T/rev.marple"

marple-fold "$T/cap.marple" > "$T/f" 2> "$T/e"; rc=$?
check "fold: only the first unit's stacks" sh -c "[ $rc -eq 0 ] && [ \"\$(cat '$T/f')\" = 'app;main;spin 3' ]"
check "fold: the skipped section named with both units" \
	grep -q "^marple-fold: $T/cap.marple:4: section 1 (offcpu) weighs us, not samples as .* section 0 (callstack): skipped" "$T/e"
marple-fold "$T/rev.marple" > "$T/f" 2>/dev/null
check "fold: the first section's unit wins (offcpu first)" test "$(cat "$T/f")" = 'app;main;sleep 5000000'
marple-fold --to-stream "$T/cap.marple" > "$T/s" 2>/dev/null
check "fold --to-stream: one unit, labelled as it is" sh -c \
	"grep -q '\"units\":{\"weight\":\"samples\"}' '$T/s' && grep -qx '3#app;main;spin' '$T/s' && ! grep -q sleep '$T/s'"
# two files: the rule spans the inputs
sed -n 4,6p "$T/cap.marple" > "$T/off.marple"
sed -n 1,3p "$T/cap.marple" > "$T/on.marple"
marple-fold "$T/on.marple" "$T/off.marple" > "$T/f" 2> "$T/e"
check "fold: two files of two units: the second skipped" sh -c \
	"[ \"\$(cat '$T/f')\" = 'app;main;spin 3' ] && grep -q 'off.marple:1: section 0 (offcpu) weighs us' '$T/e'"
# a header without units weighs samples
printf '{"marple":1,"interface":"x","datatype":"stack"}\n2#app;main;spin\n' > "$T/nounit.marple"
marple-fold "$T/on.marple" "$T/nounit.marple" > "$T/f" 2> "$T/e"
check "fold: a header naming no unit weighs samples" sh -c "[ \"\$(cat '$T/f')\" = 'app;main;spin 5' ] && [ ! -s '$T/e' ]"

marple-flamegraph "$T/cap.marple" > "$T/g.svg" 2> "$T/e"; rc=$?
check "flamegraph: total is the samples only" sh -c \
	"[ $rc -eq 0 ] && grep -q 'T:3,K' '$T/g.svg' && ! grep -q 'sleep' '$T/g.svg'"
check "flamegraph: the skipped section named" grep -q 'section 1 (offcpu) weighs us, not samples' "$T/e"
marple-flamegraph "$T/rev.marple" > "$T/g.svg" 2>/dev/null
check "flamegraph: offcpu first: microseconds only" sh -c \
	"grep -q 'sleep' '$T/g.svg' && ! grep -q 'spin' '$T/g.svg'"

marple-treemap "$T/cap.marple" > "$T/t.html" 2> "$T/e"; rc=$?
check "treemap: samples only, unit samples" sh -c \
	"[ $rc -eq 0 ] && grep -q 'unit:\"samples\"' '$T/t.html' && grep -q spin '$T/t.html' && ! grep -q sleep '$T/t.html'"
check "treemap: the skipped section named" grep -q 'section 1 (offcpu) weighs us' "$T/e"

# pprof already refused; it still does (one rule, two ways of keeping it)
expect_exit "pprof: still refuses two units" 1 'one profile holds one kind' marple-pprof -o "$T/p.pb.gz" "$T/cap.marple"
