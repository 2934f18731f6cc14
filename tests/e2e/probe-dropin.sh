#!/usr/bin/env bash
# The drop-in of docs/probe.md ("Wrapping a unit"), taken from the page
# itself, applied to an existing unit that runs an unmodified daemon
# (Python, no libsdlive) with no watchdog and no restart: the unit becomes
# Type=notify, active on READY=1 from the probe, keeps its keepalives while
# healthy, is killed by the watchdog within the bound when its HTTP
# endpoint answers 500, and restarted by the drop-in's Restart=. The
# page's times are scaled (period 200 ms, timeout 100 ms, WatchdogSec 1 s).
source "$(dirname -- "${BASH_SOURCE[0]}")/harness.sh"
harness_start "$@"
source "$(dirname -- "${BASH_SOURCE[0]}")/probe-harness.sh"

unit=probe-existing.service
page=$(dirname -- "${BASH_SOURCE[0]}")/../../docs/probe.md
probe_fault "$unit" ok
fault=$(probe_fault_file "$unit")

# The existing unit, as a distribution might ship it.
cat >"$HARNESS_UNIT_HOME/$unit" <<UNIT
[Unit]
Description=sdlive-probe e2e: an existing unit of a daemon that does not pet
[Service]
Type=simple
ExecStart=$PROBE_DAEMON --http-port 8080 --fault-file $fault
Restart=no
PrivateNetwork=yes
$(harness_record_lines)
UNIT

# The drop-in: the page's ini block after "## Wrapping a unit", scaled.
dropin=$(awk '/^## Wrapping a unit/ { on = 1 } on && /^```ini/ { block = 1; next } block && /^```/ { exit } block' "$page")
[[ -n $dropin ]] || harness_fail "no drop-in block under '## Wrapping a unit' in docs/probe.md"
# scale <from> <to>: one substitution that must apply.
scale() {
  [[ $dropin == *"$1"* ]] || harness_fail "docs/probe.md's drop-in no longer has '$1': update this scenario"
  dropin=${dropin//"$1"/"$2"}
}
scale /usr/bin/sdlive-probe "$PROBE_BIN"
scale "--period 2s --timeout 1s" "--period 200ms --timeout 100ms"
scale http://127.0.0.1/healthz http://127.0.0.1:8080/healthz
scale "/usr/sbin/nginx -g 'daemon off;'" "$PROBE_DAEMON --http-port 8080 --fault-file $fault"
scale WatchdogSec=10s WatchdogSec=1s
mkdir -p -- "$HARNESS_UNIT_HOME/$unit.d"
printf '%s\n' "$dropin" >"$HARNESS_UNIT_HOME/$unit.d/50-sdlive-probe.conf"
harness_reload
harness_expect "$unit" Type notify
harness_expect "$unit" KillMode mixed

harness_start_units "$unit"
before=$(probe_keepalives "$unit")
harness_watch_healthy 2 0 "$unit"
pets=$(($(probe_keepalives "$unit") - before))
((pets >= 6)) || harness_fail "$unit: $pets keepalives in 2 s while healthy"
echo "the drop-in on an existing unit: active on the probe's READY=1, $pets keepalives in 2 s"

start=$(harness_now_us)
probe_fault "$unit" 500
harness_wait 6 "$unit to be killed" probe_died "$unit" 0
killed_ms=$(harness_ms_since "$start")
probe_fault "$unit" ok
death=$(harness_deaths "$unit")
[[ $death =~ ^watchdog\ (killed|dumped)\ ABRT$ ]] || harness_fail "$unit: died with \"$death\", expected a watchdog kill"
((killed_ms <= 1700 + 1000)) || harness_fail "$unit: killed ${killed_ms} ms after the fault (bound 1700 ms)"
harness_notified "$unit" 'STATUS=keepalives withheld: http http://127.0.0.1:8080/healthz failed 3 times in a row: HTTP 500' ||
  harness_fail "$unit: no STATUS= naming the failed probe"
harness_wait 10 "$unit restarted" harness_prop_is "$unit" NRestarts 1
harness_wait 10 "$unit active again" harness_prop_is "$unit" ActiveState active
systemctl --user stop "$unit"
echo "HTTP 500: killed ${killed_ms} ms later (bound 1700 ms; $death), restarted by the drop-in's Restart="
echo "PASS: the documented drop-in turns an existing unit into a probed, watchdog-armed one"
