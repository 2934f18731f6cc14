#!/usr/bin/env bash
# Scenario 1: every daemon whose unit arms WatchdogSec= runs for 5 x
# WatchdogSec with zero restarts: its keepalives arrive in time, idle or busy.
source "$(dirname -- "${BASH_SOURCE[0]}")/harness.sh"
harness_start "$@"
harness_units_install

harness_petting_units units

harness_start_units "${units[@]}"
for unit in "${units[@]}"; do
  harness_expect "$unit" WatchdogUSec 1s
done

harness_log "running ${units[*]} for 5 x WatchdogSec (5.5 s)"
harness_watch_healthy 5.5 0 "${units[@]}"
harness_show "${units[@]}"
for unit in "${units[@]}"; do
  harness_notified "$unit" 'WATCHDOG=1' || harness_fail "$unit: no keepalive reached the manager"
done
echo "PASS: ${units[*]} ran 5.5 x WatchdogSec=1s with NRestarts=0"
