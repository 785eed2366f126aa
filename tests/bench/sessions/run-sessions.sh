#!/bin/bash
# run-sessions.sh - concurrent sessions into one device, and the restore
# of one save set from an interleaved volume.
#
# A single-host datazone under DIR/root on free loopback ports.  Part 1:
# K = 1, 2, 4, 8, 16 saves at once, each of one file of MB megabytes (the
# same file, read from the page cache, so the device's write path is what
# is measured), into one AFTD with dynamic nsrmmd on (target sessions 1,
# max sessions 32, max nsrmmd count 16: a mover per session) and off (one
# mover for all), and into a vtape; against `dd` writing K x MB from the
# same file to the same disk with fdatasync, in the same round.  The
# aggregate rate is K x MB / the time from the first save's start to the
# last one's end.  Between runs the volume is relabeled (its files go).
# Part 2: four saves multiplexed onto one vtape volume (one mover, chunks
# interleaved) against one save alone on a fresh volume; recover -S of
# one save set from each, timed.  Each round goes through every
# configuration; the table gives medians and every run.
#
#   run-sessions.sh [-q] [-s MB] [-r RUNS] [-k "K..."] -b BINDIR -d DIR
#     -q        quick: 64 MB per session, K = 1 4, 1 round
#     -s MB     megabytes per session (default 512)
#     -r RUNS   rounds (default 3)
#     -k LIST   concurrent sessions to try (default "1 2 4 8 16")
#     -b BINDIR a release build's bin directory
#     -d DIR    work directory (data, volumes, the datazone root)
#
# Every process it starts is stopped by pid at exit, also on failure.
set -u
MB=512 RUNS=3 KS="1 2 4 8 16" BIN="" DIR=""
while getopts "qs:r:k:b:d:" o; do
	case $o in
	q) MB=64 RUNS=1 KS="1 4" ;;
	s) MB=$OPTARG ;;
	r) RUNS=$OPTARG ;;
	k) KS=$OPTARG ;;
	b) BIN=$OPTARG ;;
	d) DIR=$OPTARG ;;
	*) echo "usage: $0 [-q] [-s MB] [-r RUNS] [-k LIST] -b BINDIR -d DIR" >&2
	   exit 2 ;;
	esac
done
[ -n "$BIN" ] && [ -n "$DIR" ] || { echo "$0: -b and -d are needed" >&2; exit 2; }
. "$(dirname "$0")/../datazone.sh"

S=127.0.0.1
# admin - nsradmin commands from stdin, quietly.
admin() { "$BIN/nsradmin" -s $S -i - >/dev/null 2>&1; }
# rate - MB/s of BYTES over SECONDS.
rate() { awk -v b="$1" -v t="$2" 'BEGIN { printf "%.1f", b / t / 1e6 }'; }

rm -rf "$ROOT" "$DIR/aftd" "$DIR/vtape" "$DIR/src" "$DIR/out"
mkdir -p "$ROOT" "$DIR/aftd" "$DIR/src" "$DIR/out"
"$BIN/nsrexecd" -b -s -R "$ROOT" || exit 1
STARTED+=("$(cat "$ROOT/logs/nsrexecd.pid")")
"$BIN/nsrd" -b -R "$ROOT" || exit 1
STARTED+=("$(cat "$ROOT/logs/nsrd.pid")")
HOST=$(hostname)
admin <<RES
create type: NSR device; name: aftd; media type: adv_file; device access information: $DIR/aftd; target sessions: 1; max sessions: 32; max nsrmmd count: 16
create type: NSR pool; name: Tape
create type: NSR device; name: vtape; media type: vtape; device access information: $DIR/vtape; target sessions: 1; max sessions: 32
create type: NSR storage node; name: $HOST; dynamic nsrmmds: Yes
RES
printf '. type: NSR\nupdate parallelism: 64\n' | admin

# The source: one file, a random 4 MiB piece repeated.
head -c 4194304 /dev/urandom >"$DIR/src/piece"
for _ in $(seq 1 $((MB / 4))); do cat "$DIR/src/piece"; done >"$DIR/src/file"
rm -f "$DIR/src/piece"
BYTES=$(stat -c %s "$DIR/src/file")
cat "$DIR/src/file" >/dev/null

