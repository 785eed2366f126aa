#!/bin/bash
# 006-source-rules: rules of the tree that a reader should not have to
# trust (README, "Source rules"):
#   - library code (src/) never includes nsr/xmalloc.h: it returns
#     NSR_ERR_NOMEM instead of deciding that its caller dies.
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

nsr_done
