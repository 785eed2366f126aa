#!/bin/bash
# 480-bootstrap-dr: a datazone with two clients' backups (a full and an
# incr of one, a full of the other) and a bootstrap (nsrbootstrap), listed
# by mminfo -B; then the server is lost: every daemon stopped, a brand-new
# root.  nsrdr on it from the bootstrap's volume; nsrd starts, and mminfo
# -avot, mminfo -m (the volumes' written figures, with the bootstrap's
# bytes), nsrinfo of both clients and a browse with recover equal what they
# were; a file recovers.  The bootstrap is encrypted with the datazone
# pass phrase (its volume holds neither the CA's private key nor the
# pass phrase in clear): nsrdr without -P, or with another pass phrase,
# fails saying so.  Refusals: nsrdr into a root that is not empty
# (exit 3) and from a volume without a bootstrap (exit 1, saying what to
# do).  Last, the server is lost again and rebuilt from the volumes alone
# (a new datazone, scanner -m -i): nsrinfo and the browse equal what they
# were, mminfo -avot too but for the flags (cS: scanned in), and the
# bootstraps got no index entries.
. "$(dirname "$0")/lib.sh"
nsr_setup 480-bootstrap-dr
S=127.0.0.1
W=$(mktemp -d "${NSR_TEST_TMPDIR:-/tmp}/480-work.XXXXXX")
OLD=$ROOT
C1=$(hostname)
C2=drclient2
nsr_start_aftd_datazone
mkdir -p "$W/aftd2"
nsr_device aftd2 adv_file "$W/aftd2"
printf 'create type: NSR pool; name: Other\n' |
	"$BIN/nsradmin" -s $S -i - >/dev/null
check "label Other.001" "$BIN/nsrmm" -s $S -q -l -y -b Other -f aftd2 \
	Other.001

mkdir -p "$W/t1/d" "$W/t2"
printf 'one\n' >"$W/t1/a"
printf 'two\n' >"$W/t1/d/b"
head -c 300000 /dev/urandom >"$W/t1/d/blob"
printf 'three\n' >"$W/t2/c"
check "client 1: full" "$BIN/save" -s $S -q -l full "$W/t1"
sleep 1.1
printf 'one, changed\n' >"$W/t1/a"
printf 'new\n' >"$W/t1/d/new"
check "client 1: incr" "$BIN/save" -s $S -q -l incr "$W/t1"
check "client 2: full" "$BIN/save" -s $S -q -c $C2 -l full "$W/t2"
check "a save to the other pool" "$BIN/save" -s $S -q -b Other "$W/t2"

"$BIN/nsrdr" -R "$W/empty" -d "$W/aftd1" >"$W/dr0.out" 2>&1
rc=$?
check "nsrdr before any bootstrap: exit 1 (got $rc)" test $rc = 1
check "it says the volume holds no bootstrap" \
	grep -q "holds no whole bootstrap save set" "$W/dr0.out"

# A datazone pass phrase is set: the bootstrap is encrypted with it.
printf '. type: NSR\nupdate datazone pass phrase: dr phrase one\n' |
	"$BIN/nsradmin" -s $S -i - >"$W/phrase.out" 2>&1
check "set the datazone pass phrase" test $? = 0
printf 'dr phrase one\n' >"$W/phrase"
printf 'not the phrase\n' >"$W/wrong"
"$BIN/nsrbootstrap" -s $S >"$W/boot.out" 2>&1
rc=$?
check "nsrbootstrap: exit 0 (got $rc)" test $rc = 0
check "it says the bootstrap is encrypted" \
	grep -q "encrypted with the datazone pass phrase" "$W/boot.out"
check "the volume holds no private key in clear" \
	test "$(cat "$W"/aftd1/* 2>/dev/null | grep -c 'PRIVATE KEY')" = 0
check "nor the pass phrase" \
	test "$(cat "$W"/aftd1/* 2>/dev/null | grep -c 'dr phrase one')" = 0
check "it names the save set" grep -q "bootstrap save set [0-9]* of" \
	"$W/boot.out"
BOOT=$(sed -n 's/.*bootstrap save set \([0-9]*\) of.*/\1/p' "$W/boot.out")
"$BIN/mminfo" -s $S -B >"$W/mmB.out" 2>&1
check "mminfo -B lists one bootstrap" \
	test "$(grep -c ' full .*Disk.001' "$W/mmB.out")" = 1
check "with NetWorker's header" grep -q '^ *date .*level .*ssid .*file' \
	"$W/mmB.out"
check "the staging directory is gone" test ! -e "$OLD/bootstrap"

snap() {
	"$BIN/mminfo" -s $S -avot >"$W/$1.mminfo" 2>&1
	"$BIN/mminfo" -s $S -m >"$W/$1.media" 2>&1
	"$BIN/nsrinfo" -s $S "$C1" >"$W/$1.info1" 2>&1
	"$BIN/nsrinfo" -s $S "$C2" >"$W/$1.info2" 2>&1
	printf 'cd %s\nls\nversions a\ncd d\nls\n' "$W/t1" |
		"$BIN/recover" -s $S -c "$C1" >"$W/$1.browse" 2>&1
}
# same A B WHEN WHAT... - each snapshot part WHAT of A equals B's.
same() {
	local a=$1 b=$2 when=$3 f
	shift 3
	for f in "$@"; do
		if cmp -s "$W/$a.$f" "$W/$b.$f"; then
			ok "$f $when equals before"
		else
			fail "$f $when equals before"
			diff "$W/$a.$f" "$W/$b.$f" | head -20 | sed 's/^/# /'
		fi
	done
}
snap before
check "mminfo -avot lists 5 save sets, the bootstrap's complete, not browsable" \
	test "$(awk 'NR > 1' "$W/before.mminfo" | wc -l)" = 5 -a \
	"$(grep -c " $C1 .* cr  full   bootstrap\$" "$W/before.mminfo")" = 1
