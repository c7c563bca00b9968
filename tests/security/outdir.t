# marple_out/ made by another user is not used, and no report folder is
# reached through a symlink (issue 40): in a sticky shared folder nobody
# makes marple_out/ and marple_out/cap -> a folder of root's; root's marple
# collect and display refuse it (exit 1, saying whose it is) and write
# nothing there or through it.  A marple_out others may write in, or a
# report folder that is a symlink, is refused too.
. "$MARPLE_TOP/tests/lib.sh"
plan 11
D="$MARPLE_TOP/tests/driver"
if ! is_root; then
	skip_rest "security outdir" "not root"
fi
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"	# run as $NOBODY CMD (split)
mkdir -p "$T/bin" "$T/state" "$T/victim"
for n in callstack memtime; do ln -s "$D/fake-collector" "$T/bin/marple-$n"; done
ln -s "$D/fake-renderer" "$T/bin/marple-flamegraph"
ln -s "$D/fake-renderer" "$T/bin/marple-stackplot"
export MARPLE_LIBEXEC="$T/bin" XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config"
unset MARPLE_CONFIG DISPLAY WAYLAND_DISPLAY
chmod 711 "$T"
mkdir -m 1777 "$T/shared"
cd "$T/shared" || exit 1
$NOBODY mkdir -m 777 marple_out
$NOBODY ln -s "$T/victim" marple_out/cap

expect_exit "outdir: collect refuses nobody's marple_out/" 1 \
	"^marple: collect: marple_out belongs to uid 65534, not to you \\(uid 0\\): not used" \
	marple collect -t 1 -o cap.marple memtime
check "outdir: ... and wrote nothing in it" test -z "$(find marple_out -mindepth 1 ! -name cap)"
marple collect -t 1 -o "$T/cap.marple" callstack memtime > /dev/null 2>&1
expect_exit "outdir: display refuses nobody's marple_out/" 1 \
	"^marple: display: marple_out belongs to uid 65534" marple display -n -i "$T/cap.marple"
check "outdir: ... and wrote nothing through its symlink" test -z "$(ls -A "$T/victim")"

# root's own folder: a report folder that is a symlink, one others may write in
mkdir -m 755 "$T/mine"
cd "$T/mine" || exit 1
mkdir -m 755 marple_out
ln -s "$T/victim" marple_out/cap
expect_exit "outdir: display refuses a report folder that is a symlink" 1 \
	"^marple: display: marple_out/cap is a symbolic link: not followed" marple display -n -i "$T/cap.marple"
check "outdir: ... and wrote nothing through it" test -z "$(ls -A "$T/victim")"
rm marple_out/cap
chmod 777 marple_out
expect_exit "outdir: a marple_out others may write in is refused" 1 \
	"^marple: collect: others may write in marple_out \\(mode 777\\): not used" \
	marple collect -t 1 memtime
chmod 755 marple_out
marple display -n -i "$T/cap.marple" > "$T/out" 2> "$T/err"; rc=$?
check "outdir: a folder of ours: the report written" test "$rc" -eq 0 -a -s marple_out/cap/index.html
check "outdir: ... its folder ours, mode 755" test "$(stat -c '%u %a' marple_out/cap)" = "0 755"

# the race: the report folder, checked, is swapped for a symlink to root's
# victimdir while the pictures are drawn (here by the first renderer, as
# the owner of a writable parent could); the rest is written in the folder
# that was checked, never through the symlink
cat > "$T/bin/marple-swapper" <<SWAP
#!/bin/sh
if [ -e "$T/swap" ]; then
	rm -f "$T/swap"
	mv "$T/mine/marple_out/cap" "$T/mine/marple_out/cap.moved" && ln -s "$T/victim" "$T/mine/marple_out/cap"
fi
exec "$D/fake-renderer" "\$@"
SWAP
chmod 755 "$T/bin/marple-swapper"
for n in flamegraph stackplot; do ln -sf marple-swapper "$T/bin/marple-$n"; done
rm -f marple_out/cap/*
: > "$T/swap"
marple display -n -i "$T/cap.marple" > "$T/out" 2> "$T/err"
check "outdir: a report folder swapped for a symlink while drawn: nothing written through it" \
	test ! -e "$T/swap" -a -z "$(ls -A "$T/victim")"
check "outdir: ... the report and both pictures in the folder checked" \
	test "$(ls marple_out/cap.moved | grep -c '\.svg$\|^index\.html$')" -eq 3
