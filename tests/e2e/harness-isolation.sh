#!/usr/bin/env bash
# Two harness runs at the same time do not touch each other's units. Run A
# starts sdlive-sentinel.service and holds it; run B, started meanwhile,
# starts the same unit in its own manager, stops it and exits (its manager
# stops everything). A's sentinel must still be running, never restarted,
# with no death recorded: a manager that shared A's unit cgroups would have
# killed it on B's stop.
#
#   harness-isolation.sh            the test: runs A and B below
#   harness-isolation.sh hold DIR   run A (DIR: where the runs meet)
#   harness-isolation.sh churn DIR  run B
set -euo pipefail
here=$(cd "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)

if [[ -z ${1:-} ]]; then
  : "${SDLIVE_E2E_LOG_DIR:=$(mktemp -d /tmp/sdlive-e2e-isolation.XXXXXX)}"
  meet=$SDLIVE_E2E_LOG_DIR/meet
  rm -rf -- "$meet" && mkdir -p -- "$meet"
  SDLIVE_E2E_LOG_DIR=$SDLIVE_E2E_LOG_DIR/a bash "$here/harness-isolation.sh" hold "$meet" &
  a=$!
  until [[ -e $meet/a-ready ]]; do
    kill -0 "$a" 2>/dev/null || { wait "$a" && rc=0 || rc=$?; echo "run A ended before its unit ran (exit $rc)"; exit "$rc"; }
    sleep 0.1
  done
  SDLIVE_E2E_LOG_DIR=$SDLIVE_E2E_LOG_DIR/b bash "$here/harness-isolation.sh" churn "$meet" && b=0 || b=$?
  touch -- "$meet/b-done"
  wait "$a" && a=0 || a=$?
  echo "run A (holds its sentinel): exit $a; run B (starts, stops, exits): exit $b"
  ((b == 0)) || exit "$b"
  exit "$a"
fi

mode=$1 meet=$2
source "$here/harness.sh"
harness_start "$@"
harness_units_install
unit=$(harness_unit_of sentinel)
[[ -n $unit ]] || harness_fail "the sentinel is not in this build"
harness_start_units "$unit"

case $mode in
hold)
  harness_log "A: $unit running in $(cut -d: -f3 /proc/$(harness_prop "$unit" MainPID)/cgroup | sort -u | paste -sd' ')"
  touch -- "$meet/a-ready"
  harness_wait 90 "run B to finish" test -e "$meet/b-done"
  harness_expect_healthy "$unit" 0
  harness_show "$unit"
  echo "PASS: run B's start, stop and exit left run A's $unit running"
  ;;
churn)
  harness_log "B: $unit running in $(cut -d: -f3 /proc/$(harness_prop "$unit" MainPID)/cgroup | sort -u | paste -sd' ')"
  harness_watch_healthy 1 0 "$unit"
  systemctl --user stop -- "$unit"
  harness_expect "$unit" ActiveState inactive
  ;;
*) echo "usage: $0 [hold|churn DIR]" >&2; exit 2 ;;
esac
