#!/usr/bin/env bash
# The acceptor restarts without dropping or refusing anyone. With its socket
# unit and its FD store, under load (acceptor-load: 4 keepers that hold one
# connection each and send a request every 10 ms, plus a thread connecting
# in a tight loop, one request per connection), across 5 restarts of each
# kind:
#   crash     the process crashes (SIGSEGV) on a request it has read
#             (SDLIVE_CRASH_FILE), so that request is never answered;
#   kill      SIGKILL from outside, at whatever instant it lands;
#   restart   `systemctl restart`;
#   watchdog  the main loop wedges (SDLIVE_WEDGE_FILE) and the watchdog,
#             armed by a drop-in here only, kills it;
# no connect() is refused and no keeper's connection is dropped. A connection
# accepted but not yet in the store dies with the process; the acceptor never
# has more than one such connection, so the random SIGKILLs may drop at most
# one each, and the other kinds (whose fault switches wait for the store)
# none. Requests read but not answered before a death are counted: the client
# sends them again after 250 ms. Also recorded: how many connections each new
# process took back from the store, and what a stop then a start does.
#
# Negative control: the same restarts with the socket unit stopped and the
# FD store off (FileDescriptorStoreMax=0) must show refusals and drops, or
# the test fails: proof that it sees what it says is absent.
source "$(dirname -- "${BASH_SOURCE[0]}")/harness.sh"

harness_start "$@"
harness_units_install

ROUNDS=${SDLIVE_E2E_ACCEPTOR_ROUNDS:-5}
KEEPERS=4
KINDS=(crash kill restart watchdog)
unit=$(harness_unit_of acceptor)
socket_unit=sdlive-acceptor.socket
[[ -n $unit ]] || harness_fail "the acceptor is not in this build"
[[ -f $HARNESS_STAGE$HARNESS_UNIT_DIR/$socket_unit ]] || harness_fail "$socket_unit was not shipped"
! harness_armed "$unit" || harness_fail "$unit: shipped with WatchdogSec=, but it never pets"
load_bin=$SDLIVE_BUILD_DIR/tests/daemons/acceptor-load
[[ -x $load_bin ]] || harness_fail "$load_bin is not built"

wedge=$(harness_wedge_file "$unit")
crash=$wedge.crash
log=$HARNESS_LOG_DIR/$unit.log

cp -- "$HARNESS_STAGE$HARNESS_UNIT_DIR/$socket_unit" "$HARNESS_UNIT_HOME/$socket_unit"
# Twenty restarts in a row: lift the shipped start limit (5 per minute).
mkdir -p -- "$HARNESS_UNIT_HOME/$unit.d"
printf '[Unit]\nStartLimitIntervalSec=0\n' >"$HARNESS_UNIT_HOME/$unit.d/30-restarts.conf"
harness_dropin "$unit" 31-crash "Environment=SDLIVE_CRASH_FILE=$crash"
harness_reload

# --- the load ------------------------------------------------------------------

load_pid=
load_out=

load_start() {
  load_out=$HARNESS_LOG_DIR/load-$1.out
  : >"$load_out"
  # Should this script die, the load dies with it.
  setpriv --pdeathsig KILL -- "$load_bin" "$2" "$KEEPERS" 10 250 >"$load_out" 2>"$HARNESS_LOG_DIR/load-$1.log" &
  load_pid=$!
  # Its first totals line says it is ready for SIGUSR1.
  harness_wait 5 "acceptor-load to start" test -s "$load_out"
}

# load_snapshot: makes acceptor-load print a fresh totals line; keeps the
# longest wait for an answer since the last load_max_reset in load_max.
load_max=0
load_max_reset() { load_max=0; }
load_snapshot() {
  local lines wait
  lines=$(wc -l <"$load_out")
  kill -USR1 "$load_pid"
  harness_wait 5 "acceptor-load to print its totals" eval '(($(wc -l <"$load_out") > lines))'
  wait=$(load_figure max_wait_ms)
  ((wait <= load_max)) || load_max=$wait
}
# load_figure <name>: from the latest totals line.
load_figure() { tail -n 1 -- "$load_out" | grep -oE "(^| )$1=[0-9]+" | cut -d= -f2; }

