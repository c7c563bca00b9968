# marple-push against a loopback receiver (tests/push/receiver.py) that keeps
# every request: Pyroscope's /ingest query and folded body as its API documents
# them, OTLP bodies decoded by protoc against the protos vendored at the pinned
# version (tests/push/proto), and servers that refuse, hang, fail then recover.
# No assertion on time: a run that would hang is ended by timeout(1) and fails.
. "$MARPLE_TOP/tests/lib.sh"
plan 70
command -v python3 >/dev/null 2>&1 || skip_rest "push" "no python3"
command -v protoc >/dev/null 2>&1 || skip_rest "push" "no protoc (scripts/install-deps installs protobuf-compiler)"
HERE="$MARPLE_TOP/tests/push"
PROTO="$HERE/proto"
REQ=opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest
SVC=opentelemetry/proto/collector/profiles/v1development/profiles_service.proto

RPID=
trap '[ -n "$RPID" ] && kill "$RPID" 2>/dev/null; rm -rf "$T"' EXIT
R="$T/recv"
mkdir -p "$R"
start_receiver() {	# [PORT]
	rm -f "$R/port"
	python3 "$HERE/receiver.py" "$R" ${1+"$1"} & RPID=$!
	i=0; while [ ! -s "$R/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	[ -s "$R/port" ]
}
stop_receiver() { kill "$RPID"; wait "$RPID" 2>/dev/null; RPID=; }
start_receiver || { fail "push: the receiver listens" "no port after 10 s"; exit 0; }
PORT=$(cat "$R/port")
URL="http://127.0.0.1:$PORT"
# a port nobody listens on: bind one, note it, let it go
DEAD=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# the nth request the receiver kept (1, 2, ...), and how many it has
reqs() { ls "$R" | grep -c '\.json$'; }
query() {	# N KEY: that query parameter's value
	python3 -c 'import json, sys; q = dict(json.load(open(sys.argv[1]))["query"]); print(q.get(sys.argv[2], "<none>"))' "$R/$1.json" "$2"
}
jfield() {	# N KEY [SUBKEY]
	python3 -c 'import json, sys; v = json.load(open(sys.argv[1]))[sys.argv[2]]; print(v[sys.argv[3]] if len(sys.argv) > 3 else v)' "$R/$1.json" "$2" ${3+"$3"}
}
decode() { protoc -I"$PROTO" --decode=$REQ "$SVC" < "$R/$1.body"; }
pull() {	# run with a hang guard: timeout's 124 fails the case that reads $rc
	timeout 120 marple-push "$@" > "$T/out" 2> "$T/err"; rc=$?
}

# A capture as marple collect writes one: a CPU section, an event section
# (not sent), off-CPU time in ns, outstanding bytes.
{
	echo '{"marple":1,"interface":"callstack","datatype":"stack","start_ns":1000000000,"wall_ns":1795262400250000000,"clock":"monotonic","host":"db1","kernel":"6.1.0","units":{"weight":"samples"},"options":{"frequency":99,"stacks":"both"}}'
	echo '297#python3;_start;main;Py_RunMain;_PyEval_EvalFrameDefault;compute_hot'
	echo '41#python3;_start;main;Py_RunMain;PyObject_Malloc'
	echo '12#bash;main;execute_command;waitpid;do_syscall_64_[k];schedule_[k]'
	echo '3#sshd;main;std::map<int%2C char>::find;operator new(unsigned long)'
	echo '1#odd;a%3Bb;caf%C3%A9'
	echo '{"trailer":1,"end_ns":11000000000,"records":5,"lost":0,"dropped":0,"ended":"duration"}'
	echo '{"marple":1,"interface":"cpusched","datatype":"event","start_ns":1000000000,"wall_ns":1795262400250000000,"host":"db1","units":{"time":"ns"}}'
	echo '1000000001,sched_switch,cpu0,prev_pid=1'
	echo '{"trailer":1,"end_ns":11000000000,"records":1,"lost":0,"dropped":0}'
	echo '{"marple":1,"interface":"offcpu","datatype":"stack","start_ns":1000000000,"wall_ns":1795262400250000000,"host":"db1","units":{"weight":"ns"}}'
	echo '5000000#bash;main;waitpid;schedule_[k]'
	echo '700#sshd;main;poll'
	echo '{"trailer":1,"end_ns":11000000000,"records":2,"lost":0,"dropped":0}'
	echo '{"marple":1,"interface":"memleak","datatype":"stack","start_ns":1000000000,"wall_ns":1795262400250000000,"host":"db 1/x","units":{"weight":"bytes"}}'
	echo '4096#app;main;malloc'
	echo '{"trailer":1,"end_ns":11000000000,"records":1,"lost":0,"dropped":0}'
} > "$T/cap.marple"

# --- Pyroscope
pull -H 'X-Scope-OrgID: team1' "$URL" "$T/cap.marple"
check "pyroscope: exit 0, nothing on stderr ($(head -c 200 "$T/err"))" test $rc -eq 0 -a ! -s "$T/err"
check "pyroscope: one request per stack section, the event section skipped (3)" test "$(reqs)" -eq 3
check "pyroscope: POST to /ingest" test "$(jfield 1 method) $(jfield 1 path)" = "POST /ingest"
check "pyroscope: name APP{host,interface}" test "$(query 1 name)" = "marple{host=db1,interface=callstack}"
# wall_ns 1795262400.25 s, 10 s long: from rounded down, until rounded up
check "pyroscope: from/until in Unix seconds from wall_ns and the length" \
	test "$(query 1 from) $(query 1 until)" = "1795262400 1795262411"
check "pyroscope: format=folded spyName=marple" test "$(query 1 format) $(query 1 spyName)" = "folded marple"
check "pyroscope: samples at the header's frequency" \
	test "$(query 1 units) $(query 1 sampleRate) $(query 1 aggregationType)" = "samples 99 sum"
marple-cat -s 0 "$T/cap.marple" | marple-fold | sort > "$T/want0"
sort "$R/1.body" > "$T/got0"
same "pyroscope: the body is the section's folded stacks (marple-fold's)" "$T/want0" "$T/got0"
check "pyroscope: ';' in a name is ':', decoded names (std::map<int, char>, café)" \
	sh -c "grep -qx 'odd;a:b;café 1' '$R/1.body' && grep -q 'std::map<int, char>::find' '$R/1.body'"
check "pyroscope: -H header sent, text/plain" \
	test "$(jfield 1 headers X-Scope-OrgID) $(jfield 1 headers Content-Type)" = "team1 text/plain"
check "pyroscope: ns weights as samples at 10^9 a second" \
	test "$(query 2 name) $(query 2 units) $(query 2 sampleRate)" = "marple{host=db1,interface=offcpu} samples 1000000000"
check "pyroscope: outstanding bytes averaged; a host's odd bytes become _" \
	test "$(query 3 name) $(query 3 units) $(query 3 aggregationType)" = "marple{host=db_1_x,interface=memleak} bytes average"
pull --app shop.cpu "$URL/ingest/" "$T/cap.marple"
check "pyroscope: --app, and a URL ending in /ingest not extended" \
	test $rc -eq 0 -a "$(jfield 4 path)" = "/ingest" -a "$(query 4 name)" = "shop.cpu{host=db1,interface=callstack}"

# --- pprof to Pyroscope: marple-pprof's profile (the same encoder, lib/render/pprof.c)
rm -f "$R"/*.json "$R"/*.body
marple-cat -s 0 "$T/cap.marple" > "$T/cpu.marple"
pull -f pprof "$URL" "$T/cpu.marple"
check "pprof: exit 0, POST /ingest format=pprof, no units or sampleRate (the profile has them)" \
	test "$rc $(jfield 1 path) $(query 1 format) $(query 1 units) $(query 1 sampleRate)" = "0 /ingest pprof <none> <none>"
check "pprof: name, from, until as for folded" \
	test "$(query 1 name) $(query 1 from) $(query 1 until)" = "marple{host=db1,interface=callstack} 1795262400 1795262411"
marple-pprof "$T/cpu.marple" > "$T/cpu.pb.gz"
same "pprof: the body is marple-pprof's file of the section, byte for byte" "$T/cpu.pb.gz" "$R/1.body"

# --- OTLP profiles
rm -f "$R"/*.json "$R"/*.body
pull -f otlp --app shop "$URL" "$T/cap.marple"
check "otlp: exit 0" test $rc -eq 0
check "otlp: POST /v1development/profiles, application/x-protobuf" \
	test "$(jfield 1 path) $(jfield 1 headers Content-Type)" = "/v1development/profiles application/x-protobuf"
decode 1 > "$T/otlp1.txt" 2> "$T/protoc.err"
check "otlp: protoc decodes it as ExportProfilesServiceRequest ($(head -c 200 "$T/protoc.err"))" test $? -eq 0 -a -s "$T/otlp1.txt"
python3 "$HERE/otlp-fold.py" < "$T/otlp1.txt" > "$T/otlp1"
sed -n 's/^stack //p' "$T/otlp1" | sort > "$T/got1"
marple-cat -s 0 "$T/cap.marple" | marple-fold | sed 's/a:b/a;b/' | sort > "$T/want1"
same "otlp: samples' stacks (through the dictionary) and values are the capture's" "$T/want1" "$T/got1"
check "otlp: every dictionary table starts with its zero value" test -z "$(grep bad-zero "$T/otlp1")"
check "otlp: sample type samples/count, period cpu/nanoseconds 10101010" \
	sh -c "grep -qx 'meta sample_type samples/count' '$T/otlp1' && grep -qx 'meta period cpu/nanoseconds 10101010' '$T/otlp1'"
check "otlp: time from wall_ns, duration from the trailer" grep -qx 'meta time 1795262400250000000 10000000000' "$T/otlp1"
check "otlp: resource service.name and host.name, the interface an attribute" sh -c "
	grep -qx 'meta resource service.name=shop' '$T/otlp1' && grep -qx 'meta resource host.name=db1' '$T/otlp1' &&
	grep -qx 'meta attribute marple.interface=callstack' '$T/otlp1'"
check "otlp: equal frames share one function (18 names, 18 + 1 functions)" \
	test "$(grep -c '^  function_table {' "$T/otlp1.txt")" -eq 19
decode 2 | python3 "$HERE/otlp-fold.py" > "$T/otlp2"
check "otlp: off-CPU ns as off_cpu/nanoseconds, its own frames only" sh -c "
	grep -qx 'meta sample_type off_cpu/nanoseconds' '$T/otlp2' && grep -qx 'stack bash;main;waitpid;schedule_\[k\] 5000000' '$T/otlp2' &&
	! grep -q compute_hot '$T/otlp2'"
decode 3 | python3 "$HERE/otlp-fold.py" > "$T/otlp3"
check "otlp: memleak bytes as inuse_space/bytes" grep -qx 'meta sample_type inuse_space/bytes' "$T/otlp3"
# an inlined native frame (kind inline): its function's source file and the
# line on its location; no mapping named by a source file
rm -f "$R"/*.json "$R"/*.body
{ echo '{"marple":1,"interface":"callstack","datatype":"stack","units":{"weight":"samples"}}'
  echo '9#inl;pipeline;stage2'
  echo '{"trailer":1,"records":1,"frames":{"pipeline":{"kind":"native","file":"/w/inl","offset":4400},"stage2":{"kind":"inline","file":"/src/inl.c","line":12}}}'
} > "$T/inl.marple"
pull -f otlp "$URL" "$T/inl.marple"
decode 1 > "$T/inl.txt"
python3 - "$T/inl.txt" > "$T/inl.check" <<'PYEOF'
import re, sys
t = open(sys.argv[1]).read()
strings = re.findall(r'string_table: "(.*)"', t)
funcs = [dict(re.findall(r'(\w+): (\d+)', f)) for f in re.findall(r'function_table \{(.*?)\}', t, re.S)]
maps = [dict(re.findall(r'(\w+): (\d+)', f)) for f in re.findall(r'mapping_table \{(.*?)\}', t, re.S)]
lines = re.findall(r'function_index: (\d+)\s+line: (\d+)', t)
for f in funcs:
    if "filename_strindex" in f:
        print("function", strings[int(f["name_strindex"])], strings[int(f["filename_strindex"])])
for fi, ln in lines:
    print("line", strings[int(funcs[int(fi)]["name_strindex"])], ln)
for m in maps:
    if "filename_strindex" in m:
        print("mapping", strings[int(m["filename_strindex"])])
PYEOF
check "otlp: an inlined frame's function has its source file, its location the line" sh -c "
	test $rc -eq 0 && grep -qx 'function stage2 /src/inl.c' '$T/inl.check' && grep -qx 'line stage2 12' '$T/inl.check' &&
	grep -qx 'mapping /w/inl' '$T/inl.check' && ! grep -q 'mapping /src' '$T/inl.check'"
# a frame named as the sample type is one string, not two
rm -f "$R"/*.json "$R"/*.body
printf '%s\n' '{"marple":1,"interface":"x","datatype":"stack","units":{"weight":"samples"}}' '7#count;samples' > "$T/names.marple"
pull -f otlp "$URL" "$T/names.marple"
decode 1 > "$T/names.txt"
python3 "$HERE/otlp-fold.py" < "$T/names.txt" > "$T/names"
check "otlp: a string the frames and the profile share is in the table once" sh -c "
	test $rc -eq 0 && test \$(grep -c 'string_table: \"count\"' '$T/names.txt') -eq 1 &&
	grep -qx 'meta sample_type samples/count' '$T/names' && grep -qx 'stack count;samples 7' '$T/names'"
# two programs' spin (marple-format(5), Frame identity): each its own mapping
# with its file and build id, its own address; the names print without tags
rm -f "$R"/*.json "$R"/*.body
printf '%s\n' '{"marple":1,"interface":"callstack","datatype":"stack","units":{"weight":"samples"}}' \
	'100#proga;main;spin' '249#progb;main#0000b0b0;spin#0000b0b1' \
	'{"trailer":1,"records":2,"frames":{"main":{"kind":"native","file":"/opt/proga","offset":4476},"spin":{"kind":"native","file":"/opt/proga","offset":4425},"main#0000b0b0":{"kind":"native","file":"/opt/progb","offset":4518},"spin#0000b0b1":{"kind":"native","file":"/opt/progb","offset":4466}},"build_ids":{"/opt/proga":"aaaa0001","/opt/progb":"bbbb0002"}}' \
	> "$T/two.marple"
pull -f otlp "$URL" "$T/two.marple"
decode 1 | python3 "$HERE/otlp-fold.py" --files > "$T/two"
decode 1 | python3 "$HERE/otlp-fold.py" > "$T/two-names"
decode 1 > "$T/two.txt"
check "otlp: same-named functions of two files keep their own mapping, build id and address" sh -c "
	test $rc -eq 0 && grep -qx 'stack proga;main@/opt/proga@aaaa0001@4476;spin@/opt/proga@aaaa0001@4425 100' '$T/two' &&
	grep -qx 'stack progb;main@/opt/progb@bbbb0002@4518;spin@/opt/progb@bbbb0002@4466 249' '$T/two'"
check "otlp: their names print without tags, each name one string" sh -c "
	grep -qx 'stack progb;main;spin 249' '$T/two-names' && ! grep -q b0b '$T/two' &&
	test \$(grep -c 'string_table: \"spin\"' '$T/two.txt') -eq 1"

# --- the server down (nobody listens on its port): kept in the spool, named
rm -f "$R"/*.json "$R"/*.body
stop_receiver
S="$T/spool"
pull --timeout 2 --retries 2 --backoff 0.1 -s "$S" -H 'Authorization: Bearer s3cret' "$URL" "$T/cap.marple"
check "refused: exit 1 (not a hang: timeout(1) would say 124)" test $rc -eq 1
check "refused: each section named on stderr with its spool file" \
	test "$(grep -c 'not sent (.*): kept in .*/spool/.*\.req$' "$T/err")" -eq 3
check "refused: the connection's failure said" grep -q "Couldn't connect to server" "$T/err"
check "refused: three requests in the spool, none with the -H header" \
	sh -c "test \$(ls '$S' | grep -c '\.req\$') -eq 3 && ! grep -rq s3cret '$S'"
check "refused: the spool is private (0700)" test "$(stat -c %a "$S")" = 700

# --- another run holding the spool's lock (flock(1) as a stand-in): this one
# sends its own and leaves the spool to it
start_receiver "$PORT" || fail "push: the receiver listens again on $PORT" "no port after 10 s"
flock "$S/.lock" timeout 120 marple-push -s "$S" "$URL" "$T/cpu.marple" > "$T/out" 2> "$T/err"; rc=$?
check "locked spool: exit 0, its own sent, the spool left alone and said" sh -c "
	test $rc -eq 0 && test \$(ls '$R' | grep -c '\.json\$') -eq 1 && test \$(ls '$S' | grep -c '\.req\$') -eq 3 &&
	grep -q 'another marple-push is sending what it holds: left to it' '$T/err'"
rm -f "$R"/*.json "$R"/*.body

# --- the next run, with the server back: spooled requests first, then the new one
pull -s "$S" "$URL" "$T/cap.marple"
check "recovered: exit 0, spool empty" sh -c "test $rc -eq 0 && test -z \"\$(ls '$S' | grep '\.req\$')\""
check "recovered: the three spooled, then the three new (6)" test "$(reqs)" -eq 6
sort "$R/1.body" > "$T/got-sp"
same "recovered: the spooled body is the section's folded stacks" "$T/want0" "$T/got-sp"
check "recovered: the spooled query kept (from, name)" \
	test "$(query 1 from) $(query 1 name)" = "1795262400 marple{host=db1,interface=callstack}"

# --- a server that accepts and never answers: each attempt ends at --timeout,
# and after one request has used its attempts the rest are not tried
rm -f "$R"/*.json "$R"/*.body
echo hang > "$R/mode"
pull --timeout 1 --retries 2 --backoff 0.1 -s "$S" "$URL" "$T/cap.marple"
check "hang: exit 1, not killed by the guard" test $rc -eq 1
check "hang: timeout said, the rest not tried" sh -c "
	grep -q 'Timeout was reached' '$T/err' && test \$(grep -c 'not tried: the server did not take an earlier request' '$T/err') -eq 2"
check "hang: all three kept" test "$(ls "$S" | grep -c '\.req$')" -eq 3

# --- 500, then recovering: still failing at the next run, drained at the one after
echo 'fail 100' > "$R/mode"
pull --retries 2 --backoff 0.1 --drain -s "$S"
check "500: --drain exits 1, the HTTP status and body said" sh -c "test $rc -eq 1 && grep -q 'HTTP 500: injected failure' '$T/err'"
check "500: still three in the spool" test "$(ls "$S" | grep -c '\.req$')" -eq 3
echo ok > "$R/mode"
rm -f "$R"/*.json "$R"/*.body
pull --drain -s "$S"
check "500 then up: --drain sends all three, exit 0, spool empty" \
	sh -c "test $rc -eq 0 && test \$(ls '$R' | grep -c '\.json\$') -eq 3 && test -z \"\$(ls '$S' | grep '\.req\$')\""
# one 500 within a request's attempts: retried, sent
echo 'fail 1' > "$R/mode"
pull --retries 2 --backoff 0.1 -s "$S" "$URL" "$T/cap.marple"
check "one 500 then 200: retried within the run, exit 0" sh -c "test $rc -eq 0 && test -z \"\$(ls '$S' | grep '\.req\$')\""

# --- a refusal is not retried or kept; the spool's bound drops the oldest
echo 'status 400' > "$R/mode"
pull -s "$S" "$URL" "$T/cap.marple"
check "400: exit 1, 'refused' said, nothing spooled" sh -c "
	test $rc -eq 1 && test \$(grep -c 'refused by the server (HTTP 400' '$T/err') -eq 3 && test -z \"\$(ls '$S' | grep '\.req\$')\""
pull --timeout 1 --retries 1 -s "$S" --spool-max 700 "http://127.0.0.1:$DEAD" "$T/cap.marple"
check "bound: the spool stays under --spool-max, the dropped named" sh -c "
	test $rc -eq 1 && grep -q 'dropped (.* bytes): the spool is over --spool-max 700' '$T/err' &&
	test \$(cat '$S'/*.req | wc -c) -le 700"
rm -rf "$S"
pull --timeout 1 --retries 1 "http://127.0.0.1:$DEAD" "$T/cap.marple"
check "no --spool: exit 1, each loss named" sh -c "test $rc -eq 1 && test \$(grep -c 'not kept: no --spool' '$T/err') -eq 3"

# --- a server that moved (3xx): followed, still a POST with its body; a few
# hops at most, never to another scheme
S3="$T/spool3"
for code in 302 308; do
	rm -f "$R"/*.json "$R"/*.body
	echo "redirect $code" > "$R/mode"
	pull -s "$S3" "$URL" "$T/cap.marple"
	check "$code: followed, exit 0, each request sent again as a POST to /moved/ingest" sh -c "
		test $rc -eq 0 && test \$(ls '$R' | grep -c '\.json\$') -eq 6 &&
		test '$(jfield 1 status) $(jfield 2 status) $(jfield 2 path)' = '$code 200 /moved/ingest' &&
		cmp -s '$R/1.body' '$R/2.body' && test -s '$R/2.body'"
done
rm -f "$R"/*.json "$R"/*.body
echo 'redirect 307 loop' > "$R/mode"
pull --retries 1 -s "$S3" "$URL" "$T/cap.marple"
check "3xx loop: 5 hops followed, then exit 1, said, kept" sh -c "
	test $rc -eq 1 && test \$(ls '$R' | grep -c '\.json\$') -eq 6 && grep -q 'redirects' '$T/err' &&
	test \$(ls '$S3' | grep -c '\.req\$') -eq 3"
rm -rf "$S3" "$R"/*.json "$R"/*.body
echo 'redirect 307 https' > "$R/mode"
pull --retries 1 "$URL" "$T/cap.marple"
check "3xx to another scheme: not followed, exit 1" sh -c "test $rc -eq 1 && test \$(ls '$R' | grep -c '\.json\$') -eq 1"

# --- -H headers go to the URL's host only (issue 40): a redirect to another
# host is not followed, and said
rm -rf "$S3" "$R"/*.json "$R"/*.body
echo 'redirect 307 otherhost' > "$R/mode"
pull --retries 1 -H 'X-Scope-OrgID: tenant-secret' "$URL" "$T/cap.marple"
check "3xx to another host: not followed (the -H header not sent there), exit 1, said" sh -c "
	test $rc -eq 1 && test \$(ls '$R' | grep -c '\.json\$') -eq 1 && grep -q tenant-secret '$R/1.json' &&
	grep -q 'moved to another scheme, host or port, not followed: http://localhost:' '$T/err'"
rm -f "$R"/*.json "$R"/*.body
echo 'redirect 307' > "$R/mode"
pull --retries 1 -H 'X-Scope-OrgID: tenant-secret' "$URL" "$T/cap.marple"
check "3xx to the same host: followed, the -H header sent again" sh -c "
	test $rc -eq 0 && test \$(grep -l tenant-secret '$R'/*.json | wc -l) -eq 6"

# --- the spool: mode 0600, no credentials in it; put back from the run's URL
S4="$T/spool4"
pull --timeout 1 --retries 1 -s "$S4" "http://marple:pw-secret@127.0.0.1:$DEAD" "$T/cap.marple"
check "spool: files 0600, the URL's password not written" sh -c "
	test $rc -eq 1 && test \$(ls '$S4' | grep -c '\.req\$') -eq 3 && test -z \"\$(find '$S4' -name '*.req' ! -perm 600)\" &&
	! grep -rq pw-secret '$S4'"
echo ok > "$R/mode"
rm -f "$R"/*.json "$R"/*.body
sed -i "s/:$DEAD/:$PORT/" "$S4"/*.req
pull -s "$S4" "http://marple:pw-secret@127.0.0.1:$PORT" "$T/cap.marple"
check "spool: sent by a run with credentials for its host: they go with it" sh -c "
	test $rc -eq 0 && test \$(ls '$R' | grep -c '\.json\$') -eq 6 && test \$(grep -l 'Basic bWFycGxlOnB3LXNlY3JldA==' '$R'/*.json | wc -l) -eq 6"

# --- a base URL with a query: the path goes before it
rm -f "$R"/*.json "$R"/*.body
pull "$URL/?token=T1" "$T/cap.marple"
check "a base URL with a query: /ingest?token=T1&name=..." sh -c "
	test $rc -eq 0 && test '$(jfield 1 path 2>/dev/null) $(query 1 token 2>/dev/null)' = '/ingest T1' && test '$(query 1 name)' != '<none>'"

# --- a 500 whose body never ends, cut at --timeout: the next attempt is
# made on a clean connection and sent
rm -f "$R"/*.json "$R"/*.body
echo 'endless 1' > "$R/mode"
pull --timeout 2 --retries 2 --backoff 0.1 "$URL" "$T/cap.marple"
check "endless 500: the next attempt sent, exit 0" sh -c "test $rc -eq 0 && ! grep -q 'Unsupported protocol' '$T/err'"
# ... and one whose body goes on past its Content-Length: the connection
# is left with bytes of the old answer, so the retry must not reuse it
# (it failed "Unsupported protocol": the bytes read as an HTTP/0.9 answer)
rm -f "$R"/*.json "$R"/*.body
echo 'overlong 1' > "$R/mode"
pull --timeout 2 --retries 2 --backoff 0.1 "$URL" "$T/cap.marple"
check "overlong 500: the retry on a new connection, all sent, exit 0" sh -c \
	"test $rc -eq 0 && test $(reqs) -ge 4 && ! grep -q 'Unsupported protocol' '$T/err'"

# --- the weight's meaning comes from the header, never the collector's name:
# a collector not named memleak that holds bytes in use is averaged too
echo ok > "$R/mode"
rm -f "$R"/*.json "$R"/*.body
printf '%s\n%s\n%s\n' '{"marple":1,"interface":"heldmem","datatype":"stack","wall_ns":1795262400000000000,"host":"h","units":{"weight":"bytes","measure":"inuse_space","over_time":"average"}}' \
	'4096#app;main;hold' '{"trailer":1,"records":1,"lost":0,"dropped":0}' > "$T/held.marple"
pull "$URL" "$T/held.marple"
check "pyroscope: bytes in use by the header's over_time, whatever the interface: average" \
	test "$rc $(query 1 units) $(query 1 aggregationType)" = "0 bytes average"
rm -f "$R"/*.json "$R"/*.body
pull -f otlp "$URL" "$T/held.marple"
decode 1 | python3 "$HERE/otlp-fold.py" > "$T/otlp-held" 2> /dev/null
check "otlp: the header's measure is the sample type (inuse_space/bytes)" grep -qx 'meta sample_type inuse_space/bytes' "$T/otlp-held"

# --- inputs and usage
printf 'bash;main 3\n' > "$T/folded.txt"
pull "$URL" "$T/folded.txt"
check "input: folded text refused with FILE:LINE, exit 1" sh -c "test $rc -eq 1 && grep -q '^marple-push: .*folded.txt:1: not a marple stream' '$T/err'"
# a complete stack section, then binary data: the input is unusable (marple-format(5)),
# and none of it is sent
rm -f "$R"/*.json "$R"/*.body
{ marple-cat -s 0 "$T/cap.marple"; printf 'x\000y\n'; } > "$T/nul.marple"
pull "$URL" "$T/nul.marple"
check "input: an unusable stream: exit 1, said, nothing sent" \
	sh -c "test $rc -eq 1 && grep -q 'nul.marple:.*nothing of it sent' '$T/err' && test \$(ls '$R' | grep -c '\.json\$') -eq 0"
marple-cat -s 1 "$T/cap.marple" > "$T/events.marple"
pull "$URL" "$T/events.marple"
check "input: no stack section: exit 1, said" sh -c "test $rc -eq 1 && grep -q 'no stack sections' '$T/err'"
expect_exit "usage: no URL exits 2" 2 "no URL" marple-push
expect_exit "usage: --format other exits 2" 2 "not pyroscope, pprof or otlp" marple-push -f json "$URL"
expect_exit "usage: --drain without --spool exits 2" 2 "needs --spool" marple-push --drain
check "usage: -h names the pinned OTLP proto version" sh -c "marple-push -h | grep -q 'opentelemetry-proto v1.9.0'"
