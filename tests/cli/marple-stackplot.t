# marple-stackplot: band values computed by hand, --top and "other", legend
# order, bin averaging, hostile names, golden SVG, errors.
. "$MARPLE_TOP/tests/lib.sh"
plan 25
S="$MARPLE_TOP/tests/stackplot"

# bands SVG: "name: v1,v2,..." per band from the page's data, bottom band first.
bands() {
	sed -n 's/^,*{name: \(.*\), v: \[\([^]]*\)\]}.*/\1: \2/p' "$1"
}

# mem.in, by hand (bash = pid 11 + pid 12; absent = 0):
#   firefox 100 120 140 160;  bash 50 50 40 0;  sleep 5 0 6 0;  cron 1 3 1 0;  evil name 0 0 0 8
marple-stackplot "$S/mem.in" > "$T/all.svg"
bands "$T/all.svg" > "$T/all.bands"
printf '%s\n' '"firefox": 100,120,140,160' '"bash": 50,50,40,0' '"sleep": 5,0,6,0' \
	'"\u003cscript\u003ex\u003c/script\u003e \u0026 ]]\u003e": 0,0,0,8' '"cron": 1,3,1,0' > "$T/all.want"
same "stackplot: band values by hand, biggest first" "$T/all.want" "$T/all.bands"
check "stackplot: SVG well-formed with a hostile name" xmllint --noout "$T/all.svg"
check "stackplot: hostile name escaped in the legend" grep -q '&lt;script&gt;x&lt;/script&gt; &amp; ]]&gt;' "$T/all.svg"
check "stackplot: y axis from the header's labels and units" grep -q 'memory (PSS, else RSS) (MiB)' "$T/all.svg"
sed -n '/id="sp-legend"/,/<\/g>/s/.*class="axis">\([^<]*\)<.*/\1/p' "$T/all.svg" > "$T/legend"
printf '%s\n' cron '&lt;script&gt;x&lt;/script&gt; &amp; ]]&gt;' sleep bash firefox > "$T/legend.want"
same "stackplot: legend in stack order (top band first)" "$T/legend.want" "$T/legend"

# --top 2: firefox, bash, and other = sleep + evil + cron.
marple-stackplot --top 2 "$S/mem.in" > "$T/top2.svg"
bands "$T/top2.svg" > "$T/top2.bands"
printf '%s\n' '"firefox": 100,120,140,160' '"bash": 50,50,40,0' '"other": 6,3,7,8' > "$T/top2.want"
same "stackplot: --top 2 puts the rest into other" "$T/top2.want" "$T/top2.bands"
check "stackplot: other is grey" grep -q 'fill="#bbbbbb" stroke="#fff" stroke-width="0.3" data-band="2"' "$T/top2.svg"

# --bins 2: samples averaged in pairs: firefox (100+120)/2, (140+160)/2; x at 0.5 and 2.5.
marple-stackplot --bins 2 --top 1 "$S/mem.in" > "$T/b2.svg"
bands "$T/b2.svg" > "$T/b2.bands"
printf '%s\n' '"firefox": 110,150' '"other": 54.5,27.5' > "$T/b2.want"
same "stackplot: --bins averages neighbouring samples" "$T/b2.want" "$T/b2.bands"
check "stackplot: --bins: bin times are the mean sample times" grep -q '^xs: \[0.5,2.5\],' "$T/b2.svg"

# Many samples: 2000 samples into at most 500 bins, values kept (a constant stays constant).
awk 'BEGIN { print "{\"marple\":1,\"interface\":\"x\",\"datatype\":\"point\"}"
	for (i = 0; i < 2000; i++) printf "%d,7,a\n%d,%d,b\n", i, i, i % 2 }' > "$T/many"
