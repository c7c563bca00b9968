# inline.sh — inline chains and lines from DWARF (lib/collect/dwarfinline.c)
# against addr2line -f -i on the same addresses, for libc (Debian's
# libc6-dbg debug file, found by build-id, DWARF 5, compressed) and for the
# inline fixture (tests/workloads/inlinechain, -O2 -g):
#  - agreement: the share of addresses where the whole chain (functions,
#    files, lines; addr2line's "(discriminator N)" left out) is the same;
#  - lookups/s on one core once the file is open (the same addresses, again
#    and again for INLINE_SECS, default 2), beside addr2line's on them;
#  - the open (table build) time and the table's bytes.
# The addresses: every instruction's, sampled evenly to INLINE_ADDRS
# (default 1000); INLINE_SHOW=N prints the first N that differ.
set -u
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
N=${INLINE_ADDRS:-1000}
SECS=${INLINE_SECS:-2}
SHOW=${INLINE_SHOW:-5}
LOOKUP="$MARPLE_BIN/bench/inlinelookup"
command -v addr2line > /dev/null && command -v objdump > /dev/null ||
	{ echo "bench: inline: skipped (needs addr2line and objdump, binutils)"; exit 0; }

now() { date +%s.%N; }

# sample FILE: N instruction addresses spread evenly over FILE's code
sample() {
	objdump -d --no-show-raw-insn "$1" |
		awk '/^ *[0-9a-f]+:\t/ { sub(":", "", $1); print $1 }' > "$T/all"
	awk -v n="$N" -v total="$(wc -l < "$T/all")" \
		'BEGIN { step = total > n ? total / n : 1; next_at = 1 }
		 NR >= next_at { print; next_at += step }' "$T/all"
}

# compare A2L OURS: "agree total" over the addresses, differences on stderr
compare() {
	python3 - "$1" "$2" "$SHOW" <<'PYEOF'
import re, sys
def chains(path):
    out, cur = {}, None
    lines = open(path, errors="replace").read().split("\n")
    i = 0
    while i < len(lines):
        l = lines[i]
        if l.startswith("0x"):
            cur = int(l, 16); out[cur] = []; i += 1; continue
        if cur is not None and i + 1 < len(lines):
            where = re.sub(r" \(discriminator \d+\)$", "", lines[i + 1])
            out[cur].append((l, where)); i += 2; continue
        i += 1
    return out
a, o, show = chains(sys.argv[1]), chains(sys.argv[2]), int(sys.argv[3])
agree = 0
for addr, chain in a.items():
    if o.get(addr) == chain:
        agree += 1
    elif show > 0:
        show -= 1
        sys.stderr.write("#   0x%x addr2line: %s\n#   %*s      ours: %s\n" %
                         (addr, " <- ".join("%s %s" % f for f in chain), len("%x" % addr), "",
                          " <- ".join("%s %s" % f for f in o.get(addr, []))))
print(agree, len(a))
PYEOF
}

# bench NAME FILE DWARFFILE: the numbers for FILE (addr2line reads DWARFFILE)
bench() {
	sample "$2" > "$T/addrs"
	t0=$(now)
	addr2line -a -f -i -e "$3" < "$T/addrs" > "$T/a2l"
	t1=$(now)
	"$LOOKUP" "$2" "$SECS" < "$T/addrs" > "$T/ours" 2> "$T/stats" ||
		{ echo "bench: inline: $1: inlinelookup failed: $(cat "$T/stats")"; return; }
	read -r agree total <<-EOF
	$(compare "$T/a2l" "$T/ours" 2> "$T/diffs")
	EOF
	stat() { sed -n "s/.* $1 \([0-9.]*\).*/\1/p; s/^$1 \([0-9.]*\).*/\1/p" "$T/stats" | head -n 1; }
	awk -v a="$agree" -v t="$total" -v n="$1" \
		'BEGIN { printf "bench: inline: %s: agreement with addr2line -i %.1f%% (%d of %d addresses; floor: 99%%)\n", n, t ? 100 * a / t : 0, a, t }'
	head -n $((SHOW * 2)) "$T/diffs"
	awk -v l="$(stat lookups_per_s)" -v t0="$t0" -v t1="$t1" -v c="$total" -v n="$1" \
		'BEGIN { printf "bench: inline: %s: %.0f lookups/s on one core (floor: 1000000); addr2line -i: %.0f/s, start-up included\n", n, l, (t1 - t0 > 0 ? c / (t1 - t0) : 0) }'
	echo "bench: inline: $1: open and table build $(stat open_ms) ms, table $(stat table_bytes) bytes (debug sections $(stat dwarf_bytes) bytes)"
}

echo "bench: inline: load average $(cut -d' ' -f1-3 /proc/loadavg), $(getconf _NPROCESSORS_ONLN) CPUs"
LIBC=$(ldd /bin/true | awk '/libc.so/ { print $3 }')
id=$(readelf -n "$LIBC" 2>/dev/null | awk '/Build ID/ { print $3 }')
dbg=/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug
if [ -n "$id" ] && [ -r "$dbg" ]; then
	bench libc "$LIBC" "$dbg"
else
	echo "bench: inline: libc: skipped (no $dbg: apt-get install libc6-dbg)"
fi
bench inlinechain "$MARPLE_BIN/workloads/inlinechain" "$MARPLE_BIN/workloads/inlinechain"
