#!/usr/bin/env bash
# sdlive-probe's start, stop and own wedge under a real manager, with an
# unmodified daemon (Python, no libsdlive):
#   - a slow start (1.5 s) inside the startup grace (4 s) becomes active
#     and is not killed, although WatchdogSec is 1 s;
#   - a start past the grace (1 s) fails as a start: exit 1, Result=exit-code,
#     no watchdog kill, no READY=1;
#   - systemctl stop: SIGTERM reaches the daemon, which exits 0, and the unit
#     stops cleanly within a second;
#   - the probe loop itself wedged (fault switch): no more keepalives, the
#     watchdog kills the unit.
source "$(dirname -- "${BASH_SOURCE[0]}")/harness.sh"
harness_start "$@"
source "$(dirname -- "${BASH_SOURCE[0]}")/probe-harness.sh"

SETTINGS="--period 200ms --timeout 100ms --failure-threshold 3"
HTTP="--http http://127.0.0.1:8080/healthz"
for unit in probe-slow.service probe-late.service probe-wedge.service; do probe_fault "$unit" ok; done
probe_unit probe-slow.service 1s on-failure \
  "$PROBE_BIN --startup-grace 4s $SETTINGS $HTTP -- $PROBE_DAEMON --start-delay 1.5 --http-port 8080 --fault-file $(probe_fault_file probe-slow.service)"
probe_unit probe-late.service 1s no \
  "$PROBE_BIN --startup-grace 1s $SETTINGS $HTTP -- $PROBE_DAEMON --start-delay 30 --http-port 8080 --fault-file $(probe_fault_file probe-late.service)"
# With a command probe too: it runs under the whole sandbox.
probe_unit probe-wedge.service 1s on-failure \
  "$PROBE_BIN $SETTINGS $HTTP --exec /bin/true -- $PROBE_DAEMON --http-port 8080 --fault-file $(probe_fault_file probe-wedge.service)"
harness_reload

# A slow start inside the grace.
start=$(harness_now_us)
harness_start_units probe-slow.service
ready_ms=$(harness_ms_since "$start")
((ready_ms >= 1500)) || harness_fail "probe-slow: active after ${ready_ms} ms, before the daemon served"
harness_watch_healthy 2 0 probe-slow.service
echo "slow start: the daemon served after 1.5 s, READY=1 after ${ready_ms} ms (grace 4 s, WatchdogSec 1 s), not killed"

# A start past the grace.
start=$(harness_now_us)
systemctl --user start --no-block probe-late.service
harness_wait 10 "probe-late's start to fail" probe_died probe-late.service 0
failed_ms=$(harness_ms_since "$start")
death=$(harness_deaths probe-late.service)
[[ $death == "exit-code exited 1" ]] || harness_fail "probe-late: died with \"$death\", expected \"exit-code exited 1\""
harness_expect probe-late.service ActiveState failed
harness_expect probe-late.service Result exit-code
harness_notified probe-late.service 'READY=1' && harness_fail "probe-late: READY=1 was sent"
harness_notified probe-late.service 'STATUS=start failed: http http://127.0.0.1:8080/healthz failed [0-9]+ times in a row' ||
  harness_fail "probe-late: no STATUS= naming the probe"
grep -q 'got SIGTERM' "$HARNESS_LOG_DIR/probe-late.service.log" || harness_fail "probe-late: the daemon did not get SIGTERM"
((failed_ms < 4000)) || harness_fail "probe-late: the failed start took ${failed_ms} ms (grace 1 s)"
echo "start past the grace (1 s): failed after ${failed_ms} ms as a start ($death), the daemon stopped with SIGTERM"

# Stop: SIGTERM reaches the daemon, the unit stops cleanly.
start=$(harness_now_us)
systemctl --user stop probe-slow.service
stop_ms=$(harness_ms_since "$start")
death=$(harness_deaths probe-slow.service)
[[ $death == "success exited 0" ]] || harness_fail "probe-slow: stopped with \"$death\", expected \"success exited 0\""
grep -q 'got SIGTERM, exiting' "$HARNESS_LOG_DIR/probe-slow.service.log" || harness_fail "probe-slow: SIGTERM did not reach the daemon"
harness_expect probe-slow.service ActiveState inactive
((stop_ms < 1000)) || harness_fail "probe-slow: stop took ${stop_ms} ms"
echo "stop: SIGTERM reached the daemon, unit inactive after ${stop_ms} ms ($death)"

# The probe loop wedged: the watchdog kills the unit.
harness_start_units probe-wedge.service
harness_watch_healthy 1 0 probe-wedge.service
harness_notified probe-wedge.service 'STATUS=healthy: http http://127.0.0.1:8080/healthz ok in [0-9.]+m?s; exec /bin/true ok in' ||
  harness_fail "probe-wedge: the command probe did not pass under the sandbox"
start=$(harness_now_us)
touch "$HARNESS_WEDGE_DIR/probe-wedge.service"
harness_wait 6 "the wedged probe to be killed" probe_died probe-wedge.service 0
rm -f -- "$HARNESS_WEDGE_DIR/probe-wedge.service"
wedge_ms=$(harness_ms_since "$start")
death=$(harness_deaths probe-wedge.service)
[[ $death =~ ^watchdog\ (killed|dumped)\ ABRT$ ]] || harness_fail "probe-wedge: died with \"$death\", expected a watchdog kill"
# Wedged between runs: noticed past the longest timeout + 1 s, killed WatchdogSec later.
((wedge_ms <= 200 + 1100 + 1000 + 1000)) || harness_fail "probe-wedge: killed ${wedge_ms} ms after the wedge"
harness_wait 10 "probe-wedge restarted" harness_prop_is probe-wedge.service NRestarts 1
harness_wait 10 "probe-wedge active again" harness_prop_is probe-wedge.service ActiveState active
systemctl --user stop probe-wedge.service
echo "probe loop wedged: killed ${wedge_ms} ms later ($death), restarted"
echo "PASS: slow start inside the grace, failed start past it, clean stop, wedged probe loop killed"
