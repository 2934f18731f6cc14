#!/usr/bin/env bash
# demo.sh: the whole idea in under a minute. Installs what is missing,
# builds into ./build, starts a private systemd user manager (no effect on
# the host's systemd), runs the reference daemons from the units this build
# ships (WatchdogSec scaled to 2s by drop-ins), wedges the worker's main loop
# and shows systemd killing and restarting it, fails the cluster's leader
# twice (a crash, then a wedge) and times the standby's takeover, runs an
# HTTP server that cannot pet under sdlive-probe and has its hang killed and
# restarted, draws a timeline of each fault (SVG, beside the logs), then
# cleans up. It builds with Debian's flags (-O2, hardening:
# scripts/distro-flags.sh), as the packages do. Every step it shows is also checked: a takeover past its
# bound, a kill that is not the watchdog's, a stop that is not clean or a
# fault without its timeline ends it with exit status 1 (the suite runs it
# as the test e2e.demo).
#
#   scripts/demo.sh            as root; logs stay in build/demo-logs
set -euo pipefail

repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
build=$repo/build
export SDLIVE_BUILD_DIR=$build
export SDLIVE_E2E_LOG_DIR=$build/demo-logs
export SDLIVE_E2E_WATCHDOG=2s

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

# Runs once, before harness_start re-executes this script in its namespace.
if [[ -z ${SDLIVE_E2E_NAMESPACE:-} ]]; then
  say "Installing missing packages and building into build/"
  "$repo/scripts/deps.sh"
  source "$repo/scripts/distro-flags.sh"
  distro_cmake_flags flags "$repo"
  mkdir -p -- "$build"
  if ! { cmake -S "$repo" -B "$build" "${flags[@]}" &&
    cmake --build "$build" -j "$(nproc)"; } >"$build/demo-build.log" 2>&1; then
    tail -n 30 -- "$build/demo-build.log" >&2
    echo "demo: the build failed; full log: build/demo-build.log" >&2
    exit 1
  fi
  echo "built (log: build/demo-build.log)"
fi

# shellcheck source=../tests/e2e/harness.sh
source "$repo/tests/e2e/harness.sh"
# The demo is not a test: without a usable manager, say so and stop.
harness_unavailable() {
  printf '\ndemo: cannot start a private systemd manager: %s\n' "$*" >&2
  printf 'demo: run it as root on Linux with systemd installed.\n' >&2
  exit 1
}
harness_start "$@"

units=()
for daemon in worker cleaner sentinel acceptor; do
  unit=$(harness_unit_of "$daemon")
  [[ -n $unit ]] && units+=("$unit")
done
cluster=$(harness_unit_of cluster node1)
standby=$(harness_unit_of cluster node2)
[[ -n $cluster ]] && units+=("$cluster")
worker=$(harness_unit_of worker)
[[ -n $worker ]] || harness_fail "the worker is not in this build"

say "The shipped units: WatchdogSec= only where the daemon pets"
for unit in $(harness_units); do
  armed=$(grep -m1 '^WatchdogSec=' "$HARNESS_STAGE$HARNESS_UNIT_DIR/$unit" || echo "no WatchdogSec= (never pets)")
  printf '  %-28s %s\n' "$unit" "$armed"
done
echo "  (this demo scales every WatchdogSec= down to $SDLIVE_E2E_WATCHDOG with drop-ins)"

harness_units_install
if [[ -n $cluster ]]; then
  # A killed leader comes back only after the standby has taken over, so the
  # failover shown is the standby's, not a race for the expired lease.
  # An inventory of 5000 blobs gives the leader's maintenance pass work.
  for unit in "$cluster" "$standby"; do
    harness_dropin "$unit" 30-demo "RestartSec=5s"
    harness_exec_start "$unit" "$(harness_scaled_args "$unit") --seed-inventory 5000"
  done
  harness_reload
fi
say "Starting ${#units[@]} daemons under a private systemd manager"
harness_start_units "${units[@]}"
sleep 3
harness_show "${units[@]}"

