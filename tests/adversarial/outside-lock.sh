#!/usr/bin/env bash
# Another client holds a lock on the store while a busy leader serves 3
# workers, its watchdog scaled to WATCHDOG_USEC 2 s (through a private
# NOTIFY_SOCKET): on SQLite `BEGIN EXCLUSIVE`, on PostgreSQL
# `LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE` from psql, each held 6 s, so
# that the lease may be lost and the coordinator stopped and started again
# while the lock is held. Checked and printed:
#   1. the leader's keepalives (WATCHDOG=1) never stop for longer than
#      WatchdogSec/2 from the lock to 3 s after it ends: no store call the
#      main loop waits for, stopping and starting services included, waits
#      longer than WatchdogSec/4;
#   2. a stop requested while the lock is held (SIGTERM) stops the
#      coordinator within WatchdogSec/2 as well, and the process exits
#      within WatchdogSec (it also releases the lease behind the lock);
#   On PostgreSQL the lease is kept throughout and STATUS= says the
#   coordinator stalled while the lock lasts, and no longer after it;
#   3. no job is lost: once the lock is gone the run completes, every job
#      counted once (a new leader requeues what could not be requeued).
#
#   outside-lock.sh CLUSTER WORKER JOBS_INSPECT [PG_SERVER_SH]
# With PG_SERVER_SH the store is a private PostgreSQL server.
set -euo pipefail

cluster=$1 worker=$2 inspect=$3 pg_server=${4:-}
PY=/usr/bin/python3
WATCHDOG_USEC=2000000
GAP_MAX_MS=$((WATCHDOG_USEC / 2000))
LOCK_S=6 JOBS=20000
unset NOTIFY_SOCKET WATCHDOG_PID STATE_DIRECTORY RUNTIME_DIRECTORY SDLIVE_NODE SDLIVE_WEDGE_FILE \
      SDLIVE_HANG_EXECUTOR_FILE SDLIVE_SPIN_ELECTION_FILE CREDENTIALS_DIRECTORY

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
adv_begin outside-lock 755
T=$work
adv_on_exit() { [[ -z $pg_server ]] || bash "$pg_server" stop "$T/pg" >/dev/null 2>&1; }
mono_ms() { $PY -c 'import time; print(int(time.monotonic() * 1000))'; }

if [[ -n $pg_server ]]; then
  mkdir -p "$T/pg"
  bash "$pg_server" start "$T/pg" >/dev/null
  url=$(bash "$pg_server" url "$T/pg")
  backend=postgresql
  psql_args=${url#postgresql:}
else
  url=sqlite:$T/cluster.db
  backend=sqlite
fi

# Every WATCHDOG=1 the leader sends, as monotonic milliseconds.
$PY - "$T/notify.sock" "$T/keepalives" <<'EOF' &
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "w", buffering=1) as out:
    while True:
        data = s.recv(4096)
        lines = data.split(b"\n")
        if b"WATCHDOG=1" in lines:
            out.write("%d\n" % int(time.monotonic() * 1000))
        for line in lines:
            if line.startswith(b"STATUS="):
                with open(sys.argv[2] + ".status", "ab") as st:
                    st.write(b"%d " % int(time.monotonic() * 1000) + line[7:] + b"\n")
EOF
pids+=($!)
wait_for 5000 "the notify listener" test -S "$T/notify.sock"

start_leader() {
  NOTIFY_SOCKET=$T/notify.sock WATCHDOG_USEC=$WATCHDOG_USEC \
    "$cluster" --store "$url" --node a --lease 3s --election-poll 200ms --maintenance-interval 1h \
    --coordinator-socket "$T/c.sock" --job-run "$JOBS" --job-payload "spin 1000" \
    --worker-timeout 3s --worker-heartbeat 1s >>"$T/cluster.log" 2>&1 &
  leader=$!
  pids+=("$leader")
}
start_leader
wait_for 20000 "the coordinator serving" grep -q "coordinator: serving" "$T/cluster.log"
for i in 1 2 3; do
  "$worker" --coordinator "$T/c.sock" --identity "w$i" --coordinator-timeout 3s --heartbeat 1s >"$T/w$i.log" 2>&1 &
  pids+=($!)
done
# Busy: every worker served for a second (reading the store's job rows
# would take longer than that on PostgreSQL).
serving() { (($(grep -c "coordinator: worker w[123] connected" "$T/cluster.log") >= 3)); }
wait_for 30000 "3 workers served" serving
sleep 1

