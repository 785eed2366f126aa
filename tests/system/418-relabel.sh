#!/bin/bash
# 418-relabel: relabeling tells the truth.  Two save sets on an AFTD
# volume; a relabel without -y is refused; with -y the volume starts
# empty and its save sets, whose only copy it was, leave the media
# database and the file index in the same step (logged with the count):
# mminfo lists none of them, recover -S says the save set is not in the
# media database (no request to mount a volume that no longer exists),
# and browsing finds nothing.  A new save then works.
. "$(dirname "$0")/lib.sh"
nsr_setup 418-relabel
S=127.0.0.1
W=$ROOT/work
mkdir -p "$W/aftd1" "$W/a" "$W/b" "$W/out"
nsr_start_datazone
nsr_device aftd1 adv_file "$W/aftd1"
check "label Disk.001" "$BIN/nsrmm" -s $S -q -l -y -b Default -f aftd1 Disk.001
echo alpha >"$W/a/f"; echo beta >"$W/b/f"
check "save a" "$BIN/save" -s $S -q "$W/a"
check "save b" "$BIN/save" -s $S -q "$W/b"
SSA=$("$BIN/mminfo" -s $S -q "name=$W/a" -r ssid 2>/dev/null |
	awk '$1 ~ /^[0-9]+$/ {print $1; exit}')
check "mminfo lists a (ssid $SSA)" test -n "$SSA"

out=$("$BIN/nsrmm" -s $S -l -b Default -f aftd1 Disk.001 2>&1 </dev/null)
check "a relabel without -y is refused" grep -q "use -y to relabel it anyway" <<<"$out"
check "relabel with -y" "$BIN/nsrmm" -s $S -q -l -y -b Default -f aftd1 Disk.001
check "the log counts the save sets that went with it" \
	grep -q "relabel of volume Disk.001: 2 save set(s) whose only copy was on it removed" \
	"$ROOT/logs/daemon.log"
n=$("$BIN/mminfo" -s $S -a -r ssid 2>/dev/null | awk '$1 ~ /^[0-9]+$/' | wc -l)
check "mminfo lists no save set ($n)" test "$n" -eq 0
out=$("$BIN/recover" -s $S -q -S "$SSA" -d "$W/out" 2>&1); rc=$?
check "recover -S of a fails" test $rc -ne 0
check "saying it is not in the media database" \
	grep -q "save set $SSA is not in the media database" <<<"$out"
check "and not asking to mount anything" test -z "$(grep -i mount <<<"$out")"
out=$("$BIN/recover" -s $S -q -a -d "$W/out" "$W/a" 2>&1); rc=$?
check "recover -a of a finds nothing in the index" test $rc -ne 0
echo gamma >"$W/a/g"
check "a new save works" "$BIN/save" -s $S -q "$W/a"
check "and recovers" "$BIN/recover" -s $S -q -a -d "$W/out" "$W/a"
check "identical" cmp -s "$W/a/g" "$W/out$W/a/g"
nsr_done
