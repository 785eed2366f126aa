#!/bin/bash
# 405-scanner-datazone: in a whole datazone (nsrd, nsrexecd -s), a save
# written through nsrd and the storage node is found by scanner on the
# volume with the ssid, client and name mminfo shows; scanner -m finds the
# media database complete; scanner -i rebuilds the save set's index
# entries and recover still finds the files.
. "$(dirname "$0")/lib.sh"
nsr_setup 405-scanner-datazone
S=127.0.0.1
W=$ROOT/work
mkdir -p "$W/aftd1" "$W/tree/d"
printf 'one\n' >"$W/tree/one"
head -c 200000 /dev/urandom >"$W/tree/d/two"

nsr_start_datazone
nsr_device aftd1 adv_file "$W/aftd1"
check "nsrmm labels a volume" "$BIN/nsrmm" -s $S -l -y -b Default -f aftd1 ScanVol.001
check "save writes the tree" "$BIN/save" -s $S "$W/tree"
SSID=$("$BIN/mminfo" -s $S -a -q "name=$W/tree" -r ssid 2>/dev/null |
	awk '$1 ~ /^[0-9]+$/ {print $1; exit}')
check "mminfo knows the save set" test -n "$SSID"

out=$("$BIN/scanner" "$W/aftd1")
rc=$?
check "scanner reads the volume written through nsrd" test $rc -eq 0
check "and names it" grep -q "adv_file volume ScanVol.001 " <<<"$out"
check "the save set is on it with mminfo's ssid, complete" \
	grep -Eq " $W/tree .* $SSID E$" <<<"$out"

out=$("$BIN/scanner" -m -s $S "$W/aftd1" 2>&1)
rc=$?
check "scanner -m finds the media database complete" test $rc -eq 0
check "and adds nothing" test -z "$(grep added <<<"$out")"

out=$("$BIN/scanner" -i -S "$SSID" -s $S "$W/aftd1" 2>&1)
rc=$?
check "scanner -i rebuilds the index entries" test $rc -eq 0
check "one per file" grep -q "save set $SSID .*: 4 index entries rebuilt" <<<"$out"
"$BIN/recover" -s $S -a -d "$W/r" "$W/tree" >/dev/null 2>&1
check "recover still finds and restores the tree" cmp "$W/tree/d/two" "$W/r$W/tree/d/two"
nsr_done
