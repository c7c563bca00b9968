# Every name a lib/ archive exports carries its module's prefix (issue 14):
# the three libraries are linked into every program beside libbpf, libelf,
# libiberty and jansson, and an unprefixed global (xmalloc, fatal, header_str)
# either clashes with one of theirs or cannot be traced to its module by name.
# A module's prefix is its file name and '_' unless the table below says
# otherwise.
. "$MARPLE_TOP/tests/lib.sh"
plan 7

# The modules whose prefix is not their file name (one line each: module prefix...).
allowed() {
	cat <<'EOF'
util marple_
ksyms syms_kernel_
symswalked syms_
mappedfiles mappedfiles_ mappedfile_
unwinddwarfwalk unwind_
EOF
}

# offenders LISTING: the lines "module symbol" of LISTING (nm -A output) whose
# symbol lacks its module's prefix.  Names starting with "__" belong to the
# compiler and the sanitizers' runtime, not to a module.
offenders() {
	allowed > "$T/allowed"
	awk 'NR == FNR { for (i = 2; i <= NF; i++) pre[$1] = pre[$1] " " $i; next }
		{
			n = split($1, part, ":"); obj = part[n - 1]; sym = $NF
			sub(/\.o$/, "", obj)
			if (sym ~ /^__/) next
			list = (obj in pre) ? pre[obj] : " " obj "_"
			k = split(list, p, " "); ok = 0
			for (i = 1; i <= k; i++)
				if (p[i] != "" && index(sym, p[i]) == 1) ok = 1
			if (!ok) print obj, sym
		}' "$T/allowed" "$1"
}

for layer in format render collect; do
	a="$MARPLE_BIN/libmarple-$layer.a"
	if [ ! -r "$a" ]; then fail "lib-names: $layer" "$a is missing"; continue; fi
	nm -A -g --defined-only "$a" > "$T/$layer.nm" 2> "$T/$layer.err"
	if [ $? -ne 0 ] || [ ! -s "$T/$layer.nm" ]; then
		fail "lib-names: $layer" "nm gave nothing: $(head -c 200 "$T/$layer.err")"
		continue
	fi
	offenders "$T/$layer.nm" > "$T/$layer.bad"
	if [ -s "$T/$layer.bad" ]; then
		fail "lib-names: $layer exports only prefixed names" \
			"$(wc -l < "$T/$layer.bad") without their module's prefix: $(head -n 8 "$T/$layer.bad" | tr '\n' ',')"
	else
		pass "lib-names: $layer exports only prefixed names"
	fi
done

# Every lib/ source is in an archive, so none escapes the check above.
missing=
for c in "$MARPLE_TOP"/lib/*/*.c; do
	m=$(basename "$c" .c)
	cat "$T"/*.nm 2>/dev/null | grep -q ":$m\.o:" || missing="$missing $m"
done
if [ -z "$missing" ]; then pass "lib-names: every lib module is checked"
else fail "lib-names: every lib module is checked" "no exported name seen for:$missing"; fi

# The check itself: a planted unprefixed global and a foreign prefix are found,
# the allowed ones pass.
cat > "$T/planted.nm" <<'EOF'
x/libmarple-format.a:util.o:0000000000000000 T marple_fatal
x/libmarple-format.a:util.o:0000000000000010 T fatal
x/libmarple-format.a:stream.o:0000000000000020 T stream_reader_new
x/libmarple-format.a:stream.o:0000000000000030 T header_str
x/libmarple-render.a:heatgrid.o:0000000000000040 T hg_new
x/libmarple-render.a:xml.o:0000000000000050 B __asan_gen_x
EOF
offenders "$T/planted.nm" > "$T/planted.bad"
printf 'util fatal\nstream header_str\nheatgrid hg_new\n' > "$T/planted.want"
same "lib-names: the check finds unprefixed names" "$T/planted.want" "$T/planted.bad"

# No dead exports (issue 33): every function a lib/ archive exports is used
# by another object -- another module, a program -- or by a test's C source
# (unit tests, fuzz targets, stand-in programs); one used only in its own file is static, one used nowhere is
# gone.  unused_exports NM USES: the "module symbol" lines of NM (nm -A
# output of the archives) whose function no object's undefined symbols
# (USES, one name a line) and no test source names.
unused_exports() {
	awk '$(NF - 1) == "T" { n = split($1, part, ":"); obj = part[n - 1]; sub(/\.o$/, "", obj); print obj, $NF }' "$1" |
	while read -r obj sym; do
		grep -qx "$sym" "$2" && continue
		grep -rqw --include='*.c' "$sym" "$MARPLE_TOP/tests" && continue
		echo "$obj $sym"
	done
}
find "$MARPLE_BIN" -name '*.o' -path "$MARPLE_BIN/*" ! -path "$MARPLE_BIN/sanitize/*" -exec nm -u {} + 2>/dev/null |
	awk 'NF == 2 && $1 == "U" { print $2 }' | sort -u > "$T/uses"
cat "$T"/format.nm "$T"/render.nm "$T"/collect.nm > "$T/all.nm" 2>/dev/null
if [ ! -s "$T/uses" ] || [ ! -s "$T/all.nm" ]; then
	fail "lib-names: no exported function without a caller" "no object files or archives under $MARPLE_BIN"
else
	unused_exports "$T/all.nm" "$T/uses" > "$T/unused"
	if [ -s "$T/unused" ]; then
		fail "lib-names: no exported function without a caller" \
			"$(wc -l < "$T/unused") nothing else uses (make them static or remove them): $(head -n 12 "$T/unused" | tr '\n' ',')"
	else
		pass "lib-names: no exported function without a caller"
	fi
fi
# The check itself: a planted export nobody uses is found, a used one is not.
printf 'x/libmarple-format.a:util.o:0000000000000000 T marple_used_by_a_program\nx/libmarple-format.a:util.o:0000000000000010 T marple_nobody_calls_this\n' > "$T/planted-dead.nm"
echo marple_used_by_a_program > "$T/planted-uses"
unused_exports "$T/planted-dead.nm" "$T/planted-uses" > "$T/planted-dead.out"
echo "util marple_nobody_calls_this" > "$T/planted-dead.want"
same "lib-names: the check finds an export nothing uses" "$T/planted-dead.want" "$T/planted-dead.out"
