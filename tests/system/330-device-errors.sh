#!/bin/bash
# 330-device-errors: devices that cannot be used say why in words an
# administrator can act on, and nothing on them is lost: a write-protected
# vtape (its file without write permission, the cartridge's tab), a
# "tape" device that is not a tape drive, a tape node that does not exist,
# a segment size that is not a size (refused when it is set); an AFTD whose directory does not exist
# (refused with the advice to create it, not created), a relative device
# path (refused), a device with a volume mounted (not deleted until it is
# unmounted).  A tape node or AFTD directory missing when the device is
# created is refused at once; one that disappears later is named by the
# mover.
. "$(dirname "$0")/lib.sh"
nsr_setup 330-device-errors
export NSR_MOVER_IDLE=1 # movers let go of their device when idle
S=127.0.0.1
W=$ROOT/work
mkdir -p "$W"
nsr_start_datazone
nsr_device wp vtape "$W/wp.vtape"
nsr_device notape tape /dev/null
# A device's path must name what is there when it is set (nsrd(8),
# AUTHORIZATION); "gone" is made on a node that then disappears.
out=$(printf 'create type: NSR device; name: gone; media type: tape; device access information: %s\n' \
	"$W/nst9" | "$BIN/nsradmin" -s $S -i - 2>&1); rc=$?
check "a tape device on a missing node is refused" test $rc -ne 0
check "saying it is not a tape device node" \
	grep -q "$W/nst9 is not a tape device node" <<<"$out"
ln -s /dev/null "$W/nst9"
nsr_device gone tape "$W/nst9"
rm -f "$W/nst9"

check "label the vtape WP1" "$BIN/nsrmm" -s $S -q -l -y -f wp WP1
mkdir -p "$W/t"; seq 1 3000 >"$W/t/f"
check "save to WP1" "$BIN/save" -s $S -q -N "$W/t" "$W/t"
# The write-protect tab is looked at when a mover opens the device, as a
# drive does when a cartridge is loaded: wait until wp's mover has gone.
gone=0
for _ in $(seq 1 100); do
	if grep -q "nsrmmd.1\[[0-9]*\]: info: idle for 1 s, exiting" "$ROOT/logs/daemon.log"; then
		gone=1; break
	fi
	sleep 0.1
done
check "the mover of wp lets go of the device when idle" test $gone = 1
chmod 0444 "$W/wp.vtape"

out=$("$BIN/nsrmm" -s $S -l -y -f wp WP2 2>&1 </dev/null); rc=$?
check "relabeling a write-protected vtape fails" test $rc -ne 0
check "saying it is write-protected" grep -q "write-protected" <<<"$out"
# A write-protected cartridge still restores (a vaulted tape comes back
# protected): the mover opens it for reading only.
ssid=$("$BIN/mminfo" -s $S -a -q "volume=WP1" -r ssid 2>/dev/null |
	awk '$1 ~ /^[0-9]+$/ {print $1; exit}')
"$BIN/recover" -s $S -q -S "${ssid:-0}" -d "$W/r" >"$W/rec.out" 2>&1
check "recover from the write-protected vtape works" cmp "$W/t/f" "$W/r$W/t/f"
out=$("$BIN/save" -s $S -q -N "$W/t" "$W/t" 2>&1 </dev/null); rc=$?
check "a save to the write-protected volume fails" test $rc -ne 0
check "saying it is write-protected" grep -q "write-protected" <<<"$out"
"$BIN/scanner" -t vtape "$W/wp.vtape" >"$W/scan.out" 2>&1
check "the volume still holds WP1 and its save set" \
	grep -q "WP1" "$W/scan.out"
check "... with the save set of $W/t" grep -q "$W/t" "$W/scan.out"

out=$("$BIN/nsrmm" -s $S -l -y -f notape N1 2>&1 </dev/null); rc=$?
check "labeling on /dev/null as a tape fails" test $rc -ne 0
check "saying it is not a tape drive" grep -q "not a tape drive" <<<"$out"

out=$("$BIN/nsrmm" -s $S -l -y -f gone G1 2>&1 </dev/null); rc=$?
check "labeling on a missing tape node fails" test $rc -ne 0
check "saying there is no such tape device" grep -q "no such tape device" <<<"$out"

out=$(printf 'create type: NSR device; name: badseg; media type: vtape; device access information: %s; segment size: lots\n' \
	"$W/badseg.vtape" | "$BIN/nsradmin" -s $S -i - 2>&1); rc=$?
check "a device whose segment size is not a size is refused" test $rc -ne 0
check "saying what is wrong with it" grep -q "segment size 'lots' is not a size" <<<"$out"

out=$(printf 'create type: NSR device; name: typo; media type: adv_file; device access information: %s\n' \
	"$W/no/such/dir" | "$BIN/nsradmin" -s $S -i - 2>&1); rc=$?
check "an AFTD on a missing directory is refused" test $rc -ne 0
check "saying to create it first" \
	grep -q "$W/no/such/dir is not an existing directory; create it first" <<<"$out"
check "and nsrd did not make it" test ! -e "$W/no"
mkdir -p "$W/no/such/dir"
nsr_device typo adv_file "$W/no/such/dir"
rm -r "$W/no"
out=$("$BIN/nsrmm" -s $S -l -y -f typo T1 2>&1 </dev/null); rc=$?
check "labeling an AFTD whose directory does not exist fails" test $rc -ne 0
check "saying to create it" grep -q "no such directory; create it .*mkdir -p $W/no/such/dir" <<<"$out"
check "and the directory was not made" test ! -e "$W/no"

out=$(printf 'create type: NSR device; name: rel; media type: adv_file; device access information: backup/aftd\n' |
	"$BIN/nsradmin" -s $S -i - 2>&1); rc=$?
check "a relative device path is refused" test $rc -ne 0
check "saying so" grep -q "the path 'backup/aftd' is not absolute" <<<"$out"

mkdir -p "$W/busy"
nsr_device busy adv_file "$W/busy"
check "label a volume on device busy" "$BIN/nsrmm" -s $S -q -l -y -f busy BUSY1
out=$(printf 'delete type: NSR device; name: busy\n' |
	"$BIN/nsradmin" -s $S -i - 2>&1)
check "a device with a volume mounted is not deleted" \
	grep -q "device busy has volume BUSY1 mounted; unmount it first (nsrmm -u -f busy)" <<<"$out"
check "unmount it" "$BIN/nsrmm" -s $S -q -u -f busy
out=$(printf 'delete type: NSR device; name: busy\n' |
	"$BIN/nsradmin" -s $S -i - 2>&1)
left=$(printf 'print type: NSR device; name: busy\n' |
	"$BIN/nsradmin" -s $S -i - 2>/dev/null | grep -c "name: busy;")
check "then it is deleted" test "$left" -eq 0
nsr_done