# The cluster failovers: a second member stands by; the leader crashes (the
# unit's ExecStopPost= releases its lease, the release wakes the standby),
# then the new leader's main loop wedges (its health gate releases the lease
# before the watchdog kills it). Each takeover is timed.
# The bounds each takeover is held to (docs/cluster.md), at the demo's
# scaled times: WatchdogSec=2s, lease 3 s. SLACK_MS covers the measurement
# (the holder is read by spawning --inspect), as in the end-to-end tests.
LEASE_MS=3000 WEDGE_BOUND_MS=$((2000 / 2 + 2000 / 4 + 2000 / 6)) SLACK_MS=300
faults=0
# watchdog_death <unit>: its last death was the watchdog's kill.
watchdog_death() {
  [[ $(harness_deaths "$1" | tail -n 1) =~ ^watchdog\ (killed|dumped)\ ABRT$ ]] ||
    harness_fail "$1 died as \"$(harness_deaths "$1" | tail -n 1)\", not by the watchdog"
}

demo_cluster_failover() {
  [[ -n $cluster ]] || return 0
  local bin url leader follower t0 ms deaths unit offset
  bin=$(harness_binary cluster)
  url=sqlite:$(harness_state_dir cluster)/cluster.db
  holder() { "$bin" --store "$url" --inspect 2>/dev/null | sed -n 's/^lease=cluster held=1 holder=\([^ ]*\).*/\1/p'; }
  has_holder() { [[ -n $(holder) ]]; }
  other() { [[ $1 == node1 ]] && echo node2 || echo node1; }
  # takeover <follower> <t0>: ms until follower holds the lease.
  takeover() {
    until [[ $(holder) == "$1" ]]; do
      (($(harness_ms_since "$2") < 20000)) || harness_fail "no failover within 20 s"
      sleep 0.02
    done
    harness_ms_since "$2"
  }
  back_as_standby() {
    harness_wait 20 "$1 restarted" harness_prop_is "$1" ActiveState active
    harness_wait 10 "$1 standing by" bash -c "tail -n +$(($2 + 1)) '$HARNESS_LOG_DIR/$1.log' | grep -q 'standby: lease'"
  }

  say "Cluster: a second member joins; one leads, the other stands by"
  harness_start_units "$standby"
  units+=("$standby")
  harness_wait 10 "a leader" has_holder
  sleep 1
  harness_show "$cluster" "$standby"

  leader=$(holder) follower=$(other "$(holder)")
  unit=sdlive-cluster@$leader.service
  say "Crash: SIGKILL to the leader, $unit"
  offset=$(wc -l <"$HARNESS_LOG_DIR/$unit.log")
  t0=$(harness_now_us)
  harness_event "$unit" "fault: SIGKILL (crash)"
  systemctl --user kill --signal=SIGKILL -- "$unit"
  faults=$((faults + 1))
  ms=$(takeover "$follower" "$t0")
  echo "  $unit: $(harness_deaths "$unit" | tail -n 1); its ExecStopPost= says:"
  tail -n "+$((offset + 1))" -- "$HARNESS_LOG_DIR/$unit.log" | grep 'after its holder' | sed 's/^/    /' ||
    harness_fail "$unit: its ExecStopPost= did not release the lease after the crash"
  echo "  sdlive-cluster@$follower leads after ${ms} ms (the lease was released as soon as the process was gone;"
  echo "  without that it would have waited for the lease: $LEASE_MS ms)"
  ((ms < LEASE_MS)) || harness_fail "the takeover after the crash took ${ms} ms: the lease expired, nothing released it"
  back_as_standby "$unit" "$offset"

  leader=$(holder) follower=$(other "$(holder)")
  unit=sdlive-cluster@$leader.service
  say "Wedge: the leader's main loop hangs (its lease refresher thread still runs), $unit"
  offset=$(wc -l <"$HARNESS_LOG_DIR/$unit.log")
  deaths=$(harness_death_count "$unit")
  touch -- "$(harness_wedge_file "$unit")"
  t0=$(harness_now_us)
  faults=$((faults + 1))
  ms=$(takeover "$follower" "$t0")
  echo "  sdlive-cluster@$follower leads after ${ms} ms (bound: health-gate stale + 2 checks + pet interval"
  echo "  = WatchdogSec/2 + WatchdogSec/4 + WatchdogSec/6 = $WEDGE_BOUND_MS ms); the wedged leader's log:"
  tail -n "+$((offset + 1))" -- "$HARNESS_LOG_DIR/$unit.log" | grep -E 'health gate|released' | sed 's/^/    /' ||
    harness_fail "$unit: the health gate did not release the wedged leader's lease"
  ((ms <= WEDGE_BOUND_MS + SLACK_MS)) ||
    harness_fail "the takeover from the wedged leader took ${ms} ms > $WEDGE_BOUND_MS ms + $SLACK_MS ms"
  harness_wait 20 "the watchdog's kill" bash -c "(( \$(cat -- '$HARNESS_LOG_DIR/deaths/$unit' 2>/dev/null | wc -l) > $deaths ))"
  rm -f -- "$(harness_wedge_file "$unit")"
  echo "  then the watchdog: $unit $(harness_deaths "$unit" | tail -n 1)"
  watchdog_death "$unit"
  "$bin" --store "$url" --inspect 2>/dev/null | sed 's/^/  store: /'
  back_as_standby "$unit" "$offset"
  harness_show "$cluster" "$standby"
}

