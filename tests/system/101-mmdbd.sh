#!/bin/bash
# 101-mmdbd: nsrmmdbd serves the media database; records made through the
# client library come back from mminfo in NetWorker's layouts, compared
# with checked-in golden files; mistakes in queries and reports are
# pointed at; the daemon's own query parser and batching work; concurrent
# written-byte updates of one volume are never lost.
# After an intended change of a layout, NSR_GOLDEN_UPDATE=1 rewrites the
# golden files from the actual output; review the diff before committing.
. "$(dirname "$0")/lib.sh"
nsr_setup 101-mmdbd
export TZ=UTC
GOLDEN=${NSR_SRC:?}/tests/system/golden
T=$BIN/mmdb_testclnt
# Sanitizer reports of every program below land here (checked at the end).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$ROOT/asan"

nsr_start nsrexecd
# Query cursors idle for 2 s are ended (default 10 minutes).
NSR_TEST_MMDB_CURSOR_IDLE=2 nsr_start nsrmmdbd
check "nsrmmdbd is running" test -s "$ROOT/logs/nsrmmdbd.pid"
check "populate a datazone through the client library" "$T" populate

# golden NAME ARGS... - mminfo ARGS must print golden/mminfo-NAME.txt.
golden() {
	local name=$1; shift
	local out="$ROOT/mminfo-$name.out"
	if ! "$BIN/mminfo" "$@" >"$out" 2>&1; then
		fail "mminfo $* (exit status)"; cat "$out"; return
	fi
	if [ -n "${NSR_GOLDEN_UPDATE:-}" ]; then
		cp "$out" "$GOLDEN/mminfo-$name.txt"
	fi
	if diff -u "$GOLDEN/mminfo-$name.txt" "$out"; then
		ok "mminfo $* matches golden/mminfo-$name.txt"
	else
		fail "mminfo $* differs from golden/mminfo-$name.txt"
	fi
}

golden default-all -a -ot
golden verbose -av -oct -q 'client=db02'
golden media -m
golden media-notfull -a -r 'volume,%used,pool,location' -q '!full'
golden custom -r 'volume(12),client,name,level,totalsize' -ot \
	-q 'client=mail.example.com,client=app01' -q 'level=incr'
golden range -r 'client,name,savetime(22)' -ot \
	-q 'savetime>=06/04/2024,savetime<06/04/2024 06:00'
golden incomplete -av -q incomplete -r 'client,name,ssflags'
golden volume TAPE0043 -ot -r 'volume,client,name,sumsize'
golden size -ol -q 'totalsize>1GB' -r 'name,client,totalsize'
golden csv -ot -xc, -r 'client,name,level,totalsize' -N /etc
golden json -ot -xj -r 'client,name,totalsize,suspect' -c db02 -t '06/04/2024 12:00'
golden frags -V -ot -q 'client=db02,savetime<06/04/2024'
golden super -S -q 'ssid=14,ssid=18'
golden media-client -m -omR -q 'client=db02'

# What a user gets wrong.
out=$("$BIN/mminfo" -q 'clinet=db02' 2>&1); rc=$?
check "unknown attribute: exit 2" test $rc -eq 2
check "unknown attribute is named" grep -q "clinet" <<<"$out"
check "and pointed at with carets" grep -q '^  \^\^\^\^\^\^' <<<"$out"
out=$("$BIN/mminfo" -q 'savetime>=the day after' 2>&1); rc=$?
check "bad time: exit 2 and a message" test $rc -eq 2 -a -n "$out"
out=$("$BIN/mminfo" -r 'volume,bogus' 2>&1); rc=$?
check "unknown report attribute: exit 2" test $rc -eq 2
check "names it" grep -q "bogus" <<<"$out"
out=$("$BIN/mminfo" -o tz 2>&1); rc=$?
check "bad order letter: exit 2" test $rc -eq 2
out=$("$BIN/mminfo" -q 'client=nobody' 2>&1 >/dev/null); rc=$?
check "no match: exit 1" test $rc -eq 1
check "no match: NetWorker's message on stderr" \
	test "$out" = "mminfo: no matches found for the query"
out=$("$BIN/mminfo" 2>&1 >/dev/null); rc=$?
check "default report: only the last 24 hours (nothing here)" \
	test $rc -eq 1 -a "$out" = "mminfo: no matches found for the query"
check "add save sets completed 1 hour and 2 days ago" "$T" recent
out=$("$BIN/mminfo" 2>&1); rc=$?
check "default report shows the recent one only (exit $rc)" \
	test $rc -eq 0 -a "$(wc -l <<<"$out")" -eq 2
check "that is /recent" grep -q ' /recent$' <<<"$out"
check "-a shows the older one too" \
	test "$("$BIN/mminfo" -a -q 'client=web01.example.com,name=/older' | wc -l)" -eq 2
check "mminfo --help exits 0" "$BIN/mminfo" --help

# The daemon parses and streams by itself (any client, not just mminfo).
out=$("$T" query 'client=db02' 2>&1)
check "server-side query streams in batches: $out" \
	test "$out" = "10 rows in 2 batches"
