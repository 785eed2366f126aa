#!/bin/bash
# run-ixdel.sh - removing half of one client's save sets through
# nsrindexd: one IX_DELETE per save set against IX_DELETE_MANY, each on
# a copy of the same index.
#
# bench_ixdel -B builds one client's index ("bench", N save sets, as
# bench_ixdel does for its library figures) under DIR/gen; each round
# moves a copy into a fresh datazone's root (nsrexecd, nsrd and its
# children from BINDIR), then times
#   bench_ixdel -s 127.0.0.1 -n N [-1]
# which removes the odd save sets of 1..N: one nsr_ixclnt_delete each
# (-1, round "one by one") or one nsr_ixclnt_delete_many (round "one
# call": IX_DELETE_MANY, one catalogue replacement per 8,192).
#
#   run-ixdel.sh [-n N[,N...]] -b BINDIR -t TESTBIN -d DIR
#     -n N      save sets of the client (default 2000,10000)
#     -b BINDIR a release build's bin directory
#     -t TESTBIN the build's tests/bench directory (bench_ixdel)
#     -d DIR    work directory (emptied first)
#
# Every daemon it starts is stopped by pid at exit (datazone.sh).
NS=2000,10000
while getopts "n:b:t:d:" o; do
	case $o in
	n) NS=$OPTARG ;;
	b) BIN=$OPTARG ;;
	t) TB=$OPTARG ;;
	d) DIR=$OPTARG ;;
	*) echo "usage: $0 [-n N[,N...]] -b BINDIR -t TESTBIN -d DIR" >&2
	   exit 2 ;;
	esac
done
[ -n "$BIN" ] && [ -n "$DIR" ] && [ -x "$TB/bench_ixdel" ] ||
	{ echo "$0: -b, -t and -d are needed" >&2; exit 2; }
TB=$(cd "$TB" && pwd)
. "$(dirname "$0")/../datazone.sh"
export NSR_NSRIM_DAILY=no # nothing else changes the index meanwhile
S=127.0.0.1

# round NAME N [-1] - the removal on a fresh datazone over a copy of
# the index of N save sets; prints a table cell: seconds.
round() {
	local name=$1 n=$2 out
	copy_zone "$DIR/out/daemons-$name-$n.log" "$DIR/gen/index"
	out=$("$TB/bench_ixdel" -s $S -n "$n" $3 2>&1) ||
		{ echo "$0: $name: $out" >&2; cleanup; exit 1; }
	cleanup
	set -- $out
	[ "$2" = $(( (n + 1) / 2 )) ] ||
		{ echo "$0: $name: removed $2 of $(( (n + 1) / 2 ))" >&2; exit 1; }
	printf '%s' "$1"
}

rm -rf "$ROOT" "$DIR/gen" "$DIR/aftd" "$DIR/out"
mkdir -p "$DIR/out"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| save sets | deleted | one by one s (IX_DELETE each) | one call s (IX_DELETE_MANY) | ratio |"
echo "|---|---|---|---|---|"
for n in ${NS//,/ }; do
	rm -rf "$DIR/gen"
	"$TB/bench_ixdel" -B "$n" -d "$DIR/gen" || exit 1
	one=$(round one "$n" -1) || exit 1
	many=$(round many "$n") || exit 1
	echo "| $n | $(( (n + 1) / 2 )) | $one | $many | $(awk -v a="$one" -v b="$many" 'BEGIN { printf "%.0fx", a / b }') |"
done
