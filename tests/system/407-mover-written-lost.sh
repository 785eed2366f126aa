#!/bin/bash
# 407-mover-written-lost: the media database records a save set's
# fragment but refuses to raise its volume's written figure (test knob
# NSR_TEST_MMDBD_FAIL_WRITTEN, once).  The save set is safe: its save
# completes and recovers, and the mover's warning says what happened (the
# figure is low by the fragment) instead of sending the administrator to
# scanner -m; the next save raises the figure as usual.
. "$(dirname "$0")/lib.sh"
nsr_setup 407-mover-written-lost
S=127.0.0.1
W=$ROOT/work
export NSR_TEST_MMDBD_FAIL_WRITTEN=$ROOT/failed-once
mkdir -p "$W/one" "$W/two"
nsr_start_aftd_datazone
head -c 1000000 /dev/urandom >"$W/one/a"
head -c 700000 /dev/urandom >"$W/two/b"
for t in one two; do
	check "the save of $t completes" "$BIN/save" -s $S -q "$W/$t"
done
check "the media database refused one written figure" test -e "$ROOT/failed-once"
flags=$("$BIN/mminfo" -s $S -a -q "name=$W/one" -r sumflags 2>/dev/null |
	tail -n 1 | tr -d ' ')
check "the first save set is complete and browsable ($flags)" test "$flags" = cb
check "the mover says the save set is safe and the figure low" \
	grep -q "and recorded, but the media database .* did not add its" "$ROOT/logs/daemon.log"
expect_fail "and does not send the administrator to scanner -m" \
	grep -q "run scanner -m" "$ROOT/logs/daemon.log"
num() { grep -o "\"$1\": *[0-9]*" | grep -o '[0-9]*$'; }
w=$("$BIN/mminfo" -s $S -xj -r written Disk.001 2>/dev/null | num written)
two=$("$BIN/mminfo" -s $S -a -q "name=$W/two" -xj -r totalsize 2>/dev/null |
	num totalsize)
check "written counts the second save set only (${w:-none} = ${two:-none})" \
	test -n "$w" -a "$w" = "$two"
check "the first recovers identical" recovers_identical "$W/one"
nsr_done
