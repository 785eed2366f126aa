#!/bin/bash
# 430-index-evict: nsrindexd keeps a bounded number of client indexes open
# (256; 2 here through NSR_TEST_INDEX_MAX_OPEN).  Saving for three clients
# closes the longest-open index that no save is writing, says so in the
# log, and every client's files still come back through its index (the
# closed ones are reopened on their next request).
. "$(dirname "$0")/lib.sh"
nsr_setup 430-index-evict
export NSR_TEST_INDEX_MAX_OPEN=2
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
nsr_done
