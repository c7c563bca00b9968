# One spelling per meaning: every program's options (its --describe, as the
# registry holds it) agree with the tables of lib/format/options.md, and the
# old spellings are still accepted.
. "$MARPLE_TOP/tests/lib.sh"
plan 6
R="$MARPLE_BIN/marple-registry"
DOC="$MARPLE_TOP/lib/format/options.md"

# the tables: "LETTER LONG" a spelling ("-" for none), "OLD" an old long spelling,
# "LETTER=LONG" a meaning a letter may have
awk -F '|' '
	/^## Spellings/ { t = "s" } /^## Letters/ { t = "l" }
	t == "s" && /^\| `/ {
		s = $2; gsub(/`/, "", s); n = split(s, w, /[ ,]+/); letter = "-"; long = ""
		for (i = 1; i <= n; i++) if (w[i] ~ /^--/) long = w[i]; else if (w[i] ~ /^-.$/) letter = w[i]
		print "S", letter, long
		o = $6; while (match(o, /`--[a-z-]+`/)) { print "O", substr(o, RSTART + 1, RLENGTH - 2); o = substr(o, RSTART + RLENGTH) }
	}
	t == "l" && /^\| `/ { l = $2; gsub(/[` ]/, "", l); m = $3; gsub(/[` ]/, "", m); n = split(m, w, ","); for (i = 1; i <= n; i++) print "L", l, w[i] }
' "$DOC" > "$T/table"

# every program's listed options: "PROGRAM LETTER LONG" ("-" for none)
awk -F '\t' '{ p = substr($1, 9); for (i = 2; i <= NF; i++) if (index($i, "options=") == 1) {
	n = split(substr($i, 9), w, " ")
	for (j = 1; j <= n; j++) {
		o = w[j]; sub(/=.*/, "", o)
		if (o ~ /^~/) { print p, "~", substr(o, 2); continue }
		letter = "-"; long = "-"
		if (o ~ /^-.\|/) { letter = substr(o, 1, 2); long = substr(o, 4) } else if (o ~ /^--/) long = o; else letter = o
		print p, letter, long
	} } }' "$R" > "$T/opts"

check "spellings: the tables are read (27 spellings, 3 old long ones, 5 letters; $(wc -l < "$T/opts") options)" \
	test "$(grep -c '^S' "$T/table") $(grep -c '^O' "$T/table") $(grep '^L' "$T/table" | cut -d' ' -f2 | sort -u | wc -l) $(test "$(wc -l < "$T/opts")" -gt 200 && echo many)" = "27 3 5 many"

# a spelling of the table: the table's letter, or none where the program's own
# option has that letter
awk 'NR == FNR { if ($1 == "S") want[$3] = $2; next }
	$2 != "~" { has[$1 " " $2] = $3; opt[++n] = $0 }
	END { for (i = 1; i <= n; i++) { split(opt[i], f, " ")
		if (!(f[3] in want) || want[f[3]] == f[2]) continue
		if (f[2] == "-" && (f[1] " " want[f[3]]) in has) continue
		print f[1] ": " (f[2] == "-" ? "" : f[2] ", ") f[3] " (the table: " want[f[3]] ", " f[3] ")" } }' "$T/table" "$T/opts" > "$T/bad1"
check "spellings: every option of the table has the table's letter:$(tr '\n' ';' < "$T/bad1")" test ! -s "$T/bad1"
awk 'NR == FNR { if ($1 == "O") old[$2] = 1; next } $2 != "~" && ($3 in old) { print $1 ": " $3 }' "$T/table" "$T/opts" > "$T/bad2"
check "spellings: no program lists an old spelling:$(tr '\n' ';' < "$T/bad2")" test ! -s "$T/bad2"
awk 'NR == FNR { if ($1 == "L") { means[$2] = 1; ok[$2 " " $3] = 1 } next }
	$2 in means && !(($2 " " $3) in ok) { print $1 ": " $2 ", " $3 }' "$T/table" "$T/opts" > "$T/bad3"
check "spellings: -d, -t, -T, -n and -a mean only what the table says:$(tr '\n' ';' < "$T/bad3")" test ! -s "$T/bad3"

# the old spellings still work (options are read in order: -h then ends it)
bad=
for c in "marple-diskblockrq --device sda --annotate --delimit" "marple-memevents --annotate --delimit" \
	"marple-memleak -t 5 --annotate" "marple-cpel -t pid -d comm" "marple-fold -d" "marple-treemap -d 3" \
	"marple-stackplot -n 3" "marple-eventplot -t x" "marple-report -t x" "marple-push -t 2 -n app"; do
	# shellcheck disable=SC2086
	$c -h > /dev/null 2>&1 || bad="$bad [$c]"
done
check "spellings: the old spellings are still accepted:$bad" test -z "$bad"
printf '{"marple":1,"interface":"memtime","datatype":"point"}\n0,5,a\n0,3,b\n0,1,c\n' > "$T/p"
check "spellings: stackplot -n 2 is --top 2 (two bands and other)" sh -c "marple-stackplot -n 2 '$T/p' > '$T/n.svg' && marple-stackplot --top 2 '$T/p' | cmp -s - '$T/n.svg'"
