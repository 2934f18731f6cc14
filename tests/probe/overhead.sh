#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The cost of sdlive-probe beside an idle daemon: an HTTP probe every
# second against python3's http.server, with a notify socket of our own
# (WatchdogSec 6 s: a keepalive a second) for SECONDS (default 60).
# Prints the probe's CPU time (user + system, from /proc/PID/stat) as a
# share of one core, its RSS (final and peak; of it, private anonymous
# memory, RssAnon, the rest being shared library pages), its PSS, and the
# keepalives received.
#
# Usage: overhead.sh SDLIVE-PROBE [SECONDS]
set -eu
PROBE=$1 SECS=${2:-60}
TMP=$(mktemp -d /tmp/sdlive-probe-overhead.XXXXXX)
PORT=$((20000 + RANDOM % 20000))
trap 'kill $probe $listener 2>/dev/null || true; rm -rf "$TMP"' EXIT

python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1])
n = 0
s.settimeout(1)
end = time.monotonic() + float(sys.argv[2]) + 5
while time.monotonic() < end:
    try:
        n += s.recv(4096).count(b"WATCHDOG=1")
    except socket.timeout:
        pass
    open(sys.argv[3], "w").write(str(n))
' "$TMP/notify" "$SECS" "$TMP/pets" &
listener=$!
sleep 0.5
NOTIFY_SOCKET=$TMP/notify WATCHDOG_USEC=6000000 "$PROBE" --http "http://127.0.0.1:$PORT/" \
        -- python3 -m http.server -b 127.0.0.1 "$PORT" -d "$TMP" >/dev/null 2>"$TMP/log" &
probe=$!
sleep 2
ticks=$(getconf CLK_TCK)
cpu() { awk '{ print $14 + $15 }' "/proc/$probe/stat"; }
start_cpu=$(cpu) start_pets=$(cat "$TMP/pets") peak=0
for _ in $(seq "$SECS"); do
        sleep 1
        rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$probe/status")
        ((rss > peak)) && peak=$rss
done
anon=$(awk '/^RssAnon/ { print $2 }' "/proc/$probe/status")
pss=$(awk '/^Pss:/ { print $2 }' "/proc/$probe/smaps_rollup")
used=$(($(cpu) - start_cpu))
pets=$(($(cat "$TMP/pets") - start_pets))
awk -v t="$used" -v hz="$ticks" -v s="$SECS" -v peak="$peak" -v rss="$rss" -v pets="$pets" \
    -v anon="$anon" -v pss="$pss" 'BEGIN {
        printf "sdlive-probe, 1 s HTTP probe, %d s: CPU %.2f%% of a core (%d ticks at %d Hz); RSS %d KiB (peak %d KiB), of it %d KiB private (RssAnon); PSS %d KiB; %d keepalives\n",
               s, 100 * t / hz / s, t, hz, rss, peak, anon, pss, pets }'
grep -q 'every probe passed: ready' "$TMP/log" || { echo "the probe never passed:"; cat "$TMP/log"; exit 1; }
