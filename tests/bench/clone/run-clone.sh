#!/bin/bash
# run-clone.sh - nsrclone of a large save set against dd copying the same
# bytes between the same disks, side by side in one run.
#
# A single-host datazone under DIR/root on free loopback ports: AFTD
# "aftd" (pool Default, DIR/aftd) holds the save set, made once outside
# every timed window with save -B (data made in memory, nothing read);
# AFTDs "clone1".."cloneN" (pool Clone, DIR/cloneK, one per round: a
# save set gets one copy per volume) take the copies.  All directories
# are on the disk DIR is on.  Each round times, in an order rotated by
# one task per round:
#   clone   nsrclone -b Clone -S SSID (read from the source AFTD's mover,
#           written through the destination's mover, made durable and
#           recorded before nsrclone returns)
#   dd      dd if=<the save set's session file> of=DIR/ddcopy bs=4M
#           conv=fdatasync (the same bytes, the same disk, durable)
# Before each task, outside the timed window: DIR/ddcopy removed, sync, a
# 2 s pause, and the source file's pages dropped (dd iflag=nocache
# count=0), so both read from the disk.  The table gives medians and
# every run; the ratio is clone MB/s over dd MB/s of the same round.
#
#   run-clone.sh [-q] [-g GB] [-r RUNS] -b BINDIR -d DIR
#     -q          quick: 256 MB, 1 round
#     -g GB       save set size in GiB (default 2)
#     -r RUNS     rounds (default 3)
#     -b BINDIR   a release build's bin directory
#     -d DIR      work directory (volumes, the datazone)
#
# Every process it starts is stopped by pid at exit, also on failure.
set -u
SIZE=2G RUNS=3 BIN="" DIR=""
usage="usage: $0 [-q] [-g GB] [-r RUNS] -b BINDIR -d DIR"
while getopts "qg:r:b:d:" o; do
	case $o in
	q) SIZE=256M RUNS=1 ;;
	g) SIZE=${OPTARG}G ;;
	r) RUNS=$OPTARG ;;
	b) BIN=$OPTARG ;;
	d) DIR=$OPTARG ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
[ -n "$BIN" ] && [ -n "$DIR" ] || { echo "$usage" >&2; exit 2; }
. "$(dirname "$0")/../datazone.sh"
S=127.0.0.1
LOG=$DIR/daemons.out
admin() { "$BIN/nsradmin" -s $S -i - >/dev/null 2>&1; }

rm -rf "$ROOT" "$DIR"/aftd "$DIR"/clone* "$DIR/ddcopy"
mkdir -p "$DIR/aftd"
aftd_zone "$LOG"
"$BIN/nsrmm" -s $S -q -l -y -b Default -f aftd SRC.001 || exit 1
echo "create type: NSR pool; name: Clone" | admin
for k in $(seq 1 "$RUNS"); do
	mkdir -p "$DIR/clone$k"
	printf 'create type: NSR device; name: clone%s; media type: adv_file; device access information: %s\n' \
		"$k" "$DIR/clone$k" | admin
	"$BIN/nsrmm" -s $S -q -l -y -b Clone -f "clone$k" "CL.00$k" || exit 1
done
"$BIN/save" -s $S -q -B "$SIZE" >/dev/null || exit 1
SSID=$("$BIN/mminfo" -s $S -a -q name=/bigasm -r ssid 2>/dev/null | awk '$1 ~ /^[0-9]+$/ {print $1; exit}')
SRC=$(find "$DIR/aftd" -type f -name 'ss.*' ! -name '*.part' | head -1)
[ -n "$SSID" ] && [ -f "$SRC" ] || { echo "$0: no save set made" >&2; exit 1; }
BYTES=$(stat -c %s "$SRC")
echo "# save set $SSID: $BYTES bytes in $SRC"

clean() {
	rm -f "$DIR/ddcopy"
	sync
	sleep 2
	dd if="$SRC" iflag=nocache count=0 status=none
}
# task T - run T, print its seconds.
task() {
	local t0
	t0=$(now)
	case $1 in
	clone) "$BIN/nsrclone" -s $S -b Clone -S "$SSID" >/dev/null || { echo "$0: nsrclone failed" >&2; exit 1; } ;;
	dd) dd if="$SRC" of="$DIR/ddcopy" bs=4M conv=fdatasync status=none || exit 1 ;;
	esac
	since "$t0"
}
declare -A R
TASKS=(clone dd)
rounds
rm -f "$DIR/ddcopy"

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| task | MB/s (median) | runs (s) |"
echo "|---|---|---|"
for t in clone dd; do
	m=$(med "${R[$t]}")
	echo "| $t | $(mbs "$BYTES" "$m") | ${R[$t]}|"
done
read -ra C <<<"${R[clone]}"
read -ra D <<<"${R[dd]}"
rs=""
for i in "${!C[@]}"; do rs+="$(ratio "${D[$i]}" "${C[$i]}") "; done
echo "clone / dd per round: $rs(median $(med "$rs"))"