# relabel DEVICE POOL - an empty volume in the device.
relabel() {
	"$BIN/nsrmm" -s $S -q -l -y -b "$2" -f "$1" >/dev/null 2>&1 ||
		echo "# relabel of $1 failed" >&2
}
# dynamic yes|no - the storage node's dynamic nsrmmds.
dynamic() {
	printf '. type: NSR storage node; name: %s\nupdate dynamic nsrmmds: %s\n' \
		"$HOST" "$1" | admin
}
# saves K POOL - K saves of the file at once; prints the seconds.
saves() {
	local k=$1 pool=$2 i t0 pids=() bad=0
	t0=$(now)
	for i in $(seq 1 "$k"); do
		"$BIN/save" -s $S -q -b "$pool" -N "s$i" "$DIR/src/file" \
			>"$DIR/out/save$i.out" 2>&1 &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || bad=1; done
	[ $bad = 0 ] || echo "# a save failed: $(cat "$DIR"/out/save*.out | head -3)" >&2
	awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'
}
# ddrun K - dd of K x the file to the AFTD's disk with fdatasync.
ddrun() {
	local t0
	t0=$(now)
	for _ in $(seq 1 "$1"); do cat "$DIR/src/file"; done |
		dd of="$DIR/dd.out" bs=1M conv=fdatasync status=none
	awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'
	rm -f "$DIR/dd.out"
}

declare -A R
echo "# $MB MB per session, rounds $RUNS, K in $KS; $(nproc) CPUs; $(date -u)"
for r in $(seq 1 "$RUNS"); do
	for k in $KS; do
		total=$((BYTES * k))
		t=$(ddrun "$k"); R[dd,$k]+="$(rate $total "$t") "
		relabel aftd Default; dynamic Yes
		t=$(saves "$k" Default); R[dyn,$k]+="$(rate $total "$t") "
		relabel aftd Default; dynamic No
		t=$(saves "$k" Default); R[one,$k]+="$(rate $total "$t") "
		relabel vtape Tape
		t=$(saves "$k" Tape); R[vt,$k]+="$(rate $total "$t") "
	done
	dynamic Yes
	# Part 2: one save set restored alone and from a 4-way interleave.
	relabel vtape Tape
	saves 1 Tape >/dev/null
	ss=$("$BIN/mminfo" -s $S -q "pool=Tape" -r ssid 2>/dev/null | awk '$1 ~ /^[0-9]+$/ {print $1}' | sort -n | tail -1)
	rm -rf "$DIR/out/r"; t0=$(now)
	"$BIN/recover" -s $S -q -S "$ss" -d "$DIR/out/r" >"$DIR/out/rec.out" 2>&1 ||
		echo "# recover alone failed: $(head -3 "$DIR/out/rec.out")" >&2
	t=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }')
	R[alone]+="$(rate "$BYTES" "$t") "
	relabel vtape Tape; dynamic No
	saves 4 Tape >/dev/null
	ss=$("$BIN/mminfo" -s $S -q "pool=Tape" -r ssid 2>/dev/null | awk '$1 ~ /^[0-9]+$/ {print $1}' | sort -n | tail -1)
	rm -rf "$DIR/out/r"; t0=$(now)
	"$BIN/recover" -s $S -q -S "$ss" -d "$DIR/out/r" >"$DIR/out/rec.out" 2>&1 ||
		echo "# recover interleaved failed: $(head -3 "$DIR/out/rec.out")" >&2
	t=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }')
	R[inter]+="$(rate "$BYTES" "$t") "
	dynamic Yes
	echo "# round $r done"
done

# med LIST - the median of the numbers.
med() { tr ' ' '\n' <<<"$1" | awk 'NF' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo
echo "| sessions | dd MB/s | AFTD dynamic | ratio | AFTD one mover | ratio | vtape | runs (dd / dyn / one / vtape) |"
echo "|---|---|---|---|---|---|---|---|"
for k in $KS; do
	d=$(med "${R[dd,$k]}") y=$(med "${R[dyn,$k]}") o=$(med "${R[one,$k]}") v=$(med "${R[vt,$k]}")
	echo "| $k | $d | $y | $(awk -v a="$y" -v b="$d" 'BEGIN{printf "%.2f", a/b}') | $o | $(awk -v a="$o" -v b="$d" 'BEGIN{printf "%.2f", a/b}') | $v | ${R[dd,$k]}/ ${R[dyn,$k]}/ ${R[one,$k]}/ ${R[vt,$k]} |"
done
a=$(med "${R[alone]}") i=$(med "${R[inter]}")
echo
echo "| restore of one save set from vtape | MB/s | runs |"
echo "|---|---|---|"
echo "| written alone | $a | ${R[alone]} |"
echo "| one of 4 interleaved | $i ($(awk -v x="$i" -v y="$a" 'BEGIN{printf "%.2f", x/y}') x alone) | ${R[inter]} |"
