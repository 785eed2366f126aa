#!/bin/bash
# 404-scanner-mmdb: a mover reports each save set it writes to nsrmmdbd
# (fragment and volume usage); a save set the media database does not know
# fails at its end with a message pointing to scanner -m; after the volume
# is deleted from the media database, scanner -m puts it and its fragments
# back exactly as the mover had reported them, and doing it again changes
# nothing.
. "$(dirname "$0")/lib.sh"
nsr_setup 404-scanner-mmdb
T=$BIN/mmdtest
H=127.0.0.1

nsr_start nsrexecd -s
nsr_wait_registered nsrsnmd
nsr_start nsrmmdbd
nsr_wait_registered nsrmmdbd

mkdir -p "$ROOT/aftd1"
head -c 1234567 /dev/urandom >"$ROOT/data1"
head -c 77777 /dev/urandom >"$ROOT/data2"

read -r P PID < <("$T" mover $H adv_file "$ROOT/aftd1" aftd1 0 $H)
check "a mover reporting to the media database" test -n "$P"
check "label MM001" "$T" label $H "$P" MM001 Default 32768
VOLID=$("$T" readlabel $H "$P" | awk '{print $5}')
check "the label has a volume id" grep -Eq '^[0-9a-f]{32}$' <<<"$VOLID"
check "the volume is entered in the media database" \
	"$T" mmdb-vol $H MM001 "$VOLID" Default adv_file

ST=1700000000
SSID=$("$T" mmdb-ss $H client1 /data1 $ST)
check "a save set is created in the media database" test -n "$SSID"
check "the mover writes it and records its fragment" \
	"$T" save $H "$P" "$SSID" client1 /data1 $ST <"$ROOT/data1"
frag=$("$T" mmdb-frags $H "$SSID")
check "the media database has one complete fragment of the right size" \
	grep -Eq "^$SSID $ST 0 1234567 [0-9]+ 0 0x8$" <<<"$frag"

out=$("$T" save $H "$P" 4000000000 client1 /unknown $ST <"$ROOT/data2" 2>&1)
rc=$?
check "a save set unknown to the media database fails at its end" test $rc -ne 0
check "and the message points to scanner -m" grep -q "scanner -m" <<<"$out"

check "the volume is deleted from the media database" "$T" mmdb-voldel $H MM001
check "and with it the fragment" test -z "$("$T" mmdb-frags $H "$SSID")"

out=$("$BIN/scanner" -m -S "$SSID" -s $H "$ROOT/aftd1" 2>&1)
rc=$?
check "scanner -m -S exits 0" test $rc -eq 0
check "scanner -m adds the volume" grep -q "volume MM001 added" <<<"$out"
check "and the fragment" grep -q "save set $SSID (client1:/data1): fragment 0 on volume MM001 added" <<<"$out"
check "the fragment is back as the mover reported it" \
	test "$("$T" mmdb-frags $H "$SSID")" = "$frag"
out=$("$BIN/scanner" -m -S "$SSID" -s $H "$ROOT/aftd1" 2>&1)
rc=$?
check "a second scanner -m exits 0" test $rc -eq 0
check "and adds nothing" test -z "$(grep added <<<"$out")"
check "the fragment is still there once" test "$("$T" mmdb-frags $H "$SSID")" = "$frag"

out=$("$BIN/scanner" -m -S 4000000000 -s $H "$ROOT/aftd1" 2>&1)
rc=$?
check "scanner -m re-creates a save set the database lost" test $rc -eq 0
check "under its own ssid" grep -q "save set 4000000000 .* re-created" <<<"$out"
check "mminfo shows it again" \
	bash -c "'$BIN/mminfo' -s $H -a -q ssid=4000000000 -r ssid,name 2>/dev/null | grep -q '^ *4000000000 '"
check "with its fragment on MM001" test -n "$("$T" mmdb-frags $H 4000000000)"
nsr_done
