# Symbols of stripped binaries come from their separate debug files
# (.gnu_debuglink beside the binary, or /usr/lib/debug/.build-id), and C++
# names are demangled (root, real BPF).
. "$MARPLE_TOP/tests/lib.sh"
plan 2
if ! is_root; then
	skip_rest "symbols: BPF cases" "not root"
fi
if ! command -v objcopy >/dev/null 2>&1; then
	skip_rest "symbols: debug files" "no objcopy"
fi
W="$MARPLE_BIN/workloads"

# hotcold, stripped: hot_loop is in no symbol table of the binary any more
cp "$W/hotcold" "$T/hc"
objcopy --only-keep-debug "$T/hc" "$T/hc.debug"
objcopy --strip-all --add-gnu-debuglink="$T/hc.debug" "$T/hc"
if nm "$T/hc" 2>/dev/null | grep -q hot_loop; then fail "symbols: stripped copy" "still has hot_loop"; fi
"$T/hc" 4 & wl=$!
exec_done "$wl" hc
marple-callstack -F 199 -p "$wl" 1 > "$T/dl.out" 2>/dev/null
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
# folded: a function sampled at two lines (run_round's two calls) is two
# frames of one name in the stream, one of them tagged (marple-format(5))
marple-fold "$T/dl.out" > "$T/dl.folded" 2>/dev/null
check "symbols: .gnu_debuglink debug file gives hot_loop" grep -q '^hc;.*main;run_round;hot_loop [0-9]*$' "$T/dl.folded"

# the same through /usr/lib/debug/.build-id/xx/rest.debug
id=$(readelf -n "$T/hc" 2>/dev/null | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p' | head -n 1)
if [ -z "$id" ]; then
	skip "symbols: build-id debug file" "no build id in the workload"
else
	dir=/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)
	f=$dir/$(echo "$id" | cut -c3-).debug
	if [ -e "$f" ]; then
		skip "symbols: build-id debug file" "$f exists already"
	else
		cp "$W/hotcold" "$T/hb"
		objcopy --strip-all "$T/hb"
		mkdir -p "$dir" && cp "$T/hc.debug" "$f"
		"$T/hb" 4 & wl=$!
		exec_done "$wl" hb
		marple-callstack -F 199 -p "$wl" 1 > "$T/bi.out" 2>/dev/null
		kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
		rm -f "$f"; rmdir "$dir" /usr/lib/debug/.build-id /usr/lib/debug 2>/dev/null
		marple-fold "$T/bi.out" > "$T/bi.folded" 2>/dev/null
		check "symbols: build-id debug file gives hot_loop" grep -q '^hb;.*main;run_round;hot_loop [0-9]*$' "$T/bi.folded"
	fi
fi
