# marple-eventplot: the page is self-contained, hostile names escaped, errors.
# (Interaction is tested in tests/browser/eventplot.test.js.)
. "$MARPLE_TOP/tests/lib.sh"
plan 10
{
	echo '{"marple":1,"interface":"t","datatype":"event","track":"cpu"}'
	echo '1000,sched_switch,cpu0,comm=</script><b>,pid=1,next_comm=x'
	echo '2000,ev,cpu0,comm=a%2Cb,pid=2'
} > "$T/in"
marple-eventplot --title '<T&>' "$T/in" > "$T/out.html"
check "eventplot: exit 0" test $? -eq 0
check "eventplot: no external resources" sh -c "! grep -Eiq '(src|href)=\"?(https?:)?//' '$T/out.html'"
check "eventplot: one closing script per script" test "$(grep -o '</script>' "$T/out.html" | wc -l)" -eq 2
check "eventplot: title escaped" grep -q '<title>&lt;T&amp;&gt;</title>' "$T/out.html"
# the events travel gzip-compressed and base64-encoded: the names decoded, inside
sed -n 's/^var EV={"n":2,"f":2,"c":\[2\],"d":"\([A-Za-z0-9+\/=]*\)"}.*/\1/p' "$T/out.html" | base64 -d | gzip -dc > "$T/ev.bin" 2> /dev/null
check "eventplot: decoded names in the compressed events" grep -aq 'comm=a,b' "$T/ev.bin"
check "eventplot: a hostile name never reaches the page as text" sh -c "! grep -q '<b>' '$T/out.html'"
printf '{"marple":1,"interface":"x","datatype":"stack"}\n1#a\n' > "$T/s"
expect_exit "eventplot: stack section rejected" 1 'datatype "stack"' marple-eventplot "$T/s"
expect_exit "eventplot: empty input" 1 'no marple event section' marple-eventplot /dev/null
printf '{"marple":1,"interface":"x","datatype":"event"}\n' > "$T/e"
expect_exit "eventplot: no events" 1 'no events' marple-eventplot "$T/e"
# one rule for the four event renderers: a bad line is named, and nothing is written
printf '{"marple":1,"interface":"x","datatype":"event"}\nbad\n5,ev,t1\n' > "$T/b"
expect_exit "eventplot: a bad line named, no file under -o, nothing on stdout" 1 "$T/b:2:" sh -c \
	"marple-eventplot -o '$T/b.o' '$T/b' && exit 0; rc=\$?; marple-eventplot '$T/b' > '$T/b.html' 2> /dev/null; test ! -e '$T/b.o' -a ! -s '$T/b.html' && test -z \"\$(ls '$T' | grep '^b\\.o')\" && exit \$rc"
