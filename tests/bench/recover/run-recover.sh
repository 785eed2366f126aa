#!/bin/bash
# run-recover.sh - recover against tar -x: large files and many small
# files, restored to the same disk, in one run.
#
# A single-host datazone under DIR/root on free loopback ports with one
# AFTD (DIR/aftd).  The data (bench_savedata from tests/bench/save, the
# same every run): NL files of LMB megabytes and NS files of 4-64 KiB,
# 1000 to a directory, under DIR/data.  Made once, outside every timed
# window: a save of DIR/data/large and one of DIR/data/small, and the tar
# archives DIR/tar/large.tar and small.tar of the same trees (same
# absolute paths, so both restore the same depth).  Each round times, in
# an order rotated by one task per round:
#   rec-large   recover -a DIR/data/large -d DIR/rst (index browse, the
#               way users recover), then sync -f DIR/rst
#   tar-large   tar -xf DIR/tar/large.tar -C DIR/rst, then sync -f
#   rec-small   the same for the small files
#   tar-small
# and with -o OLDBIN also old-large and old-small: OLDBIN/recover (an
# earlier build's client against this datazone), so a change is measured
# side by side with its baseline in the same run.  rec-* recover as a
# user on this host does: over the daemons' local sockets (nsr/rpc.h,
# "Same-host connections"), which need no TLS.  With -T also tls-large
# and tls-small: the same recover over TCP with TLS (NSR_LOCAL_SOCKETS=0,
# as a recover from another host goes); with -P also pln-large and
# pln-small: over TCP without TLS (NSR_TEST_NO_TLS=1, the datazone's
# plain-hosts admitting 127.0.0.1), so what TLS and the transport cost a
# restore on one host is measured in the same run.
# Both end with the restored data on the disk (syncfs of DIR/rst).
# Each task restores into a directory of its own under DIR/rst
# (DIR/rst/ROUND-TASK), all removed only at the end of the run: a
# deletion slows the files created after it (on ext4 without a journal
# the inode allocator passes over recently freed inodes, for minutes;
# RESULTS.md), which would charge one task for the one before it.  With
# -D (a small disk: about 7.5 GB a round at the default sizes) DIR/rst
# is removed before each task instead, synced, and a 2 s pause follows.
# Before each task, outside the timed window, a cold cache: with root
# `sync; echo 3
# >/proc/sys/vm/drop_caches`; without it (or with -e) the pages of the
# volume's and the archives' files are dropped with posix_fadvise
# (bench_savedata evict), which leaves the inode and directory caches
# warm (the output says which).  The table gives medians and every run.
#
#   run-recover.sh [-qeDPT] [-l MB] [-n FILES] [-r RUNS] [-j N] [-o OLDBIN]
#                  -b BINDIR -s SAVEDATA -d DIR
#     -q          quick: 2 x 64 MB, 2000 small files, 1 round
#     -e          no drop_caches even as root (a shared machine): evict
#                 the volume's and the archives' pages only
#     -D          delete the restored tree before each task (see above)
#     -P          also time recover over TCP without TLS (see above)
#     -T          also time recover over TCP with TLS (see above)
#     -l MB       megabytes per large file (default 1024; 2 files)
#     -n FILES    small files (default 50000)
#     -r RUNS     rounds (default 3)
#     -j N        recover -j N (writer workers; omitted: its default)
#     -o OLDBIN   also time OLDBIN/recover (a baseline build's bin)
#     -b BINDIR   a release build's bin directory
#     -s SAVEDATA the bench_savedata program (tests/bench in the build)
#     -d DIR      work directory (data, volume, archives, the datazone)
#
# Every process it starts is stopped by pid at exit, also on failure.
set -u
LMB=1024 NL=2 NS=50000 RUNS=3 BIN="" DATAPROG="" DIR="" DROP=1 OLD="" JOBS=""
DEL=0 PLAIN=0 TCPTLS=0
[ "$(id -u)" = 0 ] || DROP=0
usage="usage: $0 [-qeDPT] [-l MB] [-n FILES] [-r RUNS] [-j N] [-o OLDBIN] -b BINDIR -s SAVEDATA -d DIR"
while getopts "qeDPTl:n:r:j:o:b:s:d:" o; do
	case $o in
	q) LMB=64 NS=2000 RUNS=1 ;;
	e) DROP=0 ;;
	D) DEL=1 ;;
	P) PLAIN=1 ;;
	T) TCPTLS=1 ;;
	l) LMB=$OPTARG ;;
	n) NS=$OPTARG ;;
	r) RUNS=$OPTARG ;;
	j) JOBS=$OPTARG ;;
	o) OLD=$(cd "$OPTARG" && pwd) || exit 2 ;;
	b) BIN=$OPTARG ;;
	s) DATAPROG=$OPTARG ;;
	d) DIR=$OPTARG ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
[ -n "$BIN" ] && [ -n "$DIR" ] && [ -x "$DATAPROG" ] ||
	{ echo "$0: -b, -s and -d are needed" >&2; exit 2; }
. "$(dirname "$0")/../datazone.sh"

S=127.0.0.1

rm -rf "$ROOT" "$DIR/aftd" "$DIR/tar" "$DIR/out" "$DIR/rst"
mkdir -p "$ROOT" "$DIR/aftd" "$DIR/tar" "$DIR/out" "$DIR/rst"
aftd_zone "$DIR/out/daemons.log"
"$BIN/nsrmm" -s $S -q -l -y -b Default -f aftd >/dev/null 2>&1 ||
	{ echo "$0: cannot label the AFTD" >&2; exit 1; }
