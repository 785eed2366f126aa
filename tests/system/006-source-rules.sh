#!/bin/bash
# 006-source-rules: rules of the tree that a reader should not have to
# trust (README, "Source rules"):
#   - library code (src/) never includes nsr/xmalloc.h: it returns
#     NSR_ERR_NOMEM instead of deciding that its caller dies;
#   - C sources, headers and rpcgen files fit 80 columns (tabs of 8;
#     .clang-format says the same).
. "$(dirname "$0")/lib.sh"
SRC=${NSR_SRC:?}
cd "$SRC" || die "cannot enter $SRC"

lib=$(nsr_tree_files | grep -z '^src/.*\.[ch]$' | xargs -0 \
	grep -lE '#include +"nsr/xmalloc\.h"' -- 2>/dev/null)
n=$(nsr_tree_files | grep -zc '^src/.*\.c$')
check "found the library's sources ($n)" test "$n" -gt 50
if [ -z "$lib" ]; then
	ok "no library source includes nsr/xmalloc.h"
else
	fail "library sources that include nsr/xmalloc.h:"
	sed 's/^/#   /' <<<"$lib"
fi

long=$(nsr_tree_files | grep -zE '\.(c|h|x)$' | while IFS= read -r -d '' f
do
	expand -t8 -- "$f" | awk -v f="$f" \
		'length > 80 { printf "%s:%d: %d columns\n", f, NR, length }'
done)
if [ -z "$long" ]; then
	ok "every C line fits 80 columns"
else
	fail "$(wc -l <<<"$long") C lines are wider than 80 columns" \
		"(clang-format -i --lines=N:N FILE fixes one):"
	head -40 <<<"$long" | sed 's/^/#   /'
fi
nsr_done