# A daemon that cannot pet, supervised for progress by sdlive-probe: a small
# HTTP server that does not link libsdlive (tests/probe/fault-daemon.py),
# run under the drop-in docs/probe.md gives. Its handler hangs; the probe
# declares it failed and withholds keepalives; the watchdog kills it within
# period x failure threshold + timeout + WatchdogSec; it is restarted.
demo_probe() {
  # shellcheck source=../tests/e2e/probe-harness.sh
  source "$repo/tests/e2e/probe-harness.sh"
  local unit=demo-http-probed.service url=http://127.0.0.1:8080/healthz
  # The bound, and the slack the probe's end-to-end test allows a loaded
  # machine (the probe's runs and the manager's timer are not aligned).
  local bound_ms=$((500 * 2 + 300 + 2000)) slack_ms=1000 before pets deaths start ms
  probe_fault "$unit" ok
  probe_unit "$unit" 2s on-failure "$PROBE_BIN --period 500ms --timeout 300ms --failure-threshold 2" \
    "--http $url -- $PROBE_DAEMON --http-port 8080 --fault-file $(probe_fault_file "$unit")"
  harness_reload

  say "A daemon that cannot pet: an HTTP server run by sdlive-probe, $unit"
  harness_start_units "$unit"
  units+=("$unit")
  before=$(probe_keepalives "$unit")
  harness_watch_healthy 3 0 "$unit"
  pets=$(($(probe_keepalives "$unit") - before))
  echo "  healthy for 3 s: $pets keepalives sent by the probe; STATUS=\"$(harness_prop "$unit" StatusText)\""
  # One keepalive per WatchdogSec/6 at most: about 9 in 3 s.
  ((pets >= 5)) || harness_fail "$unit: $pets keepalives in 3 s while healthy"

  say "Hang: the server's handler stops answering (the process lives on)"
  deaths=$(harness_death_count "$unit")
  harness_event "$unit" "fault: HTTP handler hangs"
  probe_fault "$unit" hang
  start=$(harness_now_us)
  faults=$((faults + 1))
  until probe_died "$unit" "$deaths"; do
    (($(harness_ms_since "$start") < bound_ms + 5000)) || harness_fail "$unit was not killed within $((bound_ms + 5000)) ms"
    sleep 0.02
  done
  ms=$(harness_ms_since "$start")
  probe_fault "$unit" ok
  watchdog_death "$unit"
  harness_notified "$unit" "STATUS=keepalives withheld: http $url failed 2 times in a row: Operation timed out" ||
    harness_fail "$unit: no STATUS= naming the failed probe"
  echo "  killed by the watchdog ${ms} ms after the hang (bound: period 500 ms x 2 failures + timeout 300 ms"
  echo "  + WatchdogSec 2000 ms = $bound_ms ms); the probe had said why:"
  grep -E 'failed 2 times in a row|withheld' "$HARNESS_LOG_DIR/$unit.log" | head -n 2 | sed 's/^/    /'
  ((ms <= bound_ms + slack_ms)) || harness_fail "$unit: killed ${ms} ms after the hang > $bound_ms ms + $slack_ms ms"
  harness_wait 10 "$unit restarted" harness_prop_is "$unit" NRestarts 1
  harness_wait 10 "$unit active again" harness_prop_is "$unit" ActiveState active
  harness_watch_healthy 2 1 "$unit"
  harness_show "$unit"
}