[ "$PLAIN" = 1 ] &&
	echo "127.0.0.1  # run-recover.sh -P: the plain runs" >"$ROOT/tls/plain-hosts"

# The data, made once (the same every time: kept if it is there).
bench_data "$DATAPROG" $NL "$LMB" "$NS"
LBYTES=$(bytes "$DATA/large")
SBYTES=$(bytes "$DATA/small")

# The backups, once: the save sets and the archives.
for set in large small; do
	"$BIN/save" -s $S -q -N "$set" "$DATA/$set" >"$DIR/out/save-$set" 2>&1 ||
		{ echo "$0: save of $set failed: $(head -3 "$DIR/out/save-$set")" >&2; exit 1; }
	tar -cf "$DIR/tar/$set.tar" -C / "${DATA#/}/$set" ||
		{ echo "$0: tar of $set failed" >&2; exit 1; }
done
sync

cold_how "volume and archives"
# clean - before a task (outside the timed window): with -D delete the
# earlier restore and let the disk settle; then a cold cache.  NEXT is
# the directory the task restores into (a new one each time).
SEQ=0
clean() {
	if [ "$DEL" = 1 ]; then
		rm -rf "$DIR/rst"
		NEXT=$DIR/rst/t
	else
		SEQ=$((SEQ + 1))
		NEXT=$DIR/rst/$SEQ
	fi
	mkdir -p "$NEXT"
	sync
	[ "$DEL" = 1 ] && sleep 2
	cold "$DIR/aftd" "$DIR/tar"
}
# rec PROG SET - recover SET into NEXT with the recover program PROG.
rec() {
	local j=()
	[ -n "$JOBS" ] && [ "$1" = "$BIN/recover" ] && j=(-j "$JOBS")
	"$1" -s $S -q "${j[@]}" -d "$NEXT" -a "$DATA/$2"
}
# task NAME - run one task into NEXT; prints its seconds.
task() {
	local t0 rc=0 set=${1#*-}
	t0=$(now)
	case $1 in
	rec-*) { rec "$BIN/recover" "$set" && sync -f "$NEXT"; } \
		>"$DIR/out/$1" 2>&1 || rc=1 ;;
	old-*) { rec "$OLD/recover" "$set" && sync -f "$NEXT"; } \
		>"$DIR/out/$1" 2>&1 || rc=1 ;;
	tls-*) { NSR_LOCAL_SOCKETS=0 rec "$BIN/recover" "$set" &&
		 sync -f "$NEXT"; } >"$DIR/out/$1" 2>&1 || rc=1 ;;
	pln-*) { NSR_LOCAL_SOCKETS=0 NSR_TEST_NO_TLS=1 rec "$BIN/recover" "$set" &&
		 sync -f "$NEXT"; } >"$DIR/out/$1" 2>&1 || rc=1 ;;
	tar-*) { tar -xf "$DIR/tar/$set.tar" -C "$NEXT" &&
		 sync -f "$NEXT"; } >"$DIR/out/$1" 2>&1 || rc=1 ;;
	esac
	since "$t0"
	[ $rc = 0 ] || echo "# $1 failed: $(head -3 "$DIR/out/$1")" >&2
	# every task must have restored the whole tree
	[ "$(bytes "$NEXT")" = "$( [ "$set" = large ] && echo "$LBYTES" || echo "$SBYTES")" ] ||
		echo "# $1: restored bytes differ from the data" >&2
}

TASKS=(rec-large tar-large rec-small tar-small)
[ -n "$OLD" ] && TASKS+=(old-large old-small)
[ "$TCPTLS" = 1 ] && TASKS+=(tls-large tls-small)
[ "$PLAIN" = 1 ] && TASKS+=(pln-large pln-small)
declare -A R
echo "# $NL x $LMB MB and $NS files of 4-64 KiB ($SBYTES bytes); rounds $RUNS; recover -j ${JOBS:-default}${OLD:+; baseline client $OLD}; $([ "$DEL" = 1 ] && echo "restored tree deleted before each task (-D)" || echo "each task into a new directory")"
echo "# $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); cold cache: $COLD; $(date -u)"
rounds
rm -rf "$DIR/rst"

# fps N SECONDS - files per second.
fps() { awk -v n="$1" -v t="$2" 'BEGIN { printf "%.0f", n / t }'; }
# row LABEL SET WHO - one table row: WHO (rec, old, tls or pln) against
# tar.
row() {
	local t r b n
	t=$(med "${R[tar-$2]}") r=$(med "${R[$3-$2]}")
	if [ "$2" = large ]; then b=$LBYTES n=""; else
		b=$SBYTES n=" ($(fps "$NS" "$t") / $(fps "$NS" "$r") files/s)"; fi
	echo "| $1 | $t | $(mbs "$b" "$t") | $r | $(mbs "$b" "$r")$n | $(ratio "$t" "$r") | ${R[tar-$2]}/ ${R[$3-$2]} |"
}
echo
echo "| data | tar -x s | tar MB/s | recover s | recover MB/s | recover rate / tar rate | runs s (tar / recover) |"
echo "|---|---|---|---|---|---|---|"
row "$NL x $LMB MB" large rec
row "$NS small files" small rec
if [ -n "$OLD" ]; then
	row "$NL x $LMB MB, baseline recover" large old
	row "$NS small files, baseline recover" small old
fi
if [ "$TCPTLS" = 1 ]; then
	row "$NL x $LMB MB, recover over TCP with TLS" large tls
	row "$NS small files, recover over TCP with TLS" small tls
fi
if [ "$PLAIN" = 1 ]; then
	row "$NL x $LMB MB, recover over TCP without TLS" large pln
	row "$NS small files, recover over TCP without TLS" small pln
fi
