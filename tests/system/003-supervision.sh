#!/bin/bash
# 003-supervision: nsrd starts nsrmmdbd, nsrindexd and nsrjobd; when one
# is killed it is restarted (and the restart is logged); nsrexecd -s does
# the same for nsrsnmd; SIGTERM to nsrd stops its children too.
. "$(dirname "$0")/lib.sh"
nsr_setup 003-supervision
nsr_start_datazone
LOG=$ROOT/logs/daemon.log

# wait_new_pid NAME OLDPID - wait (<= 20 s) for NAME's pid file to change.
wait_new_pid() {
	local i=0 p
	while [ $i -lt 200 ]; do
		p=$(cat "$ROOT/logs/$1.pid" 2>/dev/null)
		if [ -n "$p" ] && [ "$p" != "$2" ] && kill -0 "$p" 2>/dev/null; then
			echo "$p"; return 0
		fi
		sleep 0.1; i=$((i + 1))
	done
	return 1
}

for d in nsrmmdbd nsrjobd nsrindexd; do
	old=$(cat "$ROOT/logs/$d.pid")
	kill -KILL "$old"
	new=$(wait_new_pid $d "$old")
	check "$d killed with SIGKILL is restarted" test -n "$new"
	check "the death of $d is logged" grep -q "$d (pid $old) died: signal 9" "$LOG"
	nsr_wait_answers $d
done

# template - the pid of nsrsnmd's mover template (nsrmmd -Z) last started.
template() {
	grep -o "nsrsnmd\[$1\]: info: started the mover template (pid [0-9]*)" \
		"$LOG" | tail -1 | grep -o "[0-9]*)" | tr -d ')'
}
old=$(cat "$ROOT/logs/nsrsnmd.pid")
nsr_wait_logged "$LOG" "nsrsnmd\[$old\]: info: started the mover template"
T=$(template "$old")
check "nsrsnmd runs a mover template (${T:-none})" kill -0 "${T:-0}"
kill -KILL "$old"
new=$(wait_new_pid nsrsnmd "$old")
check "nsrsnmd is restarted by nsrexecd" test -n "$new"
# (exited: a zombie counts, as reaping it is init's business now)
gone=0
for _ in $(seq 1 100); do
	st=$(awk '{ print $3 }' "/proc/$T/stat" 2>/dev/null)
	[ -z "$st" ] || [ "$st" = Z ] && { gone=1; break; }
	sleep 0.1
done
check "its mover template went with it" test $gone -eq 1
nsr_wait_logged "$LOG" "nsrsnmd\[$new\]: info: started the mover template"
T2=$(template "$new")
check "the new nsrsnmd has a template of its own (${T2:-none})" \
	kill -0 "${T2:-0}"

# The restarted media database answers (empty: "no matches" comes from it).
out=$("$BIN/mminfo" -s 127.0.0.1 -a 2>&1)
check "the restarted nsrmmdbd answers mminfo" grep -q "no matches found" <<<"$out"

# SIGTERM to nsrd stops its children.
kids=""
for d in nsrmmdbd nsrjobd nsrindexd; do kids="$kids $(cat "$ROOT/logs/$d.pid")"; done
nsrd_pid=$(cat "$ROOT/logs/nsrd.pid")
kill -TERM "$nsrd_pid"
i=0; while kill -0 "$nsrd_pid" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
check "nsrd stops on SIGTERM" bash -c "! kill -0 $nsrd_pid 2>/dev/null"
for k in $kids; do
	check "child $k stopped with nsrd" bash -c "! kill -0 $k 2>/dev/null"
done
check "nsrd logged its stop" grep -q "nsrd\[$nsrd_pid\]: info: stopped" "$LOG"
nsr_done
