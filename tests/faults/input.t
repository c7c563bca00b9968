# Faults on input: every renderer given a missing file, an empty file or a
# malformed stream exits 1 with a message and writes nothing to stdout, not
# the head of a page it cannot finish (`marple-eventplot /nonexistent >
# out.html` left 1,036 bytes of one).  marple-flamegraph alone answers an
# input with no usable line as flamegraph.pl does: exit 2 and a whole SVG
# saying so (tests/cli/marple-flamegraph.t), never part of one.
. "$MARPLE_TOP/tests/lib.sh"
# the renderers, as the registry says (marple-push, a helper, lives beside
# them but needs a server's URL before any input)
renderers=$(awk -F '\t' '$2 == "kind=renderer" { print substr($1, 9) }' "$MARPLE_BIN/marple-registry")
n=0
for p in $renderers; do n=$((n + 1)); done
plan $((n * 3))
: >"$T/empty.marple"
# a header cut short, then records with no section to belong to
printf '{"marple":1,"interface":"x","datatype":\n12#a;b\n1000,sched_switch,cpu0\n' >"$T/malformed.marple"

for p in $renderers; do
	for input in "$T/nonexistent" "$T/empty.marple" "$T/malformed.marple"; do
		what=$(basename "$input")
		if [ ! -x "$MARPLE_BIN/$p" ]; then fail "$p $what" "not built"; continue; fi
		timeout 60 "$p" "$input" >"$T/out" 2>"$T/err"; rc=$?
		size=$(wc -c <"$T/out")
		if ! grep -q "^$p: " "$T/err"; then
			fail "$p $what" "exit $rc without a message (stderr: $(head -c 200 "$T/err" | tr '\n' ' '))"
		elif [ "$rc" -ne 1 ]; then
			fail "$p $what" "exit $rc, wanted 1 (stderr: $(head -c 200 "$T/err" | tr '\n' ' '))"
		elif [ "$size" -ne 0 ]; then
			fail "$p $what" "exit 1 but $size bytes on stdout: $(head -c 80 "$T/out" | tr '\n' ' ')"
		else
			pass "$p $what: exit 1, named, stdout empty"
		fi
	done
done
