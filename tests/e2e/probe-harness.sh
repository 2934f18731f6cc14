# shellcheck shell=bash
# probe-harness.sh: the sdlive-probe scenarios' shared steps, sourced after
# harness.sh (harness_start done). Units are rendered from
# tests/probe/probe-e2e.service.in; the daemon is tests/probe/fault-daemon.py,
# which does not link libsdlive, run by /usr/bin/python3.

PROBE_SRC=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../probe" && pwd)
PROBE_BIN=$HARNESS_PREFIX/bin/sdlive-probe
[[ -x $HARNESS_STAGE$HARNESS_PREFIX/bin/sdlive-probe ]] || harness_fail "sdlive-probe is not installed by this build"
# The daemon and its fault files live where the sandboxed units can read.
PROBE_DIR=$HARNESS_RUN/probe
mkdir -p -m 0755 -- "$PROBE_DIR"
cp -- "$PROBE_SRC/fault-daemon.py" "$PROBE_DIR/"
chmod 0755 "$PROBE_DIR/fault-daemon.py"
PROBE_DAEMON="/usr/bin/python3 $PROBE_DIR/fault-daemon.py"

# probe_unit <unit> <watchdog sec> <restart> <exec start...>: writes the unit.
probe_unit() {
  local unit=$1 watchdog=$2 restart=$3
  shift 3
  sed -e "s|@EXEC_START@|$*|" -e "s|@WATCHDOG_SEC@|$watchdog|" -e "s|@RESTART@|$restart|" \
    "$PROBE_SRC/probe-e2e.service.in" >"$HARNESS_UNIT_HOME/$unit"
  {
    harness_record_lines
    echo "Environment=SDLIVE_WEDGE_FILE=$HARNESS_WEDGE_DIR/%n"
  } >>"$HARNESS_UNIT_HOME/$unit"
}

# probe_fault <unit> <word>: what the unit's daemon reads from its fault file.
probe_fault() { echo "$2" >"$PROBE_DIR/$1.fault"; chmod 0644 "$PROBE_DIR/$1.fault"; }
probe_fault_file() { echo "$PROBE_DIR/$1.fault"; }

# probe_keepalives <unit>: WATCHDOG=1 the manager took from the unit so far.
probe_keepalives() {
  grep -cE -- "^$1: Got notification message from PID [0-9]+ \(WATCHDOG=1\)" "$HARNESS_LOG_DIR/manager.log" || true
}

probe_died() { (($(harness_death_count "$1") > $2)); }
