#!/usr/bin/env bash
# At-least-once jobs under the real manager (docs/jobs.md): two instances of
# the shipped sdlive-cluster@.service (a and b) coordinate; three workers run
# as copies of the shipped sdlive-worker.service (sdlive-jobworker-N), all
# with the shipped sandbox. Times scaled: WatchdogSec=1s, lease 3s, worker
# timeout 1s, heartbeats 300ms; jobs of 10 ms busy work, so a run lasts a
# few seconds and the faults land mid-run. Each scenario is a fresh run of N jobs:
#   1. SIGKILL a worker: restarted by systemd;
#   2. SIGSTOP a worker (half-open): reaped within timeout + one poll, then
#      SIGCONT — it carries on, its late RESULTs are harmless;
#   3. wedge a worker's main loop: the watchdog kills it (ABRT), restart;
#   4. SIGKILL the leader: the standby takes over and resumes the run;
#   5. wedge the leader's main loop: the watchdog kills it, failover.
# After each: every job done, done_count == N exactly, at least one job
# redelivered, no overlap of two leaders' writes.
#
# Workers reach the coordinator's unix socket across the sandbox: both run
# as the cluster's user (User=sdlive-cluster in a drop-in), since with
# PrivateUsers= a peer of another uid shows up as the overflow uid.
source "$(dirname -- "${BASH_SOURCE[0]}")/harness.sh"
harness_start "$@"
harness_units_install

N=${SDLIVE_E2E_JOBS:-1000}
TIMEOUT_MS=1000 HEARTBEAT_MS=300
REAP_BOUND_MS=$((TIMEOUT_MS + HEARTBEAT_MS + 300))
[[ -n $(harness_unit_of cluster) && -n $(harness_unit_of worker) ]] ||
  harness_fail "this build ships no sdlive-cluster@.service or sdlive-worker.service"
inspect_bin=$SDLIVE_BUILD_DIR/tests/coordinator/jobs-inspect
[[ -x $inspect_bin ]] || harness_fail "$inspect_bin is missing: build the jobs-inspect target"

J=$HARNESS_RUN/jobs
mkdir -m 1777 -- "$J"
url=sqlite:$(harness_state_dir cluster)/cluster.db
A=sdlive-cluster@a.service B=sdlive-cluster@b.service
WORKERS=(sdlive-jobworker-1.service sdlive-jobworker-2.service sdlive-jobworker-3.service)

inspect() { "$inspect_bin" "$url" 2>/dev/null; }
field() { inspect | tr ' ' '\n' | sed -n "s/^$1=//p"; }
done_count() { local d; d=$(field done_count); echo "${d:-0}"; }
done_at_least() { (($(done_count) >= $1)); }
holder() { local h; h=$(field holder); [[ $h == - ]] || echo "$h"; }
holder_is() { [[ $(holder) == "$1" ]]; }
# read_held <worker>: HELD = the jobs of run 1 in flight at the worker. A
# store that cannot be read fails the test; it never reads as "holds nothing"
# (which would pass for a reap).
read_held() {
  local out
  out=$("$inspect_bin" "$url" held "$1" 2>&1) && [[ $out =~ ^[0-9]+$ ]] ||
    harness_fail "cannot read the jobs $1 holds from the store: ${out:-jobs-inspect failed}"
  HELD=$out
}
holds_nothing() { read_held "$1" && ((HELD == 0)); }
# new_term <generation>: someone holds the lease with a later generation.
new_term() { [[ -n $(holder) ]] && (($(field generation) > $1)); }
unit_of_node() { echo "sdlive-cluster@$1.service"; }

for node in a b; do
  harness_exec_start "$(unit_of_node "$node")" --lease 3s --election-poll 500ms --maintenance-interval 1h \
    --coordinator-socket "$J/$node.sock" --worker-timeout ${TIMEOUT_MS}ms --worker-heartbeat ${HEARTBEAT_MS}ms \
    --job-run "$N" --job-payload "\"spin 10000\""
  harness_dropin "$(unit_of_node "$node")" 30-jobs "ReadWritePaths=$J"
done
i=0
for unit in "${WORKERS[@]}"; do
  i=$((i + 1))
  harness_worker_copy "$unit" --coordinator "$J/a.sock" --coordinator "$J/b.sock" --identity "w$i" \
    --coordinator-timeout ${TIMEOUT_MS}ms --heartbeat ${HEARTBEAT_MS}ms --reconnect-max 300ms
done
harness_reload

# fresh_run: everything stopped, an empty store, a leads and creates run 1.
fresh_run() {
  systemctl --user stop "${WORKERS[@]}" "$A" "$B"
  rm -f -- "$(harness_state_dir cluster)"/cluster.db*
  harness_start_units "$A"
  harness_wait 10 "a leads" holder_is a
  harness_wait 10 "run 1 exists" inspect
  harness_start_units "$B" "${WORKERS[@]}"
  harness_wait 30 "30% of the run done" done_at_least $((N * 3 / 10))
}

