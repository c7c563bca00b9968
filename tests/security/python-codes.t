# A hostile Python process (run as nobody) cannot exhaust root's collector
# through its code objects: it remakes a function over and over with a 1 MiB
# line table and a 100,000-character name.  The collector keeps only as much
# of a line table as the lines it names need, cuts names at 256 characters
# ("[...]"), and holds its code-object cache to a byte budget (issue 40:
# 5.56 GB of RSS in 16 s before).  The frames are still named, at the right
# line.
. "$MARPLE_TOP/tests/lib.sh"
plan 4
. "$MARPLE_TOP/tests/collectors/stacks.sh"
PY=/usr/bin/python3
python311_only python-codes "$PY"
CS="$MARPLE_BIN/marple-callstack"

cat > "$T/hostile.py" <<'PYEOF'
import sys, time, types

def template(n):
    s = 0
    for i in range(n):
        s += i
    return s

def main():
    code = template.__code__
    # 1 MiB: the real table, then "no location" entries never reached
    table = code.co_linetable + b"\xf8" * ((1 << 20) - len(code.co_linetable))
    end = time.time() + float(sys.argv[1])
    i = 0
    kept = []
    while time.time() < end:
        c = code.replace(co_linetable=table, co_qualname="Q" * 100000 + str(i), co_name="f%d" % i)
        f = types.FunctionType(c, {})
        kept.append(f)
        stop = time.time() + 0.004
        while time.time() < stop:
            f(200)
        i += 1

main()
PYEOF
chmod 755 "$T" && chmod 644 "$T/hostile.py"
setpriv --reuid=65534 --regid=65534 --clear-groups "$PY" "$T/hostile.py" 10 & py=$!
sleep 0.5
"$CS" -F 499 -p "$py" 6 > "$T/out" 2> "$T/err" & cs=$!
hwm=0
while kill -0 "$cs" 2>/dev/null; do
	h=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$cs/status" 2>/dev/null)
	[ "${h:-0}" -gt "$hwm" ] && hwm=$h
	sleep 0.2
done
wait "$cs"; rc=$?
kill "$py" 2>/dev/null; wait "$py" 2>/dev/null
codes=$(trailer_num "$T/out" code_objects); bytes=$(trailer_num "$T/out" code_cache_bytes)
check "python-codes: exit 0" test "$rc" -eq 0
# each code object its own (all kept alive), 1 MiB of table each: hundreds
# of MB if read whole
if [ "${codes:-0}" -ge 100 ] && [ "${bytes:-0}" -le $(( codes * 2048 )) ]; then
	pass "python-codes: $codes code objects cached in $bytes bytes (<= 2 KiB each)"
else
	fail "python-codes: <= 2 KiB a code object cached" "${codes:-?} code objects, ${bytes:-?} bytes"
fi
if [ "$hwm" -gt 0 ] && [ "$hwm" -le 262144 ]; then
	pass "python-codes: the collector's peak RSS $hwm kB (<= 256 MB)"
else
	fail "python-codes: the collector's peak RSS <= 256 MB" "$hwm kB"
fi
# named, cut, at the loop's lines (5: for; 6: s += i), the leaf or under
# the interpreter's own code it calls there (int objects' malloc and free:
# a third of the samples in the loop, which the leaf alone left out)
P='[ ][(][^)]*[)]'
named=$(weight "$T/out" ";QQQQ*[[][.][.][.][]] [(]$T/hostile[.]py:[56][)](;|$)")
total=$(weight "$T/out" "hostile[.]py")
cut=$(grep -v '^{' "$T/out" | grep -o 'QQQQ*[[][.][.][.][]]' | awk 'length($0) != 256 + 5 { n++ } END { print n + 0 }')
if [ "$named" -gt 0 ] && [ "$named" -ge $(( total / 2 )) ] && [ "$cut" -eq 0 ]; then
	pass "python-codes: the functions named, cut at 256 characters, at their loop's lines ($named of $total)"
else
	fail "python-codes: the functions named, cut at 256 characters, at their loop's lines" "$named of $total ($cut names not cut at 256): $(grep -v '^{' "$T/out" | sort -n | tail -n 1 | rev | cut -c1-200 | rev)"
fi
