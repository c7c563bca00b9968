# marple-fold: input detection, re-aggregation, streams, --diff, bad input and exit codes.
. "$MARPLE_TOP/tests/lib.sh"
plan 51
S="$DATA/sample.marple"

printf 'a;b 1\nc 3\na;b 2\n' > "$T/f1"
printf 'a;b 1\nc 3\n\na;b 2\n' > "$T/f1b"
printf 'a;b 3\nc 3\n' > "$T/f1.exp"
marple-fold "$T/f1" > "$T/o"; same_ok "fold: folded input is re-aggregated and sorted" $? "$T/f1.exp" "$T/o"
marple-fold < "$T/f1b" > "$T/o"; same_ok "fold: folded input from stdin, blank lines ignored" $? "$T/f1.exp" "$T/o"
printf 'a;b 3\n' > "$T/f2"
printf 'a;b 6\nc 3\n' > "$T/f12.exp"
marple-fold "$T/f1" "$T/f2" > "$T/o"; same_ok "fold: several inputs are summed" $? "$T/f12.exp" "$T/o"

marple-fold "$S" > "$T/s.out" 2> "$T/s.err"
check "fold: stack section to folded" grep -qx 'python3;_start;main;Py_RunMain;_PyEval_EvalFrameDefault 97' "$T/s.out"
check "fold: escaped names decoded" grep -qx 'std::map<int, char>::find;operator new(unsigned long) 3' "$T/s.out"
check "fold: sections of other datatypes are named and skipped" grep -q 'holds event data' "$T/s.err"

marple-fold --to-stream "$S" > "$T/st" 2>/dev/null
check "fold --to-stream: a valid marple stream" marple-cat -q "$T/st"
check "fold --to-stream: stack section" grep -q '"datatype":"stack"' "$T/st"
check "fold --to-stream: names escaped again" grep -q '^3#std::map<int%2C char>::find;operator new(unsigned long)$' "$T/st"
marple-fold "$T/st" > "$T/rt"
same "fold: folded -> stream -> folded round trip" "$T/s.out" "$T/rt"
marple-fold --to-stream "$T/f1" | marple-fold > "$T/o"
same "fold --to-stream from folded text" "$T/f1.exp" "$T/o"

# perf script text: a weight is the period its header prints (as
# stackcollapse-perf.pl), so the stream says what that period counts
perf_sample() {	# EVENT [PERIOD]
	printf 'burn 42 [000] 100.000001: %s %s:\n\t 401000 main (/bin/burn)\n\n' "${2-}" "$1"
}
{ perf_sample cpu-clock:pppH 1001001; perf_sample cpu-clock:pppH 1001001; } | marple-fold -s > "$T/o"
check "fold --to-stream: perf's cpu-clock periods are ns" sh -c \
	"grep -q '\"units\":{\"weight\":\"ns\"}' '$T/o' && grep -qx '2002002#burn;main' '$T/o'"
# Samples seen before fold from memory by their bytes: the same frame lines
# under another process (java: names tidied as Java's), a comment inside, a
# bad line inside (reported again each time, with its own line number).
rep_sample() {	# COMM [LINE]
	printf '%s 42 [000] 1.0: cpu-clock:\n\t 401100 work+0x10 (/bin/burn)\n\t 401000 Lcom/a/B;run (/bin/burn)\n' "$1"
	[ -z "${2-}" ] || printf '%s\n' "$2"
	printf '\t 400f00 main (/bin/burn)\n\n'
}
{ rep_sample burn; rep_sample java; rep_sample burn; rep_sample java; rep_sample burn '# note'
  rep_sample burn '	garbage'; rep_sample burn '	garbage'; rep_sample java '# note'; } > "$T/rep.txt"
printf 'burn;main;Lcom/a/B:run;work 5\njava;main;com/a/B:run;work 3\n' > "$T/rep.exp"
marple-fold "$T/rep.txt" > "$T/o" 2> "$T/e"; same_ok "fold: repeated perf samples summed per process" $? "$T/rep.exp" "$T/o"
check "fold: a bad line of a repeated sample reported each time" sh -c "
	grep -q 'rep.txt:30: not a sample header' '$T/e' && grep -q 'rep.txt:36: not a sample header' '$T/e' &&
	grep -q '2 malformed lines skipped' '$T/e'"
