# Every BPF program's deepest chain of calls fits in the kernel's 512 bytes
# of BPF stack, counted as the verifier counts it where it gives a program no
# private stack: each function's frame (its deepest r10 slot, rounded up to
# 16) summed down the chain, callbacks (bpf_loop, bpf_find_vma) included.
# Linux 6.18.44 stopped giving uprobe programs a private stack, and
# marple-mallocstacks and marple-memleak failed to load ("combined stack
# size of 6 calls is 528"): a program that needs one loads on some kernels
# only.  Read from the objects, with no kernel: the check holds on every
# machine, whatever its kernel gives.
. "$MARPLE_TOP/tests/lib.sh"
OBJS="callstack cpusched diskblockrq disklat ipc ksymname lock mallocstacks memevents memleak offcpu taskcast vmaiter"
plan 15
if ! command -v llvm-objdump > /dev/null 2>&1 || ! command -v llvm-readelf > /dev/null 2>&1; then
	skip_rest "bpfstack" "llvm-objdump and llvm-readelf not installed (scripts/install-deps installs llvm)"
fi

# chains OBJ: "BYTES PROGRAM CHAIN" for each program (a function outside .text)
chains() {
	llvm-readelf -s "$1" | awk '$4 == "FUNC" { print $8 }' > "$T/funcs"
	llvm-objdump -dr --no-show-raw-insn "$1" > "$T/dis"
	awk '
	function hexval(h,   i, v) {
		v = 0
		for (i = 1; i <= length(h); i++)
			v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
		return v
	}
	function worst(f,   d, c, k, best, w, path) {
		d = int((depth[f] + 15) / 16) * 16
		onpath[f] = 1
		best = 0; path = ""
		for (k = 1; k <= ncalls[f]; k++) {
			c = calls[f, k]
			if (c == "" || onpath[c])
				continue
			w = worst(c)
			if (w > best) { best = w; path = chain }
		}
		onpath[f] = 0
		chain = f ":" d (path == "" ? "" : " " path)
		return d + best
	}
	FNR == NR { isfunc[$1] = 1; next }
	/^Disassembly of section / { sec = $4; sub(/:$/, "", sec); next }
	/^[0-9a-f]+ <[^>]+>:$/ {
		name = $2; gsub(/[<>:]/, "", name)
		if (name in isfunc) {
			cur = name; section[cur] = sec; order[++nf] = cur
			if (sec == ".text") at[hexval($1)] = cur
		}
		next
	}
	cur == "" { next }
	{
		line = $0
		while (match(line, /r10 - [0-9]+\)/)) {
			off = substr(line, RSTART + 6, RLENGTH - 7) + 0
			if (off > depth[cur]) depth[cur] = off
			line = substr(line, RSTART + RLENGTH)
		}
	}
	/ = [0-9]+ ll$/ { imm = $(NF - 1) + 0; next }
	/R_BPF_64_32/ && ($NF in isfunc) { calls[cur, ++ncalls[cur]] = $NF; next }
	/R_BPF_64_64[ \t]+\.text$/ { calls[cur, ++ncalls[cur]] = "@" imm; next }
	END {
		for (f in ncalls)
			for (k = 1; k <= ncalls[f]; k++)
				if (substr(calls[f, k], 1, 1) == "@") {
					o = substr(calls[f, k], 2) + 0
					calls[f, k] = (o in at) ? at[o] : ""
				}
		for (i = 1; i <= nf; i++)
			if (section[order[i]] != ".text") {
				b = worst(order[i])
				print b, order[i], chain
			}
	}' "$T/funcs" "$T/dis"
}

for o in $OBJS; do
	f="$MARPLE_BIN/bpf/$o.bpf.o"
	if [ ! -s "$f" ]; then
		fail "bpfstack: $o: every program's chain of calls within 512 bytes" "$f missing"
		continue
	fi
	chains "$f" | sort -n > "$T/$o.chains"
	check "bpfstack: $o: every program's chain of calls within 512 bytes ($(tail -n 1 "$T/$o.chains" | cut -d ' ' -f 1) at most)" \
		awk '$1 > 512 { print "over 512:", $0; bad = 1 } END { exit bad || NR == 0 }' "$T/$o.chains"
done
# the reading itself: the sampling program's walk is found, callbacks and all
# (the frame callback unwind_frame is reached only through bpf_loop)
check "bpfstack: callstack's deepest chain goes through the unwinder's frame callback" \
	grep -q '^[0-9]* do_sample do_sample:[0-9]* .*unwind_frame:' "$T/callstack.chains"
deep=$(awk '$2 == "do_sample" { print $1 }' "$T/callstack.chains")
check "bpfstack: callstack's deepest chain is over 256 bytes (${deep:-none}): frames are read" test "${deep:-0}" -gt 256
