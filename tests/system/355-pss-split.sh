#!/bin/bash
# 355-pss-split: a large file is not pinned to one stream.  With parts
# of at most 1 MiB (NSR_PSS_PART_SIZE), a save point holding a 7 MiB
# file (with a hole and an extended attribute) and a 3 MiB one is saved
# with four streams: every one of its four save sets holds part of the
# data, the index has each file once with its whole size, and recover -S
# of the master, recover -a of the tree and recover -a of the one file
# give it back identical.  recover -S of one dependent alone does not leave a
# file made of its parts: it says what is missing and exits non-zero.
# An incr that finds the file unchanged saves none of it; a changed one
# is split again.  Encrypted and compressed, split files come back too.
. "$(dirname "$0")/lib.sh"
nsr_setup 355-pss-split
S=127.0.0.1
W=$ROOT/work
T=$W/sp
C=$(hostname)
nsr_start_aftd_datazone
export NSR_PSS_PART_SIZE=1M

# ssid_of NAME - the newest save set named NAME.
ssid_of() {
	"$BIN/mminfo" -s $S -a -q "name=$1" -ot -r ssid 2>/dev/null |
		awk '$1 ~ /^[0-9]+$/ {s = $1} END {print s}'
}

# size_of SSID - a save set's size in bytes.
size_of() {
	"$BIN/mminfo" -s $S -a -q "ssid=$1" -xj -r totalsize 2>/dev/null |
		sed -n 's/.*"totalsize":\([0-9]*\).*/\1/p' | tail -1
}

mkdir -p "$T/d"
head -c 3145728 /dev/urandom >"$T/d/big"
# 7 MiB: 3 MiB of data, a 512 KiB hole, 3.5 MiB of data (in parts of
# 896 KiB, each has data)
head -c 3145728 /dev/urandom >"$T/huge"
truncate -s 3670016 "$T/huge"
head -c 3670016 /dev/urandom >>"$T/huge"
setfattr -n user.kind -v huge "$T/huge" 2>/dev/null
for i in 1 2 3 4 5; do printf 'small %s\n' $i >"$T/s$i"; done
sleep 1.1

# each stream at 4 MB/s: no stream can take every part before the others
# have started
NSR_TEST_PSS_RATE=4M "$BIN/save" -s $S --pss=4 -l full "$T" \
	>"$W/full.out" 2>"$W/full.err"
check "save --pss=4 exits 0" test $? -eq 0
M=$(ssid_of "$T")
D1=$(ssid_of "<1>$T")
D2=$(ssid_of "<2>$T")
D3=$(ssid_of "<3>$T")
check "a master and three dependents" \
	test -n "$M" -a -n "$D1" -a -n "$D2" -a -n "$D3"
# 10 MiB in 12 parts (8 of 896 KiB, 4 of 768 KiB, at least 384 KiB of
# data each) over four streams: each has some
for s in $M $D1 $D2 $D3; do
	check "save set $s holds at least one part" \
		test "$(size_of "$s")" -ge 393216
done
"$BIN/nsrinfo" -s $S -v "$C" >"$W/nsrinfo" 2>&1
check "the index has the 7 MiB file once, with its whole size" \
	test "$(grep -c "^$T/huge, .*size=7340032," "$W/nsrinfo")" = 1
check "and the 3 MiB one once" \
	test "$(grep -c "^$T/d/big, .*size=3145728," "$W/nsrinfo")" = 1

"$BIN/recover" -s $S -S "$M" -d "$W/r-master" >"$W/r-master.out" 2>&1
check "recover -S of the master exits 0" test $? -eq 0
check "and gives the tree back identical" \
	"$BIN/nsrtreecmp" "$T" "$W/r-master$T"
check "the hole stays a hole" \
	test "$(stat -c %b "$W/r-master$T/huge")" -lt 14000
check "no temporary file is left" \
	test -z "$(find "$W/r-master" -name '.nsr-restore.*')"

"$BIN/recover" -s $S -a -d "$W/r-tree" "$T" >"$W/r-tree.out" 2>&1
check "recover -a of the tree exits 0" test $? -eq 0
check "and gives it back identical" "$BIN/nsrtreecmp" "$T" "$W/r-tree$T"

