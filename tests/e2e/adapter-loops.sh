#!/usr/bin/env bash
# The event-loop adapters (examples/adapters/: libevent, libuv, GLib,
# sd-event) under the real manager, side by side, each in the shipped unit
# shape (template, hardening, WatchdogSec= scaled to 1s, rendered by
# adapter-units.cmake), run from a copy staged in this run's own prefix
# with this build's libsdlive, so it passes wherever the tree is cloned:
#   1. READY=1 and STATUS=, then healthy for 10 s with 0 restarts;
#   2. a wedged event loop (the adapters' worker threads run on) is killed by
#      the watchdog with SIGABRT and restarted;
#   3. a hung worker thread (libuv, GLib) withholds keepalives through its
#      progress loop, STATUS= names it, the watchdog kills and restarts;
#   4. SIGTERM: STOPPING=1 and a clean exit.
# Prints per adapter the time from wedge (and hang) to kill and to the
# restarted daemon's READY=1. A missing adapter fails under CI=true.
source "$(dirname -- "${BASH_SOURCE[0]}")/harness.sh"
harness_start "$@"

adapters=(libevent libuv glib sd-event)
with_worker=(libuv glib)
unit_src=$SDLIVE_BUILD_DIR/tests/e2e/adapter-units
# What the units run, staged where their sandbox sees it wherever the build
# tree lies (ProtectHome= and PrivateTmp= hide /home, /root and /tmp): the
# adapters and this build's libsdlive, in a prefix of this run's own.
stage=$HARNESS_RUN/adapters

unit_of() { echo "sdlive-adapter-$1.service"; }

units=() missing=()
for adapter in "${adapters[@]}"; do
  if [[ -f $unit_src/$(unit_of "$adapter") ]]; then
    units+=("$(unit_of "$adapter")")
  else
    missing+=("$adapter")
  fi
