#!/bin/bash
# 460-savegrp: scheduled backups over many clients.  Each client is a
# host of its own (a network namespace) running only nsrexecd -S srv;
# the server srv has an AFTD and server parallelism 8.  Clients c01..cNN
# (NSR_460_CLIENTS, default 50) are in two groups with savegrp
# parallelism 6, each client with two save sets and parallelism 2.
# Checked: savegrp -n previews every client, save set and level; a host
# other than the server cannot have a client's nsrexecd run save; both
# groups run at once with savegrp and every save set completes (mminfo);
# the jobs database has a savegrp job per group with a save job per
# client under it; a sampler (nsrwatch) and the save sessions' jobs
# (their start and end times) show at most 8 sessions at once, at most 6
# of a group and at most 2 of a client (the sampler sees 8 reached); client
# starts are staggered at the default 200 ms, so no second sees more than
# 6 (1,000 clients take over 160 s to start, not one second); a client
# whose nsrexecd is stopped fails only its part, after its client
# retries, and savegrp exits 1; then a week of an autostart group against
# the test clock (NSR_TEST_CLOCK) gives each day the level its schedule
# says (mminfo), skip included; a group set to autostart "Start now" runs
# at once and becomes Enabled.
# Needs root and network namespaces (skipped otherwise).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netns.sh"
nsr_setup 460-savegrp
N=${NSR_460_CLIENTS:-50}
CL=()
for i in $(seq 1 "$N"); do CL+=("$(printf 'c%02d' "$i")"); done
nsr_net_setup srv "${CL[@]}"
S=srv
W=$ROOT/work
mkdir -p "$W"
export TZ=UTC
export NSR_TEST_CLOCK=$W/clock
# NSR_SCHED_STAGGER_MS stays at its default (200 ms): checked below
unset NSR_SCHED_STAGGER_MS
export NSR_SCHED_RETRY_SEC=1
echo 0 >"$NSR_TEST_CLOCK"
START=$(date +%s)

nsr_host_start srv nsrexecd -s
nsr_host_start srv nsrd
nsr_host_wait_registered srv nsrmmdbd
nsr_host_wait_registered srv nsrjobd
nsr_host_wait_registered srv nsrindexd
nsr_host_wait_registered srv nsrsnmd
# every client enrolled in the datazone (nsrtrust), as an administrator
# does for a new client host
# Each save the client agents run pauses 1 s after its first file
# (NSR_TEST_SAVE_STALL_SEC), so sessions overlap however fast the machine
# is: at 5 client starts a second (2 saves each) server parallelism 8 is
# then always reached, which the sampler must see.
export NSR_TEST_SAVE_STALL_SEC=1
for c in "${CL[@]}"; do
	nsr_host_enrol "$c"
	nsr_host_start "$c" nsrexecd -S srv 2>/dev/null
done
unset NSR_TEST_SAVE_STALL_SEC
check "$N client agents run" test "$(ls "$ROOT"/c*/logs/nsrexecd.pid | wc -l)" = "$N"

mkdir -p "$ROOT/srv/aftd1"
nsr_host_device srv aftd1 adv_file "$ROOT/srv/aftd1"
check "label a volume" on srv "$BIN/nsrmm" -s srv -q -l -y -b Default \
	-f aftd1 G.001

# nsradmin_do TEXT - nsradmin on srv with TEXT as input; must succeed.
nsradmin_do() {
	printf '%s\n' "$@" | on srv "$BIN/nsradmin" -s srv -i - >/dev/null 2>"$W/nsradmin.err" ||
		fail "nsradmin: $* ($(cat "$W/nsradmin.err"))"
}
nsradmin_do ". type: NSR" "update parallelism: 8" \
	"create type: NSR group; name: G1; client retries: 1; savegrp parallelism: 6" \
	"create type: NSR group; name: G2; client retries: 1; savegrp parallelism: 6"
head -c 1048576 /dev/urandom >"$W/piece"
cmds=()
for i in $(seq 1 "$N"); do
	c=${CL[$((i - 1))]}
	g=G$(( (i - 1) % 2 + 1 ))
	for s in s1 s2; do
		mkdir -p "$ROOT/$c/data/$s"
		for _ in $(seq 1 16); do cat "$W/piece"; done >"$ROOT/$c/data/$s/big"
		echo "$c $s" >"$ROOT/$c/data/$s/small"
	done
	cmds+=("create type: NSR client; name: $c; group: $g; parallelism: 2; save set: $ROOT/$c/data/s1, $ROOT/$c/data/s2")
done
nsradmin_do "${cmds[@]}"