"$BIN/recover" -s $S -a -d "$W/r-one" "$T/huge" >"$W/r-one.out" 2>&1
check "recover -a of the one split file exits 0" test $? -eq 0
check "and gives it back identical" cmp "$T/huge" "$W/r-one$T/huge"
check "with its attribute" test "$(getfattr --only-values -n user.kind \
	"$W/r-one$T/huge" 2>/dev/null)" = "$(getfattr --only-values \
	-n user.kind "$T/huge" 2>/dev/null)"

"$BIN/recover" -s $S -S "$D2" -d "$W/r-dep" >"$W/r-dep.out" 2>&1
check "recover -S of one dependent alone exits non-zero" test $? -ne 0
check "and says the split file is not all there" \
	grep -q "split over the save sets of its save point: not its head" \
	"$W/r-dep.out"
check "naming the master to recover instead" \
	grep -q "recover its master save set $M, which brings" "$W/r-dep.out"
check "leaving no part of it under its name" \
	test ! -e "$W/r-dep$T/huge" -a ! -e "$W/r-dep$T/d/big"
check "nor a temporary file" \
	test -z "$(find "$W/r-dep" -name '.nsr-restore.*' 2>/dev/null)"

# --- incr: unchanged, nothing of it; changed, split again -----------------
sleep 1.1
printf 'more\n' >>"$T/s1"
"$BIN/save" -s $S --pss=4 -l incr "$T" >"$W/incr.out" 2>"$W/incr.err"
check "an incr exits 0" test $? -eq 0
I=$(ssid_of "$T")
total=0
for n in "$T" "<1>$T" "<2>$T" "<3>$T"; do
	total=$((total + $(size_of "$(ssid_of "$n")")))
done
check "the incr saved none of the unchanged large files" \
	test "$total" -lt 1048576
sleep 1.1
dd if=/dev/urandom of="$T/huge" bs=1M seek=6 count=1 conv=notrunc \
	status=none
"$BIN/save" -s $S --pss=4 -l incr "$T" >"$W/incr2.out" 2>"$W/incr2.err"
check "a second incr exits 0" test $? -eq 0
"$BIN/recover" -s $S -a -d "$W/r-incr2" "$T" >"$W/r-incr2.out" 2>&1
check "recover -a after the change exits 0" test $? -eq 0
check "and gives the changed tree back" \
	"$BIN/nsrtreecmp" "$T" "$W/r-incr2$T"
"$BIN/recover" -s $S -a -t "$("$BIN/mminfo" -s $S -a -q "ssid=$M" \
	-r nsavetime | tail -1 | tr -d ' ')" -d "$W/r-pit" "$T/huge" \
	>"$W/r-pit.out" 2>&1
check "recover -a -t of the full's time gives the file as it was" \
	cmp "$W/r-master$T/huge" "$W/r-pit$T/huge"

# --- encrypted and compressed: each part sealed on its own -----------------
E=$W/enc
mkdir -p "$E"
head -c 3145728 /dev/urandom >"$E/random"
yes 'a line of text that compresses well' | head -c 2097152 >"$E/text"
printf '. type: NSR\nupdate datazone pass phrase: split test\n' |
	"$BIN/nsradmin" -s $S -i - >"$W/nsradmin.out" 2>&1
check "set the datazone pass phrase" test $? -eq 0
NSR_TEST_PSS_RATE=4M "$BIN/save" -s $S --pss=4 --encrypt --compress \
	-l full "$E" >"$W/enc.out" 2>&1
check "save --pss=4 --encrypt --compress exits 0" test $? -eq 0
check "the volume holds none of the text" \
	test "$(grep -rac 'a line of text that compresses' "$W/aftd1" |
		awk -F: '{s += $NF} END {print s + 0}')" -eq 0
"$BIN/recover" -s $S -S "$(ssid_of "$E")" -d "$W/r-enc" \
	>"$W/r-enc.out" 2>&1
check "recover -S of the encrypted master exits 0" test $? -eq 0
check "and gives both split files back identical" \
	"$BIN/nsrtreecmp" "$E" "$W/r-enc$E"

nsr_done