# verify <label>: the run completes with every job counted exactly once.
verify() {
  harness_wait 60 "$1: all $N jobs done" done_at_least "$N"
  sleep 0.3 # late RESULTs land
  local line
  line=$(inspect)
  [[ $(field done_count) == "$N" && $(field jobs_done) == "$N" && $(field missing) == 0 ]] ||
    harness_fail "$1: jobs lost or double-counted: $line"
  (($(field redelivered) >= 1)) || harness_fail "$1: no job redelivered: $line"
  [[ $(field overlaps) == 0 ]] || harness_fail "$1: two leaders' writes overlap: $line"
  echo "   store: $line"
}

last_death() { harness_deaths "$1" | tail -n 1; }

# 1 -------------------------------------------------------------------------
fresh_run
unit=${WORKERS[1]}
deaths=$(harness_death_count "$unit")
systemctl --user kill -s SIGKILL --kill-whom=main "$unit"
harness_wait 10 "$unit killed" bash -c "(( \$(wc -l < '$HARNESS_LOG_DIR/deaths/$unit') > $deaths ))"
[[ $(last_death "$unit") == "signal killed KILL" ]] || harness_fail "$unit died as \"$(last_death "$unit")\""
harness_wait 10 "$unit restarted" harness_prop_is "$unit" ActiveState active
echo "1. SIGKILL of $unit mid-run: restarted by systemd"
verify kill

# 2 -------------------------------------------------------------------------
unit=${WORKERS[0]}
harness_dropin "$unit" 40-pause "WatchdogSec=30s" # a frozen process cannot pet
harness_reload
fresh_run
pid=$(harness_prop "$unit" MainPID)
kill -STOP "$pid"
t0=$(harness_now_us)
sleep 0.05
read_held w1
n=$HELD
harness_wait 10 "the frozen w1 reaped" holds_nothing w1
ms=$(harness_ms_since "$t0")
((n > 0)) || harness_fail "w1 held no job when frozen: the fault came too late"
((ms <= REAP_BOUND_MS)) || harness_fail "frozen w1 reaped after ${ms} ms > ${REAP_BOUND_MS} ms"
sleep 0.5
offset=$(wc -l <"$HARNESS_LOG_DIR/$unit.log")
kill -CONT "$pid"
reconnected() { tail -n "+$((offset + 1))" -- "$HARNESS_LOG_DIR/$unit.log" | grep -q "connected to the coordinator"; }
harness_wait 10 "w1 serves again" reconnected
sleep 0.3
harness_expect "$unit" NRestarts 0
late=$(tail -n "+$((offset + 1))" -- "$HARNESS_LOG_DIR/$unit.log" | grep -c "late RESULT" || true)
echo "2. SIGSTOP of $unit holding $n job(s): reaped after ${ms} ms (bound timeout + one poll + slack" \
  "= ${REAP_BOUND_MS} ms); SIGCONT: it carries on ($late late-RESULT line(s) logged)"
verify stop
rm -f -- "$HARNESS_UNIT_HOME/$unit.d/40-pause.conf"
harness_reload

# 3 -------------------------------------------------------------------------
fresh_run
unit=${WORKERS[2]}
deaths=$(harness_death_count "$unit")
touch -- "$(harness_wedge_file "$unit")"
t0=$(harness_now_us)
harness_wait 10 "$unit killed by the watchdog" bash -c "(( \$(wc -l < '$HARNESS_LOG_DIR/deaths/$unit') > $deaths ))"
ms=$(harness_ms_since "$t0")
rm -f -- "$(harness_wedge_file "$unit")"
[[ $(last_death "$unit") =~ ^watchdog\ (killed|dumped)\ ABRT$ ]] ||
  harness_fail "$unit died as \"$(last_death "$unit")\", expected watchdog ABRT"
harness_wait 10 "$unit restarted" harness_prop_is "$unit" ActiveState active
echo "3. wedged main loop of $unit: watchdog ABRT after ${ms} ms, restarted"
verify wedge

# 4 -------------------------------------------------------------------------
fresh_run
leader=$(holder) generation=$(field generation)
systemctl --user kill -s SIGKILL --kill-whom=main "$(unit_of_node "$leader")"
t0=$(harness_now_us)
harness_wait 15 "a new term after the killed $leader" new_term "$generation"
ms=$(harness_ms_since "$t0")
echo "4. SIGKILL of the leader $leader mid-run: $(holder) leads after ${ms} ms (lease 3 s)"
verify failover

# 5 -------------------------------------------------------------------------
fresh_run
leader=$(holder) generation=$(field generation)
unit=$(unit_of_node "$leader")
deaths=$(harness_death_count "$unit")
touch -- "$(harness_wedge_file "$unit")"
t0=$(harness_now_us)
harness_wait 15 "the wedged $leader killed by the watchdog" \
  bash -c "(( \$(wc -l < '$HARNESS_LOG_DIR/deaths/$unit') > $deaths ))"
rm -f -- "$(harness_wedge_file "$unit")"
[[ $(last_death "$unit") =~ ^watchdog\ (killed|dumped)\ ABRT$ ]] ||
  harness_fail "$unit died as \"$(last_death "$unit")\", expected watchdog ABRT"
harness_wait 15 "a new term after the wedged $leader" new_term "$generation"
echo "5. wedged leader $leader: watchdog ABRT, $(holder) leads after $(harness_ms_since "$t0") ms"
verify leader-wedge

echo "PASS"