# --- preview -------------------------------------------------------------
# The Default schedule: full on Sunday, incr on the other days.
TODAY=incr
[ "$(date -u +%w)" = 0 ] && TODAY=full
on srv "$BIN/savegrp" -s srv -n G1 >"$W/preview.out" 2>&1
check "savegrp -n exits 0" test $? = 0
check "the preview: both save sets of every G1 client at today's level" \
	test "$(grep -c "^c[0-9]* *$TODAY *$ROOT/c[0-9]*/data/s[12]$" "$W/preview.out")" = "$(( (N + 1) / 2 * 2 ))"
check "the preview ran nothing" bash -c "! grep -q 'group G1 started' '$ROOT/srv/logs/daemon.log'"
on srv "$BIN/savegrp" -s srv -n -l 5 -c c01 G1 >"$W/preview2.out" 2>&1
check "savegrp -n -l 5 -c c01: only c01, at level 5" \
	test "$(grep -c '^c01 *5 ' "$W/preview2.out")" = 2 -a "$(grep -c '^c0[2-9]' "$W/preview2.out")" = 0
on srv "$BIN/savegrp" -s srv -n -c c02 G1 >"$W/preview3.out" 2>&1
check "a client not in the group is refused (exit 3)" test $? = 3
check "... saying so" grep -q "client c02 is not in group G1" "$W/preview3.out"
on srv "$BIN/savegrp" -s srv -l 25:00 G1 >"$W/bad.out" 2>&1
check "a bad level is refused (exit 3)" test $? = 3
on srv "$BIN/savegrp" -s srv Nonesuch >"$W/bad.out" 2>&1
check "a group that does not exist is refused (exit 3)" test $? = 3

# only the server may have a client run saves: c01 asking c02 is refused
on c01 "$BIN/execd_testclnt" c02 srv c02 full "$ROOT/c02/data/s1" >"$W/rogue.out" 2>&1
check "a host that is not the server cannot run saves on a client (exit 2)" test $? = 2
check "... told why" grep -q "calls from $(nsr_host_addr c01):[0-9]* are not from a server" "$W/rogue.out"

# --- both groups at once, a sampler watching ----------------------------
# group_of CLIENT - its group: odd numbers G1, even G2 (as made above).
# peaks - from lines "CLIENT START END" (or one client per line: a
# sample), the most sessions at once in all, of one group and of one
# client, as "ALL G1 G2 CLIENT" (intervals [START, END), ends first).
peaks() {
	awk '{ n = substr($1, 2) + 0; g = (n % 2) ? "G1" : "G2"
	       if (NF == 1) { all++; grp[g]++; cl[$1]++; next }
	       s[++k] = $2 " 1 " $1 " " g; s[++k] = $3 " 0 " $1 " " g }
	     END {
		if (NR && !k) { for (c in cl) if (cl[c] > mc) mc = cl[c]
			print all + 0, grp["G1"] + 0, grp["G2"] + 0, mc + 0; exit }
		for (i = 2; i <= k; i++) { v = s[i]; split(v, a, " ")
			for (j = i - 1; j >= 1; j--) { split(s[j], b, " ")
				if (b[1] + 0 < a[1] + 0 || (b[1] == a[1] && b[2] <= a[2])) break
				s[j + 1] = s[j] }
			s[j + 1] = v }
		for (i = 1; i <= k; i++) { split(s[i], a, " "); d = a[2] ? 1 : -1
			all += d; grp[a[4]] += d; cl[a[3]] += d
			if (all > ma) ma = all
			if (grp["G1"] > m1) m1 = grp["G1"]
			if (grp["G2"] > m2) m2 = grp["G2"]
			if (cl[a[3]] > mc) mc = cl[a[3]] }
		print ma + 0, m1 + 0, m2 + 0, mc + 0 }'
}
(
	for _ in $(seq 1 3000); do
		[ -f "$W/stop-sampler" ] && break
		on srv "$BIN/nsrwatch" -s srv -x json -n 1 2>/dev/null |
			grep -o '"type":"save","client":"c[0-9]*"' |
			sed 's/.*"client":"\(c[0-9]*\)"/\1/' >"$W/sample"
		peaks <"$W/sample" >>"$W/samples"
	done
) &
SAMPLER=$!
on srv timeout 600 "$BIN/savegrp" -s srv G1 >"$W/g1.out" 2>&1 & P1=$!
on srv timeout 600 "$BIN/savegrp" -s srv G2 >"$W/g2.out" 2>&1 & P2=$!
wait $P1; R1=$?
wait $P2; R2=$?
touch "$W/stop-sampler"; wait $SAMPLER
check "savegrp G1 exits 0" test $R1 = 0
check "savegrp G2 exits 0" test $R2 = 0
[ $R1 = 0 ] || sed 's/^/# /' "$W/g1.out" | tail -20
check "every G1 client succeeded" \
	test "$(grep -c '^  c[0-9]* .*COMPLETED  succeeded' "$W/g1.out")" = "$(( (N + 1) / 2 ))"
