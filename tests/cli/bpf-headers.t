# The BPF headers read alone: each bpf/*.bpf.h compiles as the only marple
# header of a program (no circle, no header that needs another included
# first), and events.bpf.h's maps and helpers carry its prefix (a stack
# collector's "counts" is its own).
. "$MARPLE_TOP/tests/lib.sh"
n=0; for h in "$MARPLE_TOP"/bpf/*.bpf.h; do n=$((n + 1)); done
plan $((n + 1))
arch=$(uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
for h in "$MARPLE_TOP"/bpf/*.bpf.h; do
	b=$(basename "$h")
	printf '#include "vmlinux.h"\n#include <bpf/bpf_helpers.h>\n#include <bpf/bpf_tracing.h>\n#include <bpf/bpf_core_read.h>\n#include "%s"\nchar LICENSE[] SEC("license") = "GPL";\n' "$b" > "$T/alone.bpf.c"
	check "bpf headers: $b compiles alone" clang -target bpf -g -O2 -D__TARGET_ARCH_$arch -I"$MARPLE_BIN" -I"$MARPLE_TOP/bpf" -c "$T/alone.bpf.c" -o "$T/alone.o"
done
check "bpf headers: events.bpf.h defines no unprefixed count, counts or events" \
	sh -c "! grep -Eq '^\} (count|counts|events) SEC|void count\(' '$MARPLE_TOP/bpf/events.bpf.h'"
