#!/bin/bash
# 413-aftd-space: an AFTD gets its space back.
#  - the mover is killed (-9) in the middle of a large save: its session
#    file is left as an in-progress file (ss.N.part); the next mover to
#    start removes it, and the volume's written figure is the sum of the
#    live save sets' sizes;
#  - nsrmm -d -S removes a save set's session file with its record,
#    takes its bytes off the written figure and the volume is no longer
#    full;
#  - a removal whose mover died after its intent record is finished by
#    the next mover to start;
#  - a save set delete that nsrd left in its intent record is finished by
#    nsrd, and a listed label that did not happen is dropped;
#  - nsrmm -d VOLUME removes a mounted AFTD volume's session files, the
#    save sets whose only copy it held and the volume; a volume delete
#    that nsrd left in its intent record is finished by nsrd; a volume
#    that is not mounted goes without its bytes, and nsrd says so.
. "$(dirname "$0")/lib.sh"
nsr_setup 413-aftd-space
export NSR_MOVER_IDLE=120
S=127.0.0.1
W=$ROOT/work
A=$W/aftd
mkdir -p "$A"
nsr_start_datazone

# mover - the port and pid of the AFTD's mover (started if needed),
# retrying while nsrsnmd throttles a restart.
mover() {
	local out i
	for i in $(seq 1 50); do
		if out=$("$BIN/mmdtest" mover $S adv_file "$A" disk1 0 $S 2>"$W/mover.err"); then
			echo "$out"; return 0
		fi
		grep -q "next attempt" "$W/mover.err" || break
		sleep 0.2
	done
	cat "$W/mover.err" >&2
	return 1
}
# written / size_of SSID - the figures as plain numbers (JSON export).
written() { "$BIN/mminfo" -s $S -xj -r written SP01 2>/dev/null | grep -o '"written": *[0-9]*' | grep -o '[0-9]*$'; }
size_of() { "$BIN/mminfo" -s $S -a -q "ssid=$1" -xj -r totalsize 2>/dev/null | grep -o '"totalsize": *[0-9]*' | grep -o '[0-9]*$'; }
ssid_of() { "$BIN/mminfo" -s $S -a -q "name=$1" -r ssid 2>/dev/null | awk '$1 ~ /^[0-9]+$/ {print $1; exit}'; }
parts() { find "$A" -name 'ss.*.part' | wc -l; }
finals() { find "$A" -name 'ss.*' ! -name '*.part' | wc -l; }

echo 'create type: NSR pool; name: Space' | "$BIN/nsradmin" -s $S -i - >/dev/null
nsr_device disk1 adv_file "$A"
check "label SP01" "$BIN/nsrmm" -s $S -q -l -y -b Space -f disk1 SP01

mkdir -p "$W/keep" "$W/big" "$W/gone"
head -c 300000 /dev/urandom >"$W/keep/k.bin"
head -c 150000000 /dev/urandom >"$W/big/b.bin"
head -c 2000000 /dev/urandom >"$W/gone/g.bin"
check "save a small tree" "$BIN/save" -s $S -q -b Space "$W/keep"
keep=$(ssid_of "$W/keep")
check "it is in the media database" test -n "$keep"
check "one session file, nothing in progress" test "$(finals)" -eq 1 -a "$(parts)" -eq 0

# --- kill -9 of the mover in the middle of a large save -----------------
read -r port pid < <(mover)
check "the AFTD has a mover (pid ${pid:-none})" test -n "${pid:-}"
"$BIN/save" -s $S -q -b Space "$W/big" >"$W/big.out" 2>&1 &
spid=$!
grown=0
for i in $(seq 1 600); do
	f=$(find "$A" -name 'ss.*.part' -size +20M | head -1)
	if [ -n "$f" ]; then grown=1; break; fi
	kill -0 $spid 2>/dev/null || break
	sleep 0.05
done
check "the large save is under way in an in-progress file" test $grown -eq 1
[ -n "${pid:-}" ] && kill -KILL "$pid"
wait $spid
check "the save fails" test $? -ne 0
check "the killed mover left its session file in progress" test "$(parts)" -eq 1
left=$(du -b "$A" | tail -1 | cut -f1)
echo "# after the kill: $left bytes in the AFTD"

read -r port2 pid2 < <(mover)
check "a new mover starts (pid ${pid2:-none})" test -n "${pid2:-}" -a "${pid2:-}" != "${pid:-}"
check "no orphan is left on the AFTD" test "$(parts)" -eq 0
check "the complete save set's file is still there" test "$(finals)" -eq 1
check "the mover said so in the log" \
	grep -q "removed 1 session file(s) of sessions that never ended" "$ROOT/logs/daemon.log"
