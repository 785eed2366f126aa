#!/bin/bash
# 419-parallelism: server, group and client parallelism at admission.
#  - Resources: parallelism 0 and 5000 are refused; a client naming a
#    group that does not exist is refused; a group in use cannot be
#    deleted (the error names the client); print of a type that does not
#    exist is an error with exit 1; save -g of a missing group fails.
#  - Server parallelism 4, groups G1 and G2 with savegrp parallelism 3,
#    six clients (c1-c3 in G1, c4-c6 in G2) with parallelism 2, 18 saves
#    at once, five of c1, one of c6, three of each other (each stalls 1 s
#    so they overlap; the fair queue serves c1's backlog last, two at a
#    time; 4 run and 14 wait, within this test's wait table of 16):
#    a sampler (nsrwatch -x json) never sees more than 4 saves, 3 of a
#    group or 2 of a client, and does see the limits reached; every save
#    completes.
#  - Fairness: c1's parallelism raised to 4 live (nsradmin, no restart);
#    c1 queues 10 manual saves, then c2 two: c2 starts before c1's
#    backlog is through (first come first served would start it last).
#  - A full wait table (NSR_MAX_WAITS=16 here): the save that finds it
#    full fails with a message saying so; the others complete.
. "$(dirname "$0")/lib.sh"
nsr_setup 419-parallelism
S=127.0.0.1
W=$ROOT/work
mkdir -p "$W/aftd1"
export NSR_MAX_WAITS=16
nsr_start_datazone
nsr_device aftd1 adv_file "$W/aftd1" "target sessions: 32; max sessions: 64"
check "label" "$BIN/nsrmm" -s $S -q -l -y -b Default -f aftd1 Disk.001

# admin SCRIPT - run nsradmin on SCRIPT; output in $W/admin.out.
admin() {
	printf '%s\n' "$@" | "$BIN/nsradmin" -s $S -i - >"$W/admin.out" 2>&1
}

# --- validation --------------------------------------------------------
admin '. type: NSR' 'update parallelism: 0'
check "server parallelism 0 refused (exit 1)" test $? -eq 1
check "saying the range" grep -q "'0' is not a valid value for 'parallelism' (a number from 1 to 1024)" "$W/admin.out"
admin '. type: NSR' 'update parallelism: 5000'
check "server parallelism 5000 refused (exit 1)" test $? -eq 1
admin 'print type: NSR bogus'
check "print of a type that does not exist: exit 1" test $? -eq 1
check "saying so" grep -q "there is no resource type 'NSR bogus'" "$W/admin.out"
admin 'create type: NSR client; name: c1; group: G1'
check "a client naming a missing group is refused" test $? -eq 1
check "saying which" grep -q "group 'G1' does not exist" "$W/admin.out"
check "create the groups" admin \
	'create type: NSR group; name: G1; savegrp parallelism: 3' \
	'create type: NSR group; name: G2; savegrp parallelism: 3'
for c in c1 c2 c3 c4 c5 c6; do
	g=G1; case $c in c[456]) g=G2 ;; esac
	check "create client $c in $g" admin \
		"create type: NSR client; name: $c; group: $g; parallelism: 2"
done
admin '. type: NSR group; name: G1' 'delete'
check "a group in use is not deleted" test $? -eq 1
check "the error names its client" grep -q "NSR group 'G1' is in use by NSR client c1 (group)" "$W/admin.out"
check "server parallelism 4" admin '. type: NSR' 'update parallelism: 4'
mkdir -p "$W/x"
echo x >"$W/x/f"
"$BIN/save" -s $S -q -c c1 -g Nope "$W/x" >"$W/nope.out" 2>&1
check "save -g of a missing group fails" test $? -ne 0
check "saying the group does not exist" grep -q "group 'Nope' does not exist" "$W/nope.out"

# --- limits under load -------------------------------------------------
export NSR_TEST_SAVE_STALL_SEC=1
# group_of CLIENT - its group.
group_of() { case $1 in c[123]) echo G1 ;; *) echo G2 ;; esac; }
pids=()
for c in c1 c2 c3 c4 c5 c6; do
	case $c in
	c1) ks="1 2 3 4 5" ;; # a backlog: at the end c1 runs 2 at once
	c6) ks="1" ;;
	*) ks="1 2 3" ;;
	esac
	for k in $ks; do
		d="$W/$c/s$k"
		mkdir -p "$d"
		echo "$c $k" >"$d/a"; echo more >"$d/b"
		"$BIN/save" -s $S -q -c $c -g "$(group_of $c)" "$d" \
			>"$W/$c.$k.out" 2>&1 &
		pids+=($!)
	done
done
: >"$W/samples"
for _ in $(seq 1 600); do
	"$BIN/nsrwatch" -s $S -x json 2>/dev/null |
		grep -o '"type":"save","client":"[^"]*"' |
		sed 's/.*"client":"\([^"]*\)"/\1/' | tr '\n' ' ' >>"$W/samples"
	echo >>"$W/samples"
	alive=0
	for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
	[ $alive = 0 ] && break
	sleep 0.05
