#!/usr/bin/env bash
# Python daemons on the binding (bindings/python/) under the real manager,
# at WatchdogSec=1s:
#   1. the example, sdlive-pydaemon, in its shipped unit (hardened, run from
#      the installed package and library): healthy for 10 s, 0 restarts,
#      through maintenance passes 3 x WatchdogSec long;
#   2. its main loop wedged while its helper thread keeps running (and
#      calling pet() every 200 ms): killed by the watchdog, SIGABRT, within
#      max-silence + WatchdogSec + 1 s, and restarted; then SIGTERM:
#      STOPPING=1 and exit 0 within 1 s (1.5 s with the manager's part);
#   3. an asyncio daemon whose event loop blocks: killed; the same with a
#      helper thread petting every 50 ms and a progress loop beaten by a
#      coroutine: killed too;
#   4. a child from os.fork() and one from multiprocessing that pet through
#      the inherited Supervisor: the wedged parent is still killed (and the
#      children's STATUS= never reaches the manager). Control: children
#      that send WATCHDOG=1 themselves keep it alive, so 4 could fail.
# The test daemons run from a copy of the package and of the build's
# libsdlive staged in the run's own directory (units never see /tmp,
# /home or /root).
source "$(dirname -- "${BASH_SOURCE[0]}")/harness.sh"
harness_start "$@"
harness_units_install

src=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
python=$(harness_cache_var SDLIVE_PYTHON)
[[ -x $python ]] || harness_fail "the binding's interpreter ($python) is missing"
"$python" -c 'import cffi' 2>/dev/null || harness_fail "$python lacks cffi (scripts/deps.sh)"

# --- the staged copy for the test daemons ------------------------------------
stage=$HARNESS_RUN/python
mkdir -p -- "$stage"
cp -r -- "$src/bindings/python/sdlive" "$stage/"
cp -- "$src/bindings/python/tests/e2e-daemon.py" "$stage/"
cp -L -- "$SDLIVE_BUILD_DIR/src/libsdlive.so.0" "$stage/"
chmod -R a+rX -- "$stage"

died() { (($(harness_death_count "$1") > 0)); }

killed_within() { # <unit> <start us> <bound ms> <what>
  local unit=$1 start=$2 bound=$3 what=$4 ms death
  harness_wait 20 "$unit to be killed ($what)" died "$unit"
  ms=$(harness_ms_since "$start")
  death=$(harness_deaths "$unit" | head -n 1)
  [[ $death =~ ^watchdog\ (killed|dumped)\ ABRT$ ]] ||
    harness_fail "$unit: died with \"$death\", expected \"watchdog killed ABRT\" ($what)"
  ((ms <= bound)) || harness_fail "$unit: killed $ms ms after $what, bound $bound ms"
  echo "$unit: $what -> killed by the watchdog after $ms ms (bound $bound ms): $death"
}

# --- 1, 2: the example in its shipped unit -------------------------------------
unit=sdlive-pydaemon.service
[[ -f $HARNESS_UNIT_HOME/$unit ]] || harness_fail "$unit was not installed by this build"
harness_armed "$unit" || harness_fail "$unit: shipped without WatchdogSec="
# 150 items of 20 ms: passes of 3 s, 3 x WatchdogSec.
harness_exec_start "$unit" --pass-interval 200ms --items 150 --item-time 20ms \
  --max-silence 500ms --election-poll 200ms
harness_reload
harness_start_units "$unit"
harness_watch_healthy 10 0 "$unit"
harness_notified "$unit" 'STATUS=leader: pass [0-9]+ done \(150 items\)' ||
  harness_fail "$unit: no maintenance pass finished in 10 s"
grep -q 'watchdog 1.000 s' "$HARNESS_LOG_DIR/$unit.log" ||
  harness_fail "$unit: the daemon did not see its watchdog armed at 1 s"
echo "$unit: healthy for 10 s at WatchdogSec=1s, 0 restarts, passes of 3 s (3 x WatchdogSec) finished"

