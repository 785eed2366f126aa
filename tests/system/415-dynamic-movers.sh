#!/bin/bash
# 415-dynamic-movers: dynamic nsrmmd on an AFTD.  A device with target
# sessions 1, max sessions 8 and max nsrmmd count 4 takes 8 saves at
# once: the storage node starts another mover whenever every running one
# serves its target, never more than 4 (sampled throughout from the
# process table), every save set is complete and recovers identical;
# idle movers exit by themselves.  With target sessions 3, six saves at
# once: nsrd hands a mover it counts below its target one more session
# itself (daemons/nsrd/devcache.c), so still no mover serves more than
# 3 (sampled with nsrwatch) and at most 2 are started.  Then the count
# rule: changing target
# or max sessions sets max nsrmmd count to MS/TS + 4, and with the
# storage node's "dynamic nsrmmds: No" one mover serves every session.
# Movers are forked from nsrsnmd's mover template (nsrmmd -Z); a hung or
# killed template costs no save: the mover is started directly, and the
# next from a new template.
. "$(dirname "$0")/lib.sh"
nsr_setup 415-dynamic-movers
S=127.0.0.1
W=$ROOT/work
N=8
mkdir -p "$W/aftd1" "$W/out"
export NSR_MOVER_IDLE=3
nsr_start_datazone
nsr_device aftd1 adv_file "$W/aftd1" \
	"target sessions: 1; max sessions: 8; max nsrmmd count: 4"
check "label" "$BIN/nsrmm" -s $S -q -l -y -b Default -f aftd1 Disk.001
for i in $(seq 1 $N); do
	mkdir -p "$W/t$i"
	head -c $((6000000 + i * 100000)) /dev/urandom >"$W/t$i/data"
done

# movers - nsrmmd processes of aftd1 now.
movers() {
	local c
	c=$(pgrep -fc -- "nsrmmd .*-D $W/aftd1( |\$)" 2>/dev/null)
	echo "${c:-0}"
}

# The samples run until the saves are done (bounded: 60 s).
( for _ in $(seq 1 600); do movers; sleep 0.1; done ) >"$W/samples" &
SAMPLER=$!
for i in $(seq 1 $N); do
	"$BIN/save" -s $S -q "$W/t$i" >"$W/save$i.out" 2>&1 &
	pids[$i]=$!
done
ok=0
for i in $(seq 1 $N); do
	wait "${pids[$i]}" && ok=$((ok + 1))
done
kill "$SAMPLER" 2>/dev/null; wait "$SAMPLER" 2>/dev/null
max=$(sort -n "$W/samples" | tail -1)
check "all $N saves completed ($ok did)" test "$ok" -eq $N
check "more than one mover served the device (at most $max at once)" \
	test "${max:-0}" -ge 2
check "never more than max nsrmmd count (4) movers ($max)" \
	test "${max:-9}" -le 4
check "nsrsnmd logged the movers it started, none beyond 4 of 4" \
	grep -q "for device aftd1 (adv_file .*) on port [0-9]*: [2-4] of at most 4 movers" \
	"$ROOT/logs/daemon.log"
check "the movers were forked from nsrsnmd's mover template" \
	grep -q "started nsrmmd #[0-9]* (pid [0-9]*, from the template, ready in [0-9.]* ms) for device aftd1" \
	"$ROOT/logs/daemon.log"
check "and never a fifth" \
	test -z "$(grep -E ": ([5-9]|[1-9][0-9]) of at most 4 movers" \
		"$ROOT/logs/daemon.log")"
n=$("$BIN/mminfo" -s $S -a -r "ssid,sumflags" 2>/dev/null |
	awk '$2 == "cb"' | wc -l)
check "mminfo shows $N complete, browsable save sets ($n)" test "$n" -eq $N
left=$(ls "$W/aftd1" | grep -c '\.part$')
check "no file in progress is left on the AFTD" test "$left" -eq 0
bad=0
for i in $(seq 1 $N); do
	"$BIN/recover" -s $S -q -d "$W/out" -a "$W/t$i" >/dev/null 2>&1 &&
		cmp -s "$W/t$i/data" "$W/out$W/t$i/data" || bad=$((bad + 1))
done
check "every save set recovers identical ($bad differ)" test "$bad" -eq 0

# Idle movers exit (NSR_MOVER_IDLE=3 s): none is left within 20 s.
for _ in $(seq 1 200); do [ "$(movers)" -eq 0 ] && break; sleep 0.1; done
check "idle movers went away" test "$(movers)" -eq 0

# Target sessions 3: movers that nsrd hands out itself stay within it.
printf '. type: NSR device; name: aftd1\nupdate target sessions: 3; max sessions: 8\n' |
	"$BIN/nsradmin" -s $S -i - >/dev/null 2>&1
