#!/usr/bin/env bash
# Randomized failures against three members (a, b, c) of the shipped
# sdlive-cluster@.service, times scaled by drop-ins (WatchdogSec=1s, lease
# 3s, poll 500ms), the leader writing throughout (a paced maintenance pass
# over 20,000 seeded blobs). Each round fails the current leader in one of
# four ways — SIGKILL, systemctl stop, wedged main loop, SIGSTOP then
# SIGCONT — and checks: another member leads within the bound, with a higher
# generation; the write log has no overlap (no two leaders' writes ever both
# accepted); the failed member comes back as a standby. Prints each round's
# figure and the seed (SDLIVE_E2E_SEED replays a run).
#
#   cluster-random.sh sqlite|postgresql [rounds]
source "$(dirname -- "${BASH_SOURCE[0]}")/harness.sh"
backend=${1:-}
rounds=${2:-24}
[[ $backend == sqlite || $backend == postgresql ]] || { echo "usage: $0 sqlite|postgresql [rounds]" >&2; exit 2; }
harness_start "$@"
harness_units_install
[[ -n $(harness_unit_of cluster) ]] || harness_fail "this build ships no sdlive-cluster@.service"

NODES=(a b c)
WD_MS=1000 LEASE_MS=3000
# The slowest path: a pause ends at expiry (lease) or by the watchdog's kill.
BOUND_MS=$((LEASE_MS + 1000))
seed=${SDLIVE_E2E_SEED:-$((RANDOM * 32768 + RANDOM))}
RANDOM=$seed
bin=$(harness_binary cluster)
pg_lines=""

if [[ $backend == postgresql ]]; then
  harness_pg_start
  url=$HARNESS_PG_URL
  pg_lines="BindReadOnlyPaths=$HARNESS_PG_SOCKET_DIR"
else
  url=sqlite:$(harness_state_dir cluster)/cluster.db
fi

inspect() {
  local try
  for try in 1 2 3 4 5; do
    "$bin" --store "$url" --inspect 2>/dev/null && return 0
    sleep 0.02
  done
  return 1
}
holder() { inspect | sed -n 's/^lease=cluster held=1 holder=\([^ ]*\).*/\1/p'; }
generation() { inspect | sed -n 's/^lease=cluster held=1 .*generation=\([0-9]*\).*/\1/p'; }
overlaps() { inspect | sed -n 's/.* overlaps=\([0-9]*\)$/\1/p'; }
unit_of() { echo "sdlive-cluster@$1.service"; }
log_of() { echo "$HARNESS_LOG_DIR/$(unit_of "$1").log"; }
log_lines() { wc -l <"$(log_of "$1")" 2>/dev/null || echo 0; }
log_since() { tail -n "+$(($2 + 1))" -- "$(log_of "$1")" | grep -q -- "$3"; }
deaths_of() { harness_death_count "$(unit_of "$1")"; }
# revived <unit>: active; a unit that hit its start limit is started again.
revived() {
  if harness_prop_is "$1" ActiveState failed; then
    systemctl --user reset-failed -- "$1"
    systemctl --user start --no-block -- "$1"
  fi
  harness_prop_is "$1" ActiveState active
}

for node in "${NODES[@]}"; do
  harness_exec_start "$(unit_of "$node")" --lease 3s --election-poll 500ms --maintenance-interval 500ms \
    --maintenance-rate 200 --seed-inventory 20000
  harness_dropin "$(unit_of "$node")" 30-cluster "Environment=\"SDLIVE_STORE=$url\"
$pg_lines"
done
harness_reload
harness_start_units "$(unit_of a)"
harness_wait 15 "a leads" bash -c "[[ \$('$bin' --store '$url' --inspect 2>/dev/null | sed -n 's/^lease=cluster held=1 holder=\([^ ]*\).*/\1/p') == a ]]"
harness_start_units "$(unit_of b)" "$(unit_of c)"
harness_log "backend $backend, seed $seed, $rounds rounds"

# A new leader other than $1 with a generation above $2; prints its ms since $3.
new_leader_ms() {
  local deadline=$(($3 + BOUND_MS * 1000 + 5000000)) h g
  for (( ; ; )); do
    h=$(holder) g=$(generation)
    [[ -n $h && $h != "$1" && -n $g ]] && ((g > $2)) && break
    (($(harness_now_us) < deadline)) || harness_fail "no new leader after $1 failed"
    sleep 0.02
  done
  harness_ms_since "$3"
}

declare -A count=() worst=()
kinds=(kill stop wedge pause)
for ((round = 1; round <= rounds; round++)); do
  kind=${kinds[RANDOM % 4]}
  leader=$(holder)
  [[ -n $leader ]] || harness_fail "round $round: no leader"
  unit=$(unit_of "$leader") gen=$(generation)
  offset=$(log_lines "$leader") deaths=$(deaths_of "$leader")
  declare -A others_deaths=()
  for node in "${NODES[@]}"; do [[ $node == "$leader" ]] || others_deaths[$node]=$(deaths_of "$node"); done
  pid=$(harness_prop "$unit" MainPID)
  t0=$(harness_now_us)
  case $kind in
    kill) systemctl --user kill --signal=SIGKILL -- "$unit" ;;
    stop) systemctl --user stop --no-block -- "$unit" ;;
    wedge) touch -- "$(harness_wedge_file "$unit")" ;;
    pause) kill -STOP "$pid" ;;
  esac
  ms=$(new_leader_ms "$leader" "$gen" "$t0")
  case $kind in
    stop) harness_wait 10 "$unit stopped" harness_prop_is "$unit" ActiveState inactive
      harness_start_units "$unit" ;;
    wedge) harness_wait 10 "$unit killed by the watchdog" bash -c "(( \$(wc -l < '$HARNESS_LOG_DIR/deaths/$unit') > $deaths ))"
      rm -f -- "$(harness_wedge_file "$unit")" ;;
    pause) kill -CONT "$pid" 2>/dev/null || true ;;
  esac
  ((ms <= BOUND_MS)) || harness_fail "round $round ($kind of $leader): ${ms} ms > ${BOUND_MS} ms"
  [[ $(overlaps) == 0 ]] || harness_fail "round $round ($kind of $leader): overlapping writes: $(inspect | tail -n 1)"
  harness_wait 20 "$unit active again" revived "$unit"
  # Deliberate failures in quick succession: keep the start limit out of it.
  systemctl --user reset-failed -- "$unit"
  harness_wait 10 "$leader back as a standby" log_since "$leader" "$offset" 'standby: lease "cluster" held by'
  for node in "${!others_deaths[@]}"; do
    (($(deaths_of "$node") == others_deaths[$node])) || harness_fail "round $round: $node died while healthy: $(harness_deaths "$(unit_of "$node")" | tail -n 1)"
  done
  count[$kind]=$((${count[$kind]:-0} + 1))
  ((ms > ${worst[$kind]:-0})) && worst[$kind]=$ms
  printf 'round %2d: %-5s of %s (generation %s) -> %s leads after %5d ms; %s\n' "$round" "$kind" "$leader" "$gen" \
    "$(holder)" "$ms" "$(inspect | tail -n 1)"
done
for kind in "${kinds[@]}"; do
  printf '%-5s x %2d, slowest %5d ms (bound %d ms)\n' "$kind" "${count[$kind]:-0}" "${worst[$kind]:-0}" "$BOUND_MS"
done
[[ $(overlaps) == 0 ]] || harness_fail "overlapping writes: $(inspect)"
echo "PASS ($backend, seed $seed): $rounds failures, one leader at a time, $(inspect | tail -n 1)"
