#!/bin/bash
# run-ixquery.sh - nsrindexd's memory for one large kept query: nsrinfo
# of a full save set of N entries (IX_QUERY of its entries, then every
# page), with the nsrindexd of BINDIR and, with -o, another nsrindexd
# (an older build) side by side on the same index.
#
# bench_index -L builds one client's index ("bench", 30 save sets, no
# directory lists) whose first full holds N entries (ssid 1000), under
# DIR/gen; each round moves it into a fresh datazone's root (nsrexecd,
# nsrd and its children from the bin directory of that round), runs
#   nsrinfo -s 127.0.0.1 -S 1000 bench
# timed, counts the entry lines it printed (and an MD5 of all it
# printed, to compare rounds), and reads the peak RSS of nsrindexd
# (VmHWM in /proc) before nsrinfo and after it.
#
#   run-ixquery.sh [-q] [-n N] -b BINDIR -t TESTBIN -d DIR [-o NSRINDEXD]
#     -q        quick: N = 100,000
#     -n N      entries of the save set listed (default 2000000)
#     -b BINDIR a release build's bin directory
#     -t TESTBIN the build's tests/bench directory (bench_index)
#     -d DIR    work directory (emptied first)
#     -o PROG   also run this nsrindexd (copied into a copy of BINDIR)
#
# Every daemon it starts is stopped by pid at exit (datazone.sh).
N=2000000
OLD=
while getopts "qn:b:t:d:o:" o; do
	case $o in
	q) N=100000 ;;
	n) N=$OPTARG ;;
	b) BIN=$OPTARG ;;
	t) TB=$OPTARG ;;
	d) DIR=$OPTARG ;;
	o) OLD=$OPTARG ;;
	*) echo "usage: $0 [-q] [-n N] -b BINDIR -t TESTBIN -d DIR [-o NSRINDEXD]" >&2
	   exit 2 ;;
	esac
done
[ -n "$BIN" ] && [ -n "$DIR" ] && [ -x "$TB/bench_index" ] ||
	{ echo "$0: -b, -t and -d are needed" >&2; exit 2; }
[ -z "$OLD" ] || [ -x "$OLD" ] || { echo "$0: $OLD: not a program" >&2; exit 2; }
TB=$(cd "$TB" && pwd)
. "$(dirname "$0")/../datazone.sh"
need_time
S=127.0.0.1
NEWBIN=$BIN

rm -rf "$ROOT" "$DIR/gen" "$DIR/aftd" "$DIR/out" "$DIR/oldbin"
mkdir -p "$DIR/out"
# bench_index: the full holds M files and D directories, M = n / 2.7
"$TB/bench_index" -L -q 1 -n $(( N * 27 / 10 )) -d "$DIR/gen" \
	>"$DIR/out/build.txt" 2>&1 || { cat "$DIR/out/build.txt"; exit 1; }
if [ -n "$OLD" ]; then
	cp -a "$NEWBIN" "$DIR/oldbin"
	cp "$OLD" "$DIR/oldbin/nsrindexd"
fi

# hwm - nsrindexd's peak RSS so far, MB.
hwm() {
	awk '/^VmHWM/ { printf "%.1f", $2 / 1024 }' \
		"/proc/$(cat "$ROOT/logs/nsrindexd.pid")/status"
}

# round NAME BINDIR - one datazone, one nsrinfo; a table row.
round() {
	local name=$1 before after secs kb rc
	BIN=$2
	STARTED=()
	rm -rf "$ROOT" "$DIR/aftd"
	mkdir -p "$ROOT" "$DIR/aftd"
	mv "$DIR/gen/index" "$ROOT/index"
	aftd_zone "$DIR/out/daemons-$name.log"
	# nsrindexd answers once nsrd has started it
	for _ in $(seq 1 100); do
		[ -s "$ROOT/logs/nsrindexd.pid" ] && break
		sleep 0.1
	done
	"$BIN/nsrinfo" -s $S -S 999999 bench >/dev/null 2>&1 # opens the index
	before=$(hwm)
	/usr/bin/time -f '%e %M' -o "$DIR/out/$name.time" \
		"$BIN/nsrinfo" -s $S -S 1000 bench >"$DIR/out/$name.txt" \
		2>"$DIR/out/$name.err"
	rc=$?
	after=$(hwm)
	read -r secs kb < <(tail -n 1 "$DIR/out/$name.time")
	printf '| %s | %s | %s | %s | %s | %s | %.1f | %s |\n' "$name" \
		"$(grep -c ', date=' "$DIR/out/$name.txt")" \
		"$(md5sum <"$DIR/out/$name.txt" | cut -c1-8)" "$rc" "$secs" \
		"$before -> $after" "$(awk -v k="$kb" \
		'BEGIN { print k / 1024 }')" \
		"$(tail -n 1 "$DIR/out/$name.err" | cut -c1-120)"
	rm -f "$DIR/out/$name.txt"
	cleanup
	mv "$ROOT/index" "$DIR/gen/index"
}

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); N=$N"
grep '^entries' "$DIR/out/build.txt" | sed 's/^/# /'
echo
echo "| nsrindexd | entry lines | md5 of the output | nsrinfo exit | seconds | nsrindexd peak RSS MB (before -> after) | nsrinfo peak RSS MB | nsrinfo's last message |"
echo "|---|---|---|---|---|---|---|---|"
round new "$NEWBIN"
[ -z "$OLD" ] || round old "$DIR/oldbin"
