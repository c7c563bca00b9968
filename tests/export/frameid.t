# Frames described by identity (marple-format(5), Frame identity), from a
# hand-written stream (no BPF): two programs' spin() and main(), the second
# program's written name#tag, keep their own file, build id and offset in
# go tool pprof -raw and speedscope, while every program prints the names as
# before (fold, flamegraph, report), a stream without tags reads as it did,
# and two sections' tagged frames of one code become one.
. "$MARPLE_TOP/tests/lib.sh"
plan 12
section() {	# HOST: proga's code plain, progb's tagged (its first frames of a name)
	echo '{"marple":1,"interface":"callstack","datatype":"stack","start_ns":1000,"wall_ns":1795262400000000000,"host":"'"$1"'","units":{"weight":"samples"},"options":{"frequency":99}}'
	echo '100#proga;_start;main;spin'
	echo '249#progb;_start#1f2e3d4c;main#0000b0b0;spin#0000b0b1'
	echo '7#progb;_start#1f2e3d4c;main#0000b0b0;do%23it'
	echo '{"trailer":1,"records":3,"frames":{"_start":{"kind":"native","file":"/opt/proga","offset":4192},"main":{"kind":"native","file":"/opt/proga","offset":4476},"spin":{"kind":"native","file":"/opt/proga","offset":4425},"_start#1f2e3d4c":{"kind":"native","file":"/opt/progb","offset":4192},"main#0000b0b0":{"kind":"native","file":"/opt/progb","offset":4518},"spin#0000b0b1":{"kind":"native","file":"/opt/progb","offset":4466},"do%23it":{"kind":"native","file":"/opt/progb","offset":4500}},"build_ids":{"/opt/proga":"aaaa0001","/opt/progb":"bbbb0002"}}'
}
section db1 > "$T/two.marple"
# the same as a writer before tags wrote it: names only, the first code of each described
{
	sed -n 1p "$T/two.marple"
	sed -n '2,4{s/#[0-9a-f]\{8\}\(;\|$\)/\1/g;p}' "$T/two.marple"
	echo '{"trailer":1,"records":3,"frames":{"_start":{"kind":"native","file":"/opt/proga","offset":4192},"main":{"kind":"native","file":"/opt/proga","offset":4476},"spin":{"kind":"native","file":"/opt/proga","offset":4425},"do%23it":{"kind":"native","file":"/opt/progb","offset":4500}},"build_ids":{"/opt/proga":"aaaa0001","/opt/progb":"bbbb0002"}}'
} > "$T/untagged.marple"

marple-fold "$T/two.marple" > "$T/two.folded"
marple-fold "$T/untagged.marple" > "$T/untagged.folded"
same "frameid: folded output prints the names as before (the same as without tags)" "$T/untagged.folded" "$T/two.folded"
check "frameid: marple-cat validates a tagged stream" sh -c "marple-cat '$T/two.marple' > /dev/null"
check "frameid: a '#' of a name (%23) stays the name's" grep -q '^progb;_start;main;do#it 7$' "$T/two.folded"

if command -v go >/dev/null 2>&1; then
	marple-pprof "$T/two.marple" > "$T/two.pb.gz"
	go tool pprof -raw "$T/two.pb.gz" > "$T/two.raw" 2> "$T/pprof.err"
	# Locations: "N: 0xADDR M=MAP NAME ..."; Mappings: "MAP: 0x0/0xLIMIT/0x0 FILE BUILDID"
	loc() { awk -v a="$1" -v n="$2" '/^Locations/ { l = 1; next } /^Mappings/ { l = 0 } l && $2 == a && $4 == n { sub("M=", "", $3); print $3 }' "$T/two.raw"; }
	map() { awk -v m="$1" '/^Mappings/ { l = 1; next } l && $1 == m ":" { print $3, $4 }' "$T/two.raw"; }
	check "frameid: pprof -raw: proga's spin at 0x1149 in /opt/proga aaaa0001" test "$(map "$(loc 0x1149 spin)")" = "/opt/proga aaaa0001"
	check "frameid: pprof -raw: progb's spin at 0x1172 in /opt/progb bbbb0002" test "$(map "$(loc 0x1172 spin)")" = "/opt/progb bbbb0002"
	check "frameid: pprof -raw: progb's 249 samples end at its own spin" \
		grep -Eq "^ +249 +[0-9]+: $(awk '/^Locations/ { l = 1; next } /^Mappings/ { l = 0 } l && $2 == "0x1172" { print $1 }' "$T/two.raw" | tr -d :) " "$T/two.raw"
	check "frameid: pprof -raw: no name holds a tag" sh -c "! grep -q '#[0-9a-f]\{8\}' '$T/two.raw'"
else
	for c in "proga's spin" "progb's spin" "progb's samples" "no tag"; do skip "frameid: pprof -raw: $c" "no go"; done
fi

marple-speedscope "$T/two.marple" > "$T/two.json"
check "frameid: speedscope: spin twice, main twice, each with its own file, names without tags" python3 -c '
import json, sys
F = json.load(open(sys.argv[1]))["shared"]["frames"]
got = sorted((f["name"], f.get("file")) for f in F if f["name"] in ("spin", "main"))
sys.exit(0 if got == [("main", "/opt/proga"), ("main", "/opt/progb"), ("spin", "/opt/proga"), ("spin", "/opt/progb")] else 1)' "$T/two.json"

marple-flamegraph "$T/two.marple" > "$T/two.svg" 2>/dev/null
check "frameid: flamegraph names the frames without tags" sh -c "grep -q '>spin<\|spin (' '$T/two.svg' && ! grep -q '0000b0b1' '$T/two.svg'"
check "frameid: marple-report reads the tagged capture whole (3 records)" \
	test "$(marple-report --list "$T/two.marple" 2>/dev/null | cut -f4)" = 3

# two sections (two hosts) of the same code: one location per code, not per section
section db2 | cat "$T/two.marple" - > "$T/fleet.marple"
if command -v go >/dev/null 2>&1; then
	marple-pprof "$T/fleet.marple" > "$T/fleet.pb.gz" && go tool pprof -raw "$T/fleet.pb.gz" > "$T/fleet.raw" 2>/dev/null
	check "frameid: two sections' tagged spin is one location" \
		test "$(awk '/^Locations/ { l = 1; next } /^Mappings/ { l = 0 } l && $4 == "spin"' "$T/fleet.raw" | wc -l)" -eq 2
else
	skip "frameid: two sections" "no go"
fi
# a stream written before tags: its names, described by the trailer, as before
marple-speedscope "$T/untagged.marple" > "$T/untagged.json"
check "frameid: an untagged stream reads as before (spin once, proga's)" python3 -c '
import json, sys
F = json.load(open(sys.argv[1]))["shared"]["frames"]
sys.exit(0 if [(f["name"], f.get("file")) for f in F if f["name"] == "spin"] == [("spin", "/opt/proga")] else 1)' "$T/untagged.json"
