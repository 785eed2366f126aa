#!/bin/bash
# 411-damage: a save set on an AFTD (32 KB blocks) gets bytes flipped in
# the middle of its data file.  recover -S exits non-zero, names the save
# set and the damaged block, names the damaged file, and restores every
# other file intact; scanner on the volume names the save set and the
# damaged file, and exits 1.
# The same for a save set spanning two 2 MB vtapes, damaged on the first.
. "$(dirname "$0")/lib.sh"
nsr_setup 411-damage
export NSR_TEST_VTAPE_CAPACITY=2097152
S=127.0.0.1
W=$ROOT/work
mkdir -p "$W/aftd"
nsr_start_datazone

T=$W/tree
mkdir -p "$T"
for i in 1 2 3 4 5 6 7 8 9; do
	head -c 300000 /dev/urandom >"$T/f$i.bin"
done

admin() { "$BIN/nsradmin" -s $S -i - >/dev/null; }
echo 'create type: NSR pool; name: Dmg' | admin
nsr_device disk1 adv_file "$W/aftd"
check "label DMG01 with 32 KB blocks" "$BIN/nsrmm" -s $S -q -l -y -b Dmg -f disk1 -z 32K DMG01
check "save the tree" "$BIN/save" -s $S -q -b Dmg "$T"
ssid=$("$BIN/mminfo" -s $S -a -q "name=$T" -r ssid 2>/dev/null | awk '$1 ~ /^[0-9]+$/ {print $1; exit}')
check "the save set is in the media database" test -n "$ssid"

# The save set's data file: the largest file on the volume.
data=$(find "$W/aftd" -type f -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2-)
size=$(stat -c %s "$data")
check "the data file holds the whole tree ($size bytes)" test "$size" -gt 2700000
printf '\xde\xad\xbe\xef\xde\xad\xbe\xef\xde\xad\xbe\xef' |
	dd of="$data" bs=1 seek=$((size / 2)) conv=notrunc status=none

"$BIN/recover" -s $S -S "${ssid:-0}" -d "$W/r" >"$W/rec.out" 2>&1
rc=$?
sed 's/^/# recover: /' "$W/rec.out"
check "recover of the damaged save set exits 1" test $rc -eq 1
check "it names the save set, the volume and the damaged block" \
	grep -Eq "save set $ssid on volume DMG01 .*damaged block at file [0-9]+ record [0-9]+" "$W/rec.out"
named=0 intact=0
for i in 1 2 3 4 5 6 7 8 9; do
	if grep -q "$T/f$i.bin" "$W/rec.out"; then
		named=$((named + 1))
	elif cmp -s "$T/f$i.bin" "$W/r$T/f$i.bin"; then
		intact=$((intact + 1))
	else
		fail "f$i.bin is neither named as damaged nor recovered intact"
	fi
done
check "it names the damaged file ($named named)" test $named -ge 1 -a $named -le 2
check "every other file is recovered intact ($intact of $((9 - named)))" \
	test $intact -eq $((9 - named))

"$BIN/scanner" -q -t adv_file "$W/aftd" >"$W/scan.out" 2>&1
rc=$?
sed 's/^/# scanner: /' "$W/scan.out"
check "scanner exits 1 on the damaged volume" test $rc -eq 1
check "scanner names the damaged save set" grep -q "save set $ssid .*damaged" "$W/scan.out"
# The file recover named as damaged is the one scanner names, from the
# volume alone.
dmg=$(grep -o "$T/f[0-9].bin" "$W/rec.out" | head -1)
check "scanner names the damaged file ($dmg)" \
	grep -q "save set $ssid: file ${dmg:-none} is damaged" "$W/scan.out"

# A save set spanning two vtapes, damaged on the first: recover names the
# damage, restores the intact files of both volumes and exits 1.
echo 'create type: NSR pool; name: Tapes' | admin
for i in 1 2; do
	nsr_device tape$i vtape "$W/tape$i.vtape"
	check "label TDMG0$i in tape$i" "$BIN/nsrmm" -s $S -q -l -y -b Tapes -f tape$i -z 32K TDMG0$i
done
T2=$W/tree2
mkdir -p "$T2"
for i in 1 2 3 4 5 6 7 8 9; do
	head -c 400000 /dev/urandom >"$T2/g$i.bin"
done
check "save a tree larger than one vtape" "$BIN/save" -s $S -q -b Tapes "$T2"
ssid2=$("$BIN/mminfo" -s $S -a -q "name=$T2" -r ssid 2>/dev/null | awk '$1 ~ /^[0-9]+$/ {print $1; exit}')
head=$("$BIN/mminfo" -s $S -a -q "name=$T2" -r "volume,sumflags" 2>/dev/null | awk '$2 ~ /^h/ {print $1}')
check "it has a head fragment (on ${head:-none})" test -n "$head"
n=${head#TDMG0}
vt=$W/tape${n:-1}.vtape
printf '\xde\xad\xbe\xef\xde\xad\xbe\xef\xde\xad\xbe\xef' |
	dd of="$vt" bs=1 seek=$(( $(stat -c %s "$vt") / 2 )) conv=notrunc status=none
"$BIN/recover" -s $S -S "${ssid2:-0}" -d "$W/r2" >"$W/rec2.out" 2>&1
rc=$?
sed 's/^/# recover: /' "$W/rec2.out"
check "recover of the damaged spanning save set exits 1" test $rc -eq 1
check "it names the damaged block on $head" \
	grep -Eq "save set $ssid2 on volume $head .*damaged block at file [0-9]+ record [0-9]+" "$W/rec2.out"
named=0 intact=0
for i in 1 2 3 4 5 6 7 8 9; do
	if grep -q "$T2/g$i.bin" "$W/rec2.out"; then
		named=$((named + 1))
	elif cmp -s "$T2/g$i.bin" "$W/r2$T2/g$i.bin"; then
		intact=$((intact + 1))
	else
		fail "g$i.bin is neither named as damaged nor recovered intact"
	fi
done
check "it names the damaged file ($named named)" test $named -ge 1 -a $named -le 2
check "every other file of both volumes is intact ($intact of $((9 - named)))" \
	test $intact -eq $((9 - named))
nsr_done
