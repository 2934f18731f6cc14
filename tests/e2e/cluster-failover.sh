#!/usr/bin/env bash
# Cluster scenarios: two instances of the shipped sdlive-cluster@.service
# (a and b) sharing one store, times scaled by drop-ins (WatchdogSec=1s,
# lease 3s, election poll 500ms).
#   1. exactly one leader, no restarts over 10 x WatchdogSec;
#   2. the leader's main loop wedged (its refresher alive): killed by the
#      watchdog (ABRT), the standby leads; failover timed with the health
#      gate off (the lease released after the kill by ExecStopPost=) and on
#      (released by the gate), each against its bound (docs/cluster.md);
#   4. systemctl stop of the leader: the release wakes the standby, which
#      leads at once, well within one poll;
#   5. (PostgreSQL) the server restarts under the pair: no crash, one leader;
#   6. the standby's election loop spins without attempting: the
#      progress check withholds keepalives, the watchdog restarts it;
#   3. the leader paused (SIGSTOP) past its lease, then resumed: the standby
#      leads, the old leader's write is rejected by the fence or never made
#      (its own deadline for acting passed first), it goes back
#      to standby; the write log never shows two leaders (overlaps 0).
#      It raises WatchdogSec (a paused process cannot pet).
#   7. both members stopped by one systemctl call, three times: each stops
#      cleanly ("success exited 0", inactive) and runs its ExecStopPost=;
#      a runtime directory shared by the instances, removed by the first
#      to stop, would fail the other's with 226/NAMESPACE.
#
#   cluster-failover.sh sqlite|postgresql
source "$(dirname -- "${BASH_SOURCE[0]}")/harness.sh"
backend=${1:-}
[[ $backend == sqlite || $backend == postgresql ]] || { echo "usage: $0 sqlite|postgresql" >&2; exit 2; }
harness_start "$@"
harness_units_install

A=sdlive-cluster@a.service
B=sdlive-cluster@b.service
[[ -n $(harness_unit_of cluster) ]] || harness_fail "this build ships no sdlive-cluster@.service"
WD_MS=1000 LEASE_MS=3000 POLL_MS=500
# The measurement: holder polled every 50 ms by spawning --inspect.
SLACK_MS=300
bin=$(harness_binary cluster)
pg_lines=""

if [[ $backend == postgresql ]]; then
  pg=$(dirname -- "${BASH_SOURCE[0]}")/../store/pg-server.sh
  [[ -x $pg || -f $pg ]] || harness_fail "tests/store/pg-server.sh is missing"
  trap 'rc=$?; bash "$pg" stop "$HARNESS_RUN" >/dev/null 2>&1; (exit $rc); harness_teardown' EXIT
  bash "$pg" start "$HARNESS_RUN" >/dev/null || harness_fail "cannot start PostgreSQL"
  url=$(bash "$pg" url "$HARNESS_RUN")
  pgdir=$(sed -n 's/^postgresql:host=\([^ ]*\) .*/\1/p' <<<"$url")
  # The server's socket lives under /tmp, which PrivateTmp= hides.
  pg_lines="BindReadOnlyPaths=$pgdir"
else
  url=sqlite:$(harness_state_dir cluster)/cluster.db
fi

inspect() { "$bin" --store "$url" --inspect 2>/dev/null; }
holder() { inspect | sed -n 's/^lease=cluster held=1 holder=\([^ ]*\).*/\1/p'; }
holder_is() { [[ $(holder) == "$1" ]]; }
has_holder() { [[ -n $(holder) ]]; }
overlaps() { inspect | sed -n 's/.* overlaps=\([0-9]*\)$/\1/p'; }
unit_of() { echo "sdlive-cluster@$1.service"; }
other() { [[ $1 == a ]] && echo b || echo a; }
log_of() { echo "$HARNESS_LOG_DIR/$(unit_of "$1").log"; }
# log_since <node> <line offset> <regex>: the node logged it after the offset.
log_since() { tail -n "+$(($2 + 1))" -- "$(log_of "$1")" | grep -q -- "$3"; }
log_lines() { wc -l <"$(log_of "$1")" 2>/dev/null || echo 0; }

