# inline.sh — inline chains and lines from DWARF (lib/collect/dwarfinline.c)
# against addr2line -f -i on the same addresses, for libc (Debian's
# libc6-dbg debug file, found by build-id, DWARF 5, compressed) and for the
# inline fixture (tests/workloads/inlinechain, -O2 -g):
#  - agreement: the share of addresses where the whole chain (functions,
#    files, lines; addr2line's "(discriminator N)" left out) is the same as
#    GNU addr2line's, as llvm-addr2line's, and as the right answer: GNU's
#    function names (the outermost function of a line without a function
#    DIE is "??" here, the symbol table's name in addr2line and in
#    marple's frames), the callers at GNU's file:line (a DIE's call_file
#    and call_line), the innermost frame at the file and line of the line
#    table's row for the address as binutils' readelf -wL decodes it (file
#    names without directories: a file of one name in two directories,
#    libc_sigaction.c in linux/ and in linux/x86_64/, counts as either).  GNU addr2line 2.40 names another file of
#    a DWARF 5 line table at some addresses, and readelf, llvm and marple
#    do not: at 0x35951 the row says file 1, line 26, file 1 is
#    eval-plural.h (DWARF 5 numbers files from 0, 0 and 2 are
#    dcigettext.c), plural_eval is declared in eval-plural.h at line 24,
#    and addr2line says dcigettext.c:26, a line of that file's licence
#    comment; so GNU's alone agree at 93.8%.  llvm names the outer function
#    by a symbol table alias (strfromf32x for strfromd).  Over the
#    addresses that have a DWARF line (at the others addr2line names the
#    symbol table's function, as the symbolizer does here: no DWARF chain);
#  - lookups/s on one core once the file is open (the same addresses, again
#    and again for INLINE_SECS, default 2), beside addr2line's on them;
#  - the cold cost: the open (the file's compile units indexed), the first
#    lookup (its unit read), the CPU of the open and the first lookup of
#    every address, and the units read; the same for 20 libc functions a
#    capture commonly touches (a capture pays that, not the whole file);
#  - the table's bytes;
#  - the whole cost a sample of a capture with lines against one without
#    (below, at the end).
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
# stat NAME: the number after NAME in inlinelookup's line
stat() { sed -n "s/.* $1 \([0-9.]*\).*/\1/p; s/^$1 \([0-9.]*\).*/\1/p" "$T/stats" | head -n 1; }

# sample FILE: N instruction addresses spread evenly over FILE's code
sample() {
	objdump -d --no-show-raw-insn "$1" |
		awk '/^ *[0-9a-f]+:\t/ { sub(":", "", $1); print $1 }' > "$T/all"
	awk -v n="$N" -v total="$(wc -l < "$T/all")" \
		'BEGIN { step = total > n ? total / n : 1; next_at = 1 }
		 NR >= next_at { print; next_at += step }' "$T/all"
}

# compare A2L LLVM OURS ROWS: "covered agree_gnu agree_llvm agree_right
# gnu_right total": the addresses where addr2line has a line (the rest its
# symbol table names: no DWARF says anything there, and ours is empty), and
# among them the chains the same as GNU addr2line's, as llvm-addr2line's,
# as the right answer (above; ROWS: readelf -wL -W of the DWARF), and GNU's
# own that are right; the first that are not right on stderr
compare() {
	python3 - "$1" "$2" "$3" "$4" "$SHOW" <<'PYEOF'
import bisect, re, sys
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
def rows(path):
    """address -> (file, line) of the last row at it, None at a sequence's end"""
    at = {}
    for l in open(path, errors="replace"):
        f = l.split()
        if len(f) >= 3 and f[2].startswith("0x") and (f[1].isdigit() or f[1] == "-"):
            a = int(f[2], 16)
            if f[1] == "-":
                at.setdefault(a, None)
            else:
                at[a] = (f[0].rsplit("/", 1)[-1], f[1])
    keys = sorted(at)
    return keys, at
gnu, llvm, ours = (chains(p) for p in sys.argv[1:4])
keys, at = rows(sys.argv[4]) if sys.argv[4] != "-" else ([], {})
show = int(sys.argv[5])
def table(addr):
    i = bisect.bisect_right(keys, addr) - 1
    return at[keys[i]] if i >= 0 else None
def right(o, g, addr):
    """o has g's functions, callers at g's file:line, the innermost at the line table's"""
    if len(o) != len(g):
        return False
    row = table(addr) if keys else None
    for i, ((of, ow), (gf, gw)) in enumerate(zip(o, g)):
        if not (of == gf or (of == "??" and i == len(o) - 1)):
            return False
        if i == 0 and row:
            f, _, l = ow.rpartition(":")
            if (f.rsplit("/", 1)[-1], l) != row:
                return False
        elif ow != gw:
            return False
    return True
covered = agnu = allvm = good = gnu_good = 0
for addr, chain in gnu.items():
    o = ours.get(addr, [])
    if o == [("??", "??:0")]:
        o = []
    if chain and (chain[-1][1].endswith(":?") or chain[-1][1].endswith(":0")) and not o:
        continue
    covered += 1
    agnu += o == chain
    allvm += o == llvm.get(addr)
    ok = right(o, chain, addr)
    good += ok
    gnu_good += right(chain, chain, addr)
    if not ok and show > 0:
        show -= 1
        sys.stderr.write("#   0x%x addr2line: %s\n#   %*s      ours: %s\n#   %*s line table: %s\n" %
                         (addr, " <- ".join("%s %s" % f for f in chain), len("%x" % addr), "",
                          " <- ".join("%s %s" % f for f in o or []), len("%x" % addr), "",
                          ":".join(table(addr) or ("-",))))
print(covered, agnu, allvm, good, gnu_good, len(gnu))
PYEOF
}

