#!/bin/bash
# run-nsrim.sh - nsrim over a media database of N save sets: how long a
# run takes and how much memory it needs.
#
# bench_mmdb -G generates the media database (N save sets of 2,000
# clients and 8 save set names, one every 30 s from 2020-09-13, on N/200
# volumes; retention R = 98 % of that span, in whole days (340 days at
# N = 1,000,000), browse 5 days less) straight into the media database
# of the datazone (mm under its root, in DIR) before the datazone
# starts, with nsrd's daily run off (NSR_NSRIM_DAILY=no).  nsrim then
# runs by hand on a test clock (NSR_TEST_CLOCK) set to one day after the
# last save: the save sets of the first days pass their browse and
# retention times, as if nsrim had not run for a week (2 to 4 % of N
# change at N = 1,000,000).  Timed, with the peak RSS of the nsrim
# process (/usr/bin/time):
#   dry run  nsrim -n: read every save set and volume, compute, change
#            nothing
#   run      nsrim: the same, and the changes (index entries removed,
#            flags set in the media database)
#   again    nsrim once more: nothing left to change (a daily run)
# Target (issue 17): nsrim <= 30 s with flat memory at N = 1,000,000.
#
#   run-nsrim.sh [-q] [-n N] -b BINDIR -t TESTBIN -d DIR
#     -q        quick: N = 20,000
#     -n N      save sets (default 1000000)
#     -b BINDIR a release build's bin directory
#     -t TESTBIN the build's tests/bench directory (bench_mmdb)
#     -d DIR    work directory (emptied first)
#
# Every daemon it starts is stopped by pid at exit (datazone.sh).
N=1000000
while getopts "qn:b:t:d:" o; do
	case $o in
	q) N=20000 ;;
	n) N=$OPTARG ;;
	b) BIN=$OPTARG ;;
	t) TB=$OPTARG ;;
	d) DIR=$OPTARG ;;
	*) echo "usage: $0 [-q] [-n N] -b BINDIR -t TESTBIN -d DIR" >&2; exit 2 ;;
	esac
done
[ -n "$BIN" ] && [ -n "$DIR" ] && [ -x "$TB/bench_mmdb" ] ||
	{ echo "$0: -b, -t and -d are needed" >&2; exit 2; }
TB=$(cd "$TB" && pwd)
. "$(dirname "$0")/../datazone.sh"
need_time
S=127.0.0.1
export NSR_NSRIM_DAILY=no

rm -rf "$ROOT" "$DIR/gen" "$DIR/aftd" "$DIR/out"
mkdir -p "$ROOT" "$DIR/aftd" "$DIR/out"
R=$(( N * 30 * 98 / 100 / 86400 ))
[ "$R" -ge 2 ] || R=2
B=$(( R > 10 ? R - 5 : R - 1 ))
"$TB/bench_mmdb" -G -n "$N" -B "$B" -R "$R" -d "$DIR/gen" || exit 1
mv "$DIR/gen/mm" "$ROOT/mm"
aftd_zone "$DIR/out/daemons.log"

# The test clock: one day after the last save (bench_mmdb's T0 + N*30).
echo "$(( 1600000000 + N * 30 + 86400 - $(date +%s) ))" >"$DIR/clock"
export NSR_TEST_CLOCK=$DIR/clock

# one NAME ARGS... - one timed nsrim run: seconds, peak RSS, its summary.
one() {
	local name=$1
	shift
	/usr/bin/time -f '%e %M' -o "$DIR/out/$name.time" \
		"$BIN/nsrim" -s $S "$@" >"$DIR/out/$name.out" 2>&1 ||
		{ echo "# nsrim $* failed: $(tail -n 3 "$DIR/out/$name.out")"; return 1; }
	read -r secs kb <"$DIR/out/$name.time"
	printf '| %s | %s | %.1f | %s |\n' "$name" "$secs" \
		"$(awk -v k="$kb" 'BEGIN { print k / 1024 }')" \
		"$(tail -n 1 "$DIR/out/$name.out" | sed 's/^nsrim: //')"
}

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); N=$N, browse $B days, retention $R days"
echo
echo "| run | seconds | nsrim peak RSS MB | what it did |"
echo "|---|---|---|---|"
one "dry run" -n && one run && one again
rc=$?
echo
echo "nsrmmdbd RSS after: $(awk '/^VmRSS/ { printf "%.0f MB", $2 / 1024 }' \
	"/proc/$(cat "$ROOT/logs/nsrmmdbd.pid" 2>/dev/null)/status" 2>/dev/null)"
exit $rc
