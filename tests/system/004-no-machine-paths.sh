#!/bin/bash
# 004-no-machine-paths: no file of the source tree names a path that only
# exists on the machine it was written on: the workspace or a home
# directory's contents, as PATTERN below lists them.  Such a path works
# nowhere else; use a path relative to the script or the tree instead.
# An example path in a page or in test data (a save set of one user's home
# directory) is not under a home directory, so it does not match.
# Files: what git tracks, or, outside a git checkout, every file of the
# tree except what .gitignore leaves out (build directories).  Nothing is
# excluded but the line below that holds the pattern.
. "$(dirname "$0")/lib.sh"
SRC=${NSR_SRC:?}
cd "$SRC" || die "cannot enter $SRC"
self=tests/system/$(basename "$0")
# (spelled in pieces, so this file itself names no such path)
W=work
PATTERN="/$W/|/root/|/home/[^/[:space:]]+/|/Users/[^/[:space:]]+/"
own=$(grep -n "^PATTERN=" "$self" | cut -d: -f1)

n=$(nsr_tree_files | tr -cd '\0' | wc -c)
hits=$(nsr_tree_files | xargs -0 grep -nIHE "$PATTERN" -- 2>/dev/null |
	grep -v "^$self:$own:" | cut -c1-160)

check "found the tree's files ($n)" test "$n" -gt 100
if [ -z "$hits" ]; then
	ok "no file names a path of the build machine"
else
	fail "files name a path of the build machine:"
	sed 's/^/#   /' <<<"$hits"
fi
nsr_done
