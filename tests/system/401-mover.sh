#!/bin/bash
# 401-mover: a storage node (nsrexecd -s, which runs nsrsnmd) starts data
# movers on demand for a vtape and an AFTD; volumes are labeled, save sets
# are written concurrently through the mmd client library (mmdtest) and
# read back identical (one whose blocks lie around another's is read
# without reading the other's blocks); a relabel of a volume with data is
# refused; a full vtape fails the session naming the volume; a killed
# mover is replaced.
. "$(dirname "$0")/lib.sh"
nsr_setup 401-mover
export NSR_MOVER_IDLE=120
T=$BIN/mmdtest
H=127.0.0.1

nsr_start nsrexecd -s
nsr_wait_registered nsrsnmd

# mover DEV... - ask nsrsnmd for a mover, retrying while it is throttled.
mover() {
	local out i
	for i in $(seq 1 50); do
		if out=$("$T" mover $H "$@" 2>"$ROOT/mover.err"); then
			echo "$out"; return 0
		fi
		grep -q "next attempt" "$ROOT/mover.err" || break
		sleep 0.2
	done
	cat "$ROOT/mover.err" >&2
	return 1
}

mkdir -p "$ROOT/aftd1"
for i in 1 2 3; do
	head -c $((i * 700000 + 13)) /dev/urandom >"$ROOT/data$i"
done
: >"$ROOT/data4"

# --- vtape: label, multiplexed saves, recover -----------------------------
read -r VP VPID < <(mover vtape "$ROOT/vt1" vt1)
check "nsrsnmd started a mover for the vtape" test -n "$VP"
read -r VP2 VPID2 < <(mover vtape "$ROOT/vt1" vt1)
check "a second request gets the same mover" test "$VP2:$VPID2" = "$VP:$VPID"
expect_fail "an unlabeled vtape has no label" "$T" readlabel $H "$VP"
check "label VT001 with 64 KB blocks" "$T" label $H "$VP" VT001 Default 65536
check "the label reads back, empty" \
	grep -q "^VT001 Default 65536 empty [0-9a-f]\{32\}$" <("$T" readlabel $H "$VP")

pids=()
for i in 1 2 3 4; do
	"$T" save $H "$VP" 10$i client1 /fs$i <"$ROOT/data$i" >"$ROOT/vfrag$i" &
	pids+=($!)
done
for i in 1 2 3 4; do
	check "vtape save set 10$i written" wait "${pids[$((i - 1))]}"
done
check "fragments say complete" \
	test "$(cut -d: -f9 "$ROOT"/vfrag* | sort -u)" = 1
for i in 1 2 3 4; do
	"$T" recover $H "$VP" 10$i $(cat "$ROOT/vfrag$i") >"$ROOT/vout$i"
	check "vtape save set 10$i reads back identical" \
		cmp -s "$ROOT/data$i" "$ROOT/vout$i"
done
check "the vtape label now says data" \
	grep -q "^VT001 Default 65536 data [0-9a-f]\{32\}$" <("$T" readlabel $H "$VP")
expect_fail "relabel of a volume with data is refused" \
	"$T" label $H "$VP" VT002 Default 65536
check "and the reason names the device" \
	grep -q "holds save sets" <("$T" label $H "$VP" VT002 Default 65536 2>&1)

# A save set whose blocks lie around another's: its read reads its own
# blocks and spaces over the other one's unread (nsr_volume(5) version 2).
mkfifo "$ROOT/fifo6"
"$T" save $H "$VP" 106 client1 /around <"$ROOT/fifo6" >"$ROOT/vfrag6" &
around=$!
exec 7>"$ROOT/fifo6"
# The client sends in pieces of 1 MiB: give it more, wait till it is out.
vt0=$(stat -c %s "$ROOT/vt1")
head -c 1500000 "$ROOT/data3" >&7
for _ in $(seq 1 300); do
	[ $(($(stat -c %s "$ROOT/vt1") - vt0)) -ge 900000 ] && break
	sleep 0.1
