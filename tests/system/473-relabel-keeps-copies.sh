#!/bin/bash
# 473-relabel-keeps-copies: relabeling a volume takes out of the media
# database only the save sets whose only copy it held.  A save set with
# a clone on another volume stays and recovers from the clone; one
# without goes.  When nsrd cannot read a save set's fragments to tell
# (nsrmmdbd refuses one listing: NSR_TEST_MMDBD_FAIL_FRAG_LIST), the save
# set stays too, and the log says so: deleting it would take the records
# of its surviving copies with it.  A tape that just filled under a save
# that goes on elsewhere is not relabeled before its part is recorded:
# the save waits between learning its next volume and settling the full
# one (NSR_TEST_SPAN_HOLD_MS), and a relabel of the full tape meanwhile
# is refused by its mover; the save then completes and recovers.
. "$(dirname "$0")/lib.sh"
nsr_setup 473-relabel-keeps-copies
S=127.0.0.1
W=$ROOT/work
export NSR_TEST_MMDBD_FAIL_FRAG_LIST=$W/failed
export NSR_TEST_VTAPE_CAPACITY=3145728
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

# --- a full tape whose part is not recorded yet --------------------------
echo "create type: NSR pool; name: Span" |
	"$BIN/nsradmin" -s $S -i - >/dev/null
for i in 2 3; do
	nsr_device tape$i vtape "$W/tape$i.vtape"
	check "label SPAN0$i (pool Span)" "$BIN/nsrmm" -s $S -q -l -y -b Span \
		-f tape$i SPAN0$i
done
T=$W/span
mkdir -p "$T"
head -c 4500000 /dev/urandom >"$T/big.bin"
NSR_TEST_SPAN_HOLD_MS=6000 "$BIN/save" -s $S -q -b Span "$T" \
	>"$W/span.out" 2>&1 &
spid=$!
check "the save fills its first tape and learns the next" \
	nsr_wait_logged "$ROOT/logs/daemon.log" "save set [0-9]+ continues on volume SPAN0[23]"
dev=$(grep -o "volume SPAN0[23] in device tape[23] is full" \
	"$ROOT/logs/daemon.log" | head -1 | grep -o "tape[23]")
out=$("$BIN/nsrmm" -s $S -q -l -y -b Span -f "${dev:-tape2}" SPAN09 2>&1)
rc=$?
echo "$out" | sed 's/^/# nsrmm: /'
check "a relabel of the full tape ($dev) meanwhile is refused" test $rc -ne 0
check "... because a save session is on it" \
	grep -q "save and .* recover sessions are using the device" <<<"$out"
wait $spid
check "the save then completes" test $? -eq 0
ss=$(ssid_of "$T")
"$BIN/recover" -s $S -q -S "${ss:-0}" -d "$W/r2" >"$W/rec2.out" 2>&1
check "and recovers identical from both tapes" \
	cmp "$T/big.bin" "$W/r2$T/big.bin"
nsr_done
