#!/bin/bash
# SPDX-License-Identifier: MIT
#
# A leader whose coordinator cannot start keeps its lease and generation and
# retries with a growing backoff, saying so in STATUS=; it does not loop
# through elections. Two runtime causes: the socket's directory is missing,
# and RLIMIT_NOFILE too low for the coordinator (the lowest limit that
# still lets the member win and hold the lease is searched for).
#
# Usage: services-backoff.sh CLUSTER
set -u

CLUSTER=$1
RUN_SECONDS=4
unset WATCHDOG_USEC WATCHDOG_PID STATE_DIRECTORY RUNTIME_DIRECTORY SDLIVE_NODE \
      SDLIVE_WEDGE_FILE SDLIVE_SPIN_ELECTION_FILE

TMP=$(mktemp -d /tmp/sdlive-backoff.XXXXXX)
LISTENER=
cleanup() {
        [ -n "$LISTENER" ] && kill "$LISTENER" 2>/dev/null
        rm -rf "$TMP"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# A stand-in for the manager's notify socket: every datagram, one per line.
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a") as out:
    while True:
        out.write(s.recv(8192).decode(errors="replace").replace("\n", " | ") + "\n")
        out.flush()
' "$TMP/notify" "$TMP/notify.log" &
LISTENER=$!
for _ in $(seq 50); do [ -S "$TMP/notify" ] && break; sleep 0.1; done
[ -S "$TMP/notify" ] || fail "notify listener did not start"

# run NAME [PREFIX...] -- ARGS...: one member for $seconds (RUN_SECONDS by
# default), then SIGTERM.
run() {
        local name=$1; shift
        local prefix=()
        while [ "$1" != -- ]; do prefix+=("$1"); shift; done
        shift
        rm -f "$TMP/$name".db* && : >"$TMP/notify.log"
        NOTIFY_SOCKET=$TMP/notify "${prefix[@]}" "$CLUSTER" --store "sqlite:$TMP/$name.db" --node a \
                --lease 1s --election-poll 100ms --job-run 10 "$@" >"$TMP/$name.log" 2>&1 &
        local pid=$!
        sleep "${seconds:-$RUN_SECONDS}"
        kill -TERM "$pid" 2>/dev/null
        wait "$pid"
}

# check NAME: one election, generation 1, a few start attempts with a
# growing delay, and STATUS= saying the coordinator is down.
check() {
        local name=$1 elections generation attempts
        elections=$(grep -c 'elected: leading' "$TMP/$name.log")
        generation=$("$CLUSTER" --store "sqlite:$TMP/$name.db" --inspect | sed -n 's/.*generation=\([0-9]*\).*/\1/p')
        attempts=$(grep -c 'leader service coordinator failed to start' "$TMP/$name.log")
        echo "$name: $elections election(s), generation $generation, $attempts start attempt(s) in ${RUN_SECONDS}s"
        grep -o 'retrying in [0-9a-z.]* (attempt [0-9]*)' "$TMP/$name.log" | sed 's/^/    /'
        if [ "$elections" != 1 ] || [ "$generation" != 1 ]; then
                sed 's/^/    /' "$TMP/$name.log" | head -30
                fail "$name: the generation churned ($elections elections, generation $generation)"
        fi
        # 1 s, then 2 s later: at most 3 attempts in 4 s (the old loop made dozens).
        [ "$attempts" -ge 2 ] && [ "$attempts" -le 3 ] ||
                fail "$name: $attempts start attempts in ${RUN_SECONDS}s, expected 2 to 3 (backoff 1s, 2s)"
        grep -q 'retrying in 1s (attempt 1)' "$TMP/$name.log" &&
                grep -q 'retrying in 2s (attempt 2)' "$TMP/$name.log" || fail "$name: the backoff does not grow"
        grep -q '^STATUS=leader (generation 1): coordinator down (.*), attempt [0-9]* failed; retrying in' "$TMP/notify.log" || {
                cat "$TMP/notify.log"; fail "$name: STATUS= never said the coordinator is down"; }
}

run missing-dir -- --coordinator-socket "$TMP/missing/coordinator.sock"
check missing-dir

# The lowest descriptor limit under which the member still leads.
found=
# probe N: runs a member under RLIMIT_NOFILE=N until it has led and tried
# the coordinator, has exited, or 3 s have passed.
probe() {
        rm -f "$TMP"/probe.db*
        prlimit --nofile="$1:$1" "$CLUSTER" --store "sqlite:$TMP/probe.db" --node a --lease 1s \
                --election-poll 100ms --job-run 10 --coordinator-socket "$TMP/c-$1.sock" \
                >"$TMP/probe.log" 2>&1 &
        local pid=$! i
        for i in $(seq 60); do
                kill -0 "$pid" 2>/dev/null || break
                grep -q 'leader service coordinator failed to start\|coordinator: serving' "$TMP/probe.log" && break
                sleep 0.05
        done
        kill -TERM "$pid" 2>/dev/null
        wait "$pid"
}
# Descriptors the coordinator needs come on top of those the member needs
# to lead: between the lowest limit that leads and the lowest that serves
# lies a window where it leads without a coordinator. Its middle is used,
# away from the edges where a run may land on either side.
lo= hi=
for n in $(seq 8 60); do
        probe "$n"
        if [ -z "$lo" ] && grep -q 'leader service coordinator failed to start' "$TMP/probe.log"; then
                lo=$n
        elif grep -q 'coordinator: serving' "$TMP/probe.log"; then
                hi=$n
                break
        fi
done
[ -n "$lo" ] && [ -n "$hi" ] || fail "no RLIMIT_NOFILE from 8 to 60 leads without a coordinator (lo=$lo hi=$hi)"
found=$(( (lo + hi - 1) / 2 ))
[ "$found" -ge "$lo" ] || found=$lo
echo "RLIMIT_NOFILE: leads without a coordinator from $lo, serves from $hi; using $found"
run nofile prlimit --nofile="$found:$found" -- --coordinator-socket "$TMP/c.sock"
check nofile
echo "PASS"
