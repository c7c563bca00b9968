# marple display cuts the sections it draws from the capture in one pass
# (marple-cat --split), not once a picture: a capture of 10^6 sections was
# read whole again for each of its 100 pictures.  Here 40 stack sections,
# drawn by a stand-in renderer (its input as its picture), with a marple-cat that logs its calls; each
# picture gets exactly its section.
. "$MARPLE_TOP/tests/lib.sh"
plan 5
mkdir -p "$T/b" "$T/bin" "$T/state" "$T/work"
for p in marple marple-registry marple-config marple-report marple-import; do cp "$MARPLE_BIN/$p" "$T/b/"; done
printf '#!/bin/sh\necho "$*" >> "%s"\nexec "%s" "$@"\n' "$T/cat.log" "$MARPLE_BIN/marple-cat" > "$T/b/marple-cat"
chmod +x "$T/b/marple-cat"
# the stand-in flame graph: its input as its picture (-o FILE INPUT)
printf '#!/bin/sh\nwhile [ $# -gt 1 ]; do [ "$1" = -o ] && out=$2; shift; done\ncat "$1" > "$out"\n' > "$T/bin/marple-flamegraph"
chmod +x "$T/bin/marple-flamegraph"
export MARPLE_LIBEXEC="$T/bin" XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config"
unset MARPLE_CONFIG DISPLAY WAYLAND_DISPLAY
cd "$T/work" || exit 1
i=0
while [ $i -lt 40 ]; do
	printf '{"marple":1,"interface":"callstack","datatype":"stack","start_ns":1000000000,"wall_ns":1795262401000000000,"host":"h","units":{"weight":"samples"}}\n'
	printf '%d#sec%d;main;work\n' $((i + 1)) $i
	printf '{"trailer":1,"end_ns":2000000000,"records":1,"lost":0,"dropped":0,"ended":"duration"}\n'
	i=$((i + 1))
done > "$T/cap.marple"
: > "$T/cat.log"
"$T/b/marple" display -n --max-sections 0 -i "$T/cap.marple" -o "$T/out" > /dev/null 2> "$T/err"; rc=$?
check "display-cut: 40 sections drawn, exit 0 ($(head -c 200 "$T/err"))" \
	test "$rc" -eq 0 -a "$(ls "$T/out" | grep -c 'flamegraph.svg$')" -eq 40
reads=$(grep -c -- "$T/cap.marple" "$T/cat.log")
check "display-cut: the capture read by marple-cat once to cut, not once a picture ($reads calls)" \
	sh -c "[ $reads -le 2 ] && grep -q -- '--split' '$T/cat.log'"
check "display-cut: picture 7 drew section 7 only" sh -c \
	"grep -q 'sec7;main;work' '$T/out/07-callstack-flamegraph.svg' && ! grep -q 'sec8;' '$T/out/07-callstack-flamegraph.svg'"
# --split makes new files only: a symlink planted at an index is refused
mkdir "$T/split" && echo keep > "$T/victim" && ln -s "$T/victim" "$T/split/3"
expect_exit "display-cut: marple-cat --split refuses a planted symlink" 1 \
	"^marple-cat: $T/split/3: cannot create" marple-cat -s 3 --split "$T/split" "$T/cap.marple"
check "display-cut: ... its target untouched" test "$(cat "$T/victim")" = keep
