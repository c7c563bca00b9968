# Every name a lib/ archive exports carries its module's prefix (issue 14):
# the three libraries are linked into every program beside libbpf, libelf,
# libiberty and jansson, and an unprefixed global (xmalloc, fatal, header_str)
# either clashes with one of theirs or cannot be traced to its module by name.
# A module's prefix is its file name and '_' unless the table below says
# otherwise.
. "$MARPLE_TOP/tests/lib.sh"
plan 5

# The modules whose prefix is not their file name (one line each: module prefix...).
allowed() {
	cat <<'EOF'
util marple_
unwinddwarfwalk unwind_
ksyms syms_kernel_
mappedfiles mappedfiles_ mappedfile_
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
