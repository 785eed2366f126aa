#!/bin/bash
# 366-encrypt: encryption at rest.  save --encrypt without a datazone
# pass phrase fails before a save set is made; with one, an encrypted and
# compressed save set recovers identical, its names browse (mminfo,
# nsrinfo) without the key, and the AFTD holds neither the plaintext nor
# the uncompressed size.  The pass phrase changes: the old save set still
# recovers (nsrd kept the old pass phrase in res/passphrases, mode 0600),
# the new one too.  The old pass phrase removed from that file: recover
# of the old save set fails cleanly (each file named, "cannot decrypt:
# key ... unknown", nothing written, exit non-zero); the new one still
# recovers.  A save with parallel save streams and an incr after it,
# encrypted, recover -a to the tree as it is; a striped save, encrypted;
# a pipeline save, encrypted, recovered into a command.  Last, a client
# resource with "aes encryption: Yes" and "compression: Yes" makes a save
# without options encrypted; the bootstrap is encrypted too, with the
# datazone pass phrase (nsrdr -P), whatever the client resource says.
. "$(dirname "$0")/lib.sh"
nsr_setup 366-encrypt
S=127.0.0.1
W=$ROOT/work
T=$W/tree
T2=$W/tree2
nsr_start_aftd_datazone
C=$(hostname)
MARK=PLAINTEXT-MARKER-366

# --- the trees: compressible text with a marker, random data, small files
mkdir -p "$T/d" "$T2"
for i in $(seq 1 200000); do echo "$MARK line $i of the encrypted tree"; done >"$T/text"
head -c 3000000 /dev/urandom >"$T/random.bin"
printf '%s small\n' "$MARK" >"$T/d/small"
: >"$T/d/empty"
truncate -s 3M "$T/sparse"; printf '%s tail' "$MARK" >>"$T/sparse"
ln -s text "$T/link"
printf '%s second tree\n' "$MARK" >"$T2/second"
text_size=$(stat -c %s "$T/text")

# --- no pass phrase: a clear refusal, no save set ----------------------
"$BIN/save" -s $S --encrypt "$T" >"$W/save0.out" 2>&1
check "save --encrypt without a pass phrase fails" test $? -ne 0
check "it says to set the datazone pass phrase" \
	grep -q "no datazone pass phrase is set" "$W/save0.out"
n=$("$BIN/mminfo" -s $S -a -q "name=$T" -r ssid 2>/dev/null |
	grep -c '^ *[0-9]')
check "and made no save set" test "$n" -eq 0
expect_fail "save --compress=10 is refused" "$BIN/save" -s $S --compress=10 "$T"

set_phrase() {
	printf '. type: NSR\nupdate datazone pass phrase: %s\n' "$1" |
		"$BIN/nsradmin" -s $S -i - >"$W/nsradmin.out" 2>&1
}
check "set the datazone pass phrase" set_phrase "first pass phrase"

# --- an encrypted, compressed save set ---------------------------------
"$BIN/save" -s $S --encrypt --compress "$T" >"$W/save1.out" 2>&1
check "save --encrypt --compress exits 0" test $? -eq 0
SS1=$("$BIN/mminfo" -s $S -a -q "name=$T" -r ssid 2>/dev/null |
	awk '$1 ~ /^[0-9]+$/ {print $1; exit}')
check "mminfo lists the save set" test -n "$SS1"
vol_bytes=$(du -sb "$W/aftd1" | awk '{print $1}')
check "the AFTD holds less than the text alone ($vol_bytes < $text_size)" \
	test "$vol_bytes" -lt "$text_size"
check "the AFTD does not hold the plaintext" \
	test "$(grep -rac "$MARK" "$W/aftd1" | awk -F: '{s += $NF} END {print s + 0}')" -eq 0
"$BIN/nsrinfo" -s $S "$C" >"$W/nsrinfo.out" 2>&1
check "nsrinfo browses the names" grep -q "$T/d/small" "$W/nsrinfo.out"
check "recover -a gives the tree back identical" recovers_identical "$T"
check "recover -S too" recovers_identical "$T" -S "$SS1"

# --- the pass phrase changes -------------------------------------------
check "change the datazone pass phrase" set_phrase "second pass phrase"
"$BIN/save" -s $S --encrypt "$T2" >"$W/save2.out" 2>&1
check "save --encrypt with the new pass phrase exits 0" test $? -eq 0
SS2=$("$BIN/mminfo" -s $S -a -q "name=$T2" -r ssid 2>/dev/null |
	awk '$1 ~ /^[0-9]+$/ {print $1; exit}')
check "the old save set still recovers" recovers_identical "$T" -S "$SS1"
check "the new one recovers" recovers_identical "$T2" -S "$SS2"
P=$ROOT/res/passphrases
check "nsrd keeps both pass phrases" \
	test "$(grep -c 'pass phrase' "$P")" -eq 2
check "in a file of mode 0600" test "$(stat -c %a "$P")" = 600

