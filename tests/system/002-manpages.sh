#!/bin/bash
# 002-manpages: every daemon and tool has a man page, every page passes
# mandoc -Tlint (warnings included), and every option letter a program's
# --help shows is documented in its page.
. "$(dirname "$0")/lib.sh"
SRC=${NSR_SRC:?}
MAN=$SRC/man
command -v mandoc >/dev/null || die "mandoc is not installed (packaging/deps.sh --test)"

for page in "$MAN"/man[158]/*.[158]; do
	out=$(mandoc -Tlint -W warning "$page" 2>&1 | grep -v "referenced manual not found")
	if [ -z "$out" ]; then ok "lint $(basename "$page")"; else fail "lint $(basename "$page"): $out"; fi
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
