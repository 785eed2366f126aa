#!/bin/bash
# run-save.sh - save against tar: large files, many small files, and a
# pipeline save, to the same disk, in one run.
#
# A single-host datazone under DIR/root on free loopback ports with one
# AFTD (DIR/aftd).  The data (bench_savedata, the same every run): NL
# files of LMB megabytes and NS files of 4-64 KiB, 1000 to a directory,
# under DIR/data.  Each round times, in an order rotated by one task per
# round:
#   save-large  save -q DIR/data/large           (one save set, AFTD)
#   tar-large   tar -cf DIR/tar/large.tar large, then sync of the archive
#   save-small  save -q DIR/data/small
#   pss-small   save -q --pss DIR/data/small (4 streams, parallelism 4;
#               PSS=N in the environment: N streams, parallelism N)
#   tar-small   tar -cf DIR/tar/small.tar small, then sync of the archive
#   pipe-large  save --pipe=/PIPE/tar -- tar -cf - large (the large files
#               through a pipe, read 64 KB at a time)
# save is timed to its exit, when the data is durable on the volume and
# the index committed; tar's archive is made durable by sync FILE, so
# both end with their data on the disk.  Before each task, outside the
# timed window: the earlier output is deleted (the volume relabeled, the
# archives removed) and synced, then the cache is made cold: with root
# `sync; echo 3 >/proc/sys/vm/drop_caches`; without it (or with -e) every
# data file's pages are dropped with posix_fadvise (bench_savedata
# evict), which leaves the inode and directory caches warm (the output
# says which).
# Deleting on a file system with online discard slows the next writer;
# that is why it happens before the clock starts, followed by a pause.
# After the rounds: a full save of the small files, then an incremental
# with nothing changed, timed (warm cache).  The table gives medians and
# every run.
#
#   run-save.sh [-qe] [-l MB] [-n FILES] [-r RUNS] -b BINDIR -s SAVEDATA -d DIR
#     -q          quick: 2 x 64 MB, 2000 small files, 1 round
#     -e          no drop_caches even as root (a shared machine): evict
#                 the data files' pages only
#     -l MB       megabytes per large file (default 1024; 2 files)
#     -n FILES    small files (default 50000)
#     -r RUNS     rounds (default 3)
#     -b BINDIR   a release build's bin directory
#     -s SAVEDATA the bench_savedata program (tests/bench in the build)
#     -d DIR      work directory (data, volume, archives, the datazone)
#
# Every process it starts is stopped by pid at exit, also on failure.
set -u
LMB=1024 NL=2 NS=50000 RUNS=3 BIN="" DATAPROG="" DIR="" DROP=1
[ "$(id -u)" = 0 ] || DROP=0
while getopts "qel:n:r:b:s:d:" o; do
	case $o in
	q) LMB=64 NS=2000 RUNS=1 ;;
	e) DROP=0 ;;
	l) LMB=$OPTARG ;;
	n) NS=$OPTARG ;;
	r) RUNS=$OPTARG ;;
	b) BIN=$OPTARG ;;
	s) DATAPROG=$OPTARG ;;
	d) DIR=$OPTARG ;;
	*) echo "usage: $0 [-qe] [-l MB] [-n FILES] [-r RUNS] -b BINDIR -s SAVEDATA -d DIR" >&2
	   exit 2 ;;
	esac
done
[ -n "$BIN" ] && [ -n "$DIR" ] && [ -x "$DATAPROG" ] ||
	{ echo "$0: -b, -s and -d are needed" >&2; exit 2; }
. "$(dirname "$0")/../datazone.sh"

S=127.0.0.1

rm -rf "$ROOT" "$DIR/aftd" "$DIR/tar" "$DIR/out"
mkdir -p "$ROOT" "$DIR/aftd" "$DIR/tar" "$DIR/out"
aftd_zone "$DIR/out/daemons.log"

# The data, made once (the same every time: kept if it is there).
bench_data "$DATAPROG" $NL "$LMB" "$NS"
LBYTES=$(bytes "$DATA/large")
SBYTES=$(bytes "$DATA/small")