load_stop() {
  kill -TERM "$load_pid"
  wait "$load_pid" || harness_fail "acceptor-load failed: $(cat "$load_out")"
  load_pid=
}

serving() {
  load_snapshot
  (($(load_figure requests) >= $1 + 20))
}
# wait_serving: the keepers are answered again (20 more requests).
wait_serving() {
  load_snapshot
  harness_wait 10 "the keepers to be answered again" serving "$(load_figure requests)"
}

# --- restarts ------------------------------------------------------------------

main_pid() { harness_prop "$unit" MainPID; }

# wait_new_process <old pid>: a new main process is up and said READY=1.
wait_new_process() {
  local old=$1
  replaced() {
    local p
    p=$(main_pid)
    [[ $p != 0 && $p != "$old" ]] && harness_prop_is "$unit" ActiveState active
  }
  harness_wait 15 "$unit to run a new process after $old" replaced
}

# Each restart with its wall-clock time, to match the drops acceptor-load
# logs (load-*.log).
mark() { echo "${EPOCHREALTIME} $*" >>"$HARNESS_LOG_DIR/restarts.log"; }

# taken_back: what the newest process logged it took back from the store.
taken_back() {
  grep -oE '[0-9]+ client connections taken back' -- "$log" | tail -n 1 | cut -d' ' -f1
}

declare -A took=()

# expect_death <before> <regex>: the death after <before> matches.
expect_death() {
  died() { (($(harness_death_count "$unit") > $1)); }
  harness_wait 10 "$unit to die" died "$1"
  local death
  death=$(harness_deaths "$unit" | sed -n "$(($1 + 1))p")
  [[ $death =~ $2 ]] || harness_fail "$unit died with \"$death\", expected /$2/"
}

# restart_<kind> <round>: one restart; returns once the new process is up.
restart_crash() {
  local old before
  old=$(main_pid) before=$(harness_death_count "$unit")
  mark "crash $1 pid $old"
  touch -- "$crash"
  expect_death "$before" '^(signal|core-dump) (killed|dumped) SEGV$'
  rm -f -- "$crash"
  wait_new_process "$old"
}

restart_kill() {
  local old before
  old=$(main_pid) before=$(harness_death_count "$unit")
  mark "kill $1 pid $old"
  systemctl --user kill -s KILL --kill-who=main -- "$unit"
  expect_death "$before" '^signal killed KILL$'
  wait_new_process "$old"
}

restart_restart() {
  local old
  old=$(main_pid)
  mark "restart $1 pid $old"
  systemctl --user restart -- "$unit"
  wait_new_process "$old"
}

restart_watchdog() {
  local old before
  old=$(main_pid) before=$(harness_death_count "$unit")
  mark "watchdog $1 pid $old"
  touch -- "$wedge"
  expect_death "$before" '^watchdog (killed|dumped) ABRT$'
  rm -f -- "$wedge"
  wait_new_process "$old"
}

# The acceptor never pets: armed by this drop-in, the watchdog kills it 2 s
# after each start; the wedge makes sure it is stuck in its loop by then.
arm_watchdog() {
  harness_dropin "$unit" 40-arm-watchdog "WatchdogSec=$1"
  harness_reload
  restart_restart 0
  wait_serving
}

# rounds: ROUNDS restarts of each kind under load; per kind, the figures in
# delta[<figure>,<kind>] and what each new process took back in took[kind].
declare -A delta=() longest=()
FIGURES=(refused dropped connection_dropped lost retries)
rounds() {
  local kind i f
  declare -A before=()
  for kind in "${KINDS[@]}"; do
    [[ $kind == watchdog ]] && arm_watchdog 2s
    load_snapshot
    load_max_reset
    for f in "${FIGURES[@]}"; do before[$f]=$(load_figure "$f"); done
    took[$kind]=
    for ((i = 1; i <= ROUNDS; i++)); do
      "restart_$kind" "$i"
      took[$kind]+="$(taken_back) "
      wait_serving
    done
    for f in "${FIGURES[@]}"; do delta[$f,$kind]=$(($(load_figure "$f") - before[$f])); done
    longest[$kind]=$load_max
    [[ $kind == watchdog ]] && arm_watchdog 0
  done
}

