#!/bin/bash
# 361-recover-interactive: the recover> browser.  A full and an incr of a
# tree; then recover without -a/-S, driven through piped standard input
# and through a pseudo-terminal (tests/clients/ptydrive: line editing,
# history, ^C): cd, ls, pwd, versions, add, delete, list, changetime,
# relocate, force, recover into a destination; the recovered trees are
# identical to the tree of their moment (nsrtreecmp).  Unknown commands
# and paths are named; a failed recover prints no completion line and
# sets the exit status.  Then the overwrite policies (-iN, -iY, -iR) and
# relocation (-d) of recover -a.
. "$(dirname "$0")/lib.sh"
nsr_setup 361-recover-interactive
S=127.0.0.1
W=$ROOT/work
T=$W/tree
nsr_start_aftd_datazone

mkdir -p "$T/docs/old" "$T/src"
printf 'readme v1\n' >"$T/docs/readme"
printf 'gone\n' >"$T/docs/old/gone.txt"
printf 'main\n' >"$T/src/main.c"
printf 'util\n' >"$T/src/util.c"
"$BIN/save" -s $S -l full "$T" >"$W/save1.out" 2>&1
check "full save" test $? -eq 0
cp -a "$T" "$W/snap-full"
sleep 1.1
printf 'readme v2, longer\n' >"$T/docs/readme"
rm -r "$T/docs/old"
printf 'new\n' >"$T/src/new.c"
"$BIN/save" -s $S -l incr "$T" >"$W/save2.out" 2>&1
check "incr save" test $? -eq 0
cp -a "$T" "$W/snap-incr"
FULL=$("$BIN/mminfo" -s $S -a -q "name=$T,level=full" -r nsavetime |
	awk '$1 ~ /^[0-9]+$/ {print $1; exit}')
check "mminfo knows the full's save time" test -n "$FULL"

# --- piped standard input ----------------------------------------------------
mkdir -p "$W/r1"
cat >"$W/in1" <<END
pwd
cd $T
pwd
ls
cd docs
ls
dir
versions readme
frobnicate
cd nowhere
add nothing
cd ..
add src
add src/main.c
add docs
ls
list
delete docs
list
relocate $W/r1
destination
recover
add /
list
delete /
list
find "*.c"
find m* /
find tr?? /
find x y z
changetime @$FULL
cd $T/docs/old
pwd
ls
changetime now
pwd
quit
END
"$BIN/recover" -s $S <"$W/in1" >"$W/out1" 2>&1
rc=$?
check "recover through a pipe exits 0" test $rc -eq 0
check "pwd starts in the process's directory or /" \
	grep -qx '/' "$W/out1"
check "cd and pwd" grep -qx "$T" "$W/out1"
check "ls lists directories with /" grep -qx 'docs/' "$W/out1"
check "ls as of now: old/ deleted by the incr is not listed" \
	test "$(grep -c '^old/' "$W/out1")" = 0
check "dir lists long" grep -q '^ -rw-r--r-- *18 .* readme$' "$W/out1"
check "versions shows both versions, the shown one marked" \
	test "$(grep -c "^> .* full\|^> .* incr" "$W/out1")" = 1 -a \
	"$(grep -A4 '^versions of .*/readme:' "$W/out1" | grep -c 'file$')" = 2
check "versions counts" grep -q '^2 version(s)$' "$W/out1"
check "an unknown command is named" \
	grep -q "^frobnicate: unknown command; help lists" "$W/out1"
check "an unknown directory is named" \
	grep -q "docs/nowhere: not in the index as of now" "$W/out1"
check "an unknown file is named" \
	grep -q "docs/nothing: not in the index as of now" "$W/out1"
check "add counts a directory with its tree" \
	grep -qx '4 file(s) marked for recovery' "$W/out1"
check "add under a marked directory says so" \
	grep -q "src/main.c: already marked with $T/src" "$W/out1"
check "ls marks what is marked with *" \
	test "$(grep -cx '\*src/\|\*docs/' "$W/out1")" = 2
check "delete unmarks" grep -qx '2 file(s) unmarked' "$W/out1"
check "recover says where" grep -q "^Recovering 4 file(s) into $W/r1" \
	"$W/out1"
check "and what came back" \
	grep -qx "Received 4 file(s) from NSR server \`$S'" "$W/out1"
check "and ends with the completion line" \
	grep -q '^Recover completion time: ' "$W/out1"
check "the marked tree is identical" "$BIN/nsrtreecmp" "$T/src" "$W/r1$T/src"
check "what was unmarked is not recovered" test ! -e "$W/r1$T/docs"
check "add / marks the saved tree below it (7 objects as of now)" \
	test "$(grep -A2 "^Recover completion time" "$W/out1" |
		grep -c '^7 file(s) marked for recovery$')" = 1
