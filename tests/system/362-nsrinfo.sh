#!/bin/bash
# 362-nsrinfo: a client's file index contents.  A full and an incr; then
# nsrinfo lists every entry of both (NetWorker's "path, date=T DATE"
# lines and the count; 2,500 files in one directory make the full's
# entries come in several pages of nsrindexd's kept query), those of one save time (-t, seconds or a date),
# of one save set (-S), one name (-N), verbose (-v); an unknown client,
# save time or ssid is refused with a message naming it and exit 1; bad
# usage exits 2.  nsrindexd builds listings 100 names at a time here
# (NSR_TEST_INDEX_LIST_WINDOW), so the browser's ls of the 2,500 files
# and recover -a of them page across 25 windows: every name once.  It
# keeps no query result in memory either (NSR_TEST_INDEX_RESULTS_MEM=0):
# every result of nsrinfo's queries and of the browser's versions and
# find goes to a spill file (the log says so) and comes back whole and
# in order; no spill file is left named in the index directory.
. "$(dirname "$0")/lib.sh"
nsr_setup 362-nsrinfo
S=127.0.0.1
W=$ROOT/work
T=$W/tree
export NSR_TEST_INDEX_LIST_WINDOW=100
export NSR_TEST_INDEX_RESULTS_MEM=0
nsr_start_aftd_datazone
C=$(hostname)

mkdir -p "$T/d"
printf 'one\n' >"$T/a"
printf 'two\n' >"$T/d/b"
mkdir "$T/many"
for i in $(seq 1 2500); do : >"$T/many/f$i"; done
sleep 1.1 # nothing changed in the full's second: the incr leaves d/b out
"$BIN/save" -s $S -l full "$T" >"$W/save1.out" 2>&1
check "full save" test $? -eq 0
sleep 1.1
printf 'one, changed\n' >"$T/a"
"$BIN/save" -s $S -l incr "$T" >"$W/save2.out" 2>&1
check "incr save" test $? -eq 0
times=$("$BIN/mminfo" -s $S -a -q "name=$T" -ot -r nsavetime |
	awk '$1 ~ /^[0-9]+$/ {print $1}')
FULL=$(echo "$times" | head -1)
INCR=$(echo "$times" | tail -1)
check "two save times" test -n "$FULL" -a "$FULL" != "$INCR"
SSID=$("$BIN/mminfo" -s $S -a -q "name=$T,level=incr" -r ssid |
	awk '$1 ~ /^[0-9]+$/ {print $1; exit}')

printf 'cd %s\nls\n' "$T/many" | "$BIN/recover" -s $S -c "$C" >"$W/ls" 2>&1
check "the browser lists the 2,500 files across listing windows" \
	test "$(grep -x 'f[0-9]*' "$W/ls" | sort)" = "$(ls "$T/many" | sort)"
mkdir "$W/r"
"$BIN/recover" -s $S -c "$C" -q -d "$W/r" -a "$T/many" >"$W/rec" 2>&1
check "recover -a of them: exit 0" test $? -eq 0
check "every one recovered" \
	test "$(ls "$W/r$T/many" | sort)" = "$(ls "$T/many" | sort)"

"$BIN/nsrinfo" -s $S "$C" >"$W/all" 2>&1
check "nsrinfo lists the index" test $? -eq 0
check "with the header" \
	grep -qx "scanning client \`$C' for all savetimes from the backup namespace" \
	"$W/all"
n_all=$(grep -c ', date=' "$W/all")
check "every entry of both save sets, counted" \
	grep -qx "$n_all objects found" "$W/all"
check "the full's 2,505 among them, each once" \
	test "$(grep -c ", date=$FULL " "$W/all")" = 2505 -a \
	"$(grep ", date=$FULL " "$W/all" | sort -u | wc -l)" = 2505
check "NetWorker's line layout" \
	grep -q "^$T/a, date=$FULL [A-Z][a-z][a-z] " "$W/all"