# configure <extra args...>: scaled arguments for both instances; restart.
configure() {
  local node
  for node in a b; do
    harness_exec_start "$(unit_of "$node")" --lease 3s --election-poll 500ms --maintenance-interval 500ms \
      --maintenance-rate 100 --seed-inventory 20000 "$@"
    # RestartSec=5s: a killed leader comes back only after the standby took
    # over, so the failover measured is the standby's, not a race.
    # The store by environment: ExecStart= and ExecStopPost= both read it.
    harness_dropin "$(unit_of "$node")" 30-cluster "Environment=SDLIVE_SPIN_ELECTION_FILE=$HARNESS_WEDGE_DIR/%n.spin
Environment=\"SDLIVE_STORE=$url\"
RestartSec=5s
$pg_lines"
  done
  harness_reload
  systemctl --user stop "$A" "$B"
  harness_start_units "$A"
  harness_wait 10 "a leads" holder_is a
  harness_start_units "$B"
  harness_wait 5 "b waits" log_since b 0 'standby: lease "cluster" held by a'
}

# healthy_for <seconds>: both active, no new death, the same leader throughout.
healthy_for() {
  local end=$(($(harness_now_us) + $1 * 1000000)) leader da db
  leader=$(holder) da=$(harness_death_count "$A") db=$(harness_death_count "$B")
  [[ -n $leader ]] || harness_fail "no leader"
  while (($(harness_now_us) < end)); do
    harness_expect "$A" ActiveState active
    harness_expect "$B" ActiveState active
    (($(harness_death_count "$A") == da && $(harness_death_count "$B") == db)) ||
      harness_fail "a member died: $(harness_deaths "$A") / $(harness_deaths "$B")"
    [[ $(holder) == "$leader" ]] || harness_fail "leadership moved from $leader without cause"
    sleep 0.25
  done
}

# wedge_failover <label>: prints the failover time in ms.
wedge_failover() {
  local leader standby unit deaths t0 ms="" offset
  leader=$(holder) standby=$(other "$(holder)")
  unit=$(unit_of "$leader")
  deaths=$(harness_death_count "$unit") offset=$(log_lines "$leader")
  touch -- "$(harness_wedge_file "$unit")"
  t0=$(harness_now_us)
  # Unwedge as soon as the kill is recorded, so the restart runs normally.
  while [[ -z $ms ]] || (($(harness_death_count "$unit") == deaths)); do
    (($(harness_now_us) - t0 < 15000000)) || harness_fail "no failover from the wedged $leader in 15 s"
    (($(harness_death_count "$unit") > deaths)) && rm -f -- "$(harness_wedge_file "$unit")"
    [[ -z $ms ]] && holder_is "$standby" && ms=$(harness_ms_since "$t0")
    sleep 0.02
  done
  rm -f -- "$(harness_wedge_file "$unit")"
  [[ $(harness_deaths "$unit" | tail -n 1) =~ ^watchdog\ (killed|dumped)\ ABRT$ ]] ||
    harness_fail "$unit: died as \"$(harness_deaths "$unit" | tail -n 1)\", expected watchdog ABRT"
  if [[ $1 == on ]]; then
    log_since "$leader" "$offset" 'health gate closed' || harness_fail "$leader: the health gate never closed"
  else
    ! log_since "$leader" "$offset" 'health gate closed' || harness_fail "$leader: gate closed while off"
  fi
  harness_wait 10 "$unit restarted" harness_prop_is "$unit" ActiveState active
  harness_wait 5 "$leader waits again" log_since "$leader" "$offset" "standby: lease \"cluster\" held by $standby"
  echo "$ms"
}

harness_log "backend $backend, store $url"

# 1 -----------------------------------------------------------------------
configure --health-gate 0
healthy_for 10
echo "1. one leader ($(holder)), the other waits; no restart over 10 x WatchdogSec"

