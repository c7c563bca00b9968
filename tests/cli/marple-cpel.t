# marple-cpel: CPEL facts checked by an independent reader (tests/cpel/cpelread.py),
# sorting of unsorted input in bounded memory (spilled runs), escaping, errors.
. "$MARPLE_TOP/tests/lib.sh"
plan 23
READ="$MARPLE_TOP/tests/cpel/cpelread.py"
H='{"marple":1,"interface":"test","datatype":"event","track":"cpu"}'
{
	echo "$H"
	echo '1000,sched_switch,cpu0,comm=bash,pid=10,prev_comm=a,prev_pid=1'
	echo '1500,sched_switch,cpu1,comm=100%25 done,pid=11'
	echo '2000,sched_wakeup,cpu0,comm=bash,pid=10,target_cpu=1'
	echo '{"trailer":1,"records":3}'
} > "$T/a"
marple-cpel "$T/a" > "$T/a.cpel"
check "cpel: small stream converts" test -s "$T/a.cpel"
check "cpel: first byte is 0x01" sh -c "test \"\$(head -c1 '$T/a.cpel' | od -An -tx1 | tr -d ' ')\" = 01"
python3 "$READ" --events "$T/a.cpel" > "$T/a.json"
check "cpel: reader accepts it" test -s "$T/a.json"
py() { python3 -c "import json,sys; d=json.load(open('$1')); sys.exit(0 if ($2) else 1)"; }
check "cpel: three events, two types, two tracks" py "$T/a.json" "d['count']==3 and len(d['events'])==2 and len(d['tracks'])==2"
check "cpel: datum is 'comm (pid)'" py "$T/a.json" "d['rows'][0] == [1000, 'cpu0', 'sched_switch', 'bash (10)']"
check "cpel: escaped names decoded" py "$T/a.json" "d['rows'][1][3] == '100% done (11)'"
check "cpel: datum formats are %s" py "$T/a.json" "all(v[1]=='%s' for v in d['events'].values())"
marple-cpel --track pid "$T/a" > "$T/p.cpel" && python3 "$READ" --events "$T/p.cpel" > "$T/p.json"
check "cpel --track pid: '%' in track labels is escaped as %%" py "$T/p.json" "'100%% done (11)' in d['tracks'].values()"
check "cpel --track pid: datum is the CPU" py "$T/p.json" "d['rows'][1][3] == 'cpu1'"
marple-cpel --datum target_cpu,comm "$T/a" > "$T/d.cpel" && python3 "$READ" --events "$T/d.cpel" > "$T/d.json"
check "cpel --datum: chosen fields" py "$T/d.json" "d['rows'][2][3] == 'target_cpu=1 comm=bash'"

# unsorted input, runs of 7 events spilled and merged
awk -v h="$H" 'BEGIN { print h; srand(7); for (i = 0; i < 1000; i++) printf "%d,ev%d,cpu%d,comm=p%d,pid=%d\n", int(rand()*1000000), i%3, i%4, i%5, i%5 }' > "$T/u"
marple-cpel --run-events 7 "$T/u" > "$T/u.cpel"
python3 "$READ" "$T/u.cpel" > "$T/u.json"
check "cpel: unsorted input comes out sorted (spilled runs)" py "$T/u.json" "d['sorted'] and d['count']==1000"
marple-cpel "$T/u" > "$T/u2.cpel"
check "cpel: same bytes in memory and with runs (but the date)" sh -c "cmp -s -i 8 '$T/u.cpel' '$T/u2.cpel'"
cat "$T/a" "$T/a" | marple-cpel > "$T/aa.cpel" && python3 "$READ" "$T/aa.cpel" > "$T/aa.json"
check "cpel: concatenated sections make one event section" py "$T/aa.json" "d['count']==6 and d['sorted']"

# errors
printf '{"marple":1,"interface":"x","datatype":"stack"}\n1#a\n' > "$T/s"
expect_exit "cpel: stack section rejected" 1 'datatype "stack"' marple-cpel "$T/s"
expect_exit "cpel: empty input" 1 'no marple event section' marple-cpel /dev/null
printf '%s\nx,y\n5,ev,cpu0,comm=a\n' "$H" > "$T/b"
expect_exit "cpel: bad line named and counted" 1 "$T/b:2: event record without a time" sh -c "marple-cpel '$T/b' > '$T/b.cpel'"
check "cpel: after a bad line no file under -o, nothing on stdout" sh -c "! marple-cpel -o '$T/b.o' '$T/b' 2> /dev/null && test ! -e '$T/b.o' -a ! -s '$T/b.cpel' && test -z \"\$(ls '$T' | grep '^b\\.o')\""
printf '%s\n5,ev,cpu0,comm=a%%zz\n' "$H" > "$T/e"
expect_exit "cpel: bad escape" 1 'bad %XX escape' sh -c "marple-cpel '$T/e' > /dev/null"
expect_exit "cpel: records without a header" 1 'before any section header' sh -c "echo 5,ev,cpu0 | marple-cpel > /dev/null"
expect_exit "cpel: bad --track" 2 'cpu or pid' marple-cpel --track foo "$T/a"
marple-cpel -o "$T/o.cpel" "$T/a"
check "cpel -o: writes the file" cmp -s -i 8 "$T/o.cpel" "$T/a.cpel"
if [ -w /dev/full ]; then
	expect_exit "cpel: full disk is a write error" 1 'write error' sh -c "marple-cpel '$T/a' > /dev/full"
fi
printf '%s\n1,a,cpu10,comm=x\n2,a,cpu2,comm=y\n3,a,cpu1,comm=z\n4,a,cpu10,comm=x\n' "$H" | marple-cpel > "$T/n.cpel"
python3 "$READ" --events "$T/n.cpel" > "$T/n.json"
check "cpel: tracks numbered in natural order (cpu1, cpu2, cpu10)" py "$T/n.json" "d['tracks'] == {'0':'cpu1','1':'cpu2','2':'cpu10'} and [r[1] for r in d['rows']] == ['cpu10','cpu2','cpu1','cpu10']"
