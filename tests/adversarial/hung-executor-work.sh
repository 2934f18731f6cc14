#!/usr/bin/env bash
# A worker whose executor hangs (fault injection, and no watchdog to kill
# it) while it serves a coordinator beside a healthy worker: it must take
# no more work. Checked and printed over WATCH_S seconds once the hang is
# noticed: the hung worker does not connect again, no job of the run stays
# assigned to it (its window went back to the coordinator at once), the
# healthy worker completes the run with every job counted once, and the
# hung worker says so in its log.
#
#   hung-executor-work.sh CLUSTER WORKER JOBS_INSPECT
set -euo pipefail

cluster=$1 worker=$2 inspect=$3
JOBS=4000 WATCH_S=6
unset NOTIFY_SOCKET WATCHDOG_USEC WATCHDOG_PID STATE_DIRECTORY RUNTIME_DIRECTORY SDLIVE_NODE \
      SDLIVE_WEDGE_FILE SDLIVE_HANG_EXECUTOR_FILE SDLIVE_SPIN_ELECTION_FILE CREDENTIALS_DIRECTORY

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
adv_begin hung-work
T=$work
url=sqlite:$T/cluster.db
"$cluster" --store "$url" --node a --lease 5s --election-poll 200ms --maintenance-interval 1h \
  --coordinator-socket "$T/c.sock" --job-run "$JOBS" --job-payload "spin 2000" \
  --worker-timeout 1500ms --worker-heartbeat 500ms >"$T/cluster.log" 2>&1 &
pids+=($!)
wait_for 20000 "the coordinator serving" grep -q "coordinator: serving" "$T/cluster.log"
link=(--coordinator "$T/c.sock" --coordinator-timeout 1500ms --heartbeat 500ms --reconnect-max 200ms)
"$worker" "${link[@]}" --identity hung --hang-executor-file "$T/hang" --no-progress-check \
  >"$T/hung.log" 2>&1 &
pids+=($!)
connections() { grep -c "coordinator: worker $1 connected" "$T/cluster.log" || true; }
wait_for 20000 "the worker 'hung' served" grep -q "coordinator: worker hung connected" "$T/cluster.log"
sleep 0.3
touch "$T/hang"
hung_at=$(now_ms)
"$worker" "${link[@]}" --identity healthy >"$T/healthy.log" 2>&1 &
pids+=($!)

# The hang is noticed within a heartbeat interval or a reap; then watch.
left() { grep -q "coordinator: worker hung disconnected" "$T/cluster.log"; }
wait_for 10000 "the hung worker leaving" left
noticed_ms=$(($(now_ms) - hung_at))
before=$(connections hung)
held_max=0 samples=0
end=$(($(now_ms) + WATCH_S * 1000))
while (($(now_ms) < end)); do
  held=$("$inspect" "$url" held hung 2>/dev/null || echo 0)
  ((held > held_max)) && held_max=$held
  samples=$((samples + 1))
  sleep 0.2
done
again=$(($(connections hung) - before))
echo "hung executor: left the coordinator ${noticed_ms} ms after the hang; over the next ${WATCH_S} s" \
     "it connected $again more time(s) and held at most $held_max job(s) ($samples samples)"
((again == 0)) || fail "the worker with a hung executor connected $again more time(s) and took work"
((held_max == 0)) || fail "the worker with a hung executor held $held_max job(s)"
grep -q "executor stuck on job" "$T/hung.log" || fail "the hung worker never said its executor is stuck"

wait_for 60000 "run 1 complete" grep -q "run 1 complete" "$T/cluster.log"
summary=$("$inspect" "$url")
echo "store: $summary"
[[ $summary == "total=$JOBS done_count=$JOBS jobs_done=$JOBS missing=0 "* ]] ||
  fail "run not complete or not counted once"
echo PASS
