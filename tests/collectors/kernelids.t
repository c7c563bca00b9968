# The kernel's BTF ids a collector's load needs (lib/collect/kernelids.h):
# found in the kernel's BTF at the first start of a boot and kept in
# /run/marple; a later start reads none of the kernel's BTF (checked with
# that file hidden, an empty file mounted over it in a mount namespace of
# the test's own) and still attaches its tp_btf programs and calls its
# kfuncs.  The kept ids are bpftool's; a kept file of another boot, one
# others may write, or one without an id asked for is not trusted but made
# again; MARPLE_KERNEL_IDS=off reads the kernel's BTF and keeps nothing.
. "$MARPLE_TOP/tests/lib.sh"
plan 16
if ! is_root; then skip_rest "kernelids" "needs root"; fi
K=/run/marple/kernel-btf-ids
W="$MARPLE_BIN/workloads"

# ids_of OUT: the trailer's kernel_btf_ids
ids_of() { tail -n 1 "$1" | sed -n 's/.*"kernel_btf_ids":"\([a-z]*\)".*/\1/p'; }
# hidden CMD...: CMD with the kernel's BTF an empty file
hidden() { unshare -m sh -c 'mount --bind /dev/null /sys/kernel/btf/vmlinux && exec "$@"' hidden "$@"; }

rm -f "$K"
marple-cpusched 0.1 > "$T/first" 2> "$T/first.err"
check "kernelids: without the kept file, the kernel's BTF read" test "$(ids_of "$T/first")" = read
check "kernelids: ... and the ids kept, root's alone" test "$(stat -c '%u %a' "$K" 2>&1)" = "0 600"
marple-cpusched 0.1 > "$T/next" 2> "$T/next.err"
check "kernelids: the next start uses the kept ids" test "$(ids_of "$T/next")" = kept

# the ids are the kernel's, as bpftool (another reader of its BTF) lists them
bpftool btf dump file /sys/kernel/btf/vmlinux > "$T/btf" 2> /dev/null
cast=$(sed -n "s/^\[\([0-9]*\)\] FUNC 'bpf_rdonly_cast'.*/\1/p" "$T/btf")
check "kernelids: bpf_rdonly_cast's id is bpftool's (${cast:-none})" grep -qx "bpf_rdonly_cast ${cast:-0}" "$K"
sw=$(sed -n "s/^\[\([0-9]*\)\] TYPEDEF 'btf_trace_sched_switch'.*/\1/p" "$T/btf")
check "kernelids: sched_switch's tracepoint id is bpftool's (${sw:-none})" grep -qx "btf_trace_sched_switch ${sw:-x}" "$K"
n=$(grep -c "^\[[0-9]*\] TYPEDEF 'btf_trace_" "$T/btf")
k=$(grep -c "^btf_trace_" "$K")
check "kernelids: every tracepoint's id kept ($k of $n)" test "$k" -eq "$n" -a "$n" -gt 100

# 2. kept ids and the minimal BTF (corebtf.h, made in the background at a
# first start) are all a start needs of the kernel's BTF
for c in cpusched callstack; do
	i=0
	while [ $i -lt 40 ]; do
		"marple-$c" 0.05 2> /dev/null | tail -n 1 | grep -q '"core_btf":"minimal"' && break
		sleep 0.5; i=$((i + 1))
	done
done
hidden marple-cpusched -v 0.3 > "$T/hcs" 2> "$T/hcs.err"; rc=$?
check "kernelids: cpusched with the kernel's BTF hidden: exit 0, its tp_btf program attached" \
	sh -c "[ $rc -eq 0 ] && grep -q 'attached via tp_btf' '$T/hcs.err'"
n=$(grep -c ',sched_switch,' "$T/hcs")
check "kernelids: ... and saw switches ($n)" test "$n" -gt 10
check "kernelids: ... from the kept ids" test "$(ids_of "$T/hcs")" = kept
"$W/hotcold" 60 & wl=$!
exec_done "$wl" hotcold
hidden marple-callstack -F 499 -p "$wl" 2 > "$T/hc" 2> "$T/hc.err"; rc=$?
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
hot=$(untag "$T/hc" | grep -c 'main;run_round;hot_loop$')
check "kernelids: callstack with the kernel's BTF hidden: exit 0, hot_loop's whole stack ($hot stacks)" \
	test "$rc" -eq 0 -a "$hot" -ge 1
kver=$(uname -r | awk -F. '{ print $1 * 1000 + $2 }')
if [ "$kver" -ge 6017 ]; then
	check "kernelids: ... the task's fields through bpf_rdonly_cast, a kfunc (kernel $(uname -r))" \
		grep -q '"task_fields":"cast"' "$T/hc"
else
	check "kernelids: ... the trailer says how the task's fields were read" grep -Eq '"task_fields":"(cast|trusted)"' "$T/hc"
fi

# 3. a kept file not trusted, or lacking an id, is made again
sed '1s/boot .*/boot 00000000-0000-0000-0000-000000000000/' "$K" > "$T/other" && cat "$T/other" > "$K"
marple-cpusched 0.05 > "$T/ob" 2> /dev/null
check "kernelids: a file of another boot: not used" test "$(ids_of "$T/ob")" = read
check "kernelids: ... and made again for this boot" grep -q "^btf_trace_sched_switch ${sw:-x}\$" "$K"
chmod 666 "$K"
marple-cpusched 0.05 > "$T/ow" 2> /dev/null
check "kernelids: a file others may write: not used, made again" \
	test "$(ids_of "$T/ow")" = read -a "$(stat -c '%a' "$K")" = 600
grep -v '^btf_trace_sched_switch ' "$K" > "$T/lacking" && cat "$T/lacking" > "$K"
marple-cpusched 0.2 > "$T/ol" 2> "$T/ol.err"; rc=$?
check "kernelids: a file without sched_switch's id: the kernel's read, switches seen" \
	test "$rc" -eq 0 -a "$(ids_of "$T/ol")" = read -a "$(grep -c ',sched_switch,' "$T/ol")" -gt 10
rm -f "$K"
MARPLE_KERNEL_IDS=off marple-cpusched 0.05 > "$T/off" 2> /dev/null
check "kernelids: MARPLE_KERNEL_IDS=off: the kernel's BTF read, no file kept" \
	test "$(ids_of "$T/off")" = read -a ! -e "$K"
