#!/bin/bash
# 410-spanning: a save set larger than one vtape volume continues on the
# next volume of the pool.  Two vtape devices of 3 MB each in pool Span;
# a 4.5 MB tree is saved; mminfo shows the save set on both volumes, head
# on one and tail on the other; the first volume is marked full; recover
# by save set id and by path (through the index) gives the tree back.
# Another save set spans three volumes (head, middle, tail) and comes
# back.  Two sessions multiplexed on one vtape both span.  Then, with no writable volume left, a save fails naming the pool.
# No mover relays: the client itself goes on at the next volume's mover,
# so a full volume's session has ended before the next volume's begins.
. "$(dirname "$0")/lib.sh"
nsr_setup 410-spanning
S=127.0.0.1
W=$ROOT/work
mkdir -p "$W"
export NSR_TEST_VTAPE_CAPACITY=3145728
nsr_start_datazone

T=$W/tree
mkdir -p "$T/d"
head -c 2500000 /dev/urandom >"$T/d/one.bin"
head -c 2000000 /dev/urandom >"$T/two.bin"
seq 1 20000 >"$T/d/numbers"

admin() { "$BIN/nsradmin" -s $S -i - >/dev/null; }
# events SSID - what the movers logged of a save set, in order: S started
# on a volume, R its part on a full volume recorded and that session over
# (the mover passed nothing on), D done.  No relay reads (SR)...SD.
events() {
	grep "nsrmmd.*save set $1 (" "$ROOT/logs/daemon.log" | sed -n \
		-e 's/.* started on volume .*/S/p' \
		-e 's/.* on the full volume .* passed none on$/R/p' \
		-e 's/.*) done: .*/D/p' | tr -d '\n'
}
echo 'create type: NSR pool; name: Span' | admin
for i in 1 2; do
	nsr_device tape$i vtape "$W/tape$i.vtape"
	check "label SPAN0$i in tape$i" "$BIN/nsrmm" -s $S -q -l -y -b Span -f tape$i SPAN0$i
done

out=$("$BIN/save" -s $S -q -b Span "$T" 2>&1)
check "a save set larger than one volume succeeds" test $? -eq 0
[ "$FAILED" = 0 ] || echo "$out" | sed 's/^/# /'

rows=$("$BIN/mminfo" -s $S -a -q "name=$T" -r "ssid,volume,sumflags" 2>/dev/null)
echo "$rows" | sed 's/^/# mminfo: /'
ssid=$(awk '$1 ~ /^[0-9]+$/ {print $1; exit}' <<<"$rows")
check "the save set is in the media database" test -n "$ssid"
nvol=$(awk '$1 ~ /^[0-9]+$/ {print $2}' <<<"$rows" | sort -u | wc -l)
check "mminfo shows it on two volumes (got $nvol)" test "$nvol" -eq 2
check "one piece is the head" grep -Eq "^ *$ssid +SPAN0[12] +h" <<<"$rows"
check "one piece is the tail" grep -Eq "^ *$ssid +SPAN0[12] +t" <<<"$rows"
headvol=$(awk -v s="$ssid" '$1 == s && $3 ~ /^h/ {print $2}' <<<"$rows")
full=$("$BIN/mminfo" -s $S -a -q "volume=${headvol:-none},full" -r volume 2>&1)
echo "$full" | sed 's/^/# mminfo full: /'
check "the head's volume ${headvol:-none} is marked full" grep -Eq "^ *${headvol:-none} *$" <<<"$full"
ev=$(events "${ssid:-0}")
check "no relay: the full volume's session ended before the next began ($ev)" test "$ev" = SRSD

"$BIN/recover" -s $S -q -S "${ssid:-0}" -d "$W/r1" >"$W/r1.out" 2>&1
check "recover -S of the spanning save set exits 0" test $? -eq 0
check "recover -S gives the tree back" "$BIN/nsrtreecmp" "$T" "$W/r1$T"
mkdir -p "$W/r2"
(cd "$W/r2" && "$BIN/recover" -s $S -q -d "$W/r2" -a "$T/two.bin" "$T/d/one.bin") \
	>"$W/r2.out" 2>&1
check "recover -a of files on both volumes exits 0" test $? -eq 0
check "recover -a: two.bin intact" cmp -s "$T/two.bin" "$W/r2$T/two.bin"
check "recover -a: one.bin intact" cmp -s "$T/d/one.bin" "$W/r2$T/d/one.bin"
[ "$FAILED" = 0 ] || sed 's/^/# recover: /' "$W/r1.out" "$W/r2.out"

# Three volumes: the client goes on twice (head, middle, tail).
echo 'create type: NSR pool; name: Span3' | admin
for i in 3 4 5; do
	nsr_device tape$i vtape "$W/tape$i.vtape"
	check "label SPAN0$i in tape$i" "$BIN/nsrmm" -s $S -q -l -y -b Span3 -f tape$i SPAN0$i
