#!/bin/bash
# 403-scanner-index: scanner -i rebuilds client file index entries from
# the save streams on a volume, with no media database and no index to
# start from; a save set whose data is not a save stream is refused and
# leaves nothing in the index.
. "$(dirname "$0")/lib.sh"
nsr_setup 403-scanner-index
T=$BIN/mmdtest
H=127.0.0.1

nsr_start nsrexecd -s
nsr_wait_registered nsrsnmd
nsr_start nsrindexd
nsr_wait_registered nsrindexd

TREE=$ROOT/tree
mkdir -p "$TREE/sub"
printf 'hello\n' >"$TREE/a.txt"
head -c 300000 /dev/urandom >"$TREE/sub/b.bin"
ln -s a.txt "$TREE/link"
head -c 5000 /dev/urandom >"$ROOT/junk"

read -r P PID < <("$T" mover $H vtape "$ROOT/vt1" vt1)
check "label a vtape" "$T" label $H "$P" IX001 Default 32768
check "save a tree as save set 501" "$T" savetree $H "$P" 501 host1 "$TREE"
check "save raw bytes as save set 502" \
	"$T" save $H "$P" 502 host1 /junk <"$ROOT/junk"
check "the index knows nothing of the tree yet" \
	test -z "$("$T" ixfind $H host1 "$TREE/sub/b.bin" 2>/dev/null)"

out=$("$BIN/scanner" -i -S 501 -s $H "$ROOT/vt1" 2>&1)
rc=$?
check "scanner -i -S 501 exits 0" test $rc -eq 0
check "and reports the entries" grep -q "save set 501 (host1:$TREE): 5 index entries rebuilt" <<<"$out"
check "the index has the big file with its size" \
	grep -q "^501 300000 $TREE/sub/b.bin$" <("$T" ixfind $H host1 "$TREE/sub/b.bin")
check "and the symlink" grep -q "^501 .* $TREE/link$" <("$T" ixfind $H host1 "$TREE/link")

out=$("$BIN/scanner" -i -S 502 -s $H "$ROOT/vt1" 2>&1)
rc=$?
check "scanner -i of raw bytes exits 1" test $rc -eq 1
check "saying the save set is not indexed" grep -q "save set 502 .* not indexed" <<<"$out"
check "and leaves nothing in the index" \
	test -z "$("$T" ixfind $H host1 /junk 2>/dev/null)"
nsr_done
