#!/bin/bash
# 352-test-directives: the performance test directives of save.
#  - bigasm (save -B SIZE [path ...]): a file of SIZE bytes made in memory
#    goes client -> mover -> volume, nothing read from disk; the save set
#    is complete, recovers as a file of that size whose every megabyte
#    begins with its number, two paths give two files, a bad size is a
#    usage error (exit 2).
#  - the read test (save -n, uasm-style): every file read as a save would,
#    nothing recorded, the rate reported;
#  - live progress on a terminal only.
. "$(dirname "$0")/lib.sh"
nsr_setup 352-test-directives
S=127.0.0.1
W=$ROOT/work
mkdir -p "$W/aftd1" "$W/out" "$W/tree/d"
nsr_start_datazone
nsr_device aftd1 adv_file "$W/aftd1"
check "label" "$BIN/nsrmm" -s $S -q -l -y -b Default -f aftd1 Disk.001

out=$("$BIN/save" -s $S -B 20M 2>&1); rc=$?
check "save -B 20M exits 0" test $rc -eq 0
check "and completes" grep -q "^completed savetime=" <<<"$out"
row=$("$BIN/mminfo" -s $S -q "name=/bigasm" -r "ssid,sumflags,totalsize" 2>/dev/null |
	awk '$1 ~ /^[0-9]+$/')
SSID=$(awk '{print $1}' <<<"$row")
check "mminfo: save set /bigasm complete ($row)" grep -Eq "^ *[0-9]+ +c[br]" <<<"$row"
check "recover it" "$BIN/recover" -s $S -q -S "$SSID" -d "$W/out"
check "a file of 20 MiB" test "$(stat -c %s "$W/out/bigasm" 2>/dev/null)" -eq 20971520
mb7=$(od -An -tu8 -j $((7 * 1048576)) -N 8 "$W/out/bigasm" | tr -d ' ')
mb19=$(od -An -tu8 -j $((19 * 1048576)) -N 8 "$W/out/bigasm" | tr -d ' ')
check "every megabyte begins with its number (7: $mb7, 19: $mb19)" \
	test "$mb7" = 7 -a "$mb19" = 19
zeros=$(head -c 1048576 "$W/out/bigasm" | tr -d '\0' | wc -c)
check "and is not zeros ($zeros non-zero bytes in the first MB)" \
	test "$zeros" -gt 1000000
out=$("$BIN/save" -s $S -q -B 1M -N twofiles /big/a /big/b 2>&1); rc=$?
check "save -B 1M with two paths exits 0" test $rc -eq 0
SSID2=$("$BIN/mminfo" -s $S -q "name=twofiles" -r ssid 2>/dev/null |
	awk '$1 ~ /^[0-9]+$/ {print $1}')
check "recover it" "$BIN/recover" -s $S -q -S "$SSID2" -d "$W/out2"
check "two files of 1 MiB" test "$(stat -c %s "$W/out2/big/a" "$W/out2/big/b" |
	tr '\n' ' ')" = "1048576 1048576 "
"$BIN/save" -s $S -B lots >/dev/null 2>&1
check "save -B lots is a usage error" test $? -eq 2

# On a terminal (a pseudo-terminal made by script(1)) save shows its
# progress in place; into a file it shows none.
if command -v script >/dev/null; then
	script -qec "$BIN/save -s $S -B 300M -N progress /p" /dev/null \
		>"$W/tty.out" 2>&1
	check "on a terminal: a progress line (files, size, rate)" \
		grep -Eq "save: 1 files  [0-9]+ [KMG]B  [0-9]+ [KMG]B/s  [0-9]+ s" \
		"$W/tty.out"
	check "then the summary" grep -q "save: progress .* level manual" \
		"$W/tty.out"
else
	echo "# script(1) missing: no pseudo-terminal for the progress check"
fi
"$BIN/save" -s $S -B 50M -N noprogress /p >"$W/notty.out" 2>&1
check "not on a terminal: no progress line" \
	test -z "$(grep "files .*/s .* s  *\$" "$W/notty.out")"

head -c 3000000 /dev/urandom >"$W/tree/d/r"
seq 1 100000 >"$W/tree/n"
before=$("$BIN/mminfo" -s $S -r ssid 2>/dev/null | awk '$1 ~ /^[0-9]+$/' | wc -l)
out=$("$BIN/save" -s $S -n "$W/tree" 2>&1); rc=$?
after=$("$BIN/mminfo" -s $S -r ssid 2>/dev/null | awk '$1 ~ /^[0-9]+$/' | wc -l)
check "save -n exits 0" test $rc -eq 0
check "and reports the read test with a rate" \
	grep -Eq "^save: $W/tree .* 4 files .* s .*/s  read size [0-9]+ KB at the end \(read test: nothing saved, -n\)" <<<"$out"
check "and records nothing ($before, $after save sets)" test "$before" = "$after"
nsr_done