printf 'ab 1 [0] 1.0: cpu-clock:\n\tzz\n\t 1 f (/x)\n\tz\0z\n\n' > "$T/nul.txt"
marple-fold "$T/nul.txt" > /dev/null 2> "$T/e"
check "fold: a sample's bad line is reported before the NUL byte after it" sh -c "
	grep -n 'nul.txt:' '$T/e' | head -2 | tr '\n' ' ' | grep -q '^1:.*nul.txt:2: not a sample.* 2:.*nul.txt:4: NUL byte'"
perf_sample cycles 5000 | marple-fold -s > "$T/o"
check "fold --to-stream: another event's periods count that event" grep -q '"units":{"weight":"cycles"}' "$T/o"
perf_sample cpu-clock | marple-fold -s > "$T/o"
check "fold --to-stream: perf text without periods counts samples" sh -c \
	"grep -q '\"units\":{\"weight\":\"samples\"}' '$T/o' && grep -qx '1#burn;main' '$T/o'"

printf 'a;b 5\nx 1\n' > "$T/d2"
printf 'a;b 3 5\nc 3 0\nx 0 1\n' > "$T/d.exp"
marple-fold --diff "$T/f1" "$T/d2" > "$T/o"; same_ok "fold --diff: two counts, union of stacks" $? "$T/d.exp" "$T/o"
expect_exit "fold --diff: needs two inputs" 2 'exactly two' marple-fold --diff "$T/f1"
expect_exit "fold --diff --to-stream: usage error" 2 'exclude' marple-fold --diff --to-stream "$T/f1" "$T/d2"

# perf script with a bad line: reported with its line number, rest folded.
printf 'cmd 12 1.0: cpu-clock:\n\tffff leaf (/bin/x)\n\tffff main (/bin/x)\n\n?? garbage\ncmd 12 2.0: cpu-clock:\n\tffff main (/bin/x)\n' > "$T/p"
marple-fold "$T/p" > "$T/o" 2> "$T/e"; rc=$?
printf 'cmd;main 1\ncmd;main;leaf 1\n' > "$T/p.exp"
check "fold: perf script with a bad line exits 0" test $rc -eq 0
same "fold: perf script with a bad line keeps the rest" "$T/p.exp" "$T/o"
check "fold: bad line named with file and line" grep -q "^marple-fold: $T/p:5: " "$T/e"
check "fold: count of malformed lines" grep -q '1 malformed line skipped' "$T/e"
printf 'stack 1\nno count here\n' | marple-fold > /dev/null 2> "$T/e"
check "fold: folded bad line named" grep -q '^marple-fold: <stdin>:2: no count' "$T/e"
printf 'a 1.5\n' > "$T/frac"
expect_exit "fold: fractional count is malformed; nothing usable exits 1" 1 'not a whole number' marple-fold "$T/frac"

expect_exit "fold: empty input exits 1" 1 'no usable stacks' marple-fold /dev/null
printf 'hello world\nfoo\n' > "$T/junk"
expect_exit "fold: junk input exits 1" 1 'no usable stacks' marple-fold "$T/junk"
expect_exit "fold: missing file exits 1" 1 '/nonexistent' marple-fold /nonexistent
expect_exit "fold: bad option exits 2" 2 'Try' marple-fold --frobnicate
marple-fold -o "$T/out.folded" "$T/f1"; same_ok "fold -o FILE" $? "$T/f1.exp" "$T/out.folded"
if [ -w /dev/full ]; then
	expect_exit "fold: full disk is a write error" 1 'write error' sh -c "marple-fold '$T/f1' > /dev/full"
