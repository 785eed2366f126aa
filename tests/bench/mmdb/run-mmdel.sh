#!/bin/bash
# run-mmdel.sh - deleting a volume that holds N save sets (nsrmm -d of
# it: what a relabel does too, drop_only_copies in nsrd): this build's
# daemons against another build's (-o, e.g. the commit before
# MM_SS_DELETE_MANY), each on a copy of the same media database and
# file index.
#
# bench_mmdel -B N makes the media database (volume bench.001 holding
# save sets 1..N of client bench, one in ten with a clone on
# bench.002) and bench_ixdel -B N the client's index of the same ssids;
# each round moves a copy into a fresh datazone's root (nsrexecd, nsrd
# and its children from the round's bin directory), then times
#   nsrmm -s 127.0.0.1 -q -d -y bench.001
# which removes the 9 in 10 save sets whose only copy it held from the
# index (IX_DELETE_MANY in both) and the media database (one
# MM_SS_DELETE each before, MM_SS_DELETE_MANY after), and checks with
# mminfo that exactly the N/10 with a clone stay, and nsrd's log that
# the save sets left the index too.  A last zone of this build times,
# alone (bench_mmdel -s), what the former nsrd asked per save set
# first: one MM_FRAG_LIST each (is there a copy elsewhere?); this one
# asks only for a save set with more clone instances than rows on the
# volume (1 in 10 here).
#
# Each build deletes the volume RUNS times (-r), the two alternating and
# the first of a round rotating; a cell is the median (lowest-highest).
#
#   run-mmdel.sh [-n N[,N...]] [-r RUNS] -b BINDIR -o OLDBIN -t TESTBIN \
#       -d DIR
#     -n N       save sets on the volume (default 2000,10000)
#     -r RUNS    deletions per build and N (default 3)
#     -b BINDIR  a release build's bin directory
#     -o OLDBIN  the bin directory of the build to compare with
#     -t TESTBIN the build's tests/bench directory (bench_mmdel,
#                bench_ixdel)
#     -d DIR     work directory (emptied first)
#
# Every daemon it starts is stopped by pid at exit (datazone.sh).
NS=2000,10000
RUNS=3
while getopts "n:r:b:o:t:d:" o; do
	case $o in
	n) NS=$OPTARG ;;
	r) RUNS=$OPTARG ;;
	b) BIN=$OPTARG ;;
	o) OLD=$OPTARG ;;
	t) TB=$OPTARG ;;
	d) DIR=$OPTARG ;;
	*) echo "usage: $0 [-n N[,N...]] [-r RUNS] -b BINDIR -o OLDBIN" \
		"-t TESTBIN -d DIR" >&2; exit 2 ;;
	esac
done
[ -n "$BIN" ] && [ -n "$DIR" ] && [ -x "$OLD/nsrd" ] &&
	[ -x "$TB/bench_mmdel" ] && [ -x "$TB/bench_ixdel" ] ||
	{ echo "$0: -b, -o, -t and -d are needed" >&2; exit 2; }
TB=$(cd "$TB" && pwd)
OLD=$(cd "$OLD" && pwd)
. "$(dirname "$0")/../datazone.sh"
NEW=$BIN
export NSR_NSRIM_DAILY=no # nothing else changes the databases meanwhile
S=127.0.0.1

# zone NAME N BINDIR - a fresh datazone of BINDIR's daemons over a copy
# of the databases of N save sets.
zone() {
	BIN=$3
	copy_zone "$DIR/out/daemons-$1-$2.log" "$DIR/gen/index" "$DIR/gen/mm"
}

# round NAME N BINDIR - the volume's deletion; prints a table cell:
# seconds.
round() {
	local t0 secs left
	zone "$@"
	t0=$(now)
	"$3/nsrmm" -s $S -q -d -y bench.001 >"$DIR/out/nsrmm-$1-$2" 2>&1 ||
		{ echo "$0: $1: $(cat "$DIR/out/nsrmm-$1-$2")" >&2
		  cleanup; exit 1; }
	secs=$(since "$t0")
	left=$("$NEW/mminfo" -s $S -a -q client=bench -r ssid 2>/dev/null |
		awk '$1 ~ /^[0-9]+$/ {print $1}' | sort -u | wc -l)
	cleanup
	cp "$ROOT/logs/daemon.log" "$DIR/out/log-$1-$2"
	grep -q "deletion of volume bench.001: $(( $2 - $2 / 10 )) save set(s)" \
		"$DIR/out/log-$1-$2" && ! grep -q "remain until nsrindexd" \
		"$DIR/out/log-$1-$2" ||
		{ echo "$0: $1: see $DIR/out/log-$1-$2" >&2; exit 1; }
	[ "$left" = $(( $2 / 10 )) ] ||
		{ echo "$0: $1: $left save sets left of $2, not $(( $2 / 10 ))" >&2
		  exit 1; }
	printf '%s' "$secs"
}

# lists N - one MM_FRAG_LIST per save set on this build; seconds.
lists() {
	local out
	zone fraglist "$1" "$NEW"
	out=$("$TB/bench_mmdel" -s $S -n "$1" 2>&1) ||
		{ echo "$0: frag lists: $out" >&2; cleanup; exit 1; }
	cleanup
	printf '%s' "$out"
}

rm -rf "$ROOT" "$DIR/gen" "$DIR/aftd" "$DIR/out"
mkdir -p "$DIR/out"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| save sets | deleted | before s (MM_SS_DELETE each) | after s (MM_SS_DELETE_MANY) | ratio | one MM_FRAG_LIST each s |"
echo "|---|---|---|---|---|---|"
# cell LIST - the median of the seconds, (lowest-highest).
cell() {
	printf '%s (%s-%s)' "$(med "$1")" \
		"$(tr ' ' '\n' <<<"$1" | awk 'NF' | sort -n | head -1)" \
		"$(tr ' ' '\n' <<<"$1" | awk 'NF' | sort -n | tail -1)"
}

for n in ${NS//,/ }; do
	rm -rf "$DIR/gen"
	"$TB/bench_mmdel" -B "$n" -d "$DIR/gen" || exit 1
	"$TB/bench_ixdel" -B "$n" -d "$DIR/gen" >/dev/null || exit 1
	old="" new=""
	for r in $(seq 1 "$RUNS"); do
		if [ $((r % 2)) = 1 ]; then
			old+="$(round old "$n" "$OLD") " || exit 1
			new+="$(round new "$n" "$NEW") " || exit 1
		else
			new+="$(round new "$n" "$NEW") " || exit 1
			old+="$(round old "$n" "$OLD") " || exit 1
		fi
	done
	fl=$(lists "$n") || exit 1
	echo "| $n | $(( n - n / 10 )) | $(cell "$old") | $(cell "$new") | $(ratio "$(med "$old")" "$(med "$new")")x | $fl |"
done
