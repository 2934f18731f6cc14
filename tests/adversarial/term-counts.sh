#!/usr/bin/env bash
# The figures a leader logs at the end of its term agree with the store:
# ROUNDS times, a leader on a fresh store serves WORKERS workers doing noop
# jobs of a large run at full speed and is stopped (SIGTERM) in the middle
# of it, RESULTs in flight; its "term over: ... N counted" must equal the
# store's done count (one term per store), and a "run complete" line must
# never say more than the store. Printed: each round's figures.
#
#   term-counts.sh CLUSTER WORKER
set -euo pipefail

cluster=$1 worker=$2
ROUNDS=4 WORKERS=6 JOBS=100000 RUN_MS=2000
unset NOTIFY_SOCKET WATCHDOG_USEC WATCHDOG_PID STATE_DIRECTORY RUNTIME_DIRECTORY SDLIVE_NODE \
      SDLIVE_WEDGE_FILE SDLIVE_HANG_EXECUTOR_FILE SDLIVE_SPIN_ELECTION_FILE CREDENTIALS_DIRECTORY

ADV_LOGS=*/cluster.log
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
adv_begin term-counts
T=$work

disagree=0
for round in $(seq "$ROUNDS"); do
  d=$T/$round
  mkdir "$d"
  url=sqlite:$d/cluster.db
  "$cluster" --store "$url" --node a --lease 10s --election-poll 200ms --maintenance-interval 1h \
    --coordinator-socket "$d/c.sock" --job-run "$JOBS" --job-payload noop >"$d/cluster.log" 2>&1 &
  leader=$!
  pids+=("$leader")
  wait_for 20000 "the coordinator serving" grep -q "coordinator: serving" "$d/cluster.log"
  workers=()
  for i in $(seq "$WORKERS"); do
    "$worker" --coordinator "$d/c.sock" --identity "w$i" >"$d/w$i.log" 2>&1 &
    workers+=($!)
    pids+=($!)
  done
  served() { (($(grep -c "coordinator: worker w[0-9]* connected" "$d/cluster.log") >= WORKERS)); }
  wait_for 20000 "every worker served" served
  sleep "$((RUN_MS / 1000)).$((RUN_MS % 1000))"
  kill -TERM "$leader"
  wait "$leader" || true
  kill -TERM "${workers[@]}" 2>/dev/null || true
  wait "${workers[@]}" 2>/dev/null || true
  line=$(grep -o "term over: [0-9]* jobs assigned, [0-9]* counted" "$d/cluster.log") ||
    fail "round $round: no term-over line"
  counted=$(sed -n 's/.* \([0-9]*\) counted/\1/p' <<<"$line")
  # The run is still being created: read its count and its done rows.
  read -r stored rows < <(/usr/bin/python3 -c '
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(db.execute("SELECT done_count FROM runs WHERE id = 1").fetchone()[0],
      db.execute("SELECT count(*) FROM jobs WHERE run = 1 AND status = ?", ("done",)).fetchone()[0])
' "$d/cluster.db")
  ((stored == rows)) || fail "round $round: the store counts $stored but has $rows jobs done"
  echo "round $round: leader logged \"$line\"; the store says $stored done ($rows jobs done)"
  ((stored > 0)) || fail "round $round: no job done: the run proves nothing"
  if ((counted != stored)); then
    disagree=$((disagree + 1))
    echo "round $round: the term's count disagrees with the store by $((stored - counted))"
  fi
  complete=$(sed -n 's/.*run 1 complete: \([0-9]*\) jobs.*/\1/p' "$d/cluster.log")
  [[ -z $complete ]] || ((complete <= stored)) || fail "round $round: run complete with $complete, store $stored"
done
((disagree == 0)) || fail "$disagree of $ROUNDS terms logged a count the store does not have"
echo PASS