fi
# Hostile shapes stay linear: a 2 MB run of blanks, many " (" in one line.
awk 'BEGIN { s = "a"; for (i = 0; i < 21; i++) s = s s; gsub(/a/, " ", s); print "a" s "x"; t = "\tf"; for (i = 0; i < 18; i++) t = t t; gsub(/f/, " (", t); print "\tff" t }' > "$T/long"
expect_exit "fold: long hostile lines end quickly (exit 1, nothing usable)" 1 'no usable stacks' timeout 10 marple-fold "$T/long"
# --host-frame: each section's host is the root frame; two hosts' files fold into one graph.
printf '{"marple":1,"interface":"callstack","datatype":"stack","host":"db1"}\n3#bash;main;work\n1#bash;main\n' > "$T/h1"
printf '{"marple":1,"interface":"callstack","datatype":"stack","host":"web;2"}\n2#nginx;main\n{"marple":1,"interface":"callstack","datatype":"stack","host":"db1"}\n4#bash;main;work\n' > "$T/h2"
printf 'db1;bash;main 1\ndb1;bash;main;work 7\nweb:2;nginx;main 2\n' > "$T/h.exp"
marple-fold --host-frame "$T/h1" "$T/h2" > "$T/o"; same_ok "fold --host-frame: hosts as root frames, the same host's stacks summed across files" $? "$T/h.exp" "$T/o"
marple-fold "$T/h1" "$T/h2" > "$T/o"
check "fold without --host-frame: no host frame" sh -c "! grep -q '^db1' '$T/o'"
expect_exit "fold --host-frame: folded input has no host: skipped, said, exit 1" 1 'folded input names no host' marple-fold -H "$T/h1" "$T/f1"
printf 'db1;bash;main 1\ndb1;bash;main;work 3\n' > "$T/h1.exp"
marple-fold -H "$T/h1" "$T/f1" > "$T/o" 2>/dev/null
check "fold --host-frame: the stream's stacks still folded beside the skipped input" cmp -s "$T/h1.exp" "$T/o"

# Frame descriptions (the trailer's "frames") and on/off-CPU sections:
# marple-cat keeps them byte for byte, marple-fold drops them (folded text
# has no place for them) and sums both sections' stacks as before.
{ echo '{"marple":1,"interface":"offcpu","datatype":"stack","units":{"weight":"us"},"cpu":"off"}'
  echo '80#app;main;fib (/x.py:3);read'
  echo '{"trailer":1,"records":1,"frames":{"fib (/x.py:3)":{"kind":"python","file":"/x.py","line":3},"read":{"kind":"native","file":"/usr/lib/x86_64-linux-gnu/libc.so.6","build_id":"93ac","offset":1104}}}'
  echo '{"marple":1,"interface":"offcpu","datatype":"stack","units":{"weight":"us"},"cpu":"on"}'
  echo '20#app;main;fib (/x.py:3);read'
  echo '{"trailer":1,"records":1}'; } > "$T/desc.marple"
marple-cat "$T/desc.marple" > "$T/desc.cat"
check "fold: marple-cat keeps frame descriptions and \"cpu\" as they are" cmp -s "$T/desc.marple" "$T/desc.cat"
marple-fold "$T/desc.marple" > "$T/o" 2> "$T/e"
check "fold: descriptions and \"cpu\" dropped, on- and off-CPU stacks summed, nothing said" sh -c "
	test \"\$(cat '$T/o')\" = 'app;main;fib (/x.py:3);read 100' && test ! -s '$T/e'"
marple-fold -s "$T/desc.marple" > "$T/o"
check "fold --to-stream: its trailer describes no frames" sh -c "! grep -q '\"frames\"' '$T/o' && grep -q '^100#app;main;fib (/x.py:3);read\$' '$T/o'"

# perf script samples are taken whole from each read where they can be (no
# call per line), other lines one by one: the same folds, messages and line
# numbers either way.  ~700 KiB (samples across the 256 KiB reads), stacks
# seen again (the memo of whole samples), bad lines and comments inside
# samples; its CRLF copy is read line by line throughout ("\r" ends no
# whole sample), a pipe in the pieces cat writes.
awk 'BEGIN { for (i = 0; i < 6000; i++) {
	printf "%s %d [000] %d.5: 1001 cpu-clock:\n", (i % 7 ? "app" : "my app"), 100 + i % 13, i
	for (j = 0; j < 4 + (i * 7) % 17; j++)
		printf "\t%12x fn%d_%d+0x1%s (/usr/lib/lib%d.so)\n", 4096 + j, j, (i * j) % 11, (i % 3 ? "" : "0"), j % 3
	if (i % 1000 == 500) print "\tgarbage in sample " i
	if (i % 1500 == 7) print "# a comment inside"
	print "" } }' > "$T/whole.txt"
sed 's/$/\r/' "$T/whole.txt" > "$T/whole-crlf.txt"
marple-fold -p < "$T/whole.txt" > "$T/w1" 2> "$T/we1"
marple-fold -p < "$T/whole-crlf.txt" > "$T/w2" 2> "$T/we2"
check "fold: whole perf samples fold as their lines one by one" sh -c "
	cmp '$T/w1' '$T/w2' && test \$(wc -l < '$T/w1') -gt 100"
