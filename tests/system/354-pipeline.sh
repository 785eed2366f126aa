#!/bin/bash
# 354-pipeline: pipeline saves (save --pipe=NAME -- command) and their
# recover into a command (recover --pipe -- command).
#  - a deterministic generator's output (6 MB) saved as /PIPE/gen:
#    complete in mminfo, the read size and the command's end in the job
#    log; its index entry has the size known at the end, and so has the
#    one scanner -i rebuilds; recovered by save set id and by path into
#    sha256sum, the same sum as the generator's output; and into a file
#    by recover -d, the same bytes (the size from the unsized file's
#    FILE_END);
#  - --pipe-read bounds and the read size in the summary and job log;
#    save's own standard input (--pipe=NAME -); a file save's read size
#    in its job log too;
#  - a command that fails (exit 3, text on stderr): save exits 1 and
#    names the status, the save set is aborted (not complete, not
#    browsable), the job log has the status and the stderr text;
#  - a command killed by a signal: the same, with the signal;
#  - a command that cannot be run: nothing is saved;
#  - recover whose command fails exits with its status; a command that
#    cannot be run fails the recover.
. "$(dirname "$0")/lib.sh"
nsr_setup 354-pipeline
S=127.0.0.1
W=$ROOT/work
mkdir -p "$W/aftd1" "$W/out"
nsr_start_datazone
nsr_device aftd1 adv_file "$W/aftd1"
check "label" "$BIN/nsrmm" -s $S -q -l -y -b Default -f aftd1 Pipe.001

# The generator: 6 MB, deterministic, not all alike (no holes).
cat >"$W/gen.sh" <<'EOF'
#!/bin/bash
for i in $(seq 1 6); do
	head -c 1048576 /dev/zero | tr '\0' "$(printf "\\$(printf %o $((64 + i)))")"
	printf 'block %d\n' "$i"
done
EOF
chmod +x "$W/gen.sh"
want=$("$W/gen.sh" | sha256sum | awk '{print $1}')
size=$("$W/gen.sh" | wc -c)

# ssid_of NAME - the newest save set of NAME.
ssid_of() {
	"$BIN/mminfo" -s $S -a -q "name=$1" -ot -r ssid 2>/dev/null |
		awk '$1 ~ /^[0-9]+$/ {s = $1} END {print s}'
}

# joblog SSID - the job log of the save job of save set SSID.
joblog() {
	printf 'show ssids; completion status; job log\nprint type: save job\n' |
		"$BIN/jobquery" -s $S 2>&1 | grep -A3 "ssids: $1;"
}

# --- a pipeline save of a generator ------------------------------------
"$BIN/save" -s $S --pipe=/PIPE/gen -- "$W/gen.sh" >"$W/gen.out" 2>"$W/gen.err"
check "save --pipe exits 0" test $? -eq 0
check "and completes" grep -q "^completed savetime=" "$W/gen.out"
check "the summary gives the read size and the command's end" \
	grep -q "read size 64 KB; command .*gen.sh exited with status 0" \
	"$W/gen.out"
SSID=$(ssid_of /PIPE/gen)
check "mminfo knows /PIPE/gen" test -n "$SSID"
row=$("$BIN/mminfo" -s $S -q "ssid=${SSID:-0}" -r "ssid,sumflags,totalsize,nfiles" \
	2>/dev/null | awk '$1 ~ /^[0-9]+$/')
check "complete and browsable, one file ($row)" \
	grep -Eq "^ *[0-9]+ +cb .* 1$" <<<"$row"
log=$(joblog "$SSID")
check "the job log has the read size and the exit status ($log)" \
	grep -q "read size 64 KB; command .*gen.sh exited with status 0" <<<"$log"

CL=$("$BIN/mminfo" -s $S -q "ssid=${SSID:-0}" -r client 2>/dev/null | tail -1 |
	tr -d ' ')
check "the index entry has the size known at the end ($CL)" \
	grep -q "^$SSID $size /PIPE/gen$" \
	<("$BIN/mmdtest" ixfind $S "$CL" /PIPE/gen 2>&1)
out=$("$BIN/scanner" -i -S "$SSID" -s $S "$W/aftd1" 2>&1)
check "scanner -i indexes the save set again ($out)" \
	grep -q "save set $SSID .*: 1 index entries rebuilt" <<<"$out"
check "with the size from the unsized file's FILE_END" \
	grep -q "^$SSID $size /PIPE/gen$" \
	<("$BIN/mmdtest" ixfind $S "$CL" /PIPE/gen 2>&1)
got=$("$BIN/recover" -s $S -q -S "$SSID" --pipe -- sha256sum 2>"$W/r1.err" |
	awk '{print $1}')
check "recover -S --pipe into sha256sum: the generator's bytes" \
	test "$got" = "$want"
got=$("$BIN/recover" -s $S -q -a /PIPE/gen --pipe -- sha256sum 2>"$W/r2.err" |
	awk '{print $1}')
check "recover -a /PIPE/gen --pipe: the same ($(cat "$W/r2.err"))" \
	test "$got" = "$want"
check "recover -d makes the file" \
	"$BIN/recover" -s $S -q -S "$SSID" -d "$W/out"
