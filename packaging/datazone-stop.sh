#!/bin/sh
# datazone-stop.sh [DIR] - stop the datazone started by quickstart.sh
# (default ./datazone): SIGTERM to nsrd and nsrexecd by pid (they stop the
# daemons they started), waiting up to 30 s for each.
set -eu
DZ=${1:-$(dirname "$0")/../datazone}
for d in nsrd nsrexecd; do
	f=$DZ/nsr/logs/$d.pid
	[ -s "$f" ] || continue
	pid=$(cat "$f")
	kill -TERM "$pid" 2>/dev/null || continue
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	echo "stopped $d (pid $pid)"
done
