#!/bin/bash
# 414-suspect: a save set on an AFTD (32 KB blocks) gets 64 bytes flipped
# inside one block of a large file's data.
#  - recover exits 1, names the damaged file, and does not leave it under
#    its name (nor as .damaged); every other file comes back intact;
#  - the damaged block is counted once; with a second damaged block the
#    mover counts two;
#  - recover -k keeps the damaged bytes as NAME.damaged;
#  - the save set is suspect in mminfo (ssflags letter s, query suspect);
#  - scanner -m on the repaired volume reads it without damage and clears
#    the flag.
. "$(dirname "$0")/lib.sh"
nsr_setup 414-suspect
S=127.0.0.1
W=$ROOT/work
mkdir -p "$W/aftd"
nsr_start_datazone

T=$W/tree
mkdir -p "$T"
head -c 3000000 /dev/urandom >"$T/big.bin"
for i in 1 2 3 4; do
	head -c 10000 /dev/urandom >"$T/s$i.txt"
done

admin() { "$BIN/nsradmin" -s $S -i - >/dev/null; }
echo 'create type: NSR pool; name: Sus' | admin
nsr_device disk1 adv_file "$W/aftd"
check "label SUS01 with 32 KB blocks" "$BIN/nsrmm" -s $S -q -l -y -b Sus -f disk1 -z 32K SUS01
check "save the tree" "$BIN/save" -s $S -q -b Sus "$T"
ssid=$("$BIN/mminfo" -s $S -a -q "name=$T" -r ssid 2>/dev/null | awk '$1 ~ /^[0-9]+$/ {print $1; exit}')
check "the save set is in the media database" test -n "$ssid"
ssid=${ssid:-0}
suspects() { "$BIN/mminfo" -s $S -a -q suspect -r ssid 2>/dev/null | awk '$1 ~ /^[0-9]+$/ {print $1}'; }
ssflags() { "$BIN/mminfo" -s $S -a -q "ssid=$ssid" -r ssflags 2>/dev/null | tail -1 | tr -d ' '; }
check "it is not suspect after the save" test -z "$(suspects)"

data=$(find "$W/aftd" -type f -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2-)
size=$(stat -c %s "$data")
check "the data file holds the whole tree ($size bytes)" test "$size" -gt 3000000
cp "$data" "$W/good.copy"
# flip64 BLOCK - 64 bytes in the middle of block BLOCK of the data file.
flip64() {
	head -c 64 /dev/zero | tr '\0' '\377' |
		dd of="$data" bs=1 seek=$(( $1 * 32768 + 9000 )) conv=notrunc status=none
}
flip64 50

# Default: the damaged file is removed and named; the rest is intact.
"$BIN/recover" -s $S -S $ssid -d "$W/r1" >"$W/rec1.out" 2>&1
rc=$?
sed 's/^/# recover: /' "$W/rec1.out"
check "recover of the damaged save set exits 1" test $rc -eq 1
check "it names the damaged block" \
	grep -Eq "save set $ssid on volume SUS01 .*damaged block at file [0-9]+ record 50:" "$W/rec1.out"
check "one damaged block is not counted as two" \
	sh -c "! grep -q 'damaged blocks in all' '$W/rec1.out'"
check "it names big.bin as damaged and not recovered" \
	grep -q "$T/big.bin: .*: damaged, not recovered" "$W/rec1.out"
check "big.bin is not left under its name" test ! -e "$W/r1$T/big.bin"
check "nor as big.bin.damaged" test ! -e "$W/r1$T/big.bin.damaged"
for i in 1 2 3 4; do
	check "s$i.txt is recovered intact" cmp -s "$T/s$i.txt" "$W/r1$T/s$i.txt"
done

# The save set is suspect now.
check "mminfo -q suspect lists save set $ssid" test "$(suspects)" = "$ssid"
fl=$(ssflags)
check "its ssflags show s ($fl)" sh -c "echo '$fl' | grep -q s"

# -k keeps the damaged bytes under a name that says so.
"$BIN/recover" -s $S -k -S $ssid -d "$W/r2" >"$W/rec2.out" 2>&1
rc=$?
sed 's/^/# recover -k: /' "$W/rec2.out"
check "recover -k exits 1" test $rc -eq 1
check "it names big.bin as kept as big.bin.damaged" \
	grep -q "$T/big.bin: .*: damaged, kept as $W/r2$T/big.bin.damaged" "$W/rec2.out"
check "big.bin is not left under its name" test ! -e "$W/r2$T/big.bin"
dsize=$(stat -c %s "$W/r2$T/big.bin.damaged" 2>/dev/null || echo 0)
check "big.bin.damaged holds the bytes received ($dsize)" test "$dsize" -gt 1000000
check "its first megabyte is intact" \
	cmp -s -n 1000000 "$T/big.bin" "$W/r2$T/big.bin.damaged"

# Two damaged blocks, far apart: counted as two.
flip64 70
"$BIN/recover" -s $S -S $ssid -d "$W/r3" >"$W/rec3.out" 2>&1
rc=$?
sed 's/^/# recover: /' "$W/rec3.out"
check "recover with two damaged blocks exits 1" test $rc -eq 1
check "it counts 2 damaged blocks" grep -q "(2 damaged blocks in all)" "$W/rec3.out"

# scanner counts them once each too, and keeps the flag.
"$BIN/scanner" -q -m -s $S -t adv_file "$W/aftd" >"$W/scan1.out" 2>&1
rc=$?
sed 's/^/# scanner: /' "$W/scan1.out"
check "scanner -m exits 1 on the damaged volume" test $rc -eq 1
check "scanner counts 2 damaged blocks" grep -q "1 damaged (2 damaged blocks)" "$W/scan1.out"
check "the save set stays suspect" test "$(suspects)" = "$ssid"

# Repaired (the intact copy back): scanner -m reads it whole, clears it.
cp "$W/good.copy" "$data"
"$BIN/scanner" -q -m -s $S -t adv_file "$W/aftd" >"$W/scan2.out" 2>&1
rc=$?
sed 's/^/# scanner: /' "$W/scan2.out"
check "scanner -m exits 0 on the intact volume" test $rc -eq 0
check "it says the save set is no longer suspect" \
	grep -q "save set $ssid .*read without damage: no longer suspect" "$W/scan2.out"
check "mminfo -q suspect lists nothing" test -z "$(suspects)"
fl=$(ssflags)
check "its ssflags no longer show s ($fl)" sh -c "! echo '$fl' | grep -q s"
"$BIN/recover" -s $S -S $ssid -d "$W/r4" >"$W/rec4.out" 2>&1
check "recover of the intact save set exits 0" test $? -eq 0
check "big.bin is recovered intact" cmp -s "$T/big.bin" "$W/r4$T/big.bin"
nsr_done
