#!/bin/sh
# regen.sh — regenerate the golden outputs: tests/flamegraph/CASE.in (+ CASE.args,
# one line of options, split at blanks) -> CASE.out, with build/marple-flamegraph.
# Review the diff before committing.
cd "$(dirname "$0")" || exit 1
BIN=${MARPLE_BIN:-../../build}
for in in *.in; do
	c=${in%.in}
	args=
	[ -f "$c.args" ] && args=$(cat "$c.args")
	# shellcheck disable=SC2086
	"$BIN/marple-flamegraph" $args "$in" > "$c.out" 2>/dev/null
	echo "$c: exit $?"
done
