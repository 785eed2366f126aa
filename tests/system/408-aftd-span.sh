#!/bin/bash
# 408-aftd-span: a save set larger than what is left on an AFTD continues
# on the next volume of the pool, as on tape.  Two AFTDs that hold at
# most 3 MB of session files each (their "volume default capacity", which
# the movers get as nsrmmd -C) in pool Span: a 4.5 MB tree saves, mminfo shows
# a head on one volume and a tail on the other, the head's volume is
# marked full, and recover -S and -a give the tree back.  A save striped
# over three connections spans as well (the joined connections close at
# the full volume's mover and the session stripes again at the next).  A
# session that begins on a volume its mover already found full (nsrd
# chose it before it learned) is told "full at byte 0" at once, not
# refused, and records nothing there.  A capacity that is not a size,
# or below 1 MB, is refused when it is set.  With the media database
# lost, scanner -m on the two AFTDs puts the spanning save set back
# (head and tail) and it recovers.  A capacity changed while a mover
# runs is said by the storage node (that mover keeps its own).  A save
# into a pool whose only AFTD fills fails, and the part it wrote there
# is removed (no session file, no written bytes left of it); one whose
# other AFTD holds a recyclable volume spans onto it (auto media
# management relabels it for the tail).  A clone of
# the spanning save set, read from its two AFTDs, spans two more and
# recovers.  A mover's end answer that holds a byte fewer than was sent
# fails the save (NSR_TEST_MMD_SHORT_REPLY).
. "$(dirname "$0")/lib.sh"
nsr_setup 408-aftd-span
S=127.0.0.1
W=$ROOT/work
mkdir -p "$W"
# Armed (removed) for its case only: a mover's end answer a byte short.
export NSR_TEST_MMD_SHORT_REPLY=$ROOT/short-reply
touch "$NSR_TEST_MMD_SHORT_REPLY"
nsr_start_datazone

admin() { "$BIN/nsradmin" -s $S -i - >/dev/null; }
# label POOL DEV... - an AFTD per name in pool POOL, labeled DEV's name
# in capitals.
label() {
	local pool=$1 d
	shift
	echo "create type: NSR pool; name: $pool" | admin
	for d in "$@"; do
		mkdir -p "$W/$d"
		nsr_device "$d" adv_file "$W/$d" "volume default capacity: 3 MB"
		check "label ${d^^} in $d" "$BIN/nsrmm" -s $S -q -l -y -b "$pool" \
			-f "$d" "${d^^}"
	done
}
# rows NAME - ssid, volume and flags of each fragment of save sets NAME.
rows() {
	"$BIN/mminfo" -s $S -a -q "name=$1" -r "ssid,volume,sumflags" 2>/dev/null
}
# spans_two NAME VOLA VOLB - the newest save set NAME (its ssid into
# SSID) has its head on one of the two volumes and its tail on the other;
# the head's volume is marked full.
spans_two() {
	local r ssid head full
	r=$(rows "$1")
	echo "$r" | sed 's/^/# mminfo: /'
	ssid=$(awk '$1 ~ /^[0-9]+$/ && $1 > s {s = $1} END {print s}' <<<"$r")
	check "$1: a head on $2 or $3" grep -Eq "^ *$ssid +($2|$3) +h" <<<"$r"
	check "$1: a tail on the other" grep -Eq "^ *$ssid +($2|$3) +t" <<<"$r"
	check "$1: on two volumes" test "$(awk -v s="$ssid" '$1 == s {print $2}' \
		<<<"$r" | sort -u | wc -l)" -eq 2
	head=$(awk -v s="$ssid" '$1 == s && $3 ~ /^h/ {print $2}' <<<"$r")
	full=$("$BIN/mminfo" -s $S -a -q "volume=${head:-none},full" -r volume 2>&1)
	check "$1: the head's volume ${head:-none} is marked full" \
		grep -Eq "^ *${head:-none} *$" <<<"$full"
	SSID=$ssid
}

T=$W/tree
mkdir -p "$T/d"
head -c 2500000 /dev/urandom >"$T/d/one.bin"
head -c 2000000 /dev/urandom >"$T/two.bin"
seq 1 20000 >"$T/d/numbers"