done
"$T" save $H "$VP" 107 client1 /inside <"$ROOT/data2" >"$ROOT/vfrag7"
check "save set 107 written while 106 waits" test -s "$ROOT/vfrag7"
tail -c +1500001 "$ROOT/data3" >&7
exec 7>&-
check "save set 106 written around it" wait $around
"$T" recover $H "$VP" 106 $(cat "$ROOT/vfrag6") >"$ROOT/vout6"
check "save set 106 reads back identical" cmp -s "$ROOT/data3" "$ROOT/vout6"
# 107 has 22 blocks of 64 KB; they lie between 106's.
passed="blocks read (0 of them other save sets'), 2[0-9] blocks of other"
check "reading it passed save set 107's blocks unread" grep -q \
	"save set 106 from volume VT001: [0-9]* $passed" "$ROOT/logs/daemon.log"
"$T" recover $H "$VP" 107 $(cat "$ROOT/vfrag7") >"$ROOT/vout7"
check "save set 107 reads back identical" cmp -s "$ROOT/data2" "$ROOT/vout7"

# --- AFTD: parallel sessions -------------------------------------------------
read -r AP APID < <(mover adv_file "$ROOT/aftd1" aftd1)
check "nsrsnmd started a second mover for the AFTD" test -n "$AP" -a "$AP" != "$VP"
check "label AF001" "$T" label $H "$AP" AF001 Default 32768
pids=()
for i in 1 2 3; do
	"$T" save $H "$AP" 20$i client2 /d$i <"$ROOT/data$i" >"$ROOT/afrag$i" &
	pids+=($!)
done
for i in 1 2 3; do
	check "AFTD save set 20$i written" wait "${pids[$((i - 1))]}"
done
check "each AFTD session got its own file" \
	test "$(cut -d: -f5 "$ROOT"/afrag* | sort -u | wc -l)" = 3
for i in 1 2 3; do
	"$T" recover $H "$AP" 20$i $(cat "$ROOT/afrag$i") >"$ROOT/aout$i"
	check "AFTD save set 20$i reads back identical" \
		cmp -s "$ROOT/data$i" "$ROOT/aout$i"
done
# Reads while writing: an AFTD serves a recover beside a running save; a
# vtape refuses it with a message.
(cat "$ROOT/data1"; sleep 2) | "$T" save $H "$AP" 204 client2 /slow >"$ROOT/afrag4" &
slow=$!
sleep 0.5
"$T" recover $H "$AP" 202 $(cat "$ROOT/afrag2") >"$ROOT/aout2b"
check "the AFTD reads a save set while another is being written" \
	cmp -s "$ROOT/data2" "$ROOT/aout2b"
check "and the running save completes" wait $slow
(cat "$ROOT/data1"; sleep 2) | "$T" save $H "$VP" 105 client1 /slow >"$ROOT/vfrag5" &
slow=$!
sleep 0.5
out=$("$T" recover $H "$VP" 101 $(cat "$ROOT/vfrag1") 2>&1 >/dev/null)
rc=$?
check "a vtape being written refuses a recover" test $rc -ne 0
check "saying it is busy" grep -q "device vt1 is busy" <<<"$out"
check "and the running save completes" wait $slow
out=$("$T" mover $H vtape "$ROOT/vt1" other 2>&1)
rc=$?
check "a second device name on the same vtape is refused" test $rc -ne 0
check "naming the device that has it" grep -q "served by the mover of device vt1" <<<"$out"
check "SNM_STATUS lists both movers" \
	test "$("$T" status $H | wc -l)" = 2
expect_fail "a fragment of another volume is refused" \
	"$T" recover $H "$AP" 101 $(cat "$ROOT/vfrag1")