done
bad=0
for p in "${pids[@]}"; do wait "$p" || bad=$((bad + 1)); done
check "all 18 saves complete ($bad failed)" test $bad -eq 0
# Each sample: the clients of the running saves.  Worst case per limit.
read -r tot cli grp <<<"$(awk '{
	if (NF > t) t = NF
	delete n; delete g
	for (i = 1; i <= NF; i++) {
		n[$i]++; gr = ($i ~ /^c[123]$/) ? "G1" : "G2"; g[gr]++
	}
	for (k in n) if (n[k] > c) c = n[k]
	for (k in g) if (g[k] > m) m = g[k]
} END { print t + 0, c + 0, m + 0 }' "$W/samples")"
echo "# $(wc -l <"$W/samples") samples: at most $tot saves, $cli of a client, $grp of a group"
check "never more than 4 saves (server parallelism): $tot" test "$tot" -le 4
check "never more than 2 of a client: $cli" test "$cli" -le 2
check "never more than 3 of a group: $grp" test "$grp" -le 3
check "the server limit was reached (the sampler saw 4)" test "$tot" -eq 4
check "the client limit was reached (2)" test "$cli" -eq 2
n=$("$BIN/mminfo" -s $S -a -r "name" 2>/dev/null |
	grep -c "/c[1-6]/s[1-5] *$")
check "18 save sets in the media database ($n)" test "$n" -eq 18
check "queued saves were told why" \
	grep -lq "waiting: .*parallelism.*reached.*queued: ticket" "$W"/c*.out
# Their jobs (made in batches with the save sets, JOB_CREATE_MANY): one
# completed save job per save set, each with its save set and its first
# log line.
printf 'show ssids; job log\nprint type: save job\n' |
	"$BIN/jobquery" -s $S >"$W/jobs.out" 2>&1
n=$(grep -Ec "saving c[1-6]:$W/c[1-6]/s[1-5] to volume Disk.001 on aftd1" \
	"$W/jobs.out")
check "18 save jobs, each with its first log line ($n)" test "$n" -eq 18
for s in $("$BIN/mminfo" -s $S -a -q "name=$W/c1/s1" -r ssid 2>/dev/null |
	awk '$1 ~ /^[0-9]+$/'); do
	check "save set $s has its job" grep -Eq "ssids: *\"?$s\"?;" \
		"$W/jobs.out"
done

# --- fairness across clients, and a live change ------------------------
check "c1's parallelism 4, live" admin '. type: NSR client; name: c1' \
	'update parallelism: 4'
pids=()
for k in $(seq 1 10); do
	d="$W/f1/s$k"; mkdir -p "$d"; echo "$k" >"$d/a"; echo b >"$d/b"
	"$BIN/save" -s $S -q -c c1 "$d" >"$W/f1.$k.out" 2>&1 &
	pids+=($!)
done
seen=0
for _ in $(seq 1 200); do
	seen=$("$BIN/nsrwatch" -s $S -x json 2>/dev/null |
		grep -o '"type":"save","client":"c1"' | wc -l)
	[ "$seen" -ge 4 ] && break
	sleep 0.05
done
check "c1 runs 4 saves at once (its new limit, no restart): $seen" \
	test "$seen" -eq 4
for k in 1 2; do
	d="$W/f2/s$k"; mkdir -p "$d"; echo "$k" >"$d/a"; echo b >"$d/b"
	"$BIN/save" -s $S -q -c c2 "$d" >"$W/f2.$k.out" 2>&1 &
	pids+=($!)
done
bad=0
for p in "${pids[@]}"; do wait "$p" || bad=$((bad + 1)); done
check "all 12 saves complete ($bad failed)" test $bad -eq 0
order=$(grep -o "save of c[12]:$W/f[12]/s[0-9]* admitted" \
	"$ROOT/logs/daemon.log" | sed 's/save of \(c[12]\):.*/\1/' | tr '\n' ' ')
echo "# order of starts: $order"
first_c2=$(tr ' ' '\n' <<<"$order" | grep -n c2 | head -1 | cut -d: -f1)
check "c2 started before c1's backlog was through (position $first_c2 of 12)" \
	test -n "$first_c2" -a "${first_c2:-99}" -le 7

# --- a full wait table -------------------------------------------------
check "server parallelism 1" admin '. type: NSR' 'update parallelism: 1'
# The first save holds the one slot 4 s; 17 more come meanwhile.
d="$W/full/s0"; mkdir -p "$d"; echo 0 >"$d/a"; echo b >"$d/b"
NSR_TEST_SAVE_STALL_SEC=4 "$BIN/save" -s $S -q -c c1 "$d" \
	>"$W/full.0.out" 2>&1 &
pids=($!)
unset NSR_TEST_SAVE_STALL_SEC
for _ in $(seq 1 100); do
	grep -q "save of c1:$W/full/s0 admitted" "$ROOT/logs/daemon.log" &&
		break
	sleep 0.05
done
for k in $(seq 1 17); do
	d="$W/full/s$k"; mkdir -p "$d"; echo "$k" >"$d/a"; echo b >"$d/b"
	"$BIN/save" -s $S -q -c c$(( (k % 6) + 1 )) "$d" \
		>"$W/full.$k.out" 2>&1 &
	pids+=($!)
done
bad=0
for p in "${pids[@]}"; do wait "$p" || bad=$((bad + 1)); done
full=$(grep -l "sessions already wait (the most nsrd keeps)" \
	"$W"/full.*.out | wc -l)
check "one running, 16 waiting: the 18th save is refused ($full)" \
	test "$full" -eq 1
check "the others complete ($bad failed)" test "$bad" -eq 1
nsr_done
