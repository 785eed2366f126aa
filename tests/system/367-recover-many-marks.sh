#!/bin/bash
# 367-recover-many-marks: recover's browser keeps many marks right (they
# are found by name in a hash index: src/browse/browse.c).  A directory
# of 600 files is saved; "add *" marks each once, "add" of one of them
# again says it is marked, "delete f1*" unmarks the 111 names that match
# and leaves the others, a re-added name is marked again, the marked
# files and only they are recovered identical, and "delete *" then
# leaves no mark.  recover -a of every file named on the command line
# restores them all.
. "$(dirname "$0")/lib.sh"
nsr_setup 367-recover-many-marks
S=127.0.0.1
W=$ROOT/work
D=$W/many
nsr_start_aftd_datazone
mkdir -p "$D"
for i in $(seq 1 600); do echo "file $i" >"$D/f$i"; done
check "save of 600 files" "$BIN/save" -s $S -q "$D"

printf 'cd %s\nadd *\nadd f7\ndelete f1*\nadd f15\nlist\nrecover\nquit\n' "$D" |
	"$BIN/recover" -s $S -d "$W/r1" >"$W/out1" 2>&1
check "recover exits 0" test $? -eq 0
check "add * marked 600 names one file each, and f15 once more (601)" \
	test "$(grep -cx '1 file(s) marked for recovery' "$W/out1")" -eq 601
check "f7 was marked already" grep -qx "$D/f7: already marked" "$W/out1"
check "delete f1* unmarked 111 names" \
	test "$(grep -cx '1 file(s) unmarked' "$W/out1")" -eq 111
listed=$(grep -c "^$D/f[0-9]*\$" "$W/out1")
check "list shows 490 marks ($listed)" test "$listed" -eq 490
check "f15 is listed again, f150 not" \
	test "$(grep -cx "$D/f15" "$W/out1")" -eq 1 -a \
	"$(grep -cx "$D/f150" "$W/out1")" -eq 0
got=$(ls "$W/r1$D" 2>/dev/null | wc -l)
check "490 files recovered ($got)" test "$got" -eq 490
bad=0
for f in "$W/r1$D"/*; do cmp -s "$f" "$D/$(basename "$f")" || bad=$((bad + 1)); done
check "each identical ($bad differ)" test "$bad" -eq 0
check "f1, f100 and f199 not recovered, f15 and f2 recovered" \
	test ! -e "$W/r1$D/f1" -a ! -e "$W/r1$D/f100" -a ! -e "$W/r1$D/f199" \
	-a -e "$W/r1$D/f15" -a -e "$W/r1$D/f2"

printf 'cd %s\nadd *\ndelete *\nlist\nquit\n' "$D" |
	"$BIN/recover" -s $S >"$W/out2" 2>&1
check "delete * after add * unmarks 600" \
	test "$(grep -cx '1 file(s) unmarked' "$W/out2")" -eq 600
check "and list shows no mark" test "$(grep -c "^$D/f" "$W/out2")" -eq 0

args=()
for i in $(seq 1 600); do args+=("$D/f$i"); done
check "recover -a of 600 named files" \
	"$BIN/recover" -s $S -q -a -d "$W/r2" "${args[@]}"
check "all 600 back" test "$(ls "$W/r2$D" | wc -l)" -eq 600
nsr_done
