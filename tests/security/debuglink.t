# A traced program's .gnu_debuglink names a FIFO beside it: the source
# frames' DWARF search (libdwfl's, now marple's own find_debuginfo) opened it
# with a blocking open() and root's capture hung for ever (exit 124 under
# timeout).  Every debug file is opened as the model opens a traced
# process's files: a FIFO is refused, counted (files_not_regular), never
# waited on; a real debug file beside the program is still found (an
# inlined function named from it).  Root, real BPF.
. "$MARPLE_TOP/tests/lib.sh"
plan 4
if ! is_root; then skip_rest "debuglink: BPF cases" "not root"; fi
if ! command -v objcopy > /dev/null 2>&1; then skip_rest "debuglink" "no objcopy (binutils)"; fi
CS="$MARPLE_BIN/marple-callstack"
mkdir -p "$T/fifo" "$T/real"
cat > "$T/p.c" <<'SRC'
#include <stdlib.h>
#include <time.h>
static volatile unsigned long sink;
__attribute__((noinline)) static void inner(void) { for (unsigned long i = 0; i < 100000; i++) sink += i; }
static inline void mid(void) { inner(); }
int main(int argc, char **argv) { time_t end = time(0) + atoi(argv[1]); while (time(0) < end) mid(); return 0; }
SRC
# build DIR: DIR/linked, its debug info in DIR/linked.dbg named by its debug link
build() {
	cc -O2 -g -fno-omit-frame-pointer -o "$1/linked" "$T/p.c" &&
	objcopy --only-keep-debug "$1/linked" "$1/linked.dbg" &&
	objcopy --strip-debug --add-gnu-debuglink="$1/linked.dbg" "$1/linked"
}
# capture DIR: 2 s of DIR/linked, under a timeout that a hang runs into
capture() {
	"$1/linked" 4 & wl=$!
	sleep 0.3
	timeout 30 "$CS" -F 299 -p "$wl" 2 > "$1/out" 2> "$1/err"; crc=$?
	kill "$wl" 2> /dev/null; wait "$wl" 2> /dev/null
}
build "$T/fifo" && rm "$T/fifo/linked.dbg" && mkfifo "$T/fifo/linked.dbg"
capture "$T/fifo"
check "debuglink: a FIFO at the debug link: no hang (exit $crc), a whole stream" \
	sh -c "[ $crc -eq 0 ] && marple-cat -q '$T/fifo/out'"
n=$(untag "$T/fifo/out" | grep -c '^[0-9]*#linked;.*main;inner$')
check "debuglink: ... its stacks written ($n)" test "$n" -ge 1
check "debuglink: ... the FIFO refused and counted (files_not_regular)" \
	grep -q '"files_not_regular":[1-9]' "$T/fifo/out"
build "$T/real"
capture "$T/real"
untag "$T/real/out" > "$T/real/untagged"
check "debuglink: a real debug file beside the program: the inlined mid named from it" \
	sh -c "[ $crc -eq 0 ] && grep -q '^[0-9]*#linked;.*main;mid;inner$' '$T/real/untagged'"
