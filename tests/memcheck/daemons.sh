#!/usr/bin/env bash
# The cluster and the worker under valgrind's memcheck: jobs-faults runs
# two sdlive-cluster members (one leads and coordinates, one stands by) and
# two sdlive-worker daemons over one SQLite store through a fault scenario
# and checks the run (every job done, counted once); each daemon process it
# starts runs under memcheck. Any read of memory that was never set, any
# invalid access, in any process, fails the test, as does a run in which
# memcheck watched fewer processes than the scenario starts.
#
#   daemons.sh VALGRIND JOBS_FAULTS CLUSTER WORKER SCENARIO
set -euo pipefail

valgrind=$1 driver=$2 cluster=$3 worker=$4 scenario=$5
work=$(mktemp -d /tmp/sdlive-memcheck.XXXXXX)
trap 'rm -rf -- "$work"' EXIT

# jobs-faults takes one program per daemon: a wrapper that runs the real
# one under memcheck, one log per process. A process killed by the
# scenario leaves no summary, so errors are counted by their markers.
for daemon in cluster worker; do
  real=${!daemon}
  cat >"$work/$daemon" <<WRAPPER
#!/bin/sh
exec "$valgrind" --tool=memcheck --track-origins=yes --leak-check=no --num-callers=30 \\
  --error-markers=MEMCHECK-ERROR-BEGIN,MEMCHECK-ERROR-END --log-file="$work/$daemon.%p.log" "$real" "\$@"
WRAPPER
  chmod +x "$work/$daemon"
done

rc=0
"$driver" --cluster "$work/cluster" --worker "$work/worker" --scenario "$scenario" --jobs 200 --workers 2 || rc=$?

shopt -s nullglob
logs=("$work"/*.log)
clusters=("$work"/cluster.*.log) workers=("$work"/worker.*.log)
errors=0
for log in "${logs[@]}"; do
  n=$(grep -c 'MEMCHECK-ERROR-BEGIN' "$log" || true)
  if ((n > 0)); then
    echo "memcheck: $n error(s) in $(basename -- "$log"):"
    sed -n '/MEMCHECK-ERROR-BEGIN/,/MEMCHECK-ERROR-END/p' "$log" | head -n 80
    errors=$((errors + n))
  fi
done
echo "memcheck: ${#clusters[@]} cluster and ${#workers[@]} worker processes watched, $errors error(s); the run exited $rc"
((errors == 0)) || { echo "memcheck: FAIL: memcheck reported errors" >&2; exit 1; }
((rc == 0)) || { echo "memcheck: FAIL: the fault run under memcheck failed" >&2; exit 1; }
((${#clusters[@]} >= 2 && ${#workers[@]} >= 2)) ||
  { echo "memcheck: FAIL: fewer processes than the scenario starts ran under memcheck" >&2; exit 1; }
echo "memcheck: PASS ($scenario)"