# --- one connection ----------------------------------------------------------
# size_of SSID - the bytes of its fragments, as the media database has it.
size_of() {
	"$BIN/mmdtest" mmdb-frags $S "$1" 2>/dev/null |
		awk '{t += $4} END {print t + 0}'
}
# A fixed read size makes the save stream the same for the same tree.
export NSR_READ_SIZE=1048576
label Span disk1 disk2
out=$("$BIN/save" -s $S -q -b Span --stripes=1 "$T" 2>&1)
check "a save set larger than one AFTD succeeds" test $? -eq 0
echo "$out" | sed 's/^/# save: /'
spans_two "$T" DISK1 DISK2
SS1=$SSID
check "recover -S of the spanning save set gives the tree back" \
	recovers_identical "$T" -S "${SSID:-0}"
Z1=$(size_of "${SSID:-0}")
check "recover -a gives the tree back" recovers_identical "$T"
m=$("$BIN/mminfo" -s $S -m 2>&1)
echo "$m" | sed 's/^/# mminfo -m: /'
check "mminfo -m shows the AFTDs' capacity (3 MB, 3072 KB)" \
	test "$(grep -Ec ' DISK[12] .* 3072 KB *$' <<<"$m")" = 2
check "and the full one as full" grep -Eq " DISK[12] .* full " <<<"$m"
check "the mover said where the client goes on" \
	grep -q "nsrmmd.*is full: save set ${SSID:-0} .* the client goes on" \
	"$ROOT/logs/daemon.log"

# A changed capacity is said: running movers keep theirs until they exit.
printf '. type: NSR device; name: disk2\nupdate volume default capacity: 4 MB\n' |
	admin
head -c 1000 /dev/urandom >"$W/small"
check "a small save into Span still fits" \
	"$BIN/save" -s $S -q -b Span --stripes=1 "$W/small"
check "the storage node says disk2's running mover keeps its capacity" \
	grep -q "device disk2: its volume default capacity or segment size changed; its 1 running mover(s) keep the former" \
	"$ROOT/logs/daemon.log"

# --- a volume found full at the begin -----------------------------------------
# disk1 or disk2, whichever filled: a session begun there straight at its
# mover (mmdtest has nobody to ask for another volume) is told the volume
# is full at byte 0, and nothing of it is recorded there.
FULLDEV=$(awk '$1 ~ /^[0-9]+$/ && $3 ~ /^h/ {print tolower($2); exit}' <<<"$(rows "$T")")
read -r P _ < <("$BIN/mmdtest" mover $S adv_file "$W/${FULLDEV:-disk1}" \
	"${FULLDEV:-disk1}" 0 $S)
VOLID=$("$BIN/mmdtest" readlabel $S "${P:-0}" | awk '{print $5}')
ST=1700000300
M=$("$BIN/mmdtest" mmdb-ss $S client1 /late $ST)
head -c 200000 /dev/urandom >"$W/late"
out=$("$BIN/mmdtest" save $S "${P:-0}" "${M:-0}" client1 /late $ST \
	<"$W/late" 2>&1)
check "a session on the full volume does not succeed there" test $? -ne 0
echo "$out" | sed 's/^/# mmdtest: /'
check "it is told the volume is full at byte 0" \
	grep -q "is full at byte 0 of save set ${M:-0}" <<<"$out"
grep -q "cannot start save set" <<<"$out"
check "and not that it could not start" test $? -ne 0
check "nothing of it is recorded" test -z "$("$BIN/mmdtest" mmdb-frags $S "${M:-0}")"
[ -n "$VOLID" ] || fail "no volume id read from ${FULLDEV:-disk1}"

# --- striped over three connections -------------------------------------------
label Span3 disk3 disk4
out=$("$BIN/save" -s $S -v -b Span3 --stripes=3 "$T" 2>&1)
check "a striped save set larger than one AFTD succeeds" test $? -eq 0
echo "$out" | grep -i "connection\|volume" | sed 's/^/# save: /'
spans_two "$T" DISK3 DISK4
check "the joined connections were opened at both movers (4 joins)" \
	test "$(grep -c 'connection [0-9] joined' "$ROOT/logs/daemon.log")" -ge 4
check "the striped spanning save set recovers identical" \
	recovers_identical "$T" -S "${SSID:-0}"
Z3=$(size_of "${SSID:-0}")
check "its fragments hold as many bytes as the unstriped one's ($Z3, $Z1)" \
	test "$Z3" -gt 4500000 -a "$Z3" = "$Z1"


# --- a mover whose last fragment does not hold every byte sent -----------------
rm -f "$NSR_TEST_MMD_SHORT_REPLY"
out=$("$BIN/save" -s $S -q -b Span3 --stripes=1 "$W/small" 2>&1)
check "a save the mover answers a byte short fails" test $? -ne 0
check "the knob fired" test -e "$NSR_TEST_MMD_SHORT_REPLY"
check "saying the save set is not complete" \
	grep -q "placed [0-9]* bytes of save set [0-9]* from byte 0 on, where [0-9]* were sent: the save set is not complete" <<<"$out"

