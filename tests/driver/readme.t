# The README's "Everyday use" lines, run as written (as root, with the real
# collectors and renderers), in order, in an empty folder: each exits 0 and
# makes what it says.  A README example that stops working fails here.
. "$MARPLE_TOP/tests/lib.sh"
plan 11
if ! is_root; then skip_rest "readme" "needs root"; fi
if [ ! -r /sys/kernel/btf/vmlinux ]; then skip_rest "readme" "no BTF"; fi
unset MARPLE_LIBEXEC MARPLE_CONFIG DISPLAY WAYLAND_DISPLAY
export XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config"
mkdir -p "$T/run" && cd "$T/run" || exit 1
# the lines of the block after "Everyday use:", comments cut
awk '/^Everyday use:/ { on = 1; next } on && /^## / { exit } on && /^    [a-z]/ { sub(/^    /, ""); sub(/ +# .*$/, ""); print }' \
	"$MARPLE_TOP/README.md" > "$T/lines"
check "readme: 8 lines of everyday use found" test "$(wc -l < "$T/lines")" -eq 8
# what the lines need that the README assumes: a workload, a perf.data for
# 'perf script', a folder of captures for the fleet line (made after collect)
"$MARPLE_BIN/workloads/demo" 60 > /dev/null 2>&1 & wl=$!
perf record -q -F 99 -g -o perf.data -- "$MARPLE_BIN/workloads/demo" 1 > /dev/null 2>&1
while IFS= read -r line; do
	case $line in "marple display fleet/"*) mkdir -p fleet/h1 && cp marple_out/*.marple fleet/h1/ ;; esac
	sh -c "$line" > "$T/out" 2> "$T/err" < /dev/null; rc=$?
	case $line in
	"marple collect"*) made=$(cat "$T/out") ;;
	"marple record"*) made=$(sed -n 's/^marple: capture: //p' "$T/err") ;;
	"marple display fleet/"*) made=marple_out/fleet/index.html ;;
	"marple display --perfetto"*) made=sched.pftrace ;;
	"marple display"*) made=$(cat "$T/out") ;;
	*"> "*) made=${line##*> } ;;
	*) made= ;;
	esac
	check "readme: $line: exit 0, $made made ($(grep -v '^ *$' "$T/err" | head -c 200 | tr '\n' ' '))" \
		sh -c "test $rc -eq 0 && test -s '$made'"
done < "$T/lines"
kill "$wl" 2> /dev/null; wait "$wl" 2> /dev/null
check "readme: the Perfetto trace has the cpusched section's switches (the workload's name)" grep -aq demo sched.pftrace
check "readme: the folded perf script names the workload's functions" grep -q 'crunch_primes' out.folded