out=$("$T" query '' 2>&1)
check "empty query matches every row: $out" test "$out" = "42 rows in 7 batches"
out=$("$T" query 'pool=Offsite' vol 2>&1)
check "volume query: $out" test "$out" = "1 rows in 1 batches"
# Many flag changes in one transaction (nsrim's MM_SS_FLAGS_MANY): two
# of one save set apply one after the other, a missing one is counted.
ss1=$("$T" get 1 2>&1)
f0=$(grep -o 'flags 0x[0-9a-f]*' <<<"$ss1" | cut -d' ' -f2)
out=$("$T" flags 1 0x4 0x2000 1 0x2008 0x2000 999999 0x8 0 2>&1)
check "flags-many: one save set missing: $out" test "$out" = "missing 1"
f1=$("$T" get 1 2>&1 | grep -o 'flags 0x[0-9a-f]*' | cut -d' ' -f2)
check "flags-many: both changes of ssid 1 held ($f0 -> $f1)" \
	test -n "$f0" -a "$((f1))" -eq "$(( (f0 | 0x4 | 0x8) & ~0x2000 ))"
# Volumes' retention times in one transaction (nsrim's
# MM_VOL_RETENT_MANY): a volume that is not there is counted, the others
# are set.
out=$("$T" retent DD01.001 1900000000 NO.SUCH.VOL 1900000001 2>&1)
check "retent-many: one volume missing: $(head -1 <<<"$out")" \
	test "$(head -1 <<<"$out")" = "missing 1"
check "retent-many: DD01.001's volretent set" \
	grep -qx "DD01.001 volretent 1900000000" <<<"$out"
# Marking a volume recyclable (nsrim's MM_VOL_WRITTEN) is refused while
# it holds a save set that is not: a copy recorded on it after nsrim read
# the media database must never be destroyed by its relabel.  Once all
# of them are, it is marked.
out=$("$T" recyclable DD01.001 2>&1); rc=$?
check "DD01.001 with live save sets is not marked recyclable (exit $rc)" \
	test $rc -ne 0
check "... naming one: $out" grep -Eq \
	"^refused: volume DD01.001 not marked recyclable: it holds save set [0-9]+, which is not$" \
	<<<"$out"
on=$("$BIN/mminfo" -a -q volume=DD01.001 -r ssid 2>/dev/null |
	awk '$1 ~ /^[0-9]+$/ {print $1, 8, 0}' | sort -u)
"$T" flags $on >/dev/null 2>&1
out=$("$T" recyclable DD01.001 2>&1)
check "with all of them recyclable it is marked ($out)" test "$out" = marked
out=$("$BIN/mminfo" -m -q volume=DD01.001,recyclable 2>&1)
echo "$out" | sed "s/^/# mminfo: /"
check "and mminfo shows it recyclable" grep -q "DD01.001" <<<"$out"
out=$("$T" query 'client=x,=5' 2>&1); rc=$?
check "server-side syntax error fails" test $rc -ne 0
check "and the message shows the query and column: $out" \
	grep -q 'query "client=x,=5": column 10: ' <<<"$out"
out=$("$T" query 'client=db02' vol 2>&1); rc=$?
check "save set attribute in a volume query is refused" \
	test $rc -ne 0 -a -n "$out"

# MM_VOL_WRITTEN is one read-modify-write: 4 x 100 concurrent updates.
before=$("$T" written DD01.001 0 1)
after=$("$T" written DD01.001 100 4)
check "concurrent written-byte updates all counted ($before + 400 = $after)" \
	test $((before + 400)) -eq "$after"

# Garbage on nsrmmdbd's port costs only that connection.
port=$(grep -o 'registered nsrmmdbd (pid [0-9]*): program 0x20390107 version 1 on port [0-9]*' \
	"$ROOT/logs/daemon.log" | tail -1 | grep -o '[0-9]*$')
for seed in 1 2 3; do
	head -c 20000 /dev/urandom >"$ROOT/garbage"
	timeout 5 bash -c "cat '$ROOT/garbage' >/dev/tcp/127.0.0.1/$port" 2>/dev/null
	# A record mark announcing 2 GB, then nothing.
	timeout 5 bash -c "printf '\\xff\\xff\\xff\\xff' >/dev/tcp/127.0.0.1/$port" 2>/dev/null
done
check "nsrmmdbd survives garbage on port $port" \
	test "$("$BIN/mminfo" -a -r ssid -q ssid=3 | tail -1 | tr -d ' ')" = 3

# Save sets created in one transaction (nsrd's batches of starts):
# distinct ids, each stored under its own name, in progress; and the
# database stays consistent (checked next).
out=$("$T" create-many 64 2>&1)
check "create-many: 64 save sets made" test "$(grep -c '^made ' <<<"$out")" = 64
check "create-many: 64 distinct ssids" \
	test "$(awk '/^made / {print $2}' <<<"$out" | sort -u | wc -l)" = 64
ok=1 inprog=1
for n in 1 33 64; do
	id=$(awk -v want="/many/$n" '$1 == "made" && $4 == want {print $2}' <<<"$out")
	got=$("$T" get "$id" 2>&1)
	grep -q "^ssid $id client many name /many/$n " <<<"$got" || ok=0
	f=$(grep -o 'flags 0x[0-9a-f]*' <<<"$got" | cut -d' ' -f2)
	[ -n "$f" ] && [ $((f & 0x200)) -ne 0 ] || inprog=0
