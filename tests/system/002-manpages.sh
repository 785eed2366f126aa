#!/bin/bash
# 002-manpages: every daemon and tool has a man page, every page passes
# mandoc -Tlint (warnings included), every cross-reference (.Xr) names one
# of our pages or a system page on the short list below, and every option
# letter a program's --help shows is documented in its page.
. "$(dirname "$0")/lib.sh"
SRC=${NSR_SRC:?}
MAN=$SRC/man
command -v mandoc >/dev/null || die "mandoc is not installed (packaging/deps.sh --test)"

for page in "$MAN"/man[158]/*.[158]; do
	out=$(mandoc -Tlint -W warning "$page" 2>&1 | grep -v "referenced manual not found")
	if [ -z "$out" ]; then ok "lint $(basename "$page")"; else fail "lint $(basename "$page"): $out"; fi
done

# The system pages our pages refer to; any other .Xr must be one of ours.
SYSTEM_PAGES="epoll.7 fdatasync.2 flock.2 lstat.2 sqlite3.1 st.4 sync_file_range.2"

# xrefs PAGE - "name section" of every Xr on PAGE's macro lines.
xrefs() {
	awk '/^[.\047]/ {
		for (i = 1; i < NF; i++)
			if ($i == "Xr" || $i == ".Xr") print $(i + 1), $(i + 2)
	}' "$1" | sort -u
}

for page in "$MAN"/man[158]/*.[158]; do
	bad=""
	while read -r name sec; do
		[ -n "$sec" ] && [ -f "$MAN/man$sec/$name.$sec" ] && continue
		case " $SYSTEM_PAGES " in *" $name.$sec "*) continue ;; esac
		bad="$bad $name($sec)"
	done < <(xrefs "$page")
	if [ -z "$bad" ]; then ok "every .Xr in $(basename "$page") exists"
	else fail "$(basename "$page") refers to pages that do not exist:$bad"; fi
done

for dir in "$SRC"/daemons/*/ "$SRC"/tools/*/; do
	prog=$(basename "$dir")
	page=$(ls "$MAN"/man[18]/"$prog".[18] 2>/dev/null | head -n 1)
	if [ -z "$page" ]; then fail "$prog has a man page"; continue; fi
	ok "$prog has a man page"
	[ -x "$BIN/$prog" ] || { fail "$prog is built"; continue; }
	help=$("$BIN/$prog" --help 2>&1) || { fail "$prog --help exits 0"; continue; }
	missing=""
	for opt in $(grep -oE '(^|[ [])-[A-Za-z]' <<<"$help" | grep -oE '[A-Za-z]$' | sort -u); do
		grep -qE "Fl $opt\b|Fl [A-Za-z]*$opt[A-Za-z]*( |$)|Op Fl [A-Za-z]*$opt" "$page" ||
			missing="$missing -$opt"
	done
	if [ -z "$missing" ]; then ok "$prog: every --help option is in its page"
	else fail "$prog: options in --help but not in $(basename "$page"):$missing"; fi
done
nsr_done