# hold_lock SECONDS: the outside lock, taken before it returns; prints its
# start and end (monotonic ms) to $T/lock.times when released.
hold_lock() {
  rm -f "$T/lock.times" "$T/lock.taken"
  if [[ $backend == sqlite ]]; then
    $PY - "$T/cluster.db" "$1" "$T/lock.taken" "$T/lock.times" <<'EOF' &
import sqlite3, sys, time
db, hold, taken, times = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
con = sqlite3.connect(db, timeout=30, isolation_level=None)
con.execute("BEGIN EXCLUSIVE")
t0 = time.monotonic()
open(taken, "w").close()
time.sleep(hold)
con.execute("COMMIT")
open(times, "w").write("%d %d\n" % (t0 * 1000, time.monotonic() * 1000))
EOF
  else
    $PY - "$psql_args" "$1" "$T/lock.taken" "$T/lock.times" <<'EOF' &
import subprocess, sys, time
conninfo, hold, taken, times = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
p = subprocess.Popen(["psql", "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", conninfo], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, text=True)
p.stdin.write("BEGIN;\nSET lock_timeout = '30s';\nLOCK TABLE jobs IN ACCESS EXCLUSIVE MODE;\n"
              "SELECT 'locked';\n")
p.stdin.flush()
assert p.stdout.readline().strip() == "locked"
t0 = time.monotonic()
open(taken, "w").close()
time.sleep(hold)
p.stdin.write("COMMIT;\n")
p.stdin.close()
p.wait()
open(times, "w").write("%d %d\n" % (t0 * 1000, time.monotonic() * 1000))
EOF
  fi
  locker=$!
  pids+=("$locker")
  wait_for 20000 "the outside lock" test -e "$T/lock.taken"
}

# max_gap FROM_MS TO_MS: the longest time without a keepalive in between.
max_gap() {
  awk -v from="$1" -v to="$2" '
    $1 >= from - 1000 && $1 <= to { if (last && $1 > from && $1 - last > gap) gap = $1 - last; last = $1 }
    END { if (last < to - 1000) gap = 999999; print gap + 0 }' "$T/keepalives"
}

# --- 1. The lock held while serving ------------------------------------
terms_before=$(grep -c "coordinator: term over" "$T/cluster.log" || true)
hold_lock "$LOCK_S"
wait "$locker"
read -r lock_from lock_to <"$T/lock.times"
sleep 3
gap=$(max_gap "$lock_from" $((lock_to + 3000)))
terms=$(($(grep -c "coordinator: term over" "$T/cluster.log" || true) - terms_before))
lost=$(grep -c "lease lost\|lease is no longer ours" "$T/cluster.log" || true)
echo "$backend: outside lock held $((lock_to - lock_from)) ms while serving 3 workers: longest keepalive" \
     "gap ${gap} ms (bound ${GAP_MAX_MS} ms, WatchdogSec $((WATCHDOG_USEC / 1000)) ms);" \
     "coordinator stopped $terms time(s), lease lost $lost time(s)"
((gap <= GAP_MAX_MS)) || fail "keepalives stopped for ${gap} ms (bound ${GAP_MAX_MS} ms)"
kill -0 "$leader" || fail "the leader died"
# On PostgreSQL the lease row is not behind the jobs table: the lease is
# kept, and the leader says in STATUS= that its jobs cannot move.
if [[ $backend == postgresql ]]; then
  ((lost == 0 && terms == 0)) || fail "the lease was lost behind a lock on the jobs table"
  stalled=$(awk -v from="$lock_from" -v to="$lock_to" '$1 >= from && $1 <= to + 1000 && /coordinator stalled/' \
              "$T/keepalives.status" | head -n 1)
  [[ -n $stalled ]] || fail "STATUS= never said the coordinator stalled while the jobs table was locked"
  echo "$backend: said while locked: ${stalled#* }"
  after=$(tail -n 1 "$T/keepalives.status")
  [[ $after != *stalled* ]] || fail "STATUS= still says stalled after the lock: $after"
fi

# --- 2. A stop requested while the lock is held ------------------------
# The coordinator's stop (the "term over" line) comes within WatchdogSec/2
# of the request: the loop notices the stop within a pet interval and the
# stop waits at most WatchdogSec/4 on the store. The process then also
# releases the lease (one more store call behind the lock) and exits.
hold_lock 4
sleep 1
terms=$(grep -c "coordinator: term over" "$T/cluster.log" || true)
t0=$(mono_ms)
kill -TERM "$leader"
term_over() { (($(grep -c "coordinator: term over" "$T/cluster.log" || true) > terms)); }
wait_for 20000 "the coordinator stopping" term_over
stop_ms=$(($(mono_ms) - t0))
wait "$leader" || true
exit_ms=$(($(mono_ms) - t0))
stop_gap=$(max_gap $((t0 - 1000)) "$t0")
echo "$backend: stop requested under the lock: coordinator stopped after ${stop_ms} ms (bound ${GAP_MAX_MS} ms)," \
     "process exited after ${exit_ms} ms (bound $((WATCHDOG_USEC / 1000)) ms), keepalive gap before it ${stop_gap} ms"
((stop_ms <= GAP_MAX_MS)) || fail "the coordinator's stop took ${stop_ms} ms under the lock (bound ${GAP_MAX_MS} ms)"
((exit_ms <= WATCHDOG_USEC / 1000)) || fail "the stop took ${exit_ms} ms under the lock"
((stop_gap <= GAP_MAX_MS)) || fail "keepalives stopped for ${stop_gap} ms before the stop"
wait "$locker"

# --- 3. Nothing lost -----------------------------------------------------
start_leader
wait_for 90000 "run 1 complete" grep -q "run 1 complete" "$T/cluster.log"
summary=$("$inspect" "$url")
echo "$backend: store after the run: $summary"
[[ $summary == "total=$JOBS done_count=$JOBS jobs_done=$JOBS missing=0 "* ]] ||
  fail "run not complete or not counted once"
kill -TERM "$leader"
wait "$leader" || true
echo PASS