check "of the right size (from FILE_END)" \
	test "$(stat -c %s "$W/out/PIPE/gen" 2>/dev/null)" = "$size"
check "with the right bytes" \
	test "$(sha256sum <"$W/out/PIPE/gen" | awk '{print $1}')" = "$want"
"$BIN/recover" -s $S -q -S "$SSID" --pipe -- sh -c 'cat >/dev/null; exit 5' \
	2>"$W/r3.err"
check "recover exits with its command's status (5)" test $? -eq 5
check "and says so" grep -q "exited with status 5" "$W/r3.err"
"$BIN/recover" -s $S -q -S "$SSID" --pipe -- no-such-command-354 \
	>/dev/null 2>"$W/r4.err"
check "recover into a command that cannot run fails" test $? -ne 0
check "and names it" grep -q "cannot run no-such-command-354" "$W/r4.err"

# --- read size, standard input ------------------------------------------
"$BIN/save" -s $S --pipe=/PIPE/gen --pipe-read=1K -- "$W/gen.sh" \
	>/dev/null 2>&1
check "--pipe-read below 4 KB is a usage error" test $? -eq 2
"$BIN/save" -s $S --pipe=PIPE/rel -- "$W/gen.sh" >/dev/null 2>&1
check "a relative pseudo-path is a usage error" test $? -eq 2
"$BIN/save" -s $S -l incr --pipe=/PIPE/gen -- "$W/gen.sh" >/dev/null 2>&1
check "an incremental pipeline save is a usage error" test $? -eq 2
"$BIN/save" -s $S --pipe=/PIPE/small --pipe-read=16K -N stdin-set - \
	<"$W/gen.sh" >"$W/stdin.out" 2>&1
check "save --pipe=NAME - saves the standard input" test $? -eq 0
check "with the read size asked for" grep -q "read size 16 KB" "$W/stdin.out"
SSID2=$(ssid_of stdin-set)
check "-N names the save set" test -n "$SSID2"
check "its job log has the read size" grep -q "read size 16 KB" \
	<<<"$(joblog "$SSID2")"
check "and it recovers" cmp "$W/gen.sh" \
	<("$BIN/recover" -s $S -q -S "${SSID2:-0}" --pipe -- cat 2>/dev/null)

# --- any save's job log has its read size ------------------------------
mkdir -p "$W/tree"
printf 'x\n' >"$W/tree/f"
NSR_READ_SIZE=128K "$BIN/save" -s $S -q "$W/tree" >/dev/null 2>&1
check "a file save" test $? -eq 0
check "its job log has its read size (NSR_READ_SIZE)" \
	grep -q "save completed; read size 128 KB" \
	<<<"$(joblog "$(ssid_of "$W/tree")")"

# --- a command that fails -----------------------------------------------
"$BIN/save" -s $S --pipe=/PIPE/fail -- sh -c \
	'head -c 300000 /dev/zero; echo "dump failed: disk on fire" >&2; exit 3' \
	>"$W/fail.out" 2>"$W/fail.err"
check "save of a failing command exits 1" test $? -eq 1
check "save shows the command's stderr" \
	grep -q "dump failed: disk on fire" "$W/fail.err"
check "and names the exit status" \
	grep -q "command sh exited with status 3" "$W/fail.err"
check "and says the save set is not complete" \
	grep -q "not complete" "$W/fail.err"
check "no completion line" test ! -s "$W/fail.out"
FS=$(ssid_of /PIPE/fail)
check "mminfo has the save set" test -n "$FS"
flags=$("$BIN/mminfo" -s $S -a -q "ssid=${FS:-0}" -r sumflags 2>/dev/null |
	tail -1 | tr -d ' ')
# sumflags: the fragment's part, then the status (a aborted, b browsable)
check "aborted: not complete, not browsable ($flags)" \
	test "${flags:1:1}" = a
log=$(joblog "$FS")
check "the job log has the exit status ($log)" \
	grep -q "exited with status 3" <<<"$log"
check "and the stderr text" grep -q "disk on fire" <<<"$log"
check "and the job failed" grep -q "completion status: failed" <<<"$log"

# --- a command killed by a signal ---------------------------------------
"$BIN/save" -s $S --pipe=/PIPE/killed -- sh -c \
	'head -c 100000 /dev/zero; kill -KILL $$' \
	>"$W/kill.out" 2>"$W/kill.err"
check "save of a killed command exits 1" test $? -eq 1
check "and names the signal" grep -q "killed by signal 9" "$W/kill.err"
KS=$(ssid_of /PIPE/killed)
flags=$("$BIN/mminfo" -s $S -a -q "ssid=${KS:-0}" -r sumflags 2>/dev/null |
	tail -1 | tr -d ' ')
check "that save set is aborted too ($flags)" test "${flags:1:1}" = a
check "the job log has the signal" grep -q "killed by signal 9" \
	<<<"$(joblog "$KS")"

# --- a command that cannot be run ---------------------------------------
"$BIN/save" -s $S --pipe=/PIPE/none -- no-such-command-354 \
	>"$W/none.out" 2>"$W/none.err"
check "save of a command that cannot run exits 1" test $? -eq 1
check "and says why" grep -q "cannot run no-such-command-354" "$W/none.err"

nsr_done
