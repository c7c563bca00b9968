# The registry is checked line by line by each program that reads it
# (marple-config, marple-report): a garbage line, a NUL byte, ext=../../x
# (a part of the plan's file names), default-for=banana are refused, exit 1,
# naming the registry's file and line; a registry missing a collector the
# built-in defaults name is blamed, not "built-in:26".
. "$MARPLE_TOP/tests/lib.sh"
plan 8
R="$MARPLE_BIN/marple-registry"
S="$MARPLE_TOP/tests/data/sample.marple"
unset MARPLE_CONFIG
export XDG_CONFIG_HOME="$T/config"
check "registry: the real one passes marple-config" marple-config --registry "$R"
check "registry: ... and marple-report --plan" sh -c "marple-report --plan --registry '$R' --source '$S' '$S' > /dev/null"
n=$(($(wc -l < "$R") + 1))
# bad REGISTRY_LINE: the registry with that line added at its end
bad() { cp "$R" "$T/r"; printf '%b\n' "$1" >> "$T/r"; }
bad 'this is not a registry line'
expect_exit "registry: a garbage line: marple-config exits 1, file:line" 1 \
	"^marple-config: $T/r:$n: not a registry line: a field not KEY=VALUE" marple-config --registry "$T/r"
bad 'program=marple-x\tkind=renderer\0\tdisplay=evil'
expect_exit "registry: a NUL byte: exit 1, file:line" 1 "^marple-config: $T/r:$n: .*a NUL byte" \
	marple-config --registry "$T/r"
bad 'program=marple-flamegraph2\tkind=renderer\tdisplay=fg2\treads=stack\text=../../x'
expect_exit "registry: ext=../../x: marple-report exits 1, file:line" 1 \
	"^marple-report: $T/r:$n: not a registry line: not a file name extension .* in ext" \
	marple-report --plan --registry "$T/r" --source "$S" "$S"
bad 'program=marple-flamegraph2\tkind=renderer\tdisplay=fg2\treads=stack\text=svg\tdefault-for=banana'
expect_exit "registry: default-for=banana: exit 1, file:line" 1 \
	"^marple-config: $T/r:$n: not a registry line: not datatypes .* in default-for" marple-config --registry "$T/r"
bad 'program=marple-x\tkind=collector\tsections=x:stack:fg/../../y'
expect_exit "registry: a section's display with a /: exit 1, file:line" 1 \
	"^marple-config: $T/r:$n: not a registry line: an item not INTERFACE" marple-config --registry "$T/r"
grep -v 'program=marple-memleak	' "$R" > "$T/r"
expect_exit "registry: a collector missing: the registry blamed, exit 1" 1 \
	"^marple-config: $T/r: the registry lacks what the built-in defaults name \(their line [0-9]+\): .*memleak" \
	marple-config --registry "$T/r"
