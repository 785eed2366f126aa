#!/bin/bash
# 472-recycle-race: nsrim judges volumes from what the media database
# holds when it reads it, and a save set is recorded on its volume only
# when its fragment ends.  A volume that nsrim finds written but holding
# no save set while a save still streams onto it ("recyclable once it has
# held data") must not stay recyclable once that save is recorded:
# auto media management would relabel it and destroy the save.  Here a
# save to an AFTD whose only save set was deleted stalls mid-stream, and
# nsrim marks its volume
# recyclable, the save goes on and completes: the volume is recyclable no
# more (nsrmmdbd unmarks it when the fragment is recorded and says so),
# a new mark is refused naming the save set, and the save recovers
# identical.
. "$(dirname "$0")/lib.sh"
nsr_setup 472-recycle-race
S=127.0.0.1
W=$ROOT/work
export NSR_NSRIM_DAILY=no
nsr_start_aftd_datazone

# Disk.001 has held data: a save set saved and deleted.
mkdir -p "$W/old" "$W/big"
echo old >"$W/old/f"
check "an old save" "$BIN/save" -s $S -q "$W/old"
old=$("$BIN/mminfo" -s $S -a -q "name=$W/old" -r ssid 2>/dev/null |
	awk '$1 ~ /^[0-9]+$/ {print $1; exit}')
check "deleted ($old)" "$BIN/nsrmm" -s $S -q -d -y -S "${old:-0}"

# The save stalls after its first file (NSR_TEST_SAVE_STALL_SEC), its
# save set in progress, no fragment of it recorded yet.
head -c 100000000 /dev/urandom >"$W/big/a"
head -c 100000000 /dev/urandom >"$W/big/b"
NSR_TEST_SAVE_STALL_SEC=20 "$BIN/save" -s $S -q "$W/big" >"$W/save.out" 2>&1 &
spid=$!
for _ in $(seq 1 150); do
	inprog=$("$BIN/mminfo" -s $S -a -q inprogress -r ssid 2>/dev/null |
		awk '$1 ~ /^[0-9]+$/ {print $1}')
	[ -n "$inprog" ] && break
	sleep 0.1
done
sleep 2 # past its first file
check "its save set is in progress ($inprog)" test -n "$inprog"

out=$("$BIN/nsrim" -s $S 2>&1)
echo "$out" | sed 's/^/# nsrim: /'
check "nsrim, seeing no save set on the written volume, marks it" \
	grep -q "volume Disk.001 (pool Default): recyclable (0 save set" <<<"$out"
r=$("$BIN/mminfo" -s $S -m -q volume=Disk.001,recyclable 2>&1)
check "so Disk.001 is recyclable while the save stalls" \
	grep -q Disk.001 <<<"$r"

wait $spid
check "the save goes on and completes" test $? -eq 0
r=$("$BIN/mminfo" -s $S -m -q volume=Disk.001,recyclable 2>&1)
check "Disk.001 is recyclable no more" test -z "$(grep Disk.001 <<<"$r")"
check "nsrmmdbd says why" grep -q \
	"volume Disk.001 is recyclable no more: save set ${inprog:-x}, which is not, was recorded on it" \
	"$ROOT/logs/daemon.log"
out=$("$BIN/nsrim" -s $S 2>&1)
echo "$out" | sed 's/^/# nsrim again: /'
check "nsrim now leaves it alone" \
	test -z "$(grep "volume Disk.001 .*recyclable" <<<"$out")"
out=$("$BIN/mmdb_testclnt" recyclable Disk.001 2>&1)
check "and a mark is refused, naming the save set ($out)" test \
	"$out" = "refused: volume Disk.001 not marked recyclable: it holds save set ${inprog:-x}, which is not"

"$BIN/recover" -s $S -q -S "${inprog:-0}" -d "$W/r" >"$W/rec.out" 2>&1
check "the save recovers identical" cmp "$W/big/a" "$W/r$W/big/a"
check "... both files" cmp "$W/big/b" "$W/r$W/big/b"
nsr_done
