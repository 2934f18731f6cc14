#!/usr/bin/env bash
# A PostgreSQL role that may connect sends release announcements
# (pg_notify on the members' channel) as fast as it can for 5 s: the
# standby makes at most 10 announcement-driven attempts a second, and a
# real release (the leader stopped) still wakes it within a second.
#
#   pg-announce-flood.sh SDLIVE_CLUSTER_BINARY PG_SERVER_SH
set -euo pipefail

bin=$1 pg_server=$2
FLOOD_S=5 ATTEMPTS_PER_S_MAX=10 TAKEOVER_MS_MAX=1000
unset NOTIFY_SOCKET WATCHDOG_USEC WATCHDOG_PID
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
adv_begin pg-announce 755
adv_on_exit() { bash "$pg_server" stop "$work/pg" >/dev/null 2>&1; }
holder_is() { "$bin" --store "$url" --inspect 2>/dev/null | grep -q "^lease=cluster held=1 holder=$1 "; }

mkdir -p "$work/pg"
bash "$pg_server" start "$work/pg" >/dev/null
url=$(bash "$pg_server" url "$work/pg")
start() {
  "$bin" --store "$url" --node "$1" --lease 3s --election-poll 2s --lease-record "" >>"$work/$1.log" 2>&1 &
  pids+=($!)
  eval "pid_$1=$!"
}
start a
wait_for 10000 "a leads" holder_is a
start b
wait_for 5000 "b is standby" log_has b 'standby: lease "cluster" held by a'

# The flood: one session sending announcements back to back.
/usr/bin/python3 - "${url#postgresql:}" "$FLOOD_S" <<'PY' &
import subprocess, sys, time
p = subprocess.Popen(["psql", "-X", "-q", "-t", "-A", sys.argv[1]], stdin=subprocess.PIPE,
                     stdout=subprocess.DEVNULL, text=True)
end = time.monotonic() + float(sys.argv[2]) + 1
while time.monotonic() < end:
    p.stdin.write("SELECT pg_notify('sdlive_lease_released', 'cluster');\n" * 20)
    p.stdin.flush()
    time.sleep(0.001)
p.stdin.close()
p.wait()
PY
flood=$!
pids+=($flood)
sleep 0.5
before=$(count b 'a release was announced') t0=$(now_ms)
sleep "$FLOOD_S"
after=$(count b 'a release was announced') elapsed=$(($(now_ms) - t0))
wait "$flood" || true
attempts=$((after - before))
bound=$((ATTEMPTS_PER_S_MAX * elapsed / 1000 + 1))
echo "postgresql announce-flood: ${attempts} announcement-driven attempts in ${elapsed} ms (bound ${bound})"
((attempts <= bound)) || fail "the flood drove $attempts attempts"
((attempts >= 2 * FLOOD_S)) || fail "only $attempts announcement-driven attempts counted: is the flood seen?"
holder_is a || fail "the flood moved the lease"

# A real release still wakes the standby at once.
sleep 0.5
t0=$(now_ms)
kill -TERM "$pid_a"
wait_for 5000 "b leads" holder_is b
took=$(($(now_ms) - t0))
echo "postgresql announce-flood: after the flood, b leads ${took} ms after a was stopped (bound ${TAKEOVER_MS_MAX} ms)"
((took <= TAKEOVER_MS_MAX)) || fail "takeover after a release took ${took} ms"
echo PASS
