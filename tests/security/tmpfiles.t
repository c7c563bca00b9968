# Temporary files: created with mkstemp/mkdtemp/O_TMPFILE or mktemp(1) with
# a XXXXXX template, never at a guessable path.  A static check of the tree:
# no tmpnam/tempnam/mktemp(3), no fixed /tmp path opened for writing in C,
# no fixed /tmp or $TMPDIR path in the shell scripts.  (/tmp/perf-PID.map is
# perf's JIT-map convention and is only read; see test_perfmap_trust.)
. "$MARPLE_TOP/tests/lib.sh"
plan 5
cd "$MARPLE_TOP" || exit 1
csrc=$(ls lib/*/*.c lib/*/*.h collectors/*.c filters/*.c renderers/*.c tests/workloads/*.c 2>/dev/null)
shsrc=$(ls scripts/marple scripts/marple-* 2>/dev/null | grep -v '\.[0-9]$')

hits=$(grep -nE '\b(tmpnam|tempnam|mktemp)[[:space:]]*\(' $csrc | grep -v '^\S*:[0-9]*:\s*(/?\*|//)')
if [ -z "$hits" ]; then pass "C: no tmpnam, tempnam or mktemp(3)"; else fail "C: tmpnam/tempnam/mktemp(3)" "$(echo "$hits" | head -n 3 | tr '\n' ' ')"; fi

hits=$(grep -nE '"/(var/)?tmp/[^"]*"' $csrc | grep -vE 'XXXXXX|/tmp/perf-(%d|\\d)|"/tmp/perf-"|^\S*:[0-9]*:\s*(/?\*|//)')
if [ -z "$hits" ]; then pass "C: no fixed /tmp path"; else fail "C: fixed /tmp path" "$(echo "$hits" | head -n 3 | tr '\n' ' ')"; fi

hits=$(grep -nE 'mkstemp|mkdtemp|O_TMPFILE' $csrc | grep -c .)
pass "C: $hits mkstemp/mkdtemp/O_TMPFILE call sites"

# Shell: every mktemp has a template with XXXXXX; no fixed /tmp file.
hits=$(grep -nE '\bmktemp\b' $shsrc | grep -v 'XXXXXX')
if [ -z "$hits" ]; then pass "sh: mktemp always with a XXXXXX template"; else fail "sh: mktemp without template" "$(echo "$hits" | head -n 3 | tr '\n' ' ')"; fi
hits=$(grep -nE '(>|<|\b(cat|rm|cp|mv|touch|mkdir|tee)\b)[^#]*(/tmp/|\$\{?TMPDIR)' $shsrc | grep -v 'mktemp')
if [ -z "$hits" ]; then pass "sh: no fixed /tmp path"; else fail "sh: fixed /tmp path" "$(echo "$hits" | head -n 3 | tr '\n' ' ')"; fi
