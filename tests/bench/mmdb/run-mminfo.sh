#!/bin/bash
# run-mminfo.sh - mminfo over a large media database: time and peak RSS
# of a report streamed as nsrmmdbd sends it and of the same report sorted
# (-o t and -o cn, which keep every matching row in mminfo's memory), for
# this build's mminfo and, with -o, another one side by side (alternating).
#
#   tests/bench/mmdb/run-mminfo.sh [-n N] [-r rounds] -b BINDIR \
#       -t TESTBIN -d DIR [-o OTHER_MINFO]
#
# The media database comes from bench_mmdb -G (N save sets, default
# 200,000, on N/200 volumes of 2,000 clients), served by nsrmmdbd of a
# loopback datazone under DIR (aftd_zone of ../datazone.sh); every run
# lists all of it (-a -q 'savetime>=...' of the first save).  With -o,
# the two listings of each order must be the same, byte for byte.
N=200000
ROUNDS=2
OTHER=
while getopts "n:r:b:t:d:o:" o; do
	case $o in
	n) N=$OPTARG ;;
	r) ROUNDS=$OPTARG ;;
	b) BIN=$OPTARG ;;
	t) TB=$OPTARG ;;
	d) DIR=$OPTARG ;;
	o) OTHER=$OPTARG ;;
	*) echo "usage: $0 [-n N] [-r rounds] -b BINDIR -t TESTBIN -d DIR" \
		"[-o OTHER_MINFO]" >&2; exit 2 ;;
	esac
done
[ -n "$BIN" ] && [ -n "$DIR" ] && [ -x "$TB/bench_mmdb" ] ||
	{ echo "$0: -b, -t and -d are needed" >&2; exit 2; }
TB=$(cd "$TB" && pwd)
[ -z "$OTHER" ] || OTHER=$(cd "$(dirname "$OTHER")" && pwd)/$(basename "$OTHER")
. "$(dirname "$0")/../datazone.sh"
need_time
S=127.0.0.1

rm -rf "$ROOT" "$DIR/gen" "$DIR/aftd" "$DIR/out"
mkdir -p "$ROOT" "$DIR/aftd" "$DIR/out"
"$TB/bench_mmdb" -G -n "$N" -B 30 -R 60 -d "$DIR/gen" >/dev/null || exit 1
mv "$DIR/gen/mm" "$ROOT/mm"
aftd_zone "$DIR/out/daemons.log"

# one LABEL MMINFO ORDER - one listing; a table row
one() {
	local label=$1 mm=$2 order=$3 o=()
	[ "$order" = none ] || o=(-o "$order")
	/usr/bin/time -f '%e %M' -o "$DIR/out/time" "$mm" -s $S -a \
		-q 'savetime>=01/01/1970' -r 'ssid,client,name,savetime,volume' \
		"${o[@]}" >"$DIR/out/list" 2>"$DIR/out/err" ||
		{ echo "# $label -o $order failed: $(tail -n 2 "$DIR/out/err")"; return 1; }
	read -r secs kb <"$DIR/out/time"
	mv "$DIR/out/list" "$DIR/out/list.$label.$order"
	printf '| %s | %s | %s | %s | %.1f |\n' "$label" "$order" \
		"$(wc -l <"$DIR/out/list.$label.$order")" "$secs" \
		"$(awk -v k="$kb" 'BEGIN { print k / 1024 }')"
}

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); N=$N"
echo
echo "| mminfo | -o | lines | seconds | peak RSS MB |"
echo "|---|---|---|---|---|"
rc=0
for r in $(seq "$ROUNDS"); do
	for order in none t cn; do
		if [ -n "$OTHER" ] && [ $((r % 2)) = 1 ]; then
			one other "$OTHER" $order || rc=1
		fi
		one this "$BIN/mminfo" $order || rc=1
		if [ -n "$OTHER" ] && [ $((r % 2)) = 0 ]; then
			one other "$OTHER" $order || rc=1
		fi
		if [ -n "$OTHER" ] && ! cmp -s "$DIR/out/list.this.$order" \
			"$DIR/out/list.other.$order"; then
			echo "# -o $order: the two listings differ"
			rc=1
		fi
	done
done
[ -z "$OTHER" ] || [ $rc != 0 ] || echo "(every listing the same from both)"
exit $rc
