# What a traced process writes cannot poison root's unwind cache (issue 40):
# nobody gives a file of its own the build-id of a program root has not
# cached yet and runs it; root's capture of nobody's process then of the
# real program shows the program's whole stacks, not a table built from
# nobody's bytes.  And the vdso's table comes from the collector's own
# copy: a process that rewrote its vdso (through /proc/self/mem) does not
# change the stacks root sees in another process's clock_gettime.
. "$MARPLE_TOP/tests/lib.sh"
plan 4
. "$MARPLE_TOP/tests/collectors/stacks.sh"
if ! is_root; then
	skip_rest "security unwind cache" "not root"
fi
CS="$MARPLE_BIN/marple-callstack"
# the disk cache alone: tables another collector running now pinned would
# be taken from the kernel, not the cache (sharedtables.t tests that)
export MARPLE_SHARED_TABLES=off
cp "$MARPLE_BIN/workloads/nofp" "$T/victim"
id=$(readelf -n "$T/victim" | sed -n 's/.*Build ID: *//p')
# nobody's corner: $T traversable, pub nobody's
chmod 711 "$T"
mkdir -m 755 "$T/pub"
chown 65534:65534 "$T/pub"
printf 'int main(void) { for (volatile unsigned long i = 0;; i++) ; }\n' > "$T/forge.c"
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"	# run as $NOBODY CMD (split)
$NOBODY cc -O0 -o "$T/pub/forged" "$T/forge.c" -Wl,--build-id=0x"$id" 2> "$T/cc.err"
fid=$(readelf -n "$T/pub/forged" 2>/dev/null | sed -n 's/.*Build ID: *//p')
if [ -z "$id" ] || [ "$fid" != "$id" ]; then
	skip_rest "security unwind cache" "cannot forge a build-id here ($(head -c 200 "$T/cc.err"))"
fi
C=$T/cache
# capture PID for 1.5 s with the cache in $C into NAME.out
capture() {
	MARPLE_CACHE_DIR="$C" "$CS" -F 299 -p "$2" 1.5 > "$T/$1.out" 2> "$T/$1.err"
}
$NOBODY "$T/pub/forged" & f=$!
sleep 0.3
capture forged "$f"
kill "$f"; wait "$f" 2>/dev/null
check "unwind cache: nobody's forged file: no entry made from it" \
	sh -c "[ -z \"\$(find '$C/unwind' -name 'b-$id*' -o -name 'f-$(stat -c %D-%i "$T/pub/forged")')\" ]"
# victim_case NAME TITLE CACHED: the real program captured; pass when 95% of
# its weight has the whole chain (and, CACHED 1, a file came from the cache)
victim_case() {
	"$T/victim" 4 & v=$!
	sleep 0.3
	capture "$1" "$v"
	kill "$v" 2>/dev/null; wait "$v" 2>/dev/null
	whole=$(weight "$T/$1.out" '^victim;_start;__libc_start_main;(.*;)?main;chain_a;chain_b;chain_c(;|$)')
	all=$(weight "$T/$1.out" '.')
	cached=$(trailer_num "$T/$1.out" files_from_cache)
	if [ "$all" -gt 20 ] && [ $((whole * 100)) -ge $((all * 95)) ] && [ "${cached:-0}" -ge "$3" ]; then
		pass "$2 ($whole of $all)"
	else
		fail "$2" "$whole of $all, ${cached:-?} from the cache: $(sort -t'#' -k1 -rn "$T/$1.out" | head -n 2 | cut -c1-150 | tr '\n' ' ')"
	fi
}
victim_case victim "unwind cache: the real program's stacks whole after the forgery" 0
victim_case victim2 "unwind cache: ... and read back from the cache" 1

# the vdso: nobody's process zeroes its copy's .eh_frame, root's loops in clock_gettime
cat > "$T/vdso.c" <<'EOC'
#include <elf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>
/* rewrite: every FDE of our vdso's .eh_frame made to say nothing (its
 * instructions DW_CFA_nop: the CIE's CFA = rsp + 8 at every address, wrong
 * past a push), through /proc/self/mem; 0: cannot */
static int rewrite(void)
{
	unsigned char *v = (unsigned char *)getauxval(AT_SYSINFO_EHDR);
	Elf64_Ehdr *e = (Elf64_Ehdr *)v;
	Elf64_Shdr *sh = (Elf64_Shdr *)(v + e->e_shoff);
	const char *names = (const char *)v + sh[e->e_shstrndx].sh_offset;
	int fd = open("/proc/self/mem", O_RDWR), done = 0;
	for (int i = 0; fd >= 0 && i < e->e_shnum; i++)
		if (strcmp(names + sh[i].sh_name, ".eh_frame") == 0) {
			unsigned char *p = malloc(sh[i].sh_size), *q = p, *end = p + sh[i].sh_size;
			memcpy(p, v + sh[i].sh_offset, sh[i].sh_size);
			for (unsigned len; q + 17 <= end && (memcpy(&len, q, 4), len != 0 && len < 0xfffffff0u); q += 4 + len) {
				int id;
				memcpy(&id, q + 4, 4);
				/* an FDE: pc_begin, pc_range (sdata4), augmentation length 0 */
				if (id != 0 && q[16] == 0 && q + 4 + len <= end)
					memset(q + 17, 0, len - 13);
			}
			done = pwrite(fd, p, sh[i].sh_size, (off_t)(unsigned long)(v + sh[i].sh_offset)) == (ssize_t)sh[i].sh_size;
		}
	return done;
}
__attribute__((noinline)) void tick_loop(void)
{
	struct timespec t;
	for (;;)
		clock_gettime(CLOCK_MONOTONIC, &t);
}
int main(int argc, char **argv)
{
	if (argc > 1 && !rewrite())
		return 3;
	tick_loop();
}
EOC
cc -O1 -o "$T/pub/vdso" "$T/vdso.c"
C=$T/cache2	# a cold cache: the vdso not seen before the rewritten one
$NOBODY "$T/pub/vdso" rewrite & a=$!
sleep 0.3
if ! running "$a"; then
	skip "unwind cache: the vdso rewritten by nobody: root's stacks through it whole" "cannot rewrite the vdso here"
	exit 0
fi
capture rewritten "$a"
kill "$a"; wait "$a" 2>/dev/null
"$T/pub/vdso" & v=$!
sleep 0.3
capture clock "$v"
kill "$v"; wait "$v" 2>/dev/null
whole=$(weight "$T/clock.out" '^vdso;(.*;)?main;tick_loop(;|$)')
all=$(weight "$T/clock.out" '.')
if [ "$all" -gt 20 ] && [ $((whole * 100)) -ge $((all * 90)) ]; then
	pass "unwind cache: the vdso rewritten by nobody: root's stacks through it whole ($whole of $all)"
else
	fail "unwind cache: the vdso rewritten by nobody: root's stacks through it whole" "$whole of $all: $(sort -t'#' -k1 -rn "$T/clock.out" | head -n 3 | tr '\n' ' ')"
fi