# 2 -----------------------------------------------------------------------
# Gate off: the watchdog kills the wedged leader at most WatchdogSec after
# the wedge; its ExecStopPost= releases the lease once the process is gone
# and the release wakes the standby: allowed 500 ms for the abort (short
# here: no core is written) and the release step (exec, open, release). Gate on: stale threshold WatchdogSec/2, 2 checks every
# stale/4, keepalive age exact to one pet interval (WatchdogSec/6), then the
# refresher releases the lease and the standby wakes.
off_ms=$(wedge_failover off)
off_bound=$((WD_MS + 500))
configure
on_ms=$(wedge_failover on)
stale=$((WD_MS / 2))
on_bound=$((stale + 2 * stale / 4 + WD_MS / 6))
echo "2. wedged leader, failover: gate off ${off_ms} ms (bound WatchdogSec + abort and release 500 ms = ${off_bound} ms + slack);" \
  "gate on ${on_ms} ms (bound stale+2 checks+pet+release = ${on_bound} ms + slack)"
((off_ms <= off_bound + SLACK_MS)) || harness_fail "ungated failover ${off_ms} ms > ${off_bound} ms + ${SLACK_MS}"
((on_ms <= on_bound + SLACK_MS)) || harness_fail "gated failover ${on_ms} ms > ${on_bound} ms + ${SLACK_MS}"

# 4 -----------------------------------------------------------------------
# The lease is released before the stopped leader exits, so the standby's
# next poll after `systemctl stop` returns takes it: time from there.
leader=$(holder) standby=$(other "$(holder)")
t0=$(harness_now_us)
systemctl --user stop "$(unit_of "$leader")"
stop_ms=$(harness_ms_since "$t0")
t0=$(harness_now_us)
harness_wait 5 "$standby takes over from the stopped $leader" holder_is "$standby"
ms=$(harness_ms_since "$t0")
[[ $(harness_deaths "$(unit_of "$leader")" | tail -n 1) == "success exited 0" ]] ||
  harness_fail "$leader stopped as \"$(harness_deaths "$(unit_of "$leader")" | tail -n 1)\""
((ms <= SLACK_MS)) || harness_fail "takeover after stop took ${ms} ms: the release did not wake $standby"
echo "4. systemctl stop $leader took ${stop_ms} ms; $standby leads ${ms} ms later (woken by the release; poll ${POLL_MS} ms)"
harness_start_units "$(unit_of "$leader")"

# 5 -----------------------------------------------------------------------
if [[ $backend == postgresql ]]; then
  ra=$(harness_prop "$A" NRestarts) rb=$(harness_prop "$B" NRestarts)
  bash "$pg" down "$HARNESS_RUN" >/dev/null
  sleep 2
  bash "$pg" up "$HARNESS_RUN" >/dev/null
  harness_wait 15 "a leader after the PostgreSQL restart" has_holder
  healthy_for 3
  harness_expect "$A" NRestarts "$ra"
  harness_expect "$B" NRestarts "$rb"
  [[ $(overlaps) == 0 ]] || harness_fail "two leaders' writes overlap: $(inspect)"
  echo "5. PostgreSQL restarted under the pair: no crash, $(holder) leads, overlaps 0"
fi

# 6 -----------------------------------------------------------------------
standby=$(other "$(holder)")
unit=$(unit_of "$standby")
deaths=$(harness_death_count "$unit")
touch -- "$HARNESS_WEDGE_DIR/$unit.spin"
t0=$(harness_now_us)
spin_limit=$((3 * POLL_MS + WD_MS))
harness_wait $(((spin_limit + SLACK_MS) / 1000 + 1)) "the spinning $unit is killed" \
  bash -c "(( \$(wc -l < '$HARNESS_LOG_DIR/deaths/$unit') > $deaths ))"
ms=$(harness_ms_since "$t0")
((ms <= spin_limit + SLACK_MS)) || harness_fail "the spinning $unit was killed after ${ms} ms > ${spin_limit} ms + ${SLACK_MS}"
rm -f -- "$HARNESS_WEDGE_DIR/$unit.spin"
[[ $(harness_deaths "$unit" | tail -n 1) =~ ^watchdog\ (killed|dumped)\ ABRT$ ]] ||
  harness_fail "$unit: died as \"$(harness_deaths "$unit" | tail -n 1)\", expected watchdog ABRT"
