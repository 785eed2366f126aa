# fault.sh - helpers of the fault-matrix tests (6xx); source after lib.sh
# with $S (the server) and $W (the work directory) set.
#
#   fault_seed                 set SEED, ROUNDS and RANDOM from
#                              NSR_FAULT_SEED/NSR_FAULT_ROUNDS (default
#                              rounds: $1) and print how to replay
#   fault_sleep_ms MS          sleep MS milliseconds
#   active_jobs                how many jobs nsrjobd has in state ACTIVE
#   no_active_jobs             true when it has none
#   in_progress                ssids the media database holds in progress
#   mover_pid [DEVICE]         pid of the running data mover (of DEVICE),
#                              or ""
#   kill_victim NAME           SIGKILL it (a tool: $spid; nsrmmd: the
#                              mover of $FAULT_DEVICE, else any) and bring
#                              back what an administrator would (nsrd)
#   probe_save R               a small save that must be admitted and
#                              complete (the slot is free)
#   wait_until SECS CMD...     poll CMD every 0.1 s, SECS at most

# fault_seed DEFAULT_ROUNDS - the seed and round count of this run.
fault_seed() {
	SEED=${NSR_FAULT_SEED:-$(( $(date +%s) % 32768 ))}
	ROUNDS=${NSR_FAULT_ROUNDS:-$1}
	RANDOM=$SEED
	echo "# seed $SEED, $ROUNDS rounds (replay: NSR_FAULT_SEED=$SEED NSR_FAULT_ROUNDS=$ROUNDS)"
}

# fault_sleep_ms MS - sleep MS milliseconds.
fault_sleep_ms() {
	sleep "$(printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)))"
}

# active_jobs - how many jobs nsrjobd has in state ACTIVE.
active_jobs() {
	printf 'print job state: active\n' | "$BIN/jobquery" -s $S 2>/dev/null |
		grep -c "job id:"
}

# no_active_jobs - nsrjobd has no job in state ACTIVE (a command, so that
# wait_until asks again at every poll).
no_active_jobs() { [ "$(active_jobs)" = 0 ]; }

# in_progress - ssids the media database holds in progress.
in_progress() {
	"$BIN/mminfo" -s $S -a -q inprogress -r ssid 2>/dev/null |
		awk '$1 ~ /^[0-9]+$/ {print $1}'
}

# mover_pid [DEVICE] - pid of the running data mover (nsrsnmd's child)
# of DEVICE (default: any), or "".
mover_pid() {
	"$BIN/mmdtest" status 127.0.0.1 2>/dev/null |
		awk -v d="${1:-}" 'd == "" || $1 == d {print $3; exit}'
}

# kill_victim NAME - SIGKILL it; bring back what an administrator would.
kill_victim() {
	local v=$1 p i d
	case $v in
	save|recover|nsrmm|jobpurge) kill -KILL "$spid" 2>/dev/null ;;
	nsrmmd)
		p=$(mover_pid "${FAULT_DEVICE:-}")
		[ -n "$p" ] && kill -KILL "$p" 2>/dev/null ;;
	nsrd)
		p=$(cat "$ROOT/logs/nsrd.pid")
		kill -KILL "$p"
		for i in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		for d in nsrmmdbd nsrindexd nsrjobd; do
			p=$(cat "$ROOT/logs/$d.pid" 2>/dev/null)
			for i in $(seq 1 100); do
				kill -0 "$p" 2>/dev/null || break; sleep 0.1
			done
		done
		nsr_start nsrd ;;
	*)
		kill -KILL "$(cat "$ROOT/logs/$v.pid")" 2>/dev/null ;;
	esac
}

# probe_save R [SAVE ARGS] - a small save that must be admitted and
# complete: the slot is free.  A device whose mover was killed again and
# again is held by nsrsnmd's crash-loop throttle (see nsrsnmd(8)); while
# it says so, try again (bounded: 40 s).
probe_save() {
	local r=$1 out i
	shift
	mkdir -p "$W/probe$r"
	echo "$r" >"$W/probe$r/f"
	for i in $(seq 1 20); do
		# A leaked slot would queue the probe (nsrd queues at its
		# parallelism): 60 s at most, and it must not have waited.
		out=$(timeout 60 "$BIN/save" -s $S -q "$@" "$W/probe$r" 2>&1) &&
			! grep -q "server parallelism" <<<"$out" && return 0
		grep -q "keeps failing right after its start" <<<"$out" || break
		sleep 2
	done
	echo "$out" | sed 's/^/#   probe: /'
	return 1
}

# wait_until SECS CMD... - poll CMD every 0.1 s until it succeeds.  Its
# arguments are expanded once, by the caller: to poll a figure, pass a
# command that asks for it (no_active_jobs), not test "$(figure)".
wait_until() {
	local n=$(($1 * 10)) i
	shift
	for i in $(seq 1 "$n"); do
		"$@" && return 0
		sleep 0.1
	done
	"$@"
}