before=$(grep -c "started nsrmmd .* for device aftd1" "$ROOT/logs/daemon.log")
( for _ in $(seq 1 600); do
	"$BIN/nsrwatch" -s $S -x json -n 1 2>/dev/null |
		grep -o '"movers":\[[^]]*\]' | grep -o '"sessions":[0-9]*' |
		cut -d: -f2
	sleep 0.05
done ) >"$W/msamples" &
SAMPLER=$!
for i in 1 2 3 4 5 6; do
	"$BIN/save" -s $S -q -N "ts3-$i" "$W/t$i" >"$W/ts3-$i.out" 2>&1 &
	pids[$i]=$!
done
ok=0
for i in 1 2 3 4 5 6; do wait "${pids[$i]}" && ok=$((ok + 1)); done
kill "$SAMPLER" 2>/dev/null; wait "$SAMPLER" 2>/dev/null
after=$(grep -c "started nsrmmd .* for device aftd1" "$ROOT/logs/daemon.log")
most=$(sort -n "$W/msamples" | tail -1)
check "6 saves at target sessions 3 complete ($ok)" test "$ok" -eq 6
check "no mover served more than 3 sessions at once (most ${most:-none})" \
	test -n "$most" -a "${most:-9}" -le 3 -a "${most:-0}" -ge 1
check "at most 2 movers were started for them ($((after - before)))" \
	test $((after - before)) -ge 1 -a $((after - before)) -le 2
for _ in $(seq 1 200); do [ "$(movers)" -eq 0 ] && break; sleep 0.1; done

# The count rule and the switch.
printf '. type: NSR device; name: aftd1\nupdate target sessions: 2; max sessions: 16\nprint\n' |
	"$BIN/nsradmin" -s $S -i - >"$W/dev.out" 2>&1
check "max nsrmmd count follows MS/TS + 4 (16/2 + 4 = 12)" \
	grep -Eq "max nsrmmd count: *12;" "$W/dev.out"
printf 'create type: NSR storage node; name: %s; dynamic nsrmmds: No\n' \
	"$(hostname)" | "$BIN/nsradmin" -s $S -i - >"$W/sn.out" 2>&1
check "storage node resource with dynamic nsrmmds: No" test $? -eq 0
printf '. type: NSR device; name: aftd1\nupdate target sessions: 1\n' |
	"$BIN/nsradmin" -s $S -i - >/dev/null 2>&1
before=$(grep -c "started nsrmmd .* for device aftd1" "$ROOT/logs/daemon.log")
for i in 1 2 3 4; do
	"$BIN/save" -s $S -q -N "again$i" "$W/t$i" >"$W/again$i.out" 2>&1 &
	pids[$i]=$!
done
ok=0
for i in 1 2 3 4; do wait "${pids[$i]}" && ok=$((ok + 1)); done
after=$(grep -c "started nsrmmd .* for device aftd1" "$ROOT/logs/daemon.log")
check "4 saves with dynamic nsrmmds off complete ($ok)" test "$ok" -eq 4
check "and one mover served them ($((after - before)) started)" \
	test $((after - before)) -eq 1

# The mover template (nsrmmd -Z): one that hangs is killed and the mover
# is started directly; one that is killed is replaced at the next start.
# save1 - one save, its movers gone (idle) first; 0 if it completed.
save1() {
	for _ in $(seq 1 200); do [ "$(movers)" -eq 0 ] && break; sleep 0.1; done
	"$BIN/save" -s $S -q -N "$1" "$W/t1" >"$W/$1.out" 2>&1
}
# template - the pid of the running template (from nsrsnmd's log).
template() {
	grep -o "started the mover template (pid [0-9]*)" "$ROOT/logs/daemon.log" |
		tail -1 | grep -o "[0-9]*"
}
T=$(template)
check "a mover template runs ($T)" kill -0 "${T:-0}"
kill -STOP "$T"
check "a save with the template stopped completes" save1 hung
check "the hung template was given up and the mover started directly" \
	grep -q "could not fork a mover: .*; this one is started directly, the next from a new template" \
	"$ROOT/logs/daemon.log"
gone() { for _ in $(seq 1 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done; return 1; }
check "and killed" gone "$T"
check "a save after that completes" save1 after-hung
T2=$(template)
check "from a new template ($T2)" test -n "$T2" -a "$T2" != "$T"
kill -KILL "$T2"
check "nsrsnmd saw the killed template end" nsr_wait_logged \
	"$ROOT/logs/daemon.log" "the mover template \(pid $T2\) ended: signal 9"
check "a save after a killed template completes" save1 after-kill
T3=$(template)
check "through a third template ($T3), its mover forked from it" \
	test -n "$T3" -a "$T3" != "$T2" -a \
	"$(grep "started nsrmmd .* for device aftd1" "$ROOT/logs/daemon.log" |
		tail -1 | grep -c "from the template")" -eq 1
nsr_done
