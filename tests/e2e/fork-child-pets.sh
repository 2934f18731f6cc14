#!/usr/bin/env bash
# The fork rule under a real manager: with NotifyAccess=all, a forked child
# that keeps petting through the inherited handle does not keep a wedged
# parent alive — the library sends nothing for the child, and the watchdog
# kills the service (death "watchdog killed ABRT").
# Control: a child that sends WATCHDOG=1 itself is accepted by the manager
# and keeps the wedged parent alive, so the scenario could fail.
source "$(dirname -- "${BASH_SOURCE[0]}")/harness.sh"
harness_start "$@"

bin=$SDLIVE_BUILD_DIR/tests/e2e/sdlive-test-fork-petter
[[ -x $bin ]] || harness_fail "$bin is not built"
unit=sdlive-test-fork-petter.service

# write_unit <args>: the test daemon, armed at 1 s, any process may notify.
write_unit() {
  cat >"$HARNESS_UNIT_HOME/$unit" <<UNIT
[Unit]
Description=sdlive test: a forked child pets with its parent's handle
[Service]
Type=notify
NotifyAccess=all
WatchdogSec=1s
Restart=no
ExecStart=$bin $*
$(harness_record_lines)
UNIT
  harness_reload
}

died() { (($(harness_death_count "$unit") > 0)); }

write_unit
harness_start_units "$unit"
start=$(harness_now_us)
harness_wait 15 "the wedged parent to be killed" died
killed_ms=$(harness_ms_since "$start")
death=$(harness_deaths "$unit")
[[ $death =~ ^watchdog\ (killed|dumped)\ ABRT$ ]] ||
  harness_fail "$unit: died with \"$death\", expected \"watchdog killed ABRT\""
grep -q "supervised=0 watchdog_enabled=0" "$HARNESS_LOG_DIR/$unit.log" ||
  harness_fail "the child did not see its handle as unsupervised"
if harness_notified "$unit" 'STATUS=child petting'; then
  harness_fail "the child's STATUS= reached the manager"
fi
echo "fork rule: parent wedged 1.5 s after start, child petting through the inherited handle -> killed ${killed_ms} ms after start ($death)"

# Control: the child's own WATCHDOG=1 keeps the wedged parent alive.
rm -f -- "$HARNESS_LOG_DIR/deaths/$unit"
write_unit --raw-child
harness_start_units "$unit"
harness_log "control: child sends WATCHDOG=1 itself; watching for 5 s (5 x WatchdogSec)"
sleep 1.6
grep -q "parent [0-9]*: wedged" "$HARNESS_LOG_DIR/$unit.log" || harness_fail "control: the parent never wedged"
end=$(($(harness_now_us) + 5000000))
while (($(harness_now_us) < end)); do
  harness_expect "$unit" ActiveState active
  died && harness_fail "control: the service died: $(harness_deaths "$unit")"
  sleep 0.25
done
systemctl --user stop -- "$unit"
echo "control: a child's own WATCHDOG=1 is accepted under NotifyAccess=all (wedged parent alive 5 s)"
echo "PASS: a forked child's pets through the inherited handle do not keep a wedged service alive"
