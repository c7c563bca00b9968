# Two programs that both have spin() (proga, progb: one source, built apart,
# so two files with two build ids and spin at two offsets), captured together
# by marple-callstack: each one's samples stay under its own file, build id
# and mapping in the stream, in go tool pprof -raw, in speedscope's JSON and
# in marple-push's OTLP, while the names print as before (root, real BPF).
. "$MARPLE_TOP/tests/lib.sh"
plan 9
if ! is_root; then
	skip_rest "samename: BPF cases" "not root"
fi
command -v cc >/dev/null 2>&1 || skip_rest "samename" "no cc"
cat > "$T/same.c" <<'EOF'
#include <stdlib.h>
#include <unistd.h>
static volatile unsigned long sink;
#if VARIANT == 2
__attribute__((noinline)) void pad(unsigned long n) { for (unsigned long i = 0; i < n; i++) sink += i * 3; }
#endif
__attribute__((noinline)) void spin(void)
{
	for (unsigned long i = 0; i < 4000000; i++)
		sink = sink * 6364136223846793005ull + i + VARIANT;
}
int main(int argc, char **argv)
{
	alarm((unsigned)(argc > 1 ? atoi(argv[1]) : 5));
	for (;;)
		spin();
}
EOF
cc -O1 -g -fno-omit-frame-pointer -DVARIANT=1 -o "$T/proga" "$T/same.c" &&
	cc -O1 -g -fno-omit-frame-pointer -DVARIANT=2 -o "$T/progb" "$T/same.c" ||
	skip_rest "samename" "cc could not build the workloads"
bid() { readelf -n "$1" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p' | head -n 1; }
BA=$(bid "$T/proga") BB=$(bid "$T/progb")
OA=$(nm "$T/proga" | sed -n 's/^0*\([0-9a-f]*\) T spin$/\1/p') OB=$(nm "$T/progb" | sed -n 's/^0*\([0-9a-f]*\) T spin$/\1/p')
[ -n "$BA" ] && [ -n "$BB" ] && [ "$BA" != "$BB" ] && [ -n "$OA" ] && [ "$OA" != "$OB" ] ||
	skip_rest "samename" "the two builds do not differ (build ids $BA $BB, spin at $OA $OB)"

"$T/proga" 6 & pa=$!
"$T/progb" 6 & pb=$!
sleep 0.3
marple-callstack -F 199 2 > "$T/cap.marple" 2> "$T/cap.err"
kill "$pa" "$pb" 2>/dev/null; wait "$pa" "$pb" 2>/dev/null

# the stream: each program's spin frame (as written, tag and all) is
# described by the trailer with its program's file, build id and offset
PYSTREAM='import json, sys
recs, tr = [], None
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if line.startswith("{"):
        tr = json.loads(line) if "trailer" in line else tr
    elif line:
        w, _, st = line.partition("#")
        recs.append((int(w), st.split(";")))
frames, ids = tr.get("frames", {}), tr.get("build_ids", {})
for prog, bid, off in (("proga", sys.argv[2], sys.argv[4]), ("progb", sys.argv[3], sys.argv[5])):
    w = sum(wt for wt, st in recs if st[0] == prog and st[-1].split("#")[0] == "spin" and
            frames.get(st[-1], {}).get("file", "").endswith("/" + prog) and
            ids.get(frames[st[-1]]["file"]) == bid and frames[st[-1]].get("offset") == int(off, 16))
    other = sum(wt for wt, st in recs if st[0] == prog and st[-1].split("#")[0] == "spin") - w
    print(prog, w, other)'
python3 -c "$PYSTREAM" "$T/cap.marple" "$BA" "$BB" "$OA" "$OB" > "$T/stream.txt" 2>&1
plausible() {	# FILE: each program's spin samples under its own file: some (a loaded
	# machine gives each busy program ~100 of 2 s at 199 Hz, or much less), none elsewhere
	awk '$2 >= 5 && $3 == 0 { n++ } END { exit n == 2 ? 0 : 1 }' "$1"
}
check "samename: the stream describes each spin with its own file, build id and offset ($(tr '\n' ' ' < "$T/stream.txt"))" \
	plausible "$T/stream.txt"
marple-fold "$T/cap.marple" 2>/dev/null | grep '^prog[ab];' > "$T/fold.txt"
check "samename: marple-fold prints the names as before (no tag)" \
	sh -c "grep -q '^proga;.*;main;spin [0-9]*\$' '$T/fold.txt' && grep -q '^progb;.*;main;spin [0-9]*\$' '$T/fold.txt' && ! grep -q '#' '$T/fold.txt'"

# go tool pprof -raw: the samples ending in spin, by the location's address and
# its mapping's file and build id: "PROG RIGHT WRONG" per program
cat > "$T/pprofsum.py" <<'EOF'
import re, sys
raw = open(sys.argv[1]).read()
maps = {m.group(1): (m.group(2), m.group(3)) for m in
        re.finditer(r'^\s*(\d+): 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ (\S+) ([0-9a-f]*)', raw.split('Mappings')[-1], re.M)}
locs = {}
for m in re.finditer(r'^\s*(\d+): 0x([0-9a-f]+) M=(\d+) (\S+) ', raw.split('Locations')[1].split('Mappings')[0], re.M):
    locs[m.group(1)] = (int(m.group(2), 16), maps.get(m.group(3), ('', '')), m.group(4))
sums = {}
for m in re.finditer(r'^\s+(\d+)\s+\d+: ([\d ]+)$', raw.split('Samples:')[1].split('Locations')[0], re.M):
    leaf = locs.get(m.group(2).split()[0])
    if leaf and leaf[2] == 'spin':
        sums[(leaf[0], leaf[1])] = sums.get((leaf[0], leaf[1]), 0) + int(m.group(1))
for prog, bid, off in (('proga', sys.argv[2], sys.argv[4]), ('progb', sys.argv[3], sys.argv[5])):
    w = sum(v for (a, (f, b)), v in sums.items() if f.endswith('/' + prog) and b == bid and a == int(off, 16))
    print(prog, w, sum(v for (a, (f, b)), v in sums.items() if f.endswith('/' + prog)) - w)
EOF
pprof_sums() {	# FILE.pb.gz
	go tool pprof -raw "$1" > "$T/raw.txt" 2>/dev/null
	python3 "$T/pprofsum.py" "$T/raw.txt" "$BA" "$BB" "$OA" "$OB"
}
if command -v go >/dev/null 2>&1; then
	marple-pprof "$T/cap.marple" > "$T/cap.pb.gz" 2>/dev/null
	pprof_sums "$T/cap.pb.gz" > "$T/pprof.txt"
	check "samename: pprof -raw has each spin at its own file, build id and address ($(tr '\n' ' ' < "$T/pprof.txt"))" \
		plausible "$T/pprof.txt"
else
	skip "samename: pprof -raw" "no go (scripts/install-deps installs golang-go)"
fi

# speedscope: frames named spin, each with its own program's file (spin's
# two source lines are two frames of one file, issue 37: speedscope merges
# frames of one name, file and line)
marple-speedscope "$T/cap.marple" > "$T/cap.json" 2>/dev/null
check "samename: speedscope has a spin frame of each program's file (other processes may have theirs)" python3 -c '
import json, sys
F = json.load(open(sys.argv[1]))["shared"]["frames"]
files = [f.get("file") for f in F if f["name"] == "spin"]
print(files)
sys.exit(0 if files.count(sys.argv[2] + "/proga") >= 1 and files.count(sys.argv[2] + "/progb") >= 1 else 1)' "$T/cap.json" "$T"
check "samename: speedscope's samples of each program end in its own spin" python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); F = d["shared"]["frames"]; p = d["profiles"][0]
ok = 0
for prog in ("proga", "progb"):
    w = sum(wt for s, wt in zip(p["samples"], p["weights"]) if F[s[0]]["name"] == prog and F[s[-1]]["name"] == "spin" and F[s[-1]].get("file", "").endswith("/" + prog))
    bad = sum(wt for s, wt in zip(p["samples"], p["weights"]) if F[s[0]]["name"] == prog and F[s[-1]]["name"] == "spin" and not F[s[-1]].get("file", "").endswith("/" + prog))
    ok += w >= 5 and bad == 0