say "Wedging the worker's main loop (its executor thread keeps running)"
wedge=$(harness_wedge_file "$worker")
touch -- "$wedge"
start=$(harness_now_us)
faults=$((faults + 1))
# The restarted worker must run normally: remove the wedge as soon as the
# death is recorded (a loop of its own that forks only sleep: the status
# polling below can take longer than RestartSec= on a loaded machine).
(
  until [[ -s $HARNESS_LOG_DIR/deaths/$worker ]]; do sleep 0.02; done
  rm -f -- "$wedge"
) &
last=""
while :; do
  state="$(harness_prop "$worker" ActiveState)/$(harness_prop "$worker" SubState)"
  if [[ $state != "$last" ]]; then
    printf '  +%5d ms  %-28s %s\n' "$(harness_ms_since "$start")" "$worker" "$state"
    last=$state
  fi
  if [[ ! -e $wedge && $state == active/running ]] && harness_prop_is "$worker" NRestarts 1; then
    break
  fi
  (($(harness_ms_since "$start") < 20000)) || harness_fail "the worker was not restarted within 20 s"
  sleep 0.05
done
restart_ms=$(harness_ms_since "$start")
echo "  the worker's own log:"
grep 'fault injected' "$HARNESS_LOG_DIR/$worker.log" | sed 's/^/    /' ||
  harness_fail "$worker never said it wedged"
watchdog_death "$worker"

say "What systemd recorded"
echo "  death (ExecStopPost=: \$SERVICE_RESULT \$EXIT_CODE \$EXIT_STATUS): $(harness_deaths "$worker")"
echo "  NRestarts=$(harness_prop "$worker" NRestarts)   wedge to running again: ${restart_ms} ms"
echo "  manager log (the journal, on a real system):"
grep -E "^$worker: (Watchdog timeout|Killing process|Failed with result|Scheduled restart)" \
  "$HARNESS_LOG_DIR/manager.log" | tr -d '\r' | sed 's/^/    /'
sleep 1
harness_show "${units[@]}"

demo_cluster_failover
demo_probe

say "Stopping everything (SIGTERM: STOPPING=1, clean exit)"
systemctl --user stop -- "${units[@]}"
for unit in "${units[@]}"; do
  printf '  %-28s %s, last death: %s\n' "$unit" "$(harness_prop "$unit" ActiveState)" \
    "$(harness_deaths "$unit" | tail -n 1)"
done
for unit in "${units[@]}"; do
  [[ $(harness_prop "$unit" ActiveState) == inactive && $(harness_deaths "$unit" | tail -n 1) == "success exited 0" ]] ||
    harness_fail "$unit did not stop cleanly: $(harness_prop "$unit" ActiveState), $(harness_deaths "$unit" | tail -n 1)"
done

# One timeline per fault, drawn from the recorded logs (tests/e2e/timeline.py):
# the fault, the last keepalive, the manager's kill, the restart, the lease
# released, the standby leading; its .txt twin lists the same events.
say "Timelines: one SVG per fault, times in ms from the fault"
harness_timelines
drawn=0
for svg in "$HARNESS_LOG_DIR"/timeline-*.svg; do
  [[ -e $svg ]] || break
  printf '  build/demo-logs/%s: %s\n' "$(basename -- "$svg")" "$(head -n 1 -- "${svg%.svg}.txt")"
  drawn=$((drawn + 1))
done
((drawn == faults)) ||
  harness_fail "$drawn timeline(s) drawn for $faults fault(s): see $HARNESS_LOG_DIR/recorder.err"
echo
echo "Logs: build/demo-logs (unit output, deaths, manager log, events.tsv, timelines). Tests: scripts/test.sh"