# --- end of medium ---------------------------------------------------------------
read -r SP SPID < <(mover vtape "$ROOT/vt2" small 1048576)
check "label a 1 MB vtape" "$T" label $H "$SP" SMALL1 Default 32768
out=$("$T" save $H "$SP" 301 client1 /big <"$ROOT/data3" 2>&1)
rc=$?
check "a save set larger than the vtape fails" test $rc -ne 0
check "and the message says the volume is full" grep -q "SMALL1.*is full" <<<"$out"

# --- a killed mover is replaced --------------------------------------------------
kill -KILL "$VPID"
read -r NP NPID < <(mover vtape "$ROOT/vt1" vt1)
check "a new mover replaces the killed one" test -n "$NPID" -a "$NPID" != "$VPID"
check "it reads the same volume" \
	grep -q "^VT001 Default 65536 data [0-9a-f]\{32\}$" <("$T" readlabel $H "$NP")
"$T" recover $H "$NP" 102 $(cat "$ROOT/vfrag2") >"$ROOT/vout2b"
check "and recovers a save set from it" cmp -s "$ROOT/data2" "$ROOT/vout2b"

# --- scanner reads the volumes with no help from the server -----------------
S=$BIN/scanner
out=$("$S" "$ROOT/vt1")
check "scanner lists the vtape's label" grep -q "vtape volume VT001 " <<<"$out"
for i in 1 2 3 4; do
	check "scanner lists save set 10$i complete" \
		grep -Eq "^client1 +/fs$i .* 10$i E$" <<<"$out"
done
check "scanner gives each save set's size" \
	grep -Eq "^client1 +/fs3 .* $((3 * 700000 + 13)) +1 +103 E$" <<<"$out"
check "scanner -S restricts to one save set" \
	test "$("$S" -S 202 "$ROOT/aftd1" | grep -c '^client2')" = 1
check "scanner marks the save set cut by the end of the vtape" \
	grep -Eq "^client1 +/big .* 301 B$" <(< /dev/null "$S" -t vtape "$ROOT/vt2")
# Damage: a vtape with one save set (no multiplexing, so the middle of
# the file is that save set's data) and a small one after it; flip bytes
# in the middle of a copy.
read -r DP DPID < <(mover vtape "$ROOT/vt3" vt3)
check "label DMG001" "$T" label $H "$DP" DMG001 Default 32768
"$T" save $H "$DP" 401 client3 /big <"$ROOT/data2" >"$ROOT/dfrag1"
"$T" save $H "$DP" 402 client3 /small <"$ROOT/data1" >"$ROOT/dfrag2"
cp "$ROOT/vt3" "$ROOT/vt3bad"
printf '\xde\xad\xbe\xef\xde\xad\xbe\xef' |
	dd of="$ROOT/vt3bad" bs=1 seek=700000 conv=notrunc status=none
out=$("$S" "$ROOT/vt3bad" 2>"$ROOT/scan.err")
rc=$?
check "scanner exits non-zero on a damaged volume" test $rc -eq 1
check "and names the damaged save set and volume" \
	grep -q "save set 401 (client3:/big) on volume DMG001 is damaged" "$ROOT/scan.err"
check "and still lists both save sets" test "$(grep -c '^client3' <<<"$out")" = 2
check "the intact one unmarked" grep -Eq "^client3 +/small .* 402 E$" <<<"$out"
read -r BP BPID < <(mover vtape "$ROOT/vt3bad" vt3bad)
"$T" recover $H "$BP" 401 $(cat "$ROOT/dfrag1") >/dev/null 2>"$ROOT/rec.err"
rc=$?
check "recovering the damaged save set fails" test $rc -ne 0
check "naming the save set and the volume" \
	grep -q "save set 401 on volume DMG001 .*damaged" "$ROOT/rec.err"
"$T" recover $H "$BP" 402 $(cat "$ROOT/dfrag2") >"$ROOT/dout2"
check "the other save set still reads back identical" cmp -s "$ROOT/data1" "$ROOT/dout2"
nsr_done
