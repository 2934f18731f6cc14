#!/usr/bin/env bash
# sdlive-probe under a real manager, four unmodified daemons (Python, no
# libsdlive), one fault each: an HTTP server that hangs, one that answers
# 500, a TCP listener that stops accepting, a heartbeat file gone stale.
# Each: healthy for 3 x WatchdogSec with keepalives flowing and no restart;
# then the fault; killed by the watchdog within period x failureThreshold +
# timeout + WatchdogSec (+ 1 s for a loaded machine); STATUS= named the
# failed probe before; restarted, healthy again.
source "$(dirname -- "${BASH_SOURCE[0]}")/harness.sh"
harness_start "$@"
source "$(dirname -- "${BASH_SOURCE[0]}")/probe-harness.sh"

# period 200ms x failureThreshold 3 + timeout 100ms + WatchdogSec 1s, plus
# what the fault takes to show: a stale file only fails past --max-age
# (500ms); a listener that stops accepting still completes the handshakes
# its backlog holds (two, at listen(1)) and may accept one in flight, so up
# to three more runs pass.
SETTINGS="--period 200ms --timeout 100ms --failure-threshold 3"
declare -A BOUND_MS=([probe-http-hang]=1700 [probe-http-500]=1700 [probe-tcp]=2300 [probe-beat]=2200)
SLACK_MS=1000
declare -A FAULT=([probe-http-hang]=hang [probe-http-500]=500 [probe-tcp]=no-accept [probe-beat]=stale)
declare -A NEEDLE=(
  [probe-http-hang]='http http://127.0.0.1:8080/healthz failed 3 times in a row: Operation timed out'
  [probe-http-500]='http http://127.0.0.1:8080/healthz failed 3 times in a row: HTTP 500 \(expected 200-399\): database unreachable'
  [probe-tcp]='tcp 127.0.0.1:9090 failed 3 times in a row: connect timed out'
  [probe-beat]='file-age %t/probe-beat/beat failed 3 times in a row: modified [0-9.]+m?s ago \(at most 500ms\)')
units=()
for name in "${!FAULT[@]}"; do
  unit=$name.service
  units+=("$unit")
  probe_fault "$unit" ok
  case $name in
    probe-http-*) args="$SETTINGS --http http://127.0.0.1:8080/healthz -- $PROBE_DAEMON --http-port 8080" ;;
    probe-tcp) args="$SETTINGS --tcp 127.0.0.1:9090 -- $PROBE_DAEMON --tcp-port 9090" ;;
    probe-beat) args="$SETTINGS --max-age 500ms --file-age %t/probe-beat/beat -- $PROBE_DAEMON --beat %t/probe-beat/beat" ;;
  esac
  probe_unit "$unit" 1s on-failure "$PROBE_BIN $args --fault-file $(probe_fault_file "$unit")"
done
harness_reload
harness_start_units "${units[@]}"

harness_log "healthy for 3 s (3 x WatchdogSec)"
before=()
for unit in "${units[@]}"; do before+=("$(probe_keepalives "$unit")"); done
harness_watch_healthy 3 0 "${units[@]}"
i=0
for unit in "${units[@]}"; do
  pets=$(($(probe_keepalives "$unit") - before[i++]))
  # One keepalive per WatchdogSec/6: about 18 in 3 s.
  ((pets >= 9)) || harness_fail "$unit: $pets keepalives in 3 s while healthy"
  harness_prop "$unit" StatusText | grep -q '^healthy: ' || harness_fail "$unit: STATUS=\"$(harness_prop "$unit" StatusText)\""
done

start=$(harness_now_us)
for unit in "${units[@]}"; do probe_fault "$unit" "${FAULT[${unit%.service}]}"; done
declare -A killed_ms
pending=("${units[@]}")
deadline=$((start + (2200 + SLACK_MS + 3000) * 1000))
while ((${#pending[@]})); do
  left=()
  for unit in "${pending[@]}"; do
    if probe_died "$unit" 0; then
      killed_ms[$unit]=$(harness_ms_since "$start")
      probe_fault "$unit" ok
    else
      left+=("$unit")
    fi
  done
  pending=("${left[@]}")
  (($(harness_now_us) < deadline)) || harness_fail "not killed in time: ${pending[*]}"
  sleep 0.02
done

for unit in "${units[@]}"; do
  name=${unit%.service}
  death=$(harness_deaths "$unit")
  [[ $death =~ ^watchdog\ (killed|dumped)\ ABRT$ ]] || harness_fail "$unit: died with \"$death\", expected a watchdog kill"
  ((killed_ms[$unit] <= BOUND_MS[$name] + SLACK_MS)) ||
    harness_fail "$unit: killed ${killed_ms[$unit]} ms after the fault, bound ${BOUND_MS[$name]} ms (+${SLACK_MS} ms slack)"
  needle=${NEEDLE[$name]//%t/$XDG_RUNTIME_DIR}
  harness_notified "$unit" "STATUS=keepalives withheld: $needle" ||
    harness_fail "$unit: no STATUS= naming the failed probe (${NEEDLE[$name]})"
  grep -q 'got SIGTERM' "$HARNESS_LOG_DIR/$unit.log" && harness_fail "$unit: the daemon was stopped, not killed"
  echo "$name: fault '${FAULT[$name]}' -> killed ${killed_ms[$unit]} ms later (bound ${BOUND_MS[$name]} ms): $death"
done

harness_log "restarted and healthy again"
for unit in "${units[@]}"; do
  harness_wait 10 "$unit restarted" harness_prop_is "$unit" NRestarts 1
  harness_wait 10 "$unit active again" harness_prop_is "$unit" ActiveState active
done
harness_watch_healthy 2 1 "${units[@]}"
systemctl --user stop -- "${units[@]}"
echo "PASS: hung HTTP, HTTP 500, TCP not accepting, stale heartbeat: each killed within the bound, STATUS= naming the probe, restarted"
