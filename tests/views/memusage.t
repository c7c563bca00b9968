# marple-stackplot's y axis in bytes (memleak's memusage section): labels
# in KiB, MiB or GiB as memtime's MiB, short enough to stay clear of the
# axis title (issue 39: "3000000000 bytes" was clipped and overlapped it).
. "$MARPLE_TOP/tests/lib.sh"
plan 5

mem() {	# Y1 Y2 Y3: a memusage section of one process
	printf '{"marple":1,"interface":"memusage","datatype":"point","units":{"x":"s","y":"bytes"},"labels":{"x":"time","y":"outstanding","info":"process"}}\n'
	printf '0,%s,java\n1,%s,java\n2,%s,java\n' "$@"
}
ylabels() { grep -o 'text-anchor="end" class="axis">[^<]*<' "$1" | sed 's/.*>\(.*\)</\1/'; }

mem 1500000000 2500000000 3100000000 | marple-stackplot > "$T/g.svg"
check "stackplot: GiB labels for GiB of bytes ($(ylabels "$T/g.svg" | tr '\n' ,))" \
	test "$(ylabels "$T/g.svg" | tr '\n' ,)" = "0 GiB,1 GiB,2 GiB,3 GiB,"
check "stackplot: the axis title says GiB" grep -q '>outstanding (GiB)<' "$T/g.svg"
mem 200000 700000 900000 | marple-stackplot > "$T/k.svg"
check "stackplot: KiB for KiB ($(ylabels "$T/k.svg" | tr '\n' ,))" sh -c "ylabels() { :; }; grep -q '>800 KiB<' '$T/k.svg'"
check "stackplot: no y label longer than 8 characters" sh -c \
	"[ \$(grep -o 'text-anchor=\"end\" class=\"axis\">[^<]*<' '$T/g.svg' '$T/k.svg' | sed 's/.*>\(.*\)</\1/' | awk 'length > 8' | wc -l) -eq 0 ]"
# another unit is left as it is: memtime's MiB
printf '{"marple":1,"interface":"memtime","datatype":"point","units":{"x":"s","y":"MiB"}}\n0,300,a\n1,500,a\n' | marple-stackplot > "$T/m.svg"
check "stackplot: MiB stays MiB" sh -c "grep -q '>500 MiB<' '$T/m.svg' && ! grep -q 'KiB' '$T/m.svg'"
