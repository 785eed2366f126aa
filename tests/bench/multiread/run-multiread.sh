#!/bin/bash
# run-multiread.sh - four save sets interleaved on one vtape, restored by
# four recovers one after the other against one recover of all four (one
# pass over the volume).
#
# A single-host datazone under DIR/root on free loopback ports, one
# vtape (target sessions 4).  Four saves of one file of MB megabytes
# each (names s1..s4) run at once, so their blocks are interleaved on the
# volume.  Each round restores the four save sets twice, in alternating
# order: `recover -S a`, `-S b`, `-S c`, `-S d` one after the other, and
# `recover -S a -S b -S c -S d`; the rate is 4 x MB over the time from
# the first recover's start to the last one's end.  The mover's log gives
# the blocks each way read and how often it positioned.  With -t the
# movers cannot look at a record's head without reading it
# (NSR_TEST_VTAPE_NO_PEEK=1), as on a real tape: then every recover of
# one save set reads the other save sets' blocks between its own.
#
#   run-multiread.sh [-q] [-t] [-s MB] [-r RUNS] -b BINDIR -d DIR
#     -q        quick: 32 MB per save set, 1 round
#     -t        tape-like movers (no peeking at records)
#     -s MB     megabytes per save set (default 256)
#     -r RUNS   rounds (default 3)
#     -b BINDIR a release build's bin directory
#     -d DIR    work directory (data, volume, the datazone root)
#
# Every process it starts is stopped by pid at exit, also on failure.
set -u
MB=256 RUNS=3 BIN="" DIR="" TAPE=0
while getopts "qts:r:b:d:" o; do
	case $o in
	q) MB=32 RUNS=1 ;;
	t) TAPE=1 ;;
	s) MB=$OPTARG ;;
	r) RUNS=$OPTARG ;;
	b) BIN=$OPTARG ;;
	d) DIR=$OPTARG ;;
	*) echo "usage: $0 [-q] [-t] [-s MB] [-r RUNS] -b BINDIR -d DIR" >&2
	   exit 2 ;;
	esac
done
[ -n "$BIN" ] && [ -n "$DIR" ] || { echo "$0: -b and -d are needed" >&2; exit 2; }
. "$(dirname "$0")/../datazone.sh"
[ $TAPE = 0 ] || export NSR_TEST_VTAPE_NO_PEEK=1

S=127.0.0.1
LOG=$ROOT/logs/daemon.log
# admin - nsradmin commands from stdin, quietly.
admin() { "$BIN/nsradmin" -s $S -i - >/dev/null 2>&1; }
# secs T0 - seconds since T0 (from now).
secs() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }
# rate BYTES SECONDS - MB/s.
rate() { awk -v b="$1" -v t="$2" 'BEGIN { printf "%.1f", b / t / 1e6 }'; }
# logged FROM WORDS - the numbers before WORDS in the pass lines logged
# after line FROM, summed.
logged() {
	tail -n +"$(($1 + 1))" "$LOG" | grep 'in one pass:' |
		grep -o "[0-9]* $2" | awk '{s += $1} END {print s + 0}'
}

rm -rf "$ROOT" "$DIR/vtape" "$DIR/src" "$DIR/out"
mkdir -p "$ROOT" "$DIR/src" "$DIR/out"
"$BIN/nsrexecd" -b -s -R "$ROOT" || exit 1
STARTED+=("$(cat "$ROOT/logs/nsrexecd.pid")")
"$BIN/nsrd" -b -R "$ROOT" || exit 1
STARTED+=("$(cat "$ROOT/logs/nsrd.pid")")
admin <<RES
create type: NSR pool; name: Tape
create type: NSR device; name: vtape; media type: vtape; device access information: $DIR/vtape; target sessions: 4; max sessions: 8
RES
"$BIN/nsrmm" -s $S -q -l -y -b Tape -f vtape -z 256K TAPE01 || exit 1

# The data: one random 4 MiB piece repeated, a file per save set.
head -c 4194304 /dev/urandom >"$DIR/src/piece"
for i in 1 2 3 4; do
	for _ in $(seq 1 $((MB / 4))); do cat "$DIR/src/piece"; done \
		>"$DIR/src/s$i"
done
rm -f "$DIR/src/piece"
BYTES=$(( $(stat -c %s "$DIR/src/s1") * 4 ))
pids=()
for i in 1 2 3 4; do
	"$BIN/save" -s $S -q -b Tape "$DIR/src/s$i" >"$DIR/out/save$i.out" 2>&1 &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || { echo "# a save failed" >&2; exit 1; }; done
SS=()
for i in 1 2 3 4; do
	SS+=("$("$BIN/mminfo" -s $S -q "name=$DIR/src/s$i" -r ssid 2>/dev/null |
		awk '$1 ~ /^[0-9]+$/ {print $1; exit}')")
done

# each - the four save sets by four recovers, one after the other.
each() {
	local i
	for i in 0 1 2 3; do
		"$BIN/recover" -s $S -q -f -d "$DIR/out/r" -S "${SS[$i]}" \
			>"$DIR/out/rec.out" 2>&1 || echo "# recover failed" >&2
	done
}
# all - the four save sets by one recover.
all() {
	"$BIN/recover" -s $S -q -f -d "$DIR/out/r" -S "${SS[0]}" -S "${SS[1]}" \
		-S "${SS[2]}" -S "${SS[3]}" >"$DIR/out/rec.out" 2>&1 ||
		echo "# recover failed" >&2
}

declare -A R
echo "# $MB MB per save set, 4 save sets, rounds $RUNS, tape-like $TAPE; $(nproc) CPUs; $(date -u)"
for r in $(seq 1 "$RUNS"); do
	order="each all"
	[ $((r % 2)) = 1 ] || order="all each"
	for how in $order; do
		rm -rf "$DIR/out/r"
		mark=$(wc -l <"$LOG")
		t0=$(now)
		$how
		t=$(secs "$t0")
		sleep 0.5 # the last pass line
		R[$how]+="$(rate $BYTES "$t") "
		R[$how,blocks]+="$(logged "$mark" "blocks read") "
		R[$how,pos]+="$(logged "$mark" positionings) "
	done
	echo "# round $r done"
done

# med LIST - the median of the numbers.
med() { tr ' ' '\n' <<<"$1" | awk 'NF' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# ratios - all/each of each round, side by side.
ratios() {
	paste <(tr ' ' '\n' <<<"${R[all]}" | awk 'NF') \
	      <(tr ' ' '\n' <<<"${R[each]}" | awk 'NF') |
		awk '{printf "%.2f ", $1 / $2}'
}
q=$(ratios)
echo
echo "| restore of 4 interleaved save sets ($MB MB each), tape-like $TAPE | MB/s (median) | blocks read | positionings | runs (MB/s) |"
echo "|---|---|---|---|---|"
echo "| 4 recovers, one after the other | $(med "${R[each]}") | ${R[each,blocks]}| ${R[each,pos]}| ${R[each]}|"
echo "| 1 recover, one pass | $(med "${R[all]}") | ${R[all,blocks]}| ${R[all,pos]}| ${R[all]}|"
echo "| ratio one pass / one after the other, per round | $(med "$q") (median) | | | $q|"
