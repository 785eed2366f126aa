#!/bin/bash
# 364-recover-one-pass: save sets that share a volume are read from it in
# one pass.  Two trees and two slow pipelines saved at once into one
# vtape (multiplexed block by block: a pipeline read alone passes the
# others' blocks) come back with one `recover -S a -S b -S c -S d`: the
# mover opens one read session for all four, positions once, and reads
# as many blocks as the four single recovers read together (no block
# twice; its log counts them); trees and bytes are identical.  Into a
# command (--pipe) they still come one after the other.  Two save sets of one
# tree (overlapping names) are still read one after the other.  Paths of
# an index browse (recover -a with several, or marks of recover>) are
# restored together, in one pass, a missing one named.  Then the
# point-in-time scenario of 360 (pit.sh) on that vtape, with another save
# multiplexed beside each backup: each moment recovers exactly, and a
# chain's save sets are read in one pass.
. "$(dirname "$0")/lib.sh"
nsr_setup 364-recover-one-pass
S=127.0.0.1
W=$ROOT/work
LOG=$ROOT/logs/daemon.log
mkdir -p "$W"
nsr_start_datazone

admin() { "$BIN/nsradmin" -s $S -i - >/dev/null; }
echo 'create type: NSR pool; name: Tapes' | admin
nsr_device tape1 vtape "$W/tape1.vtape" "target sessions: 4; max sessions: 8"
check "label MUX01 with 32 KB blocks" \
	"$BIN/nsrmm" -s $S -q -l -y -b Tapes -f tape1 -z 32K MUX01

# passes - the mover's "in one pass" lines logged since line $1 of the log.
passes() {
	tail -n +"$(($1 + 1))" "$LOG" | grep 'in one pass:'
}

# field WORDS - the number before WORDS in the pass lines on stdin, summed.
field() {
	grep -o "[0-9]* $1" | awk '{s += $1} END {print s + 0}'
}

# --- two trees and two slow pipelines saved at once --------------------
# The pipelines send 256 KB every 0.2 s for 1.6 s, so their blocks are
# interleaved with each other's and with those of the trees saved
# meanwhile.
for i in 1 2; do
	mkdir -p "$W/t$i/sub"
	head -c 1500000 /dev/urandom >"$W/t$i/big.bin"
	head -c 700000 /dev/urandom >"$W/t$i/sub/mid.bin"
	printf 'small %s\n' $i >"$W/t$i/sub/small.txt"
	head -c 2097152 /dev/urandom >"$W/p$i"
done
# slow FILE - FILE's bytes, 256 KB every 0.2 s.
slow='for n in 0 1 2 3 4 5 6 7; do
	dd if="$1" bs=262144 skip=$n count=1 status=none; sleep 0.2
done'
pids=()
for i in 1 2; do
	"$BIN/save" -s $S -q -b Tapes --pipe=/PIPE/p$i -- sh -c "$slow" sh \
		"$W/p$i" >"$W/savep$i.out" 2>&1 &
	pids+=($!)
done
sleep 0.3
for i in 1 2; do
	"$BIN/save" -s $S -q -b Tapes "$W/t$i" >"$W/savet$i.out" 2>&1 &
	pids+=($!)
done
for p in "${pids[@]}"; do
	check "save $p exits 0" wait "$p"
done
ssids=()
for n in /PIPE/p1 /PIPE/p2 "$W/t1" "$W/t2"; do
	ss=$("$BIN/mminfo" -s $S -a -q "name=$n" -r ssid 2>/dev/null |
		awk '$1 ~ /^[0-9]+$/ {print $1; exit}')
	check "save set of $n is in the media database" test -n "$ss"
	ssids+=("${ss:-0}")
done

# Each alone: its blocks only, the others' spaced over.
alone=0
for i in 0 1 2 3; do
	mark=$(wc -l <"$LOG")
	"$BIN/recover" -s $S -q -d "$W/s$i" -S "${ssids[$i]}" \
		>"$W/s$i.out" 2>&1
	check "recover of save set ${ssids[$i]} alone exits 0" test $? -eq 0
	nsr_wait_logged "$LOG" "save sets ${ssids[$i]} from volume MUX01 in one pass" ||
		fail "the mover logged no pass for save set ${ssids[$i]}"
	line=$(passes "$mark")
	echo "# $line"
	n=$(field "blocks read" <<<"$line")
	alone=$((alone + n))
	[ $i -ge 2 ] ||
		check "it passes blocks of the others unread (interleaved)" \
			test "$(field "blocks of other" <<<"$line")" -gt 0
done

# All four with one recover: one pass.
mark=$(wc -l <"$LOG")
"$BIN/recover" -s $S -q -d "$W/r" -S "${ssids[0]}" -S "${ssids[1]}" \
	-S "${ssids[2]}" -S "${ssids[3]}" >"$W/r.out" 2>&1
rc=$?
sed 's/^/# recover: /' "$W/r.out"
check "recover -S x4 exits 0" test $rc -eq 0
for i in 1 2; do
	check "pipeline $i's bytes are identical" cmp "$W/p$i" "$W/r/PIPE/p$i"
	check "tree $i is identical" "$BIN/nsrtreecmp" "$W/t$i" "$W/r$W/t$i"
done
all="${ssids[0]}, ${ssids[1]}, ${ssids[2]}, ${ssids[3]}"
nsr_wait_logged "$LOG" "save sets $all from volume MUX01 in one pass" ||
	fail "the mover logged no pass for $all"