check "nsrinfo lists client 2's file" grep -q "^$W/t2/c, " \
	"$W/before.info2"

# The loss: stop everything, forget the old root.
nsr_stop_all

ROOT=$(mktemp -d "${NSR_TEST_TMPDIR:-/tmp}/480-new.XXXXXX")
export NSR_ROOT=$ROOT
mkdir -p "$ROOT/index/x"
"$BIN/nsrdr" -R "$ROOT" -d "$W/aftd1" >"$W/dr1.out" 2>&1
rc=$?
check "nsrdr into a root that is not empty: exit 3 (got $rc)" test $rc = 3
check "it says what is there" grep -q "client file indexes" "$W/dr1.out"
rm -rf "$ROOT/index"

"$BIN/nsrdr" -R "$ROOT" -d "$W/aftd2" >"$W/dr2.out" 2>&1
rc=$?
check "nsrdr from a volume without a bootstrap: exit 1 (got $rc)" \
	test $rc = 1
check "it says so and what to do" grep -q "scanner -m -i" "$W/dr2.out"

"$BIN/nsrdr" -l -d "$W/aftd1" >"$W/list.out" 2>&1
check "nsrdr -l lists the bootstrap, whole: exit $?" \
	grep -q "ssid $BOOT  client $C1  whole\$" "$W/list.out"
"$BIN/nsrdr" -R "$ROOT" -d "$W/aftd1" >"$W/dr-nokey.out" 2>&1
rc=$?
check "nsrdr without the pass phrase: exit 1 (got $rc)" test $rc = 1
check "it says to give the pass phrase" \
	grep -q "encrypted with a datazone pass phrase .*nsrdr -P FILE" \
	"$W/dr-nokey.out"
"$BIN/nsrdr" -R "$ROOT" -d "$W/aftd1" -P "$W/nosuchfile" >"$W/dr-nofile.out" 2>&1
rc=$?
check "nsrdr -P with a file that is not there: exit 1 (got $rc)" test $rc = 1
check "naming the file" grep -q "cannot read the pass phrase file $W/nosuchfile" \
	"$W/dr-nofile.out"
"$BIN/nsrdr" -R "$ROOT" -d "$W/aftd1" -P "$W/wrong" >"$W/dr-wrong.out" 2>&1
rc=$?
check "nsrdr with another pass phrase: exit 1 (got $rc)" test $rc = 1
check "it says so" grep -q "other than the one given" "$W/dr-wrong.out"
"$BIN/nsrdr" -R "$ROOT" -d "$W/aftd1" -P "$W/phrase" >"$W/dr.out" 2>&1
rc=$?
check "nsrdr from the bootstrap volume with -P: exit 0 (got $rc)" \
	test $rc = 0
[ $rc = 0 ] || sed 's/^/# /' "$W/dr.out"
check "the old root's CA came back" cmp "$OLD/tls/ca.pem" "$ROOT/tls/ca.pem"

nsr_start_datazone
snap after
same before after "after the recovery" mminfo media info1 info2 browse
"$BIN/recover" -s $S -q -a -d "$W/r1" "$W/t1" >"$W/rec.out" 2>&1
check "recover -a of client 1's tree after the recovery" test $? = 0
check "it is the tree as saved" "$BIN/nsrtreecmp" "$W/t1" "$W/r1$W/t1"
"$BIN/mminfo" -s $S -B >"$W/mmB2.out" 2>&1
check "mminfo -B lists the bootstrap after the recovery" \
	cmp "$W/mmB.out" "$W/mmB2.out"
check "a new bootstrap on the recovered server" \
	"$BIN/nsrbootstrap" -q -s $S
snap before2

# Lost again, and this time no bootstrap is used: a new root, a new
# datazone (its own CA), the devices, scanner -m -i on each volume.
nsr_stop_all
DR=$ROOT
ROOT=$(mktemp -d "${NSR_TEST_TMPDIR:-/tmp}/480-vol.XXXXXX")
export NSR_ROOT=$ROOT
nsr_start_datazone
nsr_device aftd1 adv_file "$W/aftd1"
nsr_device aftd2 adv_file "$W/aftd2"
check "scanner -m -i on the bootstrap volume" \
	"$BIN/scanner" -q -m -i -s $S "$W/aftd1"
check "scanner -m -i on the other volume" \
	"$BIN/scanner" -q -m -i -s $S "$W/aftd2"
snap vol
same before2 vol "from the volumes alone" info1 info2 browse
# mminfo: the same, but every save set's flags say "scanned in" (cS)
nofl() { awk '{ $9 = "-"; print }' "$1"; }  # size is two fields
check "mminfo -avot from the volumes alone: the same but the flags" \
	cmp <(nofl "$W/before2.mminfo") <(nofl "$W/vol.mminfo")
check "... which are cS for all 6 save sets" \
	test "$(awk 'NR > 1 && $9 == "cS"' "$W/vol.mminfo" | wc -l)" = 6
if [ "$FAILED" = 0 ] && [ -z "${NSR_KEEP:-}" ]; then
	rm -rf "$W" "$OLD" "$DR"
fi
nsr_done
