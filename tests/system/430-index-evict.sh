#!/bin/bash
# 430-index-evict: nsrindexd keeps a bounded number of client indexes open
# (256; 2 here through NSR_TEST_INDEX_MAX_OPEN).  Saving for three clients
# closes the least recently used index that no save is writing, says so
# in the log, and every client's files still come back through its index
# (the closed ones are reopened on their next request); an index used
# after another was opened outlives it.  The directory tables lookups
# read are let go after every request here (NSR_INDEX_TABLE_MEM=0), so
# each lookup reads them again and still finds everything; a value that
# is not a number of MiB stops nsrindexd at its start, saying so.
. "$(dirname "$0")/lib.sh"
nsr_setup 430-index-evict
export NSR_TEST_INDEX_MAX_OPEN=2
export NSR_INDEX_TABLE_MEM=0
S=127.0.0.1
W=$ROOT/work
mkdir -p "$W/aftd"
nsr_start_datazone
nsr_device aftd adv_file "$W/aftd"
check "label a volume" "$BIN/nsrmm" -s $S -q -l -y -f aftd Evict.001

for c in c1 c2 c3; do
	mkdir -p "$W/$c"
	seq 1 2000 | sed "s/^/$c /" >"$W/$c/data"
	check "save for client $c" "$BIN/save" -s $S -q -c $c "$W/$c"
done
check "the log says c1's index was closed to open c3's" \
	grep -q "closing the index of client 'c1' to open the one of 'c3' (2 indexes open at most)" \
	"$ROOT/logs/daemon.log"

for c in c1 c2 c3; do
	"$BIN/recover" -s $S -q -c $c -d "$W/r-$c" -a "$W/$c" >/dev/null 2>&1
	check "client $c's files come back through its index" \
		cmp "$W/$c/data" "$W/r-$c$W/$c/data"
done
check "browsing c1 again reopened it (closing another)" \
	grep -q "closing the index of client '[c2-3]*' to open the one of 'c1'" \
	"$ROOT/logs/daemon.log"
# Open now: c2, c3 (c3 last).  Using c2 makes c3 the least recently used:
# opening c1 closes c3, though c2 was opened before it.
"$BIN/recover" -s $S -q -c c2 -d "$W/r2-c2" -a "$W/c2" >/dev/null 2>&1
"$BIN/recover" -s $S -q -c c1 -d "$W/r2-c1" -a "$W/c1" >/dev/null 2>&1
last=$(grep -o "closing the index of client '[c0-9]*' to open the one of 'c1'" \
	"$ROOT/logs/daemon.log" | tail -1)
check "the least recently used index was closed for c1 ($last)" \
	test "$last" = "closing the index of client 'c3' to open the one of 'c1'"
check "and c1's files came back" cmp "$W/c1/data" "$W/r2-c1$W/c1/data"

mkdir -p "$W/badroot"
NSR_INDEX_TABLE_MEM=lots timeout 60 "$BIN/nsrindexd" -R "$W/badroot" -p 0 \
	>"$W/bad.out" 2>&1
check "nsrindexd with NSR_INDEX_TABLE_MEM=lots does not start" \
	test $? -ne 0 -a $? -ne 124
check "and its log says why" grep -q \
	"NSR_INDEX_TABLE_MEM=lots: give MiB from 0 to 65536" \
	"$W/badroot/logs/daemon.log"
mkdir -p "$W/badroot2"
NSR_INDEX_TABLE_MEM=65537 timeout 60 "$BIN/nsrindexd" -R "$W/badroot2" -p 0 \
	>"$W/bad2.out" 2>&1
check "nor with 65537 (MiB past the range)" test $? -ne 0 -a $? -ne 124
check "... saying so" grep -q \
	"NSR_INDEX_TABLE_MEM=65537: give MiB from 0 to 65536" \
	"$W/badroot2/logs/daemon.log"
nsr_done