line=$(passes "$mark")
echo "# $line"
check "the mover read the volume once for all four" \
	test "$(grep -c . <<<"$line")" -eq 1
check "one read session was opened" test "$(tail -n +"$((mark + 1))" "$LOG" |
	grep -c 'reading 4 save sets (4 fragments) from volume MUX01')" -eq 1
check "positioned once" grep -q ' 1 positionings' <<<"$line"
n=$(field "blocks read" <<<"$line")
check "it read $n blocks, as many as the four alone ($alone): none twice" \
	test "$n" -eq "$alone"

# Into a command the save sets go one after the other, their bytes apart.
"$BIN/recover" -s $S -q -S "${ssids[0]}" -S "${ssids[1]}" --pipe -- cat \
	>"$W/both.out" 2>"$W/both.err"
check "recover -S p1 -S p2 --pipe exits 0" test $? -eq 0
check "the command gets p1's bytes, then p2's" \
	cmp "$W/both.out" <(cat "$W/p1" "$W/p2")

# Two save sets of one tree may write the same paths: one after the other.
check "save tree 1 again" "$BIN/save" -s $S -q -b Tapes "$W/t1"
again=$("$BIN/mminfo" -s $S -a -q "name=$W/t1" -r ssid 2>/dev/null |
	awk '$1 ~ /^[0-9]+$/ && $1 != "'"${ssids[2]}"'" {print $1; exit}')
mark=$(wc -l <"$LOG")
"$BIN/recover" -s $S -q -f -d "$W/r2" -S "${ssids[2]}" -S "${again:-0}" \
	-S "${ssids[3]}" >"$W/r2.out" 2>&1
check "recover -S of overlapping save sets exits 0" test $? -eq 0
check "tree 1 is identical" "$BIN/nsrtreecmp" "$W/t1" "$W/r2$W/t1"
check "tree 2 is identical" "$BIN/nsrtreecmp" "$W/t2" "$W/r2$W/t2"
nsr_wait_logged "$LOG" "save sets ${again:-0}, ${ssids[3]} from volume" ||
	fail "the second save set of tree 1 was not read with tree 2"
check "the overlapping ones in two passes, the third joins the second" \
	test "$(passes "$mark" | grep -c .)" -eq 2

# --- several paths of an index browse: one recover, one pass -------------
# recover -a with two trees (two save sets on the vtape) and the same two
# marked in the recover> browser: each volume read once for all of them.
mark=$(wc -l <"$LOG")
"$BIN/recover" -s $S -q -a -d "$W/a2" "$W/t1" "$W/t2/sub/mid.bin" \
	"$W/nosuch" >"$W/a2.out" 2>&1
rc=$?
sed 's/^/# recover -a: /' "$W/a2.out"
check "recover -a with a path not in the index exits non-zero" test $rc -ne 0
check "naming it" grep -q "$W/nosuch: not in the index" "$W/a2.out"
check "and prints no completion line" \
	test "$(grep -c 'Recover completion time' "$W/a2.out")" = 0
check "tree 1 is identical all the same" \
	"$BIN/nsrtreecmp" "$W/t1" "$W/a2$W/t1"
check "the file of tree 2 is identical" \
	cmp "$W/t2/sub/mid.bin" "$W/a2$W/t2/sub/mid.bin"
check "and nothing else of tree 2 came back" \
	test ! -e "$W/a2$W/t2/big.bin"
nsr_wait_logged "$LOG" "from volume MUX01 in one pass" ||
	fail "the mover logged no pass for recover -a"
check "recover -a of two save sets' paths read the volume once" \
	test "$(passes "$mark" | grep -c .)" -eq 1
check "for both save sets" \
	test "$(passes "$mark" | grep -cE 'save sets [0-9]+, [0-9]+ from')" -eq 1
mark=$(wc -l <"$LOG")
printf 'cd %s\nadd t1\nadd t2\nrelocate %s\nrecover\nquit\n' "$W" \
	"$W/m2" | "$BIN/recover" -s $S >"$W/m2.out" 2>&1
rc=$?
sed 's/^/# recover>: /' "$W/m2.out"
check "recover> of two marks exits 0" test $rc -eq 0
check "it completed" grep -q 'Recover completion time' "$W/m2.out"
for i in 1 2; do
	check "marked tree $i is identical" \
		"$BIN/nsrtreecmp" "$W/t$i" "$W/m2$W/t$i"
done
nsr_wait_logged "$LOG" "from volume MUX01 in one pass" ||
	fail "the mover logged no pass for the marks"
check "the marks were read in one pass" \
	test "$(passes "$mark" | grep -c .)" -eq 1

# --- point in time on the multiplexed vtape -----------------------------
T=$W/tree
PIT_SAVE_ARGS="-b Tapes"
mkdir -p "$W/noise"
head -c 2000000 /dev/urandom >"$W/noise/n.bin"
# pit_during_save - another session on the vtape beside each backup.
pit_during_save() {
	"$BIN/save" -s $S -q -b Tapes "$W/noise" >"$W/noise-$1.out" 2>&1
}
. "$(dirname "$0")/pit.sh"
pit_scenario
mark=$(wc -l <"$LOG")
pit_check_moments
check "a chain's save sets were read in one pass" \
	test "$(passes "$mark" | grep -cE 'save sets [0-9]+(, [0-9]+)+ from')" -ge 1
check "positioning between them rather than reading the others' blocks" \
	test "$(passes "$mark" | grep -cE ' ([2-9]|[0-9]{2,}) positionings')" -ge 1

nsr_done
