#!/bin/bash
# 310-blocksizes: through a whole datazone, label volumes with 32 KB,
# 256 KB, 1 MB and 8 MB blocks on AFTD and on vtape, save a tree with a
# file larger than the largest block, recover it by save set id and
# compare; mminfo reports each volume's block size; several save sets on
# one vtape volume each come back.  The vtape devices have a 1 MB segment
# size, so every save set there crosses filemarks and later save sets start
# in later tape files.
. "$(dirname "$0")/lib.sh"
nsr_setup 310-blocksizes
S=127.0.0.1
W=$ROOT/work
mkdir -p "$W"
nsr_start_datazone

T=$W/tree
mkdir -p "$T/d"
head -c 9500000 /dev/urandom >"$T/d/big.bin"
head -c 100 /dev/urandom >"$T/d/small.bin"
seq 1 5000 >"$T/numbers"
ln -s d/big.bin "$T/link"

ssid_of() { # NAME VOLUME -> ssid of the save set NAME on VOLUME
	"$BIN/mminfo" -s $S -a -q "name=$1,volume=$2" -r ssid 2>/dev/null |
		awk '$1 ~ /^[0-9]+$/ {print $1; exit}'
}

n=0
for type in adv_file vtape; do
	for bs in 32K 256K 1M 8M; do
		n=$((n + 1))
		dev=dev$n
		if [ $type = adv_file ]; then path=$W/$dev; mkdir -p "$path"
		else path=$W/$dev.vtape; fi
		seg=""
		[ $type = vtape ] && seg="segment size: 1 MB"
		nsr_device $dev $type "$path" "$seg"
		pool="P$n"
		printf 'create type: NSR pool; name: %s\n' $pool | "$BIN/nsradmin" -s $S -i - >/dev/null
		check "$type $bs: label" "$BIN/nsrmm" -s $S -q -l -y -b $pool -f $dev -z $bs V$n
		check "$type $bs: save" "$BIN/save" -s $S -q -b $pool -N "$T" "$T"
		ssid=$(ssid_of "$T" V$n)
		check "$type $bs: the save set is on V$n" test -n "$ssid"
		"$BIN/recover" -s $S -q -S "${ssid:-0}" -d "$W/r$n" >/dev/null 2>&1
		check "$type $bs: recovered tree equals the original" "$BIN/nsrtreecmp" "$T" "$W/r$n$T"
		case $bs in
		*K) want=$(( ${bs%K} * 1024 )) ;;
		*M) want=$(( ${bs%M} * 1048576 )) ;;
		esac
		got=$("$BIN/mminfo" -s $S -a -q "volume=V$n" -r "volume,volblocksize" 2>/dev/null |
			awk -v v=V$n '$1 == v {print $2; exit}')
		check "$type $bs: mminfo shows block size $want for V$n (got '$got')" test "$got" = "$want"
	done
done

# Several save sets on one vtape volume (V5, 32 KB blocks): each comes back.
for i in 1 2 3; do
	mkdir -p "$W/multi$i"; seq $i 7 20000 >"$W/multi$i/f"
	check "second-round save $i to V5" "$BIN/save" -s $S -q -b P5 "$W/multi$i"
done
third=$(ssid_of "$W/multi3" V5)
# 1 MB segments: the 9.5 MB save set spans about ten tape files, so the
# third of the later ones starts well past file 1.
file3=$("$BIN/mminfo" -s $S -V -xj -q "ssid=${third:-0}" 2>/dev/null |
	grep -o '"file": *[0-9]*' | head -1 | grep -o '[0-9]*$')
check "segment filemarks: the third later save set starts in tape file ${file3:-?} > 9" \
	test "${file3:-0}" -gt 9
"$BIN/recover" -s $S -q -S "${third:-0}" -d "$W/m3" >/dev/null 2>&1
check "the third of several save sets on one vtape comes back" \
	"$BIN/nsrtreecmp" "$W/multi3" "$W/m3$W/multi3"
nsr_done