check "every G2 client succeeded" \
	test "$(grep -c '^  c[0-9]* .*COMPLETED  succeeded' "$W/g2.out")" = "$(( N / 2 ))"
on srv "$BIN/mminfo" -s srv -a -r "client,name(200),level,sumflags" >"$W/mminfo.out" 2>&1
check "mminfo: all $((2 * N)) save sets complete" \
	test "$(grep -c "^c[0-9]* *$ROOT/c[0-9]*/data/s[12] *full *cb" "$W/mminfo.out")" = $((2 * N))
check "every client's own data under its own name" \
	test "$(awk '{split($2, p, "/"); if (p[length(p) - 2] == $1) n++} END {print n+0}' "$W/mminfo.out")" = $((2 * N))
# the sampler's peaks over all samples: all, G1, G2, one client
read -r MAX MG1 MG2 MCL < <(awk '{ for (i = 1; i <= 4; i++) if ($i > m[i]) m[i] = $i }
	END { print m[1] + 0, m[2] + 0, m[3] + 0, m[4] + 0 }' "$W/samples" 2>/dev/null)
echo "# sampler, $(wc -l <"$W/samples") samples: at most $MAX save sessions at once, $MG1 of G1, $MG2 of G2, $MCL of one client"
check "server parallelism 8 reached, never exceeded (saw ${MAX:-?})" test "${MAX:-99}" = 8
check "group parallelism 6 never exceeded (saw G1 ${MG1:-?}, G2 ${MG2:-?})" \
	test "${MG1:-99}" -le 6 -a "${MG2:-99}" -le 6 -a "${MG1:-0}" -ge 1 -a "${MG2:-0}" -ge 1
check "client parallelism 2 never exceeded (saw ${MCL:-?})" \
	test "${MCL:-99}" -le 2 -a "${MCL:-0}" -ge 1
# The save sessions' jobs (no parent: made by SAVE_START) as
# "CLIENT START END": the same limits over their whole lifetimes.
printf '. type: save job; parent job id: 0\nshow client; start time; end time\nprint\n' |
	on srv "$BIN/jobquery" -s srv >"$W/sessjobs.out" 2>&1
awk -F': *' '/^ *client:/ { c = $2 } /^ *start time:/ { s = $2 }
	/^ *end time:/ { e = $2; gsub(/[; ]/, "", c); gsub(/[; ]/, "", s)
		gsub(/[; ]/, "", e); if (c ~ /^c[0-9]+$/) print c, s, e }' \
	"$W/sessjobs.out" >"$W/sessjobs"
check "jobs: a save session job per save set ($(wc -l <"$W/sessjobs"))" \
	test "$(wc -l <"$W/sessjobs")" -ge $((2 * N))
check "jobs: every session ended after it started" \
	test "$(awk '$3 < $2 || $3 == 0' "$W/sessjobs" | wc -l)" = 0
read -r JALL JG1 JG2 JCL < <(peaks <"$W/sessjobs")
echo "# jobs: at most $JALL sessions at once, $JG1 of G1, $JG2 of G2, $JCL of one client (to the second)"
check "jobs: never more than 8 sessions, 6 of a group, 2 of a client (saw $JALL $JG1 $JG2 $JCL)" \
	test "${JALL:-99}" -le 8 -a "${JG1:-99}" -le 6 -a "${JG2:-99}" -le 6 -a "${JCL:-99}" -le 2
printf '. type: savegrp job\nshow job id; name; job state; completion status\nprint\n' |
	on srv "$BIN/jobquery" -s srv >"$W/jobs.out" 2>&1
check "jobs: a completed savegrp job per group" \
	test "$(grep -ci 'job state: completed' "$W/jobs.out")" = 2
printf '. type: save job; group: G1\nshow parent job id; client\nprint\n' |
	on srv "$BIN/jobquery" -s srv >"$W/g1jobs.out" 2>&1
check "jobs: each G1 client a save job under its group's job" \
	test "$(grep -c 'parent job id: [1-9]' "$W/g1jobs.out")" -ge "$(( (N + 1) / 2 ))"
# staggered: 200 ms between any two client starts (both groups'), so
# at most 6 in any one second (without it 12 start at once), over 10 s
grep -h "info: group G[12]: client c[0-9]* runs save" \
	"$ROOT/srv/logs/daemon.log" | awk '{print $2}' >"$W/starts"
per_s=$(uniq -c "$W/starts" | awk '$1 > m { m = $1 } END { print m + 0 }')
span=$(awk 'NR == 1 { split($1, a, ":"); f = a[1] * 3600 + a[2] * 60 + a[3] }
	{ split($1, a, ":"); l = a[1] * 3600 + a[2] * 60 + a[3] }
	END { print l - f }' "$W/starts")
check "all $N client starts logged ($(wc -l <"$W/starts"))" \
	test "$(wc -l <"$W/starts")" = "$N"
check "client starts staggered: at most 6 in one second (saw $per_s), over $span s" \
	test "$per_s" -le 6 -a "$span" -ge $(( (N - 1) / 5 - 1 ))

# --- a client whose nsrexecd is stopped ---------------------------------
kill -TERM "$(nsr_host_pid c03 nsrexecd)"
for _ in $(seq 1 50); do
	kill -0 "$(nsr_host_pid c03 nsrexecd)" 2>/dev/null || break; sleep 0.1
done
on srv timeout 600 "$BIN/savegrp" -s srv G1 >"$W/g1b.out" 2>&1
check "savegrp exits 1 when a client failed" test $? = 1
check "c03 failed" grep -q '^  c03 .*FAILED' "$W/g1b.out"
check "... after its retry (2 attempts)" grep -q "c03: attempt 2 of 2 failed" \
	"$ROOT/srv/logs/daemon.log"
check "... its job log says why" grep -q "attempt 2 of 2 failed: .*c03" "$W/g1b.out"
check "every other G1 client succeeded" \
	test "$(grep -c '^  c[0-9]* .*COMPLETED  succeeded' "$W/g1b.out")" = "$(( (N + 1) / 2 - 1 ))"
check "the group's job says which client failed" \
	grep -q "failed: 1 of $(( (N + 1) / 2 )) client(s): c03" "$ROOT/srv/logs/daemon.log"

# --- a week against the test clock --------------------------------------
mkdir -p "$ROOT/c04/week"; echo w >"$ROOT/c04/week/f"
nsradmin_do "create type: NSR schedule; name: Wk; action: \"full incr 1 skip 2 incr 3\"" \
	"create type: NSR group; name: W; autostart: Enabled; start time: \"1:00\"; schedule: Wk" \
	"create type: NSR client; name: c04; group: W; save set: $ROOT/c04/week"
# The next Sunday 01:00:30 UTC after now, as an offset of the real time.
now=$(date +%s)
dow=$(date -u -d "@$now" +%w)
sunday=$(( now - now % 86400 + ( (7 - dow) % 7 + 7 ) * 86400 + 3630 ))
want="full incr 1 skip 2 incr 3"
for d in 0 1 2 3 4 5 6; do
	sleep 1.1	# one save time per second
	ended=$(grep -c "group W ended" "$ROOT/srv/logs/daemon.log")
	echo $(( sunday + d * 86400 - $(date +%s) )) >"$W/clock.tmp"
	mv "$W/clock.tmp" "$NSR_TEST_CLOCK"
	for _ in $(seq 1 300); do
		[ "$(grep -c "group W ended" "$ROOT/srv/logs/daemon.log")" -gt "$ended" ] && break
		sleep 0.1
	done
	check "day $d: the group started by itself and ended" \
		test "$(grep -c "group W ended" "$ROOT/srv/logs/daemon.log")" -gt "$ended"
done
check "one run a day, no more" test "$(grep -c "group W started" "$ROOT/srv/logs/daemon.log")" = 7
on srv "$BIN/mminfo" -s srv -a -q "name=$ROOT/c04/week" -ot -r "level" >"$W/week.out" 2>&1
got=$(awk 'NR > 1 {printf "%s%s", s, $1; s = " "}' "$W/week.out")
check "the week's levels: full incr 1 2 incr 3 (got: $got)" \
	test "$got" = "full incr 1 2 incr 3"
check "the skip day ran nothing and said so" \
	grep -q "group W ended: succeeded: 0 client(s), 1 skipped" "$ROOT/srv/logs/daemon.log"

# --- autostart "Start now": at once, then Enabled ------------------------
nsradmin_do "create type: NSR group; name: Now; autostart: Start now" \
	"create type: NSR client; name: c05; group: Now; save set: $ROOT/c05/data/s1"
for _ in $(seq 1 300); do
	grep -q "group Now ended: succeeded: 1 client" "$ROOT/srv/logs/daemon.log" && break
	sleep 0.1
done
check "autostart Start now: the group ran at once" \
	grep -q "group Now ended: succeeded: 1 client" "$ROOT/srv/logs/daemon.log"
printf 'print type: NSR group; name: Now\n' |
	on srv "$BIN/nsradmin" -s srv -i - >"$W/now.out" 2>&1
check "... and its autostart became Enabled" grep -qi "autostart: *Enabled" "$W/now.out"
echo "# $(( $(date +%s) - START )) s"
nsr_done
