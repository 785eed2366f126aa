#!/bin/bash
# 300-roundtrip: the walking skeleton end to end on a private datazone.
# Label an AFTD volume, save a tree holding every supported file type,
# see the save set in mminfo and the job in jobquery, recover it by path
# (-a) and by save set id (-S), compare contents and metadata; then the
# error cases: missing path, server down, no writable volume, full
# volume, a second nsrd on the same root, a malformed resource -- each
# must fail clearly and leave the databases as they were.
. "$(dirname "$0")/lib.sh"
nsr_setup 300-roundtrip
S=127.0.0.1
W=$ROOT/work
mkdir -p "$W"

nsr_start_datazone

# --- a device and a labeled volume ---------------------------------------
mkdir -p "$W/aftd1"
"$BIN/nsradmin" -s $S -i - <<EOF >"$W/nsradmin.out" 2>&1
create type: NSR device; name: aftd1; media type: adv_file; device access information: $W/aftd1
