#!/bin/bash
# 103-mminfo-many: mminfo on a datazone with thousands of save sets made by
# 16 concurrent clients: every row streams through (many batches), counts
# per client add up, -o orders correctly in both directions, and a narrow
# query returns exactly its rows.
. "$(dirname "$0")/lib.sh"
nsr_setup 103-mminfo-many
export TZ=UTC
T=$BIN/mmdb_testclnt
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$ROOT/asan"
N=3000

nsr_start nsrexecd
nsr_start nsrmmdbd
"$T" storm $N 16 >"$ROOT/acks"
check "$N save sets created by 16 clients" test "$(grep -c '^ack' "$ROOT/acks")" -eq $N

out=$("$T" query '' 2>&1)
check "the daemon streams them all, 7 per batch: $out" \
	test "$out" = "$N rows in 429 batches"
rows=$("$BIN/mminfo" -av -r ssid | tail -n +2 | wc -l)
check "mminfo prints every one ($rows)" test "$rows" -eq $N
check "each acknowledged ssid exactly once" \
	diff <(sed 's/^ack //' "$ROOT/acks" | sort -n) \
	     <("$BIN/mminfo" -av -r ssid | tail -n +2 | tr -d ' ' | sort -n)

# Per client: the first N % 16 storm threads made one more.
bad=0
for i in $(seq 0 15); do
	want=$(( N / 16 + (i < N % 16 ? 1 : 0) ))
	got=$("$BIN/mminfo" -av -r name -c "storm$i" | tail -n +2 | wc -l)
	[ "$got" -eq "$want" ] || { echo "# storm$i: $got, want $want"; bad=1; }
done
check "rows per client add up" test $bad -eq 0

"$BIN/mminfo" -av -r 'client(8),nsavetime' -oct | tail -n +2 >"$ROOT/ct"
check "-oct sorts by client, then save time" \
	sort -c -k1,1 -k2,2n "$ROOT/ct"
"$BIN/mminfo" -av -r 'client(8),nsavetime' -octR | tail -n +2 >"$ROOT/ctR"
check "-octR is the exact reverse" diff <(tac "$ROOT/ct") "$ROOT/ctR"

out=$("$BIN/mminfo" -av -r 'client,name' -q 'client=storm7,name=/data/42' | tail -n +2)
check "a narrow query finds its one row" \
	test "$(tr -s ' ' <<<"$out")" = "storm7 /data/42"
# storm7 saved /data/0../data/187 at 1717372800 + 700000 + i.
rows=$("$BIN/mminfo" -av -r name -q 'client=storm7,savetime>=@1718072900' | tail -n +2 | wc -l)
check "a time range finds exactly its rows ($rows of 88)" test "$rows" -eq 88
out=$("$BIN/mminfo" -av -r name -q 'client=storm7,savetime<06/03/2024' 2>&1 >/dev/null); rc=$?
check "and nothing outside it (exit $rc)" test $rc -eq 1

# mminfo -m with a save set attribute: the volumes holding those save
# sets, each once (looked up by name among the kept ones).
want=$("$BIN/mminfo" -av -r volume -c storm7 | tail -n +2 | tr -d ' ' |
	grep -v '^$' | sort -u)
got=$("$BIN/mminfo" -m -c storm7 | tail -n +2 | grep -o 'STORM\.[0-9]*' | sort)
check "mminfo -m -c lists each volume of the client's save sets once ($(wc -w <<<"$got"))" \
	test -n "$want" -a "$got" = "$want"
out=$("$T" check 2>&1)
check "the database check passes" grep -q "^consistent" <<<"$out"
check "no sanitizer reports" test -z "$(ls "$ROOT"/asan.* 2>/dev/null)"
nsr_done
