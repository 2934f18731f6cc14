# shellcheck shell=bash
# harness-cluster.sh: the steps of the daemon and cluster scenarios (a unit
# run with other arguments, extra job workers, a fault row of the failover
# table, the healthy checks); sourced by harness.sh, whose functions it uses.

# harness_exec_start <unit> <args...>: a drop-in (20-args) that runs the
# shipped ExecStart= with these extra arguments instead of the scaled ones.
harness_exec_start() {
  local unit=$1 file exec
  shift
  file=$unit
  [[ $file == *@*.service ]] && file=${file%%@*}@.service
  exec=$(sed -n 's/^ExecStart=//p' "$HARNESS_UNIT_HOME/$file")
  [[ -n $exec ]] || harness_fail "$file: no ExecStart= in the shipped unit"
  harness_dropin "$unit" 20-args "ExecStart=
ExecStart=$exec $*"
}

# harness_worker_copy <unit> <args...>: one more job worker, <unit>: a copy
# of the shipped sdlive-worker.service with its 10-e2e drop-in, run with
# these arguments (harness_exec_start) as the cluster's user, sdlive-cluster.
harness_worker_copy() {
  local unit=$1
  shift
  cp -- "$HARNESS_UNIT_HOME/sdlive-worker.service" "$HARNESS_UNIT_HOME/$unit"
  mkdir -p -- "$HARNESS_UNIT_HOME/$unit.d"
  cp -- "$HARNESS_UNIT_HOME/sdlive-worker.service.d/10-e2e.conf" "$HARNESS_UNIT_HOME/$unit.d/"
  harness_exec_start "$unit" "$@"
  harness_dropin "$unit" 30-jobs "User=sdlive-cluster"
}

# harness_resumed_fenced <leader> <log file> <offset> <rejected> <stopped>:
# a deposed leader resumed. Its log's lines past offset that match the grep
# patterns rejected (a write the fence refused) and stopped (its own
# deadline for acting stopped it) are counted into $rejected and $stopped;
# fails unless there is one: else a deposed write was accepted, or never
# looked at.
harness_resumed_fenced() {
  rejected=$(tail -n "+$(($3 + 1))" -- "$2" | grep -c -- "$4" || true)
  stopped=$(tail -n "+$(($3 + 1))" -- "$2" | grep -c -- "$5" || true)
  ((rejected + stopped >= 1)) ||
    harness_fail "$1 resumed with neither a write rejected by the fence nor its deadline for acting passed"
}

# harness_cluster_fault_row <crash|stop> <seconds> <goal ms>: the cluster
# scripts' row for a leader that crashes (SIGKILL; its release step must
# release) or is stopped (systemctl stop; started again after): the
# standby takes over within seconds, and leads within goal ms (check_bound)
# from the manager's line for the fault to the standby's "elected" line;
# the failed member rejoins as standby, the standby never died. Sets gen
# (the token before the fault) and ms. The script defines holder, other,
# generation, unit_of, log_lines, log_since, check_bound, rejoin,
# expect_alive and await_takeover <standby> <t0 us> <seconds> <fault>.
harness_cluster_fault_row() {
  local leader standby offset sd ev t0 fault line label formula
  leader=$(holder) standby=$(other "$(holder)")
  offset=$(log_lines "$leader") sd=$(harness_death_count "$(unit_of "$standby")") ev=$(harness_events_count)
  gen=$(generation)
  t0=$(harness_now_us)
  case $1 in
    crash)
      systemctl --user kill --signal=SIGKILL -- "$(unit_of "$leader")"
      fault=SIGKILL line="Sen[dt].* signal SIGKILL" label="SIGKILL (crash)" formula="R + N (goal)"
      ;;
    stop)
      systemctl --user stop "$(unit_of "$leader")"
      fault=stop line="Changed running -> stop-sigterm" label="systemctl stop" formula="stop + N (goal)"
      ;;
    *) harness_fail "harness_cluster_fault_row: no fault $1" ;;
  esac
  await_takeover "$standby" "$t0" "$2" "$fault"
  ms=$(harness_event_ms "$ev" manager.log "^$(unit_of "$leader"): $line" "$(unit_of "$standby").log" 'elected: leading')
  [[ $1 != crash ]] || log_since "$leader" "$offset" "released after its holder's death" ||
    harness_fail "$leader: the release step did not release"
  check_bound "$label" "$ms" "$3" "$formula"
  [[ $1 != stop ]] || harness_start_units "$(unit_of "$leader")"
  rejoin "$leader" "$offset"
  expect_alive "$(unit_of "$standby")" "$sd"
}

# harness_cluster_wedge_ends <leader> <offset> <deaths> <standby deaths>
# <seconds>: the end of a cluster script's wedge row: the watchdog kills
# the wedged leader (SIGABRT) within seconds of its deaths before the
# wedge, which is then lifted; the leader rejoins as standby past its log
# offset, the standby never died. Uses the script's unit_of, other, rejoin
# and expect_alive.
harness_cluster_wedge_ends() {
  local unit
  unit=$(unit_of "$1")
  harness_wait "$5" "the watchdog kills the wedged $1" bash -c "(( \$(wc -l < '$HARNESS_LOG_DIR/deaths/$unit') > $3 ))"
  rm -f -- "$(harness_wedge_file "$unit")"
  [[ $(harness_deaths "$unit" | tail -n 1) =~ ^watchdog\ (killed|dumped)\ ABRT$ ]] ||
    harness_fail "$unit: died as \"$(harness_deaths "$unit" | tail -n 1)\", expected watchdog ABRT"
  rejoin "$1" "$2"
  expect_alive "$(unit_of "$(other "$1")")" "$4"
}

# harness_scaled_args <unit>: the arguments that scale a daemon's own
# intervals down to test size (WatchdogSec is scaled by the 10-e2e drop-in).
harness_scaled_args() {
  case $1 in
    sdlive-worker.service) echo "--interval 200ms" ;;
    sdlive-cleaner.service) echo "--pass-interval 200ms" ;;
    sdlive-sentinel.service) echo "--interval 1s" ;;
    sdlive-cluster@*.service) echo "--lease 3s --election-poll 500ms --maintenance-interval 500ms" ;;
  esac
}

# harness_start_units <unit...>: start without blocking on READY=1, then
# wait until systemd reports every unit active (READY=1 received).
harness_start_units() {
  local unit
  systemctl --user start --no-block -- "$@"
  for unit in "$@"; do
    harness_wait 15 "$unit to become active (READY=1)" harness_prop_is "$unit" ActiveState active
  done
}

# harness_expect_healthy <unit> <restarts>: active, running, with exactly
# this many restarts and this many recorded deaths.
harness_expect_healthy() {
  harness_expect "$1" ActiveState active
  harness_expect "$1" SubState running
  harness_expect "$1" NRestarts "$2"
  local deaths
  deaths=$(harness_death_count "$1")
  ((deaths == $2)) || harness_fail "$1: $deaths deaths recorded, expected $2: $(harness_deaths "$1")"
}

# harness_watch_healthy <seconds> <restarts> <unit...>: for the whole period,
# every unit stays healthy (checked every 250 ms, first failure is fatal).
harness_watch_healthy() {
  local seconds=$1 restarts=$2 unit
  shift 2
  local end
  harness_seconds_us "$seconds" end
  end=$((end + $(harness_now_us)))
  while (($(harness_now_us) < end)); do
    for unit in "$@"; do harness_expect_healthy "$unit" "$restarts"; done
    sleep 0.25
  done
}