check "directories end in /" grep -q "^$T/d/, date=$FULL " "$W/all"

"$BIN/nsrinfo" -s $S -t "$INCR" "$C" >"$W/incr" 2>&1
check "-t lists one save time" test $? -eq 0
n_incr=$(grep -c ", date=$INCR " "$W/incr")
check "only its entries" test "$n_incr" -ge 2 -a \
	"$(grep -c ', date=' "$W/incr")" = "$n_incr" -a \
	$((n_incr + 2505)) = "$n_all"
check "the changed file in it, the unchanged one not" \
	test "$(grep -c "^$T/a, " "$W/incr")" = 1 -a \
	"$(grep -c "^$T/d/b, " "$W/incr")" = 0
check "counted" grep -qx "$n_incr objects found" "$W/incr"
check "naming the save time in the header" \
	grep -q "for savetime $INCR(" "$W/incr"
check "-t takes a date too" \
	"$BIN/nsrinfo" -s $S -t "@$INCR" "$C"
"$BIN/nsrinfo" -s $S -S "$SSID" -N "$T/a" -v "$C" >"$W/one" 2>&1
check "-S -N -v: one entry of one save set" grep -qx '1 objects found' \
	"$W/one"
check "verbose: size and ssid" \
	grep -q "^$T/a, date=$INCR .*, size=13, ssid=$SSID, file, mode=0644$" \
	"$W/one"

check "the full's entries came from a spill file" \
	grep -q "nsrindexd.*query of client '$C': 2505 results, 2505 of them in a spill file" \
	"$ROOT/logs/daemon.log"
printf 'cd %s\nversions a\nfind "f*"\nfind "f25*"\n' "$T" |
	"$BIN/recover" -s $S -c "$C" >"$W/vf" 2>&1
check "versions and find through the browser: exit 0" test $? -eq 0
check "versions of a: both, from the spill file" \
	grep -q '^2 version(s)$' "$W/vf"
sed -n '/^2 version(s)$/,/ object(s) found$/p' "$W/vf" >"$W/f1"
check "find f*: the 2,500 files, each once, counted" \
	test "$(grep -x "$T/many/f[0-9]*" "$W/f1" | sed 's|.*/||' | sort)" = \
	"$(ls "$T/many" | sort)" -a \
	"$(tail -1 "$W/f1")" = '2500 object(s) found'
check "find f25*: the 12 that match" \
	test "$(sed '1,/^2500 object(s) found$/d' "$W/vf" |
		grep -x "$T/many/f25[0-9]*" | sed 's|.*/f||' | sort -n |
		tr '\n' ' ')" = "25 250 251 252 253 254 255 256 257 258 259 2500 " -a \
	"$(tail -1 "$W/vf")" = '12 object(s) found'
check "no spill file left named in the index directory" \
	test -z "$(ls -A "$ROOT/index/$C" | grep -v '^catalog$\|^lock$\|^ss-[0-9]*\.rec$')"

"$BIN/nsrinfo" -s $S nosuchclient >"$W/e1" 2>&1
check "an unknown client exits 1" test $? -eq 1
check "naming it" grep -q "no file index for client 'nosuchclient'" "$W/e1"
"$BIN/nsrinfo" -s $S -t $((FULL - 7)) "$C" >"$W/e2" 2>&1
check "a save time no save set has exits 1" test $? -eq 1
check "saying so" grep -q "has the save time $((FULL - 7))" "$W/e2"
"$BIN/nsrinfo" -s $S -S 987654 "$C" >"$W/e3" 2>&1
check "an unknown ssid exits 1" test $? -eq 1
check "naming it" grep -q "no save set 987654 in the index" "$W/e3"
"$BIN/nsrinfo" -s $S >/dev/null 2>&1
check "no client is a usage error (2)" test $? -eq 2
"$BIN/nsrinfo" --help | grep -q '^usage: nsrinfo'
check "--help" test $? -eq 0
nsr_done
