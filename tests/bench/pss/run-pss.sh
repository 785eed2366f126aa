#!/bin/bash
# run-pss.sh - a scale model of the performance guide's PSS Example 1:
# two save points of sizes 1:10, every stream limited to the same rate
# (the test knob NSR_TEST_PSS_RATE, save(1)), client parallelism 4.
# Three configurations, each a full of both save points in one save
# command:
#   one stream each       --pss=1 --parallelism=4  (the non-PSS layout:
#                                                   one save set each)
#   PSS fixed 2+2         --pss=2 --parallelism=4
#   dynamic PSS           --pss=4 --parallelism=4  (4 streams per save
#                                                   point, 4 active at
#                                                   most: the small one's
#                                                   slots are reclaimed)
# The guide's ideal is total bytes / (4 x rate); its configurations gave
# 20 h, 10 h and (with two client resources in two groups) 5.5 h for
# 2200 GB at 100 GB/h.  Prints one line per run and a table: median
# seconds, the ideal, and the ratio (target for dynamic PSS: <= 1.05).
#
# With -H, one save point holding one file of the same total size, saved
# with --pss=4 --parallelism=4 three ways: whole on one stream (parts of
# 1 GiB, NSR_PSS_PART_SIZE: the file is too small to split), split in
# the default 64 MiB parts, and in 16 MiB parts.
#
#   run-pss.sh [-q] [-H] [-s MB] [-R RATE] [-r RUNS] -b BINDIR -d DIR
#     -q        quick: 10 MB + 100 MB, 1 round
#     -H        one huge file instead of the two save points
#     -s MB     size of the small save point (default 40; the large one is
#               10 x), in files of 1 MB
#     -R RATE   bytes per second per stream (default 20M)
#     -r RUNS   rounds (default 3); the configurations rotate per round
#     -b BINDIR the build's bin directory
#     -d DIR    work directory (data, datazone; removed at the end)
#
# Starts a private datazone on loopback (tests/system/lib.sh) and stops
# every daemon it started by pid at exit.
set -u
SMALL=40 RATE=20M RUNS=3 BINDIR="" DIR="" HUGE=0
while getopts "qHs:R:r:b:d:" o; do
	case $o in
	q) SMALL=10 RUNS=1 ;;
	H) HUGE=1 ;;
	s) SMALL=$OPTARG ;;
	R) RATE=$OPTARG ;;
	r) RUNS=$OPTARG ;;
	b) BINDIR=$OPTARG ;;
	d) DIR=$OPTARG ;;
	*) echo "usage: $0 [-q] [-H] [-s MB] [-R RATE] [-r RUNS] -b BINDIR" \
		"-d DIR" >&2
	   exit 2 ;;
	esac
done
[ -n "$BINDIR" ] && [ -n "$DIR" ] || {
	echo "$0: -b and -d are needed" >&2; exit 2; }
export NSR_BIN=$(cd "$BINDIR" && pwd)
mkdir -p "$DIR" && DIR=$(cd "$DIR" && pwd)
export NSR_TEST_TMPDIR=$DIR
export NSR_TEST_TALLY_CHECK=0 # a test check: not in a benchmark
. "$(dirname "$0")/../../system/lib.sh"
nsr_setup bench-pss
S=127.0.0.1
W=$ROOT/work
nsr_start_aftd_datazone

# rate_bytes - RATE in bytes (K, M, G suffixes of 1024).
rate_bytes() {
	local n=${RATE%[KkMmGg]} u=${RATE#"${RATE%[KkMmGg]}"}
	case $u in
	K|k) echo $((n << 10)) ;; M|m) echo $((n << 20)) ;;
	G|g) echo $((n << 30)) ;; *) echo "$n" ;;
	esac
}

TOTAL=$((SMALL * 11 * 1048576))
if [ "$HUGE" = 1 ]; then
	mkdir -p "$W/huge"
	head -c "$TOTAL" /dev/urandom >"$W/huge/f"
	# name streams-per-save-point part-size
	CONFS=("whole 4 1G" "split64 4 64M" "split16 4 16M")
	SPS=("$W/huge")
else
	mkdir -p "$W/sp1" "$W/sp10"
	for i in $(seq 1 "$SMALL"); do
		head -c 1048576 /dev/urandom >"$W/sp1/f$i"
	done
	for i in $(seq 1 $((SMALL * 10))); do
		head -c 1048576 /dev/urandom >"$W/sp10/f$i"
	done
	CONFS=("one 1 64M" "fixed 2 64M" "dynamic 4 64M")
	SPS=("$W/sp1" "$W/sp10")
fi
IDEAL=$(awk -v t=$TOTAL -v r="$(rate_bytes)" 'BEGIN {printf "%.2f", t / (4 * r)}')
if [ "$HUGE" = 1 ]; then
	echo "# one file of $((SMALL * 11)) MB, $RATE/s per stream," \
		"parallelism 4, ideal $IDEAL s"
else
	echo "# $SMALL MB + $((SMALL * 10)) MB, $RATE/s per stream," \
		"parallelism 4, ideal $IDEAL s"
fi

: >"$W/times"
for r in $(seq 1 "$RUNS"); do
	for k in 0 1 2; do
		set -- ${CONFS[$(((k + r) % 3))]}
		name=$1 n=$2 part=$3
		# A master's save time stays at least its stream count after
		# the last one of its save point (save(1)): a save sooner
		# than that waits for it.  Outside the timed window.
		sleep 9
		t0=$(date +%s.%N)
		NSR_TEST_PSS_RATE=$RATE NSR_PSS_PART_SIZE=$part "$BIN/save" \
			-s $S -q -l full --pss="$n" --parallelism=4 \
			"${SPS[@]}" >"$W/$name.$r.out" 2>&1 ||
			fail "save ($name, round $r)"
		t1=$(date +%s.%N)
		secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')
		echo "round $r $name ($n streams each): $secs s"
		echo "$name $secs" >>"$W/times"
	done
done
echo
printf '%-10s %10s %10s %8s\n' config "median s" "ideal s" ratio
for c in "${CONFS[@]}"; do
	name=${c%% *}
	med=$(awk -v n=$name '$1 == n {print $2}' "$W/times" | sort -n |
		awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
	printf '%-10s %10s %10s %8s\n' "$name" "$med" "$IDEAL" \
		"$(awk -v m="$med" -v i="$IDEAL" 'BEGIN {printf "%.3f", m / i}')"
done
nsr_done
