#!/bin/bash
# 200-jobd: nsrjobd records jobs sent through the client library (the
# calls nsrd, save and recover make), jobquery prints them (golden output,
# and byte for byte what the jobs db library prints locally), query
# mistakes are reported by column, and jobs left active by a dead server
# are marked failed at the next start (which also moves a database of the
# older layout, res/jobsdb, into jobs/).
. "$(dirname "$0")/lib.sh"
nsr_setup 200-jobd
T=$BIN/jobd_testclnt
DB=$ROOT/jobs/jobsdb

nsr_start nsrexecd
nsr_start nsrjobd
JOBD_PID=${PIDS[-1]}

# --- Jobs, created the way nsrd/save/recover create them. ---------------
id1=$("$T" create type="save job" client=web01 name=/home level=full \
	group=Default host=server1 pid=4242 start=1700000000 \
	command="save -s server1 -l full /home" log="saving /home")
check "create returns job id 1" test "$id1" = 1
check "update: completed with counts" "$T" update 1 state=completed \
	status=succeeded end=1700000600 bytes=1048576 files=321 \
	ssids="4001 4002" log="completed: 321 files, 1 MB"
id2=$("$T" create type="recover job" client=db1 name=/var/lib state=active \
	start=1700001000 log="recovering /var/lib")
check "second job gets id 2" test "$id2" = 2
id3=$("$T" create type="save job" parent=1 client=web01 name=/etc \
	state=failed status="cannot open /etc/shadow: permission denied" \
	start=1700000100 end=1700000200 log='error; "quoted" \ back')
check "third job gets id 3" test "$id3" = 3
expect_fail "update of an unknown job fails" "$T" update 99 state=failed
out=$("$T" log 99 hello 2>&1)
check "log to an unknown job names it" grep -q "cannot log to job 99: no such job" <<<"$out"

# --- Golden nsradmin output. ---------------------------------------------
cat >"$ROOT/q1" <<'EOF'
. type: save job
show job id; name; client; job state; completion status; job log
print
EOF
cat >"$ROOT/q1.expected" <<'EOF'
                      job id: 1;
                        name: /home;
                      client: web01;
                   job state: COMPLETED;
           completion status: succeeded;
                     job log: saving /home,
                              "completed: 321 files, 1 MB";

                      job id: 3;
                        name: /etc;
                      client: web01;
                   job state: FAILED;
           completion status: cannot open /etc/shadow: permission denied;
                     job log: "error; \"quoted\" \\ back";

EOF
"$BIN/jobquery" <"$ROOT/q1" >"$ROOT/q1.out" 2>&1
check "jobquery exits 0" test $? = 0
check "jobquery output matches the golden file" diff -u "$ROOT/q1.expected" "$ROOT/q1.out"
"$BIN/jobquery" -i "$ROOT/q1" >"$ROOT/q1.i.out" 2>&1
check "jobquery -i file prints the same" cmp "$ROOT/q1.out" "$ROOT/q1.i.out"

# --- Golden JSON lines. --------------------------------------------------
cat >"$ROOT/q2.expected" <<'EOF'
{"job id":1,"parent job id":0,"type":"save job","job state":"COMPLETED","bytes":1048576,"ssids":"4001 4002","end time":1700000600}
{"job id":3,"parent job id":1,"type":"save job","job state":"FAILED","bytes":0,"ssids":null,"end time":1700000200}
EOF
printf 'show job id; parent job id; type; job state; bytes; ssids; end time\nprint job state: completed, failed\n' |
	"$BIN/jobquery" -x json >"$ROOT/q2.out" 2>&1
check "jobquery -x json matches the golden file" diff -u "$ROOT/q2.expected" "$ROOT/q2.out"

# --- Over RPC == the library locally, every attribute. -------------------
printf 'print\n' | "$BIN/jobquery" >"$ROOT/all.rpc"
printf 'print\n' | "$T" print-db "$DB" >"$ROOT/all.lib"
check "all attributes over RPC are byte for byte the library's" cmp "$ROOT/all.rpc" "$ROOT/all.lib"
check "and that is three jobs" test "$(grep -c '^ *job id:' "$ROOT/all.rpc")" = 3