# bench NAME FILE DWARFFILE: the numbers for FILE (addr2line reads DWARFFILE)
bench() {
	sample "$2" > "$T/addrs"
	t0=$(now)
	addr2line -a -f -i -e "$3" < "$T/addrs" > "$T/a2l"
	t1=$(now)
	llvm-addr2line -a -f -i -e "$3" < "$T/addrs" > "$T/llvm" 2> /dev/null || : > "$T/llvm"
	"$LOOKUP" "$2" "$SECS" < "$T/addrs" > "$T/ours" 2> "$T/stats" ||
		{ echo "bench: inline: $1: inlinelookup failed: $(cat "$T/stats")"; return; }
	readelf -wL -W "$3" > "$T/rows" 2> /dev/null || echo - > "$T/rows"
	read -r covered agnu allvm good gnu_good total <<-EOF
	$(compare "$T/a2l" "$T/llvm" "$T/ours" "$T/rows" 2> "$T/diffs")
	EOF
	awk -v c="$covered" -v g="$agnu" -v l="$allvm" -v e="$good" -v gg="$gnu_good" -v t="$total" -v n="$1" 'BEGIN {
		pc = c ? 100 / c : 0
		printf "bench: inline: %s: right (GNU names and callers, the line table'"'"'s innermost file:line) %.1f%% (floor: 99%%); addr2line -i itself right %.1f%%; agreement with addr2line -i %.1f%%, with llvm-addr2line -i %.1f%% (%d of %d addresses have DWARF lines)\n", n, e * pc, gg * pc, g * pc, l * pc, c, t }'
	head -n $((SHOW * 2)) "$T/diffs"
	awk -v l="$(stat lookups_per_s)" -v t0="$t0" -v t1="$t1" -v c="$total" -v n="$1" \
		'BEGIN { printf "bench: inline: %s: %.0f lookups/s on one core (floor: 1000000); addr2line -i: %.0f/s, start-up included\n", n, l, (t1 - t0 > 0 ? c / (t1 - t0) : 0) }'
	echo "bench: inline: $1: cold, $total addresses: open $(stat open_ms) ms, first lookup $(stat first_ms) ms, CPU $(stat cold_cpu_ms) ms for all ($(stat units) units read of $(sed -n 's/.* units [0-9]* of \([0-9]*\).*/\1/p' "$T/stats"), $(stat build_ms) ms of it reading DWARF); table $(stat table_bytes) bytes (debug sections $(stat dwarf_bytes) bytes)"
}

# cold20 FILE: the cold cost of looking up 20 functions a capture of most
# programs touches
cold20() {
	nm -D --defined-only "$1" | awk '
		BEGIN { n = split("malloc free memcpy memset strlen strcmp printf sprintf fopen fclose read write open close qsort strtol getenv pthread_mutex_lock pthread_create clock_gettime", f); for (i = 1; i <= n; i++) want[f[i]] = 1 }
		{ sub(/@.*/, "", $3) } ($3 in want) && !seen[$3]++ { print $1 }' > "$T/addrs20"
	"$LOOKUP" "$1" 0 < "$T/addrs20" > /dev/null 2> "$T/stats" ||
		{ echo "bench: inline: libc: inlinelookup failed: $(cat "$T/stats")"; return; }
	echo "bench: inline: libc: cold, $(wc -l < "$T/addrs20") functions (malloc, memcpy, printf, ...): open $(stat open_ms) ms, first lookup $(stat first_ms) ms, CPU $(stat cold_cpu_ms) ms for all ($(stat units) units read, $(stat build_ms) ms of it reading DWARF); table $(stat table_bytes) bytes"
}

echo "bench: inline: load average $(cut -d' ' -f1-3 /proc/loadavg), $(getconf _NPROCESSORS_ONLN) CPUs"
LIBC=$(ldd /bin/true | awk '/libc.so/ { print $3 }')
id=$(readelf -n "$LIBC" 2>/dev/null | awk '/Build ID/ { print $3 }')
dbg=/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug
if [ -n "$id" ] && [ -r "$dbg" ]; then
	bench libc "$LIBC" "$dbg"
	cold20 "$LIBC"
else
	echo "bench: inline: libc: skipped (no $dbg: apt-get install libc6-dbg)"
