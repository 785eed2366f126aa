#!/bin/bash
# 420-scanner-rebuild: the media database is deleted; scanner -m on each
# volume rebuilds it from the volumes alone, so mminfo shows the same save
# sets (same ssids, names, sizes, levels, volumes) and they recover again.
. "$(dirname "$0")/lib.sh"
nsr_setup 420-scanner-rebuild
S=127.0.0.1
W=$ROOT/work
mkdir -p "$W/aftd1"
nsr_start_datazone

nsr_device aftd1 adv_file "$W/aftd1"
nsr_device vt1 vtape "$W/vt1.vtape"
printf 'create type: NSR pool; name: Tapes\n' | "$BIN/nsradmin" -s $S -i - >/dev/null
check "label the AFTD volume" "$BIN/nsrmm" -s $S -q -l -y -b Default -f aftd1 -z 128K Disk.001
check "label the vtape volume" "$BIN/nsrmm" -s $S -q -l -y -b Tapes -f vt1 -z 64K Tape.001

for i in 1 2 3; do
	mkdir -p "$W/t$i/sub"
	seq $i 3 30000 >"$W/t$i/numbers"
	head -c $((200000 * i)) /dev/urandom >"$W/t$i/sub/blob"
done
check "save t1 to disk" "$BIN/save" -s $S -q "$W/t1"
check "save t2 to disk at level full" "$BIN/save" -s $S -q -l full "$W/t2"
check "save t3 to tape" "$BIN/save" -s $S -q -b Tapes "$W/t3"

report() {
	"$BIN/mminfo" -s $S -a -r "ssid,level,totalsize,volume,name" 2>/dev/null |
		awk '$1 ~ /^[0-9]+$/' | sort
}
report >"$W/before"
check "three save sets before" test "$(wc -l <"$W/before")" -eq 3

nsr_lose_mmdb
out=$("$BIN/mminfo" -s $S -a 2>&1)
check "after the loss mminfo finds nothing" grep -q "no matches found" <<<"$out"

"$BIN/scanner" -m -s $S "$W/aftd1" >"$W/scan1.out" 2>&1
check "scanner -m on the AFTD volume exits 0" test $? -eq 0
"$BIN/scanner" -m -s $S -t vtape "$W/vt1.vtape" >"$W/scan2.out" 2>&1
check "scanner -m on the vtape volume exits 0" test $? -eq 0
check "it says the save sets were re-created" grep -q "re-created" "$W/scan1.out"

report >"$W/after"
check "mminfo shows the same save sets again" cmp "$W/before" "$W/after"

ssid3=$(awk '$NF ~ /t3$/ {print $1}' "$W/after")
"$BIN/recover" -s $S -q -S "${ssid3:-0}" -d "$W/r3" >/dev/null 2>&1
check "a rebuilt save set recovers" "$BIN/nsrtreecmp" "$W/t3" "$W/r3$W/t3"
"$BIN/recover" -s $S -q -a -d "$W/r1" "$W/t1" >"$W/rec1.out" 2>&1
rc=$?
check "recover -a after the rebuild needs the index, which survived" test $rc -eq 0
nsr_done