check "fold: whole perf samples: the same bad lines, the same line numbers" sh -c "
	cmp '$T/we1' '$T/we2' && grep -q '<stdin>:[0-9]*: not a sample header' '$T/we1' && grep -q '6 malformed lines' '$T/we1'"
cat "$T/whole.txt" | marple-fold -p > "$T/w3" 2> "$T/we3"
check "fold: whole perf samples from a pipe as from a file" sh -c "cmp '$T/w1' '$T/w3' && cmp '$T/we1' '$T/we3'"

# A stack record with %XX escapes and no tag is decoded straight into its
# key: the same key as the record parsed frame by frame (-H takes that path
# for every record), ';' and control bytes in names mapped, a bad escape
# reported with its column and skipped.
{ echo '{"marple":1,"interface":"x","datatype":"stack","host":"h"}'
  echo '3#app;f<a%2C b>;g%3Bh;ctl%0Aend;pct%25;del%7f'
  echo '2#app;f<a%2C b>;g%3Bh;ctl%0Aend;pct%25;del%7f'
  echo '5#app;tagged%2C#0000beef;leaf'
  echo '1#app;bad%zzescape'
  echo '1#app;short%2'
  echo '7#app;plain;leaf'
  echo '{"trailer":1,"records":4}'; } > "$T/esc.marple"
printf 'app;f<a, b>;g:h;ctl?end;pct%%;del? 5\napp;plain;leaf 7\napp;tagged,;leaf 5\n' > "$T/esc.exp"
marple-fold "$T/esc.marple" > "$T/o" 2> "$T/e"
check "fold: escaped stack records decoded into their keys" sh -c "
	cmp '$T/esc.exp' '$T/o' && grep -q 'esc.marple:5: bad %XX escape in frame at column 10' '$T/e' &&
	grep -q 'esc.marple:6: bad %XX escape in frame at column 12' '$T/e' && grep -q '2 malformed lines' '$T/e'"
marple-fold -H "$T/esc.marple" 2> "$T/e2" | sed 's/^h;//' > "$T/o2"
check "fold: escaped stack records: the same keys as parsed frame by frame" sh -c "
	cmp '$T/o' '$T/o2' && test \"\$(grep -c 'bad %XX' '$T/e2')\" = 2"
# A record whose frames as written are a key seen before is counted under
# it without a scan, only when that key needs no decoding: 'p%41' as
# written is "pA", though a folded line and '%2541' made a key 'p%41'.
{ echo '{"marple":1,"interface":"x","datatype":"stack","host":"h"}'
  echo '1#x;p%2541'; echo '2#x;p%41'; echo '4#x;p%2541'; echo '8#x;plain'; echo '16#x;plain'; } > "$T/seen.marple"
printf 'x;p%%41 16\n' > "$T/seen.folded"
printf 'x;p%%41 21\nx;pA 2\nx;plain 24\n' > "$T/seen.exp"
marple-fold "$T/seen.folded" "$T/seen.marple" > "$T/o" 2> "$T/e"
check "fold: a record written as a key that was decoded is decoded" sh -c "cmp '$T/seen.exp' '$T/o' || { cat '$T/o' '$T/e'; false; }"
# Records seen before are hashed as their ends are found, 16 bytes a step:
# frames of every length from 1 to 80 bytes, over 256 KiB (a read ends
# inside a record), fold as parsed frame by frame (-H: no record taken so).
awk 'BEGIN { print "{\"marple\":1,\"interface\":\"x\",\"datatype\":\"stack\",\"host\":\"h\"}"
	s = "main;run;parse_input;lex;next_token;read_char;fill;refill_buffer;sys_read"
	for (r = 0; r < 100; r++) for (n = 1; n <= 80; n++) print (r % 7 + 1) "#" substr(s, 1, n) }' > "$T/lens.marple"
marple-fold "$T/lens.marple" > "$T/o" 2> "$T/e"
marple-fold -H "$T/lens.marple" 2> /dev/null | sed 's/^h;//' > "$T/o2"
check "fold: records of 1-80 bytes hashed as read: the stacks as parsed one by one" sh -c "
	test \"\$(wc -l < '$T/o')\" -ge 70 && test \"\$(wc -c < '$T/lens.marple')\" -gt 262144 && cmp '$T/o' '$T/o2' ||
	{ wc -l '$T/o' '$T/o2'; diff '$T/o' '$T/o2' | head -5; cat '$T/e'; false; }"
