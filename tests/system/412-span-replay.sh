#!/bin/bash
# 412-span-replay: a save set goes on to the next volume from the byte
# where its volume filled, sent again by the client from what it kept.
# Vtape volumes of 2 MB, labeled with block sizes from 32 KB to 1 MB; save
# sets of 3.5 to 6 MB saved with acknowledgement windows from almost
# stop-and-wait (a sync every 64 KB, one outstanding, 32 KB calls) to the
# default (a sync every 4 MB: the first save set learns of the full volume
# only at its end), so each volume fills at another place relative to the
# syncs, the data calls and the blocks.  Each save set spans two to four
# volumes and reads back identical; no mover passes data on: the mover of
# each full volume received fewer bytes than the save set has (with a
# window smaller than a volume), and the movers together received every
# byte.
. "$(dirname "$0")/lib.sh"
nsr_setup 412-span-replay
S=127.0.0.1
W=$ROOT/work
mkdir -p "$W"
export NSR_TEST_VTAPE_CAPACITY=2097152
nsr_start_datazone

admin() { "$BIN/nsradmin" -s $S -i - >/dev/null; }
LOG=$ROOT/logs/daemon.log
dev=0

# span_case POOL BLOCKSIZE VOLUMES WINDOW SIZE - label VOLUMES volumes of
# POOL with BLOCKSIZE, save SIZE random bytes with NSR_TEST_MMD_WINDOW set
# to WINDOW ("" = the default), check the spans and read it back.
span_case() {
	local pool=$1 bs=$2 nv=$3 win=$4 size=$5 i t ssid rows got
	echo "create type: NSR pool; name: $pool" | admin
	for i in $(seq 1 "$nv"); do
		dev=$((dev + 1))
		nsr_device r$dev vtape "$W/r$dev.vtape"
		check "$pool: label $pool$i ($bs blocks)" \
			"$BIN/nsrmm" -s $S -q -l -y -b "$pool" -z "$bs" -f r$dev "$pool$i"
	done
	t=$W/$pool
	mkdir -p "$t"
	head -c "$size" /dev/urandom >"$t/data"
	NSR_TEST_MMD_WINDOW=$win "$BIN/save" -s $S -q -b "$pool" "$t" \
		>"$W/$pool.out" 2>&1
	check "$pool: a $size-byte save set (window '${win:-default}') succeeds" test $? -eq 0
	[ "$FAILED" = 0 ] || sed 's/^/# save: /' "$W/$pool.out"
	rows=$("$BIN/mminfo" -s $S -a -q "name=$t" -r "ssid,volume,sumflags" 2>/dev/null)
	echo "$rows" | sed "s/^/# $pool mminfo: /"
	ssid=$(awk '$1 ~ /^[0-9]+$/ {print $1; exit}' <<<"$rows")
	got=$(awk '$1 ~ /^[0-9]+$/ {print $2}' <<<"$rows" | sort -u | wc -l)
	check "$pool: it spans at least two volumes (got $got)" test "$got" -ge 2
	check "$pool: a head, middles and a tail" grep -Eq '^hm*t$' \
		<<<"$(awk '$1 ~ /^[0-9]+$/ {print substr($3, 1, 1)}' <<<"$rows" | sort | tr -d '\n')"
	"$BIN/recover" -s $S -q -S "${ssid:-0}" -d "$W/$pool.r" >"$W/$pool.rec" 2>&1
	check "$pool: recover -S exits 0" test $? -eq 0
	check "$pool: the data reads back identical" cmp -s "$t/data" "$W/$pool.r$t/data"
	[ "$FAILED" = 0 ] || sed 's/^/# recover: /' "$W/$pool.rec"

	# No relay: the movers' own counts of what they received.
	grep "nsrmmd.*save set ${ssid:-0} (.*received" "$LOG" | sed "s/^/# $pool log: /"
	local full n total
	full=$(grep -c "nsrmmd.*save set ${ssid:-0} (.*on the full volume .* passed none on" "$LOG")
	check "$pool: each full volume's mover kept its part and passed none on ($full of $((got - 1)))" \
		test "$full" -eq $((got - 1))
	# With a window smaller than a volume the client hears of the end
	# of medium before it sent everything (the default window may not).
	n=$(grep "nsrmmd.*save set ${ssid:-0} (.*on the full volume" "$LOG" |
		sed -n 's/.*; received \([0-9]*\) bytes.*/\1/p' |
		awk -v s="$size" '$1 >= s {n++} END {print n + 0}')
	[ -z "$win" ] ||
		check "$pool: no full volume's mover received the whole save set" test "$n" -eq 0
	total=$(grep "nsrmmd.*save set ${ssid:-0} (.*received" "$LOG" |
		sed -n 's/.*received \([0-9]*\) bytes.*/\1/p' | awk '{t += $1} END {print t + 0}')
	check "$pool: the movers together received every byte ($total >= $size)" \
		test "$total" -ge "$size"
}

span_case Ra 262144 2 "" 3500000
span_case Rb 32768 3 65536,1,32768 4500000
span_case Rc 131072 3 262144,4,65536 5000000
span_case Rd 65536 4 1048576,2 6000000
span_case Re 1048576 4 131072,3,32768 2500000
nsr_done