marple-stackplot "$T/many" > "$T/many.svg"
check "stackplot: 2000 samples binned to at most 500" test "$(sed -n 's/^xs: \[\(.*\)\],$/\1/p' "$T/many.svg" | tr ',' '\n' | wc -l)" -le 500
check "stackplot: a constant band stays constant when binned" sh -c "grep '^{name: \"a\"' '$T/many.svg' | grep -q 'v: \[7\(,7\)*\]'"

# Golden SVG (regenerate: REGEN=1 make check TESTS=marple-stackplot).
marple-stackplot --top 3 --title 'Memory <by> process' "$S/mem.in" > "$T/golden.svg"
[ -n "${REGEN:-}" ] && cp "$T/golden.svg" "$S/mem.out"
same "stackplot: golden SVG" "$S/mem.out" "$T/golden.svg"

# Errors.
printf '{"marple":1,"interface":"cpusched","datatype":"event"}\n1,a,b\n' > "$T/ev"
expect_exit "stackplot: event section refused" 1 'holds event records; marple-stackplot draws point sections' marple-stackplot "$T/ev"
expect_exit "stackplot: empty input" 1 'no marple point section' marple-stackplot /dev/null
printf '{"marple":1,"interface":"x","datatype":"point"}\n' > "$T/empty"
expect_exit "stackplot: section without points" 1 'nothing to draw' marple-stackplot "$T/empty"
printf '{"marple":1,"interface":"x","datatype":"point"}\n1,2,a\nbad\n2,3,a\n' > "$T/bad"
expect_exit "stackplot: bad line named and counted" 0 "$T/bad:3: .*1 bad line skipped|1 bad line skipped" marple-stackplot "$T/bad"
check "stackplot: bad line named with file and line" grep -q "$T/bad:3:" "$T/ee.err"
expect_exit "stackplot: bad --top" 2 'top' marple-stackplot --top 0 "$S/mem.in"
cat "$S/mem.in" "$S/mem.in" > "$T/two"
expect_exit "stackplot: second section skipped with a message" 0 'section 1 \(memtime\) not drawn' marple-stackplot "$T/two"
marple-stackplot -o "$T/o.svg" "$S/mem.in"
check "stackplot: -o writes the file" xmllint --noout "$T/o.svg"

# A long name is cut in the legend at a character boundary (whole in the tooltip data).
long=$(printf 'ä%.0s' $(seq 1 60))
printf '{"marple":1,"interface":"x","datatype":"point"}\n0,1,%s\n' "$long" > "$T/long"
marple-stackplot "$T/long" > "$T/long.svg"
cut=$(printf 'ä%.0s' $(seq 1 19))
check "stackplot: long name cut in the legend, SVG well-formed" sh -c "xmllint --noout '$T/long.svg' && grep -q '>$cut…</text>' '$T/long.svg' && ! grep -q '�' '$T/long.svg'"
check "stackplot: long name whole in the hover data" grep -q "{name: \"$long\"" "$T/long.svg"

# --by pid: the two bash processes are two bands (pid 11: 30 50 40 0, pid 12: 20 0 0 0).
marple-stackplot --by pid "$S/mem.in" > "$T/by.svg"
check "stackplot: --by pid splits processes of one name" sh -c "grep -q '^{name: \"11\", v: \[30,50,40,0\]}' '$T/by.svg' && grep -q '^{name: \"12\", v: \[20,0,0,0\]}' '$T/by.svg'"

# By hand, the picture is titled as marple display titles it: what the section
# is and where it comes from, not "Stack Plot".
marple-stackplot "$S/mem.in" > "$T/t.svg"
check "stackplot: default title 'memtime on db1' (the section's interface and host)" \
	grep -q 'class="title">memtime on db1</text>' "$T/t.svg"
printf '{"marple":1,"interface":"memtime","datatype":"point"}\n0,1,a\n1,2,a\n' | marple-stackplot > "$T/nohost.svg"
check "stackplot: default title without a host: the interface" grep -q 'class="title">memtime</text>' "$T/nohost.svg"