w=$(written); k=$(size_of "$keep")
check "written ($w) is the live save set's size ($k)" test -n "$w" -a "$w" = "$k"
# The aborted save set has no fragment: deleting it asks the AFTD's mover
# to look for an unrecorded file of it, and touches nothing else.
big=$(ssid_of "$W/big")
check "the aborted save set is in the media database" test -n "$big"
check "nsrmm -d -S $big (aborted, no fragment)" "$BIN/nsrmm" -s $S -q -d -y -S "${big:-0}"
check "the complete save set's file is untouched" test "$(finals)" -eq 1
check "written is unchanged" test "$(written)" = "$k"

# --- nsrmm -d -S frees the file and the figure ----------------------------
check "save another tree" "$BIN/save" -s $S -q -b Space "$W/gone"
gone=$(ssid_of "$W/gone")
g=$(size_of "$gone")
w=$(written)
check "written ($w) counts both save sets ($k + $g)" test "$w" = "$((${k:-0} + ${g:-0}))"
check "two session files" test "$(finals)" -eq 2
isfull() { "$BIN/mminfo" -s $S -q full -r volume 2>/dev/null | grep -qw SP01; }
check "mark SP01 full (as a filled-up AFTD is)" "$BIN/nsrmm" -s $S -q -o full SP01
check "SP01 is full" isfull
before=$(du -b "$A" | tail -1 | cut -f1)
check "nsrmm -d -S $gone" "$BIN/nsrmm" -s $S -q -d -y -S "${gone:-0}"
check "its session file is gone" test "$(finals)" -eq 1
after=$(du -b "$A" | tail -1 | cut -f1)
check "the AFTD holds at least 2 MB less ($before -> $after)" \
	test $((before - after)) -ge 2000000
w=$(written)
check "written ($w) is back to the live save set's size ($k)" test "$w" = "$k"
check "no intent record is left" test ! -e "$A/remove.intent"
expect_fail "SP01 is no longer full" isfull
check "the save set is gone from the media database" test -z "$(ssid_of "$W/gone")"
# --- a removal the mover did not finish is finished at its next start --
# (as if it died after making its intent record durable)
mkdir -p "$W/half"
head -c 1000000 /dev/urandom >"$W/half/h.bin"
check "save a third tree" "$BIN/save" -s $S -q -b Space "$W/half"
half=$(ssid_of "$W/half")
check "two session files again" test "$(finals)" -eq 2
read -r port3 pid3 < <(mover)
printf '%s\n' "${half:-0}" >"$A/remove.intent"
[ -n "${pid3:-}" ] && kill -KILL "$pid3"
read -r port4 pid4 < <(mover)
check "a new mover starts (pid ${pid4:-none})" test -n "${pid4:-}" -a "${pid4:-}" != "${pid3:-}"
check "it finished the removal" test "$(finals)" -eq 1 -a ! -e "$A/remove.intent"
check "and said so" grep -q "finished an interrupted removal: 1 session file" "$ROOT/logs/daemon.log"
check "nsrmm -d -S $half then completes the delete" "$BIN/nsrmm" -s $S -q -d -y -S "${half:-0}"
w=$(written)
check "written ($w) is the live save set's size ($k)" test "$w" = "$k"

# --- a delete that nsrd left listed (it died after its intent record) is
# finished by nsrd itself; a listed label that did not happen is dropped --
mkdir -p "$W/cut"
head -c 500000 /dev/urandom >"$W/cut/c.bin"
check "save a fourth tree" "$BIN/save" -s $S -q -b Space "$W/cut"
cut=$(ssid_of "$W/cut")
client=$("$BIN/mminfo" -s $S -a -q "ssid=${cut:-0}" -xj -r client 2>/dev/null |
	grep -o '"client": *"[^"]*"' | sed 's/.*: *"//; s/"$//')
check "two session files again" test "$(finals)" -eq 2
printf '%s\t%s\n' "${cut:-0}" "$client" >"$ROOT/res/delete.intent"
for i in $(seq 1 200); do
	[ -z "$(ssid_of "$W/cut")" ] && [ ! -s "$ROOT/res/delete.intent" ] && break
	sleep 0.1
done
check "nsrd finished the listed delete of save set $cut" test -z "$(ssid_of "$W/cut")"
check "and took it off its intent record" test ! -s "$ROOT/res/delete.intent"
check "its session file is gone" test "$(finals)" -eq 1
check "written is the live save set's size" test "$(written)" = "$k"
check "nsrd said so" grep -q "save set $cut: the delete cut short by a failure is finished" "$ROOT/logs/daemon.log"
printf '%s\tdisk1\tSP99\n' "$(date +%s)" >"$ROOT/res/label.intent"
for i in $(seq 1 200); do
	[ -s "$ROOT/res/label.intent" ] || break
	sleep 0.1
done
check "nsrd settled the listed label" test ! -s "$ROOT/res/label.intent"
check "which did not happen" grep -q "volume SP99 on device disk1: the label cut short by a failure did not happen" "$ROOT/logs/daemon.log"
expect_fail "SP99 is not in the media database" \
	grep -qw SP99 <<<"$("$BIN/mminfo" -s $S -m 2>/dev/null)"
