#!/bin/bash
# 418-relabel: relabeling tells the truth.  Two save sets on an AFTD
# volume; a relabel without -y is refused; with -y the volume starts
# empty and its save sets, whose only copy it was, leave the media
# database and the file index in the same step (logged with the count):
# mminfo lists none of them, recover -S says the save set is not in the
# media database (no request to mount a volume that no longer exists),
# and browsing finds nothing.  A new save then works.  A relabel cut
# short between two batches of its media database deletes (nsrd deletes
# one save set to a transaction, NSR_TEST_MMDB_DELETE_BATCH=1, and
# nsrmmdbd dies after the first, NSR_TEST_MMDBD_DIE_AFTER_DELETE_MANY)
# is finished (nsrd asks again once nsrmmdbd is back, or its intent's
# replay does): none of its save sets is left, in the media database or
# the index, and the media database is consistent.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fault.sh"
nsr_setup 418-relabel
S=127.0.0.1
W=$ROOT/work
mkdir -p "$W/aftd1" "$W/a" "$W/b" "$W/out"
export NSR_TEST_MMDB_DELETE_BATCH=1
export NSR_TEST_MMDBD_DIE_AFTER_DELETE_MANY=$W/died
touch "$W/died" # disarmed until the second relabel
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

# --- a relabel cut short between two batches --------------------------------
for d in c d; do
	mkdir -p "$W/$d"; echo "$d" >"$W/$d/f"
	check "save $d" "$BIN/save" -s $S -q "$W/$d"
done
n=$("$BIN/mminfo" -s $S -a -r ssid 2>/dev/null | awk '$1 ~ /^[0-9]+$/' | wc -l)
check "three save sets on Disk.001 ($n)" test "$n" -eq 3
rm -f "$W/died"
"$BIN/nsrmm" -s $S -q -l -y -b Default -f aftd1 Disk.001 >"$W/cut.out" 2>&1
echo "# relabel cut short: exit $?: $(tail -n 1 "$W/cut.out")"
check "nsrmmdbd died after the first batch" \
	nsr_wait_logged "$ROOT/logs/daemon.log" "dying after deleting save sets, count 1"
nsr_wait_answers nsrd nsrmmdbd nsrindexd
check "the relabel is finished (no intent left)" \
	wait_until 60 test ! -s "$ROOT/res/label.intent"
none_left() {
	[ -z "$("$BIN/mminfo" -s $S -a -r ssid 2>/dev/null | awk '$1 ~ /^[0-9]+$/')" ]
}
check "no save set is left in the media database" wait_until 30 none_left
for d in a c d; do
	out=$("$BIN/recover" -s $S -q -a -d "$W/out2" "$W/$d" 2>&1)
	check "recover -a of $d finds nothing in the index ($?)" test $? -ne 0
done
check "one volume Disk.001" \
	test "$("$BIN/mminfo" -s $S -m 2>/dev/null | grep -cw Disk.001)" = 1
check "the media database is consistent" \
	"$BIN/mmdb_testclnt" -s $S check
nsr_done
