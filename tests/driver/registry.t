# The registry: every program says what it is (--describe), make collects
# the answers into marple-registry, and the driver takes its interfaces and
# displays from there.  Every list that names programs agrees with it (the
# README's table, the man pages, marple list, marple collect -h); and a new
# collector and a new renderer, added to a copy of the tree as their own files
# and nothing else, are collected and drawn by the driver.
. "$MARPLE_TOP/tests/lib.sh"
plan 16
R="$MARPLE_BIN/marple-registry"
unset MARPLE_LIBEXEC MARPLE_CONFIG DISPLAY WAYLAND_DISPLAY
export XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config"

# the programs built here: every marple-* but the driver, the registry itself
ls "$MARPLE_BIN" | grep '^marple-' | grep -v '^marple-registry$' | LC_ALL=C sort > "$T/built"
cut -f1 "$R" | sed 's/^program=//' | LC_ALL=C sort > "$T/registered"
same "registry: one line for every program built" "$T/built" "$T/registered"
bad=
while read -r p; do
	l=$("$MARPLE_BIN/$p" --describe 2>&1) || { bad="$bad $p(exit $?)"; continue; }
	case $l in "program=$p	kind="*) ;; *) bad="$bad $p" ;; esac
	grep -qxF -- "$l" "$R" || bad="$bad $p(not as in the registry)"
done < "$T/built"
check "registry: each program's --describe names it and its kind, as the registry has it:$bad" test -z "$bad"
field() { awk -F '\t' -v f="$1" '{ for (i = 2; i <= NF; i++) if (index($i, f "=") == 1) print substr($i, length(f) + 2) }' "$R"; }
# every display a collector declares exists; each datatype has one default
field display | tr ',' '\n' | LC_ALL=C sort > "$T/names"
field sections | tr ',' '\n' | cut -d: -f3 | LC_ALL=C sort -u > "$T/wanted"
check "registry: every display a collector's sections want is a renderer's ($(comm -23 "$T/wanted" "$T/names" | tr '\n' ' '))" \
	test -z "$(comm -23 "$T/wanted" "$T/names")"
check "registry: no two renderers answer to the same display name" test -z "$(uniq -d "$T/names")"
check "registry: stack, event and point each have one default display" \
	test "$(field default-for | LC_ALL=C sort | tr '\n' ' ')" = "event point stack "

# --- the lists people read agree with the programs
while read -r p; do
	grep -q "^| \`$p\` |" "$MARPLE_TOP/README.md" || echo "$p" 
done < "$T/built" > "$T/notinreadme"
check "registry: README's table has a row for every program ($(tr '\n' ' ' < "$T/notinreadme"))" test ! -s "$T/notinreadme"
grep -o '^| `marple-[a-z-]*`' "$MARPLE_TOP/README.md" | sed 's/^| `//; s/`$//' | LC_ALL=C sort > "$T/readme"
check "registry: README's table names no program that is not built ($(comm -23 "$T/readme" "$T/built" | tr '\n' ' '))" \
	test -z "$(comm -23 "$T/readme" "$T/built")"
for p in $(cat "$T/built"); do
	ls "$MARPLE_TOP"/*/"$p.1" > /dev/null 2>&1 || echo "$p"
done > "$T/noman"
check "registry: every program has its man page ($(tr '\n' ' ' < "$T/noman"))" test ! -s "$T/noman"
ifaces=$(awk -F '\t' '$2 == "kind=collector" { n = substr($1, 16); gsub(/-/, "_", n); print n }' "$R")
marple list > "$T/list"
missing=; for i in $ifaces; do grep -q "^  $i " "$T/list" || missing="$missing $i"; done
check "registry: marple list shows every collector:$missing" test -z "$missing"
missing=; for i in $ifaces; do
	m=$(awk -F '\t' -v p="program=marple-$(printf %s "$i" | tr _ -)" '$1 == p { for (k = 2; k <= NF; k++) if (index($k, "measures=") == 1) print substr($k, 10) }' "$R")
	[ -n "$m" ] || { missing="$missing $i(no measures=)"; continue; }
	grep -qxF -- "$(printf '  %-14s %s' "$i" "$m")" "$T/list" || missing="$missing $i"
done
check "registry: every collector says what it measures, and marple list shows it:$missing" test -z "$missing"
marple collect -h > "$T/ch"
missing=; for i in $ifaces; do grep -qw -- "$i" "$T/ch" || missing="$missing $i"; done
check "registry: marple collect -h names every collector:$missing" test -z "$missing"
# a collector that leaves marple's own processes out takes --include-self (the driver passes it)
missing=; for i in $(awk -F '\t' '$2 == "kind=collector" && $0 ~ /--include-self/ { print substr($1, 16) }' "$R"); do
	grep -qF -- 'include\-self' "$MARPLE_TOP"/collectors/marple-"$i".1 "$MARPLE_TOP"/scripts/marple-"$i".1 2> /dev/null || missing="$missing $i"
done
check "registry: every collector taking --include-self documents it:$missing" test -z "$missing"

# --- a new collector and a new renderer: their files, nothing else
mkdir -p "$T/tree"
(cd "$MARPLE_TOP" && tar --exclude=./.git --exclude=./build --exclude=./marple_out -cf - .) | (cd "$T/tree" && tar -xf -)
rel=${MARPLE_BIN#"$MARPLE_TOP"/}
if [ "$rel" != "$MARPLE_BIN" ]; then	# the build too, so only the new programs are built
	mkdir -p "$T/tree/$rel" && (cd "$MARPLE_BIN" && tar -cf - .) | (cd "$T/tree/$rel" && tar -xf -)
fi
D="$MARPLE_TOP/tests/driver/dummy"
cp "$D/marple-dummy.c" "$D/marple-dummy.1" "$T/tree/collectors/"
cp "$D/marple-dummyview.c" "$D/marple-dummyview.1" "$T/tree/renderers/"
(cd "$T/tree" && make SANITIZE="${SANITIZE:-}" -j2 programs) > "$T/make.out" 2>&1; rc=$?
check "dummies: the tree with two new files a program builds ($(tail -n 3 "$T/make.out" | tr '\n' ' '))" test "$rc" -eq 0
B=$T/tree/$rel; [ "$rel" != "$MARPLE_BIN" ] || B=$T/tree/build
mkdir -p "$T/run" && cd "$T/run" || exit 1
"$B/marple" collect -t 1 -o d.marple dummy > /dev/null 2> "$T/c.err"; rc=$?
check "dummies: marple collect dummy: exit 0, its section ($(tr '\n' ' ' < "$T/c.err"))" \
	sh -c "test $rc -eq 0 && grep -q '^7#dummy;main;work$' marple_out/d.marple"
"$B/marple" display -n > /dev/null 2> "$T/d.err"; rc=$?
check "dummies: marple display draws it with the display it declares ($(tr '\n' ' ' < "$T/d.err"))" \
	sh -c "test $rc -eq 0 && grep -q 'dummyview of 2 stacks (titled)' marple_out/d/00-dummy-dummyview.html && grep -q '00-dummy-dummyview.html' marple_out/d/index.html"
expect_exit "dummies: its names are display flags like -fg's (-dv then -tm: two for stacks)" 2 \
	'display: -tm contradicts an earlier flag: one renderer per datatype \(stack: -dummyview or -flamegraph or -treemap\)' \
	"$B/marple" display -n -dv -tm -o "$T/fg" -i marple_out/d.marple
