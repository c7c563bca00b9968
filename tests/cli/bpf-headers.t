# The BPF headers read alone: each bpf/*.bpf.h compiles as the only marple
# header of a program (no header that needs another included first), the
# includes of bpf/ and lib/ form no circle (scripts/include-cycles reads the
# include graph itself, and is shown to find a circle planted in a copy),
# and events.bpf.h's maps and helpers carry its prefix (a stack collector's
# "counts" is its own).
. "$MARPLE_TOP/tests/lib.sh"
n=0; for h in "$MARPLE_TOP"/bpf/*.bpf.h; do n=$((n + 1)); done
plan $((n + 4))
arch=$(uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
for h in "$MARPLE_TOP"/bpf/*.bpf.h; do
	b=$(basename "$h")
	printf '#include "vmlinux.h"\n#include <bpf/bpf_helpers.h>\n#include <bpf/bpf_tracing.h>\n#include <bpf/bpf_core_read.h>\n#include "%s"\nchar LICENSE[] SEC("license") = "GPL";\n' "$b" > "$T/alone.bpf.c"
	check "bpf headers: $b compiles alone" clang -target bpf -g -O2 -D__TARGET_ARCH_$arch -I"$MARPLE_BIN" -I"$MARPLE_TOP/bpf" -c "$T/alone.bpf.c" -o "$T/alone.o"
done
check "bpf headers: events.bpf.h defines no unprefixed count, counts or events" \
	sh -c "! grep -Eq '^\} (count|counts|events) SEC|void count\(' '$MARPLE_TOP/bpf/events.bpf.h'"

cycles="$MARPLE_TOP/scripts/include-cycles"
check "include graph: no cycle in bpf/ and lib/" "$cycles" "$MARPLE_TOP/bpf" "$MARPLE_TOP/lib"
# a copy of bpf/ where stackstore.bpf.h includes stacks.bpf.h back, as
# python.bpf.h once did: the checker must name that circle (every circle
# the planted line makes has its edge) and fail
mkdir -p "$T/planted"
cp "$MARPLE_TOP"/bpf/*.h "$T/planted/"
printf '#include "stacks.bpf.h"\n' >> "$T/planted/stackstore.bpf.h"
expect_exit "include graph: a planted cycle is found and named" 1 \
	'^include-cycles: .*stackstore\.bpf\.h -> stacks\.bpf\.h' sh -c '"$1" "$2" >&2' sh "$cycles" "$T/planted"
# a self-include is a circle too; a DAG with a shared header (a diamond) is not
mkdir -p "$T/self" "$T/diamond"
printf '#include "a.h"\n' > "$T/self/a.h"
printf '#include "b.h"\n#include "c.h"\n' > "$T/diamond/a.h"
printf '#include "d.h"\n' > "$T/diamond/b.h"; printf '#include "d.h"\n' > "$T/diamond/c.h"; : > "$T/diamond/d.h"
if "$cycles" "$T/diamond" >/dev/null 2>&1 && ! "$cycles" "$T/self" >/dev/null 2>&1; then
	pass "include graph: a diamond is no cycle, a self-include is"
else
	fail "include graph: a diamond is no cycle, a self-include is" "diamond or self-include misjudged"
fi