# Folded lines read ahead are hashed as their ends are found, the hash of
# the stack taken from before its count: stacks of 1-120 bytes, counts of
# 1-20 digits, over 256 KiB, fold as --nolineno's line by line (no frame
# here has a line to strip): one line a stack, the same sums.
awk 'BEGIN { s = "main;run;parse_input;lex;next_token;read_char;fill;refill_buffer;sys_read;a_function_with_a_long_name"
	for (r = 0; r < 60; r++) for (n = 1; n <= 120; n++) print substr(s, 1, n) " " substr("98765432109876543210", 1, (r + n) % 20 + 1) }' > "$T/lens.folded"
marple-fold "$T/lens.folded" > "$T/o" 2> "$T/e"
marple-fold --nolineno "$T/lens.folded" > "$T/o2" 2> /dev/null
check "fold: folded lines of 1-120 bytes hashed as read: the stacks as read one by one" sh -c "
	test \"\$(wc -l < '$T/o')\" -ge 100 && test \"\$(wc -c < '$T/lens.folded')\" -gt 262144 && cmp '$T/o' '$T/o2' ||
	{ wc -l '$T/o' '$T/o2'; diff '$T/o' '$T/o2' | head -5; head -5 '$T/e'; false; }"
# Records seen before are taken many at a time from what is read: a bad
# line among them and a trailer's count are still said with their lines.
{ echo '{"marple":1,"interface":"x","datatype":"stack","host":"h"}'
  for i in 1 2 3 4 5; do echo '1#a;b'; echo '2#a;c%2Cd'; done
  echo 'x#a'; echo; echo '1#a;b'; echo '{"trailer":1,"records":11}'
  echo '{"marple":1,"interface":"x","datatype":"stack","host":"h"}'
  echo '1#a;b'; echo '1#a;b'; echo '{"trailer":1,"records":3}'; } > "$T/ahead.marple"
marple-fold "$T/ahead.marple" > "$T/o" 2> "$T/e"
check "fold: records taken ahead: counts, bad lines and trailers as one by one" sh -c "
	printf 'a;b 8\\na;c,d 10\\n' | cmp - '$T/o' && grep -q 'ahead.marple:12: stack weight' '$T/e' &&
	grep -q 'ahead.marple:19: trailer says 3 records, section 1 has 2' '$T/e' && grep -q '2 malformed lines' '$T/e' ||
	{ cat '$T/o' '$T/e'; false; }"
# Samples repeated (folded from the memo of whole samples, counted under
# the id noted the first time): each --diff input's own count; with -u
# a kernel thread's repeated samples are left out each time.
kt_sample() {	# COMM
	printf '%s 7 [000] 1.0: cpu-clock:\n\t 1 worker_thread ([kernel.kallsyms])\n\t 2 kthread ([kernel.kallsyms])\n\t 3 ret_from_fork ([kernel.kallsyms])\n\t 4 ret_from_fork_asm ([kernel.kallsyms])\n\n' "$1"
}
{ rep_sample burn; rep_sample burn; rep_sample burn; rep_sample burn; } > "$T/rep4.txt"
{ rep_sample burn; rep_sample burn; kt_sample kw; kt_sample kw; kt_sample kw; rep_sample burn; } > "$T/rep3.txt"
printf 'burn;main;Lcom/a/B:run;work 4 3\nkw;ret_from_fork_asm;ret_from_fork;kthread;worker_thread 0 3\n' > "$T/repd.exp"
marple-fold --diff "$T/rep4.txt" "$T/rep3.txt" > "$T/o" 2> "$T/e"
check "fold --diff: repeated perf samples counted per input" sh -c "cmp '$T/repd.exp' '$T/o' || { cat '$T/o' '$T/e'; false; }"
marple-fold -u "$T/rep3.txt" "$T/rep4.txt" > "$T/o" 2> "$T/e"
check "fold -u: a kernel thread's repeated samples left out each time" sh -c "
	grep -qx 'burn;main;Lcom/a/B:run;work 7' '$T/o' && test \"\$(wc -l < '$T/o')\" = 1 &&
	grep -q 'left out 3 stacks of kernel threads (3 samples: kw)' '$T/e' || { cat '$T/o' '$T/e'; false; }"