done
if ((${#missing[@]})); then
  [[ ${CI:-} == true ]] &&
    harness_fail "adapters not built: ${missing[*]} (CI=true: their loop libraries must be installed, scripts/deps.sh)"
  harness_log "**** adapters not built, NOT checked: ${missing[*]} (run scripts/deps.sh)"
fi
((${#units[@]})) || { harness_log "**** SKIP: no adapter built"; exit "$HARNESS_SKIP"; }

cmake -DSTAGE="$stage" -P "$unit_src/stage.cmake" >"$HARNESS_LOG_DIR/stage.log" ||
  harness_fail "staging the adapters failed, see $HARNESS_LOG_DIR/stage.log"

# Each unit as rendered, its ExecStart= pointed at the staged binary; the
# harness's test drop-in, for units it does not ship; and before the death
# record, the removal of the unit's fault files (a fault is injected once:
# the restarted process must run normally however late this script looks)
# and the time of each death (microseconds since the epoch, the clock of
# harness_now_us) in deaths/<unit>.at.
for unit in "${units[@]}"; do
  built=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$unit_src/$unit")
  [[ -x $stage/bin/${built##*/} ]] || harness_fail "$unit: ${built##*/} was not staged into $stage/bin"
  sed "s|^ExecStart=$built|ExecStart=$stage/bin/${built##*/}|" "$unit_src/$unit" >"$HARNESS_UNIT_HOME/$unit"
  grep -q '^WatchdogSec=' "$HARNESS_UNIT_HOME/$unit" || harness_fail "$unit: rendered without WatchdogSec="
  harness_dropin "$unit" 10-e2e "StandardOutput=append:$HARNESS_LOG_DIR/%n.log
StandardError=append:$HARNESS_LOG_DIR/%n.log
ExecStopPost=+/bin/rm -f -- $HARNESS_WEDGE_DIR/%n $HARNESS_WEDGE_DIR/%n.executor
ExecStopPost=+/bin/sh -c 'date +%%s%%6N >> $HARNESS_LOG_DIR/deaths/%n.at'
ExecStopPost=+/bin/sh -c 'echo \"\$SERVICE_RESULT \$EXIT_CODE \$EXIT_STATUS\" >> $HARNESS_LOG_DIR/deaths/%n'
Environment=SDLIVE_WEDGE_FILE=$HARNESS_WEDGE_DIR/%n
Environment=SDLIVE_HANG_EXECUTOR_FILE=$HARNESS_WEDGE_DIR/%n.executor
RestartSec=500ms
WatchdogSec=$SDLIVE_E2E_WATCHDOG"
done
harness_reload

# --- 1: healthy ------------------------------------------------------------
harness_start_units "${units[@]}"
for unit in "${units[@]}"; do
  harness_wait 5 "$unit: a STATUS= of its loop" harness_notified "$unit" 'STATUS=.* loop: [0-9]+ ticks'
done
# Each runs the staged copy with the staged libsdlive, not the build tree's.
for unit in "${units[@]}"; do
  pid=$(harness_prop "$unit" MainPID)
  exe=$(readlink "/proc/$pid/exe")
  [[ $exe == "$stage/bin/"* ]] || harness_fail "$unit: runs $exe, not the staged copy in $stage/bin"
  grep -qF " $stage/lib/libsdlive.so." "/proc/$pid/maps" ||
    harness_fail "$unit: did not load libsdlive from $stage/lib ($(grep -o '/[^ ]*libsdlive[^ ]*' "/proc/$pid/maps" | sort -u))"
done
harness_log "${#units[@]} adapters run from $stage, with its libsdlive"
harness_watch_healthy 10 0 "${units[@]}"
harness_show "${units[@]}"
harness_log "healthy for 10 s at WatchdogSec=$SDLIVE_E2E_WATCHDOG, 0 restarts"

# wait_kills <n> <unit...>: for each unit, killed_ms at its n-th death (as
# its ExecStopPost= timed it) and restarted_ms when it is active again with n restarts (ms since
# started[unit]); its fault file was removed at the death (ExecStopPost=),
# so the restarted process runs normally. Fails after 25 s.
declare -A started=() fault=() killed_ms=() restarted_ms=()
wait_kills() {
  local n=$1 deadline=$(($(harness_now_us) + 25000000)) unit done_count
  shift
  killed_ms=() restarted_ms=()
  while :; do
    done_count=0
    for unit in "$@"; do
      if [[ -z ${killed_ms[$unit]:-} ]] && (($(harness_death_count "$unit") >= n)); then
        killed_ms[$unit]=$((($(sed -n "${n}p" "$HARNESS_LOG_DIR/deaths/$unit.at") - started[$unit]) / 1000))
        [[ ! -e ${fault[$unit]} ]] || harness_fail "$unit: ${fault[$unit]} still there after its death"
      fi
      if [[ -n ${killed_ms[$unit]:-} && -z ${restarted_ms[$unit]:-} ]] &&
        harness_prop_is "$unit" NRestarts "$n" && harness_prop_is "$unit" ActiveState active; then
        restarted_ms[$unit]=$(harness_ms_since "${started[$unit]}")
      fi
      [[ -n ${restarted_ms[$unit]:-} ]] && done_count=$((done_count + 1))
    done
    ((done_count == $#)) && return 0
    (($(harness_now_us) < deadline)) || harness_fail "not every unit was killed and restarted within 25 s: $*"
    sleep 0.05
  done
}

# inject <fault file function> <unit...>: creates each unit's fault file
# (the function names it) and notes when, in started[unit].
inject() {
  local file_of=$1 unit
  shift
  for unit in "$@"; do
    fault[$unit]=$("$file_of" "$unit")
    touch -- "${fault[$unit]}"
    started[$unit]=$(harness_now_us)
  done
}

# expect_watchdog_kill <unit> <n> <min ms> <max ms> <what>
expect_watchdog_kill() {
  local unit=$1 n=$2 min=$3 max=$4 death
  death=$(harness_deaths "$unit" | sed -n "${n}p")
  [[ $death =~ ^watchdog\ (killed|dumped)\ ABRT$ ]] ||
    harness_fail "$unit: death $n recorded as \"$death\", expected \"watchdog killed ABRT\""
  ((killed_ms[$unit] >= min && killed_ms[$unit] <= max)) ||
    harness_fail "$unit: $5 killed after ${killed_ms[$unit]} ms, expected $min..$max ms"
}

# --- 2: wedged event loop --------------------------------------------------
inject harness_wedge_file "${units[@]}"
harness_log "wedged the event loops of ${units[*]}"
wait_kills 1 "${units[@]}"
declare -A wedge_kill_ms=() wedge_ready_ms=()
for unit in "${units[@]}"; do
  # The last pet was at most one pet interval (WatchdogSec/6) before the
  # wedge: the kill comes after 5/6..1 WatchdogSec, plus the time to record it.
  expect_watchdog_kill "$unit" 1 500 4000 "the wedged loop was"
  wedge_kill_ms[$unit]=${killed_ms[$unit]} wedge_ready_ms[$unit]=${restarted_ms[$unit]}
done
harness_watch_healthy 2 1 "${units[@]}"

# --- 3: hung worker thread ---------------------------------------------------
workers=()
for adapter in "${with_worker[@]}"; do
  unit=$(unit_of "$adapter")
  [[ " ${units[*]} " == *" $unit "* ]] && workers+=("$unit")
done
declare -A hang_kill_ms=() hang_ready_ms=() stall_status=()
if ((${#workers[@]})); then
  inject harness_hang_executor_file "${workers[@]}"
  harness_log "hung the worker threads of ${workers[*]}"
  for unit in "${workers[@]}"; do
    harness_wait 10 "$unit: STATUS= naming the stalled worker" \
      harness_notified "$unit" "STATUS=Loop 'worker' silent for"
    stall_status[$unit]=$(harness_prop "$unit" StatusText)
  done
  wait_kills 2 "${workers[@]}"
  for unit in "${workers[@]}"; do
    # Silent past its 2 s limit, seen at the next pet (<= 1/6 s), then
    # WatchdogSec: 3..3.2 s, plus the time to record it.
    expect_watchdog_kill "$unit" 2 2500 7000 "the hung worker was"
    hang_kill_ms[$unit]=${killed_ms[$unit]} hang_ready_ms[$unit]=${restarted_ms[$unit]}
  done
  harness_watch_healthy 2 2 "${workers[@]}"
fi
for unit in "${units[@]}"; do
  [[ " ${workers[*]} " == *" $unit "* ]] || harness_expect_healthy "$unit" 1
done

# --- 4: SIGTERM --------------------------------------------------------------
# One stop request for all; each unit's time runs until systemd reports it
# inactive (polled together, so the figure includes up to one polling round).
declare -A stop_ms=()
stop_start=$(harness_now_us)
systemctl --user stop --no-block -- "${units[@]}"
deadline=$((stop_start + 10000000))
while ((${#stop_ms[@]} < ${#units[@]})); do
  (($(harness_now_us) < deadline)) || harness_fail "not every unit stopped within 10 s"
  for unit in "${units[@]}"; do
    if [[ -z ${stop_ms[$unit]:-} ]] && harness_prop_is "$unit" ActiveState inactive; then
      stop_ms[$unit]=$(harness_ms_since "$stop_start")
    fi
  done
  sleep 0.05
done
for unit in "${units[@]}"; do
  harness_notified "$unit" 'STOPPING=1' || harness_fail "$unit: no STOPPING=1 on SIGTERM"
  death=$(harness_deaths "$unit" | tail -n 1)
  [[ $death == "success exited 0" ]] || harness_fail "$unit: stop recorded as \"$death\", expected \"success exited 0\""
  harness_expect "$unit" Result success
  # The daemon exits within 1 s of SIGTERM; the rest is observation.
  ((stop_ms[$unit] <= 2000)) || harness_fail "$unit: took ${stop_ms[$unit]} ms to stop, expected at most 2000 ms"
done

for unit in "${units[@]}"; do
  printf 'adapter-loops: %-34s wedge: killed %5d ms (%s), ready again %5d ms' "$unit" \
    "${wedge_kill_ms[$unit]}" "$(harness_deaths "$unit" | head -n 1)" "${wedge_ready_ms[$unit]}"
  [[ -n ${hang_kill_ms[$unit]:-} ]] &&
    printf '; worker hang: killed %5d ms, ready again %5d ms' "${hang_kill_ms[$unit]}" "${hang_ready_ms[$unit]}"
  printf '; stop %4d ms\n' "${stop_ms[$unit]}"
done
for unit in "${workers[@]}"; do
  printf 'adapter-loops: %-34s STATUS while its worker hung: "%s"\n' "$unit" "${stall_status[$unit]}"
done
((${#missing[@]} == 0)) || { harness_log "**** SKIP: adapters not built, not checked: ${missing[*]}"; exit "$HARNESS_SKIP"; }
echo "PASS: ${#units[@]} event-loop adapters: healthy 10 s at WatchdogSec=$SDLIVE_E2E_WATCHDOG with 0 restarts; wedged loops killed by the watchdog (ABRT) and restarted; hung workers named in STATUS= and killed; SIGTERM: STOPPING=1, exit 0"