# --- a clone: read from two AFTDs, written over two more -------------------------
label Copies disk10 disk11
out=$("$BIN/nsrclone" -s $S -b Copies -S "${SS1:-0}" 2>&1)
check "nsrclone of the spanning save set into two small AFTDs succeeds" \
	test $? -eq 0
echo "$out" | sed 's/^/# nsrclone: /'
c=$(nsr_copies "${SS1:-0}"); echo "$c" | sed 's/^/# copies: /'
check "the copy spans DISK10 and DISK11" \
	test "$(grep -Ec ':DISK1[01]$' <<<"$c")" = 2
cl=$(awk -F: '$3 == "DISK10" || $3 == "DISK11" {print $1; exit}' <<<"$c")
check "the copy (clone ${cl:-none}) recovers identical" \
	recovers_identical "$T" -S "${SS1:-0}/${cl:-0}"

# --- no other volume: the save fails and leaves no byte behind -------------------
label Alone disk9
out=$("$BIN/save" -s $S -q -b Alone --stripes=1 "$T" 2>&1)
check "a save larger than the pool's only AFTD fails" test $? -ne 0
echo "$out" | sed 's/^/# save: /'
check "saying the volume is full and no other is left" \
	grep -q "DISK9 in device disk9 is full at byte .* no writable volume of pool 'Alone' left" <<<"$out"
check "the AFTD holds no session file of it (only its label)" \
	test -z "$(ls "$W/disk9" | grep -v '^label')"
check "the mover says it removed the unrecorded part" \
	grep -q "its unrecorded part on volume DISK9 removed (session file" \
	"$ROOT/logs/daemon.log"
w9=$("$BIN/mminfo" -s $S -q volume=DISK9 -r written 2>&1 | tail -n 1)
check "and its written figure counts none of it ($w9)" grep -Eq "^ *0 (B|KB) *$" <<<"$w9"

# --- the next volume recycled: auto media management at a span ---------------
# DISK8 holds a save set and is marked recyclable, DISK7 is empty: the
# save starts on DISK7 and, when it fills, nsrd relabels DISK8 for the
# rest (its save set leaves the media database).
label Recy disk8
seq 1 1000 >"$W/small.txt"
check "a small save to DISK8" "$BIN/save" -s $S -q -b Recy -N old8 "$W/small.txt"
check "DISK8 marked recyclable" "$BIN/nsrmm" -s $S -q -o recyclable DISK8
label Recy disk7
"$BIN/save" -s $S -q -b Recy --stripes=1 -N recy "$T" >"$W/recy.out" 2>&1
check "a save larger than DISK7 spans onto the recycled DISK8" test $? -eq 0
sed 's/^/# save: /' "$W/recy.out"
check "nsrd relabeled DISK8 by itself for the tail" \
	grep -q "auto media management: relabeling recyclable volume DISK8" \
	"$ROOT/logs/daemon.log"
spans_two recy DISK7 DISK8
check "DISK8's old save set left the media database" \
	test -z "$(rows old8 | awk '$1 ~ /^[0-9]+$/')"
check "the save set spanning onto it recovers identical" \
	recovers_identical "$T" -S "${SSID:-0}"

# --- the media database rebuilt from the two AFTDs --------------------------------
nsr_lose_mmdb
for d in disk1 disk2; do
	"$BIN/scanner" -m -s $S "$W/$d" >"$W/scan-$d.out" 2>&1
	check "scanner -m on $d exits 0" test $? -eq 0
done
r=$(rows "$T")
echo "$r" | sed 's/^/# mminfo after scanner: /'
check "save set ${SS1:-x} has its head back" grep -Eq "^ *${SS1:-x} +DISK[12] +h" <<<"$r"
check "and its tail" grep -Eq "^ *${SS1:-x} +DISK[12] +t" <<<"$r"
check "the rebuilt spanning save set recovers identical" \
	recovers_identical "$T" -S "${SS1:-0}"

# --- the attribute's values ----------------------------------------------------
for v in "lots" "512 KB"; do
	out=$(printf 'create type: NSR device; name: bad; media type: adv_file; device access information: %s; volume default capacity: %s\n' \
		"$W/disk1" "$v" | "$BIN/nsradmin" -s $S -i - 2>&1)
	check "volume default capacity '$v' is refused" test $? -ne 0
	check "saying what a capacity is" \
		grep -q "volume default capacity '$v' is not a size of 1 MB or more" <<<"$out"
done
nsr_done