check "list shows it" grep -qx "$T/" "$W/out1"
check "delete / unmarks what is below" grep -qx '7 file(s) unmarked' \
	"$W/out1"
check "list is empty then" \
	grep -A1 -x '7 file(s) unmarked' "$W/out1" |
	grep -qx '0 file(s) marked for recovery'
check "find: names matching a pattern below the current directory" \
	test "$(grep -c "^$T/src/[a-z]*\.c$" "$W/out1")" = 4 -a \
	"$(grep -c '^3 object(s) found$' "$W/out1")" = 1
check "find from / (above the saved paths), as of now" \
	test "$(grep -c "^$T/src/main.c$" "$W/out1")" = 2
check "find matches a saved path's own name" grep -qx "$T/" "$W/out1"
check "changetime back: a directory deleted since is browsable" \
	grep -qx 'gone.txt' "$W/out1"
check "changetime forward: the directory is gone, back to /" \
	grep -qx "$T/docs/old was not in the index then; now in /" "$W/out1"
check "pwd says /" test "$(tail -1 "$W/out1")" = /
check "find with a bad usage says how" grep -q '^find: name a pattern' \
	"$W/out1"

# --- pseudo-terminal: line editing, history, changetime -----------------------
mkdir -p "$W/r2"
cat >"$W/script2" <<END
expect recover> 
send cd $T\r
expect recover> 
# typo fixed with backspace and left/right arrows: "lx" -> "ls"
send lx\x7fs\r
expect src/
expect recover> 
# ^C abandons a line
send quit now please\x03
expect ^C
send changetime @$FULL\r
expect time changed to
expect recover> 
send ls docs\r
expect old/
expect recover> 
# up arrow twice: "ls docs" again after a ^C'ed line was not kept
send \e[A\r
expect old/
expect recover> 
send add .\r
expect 8 file(s) marked for recovery
expect recover> 
send relocate $W/r2\r
expect recover files into $W/r2
send recover\r
expect Recover completion time:
expect recover> 
send helpp\e[D\e[3~\r
expect quit, exit
expect recover> 
# typed ahead: the second command comes before the first one's prompt
send pwd\rlist\r
expect 0 file(s) marked for recovery
expect recover> 
send \x04
END
"$BIN/ptydrive" -t 60 "$W/script2" "$BIN/recover" -s $S >"$W/out2" 2>&1
rc=$?
check "recover on a terminal exits 0 at ^D" test $rc -eq 0
check "the tree as of the full's save time is identical" \
	"$BIN/nsrtreecmp" "$W/snap-full" "$W/r2$T"

# --- a failed recover ----------------------------------------------------------
printf 'a file\n' >"$W/notadir"
printf 'cd %s\nadd src\nrelocate %s\nrecover\nlist\nquit\n' "$T" \
	"$W/notadir/sub" | "$BIN/recover" -s $S >"$W/out3" 2>&1
rc=$?
check "a recover into a place that cannot be a directory exits non-zero" \
	test $rc -ne 0
check "and prints no completion line" \
	test "$(grep -c 'Recover completion time' "$W/out3")" = 0
check "but says it failed and keeps the marks" \
	grep -q '^Recover failed: .*the marks are kept' "$W/out3"
check "listed after it" grep -qx "$T/src/" "$W/out3"
printf 'ls\n' | "$BIN/recover" -s $S -c nosuchclient >"$W/out4" 2>&1
check "an unknown client is refused" test $? -ne 0
check "naming it" grep -q "nosuchclient" "$W/out4"
printf 'ls\n' | "$BIN/recover" -s $S -t @$((FULL - 100)) >"$W/out5" 2>&1
check "a time before the first backup is refused" test $? -ne 0
check "saying so" grep -q "no backup in its index as of" "$W/out5"

# --- overwrite policies and relocation of recover -a ---------------------------
D=$W/pol
mkdir -p "$D$T/src"
printf 'mine\n' >"$D$T/src/main.c"
"$BIN/recover" -s $S -q -iN -d "$D" -a "$T/src/main.c" >/dev/null 2>&1
check "-iN keeps an existing file" grep -qx mine "$D$T/src/main.c"
"$BIN/recover" -s $S -q -iR -d "$D" -a "$T/src/main.c" >/dev/null 2>&1
check "-iR keeps it and recovers beside it with a suffix" \
	test "$(cat "$D$T/src/main.c")" = mine -a \
	"$(cat "$D$T/src/main.c.R")" = main
"$BIN/recover" -s $S -q -iY -d "$D" -a "$T/src/main.c" >/dev/null 2>&1
check "-iY overwrites it" grep -qx main "$D$T/src/main.c"
check "-d relocates under the directory" test ! -e "$D/src"
nsr_done