check "SP01 keeps its save set" test "$(finals)" -eq 1

"$BIN/recover" -s $S -q -S "$keep" -d "$W/r" >/dev/null 2>&1
check "the live save set still recovers" cmp -s "$W/keep/k.bin" "$W/r$W/keep/k.bin"

# --- nsrmm -d VOLUME frees the AFTD and drops its only copies -------------
B=$W/aftd2
mkdir -p "$B" "$W/v1" "$W/v2" "$W/v3"
finals2() { find "$B" -name 'ss.*' | wc -l; }
volumes() { "$BIN/mminfo" -s $S -m 2>/dev/null; }
head -c 700000 /dev/urandom >"$W/v1/a.bin"
head -c 900000 /dev/urandom >"$W/v2/b.bin"
head -c 400000 /dev/urandom >"$W/v3/c.bin"
echo 'create type: NSR pool; name: Space2' | "$BIN/nsradmin" -s $S -i - >/dev/null
nsr_device disk2 adv_file "$B"
check "label SP02" "$BIN/nsrmm" -s $S -q -l -y -b Space2 -f disk2 SP02
check "save to SP02 (1)" "$BIN/save" -s $S -q -b Space2 "$W/v1"
check "save to SP02 (2)" "$BIN/save" -s $S -q -b Space2 "$W/v2"
v1=$(ssid_of "$W/v1")
check "two session files on SP02" test "$(finals2)" -eq 2
before=$(du -b "$B" | tail -1 | cut -f1)
check "nsrmm -d SP02" "$BIN/nsrmm" -s $S -q -d -y SP02
after=$(du -b "$B" | tail -1 | cut -f1)
check "its session files are gone" test "$(finals2)" -eq 0
check "the AFTD holds at least 1.6 MB less ($before -> $after)" \
	test $((before - after)) -ge 1600000
expect_fail "SP02 is not in the media database" grep -qw SP02 <<<"$(volumes)"
check "its save sets are gone from the media database" \
	test -z "$(ssid_of "$W/v1")" -a -z "$(ssid_of "$W/v2")"
check "nsrd said how much it freed" \
	grep -q "volume SP02: [0-9]* bytes of 2 save set(s) freed" "$ROOT/logs/daemon.log"
check "and which save sets left with it" \
	grep -q "deletion of volume SP02: 2 save set(s) whose only copy" "$ROOT/logs/daemon.log"
"$BIN/recover" -s $S -q -S "${v1:-0}" -d "$W/r1" >"$W/r1.out" 2>&1
expect_fail "recover -S of a deleted volume's save set finds nothing" \
	test -e "$W/r1$W/v1/a.bin"
expect_fail "nsrmm -d of a volume that does not exist fails" \
	"$BIN/nsrmm" -s $S -q -d -y SP77
# a volume delete nsrd left listed (it died after its intent record)
check "label SP03 on the same AFTD" "$BIN/nsrmm" -s $S -q -l -y -b Space2 -f disk2 SP03
check "save to SP03" "$BIN/save" -s $S -q -b Space2 "$W/v3"
check "one session file on SP03" test "$(finals2)" -eq 1
printf 'SP03\n' >"$ROOT/res/voldelete.intent"
for i in $(seq 1 200); do
	[ -s "$ROOT/res/voldelete.intent" ] || break
	sleep 0.1
done
check "nsrd finished the listed volume delete" test ! -s "$ROOT/res/voldelete.intent"
check "SP03's session file is gone" test "$(finals2)" -eq 0
expect_fail "SP03 is not in the media database" grep -qw SP03 <<<"$(volumes)"
check "its save set is gone" test -z "$(ssid_of "$W/v3")"
check "nsrd said so" grep -q "volume SP03: the delete cut short by a failure is finished" "$ROOT/logs/daemon.log"
# a volume that is not mounted: its record and only copies go, its bytes
# stay (no mover can reach them) until it is relabeled, and nsrd says so
mkdir -p "$W/v4"
head -c 300000 /dev/urandom >"$W/v4/d.bin"
check "label SP04 on the same AFTD" "$BIN/nsrmm" -s $S -q -l -y -b Space2 -f disk2 SP04
check "save to SP04" "$BIN/save" -s $S -q -b Space2 "$W/v4"
check "unmount SP04" "$BIN/nsrmm" -s $S -q -u -f disk2
check "nsrmm -d SP04 (not mounted)" "$BIN/nsrmm" -s $S -q -d -y SP04
expect_fail "SP04 is not in the media database" grep -qw SP04 <<<"$(volumes)"
check "its save set is gone" test -z "$(ssid_of "$W/v4")"
check "its session file stays on the device" test "$(finals2)" -eq 1
check "nsrd said why" grep -q "volume SP04 is not mounted: its bytes stay" "$ROOT/logs/daemon.log"
check "SP01 still holds its live save set" test "$(finals)" -eq 1
nsr_done
