#!/usr/bin/env bash
# Scenario 5: `systemctl --user stop` (SIGTERM) on every daemon: the daemon
# sends STOPPING=1, exits with status 0 within 1 s, and systemd records
# result "success" with no restart.
source "$(dirname -- "${BASH_SOURCE[0]}")/harness.sh"
harness_start "$@"
harness_units_install

units=()
for daemon in worker cleaner sentinel acceptor cluster; do
  unit=$(harness_unit_of "$daemon")
  [[ -n $unit ]] && units+=("$unit") || harness_log "$daemon: not in this build, not checked"
done
harness_start_units "${units[@]}"
harness_watch_healthy 1.5 0 "${units[@]}"
harness_show "${units[@]}"

for unit in "${units[@]}"; do
  start=$(harness_now_us)
  systemctl --user stop -- "$unit"
  took_ms=$(harness_ms_since "$start")
  harness_expect "$unit" ActiveState inactive
  harness_expect "$unit" Result success
  harness_expect "$unit" NRestarts 0
  death=$(harness_deaths "$unit")
  [[ $death == "success exited 0" ]] ||
    harness_fail "$unit: stop recorded as \"$death\", expected \"success exited 0\""
  harness_notified "$unit" 'STOPPING=1' ||
    harness_fail "$unit: no STOPPING=1 reached the manager"
  ((took_ms < 1000)) || harness_fail "$unit: stop took ${took_ms} ms (limit 1000 ms)"
  printf 'stop: %-26s STOPPING=1 sent, exited 0, Result=success, in %4d ms\n' "$unit" "$took_ms"
done
echo "PASS: every daemon stopped cleanly within 1 s"
