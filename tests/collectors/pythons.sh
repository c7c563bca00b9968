# pythons.sh — the CPythons on this machine, for the Python tests and bench:
# pyenv's versions ($(pyenv root)/versions/*), /usr/bin/python3*, and those
# listed in MARPLE_PYTHONS (paths, blank-separated), each once (by its real
# path).  find_pythons prints "VERSION PATH" lines, sorted by version;
# pythons_absent prints which of the versions marple walks (3.6-3.13) none
# of them is (a user's machine may have none of pyenv's).
find_pythons() {
	pyroot=$( (pyenv root) 2>/dev/null || echo "${PYENV_ROOT:-$HOME/.pyenv}")
	for py in "$pyroot"/versions/*/bin/python /usr/bin/python3 /usr/bin/python3.[0-9]* ${MARPLE_PYTHONS:-}; do
		case $py in *-config) continue ;; esac
		[ -x "$py" ] || continue
		v=$("$py" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null) || continue
		echo "$v $(readlink -f "$py")"
	done | sort -t. -k1,1n -k2,2n -k3,3n -u | awk '!seen[$2]++'
}

pythons_absent() {
	have=$(find_pythons | awk '{ split($1, v, "."); print v[1] "." v[2] }' | sort -u)
	for m in 3.6 3.7 3.8 3.9 3.10 3.11 3.12 3.13; do
		echo "$have" | grep -qx "$m" || printf '%s ' "$m"
	done
}