cold_how "the data"
# clean - delete the earlier output (outside the timed window), let the
# disk settle, then a cold cache.
clean() {
	"$BIN/nsrmm" -s $S -q -l -y -b Default -f aftd >/dev/null 2>&1 ||
		echo "# relabel failed" >&2
	rm -f "$DIR"/tar/*.tar
	sync
	sleep 2
	cold "$DATA"
}
# task NAME - run one task; prints its seconds.
task() {
	local t0 rc=0
	t0=$(now)
	case $1 in
	save-large) "$BIN/save" -s $S -q -N large "$DATA/large" >"$DIR/out/$1" 2>&1 || rc=1 ;;
	save-small) "$BIN/save" -s $S -q -N small "$DATA/small" >"$DIR/out/$1" 2>&1 || rc=1 ;;
	pss-small) "$BIN/save" -s $S -q --pss="${PSS:-4}" \
			--parallelism="${PSS:-4}" "$DATA/small" >"$DIR/out/$1" 2>&1 || rc=1 ;;
	tar-large) { tar -cf "$DIR/tar/large.tar" -C "$DATA" large &&
		     sync "$DIR/tar/large.tar"; } >"$DIR/out/$1" 2>&1 || rc=1 ;;
	tar-small) { tar -cf "$DIR/tar/small.tar" -C "$DATA" small &&
		     sync "$DIR/tar/small.tar"; } >"$DIR/out/$1" 2>&1 || rc=1 ;;
	pipe-large) "$BIN/save" -s $S -q --pipe=/PIPE/tar -- \
			tar -cf - -C "$DATA" large >"$DIR/out/$1" 2>&1 || rc=1 ;;
	esac
	since "$t0"
	[ $rc = 0 ] || echo "# $1 failed: $(head -3 "$DIR/out/$1")" >&2
}

TASKS=(save-large tar-large save-small tar-small pss-small pipe-large)
declare -A R
echo "# $NL x $LMB MB and $NS files of 4-64 KiB ($SBYTES bytes); rounds $RUNS;"
echo "# $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); cold cache: $COLD; $(date -u)"
rounds
# incremental with nothing changed (warm cache, after a full)
clean
"$BIN/save" -s $S -q -l full -N small "$DATA/small" >"$DIR/out/full" 2>&1 ||
	echo "# full failed: $(head -3 "$DIR/out/full")" >&2
sleep 1.1
t0=$(now)
"$BIN/save" -s $S -q -l incr -N small "$DATA/small" >"$DIR/out/incr" 2>&1 ||
	echo "# incr failed: $(head -3 "$DIR/out/incr")" >&2
INCR=$(since "$t0")

sl=$(med "${R[save-large]}") tl=$(med "${R[tar-large]}")
ss=$(med "${R[save-small]}") ts=$(med "${R[tar-small]}")
ps=$(med "${R[pss-small]}")
pl=$(med "${R[pipe-large]}")
echo
echo "| data | tar s | tar MB/s | save s | save MB/s | save rate / tar rate | runs s (tar / save) |"
echo "|---|---|---|---|---|---|---|"
echo "| $NL x $LMB MB | $tl | $(mbs "$LBYTES" "$tl") | $sl | $(mbs "$LBYTES" "$sl") | $(ratio "$tl" "$sl") | ${R[tar-large]}/ ${R[save-large]} |"
echo "| $NS small files | $ts | $(mbs "$SBYTES" "$ts") ($(awk -v n="$NS" -v t="$ts" 'BEGIN{printf "%.0f", n/t}') files/s) | $ss | $(mbs "$SBYTES" "$ss") ($(awk -v n="$NS" -v t="$ss" 'BEGIN{printf "%.0f", n/t}') files/s) | $(ratio "$ts" "$ss") | ${R[tar-small]}/ ${R[save-small]} |"
echo "| $NS small files, save --pss (${PSS:-4} streams) | $ts | $(mbs "$SBYTES" "$ts") ($(awk -v n="$NS" -v t="$ts" 'BEGIN{printf "%.0f", n/t}') files/s) | $ps | $(mbs "$SBYTES" "$ps") ($(awk -v n="$NS" -v t="$ps" 'BEGIN{printf "%.0f", n/t}') files/s) | $(ratio "$ts" "$ps") | ${R[tar-small]}/ ${R[pss-small]} |"
echo "| $NL x $LMB MB via save --pipe -- tar -cf - | $tl | $(mbs "$LBYTES" "$tl") | $pl | $(mbs "$LBYTES" "$pl") | $(ratio "$tl" "$pl") | ${R[tar-large]}/ ${R[pipe-large]} |"
echo
echo "incremental of $NS unchanged files after a full (warm cache): $INCR s"