grep -q "^$unit: Watchdog timeout" "$HARNESS_LOG_DIR/manager.log" || harness_fail "no watchdog timeout logged for $unit"
harness_wait 10 "$unit restarted" harness_prop_is "$unit" ActiveState active
echo "6. spinning election loop (petting, no attempts) on $standby: killed by the watchdog after ${ms} ms" \
  "(limit 3 x poll + WatchdogSec = ${spin_limit} ms), restarted"

# 3 -----------------------------------------------------------------------
for node in a b; do harness_dropin "$(unit_of "$node")" 40-pause "WatchdogSec=30s"; done
configure
sleep 1   # let the leader's first pass get going
# With SQLite, a leader stopped inside a write transaction keeps the
# database's write lock until it runs again or dies (here the raised
# WatchdogSec keeps it alive): such a pause says nothing about fencing, so
# it is resumed and the pause taken again with whoever leads, up to 3 times.
for try in 1 2 3; do
  leader=$(holder) standby=$(other "$(holder)")
  offset=$(log_lines "$leader") standby_offset=$(log_lines "$standby")
  pid=$(harness_prop "$(unit_of "$leader")" MainPID)
  kill -STOP "$pid"
  t0=$(harness_now_us)
  locked=0
  until holder_is "$standby"; do
    (($(harness_now_us) - t0 < 10000000)) || harness_fail "$standby did not take over from the paused $leader"
    if [[ $backend == sqlite ]] && log_since "$standby" "$standby_offset" 'stayed locked' &&
      (($(harness_now_us) - t0 > (LEASE_MS + 2 * POLL_MS) * 1000)); then
      locked=1
      break
    fi
    sleep 0.05
  done
  ((locked)) || break
  ((try < 3)) || harness_fail "the leader was paused inside a write transaction three times in a row"
  echo "   ($leader was paused inside a write transaction: resumed, and paused again)"
  kill -CONT "$pid"
  harness_wait 10 "a leader after the resume" has_holder
  sleep 0.5
done
ms=$(harness_ms_since "$t0")
sleep 0.5
kill -CONT "$pid"
harness_wait 5 "$leader notices the loss" log_since "$leader" "$offset" 'lease lost'
harness_wait 5 "$leader waits again" log_since "$leader" "$offset" "standby: lease \"cluster\" held by $standby"
# On resume its write must not land: either the fence rejects it, or the
# leader's own deadline has passed and it writes nothing: the main loop
# finds its deadline for acting passed, or the refresher, running first,
# finds the lease's local expiry passed and marks it lost (whichever the
# resumed process meets first). Neither: a deposed write was accepted or
# never looked at.
harness_resumed_fenced "$leader" "$(log_of "$leader")" "$offset" 'write rejected by fencing' \
  'the deadline for acting passed\|lease expired: '
[[ $(overlaps) == 0 ]] || harness_fail "two leaders' writes overlap: $(inspect)"
harness_expect "$(unit_of "$leader")" ActiveState active
echo "3. $leader paused past its lease: $standby led after ${ms} ms; on resume $rejected write(s) rejected by" \
  "the fence, local deadline passed: $stopped, $leader back to standby; $(inspect | tail -n 1)"

# 7 -----------------------------------------------------------------------
for round in 1 2 3; do
  systemctl --user start "$A" "$B"
  harness_wait 10 "a leader (round $round)" has_holder
  da=$(harness_death_count "$A") db=$(harness_death_count "$B")
  systemctl --user stop "$A" "$B"
  for unit in "$A" "$B"; do
    [[ $(harness_prop "$unit" ActiveState) == inactive ]] ||
      harness_fail "round $round: $unit is $(harness_prop "$unit" ActiveState) after a clean stop"
  done
  (($(harness_death_count "$A") == da + 1 && $(harness_death_count "$B") == db + 1)) ||
    harness_fail "round $round: an ExecStopPost= did not run: $A: $(harness_deaths "$A" | tail -n 1), $B: $(harness_deaths "$B" | tail -n 1)"
  for unit in "$A" "$B"; do
    [[ $(harness_deaths "$unit" | tail -n 1) == "success exited 0" ]] ||
      harness_fail "round $round: $unit stopped as \"$(harness_deaths "$unit" | tail -n 1)\""
  done
done
echo "7. both members stopped at once, 3 times: each exited 0 and ran its ExecStopPost="

echo "PASS ($backend)"