# --- the old pass phrase removed: a clean failure ------------------------
sed -i '/^first pass phrase$/d' "$P"
rm -rf "$W/r3"
mkdir -p "$W/r3"
"$BIN/recover" -s $S -f -d "$W/r3" -S "$SS1" >"$W/rec3.out" 2>&1
check "recover of the old save set exits non-zero" test $? -ne 0
check "it names the key it lacks" \
	grep -q "cannot decrypt: key [0-9a-f]\{16\} unknown (was the datazone pass phrase changed and the old one removed?)" \
	"$W/rec3.out"
check "it names the files" grep -q "$T/d/small.*cannot decrypt" "$W/rec3.out"
check "no file with data was written" \
	test -z "$(find "$W/r3" -type f -size +0 -print)"
check "nothing of the plaintext either" \
	test "$(grep -rac "$MARK" "$W/r3" | awk -F: '{s += $NF} END {print s + 0}')" -eq 0
check "the new save set still recovers" recovers_identical "$T2" -S "$SS2"

# --- parallel save streams and levels, encrypted --------------------------
T4=$W/tree4
mkdir -p "$T4/a" "$T4/b"
for d in a b; do
	for i in 1 2 3; do
		for j in $(seq 1 3000); do echo "$MARK-4 $d$i $j"; done >"$T4/$d/f$i"
	done
done
"$BIN/save" -s $S --pss=2 --encrypt -l full "$T4" >"$W/save-pss.out" 2>&1
check "save --pss=2 --encrypt exits 0" test $? -eq 0
sleep 1.1
echo "$MARK-4 changed" >>"$T4/b/f2"
"$BIN/save" -s $S --encrypt -l incr "$T4" >"$W/save-incr.out" 2>&1
check "an encrypted incr exits 0" test $? -eq 0
check "the AFTD holds none of their data in clear" \
	test "$(grep -rac "$MARK-4" "$W/aftd1" | awk -F: '{s += $NF} END {print s + 0}')" -eq 0
check "recover -a gives the tree as it is now" recovers_identical "$T4"

"$BIN/save" -s $S --stripes=4 --encrypt -N striped "$T4" >"$W/save-stripe.out" 2>&1
check "save --stripes=4 --encrypt exits 0" test $? -eq 0
SS4=$("$BIN/mminfo" -s $S -a -q "name=striped" -r ssid 2>/dev/null |
	awk '$1 ~ /^[0-9]+$/ {print $1; exit}')
check "the striped save set recovers identical" recovers_identical "$T4" -S "$SS4"

# --- a pipeline save (data of unknown size), encrypted and compressed -----
"$BIN/save" -s $S --encrypt --compress --pipe=/PIPE/enc366 -- cat "$T/text" \
	>"$W/save-pipe.out" 2>&1
check "save --pipe --encrypt --compress exits 0" test $? -eq 0
"$BIN/recover" -s $S -q -a /PIPE/enc366 --pipe -- sh -c "cat >'$W/pipe.out'" \
	>"$W/rec-pipe.out" 2>&1
check "recover --pipe gives its bytes back" cmp -s "$T/text" "$W/pipe.out"

# --- saves without --encrypt are as before (and the check above sees
# plaintext where there is some) -------------------------------------------
"$BIN/save" -s $S -N plain "$T2" >"$W/save4.out" 2>&1
check "a plain save exits 0" test $? -eq 0
check "whose data is on the AFTD in clear" grep -rqa "$MARK second" "$W/aftd1"

# --- the client resource asks for it: every save of the client -----------
T3=$W/tree3
mkdir -p "$T3"
for i in $(seq 1 20000); do echo "$MARK-3 line $i"; done >"$T3/text3"
printf 'create type: NSR client; name: %s; aes encryption: Yes; compression: Yes\n' "$C" |
	"$BIN/nsradmin" -s $S -i - >"$W/client.out" 2>&1
check "an NSR client with aes encryption and compression" \
	grep -q "created resource" "$W/client.out"
"$BIN/save" -s $S "$T3" >"$W/save5.out" 2>&1
check "a save without options exits 0" test $? -eq 0
check "its data is not on the AFTD in clear" \
	test "$(grep -rac "$MARK-3" "$W/aftd1" | awk -F: '{s += $NF} END {print s + 0}')" -eq 0
check "and recovers identical" recovers_identical "$T3"
# a bootstrap is encrypted with the datazone pass phrase (nsrdr -P
# needs it), whatever the client resource says: its resources, this
# client's among them, are not on the volume in clear
"$BIN/nsrbootstrap" -s $S >"$W/boot.out" 2>&1
check "nsrbootstrap exits 0" test $? -eq 0
check "saying it is encrypted" \
	grep -q "encrypted with the datazone pass phrase" "$W/boot.out"
check "the bootstrap's data is not in clear" \
	test -z "$(grep -rla "aes encryption: Yes" "$W/aftd1")"
nsr_done