report() {
  local kind
  load_snapshot
  printf 'acceptor-restart: %s: %d restarts of each kind, %s requests and %s connections served\n' \
    "$1" "$ROUNDS" "$(load_figure requests)" "$(load_figure connections)"
  printf 'acceptor-restart:   %-9s %7s %16s %19s %15s %7s %12s   %s\n' kind refused "dropped(keepers)" "dropped(connecting)" "read,unanswered" retries "longest wait" "taken back from the store per restart"
  for kind in "${KINDS[@]}"; do
    printf 'acceptor-restart:   %-9s %7d %16d %19d %15d %7d %9d ms   %s\n' "$kind" "${delta[refused,$kind]}" \
      "${delta[dropped,$kind]}" "${delta[connection_dropped,$kind]}" "${delta[lost,$kind]}" \
      "${delta[retries,$kind]}" "${longest[$kind]}" "${took[$kind]}"
  done
}

started_at=$(harness_now_us)

# --- with the socket unit and the FD store ------------------------------------------

systemctl --user start -- "$socket_unit"
harness_start_units "$unit"
sock=$XDG_RUNTIME_DIR/sdlive-acceptor.sock
grep -q "listening on $sock (passed by the manager)" -- "$log" ||
  harness_fail "$unit did not take its listening socket from $socket_unit"
load_start store "$sock"
wait_serving
rounds
report "socket unit + FD store"
load_snapshot
refused=$(load_figure refused) dropped=$(load_figure dropped)
((refused == 0)) || harness_fail "$refused connect() calls refused across restarts"
((dropped == 0)) || harness_fail "$dropped keeper connections dropped across restarts"
for kind in crash restart watchdog; do
  ((delta[connection_dropped,$kind] == 0)) ||
    harness_fail "$kind: ${delta[connection_dropped,$kind]} connections of the connecting loop dropped"
done
kill_drops=${delta[connection_dropped,kill]}
((kill_drops <= ROUNDS)) ||
  harness_fail "kill: $kill_drops connections dropped by $ROUNDS SIGKILLs; at most one each can wait for the store"
((delta[lost,crash] >= ROUNDS)) ||
  harness_fail "crash: ${delta[lost,crash]} requests read and unanswered over $ROUNDS crashes on a request; each crash loses one"
for kind in "${KINDS[@]}"; do
  for n in ${took[$kind]}; do
    ((n >= KEEPERS)) || harness_fail "after a $kind the new process took back $n connections, expected >= $KEEPERS"
  done
done

# What a stop followed by a start does to the store (the socket unit may
# start the service again before `systemctl start` does).
before=$(load_figure dropped)
mark "stop + start"
systemctl --user stop -- "$unit" 2>/dev/null
systemctl --user start -- "$unit"
wait_serving
stop_dropped=$(($(load_figure dropped) - before)) stop_took=$(taken_back)
echo "acceptor-restart: stop + start: the new process took back $stop_took connections; $stop_dropped keeper connections dropped; refused $(load_figure refused)"
((stop_took == 0 && stop_dropped >= KEEPERS)) ||
  harness_fail "stop + start: expected the store emptied (0 taken back, $KEEPERS keepers dropped)"
load_stop

# --- negative control: no socket unit, no FD store ---------------------------------

systemctl --user stop -- "$unit" "$socket_unit"
harness_dropin "$unit" 50-no-fdstore "FileDescriptorStoreMax=0"
harness_reload
harness_start_units "$unit"
sock=$XDG_RUNTIME_DIR/sdlive-acceptor/acceptor.sock
grep -q "listening on $sock (bound here)" -- "$log" || harness_fail "$unit did not bind $sock itself"
load_start control "$sock"
wait_serving
rounds
report "negative control: no socket unit, no FD store"
load_stop
refused=$(load_figure refused) dropped=$(load_figure dropped)
((refused > 0 && dropped > 0)) ||
  harness_fail "negative control: without socket unit and FD store the restarts refused $refused and dropped $dropped; the test cannot see what it checks"

harness_show "$unit"
echo "PASS: acceptor-restart: $ROUNDS restarts of each kind, 0 refused, 0 keepers dropped, $kill_drops of the connecting loop dropped by SIGKILLs (at most 1 each); without socket unit and FD store $refused refused, $dropped dropped ($(($(harness_ms_since "$started_at") / 1000)) s)"
