#!/bin/bash
# 473-relabel-keeps-copies: relabeling a volume takes out of the media
# database only the save sets whose only copy it held.  A save set with
# a clone on another volume stays and recovers from the clone; one
# without goes.  When nsrd cannot read a save set's fragments to tell
# (nsrmmdbd refuses one listing: NSR_TEST_MMDBD_FAIL_FRAG_LIST), the save
# set stays too, and the log says so: deleting it would take the records
# of its surviving copies with it.
. "$(dirname "$0")/lib.sh"
nsr_setup 473-relabel-keeps-copies
S=127.0.0.1
W=$ROOT/work
export NSR_TEST_MMDBD_FAIL_FRAG_LIST=$W/failed
mkdir -p "$W"
touch "$W/failed" # disarmed until the relabel
nsr_start_aftd_datazone

ssid_of() {
	"$BIN/mminfo" -s $S -a -q "name=$1" -r ssid 2>/dev/null |
		awk '$1 ~ /^[0-9]+$/ {print $1; exit}'
}
echo "create type: NSR pool; name: Clone" |
	"$BIN/nsradmin" -s $S -i - >/dev/null
nsr_device tape1 vtape "$W/tape1.vtape"
check "label CL01 (pool Clone)" "$BIN/nsrmm" -s $S -q -l -y -b Clone -f tape1 CL01

mkdir -p "$W/kept" "$W/only"
head -c 2000000 /dev/urandom >"$W/kept/k.bin"
echo only >"$W/only/o"
check "save a tree to Disk.001" "$BIN/save" -s $S -q "$W/kept"
check "save another" "$BIN/save" -s $S -q "$W/only"
sk=$(ssid_of "$W/kept"); so=$(ssid_of "$W/only")
check "two save sets ($sk $so)" test -n "$sk" -a -n "$so"
check "clone the first to CL01" "$BIN/nsrclone" -s $S -b Clone -S "${sk:-0}"

rm -f "$W/failed" # the next fragment listing fails
check "relabel Disk.001" "$BIN/nsrmm" -s $S -q -l -y -b Default -f aftd1 \
	Disk.001
check "the listing failed once" test -e "$W/failed"
check "nsrd kept the save set it could not judge" grep -q \
	"save set $sk: cannot list its fragments (.*); it stays in the media database" \
	"$ROOT/logs/daemon.log"
check "the cloned save set is still in the media database" \
	test -n "$(ssid_of "$W/kept")"
check "the one whose only copy was there is not" \
	test -z "$(ssid_of "$W/only")"
"$BIN/recover" -s $S -q -S "${sk:-0}" -d "$W/r" >"$W/rec.out" 2>&1
check "and the cloned save set recovers identical from CL01" \
	cmp "$W/kept/k.bin" "$W/r$W/kept/k.bin"
nsr_done