# The manager's timer runs out at the latest max-silence (0.5 s: the pass's
# loop goes stale) + one pet interval (1/6 s: the pet that finds it stale)
# + WatchdogSec (1 s) after the wedge, 1.67 s; the bound leaves 0.83 s for
# the SIGABRT, the death record and this script's polling.
touch -- "$(harness_wedge_file "$unit")"
start=$(harness_now_us)
killed_within "$unit" "$start" 2500 "main loop wedged, helper thread running"
rm -f -- "$(harness_wedge_file "$unit")"
grep -q 'helper: last keepalive .* main loop stalled' "$HARNESS_LOG_DIR/$unit.log" ||
  harness_fail "$unit: the helper thread did not keep running (and report the stall) while wedged"
harness_wait 10 "$unit to restart" harness_prop_is "$unit" NRestarts 1
harness_wait 10 "$unit to be active again" harness_prop_is "$unit" ActiveState active
harness_watch_healthy 2 1 "$unit"
echo "$unit: restarted and healthy again"
start=$(harness_now_us)
systemctl --user stop -- "$unit"
stop_ms=$(harness_ms_since "$start")
last=$(harness_deaths "$unit" | tail -n 1)
[[ $last == "success exited 0" ]] || harness_fail "$unit: stopped with \"$last\", expected a clean exit"
harness_notified "$unit" 'STOPPING=1' || harness_fail "$unit: no STOPPING=1"
((stop_ms <= 1500)) || harness_fail "$unit: stop took $stop_ms ms (the daemon exits within 1 s of SIGTERM)"
echo "$unit: SIGTERM -> STOPPING=1 and exit 0 in $stop_ms ms"

# --- 3, 4: the test daemons -----------------------------------------------------
# write_unit <name> <NotifyAccess> <mode>
write_unit() {
  cat >"$HARNESS_UNIT_HOME/$1" <<UNIT
[Unit]
Description=sdlive test: Python daemon, mode $3
[Service]
Type=notify
NotifyAccess=$2
WatchdogSec=1s
Restart=no
Environment=PYTHONPATH=$stage SDLIVE_LIBRARY=$stage/libsdlive.so.0 PYTHONDONTWRITEBYTECODE=1
Environment=SDLIVE_WEDGE_FILE=$HARNESS_WEDGE_DIR/$1
ExecStart=$python $stage/e2e-daemon.py $3
$(harness_record_lines)
UNIT
}

for mode in asyncio asyncio-ticker; do
  u=sdlive-test-py-$mode.service
  write_unit "$u" main "$mode"
  harness_reload
  harness_start_units "$u"
  harness_watch_healthy 2 0 "$u"
  touch -- "$(harness_wedge_file "$u")"
  start=$(harness_now_us)
  # asyncio: the loop pets every 1/6 s, so the timer runs out at the latest
  # 1/6 + 1 s after the block (+ 50 ms for the daemon to see the wedge
  # file); with the ticker, the progress loop's 0.3 s comes first: 1.47 s.
  # The same 2.5 s bound as above.
  killed_within "$u" "$start" 2500 "event loop blocked ($mode)"
  grep -q 'event loop blocked' "$HARNESS_LOG_DIR/$u.log" || harness_fail "$u: never blocked"
done

u=sdlive-test-py-fork.service
write_unit "$u" all fork
harness_reload
harness_start_units "$u"
start=$(harness_now_us)
killed_within "$u" "$start" 5000 "start (parent wedged at 1.5 s, two children petting)"
n=$(grep -c 'child: supervised=0 watchdog_enabled=None' "$HARNESS_LOG_DIR/$u.log" || true)
((n == 2)) || harness_fail "$u: $n of 2 children saw their copy as unsupervised"
if harness_notified "$u" 'STATUS=child petting'; then
  harness_fail "$u: a child's STATUS= reached the manager"
fi

u=sdlive-test-py-fork-raw.service
write_unit "$u" all fork-raw
harness_reload
harness_start_units "$u"
harness_wait 5 "control: the parent to wedge" grep -q 'parent [0-9]*: wedged' "$HARNESS_LOG_DIR/$u.log"
harness_watch_healthy 5 0 "$u"
systemctl --user stop -- "$u"
echo "control: children's own WATCHDOG=1 keep the wedged parent alive 5 s (NotifyAccess=all)"
echo "PASS: Python daemons: healthy, wedged main loop, blocked event loop, forked children"