done
check "create-many: each save set is stored under its own name" test $ok = 1
check "create-many: in progress, as created" test $inprog = 1
out=$("$T" create-many 65 2>&1); rc=$?
check "create-many: 65 at once refused before sending (exit $rc): $out" \
	test $rc = 1 -a "$(grep -c '^made ' <<<"$out")" = 0

# Save sets deleted in one transaction (nsrd's MM_SS_DELETE_MANY for a
# relabeled or deleted volume): two on the AFTD DD01.001 take both their
# bytes off its written figure (one volume record replaced once, by the
# sum), a repeated and a missing ssid are counted, not failures; more
# than a batch (1,000 missing ids, then the 64 of create-many, 36
# missing more) goes in two, each deleting some.
set -- $("$BIN/mminfo" -a -q volume=DD01.001 -r ssid |
	awk '$1 ~ /^[0-9]+$/ {print $1}' | head -2)
s1=$("$T" get "$1" | sed -n 's/.* size \([0-9]*\) .*/\1/p')
s2=$("$T" get "$2" | sed -n 's/.* size \([0-9]*\) .*/\1/p')
w0=$("$T" written DD01.001 0 1)
out=$("$T" delete "$1" "$2" "$1" 999999 2>&1)
check "delete-many: two of four deleted: $out" test "$out" = "deleted 2 of 4"
w1=$("$T" written DD01.001 0 1)
check "delete-many: DD01.001's written figure lowered by both ($w0 - $s1 - $s2 = $w1)" \
	test -n "$s2" -a $((w0 - s1 - s2)) -eq "$w1"
check "delete-many: they are gone" \
	test "$("$BIN/mminfo" -a -q "ssid=$1" 2>&1 | grep -c '^ *[0-9]')" = 0
many=$("$BIN/mminfo" -a -q client=many -r ssid | awk '$1 ~ /^[0-9]+$/ {print $1}')
out=$("$T" delete $(seq 1000000 1000999) $many $(seq 1001000 1001035) 2>&1)
check "delete-many: 64 of 1,100 deleted in two batches: $out" \
	test "$out" = "deleted 64 of 1100"
check "delete-many: one transaction per batch (and one before)" \
	test "$(grep -c 'save set(s) deleted by' "$ROOT/logs/daemon.log")" = 3
out=$("$T" check 2>&1)
check "MM_CHECK: the database is consistent" grep -q "^consistent" <<<"$out"

# A cursor left idle is ended (it would hold back log cleanup) and the
# client is told why.
"$T" hold '' 4 >"$ROOT/idle" 2>&1; rc=$?
check "an idle cursor is ended (exit $rc): $(tail -1 "$ROOT/idle")" \
	grep -q "ended after 2 s without a request" "$ROOT/idle"
check "and the daemon logs it" grep -q "query of .* ended after 2 s" "$ROOT/logs/daemon.log"

# An orderly stop with a client holding an open cursor: the stop ends
# the cursor before closing the database, nothing leaks, the client is
# told.
"$T" hold '' 4 >"$ROOT/hold" 2>&1 &
holder=$!
for i in $(seq 1 50); do grep -q holding "$ROOT/hold" && break; sleep 0.1; done
check "a client holds a cursor open" grep -q "^holding 7" "$ROOT/hold"
pid=$(cat "$ROOT/logs/nsrmmdbd.pid")
kill -TERM "$pid"
for i in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
check "nsrmmdbd stopped on SIGTERM" grep -q "nsrmmdbd\[$pid\]: info: stopped" "$ROOT/logs/daemon.log"
wait $holder; rc=$?
check "the holding client's next batch fails (exit $rc): $(tail -1 "$ROOT/hold")" \
	test $rc -eq 1

# With nsrmmdbd gone, mminfo says so promptly, naming the daemon and host.
start=$SECONDS
out=$("$BIN/mminfo" -a 2>&1); rc=$?
check "mminfo without nsrmmdbd fails (exit $rc) within 10 s" \
	test $rc -eq 1 -a $((SECONDS - start)) -le 10
check "naming the daemon and host: $out" grep -qE "nsrmmdbd.*(127.0.0.1|localhost)" <<<"$out"

# Every option of --help is documented in the man pages.
for prog in mminfo:man1/mminfo.1 nsrmmdbd:man8/nsrmmdbd.8; do
	page=$NSR_SRC/man/${prog#*:}
	missing=""
	for opt in $("$BIN/${prog%%:*}" --help 2>&1 | grep -o '^  -[a-zA-Z]' | tr -d ' -'); do
		grep -q "^\.It Fl $opt\b" "$page" || missing="$missing -$opt"
	done
	check "${prog%%:*}: every --help option is in its man page${missing:+ (missing:$missing)}" \
		test -z "$missing"
done
check "no sanitizer reports" test -z "$(ls "$ROOT"/asan.* 2>/dev/null)"
nsr_done