done
T3=$W/tree3
mkdir -p "$T3"
for i in 1 2 3 4 5 6 7; do head -c 1000000 /dev/urandom >"$T3/part$i"; done
check "a save set over three volumes succeeds" "$BIN/save" -s $S -q -b Span3 "$T3"
rows=$("$BIN/mminfo" -s $S -a -q "name=$T3" -r "ssid,volume,sumflags" 2>/dev/null)
echo "$rows" | sed 's/^/# mminfo: /'
ssid3=$(awk '$1 ~ /^[0-9]+$/ {print $1; exit}' <<<"$rows")
check "it is on three volumes" \
	test "$(awk '$1 ~ /^[0-9]+$/ {print $2}' <<<"$rows" | sort -u | wc -l)" -eq 3
check "with a head, a middle and a tail" \
	test "$(awk '$1 ~ /^[0-9]+$/ {print substr($3, 1, 1)}' <<<"$rows" | sort | tr -d '\n')" = hmt
"$BIN/recover" -s $S -q -S "${ssid3:-0}" -d "$W/r3" >"$W/r3.out" 2>&1
check "recover -S over three volumes exits 0" test $? -eq 0
check "and gives the tree back" "$BIN/nsrtreecmp" "$T3" "$W/r3$T3"
ev=$(events "${ssid3:-0}")
check "no relay over three volumes either ($ev)" test "$ev" = SRSRSD
[ "$FAILED" = 0 ] || sed 's/^/# recover: /' "$W/r3.out"

# Two sessions multiplexed on one vtape, driven straight at its mover:
# both hit its end together and both continue on the next volume.
MT=$BIN/mmdtest
for i in 6 7; do
	nsr_device tape$i vtape "$W/tape$i.vtape"
	check "label SPAN0$i in tape$i" "$BIN/nsrmm" -s $S -q -l -y -b Default -f tape$i SPAN0$i
done
read -r P6 _ < <("$MT" mover $S vtape "$W/tape6.vtape" tape6 0 $S)
read -r P7 _ < <("$MT" mover $S vtape "$W/tape7.vtape" tape7 0 $S)
ST=1700000200
for j in 1 2; do
	head -c 2400000 /dev/urandom >"$W/mux$j"
	M[$j]=$("$MT" mmdb-ss $S client1 /mux$j $ST)
done
# Both sessions begin, then get their data paced (the client sends 1 MB
# calls), so each has data left after the 3 MB volume fills: both span.
pace() { # FILE: 200 KB every 0.1 s after a second
	sleep 1
	for k in $(seq 0 11); do
		dd if="$1" bs=200000 skip="$k" count=1 status=none; sleep 0.1
	done
}
for j in 1 2; do
	pace "$W/mux$j" |
		"$MT" save $S "${P6:-0}" "${M[$j]:-0}" client1 /mux$j $ST >"$W/mf$j" 2>"$W/me$j" &
	MP[$j]=$!
done
for j in 1 2; do
	wait "${MP[$j]}"
	check "multiplexed session $j spans and ends well" test $? -eq 0
	[ "$FAILED" = 0 ] || sed 's/^/# mmdtest: /' "$W/me$j"
	flags=$("$MT" mmdb-frags $S "${M[$j]:-0}" | awk '{print $7}' | sort | tr '\n' ' ')
	check "it has a head and a tail fragment (flags: $flags)" test "$flags" = "0x1 0x4 "
	words=$("$MT" mmdb-fragwords $S "${M[$j]:-0}")
	{ "$MT" recover $S "${P6:-0}" "${M[$j]:-0}" $words &&
	  "$MT" recover $S "${P7:-0}" "${M[$j]:-0}" $words; } >"$W/mo$j" 2>"$W/mre$j"
	check "its head on SPAN06 and tail on SPAN07 read back identical" \
		cmp -s "$W/mux$j" "$W/mo$j"
done
for j in 1 2; do
	ev=$(events "${M[$j]:-0}")
	check "multiplexed session $j went on at SPAN07's mover itself ($ev)" test "$ev" = SRSD
done
check "no mover continued a save set at another mover" \
	test "$(grep -c 'nsrmmd.*continues on volume' "$ROOT/logs/daemon.log")" -eq 0

# No writable volume left in the pool: the save fails naming the pool.
head -c 4000000 /dev/urandom >"$W/big2"
out=$("$BIN/save" -s $S -q -b Span "$W/big2" 2>&1)
check "a save with no volume left fails" test $? -ne 0
echo "$out" | sed 's/^/# save: /'
check "naming the pool" grep -q "pool 'Span'" <<<"$out"
left=$("$BIN/mminfo" -s $S -a -q "name=$W/big2" -r "volume" 2>&1)
echo "$left" | sed 's/^/# mminfo big2: /'
check "the failed save set left no fragment on SPAN02" test -z "$(grep SPAN02 <<<"$left")"
nsr_done