sys.exit(0 if ok == 2 else 1)' "$T/cap.json"

# continuous mode: proga alone for 2 s once the collector traces, then progb
# alone: in every section a name without tag is the run's first code of it
# (the last sections' spin, progb's, is tagged though proga's is not there),
# so marple-pprof, merging the sections, still puts each spin in its own file
MARPLE_READY_FILE="$T/ready" marple-callstack -F 199 --every 1s 6 > "$T/every.marple" 2> "$T/every.err" & mc=$!
wait_ready "$T/ready" 60 "$mc"
"$T/proga" 2
sleep 0.5
"$T/progb" 2
wait "$mc"
if command -v go >/dev/null 2>&1; then
	marple-pprof "$T/every.marple" > "$T/every.pb.gz" 2>/dev/null
	pprof_sums "$T/every.pb.gz" > "$T/every.txt"
	check "samename: --every sections merged by pprof: each spin in its own file ($(tr '\n' ' ' < "$T/every.txt"); $(grep -c '"trailer"' "$T/every.marple") sections)" \
		plausible "$T/every.txt"
else
	skip "samename: --every sections merged by pprof" "no go"
fi

# OTLP to a loopback receiver, decoded by protoc against the pinned protos
if ! command -v protoc >/dev/null 2>&1; then
	skip_rest "samename: otlp" "no protoc (scripts/install-deps installs protobuf-compiler)"
fi
HERE="$MARPLE_TOP/tests/push"
R="$T/recv"
mkdir -p "$R"
python3 "$HERE/receiver.py" "$R" & RPID=$!
trap 'kill "$RPID" 2>/dev/null; rm -rf "$T"' EXIT
i=0; while [ ! -s "$R/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
timeout 120 marple-push -f otlp "http://127.0.0.1:$(cat "$R/port")" "$T/cap.marple" > /dev/null 2> "$T/push.err"
check "samename: marple-push -f otlp sends the capture" test -s "$R/1.body"
protoc -I"$HERE/proto" --decode=opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest \
	opentelemetry/proto/collector/profiles/v1development/profiles_service.proto < "$R/1.body" 2> "$T/protoc.err" |
	python3 "$HERE/otlp-fold.py" --files > "$T/otlp.txt"
check "samename: otlp decodes, no table without its zero entry" sh -c "grep -q '^stack ' '$T/otlp.txt' && ! grep -q bad-zero '$T/otlp.txt'"
for p in proga progb; do
	if [ $p = proga ]; then b=$BA o=$OA; else b=$BB o=$OB; fi
	w=$(awk -v p="$p" -v want="spin@$T/$p@$b@$((0x$o))" '$1 == "stack" { n = split($2, f, ";"); split(f[1], r, "@") }
		$1 == "stack" && r[1] == p && f[n] ~ /^spin@/ { if (f[n] == want) w += $3; else bad += $3 }
		END { print w + 0, bad + 0 }' "$T/otlp.txt")
	echo "$p $w"
done > "$T/otlpw.txt"
check "samename: otlp has each spin at its own mapping, build id and address ($(tr '\n' ' ' < "$T/otlpw.txt"))" \
	plausible "$T/otlpw.txt"
