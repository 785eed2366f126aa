#!/bin/bash
# 406-mover-aftd-full: an AFTD on a 2 MB file system fills up during a
# save whose client has no other volume to go on to (mmdtest asks nobody;
# save itself spans: 408-aftd-span): the session fails naming the full
# volume, the volume is marked full in the media database, the part it
# wrote is removed, and the save set written before is intact.  Needs
# root to mount a small tmpfs; skipped otherwise.
. "$(dirname "$0")/lib.sh"
nsr_setup 406-mover-aftd-full
T=$BIN/mmdtest
H=127.0.0.1
SMALL=$ROOT/small
mkdir -p "$SMALL"
if [ "$(id -u)" != 0 ] || ! mount -t tmpfs -o size=2m tmpfs "$SMALL" 2>/dev/null; then
	echo "# SKIP: cannot mount a small tmpfs (needs root)"
	exit 0
fi
# Detach the file system first (lazily: movers may still hold files),
# then the usual cleanup stops the daemons and removes the root.
trap 'umount -l "$SMALL" 2>/dev/null; nsr_cleanup' EXIT

nsr_start nsrexecd -s
nsr_wait_registered nsrsnmd
nsr_start nsrmmdbd
nsr_wait_registered nsrmmdbd

head -c 100000 /dev/urandom >"$ROOT/data1"
head -c 3000000 /dev/urandom >"$ROOT/data2"
read -r P PID < <("$T" mover $H adv_file "$SMALL" small 0 $H)
check "label FULL01 on the small AFTD" "$T" label $H "$P" FULL01 Default 32768
VOLID=$("$T" readlabel $H "$P" | awk '{print $5}')
check "enter it in the media database" "$T" mmdb-vol $H FULL01 "$VOLID" Default adv_file
ST=1700000100
S1=$("$T" mmdb-ss $H client1 /first $ST)
S2=$("$T" mmdb-ss $H client1 /big $ST)
"$T" save $H "$P" "$S1" client1 /first $ST <"$ROOT/data1" >"$ROOT/frag1"
check "a small save set fits" test $? -eq 0
out=$("$T" save $H "$P" "$S2" client1 /big $ST <"$ROOT/data2" 2>&1)
rc=$?
check "a save set larger than the file system fails" test $rc -ne 0
check "naming the full volume" grep -q "volume FULL01 in device small is full" <<<"$out"
check "the media database marks the volume full" \
	grep -Eq "^FULL01 flags 0x[0-9a-f]*[13579bdf] " <("$T" mmdb-volget $H FULL01)
check "the failed save set has no fragment" test -z "$("$T" mmdb-frags $H "$S2")"
check "nor a session file: only the first save set's is left" \
	test "$(ls "$SMALL" | grep -c '^ss\.')" = 1
"$T" recover $H "$P" "$S1" $(cat "$ROOT/frag1") >"$ROOT/out1"
check "the save set written before is intact" cmp -s "$ROOT/data1" "$ROOT/out1"
nsr_done
