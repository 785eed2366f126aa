#!/bin/bash
# run-named.sh - recover -a of N files of one directory, each named on
# the command line (as recover's "add *" over a large directory names
# them): the seconds it takes, for each N given.  With -i, recover's
# browser instead: cd to the directory, "add *", "recover".  Not run by
# ctest.
#
#   run-named.sh [-i] -b BINDIR -d DIR [-n N,N,...]
#
# Each N gets a datazone of its own on loopback under DIR (the system
# tests' helpers: free ports, daemons stopped by pid), one save of a
# directory with N one-line files, then one recover of all N by name.
# Compare two builds by running it with each -b in turn.  NSR_PERF, if
# set, is put before the recover -a command (e.g. "perf record -g").
set -u
BIN="" DIR="" COUNTS="500,2000,8000" BROWSE=0
while getopts "ib:d:n:" o; do
	case $o in
	i) BROWSE=1 ;;
	b) BIN=$OPTARG ;;
	d) DIR=$OPTARG ;;
	n) COUNTS=$OPTARG ;;
	*) echo "usage: $0 [-i] -b BINDIR -d DIR [-n N,...]" >&2; exit 2 ;;
	esac
done
[ -n "$BIN" ] && [ -n "$DIR" ] ||
	{ echo "usage: $0 [-i] -b BINDIR -d DIR [-n N,...]" >&2; exit 2; }
BIN=$(cd "$BIN" && pwd)
mkdir -p "$DIR" && DIR=$(cd "$DIR" && pwd)
# one N - a datazone of its own, in a subshell (lib.sh's trap stops it).
one() (
	export NSR_BIN=$BIN NSR_TEST_TMPDIR=$DIR NSR_TEST_TALLY_CHECK=0
	. "$(dirname "$0")/../../system/lib.sh"
	nsr_setup named
	S=127.0.0.1
	W=$ROOT/work
	mkdir -p "$W/aftd" "$W/d/sub"
	nsr_start_datazone >/dev/null 2>&1
	nsr_device aftd adv_file "$W/aftd" >/dev/null 2>&1
	"$BIN/nsrmm" -s $S -q -l -y -b Default -f aftd >/dev/null 2>&1 ||
		{ echo "cannot label" >&2; exit 1; }
	for i in $(seq 1 "$1"); do echo "$i" >"$W/d/sub/f$i"; done
	"$BIN/save" -s $S -q "$W/d" >/dev/null 2>&1 ||
		{ echo "save failed" >&2; exit 1; }
	args=()
	for i in $(seq 1 "$1"); do args+=("$W/d/sub/f$i"); done
	t0=$(date +%s.%N)
	if [ "$BROWSE" = 1 ]; then
		printf 'cd %s\nadd *\nrecover\nquit\n' "$W/d/sub" |
			"$BIN/recover" -s $S -d "$W/out" >/dev/null 2>&1
	else
		${NSR_PERF:-} "$BIN/recover" -s $S -q -a -d "$W/out" "${args[@]}" \
			>/dev/null 2>&1
	fi
	rc=$?
	t1=$(date +%s.%N)
	echo "| $1 | $(find "$W/out" -type f | wc -l) | $rc | $(echo "$t1 - $t0" | bc) |"
)
echo "| files named | restored | exit | seconds |"
echo "|---|---|---|---|"
for n in ${COUNTS//,/ }; do one "$n"; done
