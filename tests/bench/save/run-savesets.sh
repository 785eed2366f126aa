#!/bin/bash
# run-savesets.sh - many small save sets in a row: what a datazone of
# many short saves costs and how much of the page cache it leaves behind.
#
# A single-host datazone under DIR on free loopback ports, one AFTD with
# a labeled volume; one file of MB megabytes (random) saved once to warm
# up, then N times, each `save` timed as a whole (the save set is
# durable on the volume when save exits).  Prints the seconds, the rate
# and how much the kernel's page cache ("Cached:" in /proc/meminfo) grew
# over the N saves.  Comparing two builds side by side: run it once with
# each -b, alternating, on the same machine.
#
#   run-savesets.sh [-n N] [-m MB] -b BINDIR -d DIR
#     -n N      saves (default 300)
#     -m MB     megabytes of the file (default 8)
#     -b BINDIR a release build's bin directory
#     -d DIR    work directory (emptied first: data, volume, datazone)
#
# Every daemon it starts is stopped by pid at exit, also on failure
# (../datazone.sh).
set -u
N=300 MB=8 BIN="" DIR=""
while getopts "n:m:b:d:" o; do
	case $o in
	n) N=$OPTARG ;;
	m) MB=$OPTARG ;;
	b) BIN=$OPTARG ;;
	d) DIR=$OPTARG ;;
	*) echo "usage: $0 [-n N] [-m MB] -b BINDIR -d DIR" >&2; exit 2 ;;
	esac
done
[ -n "$BIN" ] && [ -n "$DIR" ] ||
	{ echo "$0: -b and -d are needed" >&2; exit 2; }
rm -rf "$DIR"
. "$(dirname "$0")/../datazone.sh"
S=127.0.0.1

# cached_kb - the page cache's size now.
cached_kb() { awk '/^Cached:/ {print $2}' /proc/meminfo; }

mkdir -p "$DIR/aftd" "$DIR/data"
aftd_zone "$DIR/daemons.log"
"$BIN/nsrmm" -s $S -q -l -y -b Default -f aftd >/dev/null 2>&1 ||
	{ echo "$0: cannot label the AFTD (see $DIR/daemons.log)" >&2; exit 1; }
head -c $((MB << 20)) /dev/urandom >"$DIR/data/file"
"$BIN/save" -s $S -q "$DIR/data" >/dev/null 2>&1 ||
	{ echo "$0: the first save failed" >&2; exit 1; }
sync
c0=$(cached_kb)
t0=$(now)
for i in $(seq 1 "$N"); do
	"$BIN/save" -s $S -q "$DIR/data" >"$DIR/save.out" 2>&1 ||
		{ echo "$0: save $i failed: $(tail -n 2 "$DIR/save.out")" >&2
		  exit 1; }
done
t=$(since "$t0")
c1=$(cached_kb)
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v t="$t" -v n="$N" -v m="$MB" -v c=$(( (c1 - c0) / 1024 )) 'BEGIN {
	printf "saves %d of %d MB: %.3f s, %.1f MB/s, page cache grew %d MB\n",
	       n, m, t, n * m / t, c }'
