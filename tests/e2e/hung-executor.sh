#!/usr/bin/env bash
# Progress check: the worker's executor thread hangs while its main loop goes on
# petting. With the executor registered as a progress loop (the default),
# keepalives are withheld and systemd kills the worker (result "watchdog").
# Control: with --no-progress-check the same hang goes unnoticed.
source "$(dirname -- "${BASH_SOURCE[0]}")/harness.sh"
harness_start "$@"
harness_units_install

unit=$(harness_unit_of worker)
[[ -n $unit ]] || harness_fail "the worker is not in this build"
hang=$(harness_hang_executor_file "$unit")
silence=2s

harness_exec_start "$unit" --interval 200ms --executor-max-silence "$silence"
harness_reload
harness_start_units "$unit"
harness_watch_healthy 1 0 "$unit"
touch -- "$hang"
hung_at=$(harness_now_us)
died() { (($(harness_death_count "$unit") > 0)); }
harness_wait 15 "the worker with a hung executor to be killed" died
killed_ms=$(harness_ms_since "$hung_at")
rm -f -- "$hang"
death=$(harness_deaths "$unit")
[[ $death =~ ^watchdog\ (killed|dumped)\ ABRT$ ]] ||
  harness_fail "$unit: died with \"$death\", expected a watchdog kill"
grep -q "^$unit: Got notification message .*STATUS=.*executor" "$HARNESS_LOG_DIR/manager.log" ||
  harness_fail "$unit: STATUS= never named the stalled executor"
echo "progress check: hung executor -> killed after ${killed_ms} ms ($death; --executor-max-silence $silence, WatchdogSec=1s)"

# Control: the same hang without the progress check is not noticed.
harness_exec_start "$unit" --interval 200ms --executor-max-silence "$silence" --no-progress-check
harness_reload
systemctl --user restart -- "$unit"
harness_wait 10 "$unit active again" harness_prop_is "$unit" ActiveState active
deaths=$(harness_death_count "$unit")
restarts=$(harness_prop "$unit" NRestarts)
touch -- "$hang"
harness_log "control: executor hung with --no-progress-check, watching for 5 s"
end=$(($(harness_now_us) + 5000000))
while (($(harness_now_us) < end)); do
  harness_expect "$unit" ActiveState active
  harness_expect "$unit" NRestarts "$restarts"
  (($(harness_death_count "$unit") == deaths)) || harness_fail "control: the worker died: $(harness_deaths "$unit" | tail -n 1)"
  sleep 0.25
done
harness_show "$unit"
[[ $(harness_prop "$unit" StatusText) == *"executor busy"* ]] ||
  harness_fail "control: the executor does not look hung; the control proves nothing"
rm -f -- "$hang"
echo "PASS: a hung executor is killed through the progress check, and goes unnoticed without it"
