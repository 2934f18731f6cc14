#!/usr/bin/env bash
# Scenario 3: wedging the main loop of each petting daemon (its other threads
# keep running) gets it killed by the watchdog (result "watchdog", SIGABRT),
# restarted, and healthy again. Prints the time from wedge to kill and to the
# restarted daemon's READY=1. The daemons are wedged together, in parallel.
source "$(dirname -- "${BASH_SOURCE[0]}")/harness.sh"
harness_start "$@"
harness_units_install

harness_petting_units units

harness_start_units "${units[@]}"
harness_watch_healthy 1 0 "${units[@]}"

declare -A wedged_at=() killed_ms=() restarted_ms=()
for unit in "${units[@]}"; do
  touch -- "$(harness_wedge_file "$unit")"
  wedged_at[$unit]=$(harness_now_us)
done
harness_log "wedged ${units[*]}"

# Poll all units together: unwedge each as soon as its death is recorded (so
# the restarted process runs normally), then wait for it to be active again.
deadline=$(($(harness_now_us) + 20000000))
while ((${#restarted_ms[@]} < ${#units[@]})); do
  (($(harness_now_us) < deadline)) || harness_fail "not every wedged daemon was killed and restarted within 20 s"
  for unit in "${units[@]}"; do
    [[ -n ${restarted_ms[$unit]:-} ]] && continue
    if [[ -z ${killed_ms[$unit]:-} ]] && (($(harness_death_count "$unit") > 0)); then
      killed_ms[$unit]=$(harness_ms_since "${wedged_at[$unit]}")
      rm -f -- "$(harness_wedge_file "$unit")"
    fi
    if [[ -n ${killed_ms[$unit]:-} ]] && harness_prop_is "$unit" NRestarts 1 &&
      harness_prop_is "$unit" ActiveState active; then
      restarted_ms[$unit]=$(harness_ms_since "${wedged_at[$unit]}")
    fi
  done
  sleep 0.05
done

for unit in "${units[@]}"; do
  death=$(harness_deaths "$unit")
  [[ $death =~ ^watchdog\ (killed|dumped)\ ABRT$ ]] ||
    harness_fail "$unit: death recorded as \"$death\", expected \"watchdog killed ABRT\""
  grep -q "^$unit: Watchdog timeout" "$HARNESS_LOG_DIR/manager.log" ||
    harness_fail "$unit: the manager did not log a watchdog timeout"
done

# Healthy again: 3 x WatchdogSec with no further death.
harness_watch_healthy 3 1 "${units[@]}"
harness_show "${units[@]}"
for unit in "${units[@]}"; do
  printf 'wedge-to-restart: %-26s killed %5d ms after the wedge (%s), active again after %5d ms\n' \
    "$unit" "${killed_ms[$unit]}" "$(harness_deaths "$unit")" "${restarted_ms[$unit]}"
done
echo "PASS: each wedged daemon was killed by the watchdog with SIGABRT and came back healthy (WatchdogSec=1s, RestartSec=500ms)"