# --- Mistakes. -----------------------------------------------------------
printf '. job stat: completed\nprint\n' | "$BIN/jobquery" >"$ROOT/bad.out" 2>&1
check "a bad attribute makes jobquery exit 1" test $? = 1
check "and the message names line and column" grep -q "stdin line 1, column 3: unknown attribute" "$ROOT/bad.out"
check "and a caret points at it" grep -qx '  ^' "$ROOT/bad.out"
out=$("$T" query $'. client: web01\nshow job id; nme\nprint' 2>&1)
check "nsrjobd itself reports line and column" grep -q "line 2, column 14: unknown attribute 'nme'" <<<"$out"
out=$(printf 'print client: nobody\n' | "$BIN/jobquery")
check "an empty result says so" test "$out" = 'No jobs found for query: client: "nobody"'
"$BIN/jobquery" --help >"$ROOT/help.out"
check "jobquery --help exits 0" test $? = 0
check "and shows the usage" grep -q "^usage: jobquery \[-s server\] \[-i file\] \[-x json\]$" "$ROOT/help.out"
"$BIN/jobquery" -q >/dev/null 2>&1
check "a bad option exits 2" test $? = 2
out=$(NSR_PORTMAP_PORT=$(free_port) "$BIN/jobquery" </dev/null 2>&1)
check "no nsrjobd: exit 1" test $? = 1
check "and the message says which server" grep -q "cannot reach nsrjobd on host localhost" <<<"$out"

# --- The log codec of job_row (hostile input from the network). ---------
out=$("$T" codec 2>&1)
check "job_row.log codec: round trips, garbage rejected ($out)" grep -q "^codec ok" <<<"$out"

# --- Restart: the active job is marked failed. ---------------------------
# The database is also put back where older versions kept it (res/, with
# the WAL the kill left): nsrjobd moves it to jobs/ first, log included.
kill -KILL "$JOBD_PID"
for i in $(seq 1 50); do kill -0 "$JOBD_PID" 2>/dev/null || break; sleep 0.1; done
for f in "$DB" "$DB-wal" "$DB-shm"; do
	[ -e "$f" ] && mv "$f" "$ROOT/res/$(basename "$f")"
done
nsr_start nsrjobd
nsr_wait_answers nsrjobd
check "a jobs database in res/ (older layout) is moved to jobs/" \
	test -f "$DB" -a ! -e "$ROOT/res/jobsdb" -a ! -e "$ROOT/res/jobsdb-wal"
check "and the log says so" grep -q "jobs database moved from $ROOT/res/jobsdb to $DB" \
	"$ROOT/logs/daemon.log"
# An older database beside the one in use is left alone, and said.
printf 'not a database\n' >"$ROOT/res/jobsdb"
JOBD_PID=${PIDS[-1]}
kill -TERM "$JOBD_PID"
for i in $(seq 1 50); do kill -0 "$JOBD_PID" 2>/dev/null || break; sleep 0.1; done
nsr_start nsrjobd
nsr_wait_answers nsrjobd
check "an older jobs database beside jobs/jobsdb is left as it is" \
	grep -qx 'not a database' "$ROOT/res/jobsdb"
check "saying so" grep -q "$ROOT/res/jobsdb (the older layout) is left as it is" \
	"$ROOT/logs/daemon.log"
out=$(printf 'show job id; job state; completion status; job log\nprint job id: 2\n' | "$BIN/jobquery")
check "job 2 (active when nsrjobd died) is now FAILED" grep -q "job state: FAILED;" <<<"$out"
check "with the reason as its status" grep -q "completion status: interrupted: server restarted;" <<<"$out"
check "and in its log" grep -q "interrupted: server restarted" <<<"$(grep -A2 'job log' <<<"$out")"
out=$(printf 'show job id; job state\nprint job id: 1\n' | "$BIN/jobquery")
check "a finished job is left alone" grep -q "job state: COMPLETED;" <<<"$out"
nsr_done