fi
bench inlinechain "$MARPLE_BIN/workloads/inlinechain" "$MARPLE_BIN/workloads/inlinechain"

# The whole cost a sample of a capture with lines (each native frame at its
# address's line, inline frames: what the DWARF and Go tables give) against
# one without (MARPLE_SOURCES=off: neither read), runs interleaved, over the
# same mix of programs (manystacks: malloc from 100 depths; sort -g: libc's
# number parsing; inlinechain: a 4-deep inline chain; libc has its debug
# file): the collector's CPU (user + system) plus its BPF programs' time,
# over the samples, start-up included and after it (the collector's CPU
# when it said it was ready taken off); the records, their bytes and the
# frames described.  INLINE_COST_BASE=DIR: a third capture, with DIR's
# marple-callstack (another build: the same numbers before a change).
COST_SECS=${INLINE_COST_SECS:-4}; RUNS=${INLINE_COST_RUNS:-3}
W="$MARPLE_BIN/workloads"
mix() {
	end=$(($(date +%s) + COST_SECS + 30))
	while [ "$(date +%s)" -lt "$end" ] && [ ! -e "$T/stop" ]; do
		"$W/manystacks" 100 20000; seq 1 200000 | sort -g > /dev/null; "$W/inlinechain" 0.2
	done
}
# capture NAME COLLECTOR [ENV=VALUE]: one capture of the mix; "cost_ns
# cost_after_start-up_ns samples records bytes frames dwarf_read_ns", the
# last a sample's share of the CPU that reading DWARF units took
capture() {
	mix > /dev/null 2>&1 & m=$!
	env ${3:-} python3 "$MARPLE_TOP/tests/bench/cputime.py" "$T/$1.time" \
		"$2" -F 999 -p "$m" --children "$COST_SECS" > "$T/$1.out" 2> "$T/$1.err"
	touch "$T/stop"; wait "$m"; rm -f "$T/stop"
	read -r u s st < "$T/$1.time"
	python3 - "$T/$1.out" "$u" "$s" "$st" <<'PYEOF'
import json, sys
records = size = 0
t = {}
for l in open(sys.argv[1], "rb"):
    if l.startswith(b'{"trailer"'):
        t = json.loads(l)
    elif not l.startswith(b"{"):
        records += 1; size += len(l)
n = t.get("samples", 0); p = t.get("sampling", {}).get("program_ns", 0)
u, s, st = (float(x) for x in sys.argv[2:5])
cost = ((u + s) * 1e9 + p) / n if n else 0
after = ((u + s - st) * 1e9 + p) / n if n else 0
dwarf = t.get("sources", {}).get("build_ns", 0) / n if n else 0
print("%.0f %.0f %d %d %d %d %.0f" % (cost, after, n, records, size, len(t.get("frames", {})), dwarf))
PYEOF
}
# say NAME COST AFTER SAMPLES RECORDS BYTES FRAMES DWARF
say() { printf '%s %s ns a sample, %s after start-up (%s samples, %s records, %s bytes, %s frames described; reading DWARF %s ns of it)' "$@"; }
: > "$T/costs"
r=1
while [ "$r" -le "$RUNS" ]; do
	lines=$(capture lines marple-callstack); off=$(capture off marple-callstack MARPLE_SOURCES=off)
	base=; [ -n "${INLINE_COST_BASE:-}" ] && base=$(capture base "$INLINE_COST_BASE/marple-callstack")
	set -- $lines $off
	echo "bench: inline: cost run $r (load $(cut -d' ' -f1 /proc/loadavg)): $(say "with lines" $lines); $(say "MARPLE_SOURCES=off" $off): $(awk -v a="$1" -v b="$8" -v c="$2" -v d="$9" -v w="$7" 'BEGIN { printf "%.2fx, after start-up %.2fx, less reading DWARF %.2fx", b ? a / b : 0, d ? c / d : 0, b ? (a - w) / b : 0 }')"
	[ -n "$base" ] && echo "bench: inline: cost run $r: $(say "$INLINE_COST_BASE's" $base)"
	echo "bench: inline: cost run $r: with lines, what DWARF and Go tables cost: $(grep -o '"sources":{[^}]*}' "$T/lines.out" | tr -d '"{}' | sed 's/sources://')"
	echo "$1 $8 $2 $9 $7" >> "$T/costs"
	r=$((r + 1))
done
awk '{ x = $2 ? $1 / $2 : 0; if (NR == 1 || x < lo) lo = x; if (NR == 1 || x > hi) hi = x; a += $1; b += $2; c += $3; d += $4; w += $5 }
	END { if (NR) printf "bench: inline: whole cost a sample with lines over without, %d runs interleaved: %.2f-%.2fx, of the sums %.2fx, after start-up %.2fx, less reading DWARF %.2fx (floor: 1.3x)\n", NR, lo, hi, b ? a / b : 0, d ? c / d : 0, b ? (a - w) / b : 0 }' "$T/costs"
